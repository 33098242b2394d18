// libmultigather_torch: multigather's PyTorch operators, registered from C++ (TORCH_LIBRARY), so
// that they run without Python: in a process that only calls
// torch.ops.load_library(multigather.torch.library_path()), in an AOTInductor package, or in a
// C++ program against libtorch (docs/torch.md).
//
// One schema per registry row that PyTorch users call, generated from the row (op table,
// include/multigather/registry.hpp): its signature's argument order and defaults, its operand
// names, its attributes' types, then `*, int batch_rank=0`. For row "torch.gather" (signature
// "torch.gather(input, dim, index)", attribute dim: int):
//
//   multigather::gather(Tensor input, int dim, Tensor index, *, int batch_rank=0) -> Tensor
//   multigather::gather_backward(Tensor grad_output, SymInt[] input_size, int dim, Tensor index,
//       *, int batch_rank=0) -> Tensor
//
// A scatter row also has updates (src, source, value, values); its backward returns their
// gradient too and takes input_grad / updates_grad (a gradient not asked for comes back as an
// empty tensor). Attributes that the signature does not list (torch.index_put's index_dims)
// follow as keyword arguments.
//
// Kernels, all boxed and generic over the rows:
//  - CPU / CUDA: lower_op + execute on the at::Tensors' memory (no copy, no DLPack, no Python),
//    into an at::empty output; a thread-local Lowering cache (lowering_anchors); threads:
//    at::get_num_threads(); CUDA on the current stream;
//  - Autograd: the call below autograd, then a node whose backward is the row's `_backward` op
//    (the generic VJP, execute_vjp: a gather's input gradient is the scatter-add of the output
//    gradient through the same lowering; a scatter's are the output gradient masked where
//    updates overwrote it, passed on as is when the scatter adds onto its input, and the output
//    gradient gathered at the updates' targets). Both ops are linear, so the backward op's own
//    backward is the forward op: double backward (and any order) works, and everything goes
//    through the dispatcher, so AOTAutograd traces it. scatter_reduce prod / amax / amin / mean
//    follow PyTorch's formulas (scatter_reduce_grads);
//  - FuncTorchBatched: vmap moves the batch dimension to the front and runs one call with
//    batch_rank + 1 (execute_batched / execute_vjp lift the lowering);
//  - Meta / fake: registered from Python (multigather.torch_ops, with symbolic sizes), since
//    torch.compile and torch.export run in Python anyway.
// Errors are c10 errors of the core's kind: IndexError (an index out of range), ValueError
// (shapes, attributes), TypeError (dtypes), NotImplementedError (a gradient the VJP does not
// define: scatter_multiaxis with mul / min / max), with the registry's messages.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/TensorSubclassLikeUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/functorch/BatchedTensorImpl.h>
#include <ATen/functorch/DynamicLayer.h>
#include <ATen/functorch/PlumbingHelper.h>
#include <c10/core/DeviceGuard.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "multigather/attributes.hpp"
#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "multigather/registry.hpp"
#include "multigather/transforms.hpp"
#include "torch_dtype.h"

namespace {

using multigather::AttrSpec;
using multigather::AttrType;
using multigather::Attributes;
using multigather::DType;
using multigather::python::dtype_of;
using multigather::OpKind;
using multigather::OpSpec;
using multigather::Status;
using multigather::StatusCode;
using torch::autograd::variable_list;

// ---- the ops: one per registry row ------------------------------------------------------------

/// The registry rows with a PyTorch op, in registration order.
constexpr const char* kRows[] = {
    "gather_multiaxis", "scatter_multiaxis", "torch.gather", "torch.take",
    "torch.take_along_dim", "torch.index_select", "torch.scatter", "torch.scatter_add",
    "torch.scatter_reduce", "torch.index_add", "torch.index_copy", "torch.index_fill",
    "torch.index_put", "torch.put", "torch.segment_reduce", "torch_scatter.scatter",
    "torch_scatter.segment_coo", "torch_scatter.segment_csr"};

/// One schema argument of a forward op.
struct Arg {
  enum class Role : std::uint8_t { kInput, kIndices, kUpdates, kAttr } role = Role::kAttr;
  std::string name;
  const AttrSpec* attr = nullptr;  // kAttr
  bool keyword = false;            // after the signature's `*`
  std::string default_text;        // the signature's default ("" = none): "None", "1", "True"
};

struct TorchOp {
  const OpSpec* spec = nullptr;
  std::string name;       // "gather" (the row's name without "torch."; "torch_scatter_scatter")
  std::vector<Arg> args;  // the forward schema's, in order
  int input = -1, indices = -1, updates = -1;  // their positions in args
  bool scatter() const { return spec->kind == OpKind::kScatter; }
  /// A segment row: its backward takes the data itself (a max / min / prod gradient reads it).
  bool segment() const { return spec->kind == OpKind::kSegment; }
};

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ')) s.remove_suffix(1);
  return std::string(s);
}

/// The argument list of a row's signature: "torch.scatter(input, dim, index, src, reduce=None)".
std::vector<std::string> signature_args(const std::string& signature) {
  const std::size_t open = signature.find('('), close = signature.rfind(')');
  std::vector<std::string> out;
  if (open == std::string::npos || close == std::string::npos || close <= open) return out;
  std::string_view body(signature.data() + open + 1, close - open - 1);
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= body.size(); ++i) {
    const char c = i < body.size() ? body[i] : ',';
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      std::string a = trim(body.substr(start, i - start));
      if (!a.empty()) out.push_back(a);
      start = i + 1;
    }
  }
  return out;
}

TorchOp make_op(const OpSpec& spec) {
  TorchOp op;
  op.spec = &spec;
  op.name = spec.name.rfind("torch.", 0) == 0 ? spec.name.substr(6) : spec.name;
  for (char& c : op.name) c = c == '.' ? '_' : c;  // torch_scatter.scatter -> torch_scatter_scatter
  bool keyword = false;
  std::vector<const AttrSpec*> listed;
  for (const std::string& text : signature_args(spec.signature)) {
    if (text == "*") {
      keyword = true;
      continue;
    }
    Arg a;
    const std::size_t eq = text.find('=');
    a.name = trim(text.substr(0, eq));
    if (eq != std::string::npos) a.default_text = trim(text.substr(eq + 1));
    a.keyword = keyword;
    if (a.name == spec.input_name) {
      a.role = Arg::Role::kInput;
    } else if (a.name == spec.indices_name) {
      a.role = Arg::Role::kIndices;
    } else if (spec.kind == OpKind::kScatter && a.name == spec.updates_name) {
      a.role = Arg::Role::kUpdates;
    } else {
      for (const AttrSpec& s : spec.attrs) {
        if (s.name == a.name) a.attr = &s;
      }
      TORCH_CHECK(a.attr != nullptr, "multigather: registry row ", spec.name, ": signature argument '",
                  a.name, "' is neither an operand nor an attribute");
      listed.push_back(a.attr);
    }
    op.args.push_back(a);
  }
  // Attributes the signature leaves out: keyword arguments with the row's default.
  for (const AttrSpec& s : spec.attrs) {
    bool found = false;
    for (const AttrSpec* l : listed) found = found || l == &s;
    if (found) continue;
    Arg a;
    a.name = s.name;
    a.attr = &s;
    a.keyword = true;
    a.default_text = s.default_text;
    op.args.push_back(a);
  }
  for (int i = 0; i < static_cast<int>(op.args.size()); ++i) {
    switch (op.args[static_cast<std::size_t>(i)].role) {
      case Arg::Role::kInput: op.input = i; break;
      case Arg::Role::kIndices: op.indices = i; break;
      case Arg::Role::kUpdates: op.updates = i; break;
      case Arg::Role::kAttr: break;
    }
  }
  TORCH_CHECK(op.input >= 0 && op.indices >= 0 && (op.updates >= 0) == op.scatter(),
              "multigather: registry row ", spec.name, ": its signature must name its operands");
  return op;
}

/// A default in schema syntax: "None", "True", "1", "'error'" -> "\"error\"", "[0]".
std::string schema_default(const Arg& a) {
  std::string d = a.default_text;
  if (d == "none") d = "None";
  if (d == "true") d = "True";
  if (d == "false") d = "False";
  if (a.attr->type == AttrType::kEnum && d != "None") {
    if (!d.empty() && (d.front() == '\'' || d.front() == '"')) d = d.substr(1, d.size() - 2);
    d = "\"" + d + "\"";
  }
  if (a.attr->type == AttrType::kIntList && !d.empty() && d.front() != '[') d = "[" + d + "]";
  return d;
}

std::string attr_schema_type(const Arg& a) {
  const bool none_default = a.default_text == "None" || a.default_text == "none";
  switch (a.attr->type) {
    case AttrType::kInt: return none_default ? "int?" : "int";
    case AttrType::kOptionalInt: return "int?";
    case AttrType::kIntList: return "int[]";
    case AttrType::kEnum: return none_default ? "str?" : "str";
    case AttrType::kScalar: return none_default ? "Scalar?" : "Scalar";
    case AttrType::kOptionalScalar: return "Scalar?";
    case AttrType::kBool: return "bool";
    case AttrType::kTensor: return "Tensor?";
  }
  return "int";
}

/// The arguments of the forward schema (backward: input and updates become their sizes).
std::string schema_args(const TorchOp& op, bool backward) {
  std::string out = backward ? "Tensor grad_output" : "";
  bool keyword = false;
  for (const Arg& a : op.args) {
    if (!out.empty()) out += ", ";
    if (a.keyword && !keyword) {
      out += "*, ";
      keyword = true;
    }
    switch (a.role) {
      case Arg::Role::kInput:
        out += backward && !op.segment() ? "SymInt[] " + a.name + "_size" : "Tensor " + a.name;
        break;
      case Arg::Role::kUpdates: out += backward ? "SymInt[] " + a.name + "_size" : "Tensor " + a.name; break;
      case Arg::Role::kIndices: out += "Tensor " + a.name; break;
      case Arg::Role::kAttr:
        out += attr_schema_type(a) + " " + a.name;
        if (!a.default_text.empty()) out += "=" + schema_default(a);
        break;
    }
  }
  out += keyword ? ", " : ", *, ";
  if (backward && op.scatter()) out += "bool input_grad=True, bool updates_grad=True, ";
  out += "int batch_rank=0";
  return out;
}

/// Where a call's arguments sit: the forward's at `forward` (the op's args, input and updates as
/// their sizes in a backward), then a scatter backward's input_grad and updates_grad, then
/// batch_rank.
struct Frame {
  std::size_t forward = 0, input_grad = 0, updates_grad = 0, batch_rank = 0;
};

Frame frame_of(const TorchOp& op, bool backward, std::size_t first) {
  Frame f;
  f.forward = backward ? first + 1 : first;
  f.input_grad = f.forward + op.args.size();
  f.updates_grad = f.input_grad + 1;
  f.batch_rank = f.forward + op.args.size() + (backward && op.scatter() ? 2 : 0);
  return f;
}

std::string forward_schema(const TorchOp& op) {
  return op.name + "(" + schema_args(op, false) + ") -> Tensor";
}

std::string backward_schema(const TorchOp& op) {
  return op.name + "_backward(" + schema_args(op, true) + ") -> " +
         (op.scatter() ? "(Tensor, Tensor)" : "Tensor");
}

std::vector<TorchOp>& torch_ops() {
  static std::vector<TorchOp> ops = [] {
    std::vector<TorchOp> v;
    for (const char* row : kRows) {
      const OpSpec* spec = multigather::find_op(row);
      TORCH_CHECK(spec != nullptr, "multigather: no registry row ", row);
      v.push_back(make_op(*spec));
    }
    return v;
  }();
  return ops;
}

/// The TorchOp of a registered operator ("multigather::gather" or "..._backward").
const TorchOp& torch_op_of(const c10::OperatorHandle& handle, bool* backward) {
  static const std::map<std::string, std::pair<const TorchOp*, bool>> by_name = [] {
    std::map<std::string, std::pair<const TorchOp*, bool>> m;
    for (const TorchOp& op : torch_ops()) {
      m["multigather::" + op.name] = {&op, false};
      m["multigather::" + op.name + "_backward"] = {&op, true};
    }
    return m;
  }();
  const auto it = by_name.find(handle.schema().name());
  TORCH_CHECK(it != by_name.end(), "multigather: no registry row for ", handle.schema().name());
  *backward = it->second.second;
  return *it->second.first;
}

// ---- tensors and attributes --------------------------------------------------------------------

multigather::Dims dims_of(c10::IntArrayRef values) {
  multigather::Dims d;
  for (const std::int64_t v : values) d.push_back(v);
  return d;
}

multigather::TensorView view_of(const at::Tensor& t, const std::string& op, const char* name) {
  const std::optional<DType> dtype = dtype_of(t.scalar_type());
  TORCH_CHECK_TYPE(dtype.has_value(), op, ": ", name, " dtype ", t.scalar_type(),
                   " is not supported by multigather");
  TORCH_CHECK_VALUE(t.dim() <= multigather::kMaxRank, op, ": ", name, " has rank ", t.dim(),
                    "; multigather supports rank <= ", multigather::kMaxRank);
  return multigather::TensorView(t.numel() == 0 ? multigather::empty_tensor_data() : t.const_data_ptr(), *dtype,
                                 dims_of(t.sizes()), dims_of(t.strides()));
}

multigather::MutableTensorView mutable_view_of(const at::Tensor& t) {
  return multigather::MutableTensorView(t.numel() == 0 ? multigather::empty_tensor_data() : t.mutable_data_ptr(),
                                        *dtype_of(t.scalar_type()), dims_of(t.sizes()),
                                        dims_of(t.strides()));
}

[[noreturn]] void raise(const Status& s) {
  switch (s.code()) {
    case StatusCode::kOutOfRange: TORCH_CHECK_INDEX(false, s.message());
    case StatusCode::kTypeError: TORCH_CHECK_TYPE(false, s.message());
    case StatusCode::kInvalidArgument:
      if (s.reason() == multigather::StatusReason::kNotImplemented) {
        TORCH_CHECK_NOT_IMPLEMENTED(false, s.message());
      }
      TORCH_CHECK_VALUE(false, s.message());
    default: TORCH_CHECK(false, s.message());
  }
}

void check(const Status& s) {
  if (!s.ok()) raise(s);
}

/// The attribute arguments of a call (forward args start at stack position `first`).
Attributes attributes_of(const TorchOp& op, const torch::jit::Stack& stack, std::size_t first) {
  Attributes attrs;
  for (std::size_t i = 0; i < op.args.size(); ++i) {
    const Arg& a = op.args[i];
    if (a.role != Arg::Role::kAttr) continue;
    const c10::IValue& v = stack[first + i];
    if (v.isNone()) {
      attrs.set_none(a.name);
    } else if (v.isInt()) {
      attrs.set_int(a.name, v.toInt());
    } else if (v.isIntList()) {
      attrs.set_ints(a.name, v.toIntVector());
    } else if (v.isBool()) {
      attrs.set_bool(a.name, v.toBool());
    } else if (v.isString()) {
      attrs.set_string(a.name, v.toStringRef());
    } else if (v.isDouble()) {
      attrs.set_float(a.name, v.toDouble());
    } else if (v.isScalar()) {
      const c10::Scalar s = v.toScalar();
      TORCH_CHECK_TYPE(!s.isComplex(), op.spec->name, ": attribute ", a.name,
                       ": a complex number is not supported");
      if (s.isBoolean()) {
        attrs.set_scalar(a.name, multigather::Scalar::from_int(s.toBool() ? 1 : 0));
      } else if (s.isIntegral(false)) {
        attrs.set_scalar(a.name, multigather::Scalar::from_int(s.toLong()));
      } else {
        attrs.set_float(a.name, s.toDouble());
      }
    } else {
      TORCH_CHECK_TYPE(false, op.spec->name, ": attribute ", a.name, ": unsupported value ", v.tagKind());
    }
  }
  return attrs;
}

/// Where a call runs: torch's intra-op thread count on the CPU; on CUDA, the device's current
/// stream (a build without the CUDA engine refuses CUDA operands in execute, by name).
multigather::ExecutionContext context_for(const at::Tensor& input) {
  multigather::ExecutionContext context;
  context.num_threads = at::get_num_threads();
  context.device = multigather::Device::kCPU;
  if (input.is_cuda()) {
    context.device = multigather::Device::kCUDA;
    const c10::impl::VirtualGuardImpl cuda(c10::DeviceType::CUDA);
    context.stream = cuda.getStream(input.device()).native_handle();
  }
  return context;
}

// ---- the kernels ---------------------------------------------------------------------------------

/// A view without its first `batch_rank` dimensions (one example of a batched call).
multigather::TensorView example_of(multigather::TensorView v, std::int64_t batch_rank) {
  multigather::Dims shape, strides;
  for (int d = static_cast<int>(batch_rank); d < v.rank(); ++d) {
    shape.push_back(v.shape[d]);
    strides.push_back(v.strides[d]);
  }
  return multigather::TensorView(v.data, v.dtype, shape, strides);
}

/// The batch shape of a call with `batch_rank` leading batch dimensions: per dimension, the
/// size that is not 1 (execute_batched checks that every operand has it or 1).
std::vector<std::int64_t> batch_shape_of(std::initializer_list<const at::Tensor*> operands, std::int64_t batch_rank) {
  TORCH_CHECK_VALUE(batch_rank >= 0, "multigather: batch_rank = ", batch_rank,
                    " must be non-negative (the number of leading batch dimensions)");
  std::vector<std::int64_t> shape(static_cast<std::size_t>(batch_rank), 1);
  for (const at::Tensor* t : operands) {
    if (t == nullptr) continue;
    TORCH_CHECK_VALUE(t->dim() >= batch_rank, "multigather: batch_rank = ", batch_rank,
                      " is above an operand's rank ", t->dim());
    for (std::int64_t j = 0; j < batch_rank; ++j) {
      if (t->size(j) != 1) shape[static_cast<std::size_t>(j)] = t->size(j);
    }
  }
  return shape;
}

// ---- the lowering cache --------------------------------------------------------------------------

/// The Lowerings of this thread's recent calls of each op, keyed by everything lower_op reads
/// (the device, every tensor argument's dtype, sizes and strides, every other argument's
/// value): a repeated call only moves the cached views to its operands (move_lowering).
/// Thread-local, so no lock: autograd's and DataLoader's threads each keep their own.
struct CachedLowering {
  std::string key;
  std::unique_ptr<multigather::Lowering> lowering;
  multigather::LoweringAnchors anchors;
};

struct OpCache {
  static constexpr std::size_t kEntries = 4;
  std::array<CachedLowering, kEntries> entries;
  std::size_t next = 0;
};

template <typename T>
void append(std::string* key, const T& value) {
  key->append(reinterpret_cast<const char*>(&value), sizeof value);
}

std::string key_of(const torch::jit::Stack& stack, std::size_t first, std::size_t count, const at::Device& device) {
  std::string key;
  key.reserve(256);
  append(&key, static_cast<std::int16_t>(device.type()));
  append(&key, static_cast<std::int16_t>(device.index()));
  // Each argument: a kind byte, then its value (a kind byte keeps None apart from a value).
  for (std::size_t i = first; i < first + count; ++i) {
    const c10::IValue& v = stack[i];
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      key.push_back('T');
      append(&key, static_cast<std::int8_t>(t.scalar_type()));
      append(&key, static_cast<std::int8_t>(t.dim()));
      for (const std::int64_t d : t.sizes()) append(&key, d);
      for (const std::int64_t d : t.strides()) append(&key, d);
    } else if (v.isInt()) {
      key.push_back('i');
      append(&key, v.toInt());
    } else if (v.isDouble()) {
      key.push_back('d');
      append(&key, v.toDouble());
    } else if (v.isBool()) {
      key.push_back('b');
      append(&key, v.toBool());
    } else if (v.isString()) {
      key.push_back('s');
      key += v.toStringRef();
      key.push_back('\0');
    } else if (v.isIntList()) {
      key.push_back('l');
      for (const std::int64_t d : v.toIntVector()) append(&key, d);
      append(&key, std::int64_t{-1} << 62);
    } else if (v.isScalar()) {
      const c10::Scalar x = v.toScalar();
      key.push_back('S');
      append(&key, static_cast<std::int8_t>(x.type()));
      if (x.isFloatingPoint()) {
        append(&key, x.toDouble());
      } else {
        append(&key, x.toLong());
      }
    } else if (v.isNone()) {
      key.push_back('n');
    } else {
      return {};  // an argument the key cannot hold: not cached
    }
  }
  return key;
}

OpCache& cache_of(const TorchOp& op) {
  thread_local std::vector<OpCache> caches;
  const std::size_t index = static_cast<std::size_t>(&op - torch_ops().data());
  if (caches.size() <= index) caches.resize(torch_ops().size());
  return caches[index];
}

/// torch.index_add's alpha when the op has one and it is not 1; nullopt otherwise.
std::optional<c10::Scalar> alpha_of(const TorchOp& op, const torch::jit::Stack& stack, std::size_t forward) {
  for (std::size_t i = 0; i < op.args.size(); ++i) {
    if (op.args[i].role == Arg::Role::kAttr && op.args[i].name == "alpha") {
      const c10::Scalar a = stack[forward + i].toScalar();
      if (!(a.isIntegral(false) && a.toLong() == 1)) return a;
    }
  }
  return std::nullopt;
}

/// `attrs` with alpha 1: the caller applies alpha itself (the gradient's scale; on a CUDA
/// device, the forward's, since the engine scales only host memory).
Attributes with_alpha_one(const Attributes& attrs) {
  Attributes unscaled;
  for (const auto& [attr, value] : attrs.items()) {
    if (attr == "alpha") {
      unscaled.set_int(attr, 1);
    } else {
      unscaled.set_arg(attr, value);
    }
  }
  return unscaled;
}

/// forward: lower_op + execute into a new tensor of the framework's output shape; with
/// batch_rank > 0, execute_batched (every operand has batch_rank leading dimensions, of the
/// batch size or 1; one execute runs the whole batch), into batch_shape ++ the output shape.
at::Tensor run_forward(const TorchOp& op, const torch::jit::Stack& stack, const Frame& f) {
  const at::Tensor& input = stack[f.forward + op.input].toTensor();
  const at::Tensor& indices = stack[f.forward + op.indices].toTensor();
  const at::Tensor* updates = op.scatter() ? &stack[f.forward + op.updates].toTensor() : nullptr;
  const std::int64_t batch_rank = stack[f.batch_rank].toInt();
  const std::string& name = op.spec->name;
  // Operands on two devices (a CPU tensor beside a CUDA one): PyTorch's error, before any read.
  for (const at::Tensor* t : {&indices, updates}) {
    TORCH_CHECK(t == nullptr || t->device() == input.device(), name,
                ": Expected all tensors to be on the same device, but found at least two devices, ", input.device(),
                " and ", t->device(), "!");
  }
  const multigather::ExecutionContext context = context_for(input);
  // torch.index_add's alpha on a CUDA device: PyTorch scales the source on the device first, as
  // its own kernel scales each source element (a floating source, or an integer alpha and a
  // non-complex source; any other pair keeps alpha, and the row refuses it on the device).
  const std::optional<c10::Scalar> alpha = input.is_cuda() ? alpha_of(op, stack, f.forward) : std::nullopt;
  at::Tensor scaled;
  if (alpha && updates != nullptr &&
      (c10::isFloatingType(updates->scalar_type()) ||
       (alpha->isIntegral(false) && !c10::isComplexType(updates->scalar_type())))) {
    scaled = updates->mul(*alpha);
    updates = &scaled;
  }
  const auto attributes = [&] {
    Attributes attrs = attributes_of(op, stack, f.forward);
    return scaled.defined() ? with_alpha_one(attrs) : attrs;
  };
  const c10::OptionalDeviceGuard device(input.is_cuda() ? std::optional<c10::Device>(input.device()) : std::nullopt);
  const multigather::TensorView x = view_of(input, name, "input"), i = view_of(indices, name, "indices");
  multigather::TensorView u;
  if (updates != nullptr) u = view_of(*updates, name, op.spec->updates_name.c_str());
  const std::vector<std::int64_t> batch = batch_shape_of({&input, &indices, updates}, batch_rank);
  // One call: a cached Lowering moved to these operands, or lower_op's (then cached).
  multigather::Lowering fresh;
  multigather::Lowering* lowering = &fresh;
  OpCache& cache = cache_of(op);
  const std::string key = batch_rank == 0 ? key_of(stack, f.forward, op.args.size(), input.device()) : std::string();
  for (CachedLowering& e : cache.entries) {
    if (key.empty() || !e.lowering || e.key != key) continue;
    lowering = e.lowering.get();
    multigather::move_lowering(lowering, e.anchors, x.data, i.data, updates != nullptr ? u.data : nullptr);
    break;
  }
  if (lowering == &fresh) {
    const Attributes attrs = attributes();
    if (updates != nullptr) {
      check(multigather::lower_op(name, example_of(x, batch_rank), example_of(i, batch_rank),
                                  example_of(u, batch_rank), attrs, &fresh, context.device));
    } else {
      check(multigather::lower_op(name, example_of(x, batch_rank), example_of(i, batch_rank), attrs, &fresh,
                                  context.device));
    }
    multigather::LoweringAnchors anchors;
    if (!key.empty() && multigather::lowering_anchors(fresh, x, i, updates != nullptr ? &u : nullptr, &anchors)) {
      CachedLowering& e = cache.entries[cache.next];
      cache.next = (cache.next + 1) % OpCache::kEntries;
      e.key = key;
      e.anchors = anchors;
      e.lowering = std::make_unique<multigather::Lowering>(std::move(fresh));
      lowering = e.lowering.get();
    }
  }
  const multigather::Lowering& l = *lowering;
  std::vector<std::int64_t> shape = batch;
  shape.insert(shape.end(), l.output_shape.begin(), l.output_shape.end());
  at::Tensor output = at::empty(shape, input.options());
  multigather::ExecutionContext run = context;
  run.output_is_new = true;
  if (batch_rank == 0) {
    check(multigather::execute(l, mutable_view_of(output), run));
  } else {
    check(multigather::execute_batched(name, x, i, updates != nullptr ? &u : nullptr,
                                       attributes(), static_cast<int>(batch_rank),
                                       mutable_view_of(output), run));
  }
  return output;
}

/// backward: the VJP of the row (execute_vjp) at the output gradient. input_size and
/// updates_size are the operands' full sizes (batch dimensions included): a gradient is
/// computed at the batch size and summed over the batch dimensions where its operand had 1.
std::vector<at::Tensor> run_backward(const TorchOp& op, const torch::jit::Stack& stack, const Frame& f) {
  const at::Tensor grad = stack[f.forward - 1].toTensor().contiguous();
  const at::Tensor& indices = stack[f.forward + op.indices].toTensor();
  const std::int64_t batch_rank = stack[f.batch_rank].toInt();
  Attributes attrs = attributes_of(op, stack, f.forward);
  const std::string& name = op.spec->name;
  // torch.index_add's alpha scales the updates: their gradient is alpha times alpha 1's.
  const std::optional<c10::Scalar> alpha = alpha_of(op, stack, f.forward);
  if (alpha) attrs = with_alpha_one(attrs);
  const std::vector<std::int64_t> batch = batch_shape_of({&grad}, batch_rank);
  const auto at_batch = [&](const std::vector<std::int64_t>& size) {  // batch ++ the example's size
    std::vector<std::int64_t> full = batch;
    full.insert(full.end(), size.begin() + std::min<std::ptrdiff_t>(batch_rank, static_cast<std::ptrdiff_t>(size.size())),
                size.end());
    return full;
  };
  // A segment row's backward has the data itself (read by a max / min / prod gradient).
  const at::Tensor data = op.segment() ? stack[f.forward + op.input].toTensor().contiguous() : at::Tensor();
  const std::vector<std::int64_t> input_size =
      op.segment() ? data.sizes().vec() : stack[f.forward + op.input].toIntVector();
  const multigather::ExecutionContext context = context_for(grad);
  const int rank = static_cast<int>(batch_rank);
  const multigather::TensorView grad_view = view_of(grad, name, "grad_output");
  const multigather::TensorView indices_view = view_of(indices, name, "indices");
  if (!op.scatter()) {
    at::Tensor grad_input = at::empty(at_batch(input_size), grad.options());
    const multigather::TensorView input_view =
        op.segment() ? view_of(data, name, op.spec->input_name.c_str()) : mutable_view_of(grad_input);
    check(multigather::execute_vjp(name, input_view, indices_view, nullptr, attrs, rank, grad_view,
                                   mutable_view_of(grad_input), nullptr, context));
    return {batch_rank > 0 ? grad_input.sum_to_size(input_size) : grad_input};
  }
  // A gradient not asked for (input_grad=False: the node passes grad_output on, see
  // input_gradient_is_identity; updates_grad=False) is not written: a view with null data of
  // its shape (execute_vjp reads only shapes there), and an empty tensor comes back.
  std::vector<std::int64_t> unused = batch;
  unused.push_back(0);
  const auto gradient = [&](bool wanted, const std::vector<std::int64_t>& size, at::Tensor* tensor) {
    *tensor = at::empty(wanted ? at_batch(size) : unused, grad.options());
    return wanted ? mutable_view_of(*tensor)
                  : multigather::MutableTensorView(nullptr, grad_view.dtype, dims_of(at_batch(size)));
  };
  const std::vector<std::int64_t> updates_size = stack[f.forward + op.updates].toIntVector();
  const bool input_grad = stack[f.input_grad].toBool(), updates_grad = stack[f.updates_grad].toBool();
  at::Tensor grad_input, grad_updates;
  const multigather::MutableTensorView gi = gradient(input_grad, input_size, &grad_input);
  const multigather::MutableTensorView gu = gradient(updates_grad, updates_size, &grad_updates);
  const multigather::TensorView updates_view = gu;
  check(multigather::execute_vjp(name, gi, indices_view, &updates_view, attrs, rank, grad_view, gi,
                                 updates_grad ? &gu : nullptr, context));
  if (input_grad && batch_rank > 0) grad_input = grad_input.sum_to_size(input_size);
  if (!updates_grad) return {grad_input, grad_updates};
  if (alpha) grad_updates.mul_(*alpha);
  return {grad_input, batch_rank > 0 ? grad_updates.sum_to_size(updates_size) : grad_updates};
}

void compute_kernel(const c10::OperatorHandle& handle, torch::jit::Stack* stack) {
  bool backward = false;
  const TorchOp& op = torch_op_of(handle, &backward);
  const std::size_t n = handle.schema().arguments().size();
  const Frame f = frame_of(op, backward, stack->size() - n);
  std::vector<at::Tensor> results;
  if (backward) {
    results = run_backward(op, *stack, f);
  } else {
    results.push_back(run_forward(op, *stack, f));
  }
  torch::jit::drop(*stack, n);
  for (at::Tensor& t : results) torch::jit::push(*stack, std::move(t));
}

// ---- autograd -----------------------------------------------------------------------------------

c10::IValue sizes_of(const at::Tensor& t) { return c10::IValue(t.sym_sizes().vec()); }

at::Tensor zeros_of(const c10::IValue& sizes, const at::Tensor& like) {
  return at::zeros_symint(sizes.toSymIntVector(), like.options());
}

/// The registered operators of a row, looked up once (after TORCH_LIBRARY registered them).
struct Handles {
  c10::OperatorHandle forward, backward;
};

const Handles& handles_of(const TorchOp& op) {
  static const std::vector<Handles> handles = [] {
    std::vector<Handles> v;
    auto& d = c10::Dispatcher::singleton();
    for (const TorchOp& o : torch_ops()) {
      v.push_back({d.findSchemaOrThrow(("multigather::" + o.name).c_str(), ""),
                   d.findSchemaOrThrow(("multigather::" + o.name + "_backward").c_str(), "")});
    }
    return v;
  }();
  return handles[static_cast<std::size_t>(&op - torch_ops().data())];
}

/// A new autograd node, held the way this torch's graph holds nodes: `Edge::function` is a
/// `std::shared_ptr<Node>` up to torch 2.11 and a `c10::intrusive_ptr<Node>` in later releases
/// (and `set_history` takes the same pointer).
template <class NodeType>
auto make_node() {
  using Held = decltype(torch::autograd::Edge::function);
  if constexpr (std::is_same_v<Held, std::shared_ptr<torch::autograd::Node>>) {
    return std::make_shared<NodeType>();
  } else {
    return c10::make_intrusive<NodeType>();
  }
}

/// The node of a forward op: its backward is the row's _backward op (through the dispatcher).
struct ForwardBackward : torch::autograd::Node {
  const TorchOp* op = nullptr;
  std::vector<c10::IValue> args;  // the forward's, input / updates as their sizes, indices unset
  torch::autograd::SavedVariable indices;
  torch::autograd::SavedVariable input;  // a segment row's data (its args entry unset)
  std::int64_t batch_rank = 0;

  std::string name() const override { return "multigather::" + op->name + "_backward"; }
  void release_variables() override {
    indices.reset_data();
    input.reset_data();
  }

  /// input_gradient_is_identity of this call, from its Lowering (shapes, attributes and
  /// index dtype; no data read). False while tracing (fake or functional tensors: the
  /// backward op runs, as traced graphs need it) and for batched calls.
  bool input_gradient_is_identity(const at::Tensor& grad, const at::Tensor& index) {
    if (batch_rank != 0 || at::isTensorSubclassLike(grad) || at::isTensorSubclassLike(index) ||
        grad.is_meta() || index.is_meta()) {
      return false;
    }
    if (!identity) {
      const std::string& name = op->spec->name;
      const std::optional<DType> dtype = dtype_of(grad.scalar_type());
      if (!dtype) return false;
      const multigather::TensorView x(nullptr, *dtype, dims_of(args[static_cast<std::size_t>(op->input)].toIntVector()));
      const multigather::TensorView u(nullptr, *dtype,
                                      dims_of(args[static_cast<std::size_t>(op->updates)].toIntVector()));
      multigather::Lowering l;
      identity = multigather::lower_op(name, x, view_of(index, name, "indices"), u, attributes_of(*op, args, 0), &l,
                                       grad.is_cuda() ? multigather::Device::kCUDA : multigather::Device::kCPU)
                     .ok() &&
                 multigather::input_gradient_is_identity(l);
    }
    return *identity;
  }
  std::optional<bool> identity;

  variable_list apply(variable_list&& grads) override {
    const at::Tensor& grad = grads[0];
    const std::size_t outputs = op->scatter() ? 2 : 1;
    if (!grad.defined()) return variable_list(outputs);
    const c10::OperatorHandle& handle = handles_of(*op).backward;
    const at::Tensor index = indices.unpack();
    // A scatter that adds onto its input passes grad_output on as input's gradient (no copy),
    // as PyTorch's own scatter_add / index_add do.
    const bool pass_on = op->scatter() && should_compute_output(0) && input_gradient_is_identity(grad, index);
    if (pass_on && !should_compute_output(1)) return {grad, at::Tensor()};
    torch::jit::Stack stack;
    stack.push_back(grad);
    for (std::size_t i = 0; i < args.size(); ++i) {
      const int p = static_cast<int>(i);
      stack.push_back(p == op->indices ? c10::IValue(index)
                      : p == op->input && op->segment() ? c10::IValue(input.unpack()) : args[i]);
    }
    if (op->scatter()) {
      stack.push_back(should_compute_output(0) && !pass_on);
      stack.push_back(should_compute_output(1));
    }
    stack.push_back(batch_rank);
    handle.callBoxed(stack);
    variable_list out;
    for (std::size_t i = 0; i < outputs; ++i) {
      out.push_back(should_compute_output(i) ? stack[i].toTensor() : at::Tensor());
    }
    if (pass_on) out[0] = grad;
    return out;
  }
};

/// The node of a backward op: the VJP is linear in grad_output, its transpose is the forward op.
struct BackwardBackward : torch::autograd::Node {
  const TorchOp* op = nullptr;
  std::vector<c10::IValue> args;  // the backward's forward part (sizes, attributes), indices unset
  torch::autograd::SavedVariable indices;
  at::TensorOptions options;
  std::int64_t batch_rank = 0;

  std::string name() const override { return "multigather::" + op->name + "_backward_backward"; }
  void release_variables() override { indices.reset_data(); }

  /// A segment max / min / prod: its gradient is not the transpose of the forward op (it reads
  /// the data), so there is no second derivative here; sum and mean are linear.
  void refuse_nonlinear_segment() const {
    if (!op->segment()) return;
    const at::Tensor data = args[static_cast<std::size_t>(op->input)].toTensor().contiguous();
    const at::Tensor index = indices.unpack();
    const std::string& name = op->spec->name;
    multigather::Lowering l;
    check(multigather::lower_op(name, view_of(data, name, "input"), view_of(index, name, "indices"),
                                attributes_of(*op, args, 0), &l, multigather::Device::kCPU));
    TORCH_CHECK_NOT_IMPLEMENTED(l.reduction == multigather::Reduction::kAdd, name,
                                ": the gradient of a max / min / prod segment reduction is not differentiable "
                                "again (double backward is implemented for sum and mean)");
  }

  variable_list apply(variable_list&& grads) override {
    if (!should_compute_output(0)) return {at::Tensor()};
    refuse_nonlinear_segment();
    const at::Tensor like = at::empty({0}, options);
    const c10::OperatorHandle& handle = handles_of(*op).forward;
    torch::jit::Stack stack;
    for (std::size_t i = 0; i < args.size(); ++i) {
      const int p = static_cast<int>(i);
      if (p == op->indices) {
        stack.push_back(indices.unpack());
      } else if (p == op->input) {
        const c10::IValue sizes = op->segment() ? sizes_of(args[i].toTensor()) : args[i];
        stack.push_back(grads[0].defined() ? grads[0] : zeros_of(sizes, like));
      } else if (p == op->updates) {
        stack.push_back(grads.size() > 1 && grads[1].defined() && grads[1].numel() > 0
                            ? grads[1] : zeros_of(args[i], like));
      } else if (op->segment() && op->args[i].name == "initial") {
        // A sum / mean is linear in the data plus the constant `initial` (PyTorch adds it to a
        // segment's sum): the transpose has none, so an empty segment gives 0 (a mean with no
        // initial would give its NaN there).
        stack.push_back(c10::IValue(c10::Scalar(0)));
      } else {
        stack.push_back(args[i]);
      }
    }
    stack.push_back(batch_rank);
    handle.callBoxed(stack);
    return {stack[0].toTensor()};
  }
};

// ---- scatter_reduce prod / amax / amin / mean: PyTorch's gradient rules ------------------------

/// The ops the rules below are written in: multigather's own (through the dispatcher, so they
/// are differentiable again and traced by AOTAutograd) and torch's arithmetic.
struct ReduceOps {
  using Gather = at::Tensor(const at::Tensor&, std::int64_t, const at::Tensor&, std::int64_t);
  using ScatterAdd = at::Tensor(const at::Tensor&, std::int64_t, const at::Tensor&, const at::Tensor&, std::int64_t);
  using ScatterReduce = at::Tensor(const at::Tensor&, std::int64_t, const at::Tensor&, const at::Tensor&,
                                   c10::string_view, bool, std::int64_t);
  c10::TypedOperatorHandle<Gather> gather;
  c10::TypedOperatorHandle<ScatterAdd> scatter_add;
  c10::TypedOperatorHandle<ScatterReduce> scatter_reduce;

  static const ReduceOps& get() {
    static const ReduceOps ops = [] {
      auto& d = c10::Dispatcher::singleton();
      return ReduceOps{d.findSchemaOrThrow("multigather::gather", "").typed<Gather>(),
                       d.findSchemaOrThrow("multigather::scatter_add", "").typed<ScatterAdd>(),
                       d.findSchemaOrThrow("multigather::scatter_reduce", "").typed<ScatterReduce>()};
    }();
    return ops;
  }
};

/// The gradients of torch.scatter_reduce(self, dim, index, src, reduce, include_self) for reduce
/// prod, amax, amin and mean, as PyTorch defines them (torch/csrc/autograd/FunctionsManual.cpp,
/// scatter_reduce_backward): mean divides by the count of values reduced into each element;
/// amax / amin share the gradient evenly among the values equal to the result; prod is the
/// product of the other values (zeros handled exactly: a single zero gets the product of the
/// rest, two zeros give zero). One deliberate difference: with include_self=False an element of
/// self that updates reached takes no part, so it is not counted among amax / amin's ties
/// (PyTorch counts it: its src gradient is then halved although src alone is the maximum).
/// src's gradient covers src's leading part that index reads (the rest: zero), as torch.gather
/// reads it.
std::vector<at::Tensor> scatter_reduce_grads(const at::Tensor& grad, const at::Tensor& self_in, std::int64_t dim,
                                             const at::Tensor& index_in, const at::Tensor& src_in,
                                             const at::Tensor& result, const std::string& reduce,
                                             bool include_self, std::int64_t batch_rank) {
  const ReduceOps& ops = ReduceOps::get();
  // Batched calls (batch_rank leading dimensions of the batch size or 1): every operand at the
  // batch size, and dim past the batch dimensions; the gradients sum back to the operands' sizes.
  at::Tensor self = self_in, index = index_in, src = src_in;
  if (batch_rank > 0) {
    const auto at_batch = [&](const at::Tensor& t) {
      std::vector<c10::SymInt> size = result.sym_sizes().slice(0, static_cast<std::size_t>(batch_rank)).vec();
      for (std::int64_t k = batch_rank; k < t.dim(); ++k) size.push_back(t.sym_size(k));
      return t.expand_symint(size);
    };
    self = at_batch(self_in);
    index = at_batch(index_in);
    src = at_batch(src_in);
  }
  const std::int64_t rank = std::max<std::int64_t>(self.dim() - batch_rank, 1);
  const std::int64_t d = ((dim % rank) + rank) % rank + batch_rank;
  // src's part that index reads (index.size(k) <= src.size(k)).
  at::Tensor part = src;
  if (src.dim() > 0) {
    for (std::int64_t k = 0; k < src.dim(); ++k) part = part.narrow_symint(k, 0, index.sym_size(k));
  }
  // Constants as broadcast views of one element (stride 0): nothing of src's or input's size
  // is filled (a fresh buffer's first touch costs as much as the scatter on a VM), and
  // torch.compile keeps them views around the opaque ops.
  const auto filled = [](const at::Tensor& like, double value) {
    return at::full({}, value, like.options()).expand_symint(like.sym_sizes());
  };
  const at::Tensor ones = filled(part, 1);
  // Elements of self that updates reached: with include_self=False they take no part.
  at::Tensor reached;
  if (!include_self) reached = ops.scatter_add.call(filled(self, 0), d, index, ones, 0).ne(0);
  at::Tensor grad_self, grad_part;
  if (reduce == "mean") {
    at::Tensor n = ops.scatter_add.call(filled(self, include_self ? 1 : 0), d, index, ones, 0);
    n = n.masked_fill(n == 0, 1);
    const at::Tensor per = grad / n;
    grad_self = per;
    grad_part = ops.gather.call(per, d, index, 0);
  } else if (reduce == "amax" || reduce == "amin") {
    const at::Tensor value = ops.gather.call(result, d, index, 0);
    at::Tensor self_is = self == result;
    if (!include_self) self_is = self_is.logical_and(reached.logical_not());
    const at::Tensor self_w = self_is.to(grad.scalar_type());
    const at::Tensor src_w = (part == value).to(grad.scalar_type());
    const at::Tensor per = grad / ops.scatter_add.call(self_w, d, index, src_w, 0);
    grad_self = self_w * per;
    grad_part = src_w * ops.gather.call(per, d, index, 0);
  } else {  // prod
    const at::Tensor masked_self = self.masked_fill(self == 0, 1);
    const at::Tensor masked_self_result = ops.scatter_reduce.call(masked_self, d, index, part, "prod", include_self, 0);
    grad_self = grad * masked_self_result / masked_self;
    const at::Tensor src_zero = part == 0;
    const at::Tensor zeros_per_target =
        ops.gather.call(ops.scatter_add.call(filled(self, 0), d, index, src_zero.to(self.scalar_type()), 0), d, index, 0);
    const at::Tensor single_zero = src_zero.logical_and(zeros_per_target == 1);
    const at::Tensor masked_src = part.masked_fill(single_zero, 1);
    const at::Tensor masked_src_result = ops.scatter_reduce.call(self, d, index, masked_src, "prod", include_self, 0);
    grad_part = at::where(single_zero, ops.gather.call(grad * masked_src_result, d, index, 0),
                          ops.gather.call(grad * result, d, index, 0) / part.masked_fill(src_zero, 1));
  }
  if (!include_self) grad_self = grad_self.masked_fill(reached, 0);
  at::Tensor grad_src = grad_part;
  if (!part.is_same(src) && !src.sym_sizes().equals(part.sym_sizes())) {
    grad_src = at::zeros_like(src);
    at::Tensor window = grad_src;
    for (std::int64_t k = 0; k < src.dim(); ++k) window = window.narrow_symint(k, 0, index.sym_size(k));
    window.copy_(grad_part);
  }
  if (batch_rank > 0) return {grad_self.sum_to_size_symint(self_in.sym_sizes()), grad_src.sum_to_size_symint(src_in.sym_sizes())};
  return {grad_self, grad_src};
}

/// multigather::scatter_reduce_values_backward: the value-reading gradients above as one op,
/// so that torch.compile keeps them one opaque call (Inductor's code for their masks over src's
/// size took almost half of a compiled step of bench/torch_ops.py's message-passing model;
/// measured: bench/README.md, "Measurements behind the CPU engine's choices").
/// Not differentiable again (autogradNotImplementedFallback: a double backward raises).
void scatter_reduce_values_kernel(const c10::OperatorHandle& handle, torch::jit::Stack* stack) {
  const std::size_t n = handle.schema().arguments().size();
  const std::size_t first = stack->size() - n;
  const auto arg = [&](std::size_t i) -> const c10::IValue& { return (*stack)[first + i]; };
  std::vector<at::Tensor> g = scatter_reduce_grads(arg(0).toTensor(), arg(1).toTensor(), arg(2).toInt(),
                                                   arg(3).toTensor(), arg(4).toTensor(), arg(5).toTensor(),
                                                   std::string(arg(6).toStringRef()), arg(7).toBool(), arg(8).toInt());
  torch::jit::drop(*stack, n);
  torch::jit::push(*stack, std::move(g[0]), std::move(g[1]));
}

constexpr const char* kScatterReduceValuesSchema =
    "scatter_reduce_values_backward(Tensor grad_output, Tensor input, int dim, Tensor index, Tensor src, "
    "Tensor result, str reduce, bool include_self, *, int batch_rank=0) -> (Tensor, Tensor)";

/// The node of torch.scatter_reduce with a reduction whose gradient reads the values.
struct ScatterReduceBackward : torch::autograd::Node {
  torch::autograd::SavedVariable self, index, src, result;
  std::int64_t dim = 0;
  std::string reduce;
  bool include_self = true;
  std::int64_t batch_rank = 0;

  std::string name() const override { return "multigather::scatter_reduce_backward"; }
  void release_variables() override {
    self.reset_data();
    index.reset_data();
    src.reset_data();
    result.reset_data();
  }

  variable_list apply(variable_list&& grads) override {
    if (!grads[0].defined()) return variable_list(2);
    std::vector<at::Tensor> g;
    if (reduce == "mean") {  // gathers and scatters of constants only: differentiable again
      g = scatter_reduce_grads(grads[0], self.unpack(), dim, index.unpack(), src.unpack(),
                               result.unpack(getptr()), reduce, include_self, batch_rank);
    } else {
      static const auto values = c10::Dispatcher::singleton()
          .findSchemaOrThrow("multigather::scatter_reduce_values_backward", "")
          .typed<std::tuple<at::Tensor, at::Tensor>(const at::Tensor&, const at::Tensor&, std::int64_t,
                                                    const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                                    c10::string_view, bool, std::int64_t)>();
      auto [gi, gs] = values.call(grads[0], self.unpack(), dim, index.unpack(), src.unpack(),
                                  result.unpack(getptr()), reduce, include_self, batch_rank);
      g = {gi, gs};
    }
    return {should_compute_output(0) ? g[0] : at::Tensor(), should_compute_output(1) ? g[1] : at::Tensor()};
  }
};

bool needs_grad(const at::Tensor& t) {
  return t.defined() && t.requires_grad() && torch::autograd::isDifferentiableType(t.scalar_type());
}

void autograd_kernel(const c10::OperatorHandle& handle, c10::DispatchKeySet keys, torch::jit::Stack* stack) {
  bool backward = false;
  const TorchOp& op = torch_op_of(handle, &backward);
  const std::size_t n = handle.schema().arguments().size();
  const std::size_t first = stack->size() - n;
  const Frame f = frame_of(op, backward, first);
  const std::size_t fwd = f.forward;
  const std::int64_t batch_rank = (*stack)[f.batch_rank].toInt();
  const auto operand = [&](int position) { return (*stack)[fwd + static_cast<std::size_t>(position)].toTensor(); };
  at::Tensor input, updates, grad;
  bool any = false;
  if (backward) {
    grad = (*stack)[first].toTensor();
    any = torch::autograd::compute_requires_grad(grad) && torch::autograd::isDifferentiableType(grad.scalar_type());
  } else {
    input = operand(op.input);
    if (op.updates >= 0) updates = operand(op.updates);
    any = c10::GradMode::is_enabled() && (needs_grad(input) || needs_grad(updates));
  }
  if (!any) {
    at::AutoDispatchBelowADInplaceOrView guard;
    handle.redispatchBoxed(keys & c10::after_autograd_keyset, stack);
    return;
  }
  // What the node needs, taken before the call consumes the stack.
  const at::Tensor indices = operand(op.indices);
  std::vector<c10::IValue> args(stack->begin() + static_cast<std::ptrdiff_t>(fwd),
                                stack->begin() + static_cast<std::ptrdiff_t>(fwd + op.args.size()));
  {
    at::AutoDispatchBelowADInplaceOrView guard;
    handle.redispatchBoxed(keys & c10::after_autograd_keyset, stack);
  }
  args[static_cast<std::size_t>(op.indices)] = c10::IValue();
  if (backward) {
    auto node = make_node<BackwardBackward>();
    node->op = &op;
    node->options = grad.options();
    node->batch_rank = batch_rank;
    node->args = std::move(args);
    node->indices = torch::autograd::SavedVariable(indices, false);
    node->set_next_edges(torch::autograd::collect_next_edges(grad));
    const std::size_t outputs = op.scatter() ? 2 : 1;
    for (std::size_t i = 0; i < outputs; ++i) {
      at::Tensor& out = (*stack)[stack->size() - outputs + i].toTensor();
      torch::autograd::set_history(out, node);
    }
    return;
  }
  if (op.spec->name == "torch.scatter_reduce") {
    const auto arg = [&](const char* name) -> const c10::IValue& {
      for (std::size_t i = 0; i < op.args.size(); ++i) {
        if (op.args[i].name == name) return args[i];
      }
      TORCH_CHECK(false, "multigather: torch.scatter_reduce has no argument ", name);
    };
    const std::string reduce = arg("reduce").toStringRef();
    if (reduce != "sum") {
      TORCH_CHECK_NOT_IMPLEMENTED(!input.is_complex(), "torch.scatter_reduce: the gradient of reduce='", reduce,
                                  "' is not implemented for complex tensors");
      auto node = make_node<ScatterReduceBackward>();
      at::Tensor& output = (*stack).back().toTensor();
      node->dim = arg("dim").toInt();
      node->reduce = reduce;
      node->include_self = arg("include_self").toBool();
      node->batch_rank = batch_rank;
      node->self = torch::autograd::SavedVariable(input, false);
      node->index = torch::autograd::SavedVariable(indices, false);
      node->src = torch::autograd::SavedVariable(updates, false);
      node->set_next_edges(torch::autograd::collect_next_edges(input, updates));
      torch::autograd::set_history(output, node);
      node->result = torch::autograd::SavedVariable(output, true);
      return;
    }
  }
  args[static_cast<std::size_t>(op.input)] = op.segment() ? c10::IValue() : sizes_of(input);
  if (op.updates >= 0) args[static_cast<std::size_t>(op.updates)] = sizes_of(updates);
  auto node = make_node<ForwardBackward>();
  node->op = &op;
  if (op.segment()) node->input = torch::autograd::SavedVariable(input, false);
  node->batch_rank = batch_rank;
  node->args = std::move(args);
  node->indices = torch::autograd::SavedVariable(indices, false);
  node->set_next_edges(op.scatter() ? torch::autograd::collect_next_edges(input, updates)
                                    : torch::autograd::collect_next_edges(input));
  torch::autograd::set_history((*stack).back().toTensor(), node);
}

// ---- vmap: the batching rule ---------------------------------------------------------------------

/// functorch's batching rule for every op (torch.func.vmap): the operands' batch dimension at
/// this vmap level moves to the front (an operand that is not batched gets a leading 1), and
/// the op runs once with batch_rank + 1 (execute_batched lifts the row's lowering: no loop over
/// the batch). A backward's input_size / updates_size get the batch size in front: its
/// gradients are per example. The results are batched at dimension 0.
void batched_kernel(const c10::OperatorHandle& handle, torch::jit::Stack* stack) {
  // Read from the schema: every op here ends with batch_rank, and a backward's operand sizes
  // are its SymInt[] arguments named *_size.
  const auto& arguments = handle.schema().arguments();
  const std::size_t n = arguments.size();
  const std::size_t first = stack->size() - n;
  c10::impl::ExcludeDispatchKeyGuard guard(c10::DispatchKey::FuncTorchBatched);
  const std::optional<at::functorch::DynamicLayer> layer = at::functorch::maybeCurrentDynamicLayer();
  TORCH_CHECK(layer.has_value(), "multigather's batching rule: a batched tensor escaped vmap (functorch has no "
              "active layer)");
  const std::int64_t level = layer->layerId();
  std::optional<std::int64_t> batch_size;
  std::vector<std::pair<std::size_t, std::optional<std::int64_t>>> tensors;  // stack position, bdim
  for (std::size_t i = first; i < stack->size(); ++i) {
    if (!(*stack)[i].isTensor()) continue;
    auto [value, bdim] = at::functorch::unwrapTensorAtLevel((*stack)[i].toTensor(), level);
    if (bdim) batch_size = value.size(*bdim);
    (*stack)[i] = value;
    tensors.emplace_back(i, bdim);
  }
  if (batch_size) {
    // A backward's gradients are per example at this level: its operands that are not batched
    // are expanded to the batch size (a stride-0 view), not broadcast from 1, so that no
    // gradient sums over the batch; a forward's broadcast from 1.
    const std::string& op_name = handle.schema().name();
    const bool gradients = op_name.size() > 9 && op_name.compare(op_name.size() - 9, 9, "_backward") == 0;
    for (const auto& [i, bdim] : tensors) {
      const at::Tensor& t = (*stack)[i].toTensor();
      if (bdim) {
        (*stack)[i] = t.movedim(*bdim, 0);
      } else if (gradients) {
        std::vector<std::int64_t> size = t.sizes().vec();
        size.insert(size.begin(), *batch_size);
        (*stack)[i] = t.unsqueeze(0).expand(size);
      } else {
        (*stack)[i] = t.unsqueeze(0);
      }
    }
    for (std::size_t a = 0; a < n; ++a) {
      const std::string& name = arguments[a].name();
      c10::IValue& v = (*stack)[first + a];
      if (name == "batch_rank") {
        v = v.toInt() + 1;
      } else if (name.size() > 5 && name.compare(name.size() - 5, 5, "_size") == 0 && v.isIntList()) {
        std::vector<std::int64_t> size = v.toIntVector();
        size.insert(size.begin(), *batch_size);
        v = size;
      }
    }
  }
  handle.callBoxed(stack);
  if (!batch_size) return;
  const std::size_t outputs = handle.schema().returns().size();
  for (std::size_t i = stack->size() - outputs; i < stack->size(); ++i) {
    (*stack)[i] = at::functorch::makeBatched((*stack)[i].toTensor(), 0, level);
  }
}

// ---- embedding: a composite of gather_multiaxis -----------------------------------------------------

/// F.embedding(input, weight, padding_idx): rows of weight at input, of shape input.shape +
/// [embedding_dim]: one gather_multiaxis call (index_select for a 0-d input). padding_idx (non-negative here: multigather.torch.embedding
/// adds num_embeddings to a negative one, as PyTorch does) gets no gradient: its positions read
/// the row detached. Autograd, fake tensors, batching and DTensor strategies come from
/// gather_multiaxis's (index_select's).
at::Tensor embedding(const at::Tensor& input, const at::Tensor& weight, std::optional<std::int64_t> padding_idx) {
  // F.embedding's own check and words (checkScalarTypes: a RuntimeError), before the gather,
  // which would take any integer dtype.
  TORCH_CHECK(input.scalar_type() == at::kLong || input.scalar_type() == at::kInt,
              "embedding: Expected tensor for argument #1 'indices' to have one of the following scalar types: "
              "Long, Int; but got ", input.toString(), " instead (while checking arguments for embedding)");
  TORCH_CHECK_VALUE(weight.dim() == 2, "embedding: weight must be 2-D (num_embeddings, embedding_dim), not ",
                    weight.dim(), "-D of shape ", weight.sym_sizes());
  if (padding_idx) {
    TORCH_CHECK_VALUE(*padding_idx >= 0 && weight.sym_size(0) > *padding_idx, "embedding: padding_idx = ",
                      *padding_idx, " must be within [0, num_embeddings) = [0, ", weight.sym_size(0), ")");
  }
  at::Tensor rows;
  if (input.dim() == 0) {
    using IndexSelect = at::Tensor(const at::Tensor&, std::int64_t, const at::Tensor&, std::int64_t);
    static const c10::TypedOperatorHandle<IndexSelect> index_select =
        c10::Dispatcher::singleton().findSchemaOrThrow("multigather::index_select", "").typed<IndexSelect>();
    rows = index_select.call(weight, 0, input.reshape({1}), 0).squeeze(0);
  } else {
    // One core call with no view of its result: weight [V, 1, ..., 1, D] (rank n + 1), indices
    // input[..., None], axes [0], no negative rule (F.embedding's). Its gradient reaches weight
    // through unsqueezes only: a reshape of an expanded gradient (a bag's sum) fails on a
    // DTensor sharded along the embedding dimension.
    using Gather = at::Tensor(const at::Tensor&, const at::Tensor&, at::IntArrayRef, c10::string_view, bool,
                              const at::Scalar&, std::int64_t);
    static const c10::TypedOperatorHandle<Gather> gather_multiaxis =
        c10::Dispatcher::singleton().findSchemaOrThrow("multigather::gather_multiaxis", "").typed<Gather>();
    at::Tensor table = weight;
    for (std::int64_t d = 1; d < input.dim(); ++d) table = table.unsqueeze(1);
    const std::int64_t axes[1] = {0};
    try {
      rows = gather_multiaxis.call(table, input.unsqueeze(-1), axes, "error", false, 0, 0);
    } catch (const c10::IndexError&) {
      // In F.embedding's terms: the first id outside [0, num_embeddings), at its position in
      // input (read from the ids on this error path only, not from the core's message). Where
      // the ids cannot be searched (a tensor subclass without nonzero, such as a DTensor), the
      // core's IndexError stands.
      const std::exception_ptr original = std::current_exception();
      const std::int64_t rows_count = weight.size(0);
      std::string position;
      std::int64_t value = 0;
      try {
        const at::Tensor flat = input.reshape({-1});
        const at::Tensor bad = (flat < 0).logical_or(flat >= rows_count).nonzero();
        if (bad.numel() == 0) std::rethrow_exception(original);
        std::int64_t at_flat = bad[0][0].item<std::int64_t>();
        value = flat[at_flat].item<std::int64_t>();
        for (std::int64_t d = input.dim() - 1; d >= 0; --d) {
          position = std::to_string(at_flat % input.size(d)) + (position.empty() ? "" : "," + position);
          at_flat /= input.size(d);
        }
      } catch (const std::exception&) {  // c10::Error, or a Python error of a subclass
        std::rethrow_exception(original);
      }
      TORCH_CHECK_INDEX(false, "embedding: input[", position, "] = ", value, " is out of range for the ", rows_count,
                        " rows of weight (valid range [0, ", rows_count, ")); F.embedding rejects negative indices");
    }
  }
  if (!padding_idx || !weight.requires_grad()) return rows;
  return at::where((input == *padding_idx).unsqueeze(-1), rows.detach(), rows);
}

}  // namespace

TORCH_LIBRARY(multigather, m) {
  m.def("embedding(Tensor input, Tensor weight, int? padding_idx=None) -> Tensor");
  static const std::vector<std::string> schemas = [] {  // Library::def keeps the pointers
    std::vector<std::string> v;
    for (const TorchOp& op : torch_ops()) {
      v.push_back(forward_schema(op));
      v.push_back(backward_schema(op));
    }
    return v;
  }();
  for (const std::string& schema : schemas) m.def(schema.c_str());
  m.def(kScatterReduceValuesSchema);
}

TORCH_LIBRARY_IMPL(multigather, CompositeImplicitAutograd, m) {
  m.impl("embedding", &embedding);
}

// Every op and its backward get the same boxed kernel at a dispatch key.
template <typename Kernel>
void register_all(torch::Library& m, Kernel kernel) {
  for (const TorchOp& op : torch_ops()) {
    m.impl(op.name.c_str(), kernel());
    m.impl((op.name + "_backward").c_str(), kernel());
  }
}

TORCH_LIBRARY_IMPL(multigather, CPU, m) {
  register_all(m, [] { return torch::CppFunction::makeFromBoxedFunction<&compute_kernel>(); });
  m.impl("scatter_reduce_values_backward", torch::CppFunction::makeFromBoxedFunction<&scatter_reduce_values_kernel>());
}

TORCH_LIBRARY_IMPL(multigather, CUDA, m) {
  register_all(m, [] { return torch::CppFunction::makeFromBoxedFunction<&compute_kernel>(); });
  m.impl("scatter_reduce_values_backward", torch::CppFunction::makeFromBoxedFunction<&scatter_reduce_values_kernel>());
}

TORCH_LIBRARY_IMPL(multigather, FuncTorchBatched, m) {
  register_all(m, [] { return torch::CppFunction::makeFromBoxedFunction<&batched_kernel>(); });
  m.impl("scatter_reduce_values_backward", torch::CppFunction::makeFromBoxedFunction<&batched_kernel>());
}

TORCH_LIBRARY_IMPL(multigather, Autograd, m) {
  register_all(m, [] { return torch::CppFunction::makeFromBoxedFunction<&autograd_kernel>(); });
  m.impl("scatter_reduce_values_backward", torch::autograd::autogradNotImplementedFallback());
}
