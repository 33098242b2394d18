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
//
// The library's files (multigather_torch.hpp: what they share): this one, the schemas, tensors
// and attributes, the embedding composite and the registration; multigather_torch_kernels.cpp,
// the CPU / CUDA kernel and the vmap rule; multigather_torch_autograd.cpp, the autograd kernel,
// its nodes and scatter_reduce's gradients.
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/impl/VirtualGuardImpl.h>
#include <torch/csrc/autograd/autograd_not_implemented_fallback.h>
#include <torch/library.h>

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "multigather/attributes.hpp"
#include "multigather/registry.hpp"
#include "multigather_torch.hpp"
#include "torch_dtype.h"

namespace multigather::torch_library {
namespace {

// ---- the ops: one per registry row ------------------------------------------------------------

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
  op.name = torch_op_name(spec);  // torch.index_add -> index_add
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
    if (a.name == "out") continue;  // the framework's out= form: Python's wrapper, not the op's schema
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

}  // namespace

Frame frame_of(const TorchOp& op, bool backward, std::size_t first) {
  Frame f;
  f.forward = backward ? first + 1 : first;
  f.input_grad = f.forward + op.args.size();
  f.updates_grad = f.input_grad + 1;
  f.batch_rank = f.forward + op.args.size() + (backward && op.scatter() ? 2 : 0);
  return f;
}

namespace {

std::string forward_schema(const TorchOp& op) {
  return op.name + "(" + schema_args(op, false) + ") -> Tensor";
}

std::string backward_schema(const TorchOp& op) {
  return op.name + "_backward(" + schema_args(op, true) + ") -> " +
         (op.scatter() ? "(Tensor, Tensor)" : "Tensor");
}

}  // namespace

std::vector<TorchOp>& torch_ops() {
  static std::vector<TorchOp> ops = [] {
    std::vector<TorchOp> v;
    for (const OpSpec& spec : multigather::op_registry()) {  // the rows that say they have one
      if (spec.torch_op) v.push_back(make_op(spec));
    }
    return v;
  }();
  return ops;
}

const TorchOp& torch_op_of(const c10::OperatorHandle& handle, bool* backward) {
  // By handle (a hash of its operator's address: every call of a kernel asks), made on first
  // use, after TORCH_LIBRARY registered the ops.
  static const std::unordered_map<c10::OperatorHandle, std::pair<const TorchOp*, bool>> by_handle = [] {
    std::unordered_map<c10::OperatorHandle, std::pair<const TorchOp*, bool>> m;
    auto& d = c10::Dispatcher::singleton();
    for (const TorchOp& op : torch_ops()) {
      m.emplace(d.findSchemaOrThrow(("multigather::" + op.name).c_str(), ""), std::make_pair(&op, false));
      m.emplace(d.findSchemaOrThrow(("multigather::" + op.name + "_backward").c_str(), ""), std::make_pair(&op, true));
    }
    return m;
  }();
  const auto it = by_handle.find(handle);
  TORCH_CHECK(it != by_handle.end(), "multigather: no registry row for ", handle.schema().name());
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

namespace {

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

}  // namespace

void check(const Status& s) {
  if (!s.ok()) raise(s);
}

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

namespace {

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

}  // namespace multigather::torch_library

// The registration: TORCH_LIBRARY and TORCH_LIBRARY_IMPL at global scope.
using namespace multigather::torch_library;

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
