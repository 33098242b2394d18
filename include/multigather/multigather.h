/* multigather/multigather.h: the C API (C99; also C++, Rust bindgen, Zig @cImport).
 *
 * The same one pipeline as every other surface of multigather (the C++ API, the CLI, Python):
 *
 *     lower_op(op, input, indices, attributes)  ->  execute(lowering, output, context)
 *
 * (include/multigather/lowering.hpp, execute.hpp; src/api/c_api.cpp implements this header on
 * them). Every framework gather of docs/spec.md section 2 is an op of the registry, named as in
 * `multigather ops` ("onnx.Gather", "torch.gather", "tf.gather_nd", ...); the core operator
 * itself is the op "gather_multiaxis" (docs/spec.md section 1).
 *
 * Conventions of the whole header
 *  - Plain C: no C++ types cross it, no exception leaves it (every C++ exception is caught and
 *    becomes a status code), the structs hold only C scalars and pointers. The values of the
 *    enums are part of the ABI and never change; MG_C_API_VERSION changes when the ABI does.
 *  - Errors: every function that can fail returns an mg_status (MG_OK = 0). The message of the
 *    last call on the CALLING THREAD is mg_last_error() (thread-local; "" after a success).
 *    Messages are the core's one-line messages, naming the argument, the value and the rule:
 *    "onnx.Gather: indices[1] = 7 is out of range for axis 1 of size 4 (valid range [-4, 4))".
 *  - Tensors are strided views (mg_tensor, mg_tensor_mut): shapes and strides are int64 counts
 *    of ELEMENTS (not bytes), strides may be negative or 0; strides == NULL means C-contiguous.
 *    The library never keeps a pointer past the call and never allocates the caller's output.
 *  - Ranks are at most MG_MAX_RANK (16).
 *  - Threads: calls may run on several threads (mg_context.num_threads) but return only when
 *    done. Every function may be called from any thread concurrently, on distinct outputs.
 *
 * Building a C program against an installed multigather (`cmake --install build --prefix
 * $PREFIX` installs the shared library libmultigather.so, which links its own C++ and OpenMP
 * runtimes, the static libmultigather.a and the pkg-config file multigather.pc):
 *
 *     export PKG_CONFIG_PATH=$PREFIX/lib/pkgconfig
 *     cc -std=c99 app.c $(pkg-config --cflags --libs multigather) -o app
 *     LD_LIBRARY_PATH=$PREFIX/lib ./app        (unless $PREFIX/lib is on the loader's path)
 *
 * The static library needs what `pkg-config --static --libs multigather` lists after
 * -lmultigather (the C++ and OpenMP runtimes; a CUDA build adds the static CUDA runtime):
 *
 *     cc -std=c99 $(pkg-config --cflags multigather) app.c $PREFIX/lib/libmultigather.a \
 *         -lstdc++ -lm -lgomp -lpthread
 *
 * or, with CMake, `project(app C CXX)`, `find_package(multigather)`,
 * `target_link_libraries(app multigather::multigather)` and
 * `set_target_properties(app PROPERTIES LINKER_LANGUAGE CXX)` (the package needs OpenMP for CXX).
 */
#ifndef MULTIGATHER_MULTIGATHER_H
#define MULTIGATHER_MULTIGATHER_H

#include <stddef.h>
#include <stdint.h>

/* The library version (the CMake project version) and the C ABI version of this header. */
#define MG_VERSION_MAJOR 0
#define MG_VERSION_MINOR 1
#define MG_VERSION_PATCH 0
#define MG_C_API_VERSION 1

/* Largest rank of a tensor (multigather::kMaxRank, include/multigather/tensor.hpp). */
#define MG_MAX_RANK 16

/* Compiled as C++ (by the library itself, or a C++ caller), the enums get int as their fixed
 * underlying type: every int is then a valid value of the type, as in C, so a value outside an
 * enum that a C caller passes is reported as MG_ERROR_INVALID_ARGUMENT / MG_ERROR_TYPE instead
 * of being undefined behaviour. Size and calling convention are those of int either way. */
#ifdef __cplusplus
#define MG_ENUM_INT : int
#else
#define MG_ENUM_INT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Status codes and messages -------------------------------------------------------------- */

/* The result of every fallible call (mirrors multigather::StatusCode, status.hpp). */
typedef enum mg_status MG_ENUM_INT {
  MG_OK = 0,
  /* Shapes, ranks, axes, attributes, views, an unknown op or attribute, a NULL argument, an
   * output that overlaps an operand, a buffer too small (Python: ValueError). */
  MG_ERROR_INVALID_ARGUMENT = 1,
  /* An index value outside its axis under index mode "error" (Python: IndexError). */
  MG_ERROR_OUT_OF_RANGE = 2,
  /* An unsupported dtype, a non-integer indices dtype, an attribute value of the wrong kind
   * (Python: TypeError). */
  MG_ERROR_TYPE = 3,
  /* A broken invariant of multigather itself, or out of memory; never caused by valid input. */
  MG_ERROR_INTERNAL = 4,
  /* The call was stopped by an interrupt check (multigather/interrupt.hpp; Ctrl-C in Python and
   * the CLI). */
  MG_ERROR_CANCELLED = 5
} mg_status;

/* The message of the last status-returning call made on the calling thread: "" when it
 * succeeded, else one line (no trailing period) naming the argument, the value and the rule.
 * The pointer stays valid until the calling thread's next status-returning mg_ call. Never
 * NULL. */
const char* mg_last_error(void);

/* "ok", "invalid argument", "out of range", "type error", "internal", "cancelled"; "unknown" for
 * any other value. A static string. */
const char* mg_status_name(mg_status status);

/* MG_C_API_VERSION of the library actually linked (compare with the header's macro). */
int mg_c_api_version(void);

/* ---- Element types -------------------------------------------------------------------------- */

/* Element types (the values of multigather::DType, include/multigather/dtype.hpp; docs/spec.md
 * section 1, "Arguments"). The operator moves bytes and never looks at values, so an input
 * dtype matters only through its width; indices must be one of the eight integer types. */
typedef enum mg_dtype MG_ENUM_INT {
  MG_DTYPE_BOOL = 0,        /* 1 byte */
  MG_DTYPE_INT8 = 1,
  MG_DTYPE_UINT8 = 2,
  MG_DTYPE_INT16 = 3,
  MG_DTYPE_UINT16 = 4,
  MG_DTYPE_INT32 = 5,
  MG_DTYPE_UINT32 = 6,
  MG_DTYPE_INT64 = 7,
  MG_DTYPE_UINT64 = 8,
  MG_DTYPE_FLOAT16 = 9,     /* IEEE binary16 */
  MG_DTYPE_BFLOAT16 = 10,
  MG_DTYPE_FLOAT32 = 11,
  MG_DTYPE_FLOAT64 = 12,
  MG_DTYPE_COMPLEX64 = 13,  /* two float32, 8 bytes */
  MG_DTYPE_COMPLEX128 = 14, /* two float64, 16 bytes */
  MG_DTYPE_FLOAT8_E4M3FN = 15,
  MG_DTYPE_FLOAT8_E5M2 = 16
} mg_dtype;

/* numpy's name of a dtype ("float32", "bfloat16", ...), "unsupported" for any other value. */
const char* mg_dtype_name(mg_dtype dtype);
/* Element width in bytes (1, 2, 4, 8 or 16); 0 for a value that is not an mg_dtype. */
size_t mg_dtype_size(mg_dtype dtype);

/* ---- Tensor views --------------------------------------------------------------------------- */

/* A read-only strided view of caller memory (an operand).
 *  data:    the element at position [0, ..., 0] (with negative strides not the lowest address);
 *           may be NULL only when the view has no elements, or for shape-only calls
 *           (mg_infer_shape, mg_explain), which never read it.
 *  dtype:   an mg_dtype.
 *  rank:    0 to MG_MAX_RANK.
 *  shape:   rank sizes (>= 0); may be NULL when rank is 0.
 *  strides: rank steps in ELEMENTS (any sign, 0 = broadcast); NULL = C-contiguous (row-major). */
typedef struct mg_tensor {
  const void* data;
  mg_dtype dtype;
  int32_t rank;
  const int64_t* shape;
  const int64_t* strides;
} mg_tensor;

/* A writable strided view of caller memory (an output), fields as in mg_tensor. The output must
 * not overlap the input or the indices, nor itself (a stride 0 on a dimension of size > 1,
 * interleaved strides): such a call fails with MG_ERROR_INVALID_ARGUMENT before any write. */
typedef struct mg_tensor_mut {
  void* data;
  mg_dtype dtype;
  int32_t rank;
  const int64_t* shape;
  const int64_t* strides;
} mg_tensor_mut;

/* ---- Execution context ---------------------------------------------------------------------- */

/* Where operands live (multigather::Device, lowering.hpp). */
typedef enum mg_device MG_ENUM_INT {
  MG_DEVICE_AUTO = 0, /* CUDA when the input or indices are CUDA memory (CUDA builds), else CPU */
  MG_DEVICE_CPU = 1,
  MG_DEVICE_CUDA = 2  /* needs a build with the CUDA engine (MULTIGATHER_CUDA=ON) */
} mg_device;

/* How a call runs (multigather::ExecutionContext, execute.hpp). Pass NULL for the defaults,
 * which MG_CONTEXT_DEFAULT spells out.
 *  num_threads: CPU threads; 0 = automatic (about one thread per 256 KiB moved, small calls stay
 *               on the calling thread, no more than the idle cores), n > 0 = at most n,
 *               1 = the calling thread only. Negative values are MG_ERROR_INVALID_ARGUMENT.
 *               Builds without OpenMP always use 1.
 *  device:      an mg_device.
 *  cuda_stream: a cudaStream_t (NULL = the legacy default stream) for CUDA operands; CUDA calls
 *               in index mode "error" synchronize it, others return once enqueued. Scatter ops
 *               on CUDA operands run deterministically (the CPU engine's bytes; the C++
 *               ExecutionContext::deterministic = false selects atomics). */
typedef struct mg_context {
  int32_t num_threads;
  mg_device device;
  void* cuda_stream;
} mg_context;

#define MG_CONTEXT_DEFAULT { 0, MG_DEVICE_AUTO, NULL }

/* ---- Attributes of registry ops ------------------------------------------------------------- */

/* The kind of value an mg_attr carries. An op's attribute has a declared type (`multigather ops`
 * lists them: int, int|none, int list, enum, scalar, scalar|none, bool, tensor|none); a value of another kind
 * is MG_ERROR_TYPE, except that an INT is accepted where a scalar is expected. */
typedef enum mg_attr_kind MG_ENUM_INT {
  MG_ATTR_NONE = 0,     /* none: absent for optional attributes (axis=None), else the default */
  MG_ATTR_INT = 1,      /* i */
  MG_ATTR_INT_LIST = 2, /* ints[0 .. count) (count 0: the empty list; ints may then be NULL) */
  MG_ATTR_FLOAT = 3,    /* f: a scalar (fill values) */
  MG_ATTR_UINT = 4,     /* u: a scalar above INT64_MAX (uint64 fill values) */
  MG_ATTR_BOOL = 5,     /* i != 0 */
  MG_ATTR_STRING = 6,   /* str: an enum choice, exactly ("clip", "fill", "error") */
  MG_ATTR_TEXT = 7,     /* str: text parsed as the CLI parses its flags ("1", "2,1", "nan") */
  MG_ATTR_TENSOR = 8    /* tensor: a tensor operand given by name (embedding_bag's offsets), alive
                           for the call */
} mg_attr_kind;

/* One attribute of a registry op call: its framework name (dashes or underscores alike:
 * "batch_dims" == "batch-dims") and a value of `kind`; the fields the kind does not use are
 * ignored. Attributes not given take the op's defaults. */
typedef struct mg_attr {
  const char* name;
  mg_attr_kind kind;
  int64_t i;
  uint64_t u;
  double f;
  const int64_t* ints;
  size_t count;
  const char* str;
  const mg_tensor* tensor;
} mg_attr;

/* Constructors, for C callers: mg_attr a[] = {mg_attr_int("axis", 1), mg_attr_string("mode",
 * "clip")}. */
static inline mg_attr mg_attr_make_(const char* name, mg_attr_kind kind) {
  mg_attr a;
  a.name = name;
  a.kind = kind;
  a.i = 0;
  a.u = 0;
  a.f = 0.0;
  a.ints = NULL;
  a.count = 0;
  a.str = NULL;
  a.tensor = NULL;
  return a;
}
static inline mg_attr mg_attr_none(const char* name) { return mg_attr_make_(name, MG_ATTR_NONE); }
static inline mg_attr mg_attr_int(const char* name, int64_t value) {
  mg_attr a = mg_attr_make_(name, MG_ATTR_INT);
  a.i = value;
  return a;
}
static inline mg_attr mg_attr_ints(const char* name, const int64_t* values, size_t count) {
  mg_attr a = mg_attr_make_(name, MG_ATTR_INT_LIST);
  a.ints = values;
  a.count = count;
  return a;
}
static inline mg_attr mg_attr_float(const char* name, double value) {
  mg_attr a = mg_attr_make_(name, MG_ATTR_FLOAT);
  a.f = value;
  return a;
}
static inline mg_attr mg_attr_uint(const char* name, uint64_t value) {
  mg_attr a = mg_attr_make_(name, MG_ATTR_UINT);
  a.u = value;
  return a;
}
static inline mg_attr mg_attr_bool(const char* name, int value) {
  mg_attr a = mg_attr_make_(name, MG_ATTR_BOOL);
  a.i = value != 0;
  return a;
}
static inline mg_attr mg_attr_string(const char* name, const char* value) {
  mg_attr a = mg_attr_make_(name, MG_ATTR_STRING);
  a.str = value;
  return a;
}
static inline mg_attr mg_attr_text(const char* name, const char* text) {
  mg_attr a = mg_attr_make_(name, MG_ATTR_TEXT);
  a.str = text;
  return a;
}
static inline mg_attr mg_attr_tensor(const char* name, const mg_tensor* value) {
  mg_attr a = mg_attr_make_(name, MG_ATTR_TENSOR);
  a.tensor = value;
  return a;
}

/* ---- The op registry ------------------------------------------------------------------------ */

/* *count = the number of registry ops (gather_multiaxis and every framework op of docs/spec.md
 * section 2), in the order `multigather ops` prints them. Errors: INVALID_ARGUMENT when count is
 * NULL. */
mg_status mg_op_count(size_t* count);

/* *name = the name of op number `index` (0 <= index < mg_op_count), e.g. "onnx.GatherND": a
 * static, NUL-terminated string valid for the life of the program. Errors: INVALID_ARGUMENT
 * when name is NULL or index is out of range. */
mg_status mg_op_name(size_t index, const char** name);

/* ---- Shape inference ------------------------------------------------------------------------ */

/* The output shape of a call of registry op `op` (any op, "gather_multiaxis" included) from the
 * operands' shapes and dtypes and the attributes alone: the lowering of docs/spec.md section 2
 * (for gather_multiaxis, the shape rules of section 1: output.shape[d] = L[d] for d in axes,
 * broadcast(input.shape[d], L[d]) elsewhere). The data and strides of `input` and `indices` are
 * ignored (they may be NULL). The output has the input's dtype.
 *  output_shape: room for `capacity` int64 (MG_MAX_RANK always suffices); receives the sizes.
 *  output_rank:  receives the output rank.
 * Errors: INVALID_ARGUMENT for an unknown op or attribute, a bad attribute value, shapes, ranks
 * or axes the op rejects (the message starts with the op name and gives the framework's
 * reason), a NULL argument, capacity below the output rank; TYPE for an unsupported dtype, an
 * indices dtype the op does not accept, an attribute of the wrong kind. */
mg_status mg_infer_shape(const char* op, const mg_tensor* input, const mg_tensor* indices,
                         const mg_attr* attrs, size_t attr_count, int64_t* output_shape,
                         size_t capacity, int32_t* output_rank);

/* ---- Running ops into caller memory --------------------------------------------------------- */

/* What an out-of-range index does (multigather::IndexMode; docs/spec.md section 1, "Index
 * resolution"). */
typedef enum mg_index_mode MG_ENUM_INT {
  MG_INDEX_ERROR = 0, /* the call fails with MG_ERROR_OUT_OF_RANGE naming the index */
  MG_INDEX_CLAMP = 1, /* clamp to [0, n-1] */
  MG_INDEX_WRAP = 2,  /* v mod n (floor modulo); the negative rule is not applied first */
  MG_INDEX_FILL = 3,  /* the output element becomes the fill value (gather only) */
  MG_INDEX_DROP = 4   /* the update is skipped (scatter only) */
} mg_index_mode;

/* A fill value before it is converted to the input dtype. Integers stay exact. */
typedef enum mg_scalar_kind MG_ENUM_INT {
  MG_SCALAR_INT = 0,   /* i */
  MG_SCALAR_UINT = 1,  /* u */
  MG_SCALAR_FLOAT = 2  /* f (NaN and infinities allowed for float dtypes) */
} mg_scalar_kind;

typedef struct mg_scalar {
  mg_scalar_kind kind;
  int64_t i;
  uint64_t u;
  double f;
} mg_scalar;

/* The options of gather_multiaxis (docs/spec.md section 1). MG_GATHER_OPTIONS_DEFAULT: error
 * mode, negative indices on, fill value 0 (NULL options mean the same).
 *  index_mode:       an mg_index_mode.
 *  negative_indices: nonzero: v < 0 becomes v + n before index_mode applies (signed index
 *                    dtypes only; not in wrap mode).
 *  fill_value:       the value of out-of-range elements under MG_INDEX_FILL; it must be
 *                    representable in the input dtype (else INVALID_ARGUMENT). */
typedef struct mg_gather_options {
  mg_index_mode index_mode;
  int32_t negative_indices;
  mg_scalar fill_value;
} mg_gather_options;

#define MG_GATHER_OPTIONS_DEFAULT { MG_INDEX_ERROR, 1, { MG_SCALAR_INT, 0, 0, 0.0 } }

/* gather_multiaxis(input, indices, axes) into `output` (docs/spec.md section 1):
 *
 *   r = input.rank = indices.rank = output.rank, k = axis_count, c = max(k, 1);
 *   L = indices.shape with its last entry divided by c (it must be a multiple of c);
 *   output.shape[d] = L[d] for d in axes, broadcast(input.shape[d], L[d]) otherwise;
 *   output[o] = input[i], i[d] = (input.shape[d] == 1 ? 0 : o[d]) for d not in axes,
 *   i[axes[j]] = resolve(indices[q0, .., q_{r-2}, q_{r-1} * c + j], input.shape[axes[j]]),
 *   q[e] = (L[e] == 1 ? 0 : o[e]).
 *
 *  input:   any dtype. indices: int8/16/32/64 or uint8/16/32/64, rank r.
 *  axes:    axis_count distinct input dimensions in [-r, r), in coordinate order (may be NULL
 *           when axis_count is 0: the output is the input broadcast to the output shape).
 *  options: NULL = MG_GATHER_OPTIONS_DEFAULT.
 *  output:  the output shape above (mg_infer_shape with op "gather_multiaxis" and attribute
 *           "axes" computes it), a dtype of the input's width, any strides; not overlapping
 *           the input, the indices or itself.
 *  context: NULL = MG_CONTEXT_DEFAULT.
 * Errors: INVALID_ARGUMENT for ranks, shapes, axes, views (NULL data of a non-empty view,
 * wrong output shape or width, overlap), a fill value the input dtype cannot hold, an invalid
 * index mode; TYPE for a non-integer indices dtype or an unsupported dtype; OUT_OF_RANGE in
 * error mode for an index outside [-n, n) ([0, n) without negative_indices), e.g.
 * "indices[1,0] = 10 is out of range for axis 0 of size 4 (valid range [-4, 4))". On error the
 * output is unchanged on the CPU (the indices are checked before the first write); on a CUDA
 * device an index error may leave partial data. */
mg_status mg_gather_multiaxis(const mg_tensor* input, const mg_tensor* indices,
                              const int64_t* axes, size_t axis_count,
                              const mg_gather_options* options, const mg_tensor_mut* output,
                              const mg_context* context);

/* Runs registry op `op` ("onnx.Gather", "torch.gather", "numpy.take", "gather_multiaxis", ...;
 * mg_op_name lists them) with the framework's attributes into `output` (docs/spec.md section 2:
 * the op is lowered onto one gather_multiaxis call, validated by the framework's own rules).
 *  input, indices: the framework's operands (names vary: data/params/values; indices/index).
 *  attrs:          attr_count attributes (may be NULL when attr_count is 0); attributes not
 *                  given take the op's defaults.
 *  output:         the framework's output shape (mg_infer_shape), a dtype of the input's
 *                  width, any strides, not overlapping the operands or itself.
 *  context:        NULL = MG_CONTEXT_DEFAULT.
 * Errors (messages start with the op name and follow the framework's rules): INVALID_ARGUMENT
 * for an unknown op ("unknown op 'onnx.Gatherr' (did you mean onnx.Gather?)") or attribute, a
 * bad attribute value, shapes or views the op rejects, an output that overlaps an operand;
 * TYPE for an attribute of the wrong kind ("onnx.Gather: attribute axis: expected int, got
 * string"), an indices dtype the framework does not accept; OUT_OF_RANGE for an index outside
 * the framework's valid range, named at the framework's indices position. On error the output
 * is unchanged on the CPU; on a CUDA device an index error may leave partial data. */
mg_status mg_run_op(const char* op, const mg_tensor* input, const mg_tensor* indices,
                    const mg_attr* attrs, size_t attr_count, const mg_tensor_mut* output,
                    const mg_context* context);

/* ---- Scatter (docs/spec.md sections 4-5) ---------------------------------------------------- */

/* How the updates that reach one output element combine (multigather::Reduction). */
typedef enum mg_reduction MG_ENUM_INT {
  MG_REDUCTION_NONE = 0, /* assign: the last update in row-major order of G wins */
  MG_REDUCTION_ADD = 1,
  MG_REDUCTION_MUL = 2,
  MG_REDUCTION_MIN = 3,
  MG_REDUCTION_MAX = 4
} mg_reduction;

/* The options of scatter_multiaxis. MG_SCATTER_OPTIONS_DEFAULT: reduction none, error mode,
 * negative indices on, include_input on (NULL options mean the same).
 *  index_mode:       MG_INDEX_ERROR / CLAMP / WRAP / DROP (FILL is INVALID_ARGUMENT).
 *  include_input:    nonzero: add/mul/min/max start from the input element; zero: from the
 *                    first update reaching it. */
typedef struct mg_scatter_options {
  mg_reduction reduction;
  mg_index_mode index_mode;
  int32_t negative_indices;
  int32_t include_input;
} mg_scatter_options;

#define MG_SCATTER_OPTIONS_DEFAULT { MG_REDUCTION_NONE, MG_INDEX_ERROR, 1, 1 }

/* scatter_multiaxis(input, indices, updates, axes) into `output` (docs/spec.md section 4):
 * output = input (copied, unless output IS input: same data and strides, in place); then for
 * every position o of G = the shape gather_multiaxis(input, indices, axes) would produce, in
 * row-major order, output[i] = combine(output[i], updates[o]) where i is the input position
 * that gather reads for o. Deterministic: the same bytes at every thread count.
 *  updates: rank r, the input's dtype, each dimension G's size or 1 (broadcast).
 *  output:  the input's shape, a dtype of the input's width, any strides without self-overlap;
 *           the input itself or not overlapping it; not overlapping indices or updates.
 * Errors: those of mg_gather_multiaxis, plus INVALID_ARGUMENT for an updates shape that does
 * not broadcast to G ("updates shape [2,5] does not broadcast to the scatter shape [2,3] (...):
 * updates.shape[1] = 5 must be 3 or 1"), MG_INDEX_FILL, an invalid reduction; TYPE for an
 * updates dtype other than the input's, a reduction the dtype lacks (float8 arithmetic). Every
 * check, index values included, happens before the first write: on error `output` is
 * unchanged. CPU engine only. */
mg_status mg_scatter_multiaxis(const mg_tensor* input, const mg_tensor* indices,
                               const mg_tensor* updates, const int64_t* axes, size_t axis_count,
                               const mg_scatter_options* options, const mg_tensor_mut* output,
                               const mg_context* context);

/* Runs registry scatter op `op` ("scatter_multiaxis", ...) with the framework's attributes into
 * `output` (the framework's output shape: its input's), which may be the input itself (in
 * place). Errors as mg_run_op; a gather op given updates is INVALID_ARGUMENT. */
mg_status mg_run_scatter_op(const char* op, const mg_tensor* input, const mg_tensor* indices,
                            const mg_tensor* updates, const mg_attr* attrs, size_t attr_count,
                            const mg_tensor_mut* output, const mg_context* context);

/* ---- Explain -------------------------------------------------------------------------------- */

/* The text of `multigather explain OP` for a call of `op` on operands of these shapes and
 * dtypes (data and strides ignored): the framework's signature, formula and source, the
 * resolved attributes, the "lowered call:" line (the gather_multiaxis call with its views, axes
 * and index policy), the per-dimension table and the formula written out for these shapes.
 * Written into `buffer` (buffer_size bytes, NUL-terminated); *needed (when not NULL) receives
 * the size the text needs, NUL included. buffer == NULL with buffer_size == 0 only queries the
 * size (MG_OK). A buffer too small receives the text's first buffer_size - 1 bytes and the call
 * returns INVALID_ARGUMENT. Other errors: those of mg_infer_shape. */
mg_status mg_explain(const char* op, const mg_tensor* input, const mg_tensor* indices,
                     const mg_attr* attrs, size_t attr_count, char* buffer, size_t buffer_size,
                     size_t* needed);

#ifdef __cplusplus
}
#endif

#endif /* MULTIGATHER_MULTIGATHER_H */
