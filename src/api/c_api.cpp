// The C API (include/multigather/multigather.h) on the one pipeline: C views and typed C
// attributes become TensorViews and Attributes, then lower_op -> execute (execute.hpp), or
// lower_op alone (shape inference), or explain_op. Every entry point catches every exception and
// records its message in a thread-local string (mg_last_error).
#include "multigather/multigather.h"

#include <cstring>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "multigather/registry.hpp"

#include "kernels/cuda/cuda_hooks.hpp"

namespace mg = multigather;

// The C enums are the C++ enums' values (the ABI promise of the header).
static_assert(MG_OK == static_cast<int>(mg::StatusCode::kOk));
static_assert(MG_ERROR_INVALID_ARGUMENT == static_cast<int>(mg::StatusCode::kInvalidArgument));
static_assert(MG_ERROR_OUT_OF_RANGE == static_cast<int>(mg::StatusCode::kOutOfRange));
static_assert(MG_ERROR_TYPE == static_cast<int>(mg::StatusCode::kTypeError));
static_assert(MG_ERROR_INTERNAL == static_cast<int>(mg::StatusCode::kInternal));
static_assert(MG_DTYPE_BOOL == static_cast<int>(mg::DType::kBool));
static_assert(MG_DTYPE_INT8 == static_cast<int>(mg::DType::kInt8));
static_assert(MG_DTYPE_UINT8 == static_cast<int>(mg::DType::kUInt8));
static_assert(MG_DTYPE_INT16 == static_cast<int>(mg::DType::kInt16));
static_assert(MG_DTYPE_UINT16 == static_cast<int>(mg::DType::kUInt16));
static_assert(MG_DTYPE_INT32 == static_cast<int>(mg::DType::kInt32));
static_assert(MG_DTYPE_UINT32 == static_cast<int>(mg::DType::kUInt32));
static_assert(MG_DTYPE_INT64 == static_cast<int>(mg::DType::kInt64));
static_assert(MG_DTYPE_UINT64 == static_cast<int>(mg::DType::kUInt64));
static_assert(MG_DTYPE_FLOAT16 == static_cast<int>(mg::DType::kFloat16));
static_assert(MG_DTYPE_BFLOAT16 == static_cast<int>(mg::DType::kBFloat16));
static_assert(MG_DTYPE_FLOAT32 == static_cast<int>(mg::DType::kFloat32));
static_assert(MG_DTYPE_FLOAT64 == static_cast<int>(mg::DType::kFloat64));
static_assert(MG_DTYPE_COMPLEX64 == static_cast<int>(mg::DType::kComplex64));
static_assert(MG_DTYPE_COMPLEX128 == static_cast<int>(mg::DType::kComplex128));
static_assert(MG_DTYPE_FLOAT8_E4M3FN == static_cast<int>(mg::DType::kFloat8E4M3FN));
static_assert(MG_DTYPE_FLOAT8_E5M2 == static_cast<int>(mg::DType::kFloat8E5M2));
static_assert(MG_DTYPE_FLOAT8_E5M2 + 1 == mg::kDTypeCount);
static_assert(MG_INDEX_ERROR == static_cast<int>(mg::IndexMode::kError));
static_assert(MG_INDEX_CLAMP == static_cast<int>(mg::IndexMode::kClamp));
static_assert(MG_INDEX_WRAP == static_cast<int>(mg::IndexMode::kWrap));
static_assert(MG_INDEX_FILL == static_cast<int>(mg::IndexMode::kFill));
static_assert(MG_INDEX_DROP == static_cast<int>(mg::IndexMode::kDrop));
static_assert(MG_REDUCTION_MAX == static_cast<int>(mg::Reduction::kMax));
static_assert(MG_DEVICE_AUTO == static_cast<int>(mg::Device::kAuto));
static_assert(MG_DEVICE_CPU == static_cast<int>(mg::Device::kCPU));
static_assert(MG_DEVICE_CUDA == static_cast<int>(mg::Device::kCUDA));
static_assert(MG_MAX_RANK == mg::kMaxRank);

namespace {

// The calling thread's last message; `last_message` is what mg_last_error returns (a fixed
// text when recording the message itself ran out of memory).
thread_local std::string last_error_text;
thread_local const char* last_message = "";

mg_status record(const mg::Status& status) noexcept {
  if (status.ok()) {
    last_error_text.clear();  // keeps its capacity: never throws
    last_message = "";
    return MG_OK;
  }
  try {
    last_error_text = status.message();
    last_message = last_error_text.c_str();
  } catch (...) {
    last_message = "out of memory while recording an error message";
  }
  return static_cast<mg_status>(status.code());
}

// Runs `body` (returning a Status), turning every exception into a status.
template <class Body>
mg_status guarded(const Body& body) noexcept {
  try {
    return record(body());
  } catch (const mg::Error& e) {
    return record(mg::Status(e.code(), e.what()));
  } catch (const std::bad_alloc&) {
    return record(mg::Status(mg::StatusCode::kInternal, "out of memory"));
  } catch (const std::exception& e) {
    return record(mg::Status(mg::StatusCode::kInternal, std::string("internal error: ") + e.what()));
  } catch (...) {
    return record(mg::Status(mg::StatusCode::kInternal, "internal error: unknown exception"));
  }
}

mg::Status null_argument(const char* what) {
  return mg::InvalidArgument(std::string(what) + " is NULL");
}

// Shape and strides of a C view, checked (rank, NULL pointers, dtype value).
mg::Status dims_of(const char* what, int dtype, int32_t rank, const int64_t* shape,
                   const int64_t* strides, mg::DType* out_dtype, mg::Dims* out_shape,
                   mg::Dims* out_strides) {
  if (dtype < 0 || dtype >= mg::kDTypeCount) {
    return mg::TypeError(std::string(what) + " dtype " + std::to_string(dtype) +
                         " is not an mg_dtype (0 to " + std::to_string(mg::kDTypeCount - 1) + ")");
  }
  if (rank < 0 || rank > mg::kMaxRank) {
    return mg::InvalidArgument(std::string(what) + " rank " + std::to_string(rank) +
                               " is outside [0, " + std::to_string(mg::kMaxRank) + "]");
  }
  if (rank > 0 && shape == nullptr) {
    return mg::InvalidArgument(std::string(what) + " has rank " + std::to_string(rank) +
                               " but its shape is NULL");
  }
  *out_dtype = static_cast<mg::DType>(dtype);
  *out_shape = rank > 0 ? mg::Dims(std::span<const std::int64_t>(shape, static_cast<std::size_t>(rank)))
                        : mg::Dims();
  *out_strides = strides != nullptr && rank > 0
                     ? mg::Dims(std::span<const std::int64_t>(strides, static_cast<std::size_t>(rank)))
                     : mg::contiguous_strides(*out_shape);
  return mg::Status::Ok();
}

// An operand; `shape_only` drops data and strides (shape inference, explain).
mg::Status view_of(const char* what, const mg_tensor* t, bool shape_only, mg::TensorView* out) {
  if (t == nullptr) return null_argument(what);
  mg::TensorView v;
  MULTIGATHER_RETURN_IF_ERROR(dims_of(what, static_cast<int>(t->dtype), t->rank, t->shape,
                                      shape_only ? nullptr : t->strides, &v.dtype, &v.shape,
                                      &v.strides));
  v.data = shape_only ? nullptr : t->data;
  *out = v;
  return mg::Status::Ok();
}

mg::Status output_view_of(const mg_tensor_mut* t, mg::MutableTensorView* out) {
  if (t == nullptr) return null_argument("output");
  mg::MutableTensorView v;
  MULTIGATHER_RETURN_IF_ERROR(dims_of("output", static_cast<int>(t->dtype), t->rank, t->shape,
                                      t->strides, &v.dtype, &v.shape, &v.strides));
  v.data = t->data;
  *out = v;
  return mg::Status::Ok();
}

mg::Status op_name_of(const char* op, std::string_view* out) {
  if (op == nullptr) return null_argument("op");
  *out = op;
  return mg::Status::Ok();
}

mg::Status scalar_of(const mg_scalar& s, const char* what, mg::Scalar* out) {
  switch (s.kind) {
    case MG_SCALAR_INT: *out = mg::Scalar::from_int(s.i); return mg::Status::Ok();
    case MG_SCALAR_UINT: *out = mg::Scalar::from_uint(s.u); return mg::Status::Ok();
    case MG_SCALAR_FLOAT: *out = mg::Scalar::from_float(s.f); return mg::Status::Ok();
  }
  return mg::InvalidArgument(std::string(what) + ": scalar kind " +
                             std::to_string(static_cast<int>(s.kind)) +
                             " is not an mg_scalar_kind (0 to 2)");
}

// Typed C attributes as Attributes (values are checked against the op by lower_op).
mg::Status attributes_of(const mg_attr* attrs, std::size_t count, mg::Attributes* out) {
  if (count > 0 && attrs == nullptr) {
    return mg::InvalidArgument("attrs is NULL but attr_count is " + std::to_string(count));
  }
  mg::Attributes result;
  for (std::size_t j = 0; j < count; ++j) {
    const mg_attr& a = attrs[j];
    const std::string where = "attrs[" + std::to_string(j) + "]";
    if (a.name == nullptr) return mg::InvalidArgument(where + ".name is NULL");
    std::string name = a.name;
    mg::AttrArg arg;
    using Kind = mg::AttrArg::Kind;
    switch (a.kind) {
      case MG_ATTR_NONE: arg.kind = Kind::kNone; break;
      case MG_ATTR_INT: arg.kind = Kind::kInt; arg.i = a.i; break;
      case MG_ATTR_INT_LIST:
        if (a.count > 0 && a.ints == nullptr) {
          return mg::InvalidArgument("attribute " + name + ": ints is NULL but count is " +
                                     std::to_string(a.count));
        }
        arg.kind = Kind::kIntList;
        if (a.count > 0) arg.list.assign(a.ints, a.ints + a.count);
        break;
      case MG_ATTR_FLOAT: arg.kind = Kind::kScalar; arg.scalar = mg::Scalar::from_float(a.f); break;
      case MG_ATTR_UINT: arg.kind = Kind::kScalar; arg.scalar = mg::Scalar::from_uint(a.u); break;
      case MG_ATTR_BOOL: arg.kind = Kind::kBool; arg.b = a.i != 0; break;
      case MG_ATTR_STRING:
      case MG_ATTR_TEXT:
        if (a.str == nullptr) return mg::InvalidArgument("attribute " + name + ": str is NULL");
        arg.kind = a.kind == MG_ATTR_STRING ? Kind::kString : Kind::kText;
        arg.text = a.str;
        break;
      case MG_ATTR_TENSOR:
        if (a.tensor == nullptr) return mg::InvalidArgument("attribute " + name + ": tensor is NULL");
        arg.kind = Kind::kTensor;
        MULTIGATHER_RETURN_IF_ERROR(view_of(("attribute " + name).c_str(), a.tensor, false, &arg.tensor));
        break;
      default:
        return mg::InvalidArgument("attribute " + name + ": kind " +
                                   std::to_string(static_cast<int>(a.kind)) +
                                   " is not an mg_attr_kind (0 to 8)");
    }
    result.set_arg(std::move(name), std::move(arg));
  }
  *out = std::move(result);
  return mg::Status::Ok();
}

mg::Status context_of(const mg_context* c, mg::ExecutionContext* out) {
  mg::ExecutionContext context;
  context.num_threads = 0;  // automatic, as the header's default says
  if (c != nullptr) {
    if (c->num_threads < 0) {
      return mg::InvalidArgument("context num_threads = " + std::to_string(c->num_threads) +
                                 " is negative (0 = automatic, n > 0 = at most n)");
    }
    const int device = static_cast<int>(c->device);
    if (device < 0 || device > 2) {
      return mg::InvalidArgument("context device " + std::to_string(device) +
                                 " is not an mg_device (0 to 2)");
    }
    context.num_threads = c->num_threads;
    context.device = static_cast<mg::Device>(device);
    context.stream = c->cuda_stream;
  }
  *out = context;
  return mg::Status::Ok();
}

// lower_op + execute, from C arguments already converted (`updates`: null for a gather).
mg::Status run(std::string_view op, const mg::TensorView& input, const mg::TensorView& indices,
               const mg::Attributes& attrs, const mg_tensor_mut* output, const mg_context* c,
               const mg::TensorView* updates = nullptr) {
  mg::MutableTensorView out;
  MULTIGATHER_RETURN_IF_ERROR(output_view_of(output, &out));
  mg::ExecutionContext context;
  MULTIGATHER_RETURN_IF_ERROR(context_of(c, &context));
  mg::Lowering lowering;
  const mg::Device device = context.device;  // kAuto: lower_op asks where the operands live
  if (updates != nullptr) {
    MULTIGATHER_RETURN_IF_ERROR(mg::lower_op(op, input, indices, *updates, attrs, &lowering, device));
  } else {
    MULTIGATHER_RETURN_IF_ERROR(mg::lower_op(op, input, indices, attrs, &lowering, device));
  }
  return mg::execute(lowering, out, context);
}

}  // namespace

extern "C" {

const char* mg_last_error(void) { return last_message; }

const char* mg_status_name(mg_status status) {
  switch (status) {
    case MG_OK: return "ok";
    case MG_ERROR_INVALID_ARGUMENT: return "invalid argument";
    case MG_ERROR_OUT_OF_RANGE: return "out of range";
    case MG_ERROR_TYPE: return "type error";
    case MG_ERROR_INTERNAL: return "internal";
    case MG_ERROR_CANCELLED: return "cancelled";
  }
  return "unknown";
}

int mg_c_api_version(void) { return MG_C_API_VERSION; }

const char* mg_dtype_name(mg_dtype dtype) {
  const int d = static_cast<int>(dtype);
  if (d < 0 || d >= mg::kDTypeCount) return "unsupported";
  // dtype_name returns views of string literals: NUL-terminated.
  return mg::dtype_name(static_cast<mg::DType>(d)).data();
}

size_t mg_dtype_size(mg_dtype dtype) {
  const int d = static_cast<int>(dtype);
  if (d < 0 || d >= mg::kDTypeCount) return 0;
  return mg::element_size(static_cast<mg::DType>(d));
}

mg_status mg_op_count(size_t* count) {
  return guarded([&]() -> mg::Status {
    if (count == nullptr) return null_argument("count");
    *count = mg::op_registry().size();
    return mg::Status::Ok();
  });
}

mg_status mg_op_name(size_t index, const char** name) {
  return guarded([&]() -> mg::Status {
    if (name == nullptr) return null_argument("name");
    const auto& ops = mg::op_registry();
    if (index >= ops.size()) {
      return mg::InvalidArgument("op index " + std::to_string(index) + " is out of range (" +
                                 std::to_string(ops.size()) + " ops)");
    }
    *name = ops[index].name.c_str();  // the registry is a static that lives as long as the program
    return mg::Status::Ok();
  });
}

mg_status mg_infer_shape(const char* op, const mg_tensor* input, const mg_tensor* indices,
                         const mg_attr* attrs, size_t attr_count, int64_t* output_shape,
                         size_t capacity, int32_t* output_rank) {
  return guarded([&]() -> mg::Status {
    std::string_view name;
    MULTIGATHER_RETURN_IF_ERROR(op_name_of(op, &name));
    mg::TensorView in, idx;
    MULTIGATHER_RETURN_IF_ERROR(view_of("input", input, true, &in));
    MULTIGATHER_RETURN_IF_ERROR(view_of("indices", indices, true, &idx));
    mg::Attributes a;
    MULTIGATHER_RETURN_IF_ERROR(attributes_of(attrs, attr_count, &a));
    if (output_rank == nullptr) return null_argument("output_rank");
    mg::Lowering lowering;
    MULTIGATHER_RETURN_IF_ERROR(mg::lower_op(name, in, idx, a, &lowering));
    const mg::Dims& shape = lowering.output_shape;
    const std::size_t rank = static_cast<std::size_t>(shape.size());
    if (rank > 0 && output_shape == nullptr) return null_argument("output_shape");
    if (capacity < rank) {
      return mg::InvalidArgument(lowering.op + ": the output rank is " + std::to_string(rank) +
                                 " but output_shape has room for " + std::to_string(capacity));
    }
    for (int d = 0; d < shape.size(); ++d) output_shape[d] = shape[d];
    *output_rank = static_cast<int32_t>(rank);
    return mg::Status::Ok();
  });
}

mg_status mg_gather_multiaxis(const mg_tensor* input, const mg_tensor* indices,
                              const int64_t* axes, size_t axis_count,
                              const mg_gather_options* options, const mg_tensor_mut* output,
                              const mg_context* context) {
  return guarded([&]() -> mg::Status {
    mg::TensorView in, idx;
    MULTIGATHER_RETURN_IF_ERROR(view_of("input", input, false, &in));
    MULTIGATHER_RETURN_IF_ERROR(view_of("indices", indices, false, &idx));
    if (axis_count > 0 && axes == nullptr) {
      return mg::InvalidArgument("axes is NULL but axis_count is " + std::to_string(axis_count));
    }
    const mg_gather_options defaults = MG_GATHER_OPTIONS_DEFAULT;
    const mg_gather_options& o = options != nullptr ? *options : defaults;
    const int mode = static_cast<int>(o.index_mode);
    if (mode == MG_INDEX_DROP) {
      return mg::InvalidArgument("index_mode drop applies to scatter only (a gather has no update "
                                 "to skip; use fill)");
    }
    if (mode < 0 || mode > 3) {
      return mg::InvalidArgument("index_mode " + std::to_string(mode) +
                                 " is not an mg_index_mode (0 to 3)");
    }
    mg::Scalar fill;
    MULTIGATHER_RETURN_IF_ERROR(scalar_of(o.fill_value, "fill_value", &fill));
    mg::Attributes attrs;
    attrs.set_ints("axes", axis_count > 0 ? std::vector<std::int64_t>(axes, axes + axis_count)
                                          : std::vector<std::int64_t>())
        .set_string("index_mode", std::string(mg::index_mode_name(static_cast<mg::IndexMode>(mode))))
        .set_bool("negative_indices", o.negative_indices != 0)
        .set_scalar("fill_value", fill);
    return run("gather_multiaxis", in, idx, attrs, output, context);
  });
}

mg_status mg_run_op(const char* op, const mg_tensor* input, const mg_tensor* indices,
                    const mg_attr* attrs, size_t attr_count, const mg_tensor_mut* output,
                    const mg_context* context) {
  return guarded([&]() -> mg::Status {
    std::string_view name;
    MULTIGATHER_RETURN_IF_ERROR(op_name_of(op, &name));
    mg::TensorView in, idx;
    MULTIGATHER_RETURN_IF_ERROR(view_of("input", input, false, &in));
    MULTIGATHER_RETURN_IF_ERROR(view_of("indices", indices, false, &idx));
    mg::Attributes a;
    MULTIGATHER_RETURN_IF_ERROR(attributes_of(attrs, attr_count, &a));
    return run(name, in, idx, a, output, context);
  });
}

mg_status mg_scatter_multiaxis(const mg_tensor* input, const mg_tensor* indices,
                               const mg_tensor* updates, const int64_t* axes, size_t axis_count,
                               const mg_scatter_options* options, const mg_tensor_mut* output,
                               const mg_context* context) {
  return guarded([&]() -> mg::Status {
    mg::TensorView in, idx, upd;
    MULTIGATHER_RETURN_IF_ERROR(view_of("input", input, false, &in));
    MULTIGATHER_RETURN_IF_ERROR(view_of("indices", indices, false, &idx));
    MULTIGATHER_RETURN_IF_ERROR(view_of("updates", updates, false, &upd));
    if (axis_count > 0 && axes == nullptr) {
      return mg::InvalidArgument("axes is NULL but axis_count is " + std::to_string(axis_count));
    }
    const mg_scatter_options defaults = MG_SCATTER_OPTIONS_DEFAULT;
    const mg_scatter_options& o = options != nullptr ? *options : defaults;
    const int mode = static_cast<int>(o.index_mode);
    if (mode < 0 || mode > 4) {
      return mg::InvalidArgument("index_mode " + std::to_string(mode) + " is not an mg_index_mode (0 to 4)");
    }
    if (mode == MG_INDEX_FILL) {
      return mg::InvalidArgument("index_mode fill has no meaning for a scatter (there is no output "
                                 "element to fill; drop skips out-of-range updates)");
    }
    const int reduction = static_cast<int>(o.reduction);
    if (reduction < 0 || reduction > 4) {
      return mg::InvalidArgument("reduction " + std::to_string(reduction) + " is not an mg_reduction (0 to 4)");
    }
    mg::Attributes attrs;
    attrs.set_ints("axes", axis_count > 0 ? std::vector<std::int64_t>(axes, axes + axis_count)
                                          : std::vector<std::int64_t>())
        .set_string("reduction", std::string(mg::reduction_name(static_cast<mg::Reduction>(reduction))))
        .set_string("index_mode", std::string(mg::index_mode_name(static_cast<mg::IndexMode>(mode))))
        .set_bool("negative_indices", o.negative_indices != 0)
        .set_bool("include_input", o.include_input != 0);
    return run("scatter_multiaxis", in, idx, attrs, output, context, &upd);
  });
}

mg_status mg_run_scatter_op(const char* op, const mg_tensor* input, const mg_tensor* indices,
                            const mg_tensor* updates, const mg_attr* attrs, size_t attr_count,
                            const mg_tensor_mut* output, const mg_context* context) {
  return guarded([&]() -> mg::Status {
    std::string_view name;
    MULTIGATHER_RETURN_IF_ERROR(op_name_of(op, &name));
    mg::TensorView in, idx, upd;
    MULTIGATHER_RETURN_IF_ERROR(view_of("input", input, false, &in));
    MULTIGATHER_RETURN_IF_ERROR(view_of("indices", indices, false, &idx));
    MULTIGATHER_RETURN_IF_ERROR(view_of("updates", updates, false, &upd));
    mg::Attributes a;
    MULTIGATHER_RETURN_IF_ERROR(attributes_of(attrs, attr_count, &a));
    return run(name, in, idx, a, output, context, &upd);
  });
}

mg_status mg_explain(const char* op, const mg_tensor* input, const mg_tensor* indices,
                     const mg_attr* attrs, size_t attr_count, char* buffer, size_t buffer_size,
                     size_t* needed) {
  return guarded([&]() -> mg::Status {
    std::string_view name;
    MULTIGATHER_RETURN_IF_ERROR(op_name_of(op, &name));
    mg::TensorView in, idx;
    MULTIGATHER_RETURN_IF_ERROR(view_of("input", input, true, &in));
    MULTIGATHER_RETURN_IF_ERROR(view_of("indices", indices, true, &idx));
    mg::Attributes a;
    MULTIGATHER_RETURN_IF_ERROR(attributes_of(attrs, attr_count, &a));
    if (buffer == nullptr && buffer_size > 0) {
      return mg::InvalidArgument("buffer is NULL but buffer_size is " + std::to_string(buffer_size));
    }
    std::string text;
    MULTIGATHER_RETURN_IF_ERROR(mg::explain_op(name, in.shape, in.dtype, idx.shape, idx.dtype, a, &text));
    const std::size_t size = text.size() + 1;
    if (needed != nullptr) *needed = size;
    if (buffer == nullptr) return mg::Status::Ok();  // a size query
    if (buffer_size < size) {
      std::memcpy(buffer, text.data(), buffer_size - 1);
      buffer[buffer_size - 1] = '\0';
      return mg::InvalidArgument("explain: the text needs " + std::to_string(size) +
                                 " bytes but the buffer has " + std::to_string(buffer_size));
    }
    std::memcpy(buffer, text.c_str(), size);
    return mg::Status::Ok();
  });
}

}  // extern "C"
