// libmultigather_onnxruntime: the custom-op library that gives ONNX Runtime the two nodes of the
// ONNX domain "multigather" (opset 1), run on multigather's CPU engine (docs/onnx_runtime_library.md):
//
//   multigather.GatherMultiaxis(input: T, indices: Tind) -> output: T
//       axes (INTS, required, may be empty), index_mode (STRING "error": error|clamp|wrap|fill),
//       negative_indices (INT 1), fill_value (FLOAT 0.0, cast to T)        docs/spec.md section 1
//   multigather.ScatterMultiaxis(input: T, indices: Tind, updates: T) -> output: T
//       axes (INTS, required), reduction (STRING "none": none|add|mul|min|max), index_mode
//       (STRING "error": error|clamp|wrap|drop), negative_indices (INT 1), include_input (INT 1)
//                                                                           docs/spec.md section 4
//
// ONNX Runtime loads it with SessionOptions.register_custom_ops_library(path) (Python) or
// Ort::SessionOptions::RegisterCustomOpsLibrary (C++) and calls RegisterCustomOps, the one exported
// symbol. The library does not link onnxruntime: it takes the C API from the OrtApiBase it is
// given, at version kOrtApiVersion, and writes the custom ops as plain OrtCustomOp structs of that
// version (every function and field used here exists since API 13; onnxruntime 1.31 serves it).
//
// This file only translates: ORT values become multigather views (no copy), the attributes become
// GatherOptions / ScatterOptions, the output is allocated by ORT (KernelContext_GetOutput) from
// gather_multiaxis_alloc's OutputAllocator, and a multigather Status becomes a std::runtime_error
// with the same message, which ONNX Runtime turns into the failed status of the run (Python:
// an onnxruntime exception whose text contains the message). No kernel of its own.
#include <onnxruntime_c_api.h>

#include <atomic>
#include <thread>
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "multigather/gather.hpp"
#include "multigather/scatter.hpp"

namespace {

namespace mg = multigather;

// The C API version requested from ONNX Runtime and written into each OrtCustomOp: the oldest
// that has everything used below, so that a library built against newer headers still loads in
// any runtime from 1.13 on, and newer OrtCustomOp fields (read by ORT only when version says they
// are there) need not be filled in.
constexpr std::uint32_t kOrtApiVersion = 13;
static_assert(ORT_API_VERSION >= kOrtApiVersion, "onnxruntime_c_api.h older than API 13");

const OrtApi* g_api = nullptr;
// API 17 (onnxruntime 1.17) when the runtime serves it and the header declares it: its
// KernelContext_ParallelFor runs a gather's parallel loops on the session's intra-op pool.
const OrtApi* g_api_17 = nullptr;

[[noreturn]] void fail(const std::string& message) { throw std::runtime_error(message); }

// An ORT status becomes an exception carrying its message.
void check(OrtStatus* status, const char* what) {
  if (status == nullptr) return;
  std::string message = std::string(what) + ": " + g_api->GetErrorMessage(status);
  g_api->ReleaseStatus(status);
  fail(message);
}

// Whether an ORT call succeeded, releasing its status.
bool succeeded(OrtStatus* status) {
  if (status == nullptr) return true;
  g_api->ReleaseStatus(status);
  return false;
}

// ONNX element types (TensorProto.DataType numbers) that multigather has.
std::optional<mg::DType> dtype_of(int onnx_type) {
  switch (onnx_type) {
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL: return mg::DType::kBool;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8: return mg::DType::kInt8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8: return mg::DType::kUInt8;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16: return mg::DType::kInt16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16: return mg::DType::kUInt16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32: return mg::DType::kInt32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32: return mg::DType::kUInt32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64: return mg::DType::kInt64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64: return mg::DType::kUInt64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16: return mg::DType::kFloat16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16: return mg::DType::kBFloat16;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT: return mg::DType::kFloat32;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE: return mg::DType::kFloat64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX64: return mg::DType::kComplex64;
    case ONNX_TENSOR_ELEMENT_DATA_TYPE_COMPLEX128: return mg::DType::kComplex128;
    case 17: return mg::DType::kFloat8E4M3FN;  // ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E4M3FN
    case 19: return mg::DType::kFloat8E5M2;    // ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT8E5M2
    default: return std::nullopt;
  }
}

// ---- Attributes ---------------------------------------------------------------------------------

// Whether the node has attribute `name` of another type than the one just failed to be read.
bool has_attribute_of_any_type(const OrtKernelInfo* info, const char* name) {
  float f = 0;
  std::int64_t i = 0;
  std::size_t size = 0;
  return succeeded(g_api->KernelInfoGetAttribute_float(info, name, &f)) ||
         succeeded(g_api->KernelInfoGetAttribute_int64(info, name, &i)) ||
         succeeded(g_api->KernelInfoGetAttribute_string(info, name, nullptr, &size)) ||
         succeeded(g_api->KernelInfoGetAttributeArray_int64(info, name, nullptr, &size));
}

[[noreturn]] void wrong_type(const char* op, const char* name, const char* type) {
  fail(std::string(op) + " attribute " + name + " must be of type " + type);
}

std::vector<std::int64_t> ints_attribute(const OrtKernelInfo* info, const char* op,
                                         const char* name) {
  std::size_t size = 0;
  if (!succeeded(g_api->KernelInfoGetAttributeArray_int64(info, name, nullptr, &size))) {
    if (has_attribute_of_any_type(info, name)) wrong_type(op, name, "INTS");
    fail(std::string(op) + " needs the attribute " + name + " (INTS, may be empty)");
  }
  std::vector<std::int64_t> values(size);
  if (size > 0) {
    check(g_api->KernelInfoGetAttributeArray_int64(info, name, values.data(), &size), name);
  }
  return values;
}

// An optional INTS attribute (a shape the operand is read as), read once when the kernel is made:
// nullopt when absent.
std::optional<mg::Dims> optional_shape_attribute(const OrtKernelInfo* info, const char* op, const char* name) {
  std::size_t size = 0;
  if (!succeeded(g_api->KernelInfoGetAttributeArray_int64(info, name, nullptr, &size))) {
    if (has_attribute_of_any_type(info, name)) wrong_type(op, name, "INTS");
    return std::nullopt;
  }
  std::vector<std::int64_t> values(size);
  if (size > 0) check(g_api->KernelInfoGetAttributeArray_int64(info, name, values.data(), &size), name);
  for (std::int64_t v : values) {
    if (v < 0) fail(std::string(op) + " attribute " + name + " has a negative size " + std::to_string(v));
  }
  if (size > static_cast<std::size_t>(mg::kMaxRank)) {
    fail(std::string(op) + " attribute " + name + " has " + std::to_string(size) + " dimensions, more than multigather's " +
         std::to_string(mg::kMaxRank));
  }
  return mg::Dims(std::span<const std::int64_t>(values));
}

std::string string_attribute(const OrtKernelInfo* info, const char* op, const char* name,
                             const char* fallback) {
  std::size_t size = 0;
  if (!succeeded(g_api->KernelInfoGetAttribute_string(info, name, nullptr, &size))) {
    if (has_attribute_of_any_type(info, name)) wrong_type(op, name, "STRING");
    return fallback;
  }
  std::string value(size, '\0');  // size counts the terminating null
  check(g_api->KernelInfoGetAttribute_string(info, name, value.data(), &size), name);
  value.resize(std::strlen(value.c_str()));
  return value;
}

bool bool_attribute(const OrtKernelInfo* info, const char* op, const char* name, bool fallback) {
  std::int64_t value = 0;
  if (!succeeded(g_api->KernelInfoGetAttribute_int64(info, name, &value))) {
    if (has_attribute_of_any_type(info, name)) wrong_type(op, name, "INT");
    return fallback;
  }
  if (value != 0 && value != 1) {
    fail(std::string(op) + " attribute " + name + " = " + std::to_string(value) +
         " must be 0 or 1");
  }
  return value == 1;
}

float float_attribute(const OrtKernelInfo* info, const char* op, const char* name,
                      float fallback) {
  float value = 0;
  if (!succeeded(g_api->KernelInfoGetAttribute_float(info, name, &value))) {
    if (has_attribute_of_any_type(info, name)) wrong_type(op, name, "FLOAT");
    return fallback;
  }
  return value;
}

mg::IndexMode index_mode_attribute(const OrtKernelInfo* info, const char* op, bool scatter) {
  const std::string text = string_attribute(info, op, "index_mode", "error");
  mg::IndexMode mode{};
  const bool known = mg::parse_index_mode(text, &mode);
  const mg::IndexMode not_here = scatter ? mg::IndexMode::kFill : mg::IndexMode::kDrop;
  if (!known || mode == not_here) {
    fail(std::string(op) + " attribute index_mode = '" + text + "' is not one of " +
         (scatter ? "error, clamp, wrap, drop" : "error, clamp, wrap, fill"));
  }
  return mode;
}

// ---- Operands -----------------------------------------------------------------------------------

struct Operand {
  mg::TensorView view;
};

Operand read_input(OrtKernelContext* context, std::size_t index, const char* op,
                   const char* name) {
  const OrtValue* value = nullptr;
  check(g_api->KernelContext_GetInput(context, index, &value), name);
  if (value == nullptr) fail(std::string(op) + " input " + name + " is missing");
  OrtTensorTypeAndShapeInfo* info = nullptr;
  if (OrtStatus* status = g_api->GetTensorTypeAndShape(value, &info); status != nullptr) {
    g_api->ReleaseStatus(status);  // a sequence or a map: no tensor shape (one C call fewer per input)
    fail(std::string(op) + " input " + name + " is not a tensor");
  }
  std::unique_ptr<OrtTensorTypeAndShapeInfo, void (*)(OrtTensorTypeAndShapeInfo*)> owned(
      info, [](OrtTensorTypeAndShapeInfo* p) { g_api->ReleaseTensorTypeAndShapeInfo(p); });
  ONNXTensorElementDataType type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
  check(g_api->GetTensorElementType(info, &type), name);
  std::size_t rank = 0;
  check(g_api->GetDimensionsCount(info, &rank), name);
  if (rank > static_cast<std::size_t>(mg::kMaxRank)) {
    fail(std::string(op) + " input " + name + " has rank " + std::to_string(rank) + ", more than multigather's " +
         std::to_string(mg::kMaxRank));
  }
  std::int64_t dims[mg::kMaxRank] = {};  // no allocation per call
  if (rank > 0) check(g_api->GetDimensions(info, dims, rank), name);
  const std::optional<mg::DType> dtype = dtype_of(type);
  if (!dtype) {
    fail(std::string(op) + " input " + name + " has ONNX element type " +
         std::to_string(static_cast<int>(type)) + ", which multigather does not support");
  }
  void* data = nullptr;
  check(g_api->GetTensorMutableData(const_cast<OrtValue*>(value), &data), name);
  Operand operand;
  operand.view = mg::TensorView(data, *dtype, mg::Dims(std::span<const std::int64_t>(dims, rank)));
  if (operand.view.data == nullptr && operand.view.numel() == 0) {
    operand.view.data = mg::empty_tensor_data();
  }
  return operand;
}

// Output 0 of `shape`, allocated by ORT (C-contiguous), as a multigather view.
mg::MutableTensorView allocate_output(OrtKernelContext* context, mg::DType dtype,
                                      const mg::Dims& shape) {
  OrtValue* value = nullptr;
  check(g_api->KernelContext_GetOutput(context, 0, shape.data(),
                                       static_cast<std::size_t>(shape.size()), &value),
        "output");
  void* data = nullptr;
  check(g_api->GetTensorMutableData(value, &data), "output");
  mg::MutableTensorView view(data, dtype, shape);
  if (view.data == nullptr && view.numel() == 0) view.data = mg::empty_tensor_data();
  return view;
}

void fail_on(const mg::Status& status) {
  if (!status.ok()) fail(status.message());
}

using Shape = std::optional<mg::Dims>;

// The operand read as `shape` (the node's input_shape / indices_shape / updates_shape): a free
// reshape of the C-contiguous tensor ORT passes, which must have as many elements.
void read_as(Operand* operand, const Shape& shape, const char* op, const char* name) {
  if (!shape) return;
  const mg::Dims& dims = *shape;
  if (mg::saturating_numel(dims) != operand->view.numel()) {
    fail(std::string(op) + " attribute " + name + "_shape " + mg::to_string(dims) + " has " +
         std::to_string(mg::saturating_numel(dims)) + " elements, but input " + name + " of shape " +
         mg::to_string(operand->view.shape) + " has " + std::to_string(operand->view.numel()));
  }
  operand->view = mg::TensorView(operand->view.data, operand->view.dtype, dims);
}

// The node's output of `core` shape, allocated by ORT as `shape` (output_shape) when given.
mg::MutableTensorView allocate_as(OrtKernelContext* context, mg::DType dtype, const mg::Dims& core,
                                  const Shape& shape, const char* op) {
  if (!shape) return allocate_output(context, dtype, core);
  const mg::Dims& dims = *shape;
  if (mg::saturating_numel(dims) != mg::saturating_numel(core)) {
    fail(std::string(op) + " attribute output_shape " + mg::to_string(dims) + " has " +
         std::to_string(mg::saturating_numel(dims)) + " elements, but the output of shape " +
         mg::to_string(core) + " has " + std::to_string(mg::saturating_numel(core)));
  }
  const mg::MutableTensorView out = allocate_output(context, dtype, dims);
  return mg::MutableTensorView(out.data, dtype, core);
}

int engine_threads(int fallback) {
  const char* text = std::getenv("MULTIGATHER_ORT_THREADS");
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (*end != '\0' || n < 0 || n > 4096) {
    fail(std::string("MULTIGATHER_ORT_THREADS = '") + text + "' is not a thread count (0: automatic)");
  }
  return static_cast<int>(n);
}

// The session's intra-op pool as the engine's TaskPool (parallel_for: ORT's
// KernelContext_ParallelFor, a synchronous loop over the pool's threads and the calling one), or
// none (parallel_for null) before API 17. Each worker runs once; the engine's workers share
// their work dynamically, so an intra-op pool of one thread runs them all in turn.
mg::TaskPool session_pool(OrtKernelContext* context) {
  mg::TaskPool pool;
#if ORT_API_VERSION >= 17
  if (g_api_17 == nullptr) return pool;
  pool.context = context;
  static const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));  // reads /sys
  pool.num_threads = cores;
  pool.parallel_for = [](void* ctx, int count, void (*fn)(void* arg, int i) noexcept, void* arg) {
    struct Loop {
      void (*fn)(void*, int) noexcept;
      void* arg;
      std::atomic<int> started{0};
    } loop{fn, arg};
    OrtStatus* status = g_api_17->KernelContext_ParallelFor(
        static_cast<const OrtKernelContext*>(ctx),
        [](void* raw, std::size_t i) {
          auto* l = static_cast<Loop*>(raw);
          l->started.fetch_add(1, std::memory_order_relaxed);
          l->fn(l->arg, static_cast<int>(i));
        },
        static_cast<std::size_t>(count), 0, &loop);
    if (status != nullptr) {  // ORT ran no worker: the calling thread runs them all
      g_api_17->ReleaseStatus(status);
      if (loop.started.load() == 0) {
        for (int i = 0; i < count; ++i) fn(arg, i);
      }
    }
  };
#else
  (void)context;
#endif
  return pool;
}

// ---- Kernels ------------------------------------------------------------------------------------

constexpr const char* kGather = "GatherMultiaxis";
constexpr const char* kScatter = "ScatterMultiaxis";

struct Kernel {
  bool scatter = false;
  std::vector<std::int64_t> axes;
  mg::GatherOptions gather;
  mg::ScatterOptions scatter_options;
  Shape input_shape, indices_shape, updates_shape, output_shape;  // free reshapes (optional)

  Kernel(bool is_scatter, const OrtKernelInfo* info) : scatter(is_scatter) {
    const char* op = scatter ? kScatter : kGather;
    axes = ints_attribute(info, op, "axes");
    const mg::IndexMode mode = index_mode_attribute(info, op, scatter);
    const bool negative = bool_attribute(info, op, "negative_indices", true);
    // Never a team of multigather's own (OpenMP) threads beside ORT's intra-op pool, whose
    // threads spin between nodes: that oversubscribes the cores (measured: 2-3x slower whole
    // models at 2 intra-op threads on 2 cores). MULTIGATHER_ORT_THREADS sets a count for both
    // (0: the engine's own choice; a scatter then uses OpenMP).
    // A gather's loops run on ORT's own pool (session_pool) with the engine's automatic count;
    // the scatter's phases need a team at once (OpenMP), so it stays on the calling thread.
    scatter_options.num_threads = engine_threads(1);
    gather.num_threads = engine_threads(0);
    input_shape = optional_shape_attribute(info, op, "input_shape");
    indices_shape = optional_shape_attribute(info, op, "indices_shape");
    output_shape = optional_shape_attribute(info, op, "output_shape");
    if (scatter) updates_shape = optional_shape_attribute(info, op, "updates_shape");
    if (scatter) {
      const std::string reduction = string_attribute(info, op, "reduction", "none");
      if (!mg::parse_reduction(reduction, &scatter_options.reduction)) {
        fail(std::string(op) + " attribute reduction = '" + reduction +
             "' is not one of none, add, mul, min, max");
      }
      scatter_options.index_mode = mode;
      scatter_options.negative_indices = negative;
      scatter_options.include_input = bool_attribute(info, op, "include_input", true);
    } else {
      gather.index_mode = mode;
      gather.negative_indices = negative;
      gather.fill_value = mg::Scalar::from_float(float_attribute(info, op, "fill_value", 0.0f));
    }
  }

  void compute(OrtKernelContext* context) const {
    if (scatter) {
      Operand input = read_input(context, 0, kScatter, "input");
      Operand indices = read_input(context, 1, kScatter, "indices");
      Operand updates = read_input(context, 2, kScatter, "updates");
      read_as(&input, input_shape, kScatter, "input");
      read_as(&indices, indices_shape, kScatter, "indices");
      read_as(&updates, updates_shape, kScatter, "updates");
      // Shapes, dtypes and attributes first, so that a bad call allocates nothing.
      mg::GatherShape shape;
      fail_on(mg::infer_scatter_shape(input.view.shape, indices.view.shape,
                                             updates.view.shape, axes, &shape));
      const mg::MutableTensorView output =
          allocate_as(context, input.view.dtype, input.view.shape, output_shape, kScatter);
      fail_on(mg::scatter_multiaxis_into(input.view, indices.view, updates.view, axes,
                                                output, scatter_options));
      return;
    }
    Operand input = read_input(context, 0, kGather, "input");
    Operand indices = read_input(context, 1, kGather, "indices");
    read_as(&input, input_shape, kGather, "input");
    read_as(&indices, indices_shape, kGather, "indices");
    struct Allocation {
      OrtKernelContext* context;
      const Shape* output_shape;
      std::string error;  // an ORT failure inside the allocator
    } allocation{context, &output_shape, {}};
    const mg::OutputAllocator allocate = [](void* raw, mg::DType dtype, const mg::Dims& shape,
                                            mg::MutableTensorView* output) -> bool {
      auto* a = static_cast<Allocation*>(raw);
      try {
        *output = allocate_as(a->context, dtype, shape, *a->output_shape, kGather);
        return true;
      } catch (const std::exception& e) {
        a->error = e.what();
        return false;
      }
    };
    mg::GatherOptions options = gather;
    const mg::TaskPool pool = session_pool(context);
    if (pool.parallel_for != nullptr && options.num_threads != 1) options.task_pool = &pool;
    const mg::Status status =
        mg::gather_multiaxis_alloc(input.view, indices.view, axes, options, allocate, &allocation);
    if (!allocation.error.empty()) fail(allocation.error);
    fail_on(status);
  }
};

// The OrtCustomOps of one node differ in the types of their typed inputs; ORT picks the one that
// matches a node's inputs. Input 0 (T) is of any type and is the one input of dynamic type, from
// which ORT infers the output's type (ORT requires a dynamically typed output to have exactly one
// dynamically typed input, short of an InferOutputShapeFn, which API 13 does not have). So:
// GatherMultiaxis: one op per indices type; ScatterMultiaxis: one per (indices type, updates type).
// A scatter whose updates are not of input's type finds the op of its updates' type, and the
// engine's TypeError names the two.
struct MultigatherOp : OrtCustomOp {
  bool scatter = false;
  ONNXTensorElementDataType index_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64;
  ONNXTensorElementDataType updates_type = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;

  MultigatherOp(bool is_scatter, ONNXTensorElementDataType indices,
                ONNXTensorElementDataType updates)
      : OrtCustomOp{} {
    scatter = is_scatter;
    index_type = indices;
    updates_type = updates;
    version = kOrtApiVersion;
    CreateKernel = [](const OrtCustomOp* op, const OrtApi*, const OrtKernelInfo* info) -> void* {
      // An attribute that breaks the node spec fails the session's creation with its message
      // (ONNX Runtime catches the exception while it creates the kernels).
      return new Kernel(static_cast<const MultigatherOp*>(op)->scatter, info);
    };
    GetName = [](const OrtCustomOp* op) -> const char* {
      return static_cast<const MultigatherOp*>(op)->scatter ? kScatter : kGather;
    };
    GetExecutionProviderType = [](const OrtCustomOp*) -> const char* {
      return "CPUExecutionProvider";
    };
    GetInputType = [](const OrtCustomOp* op, std::size_t index) -> ONNXTensorElementDataType {
      const auto* self = static_cast<const MultigatherOp*>(op);
      if (index == 1) return self->index_type;
      if (index == 2) return self->updates_type;
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    };
    GetInputTypeCount = [](const OrtCustomOp* op) -> std::size_t {
      return static_cast<const MultigatherOp*>(op)->scatter ? 3 : 2;
    };
    GetOutputType = [](const OrtCustomOp*, std::size_t) -> ONNXTensorElementDataType {
      return ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED;
    };
    GetOutputTypeCount = [](const OrtCustomOp*) -> std::size_t { return 1; };
    KernelCompute = [](void* kernel, OrtKernelContext* context) {
      static_cast<const Kernel*>(kernel)->compute(context);
    };
    KernelDestroy = [](void* kernel) { delete static_cast<Kernel*>(kernel); };
    GetInputCharacteristic = [](const OrtCustomOp*, std::size_t) {
      return INPUT_OUTPUT_REQUIRED;
    };
    GetOutputCharacteristic = [](const OrtCustomOp*, std::size_t) {
      return INPUT_OUTPUT_REQUIRED;
    };
    GetInputMemoryType = [](const OrtCustomOp*, std::size_t) { return OrtMemTypeDefault; };
  }
};

constexpr ONNXTensorElementDataType kIndexTypes[] = {
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16,  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16, ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,
};

// T: the ONNX Runtime element types that multigather has (complex and float8 left out: ORT's CPU
// provider has no complex tensors, and float8 is an optional part of an ORT build).
constexpr ONNXTensorElementDataType kValueTypes[] = {
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BOOL,    ONNX_TENSOR_ELEMENT_DATA_TYPE_INT8,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT8,   ONNX_TENSOR_ELEMENT_DATA_TYPE_INT16,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT16,  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT32,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT32,  ONNX_TENSOR_ELEMENT_DATA_TYPE_INT64,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_UINT64,  ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT16,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_BFLOAT16, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT,
    ONNX_TENSOR_ELEMENT_DATA_TYPE_DOUBLE,
};

const std::vector<MultigatherOp>& all_ops() {
  static const std::vector<MultigatherOp> ops = [] {
    std::vector<MultigatherOp> v;
    v.reserve(std::size(kIndexTypes) * (1 + std::size(kValueTypes)));
    for (ONNXTensorElementDataType t : kIndexTypes) {
      v.emplace_back(false, t, ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED);
    }
    for (ONNXTensorElementDataType t : kIndexTypes) {
      for (ONNXTensorElementDataType u : kValueTypes) v.emplace_back(true, t, u);
    }
    return v;
  }();
  return ops;
}

// The domains handed to sessions: they must outlive every session that uses them, so they live
// until the library is unloaded.
struct Domains {
  std::mutex mutex;
  std::vector<OrtCustomOpDomain*> domains;
  ~Domains() {
    if (g_api == nullptr) return;
    for (OrtCustomOpDomain* d : domains) g_api->ReleaseCustomOpDomain(d);
  }
};

Domains& domains() {
  static Domains d;
  return d;
}

OrtStatus* register_ops(OrtSessionOptions* options) {
  OrtCustomOpDomain* domain = nullptr;
  if (OrtStatus* s = g_api->CreateCustomOpDomain("multigather", &domain)) return s;
  {
    std::lock_guard<std::mutex> lock(domains().mutex);
    domains().domains.push_back(domain);
  }
  for (const MultigatherOp& op : all_ops()) {
    if (OrtStatus* s = g_api->CustomOpDomain_Add(domain, &op)) return s;
  }
  return g_api->AddCustomOpDomain(options, domain);
}

}  // namespace

extern "C" __attribute__((visibility("default"))) OrtStatus* ORT_API_CALL
RegisterCustomOps(OrtSessionOptions* options, const OrtApiBase* api_base) {
  if (api_base == nullptr) return nullptr;  // nothing to report the error with; ORT never does it
  const OrtApi* api = api_base->GetApi(kOrtApiVersion);
  if (api == nullptr) {
    // CreateStatus is the first entry of every version of the API.
    const OrtApi* oldest = api_base->GetApi(1);
    if (oldest == nullptr) return nullptr;
    std::string message = "libmultigather_onnxruntime needs ONNX Runtime C API version " +
                          std::to_string(kOrtApiVersion) + " (onnxruntime 1.13 or newer); this is " +
                          api_base->GetVersionString();
    return oldest->CreateStatus(ORT_FAIL, message.c_str());
  }
  g_api = api;
#if ORT_API_VERSION >= 17
  g_api_17 = api_base->GetApi(17);
#endif
  try {
    return register_ops(options);
  } catch (const std::exception& e) {
    return api->CreateStatus(ORT_FAIL, e.what());
  }
}
