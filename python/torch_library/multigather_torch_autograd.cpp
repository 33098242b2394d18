// python/torch_library/multigather_torch_autograd.cpp: libmultigather_torch's autograd
// (multigather_torch.cpp: the library; multigather_torch.hpp: what its files share). The Autograd
// kernel of every op: the call below autograd, then a node whose backward is the row's _backward
// op (ForwardBackward: the generic VJP); a backward op's node is the forward op (BackwardBackward:
// the VJP is linear), so any order of derivative works through the dispatcher. scatter_reduce
// prod / amax / amin / mean follow PyTorch's gradient formulas (scatter_reduce_grads, as one op:
// scatter_reduce_values_backward; ScatterReduceBackward).
#include <ATen/ATen.h>
#include <ATen/TensorSubclassLikeUtils.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/csrc/autograd/function.h>
#include <torch/csrc/autograd/functions/utils.h>
#include <torch/csrc/autograd/saved_variable.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "multigather/attributes.hpp"
#include "multigather/lowering.hpp"
#include "multigather/registry.hpp"
#include "multigather/transforms.hpp"
#include "multigather_torch.hpp"

namespace multigather::torch_library {

using torch::autograd::variable_list;

namespace {

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
  /// index dtype; no data read), remembered per thread by the call's key (a fresh node per
  /// step: lower_op on every backward otherwise). False while tracing (fake or functional
  /// tensors: the backward op runs, as traced graphs need it) and for batched calls.
  bool input_gradient_is_identity(const at::Tensor& grad, const at::Tensor& index) {
    if (batch_rank != 0 || at::isTensorSubclassLike(grad) || at::isTensorSubclassLike(index) ||
        grad.is_meta() || index.is_meta()) {
      return false;
    }
    const std::string& name = op->spec->name;
    const std::optional<DType> dtype = dtype_of(grad.scalar_type());
    if (!dtype) return false;
    const multigather::TensorView indices_view = view_of(index, name, "indices");
    thread_local multigather::LoweringKey key;  // its bytes' capacity stays: no allocation per call
    thread_local KeyedRing<bool, 16> known;
    key_of(args, 0, args.size(), grad.device(), &key);  // indices unset there: their layout next
    if (!key.empty()) {
      key.add(static_cast<std::int64_t>(op - torch_ops().data()));
      key.add(static_cast<std::int8_t>(*dtype));
      key.add_view(indices_view);
      if (const bool* identity = known.find(key)) return *identity;
    }
    const multigather::TensorView x(nullptr, *dtype, dims_of(args[static_cast<std::size_t>(op->input)].toIntVector()));
    const multigather::TensorView u(nullptr, *dtype, dims_of(args[static_cast<std::size_t>(op->updates)].toIntVector()));
    multigather::Lowering l;
    const bool identity = multigather::lower_op(name, x, indices_view, u, attributes_of(*op, args, 0), &l,
                                                grad.is_cuda() ? multigather::Device::kCUDA : multigather::Device::kCPU)
                              .ok() &&
                          multigather::input_gradient_is_identity(l);
    if (!key.empty()) known.keep(key, identity);
    return identity;
  }

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
  // Elements of self that updates reached: with include_self=False they take no part (mean: its
  // count of values says so).
  at::Tensor reached;
  if (!include_self && reduce != "mean") reached = ops.scatter_add.call(filled(self, 0), d, index, ones, 0).ne(0);
  at::Tensor grad_self, grad_part;
  if (reduce == "mean") {
    at::Tensor n = ops.scatter_add.call(filled(self, include_self ? 1 : 0), d, index, ones, 0);
    if (!include_self) reached = n.ne(0);
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

}  // namespace

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

namespace {

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

}  // namespace

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

}  // namespace multigather::torch_library
