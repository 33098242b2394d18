// python/torch_library/multigather_torch_kernels.cpp: libmultigather_torch's kernels that run
// the core (multigather_torch.cpp: the library; multigather_torch.hpp: what its files share). The
// CPU / CUDA kernel of every op and its backward: lower_op + execute on the at::Tensors' memory
// into an at::empty output, through a thread-local lowering cache (run_forward), or the row's VJP
// (execute_vjp: run_backward); batched calls (batch_rank) through execute_batched. Then vmap's
// batching rule (batched_kernel), which moves the batch dimension to the front and runs one call
// with batch_rank + 1.
#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/functorch/BatchedTensorImpl.h>
#include <ATen/functorch/DynamicLayer.h>
#include <ATen/functorch/PlumbingHelper.h>
#include <c10/core/DeviceGuard.h>
#include <torch/library.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "multigather/attributes.hpp"
#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "multigather/lowering_cache.hpp"
#include "multigather/registry.hpp"
#include "multigather/transforms.hpp"
#include "multigather_torch.hpp"

namespace multigather::torch_library {
namespace {

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

/// This thread's caches of one op (one set per op and thread, so no lock: autograd's and
/// DataLoader's threads each keep their own):
///  - forward: the Lowerings of its recent calls, keyed by everything lower_op reads (the
///    device, every tensor argument's dtype, sizes and strides, every other argument's value):
///    a repeated call only moves the kept views to its operands;
///  - vjp: the call-site caches of its backward (execute_vjp keeps its lowering there), one per
///    key_of of the call's forward arguments (sizes, attributes, the indices' layout) and the
///    gradients asked for. A CallSiteCache compares the operands' layouts, not the attributes:
///    the key keeps calls with other attributes apart.
struct OpCaches {
  multigather::LoweringCache forward;
  KeyedRing<std::unique_ptr<multigather::CallSiteCache>, 4> vjp;
};

OpCaches& caches_of(const TorchOp& op) {
  thread_local std::vector<std::unique_ptr<OpCaches>> caches;
  const std::size_t index = static_cast<std::size_t>(&op - torch_ops().data());
  if (caches.size() <= index) caches.resize(torch_ops().size());
  if (!caches[index]) caches[index] = std::make_unique<OpCaches>();
  return *caches[index];
}

/// The VJP's call-site cache of this thread for a backward call (OpCaches::vjp), null when the
/// key cannot hold an argument.
multigather::CallSiteCache* vjp_cache_of(const TorchOp& op, const torch::jit::Stack& stack, const Frame& f,
                                         const at::Device& device, bool input_grad, bool updates_grad) {
  thread_local multigather::LoweringKey key;  // its bytes' capacity stays: no allocation per call
  key_of(stack, f.forward, op.args.size(), device, &key);
  if (key.empty()) return nullptr;
  key.add(static_cast<std::int8_t>(input_grad));
  key.add(static_cast<std::int8_t>(updates_grad));
  KeyedRing<std::unique_ptr<multigather::CallSiteCache>, 4>& sites = caches_of(op).vjp;
  if (std::unique_ptr<multigather::CallSiteCache>* kept = sites.find(key)) return kept->get();
  return sites.keep(key, std::make_unique<multigather::CallSiteCache>()).get();
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
  const auto attributes = [&] { return attributes_of(op, stack, f.forward); };
  const c10::OptionalDeviceGuard device(input.is_cuda() ? std::optional<c10::Device>(input.device()) : std::nullopt);
  const multigather::TensorView x = view_of(input, name, "input"), i = view_of(indices, name, "indices");
  multigather::TensorView u;
  if (updates != nullptr) u = view_of(*updates, name, op.spec->updates_name.c_str());
  const std::vector<std::int64_t> batch = batch_shape_of({&input, &indices, updates}, batch_rank);
  // One call: a kept Lowering moved to these operands, or lower_op's (then kept).
  multigather::LoweringCache& cache = caches_of(op).forward;
  thread_local multigather::LoweringKey key;  // its bytes' capacity stays: no allocation per call
  key.clear();
  if (batch_rank == 0) key_of(stack, f.forward, op.args.size(), input.device(), &key);
  multigather::LoweringCache::Lease lease;
  if (!cache.find(key, x.data, i.data, updates != nullptr ? u.data : nullptr, &lease)) {
    const Attributes attrs = attributes();
    multigather::Lowering fresh;
    if (updates != nullptr) {
      check(multigather::lower_op(name, example_of(x, batch_rank), example_of(i, batch_rank),
                                  example_of(u, batch_rank), attrs, &fresh, context.device));
    } else {
      check(multigather::lower_op(name, example_of(x, batch_rank), example_of(i, batch_rank), attrs, &fresh,
                                  context.device));
    }
    lease = cache.keep(key, std::move(fresh), x, i, updates != nullptr ? &u : nullptr);
  }
  const multigather::Lowering& l = *lease.get();
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
  const std::int64_t batch_rank = stack[f.batch_rank].toInt();
  // Unbatched, execute_vjp takes the gradient in any layout (the engine fills a C-contiguous
  // copy of a sum's expanded scalar: no torch call for it); batched, C-contiguous.
  const at::Tensor& given = stack[f.forward - 1].toTensor();
  const at::Tensor grad = batch_rank > 0 ? given.contiguous() : given;
  const at::Tensor& indices = stack[f.forward + op.indices].toTensor();
  const Attributes attrs = attributes_of(op, stack, f.forward);
  const std::string& name = op.spec->name;
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
                                   mutable_view_of(grad_input), nullptr, context,
                                   vjp_cache_of(op, stack, f, grad.device(), true, false)));
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
                                 updates_grad ? &gu : nullptr, context,
                                 vjp_cache_of(op, stack, f, grad.device(), input_grad, updates_grad)));
  if (input_grad && batch_rank > 0) grad_input = grad_input.sum_to_size(input_size);
  if (!updates_grad) return {grad_input, grad_updates};
  return {grad_input, batch_rank > 0 ? grad_updates.sum_to_size(updates_size) : grad_updates};
}

}  // namespace

void key_of(const torch::jit::Stack& stack, std::size_t first, std::size_t count, const at::Device& device,
            multigather::LoweringKey* out) {
  multigather::LoweringKey& key = *out;
  key.clear();
  key.add(static_cast<std::int16_t>(device.type()));
  key.add(static_cast<std::int16_t>(device.index()));
  // Each argument: a kind byte, then its value (a kind byte keeps None apart from a value).
  for (std::size_t i = first; i < first + count; ++i) {
    const c10::IValue& v = stack[i];
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      key.add('T');
      key.add(static_cast<std::int8_t>(t.scalar_type()));
      key.add(static_cast<std::int8_t>(t.dim()));
      for (const std::int64_t d : t.sizes()) key.add(d);
      for (const std::int64_t d : t.strides()) key.add(d);
    } else if (v.isInt()) {
      key.add('i');
      key.add(v.toInt());
    } else if (v.isDouble()) {
      key.add('d');
      key.add(v.toDouble());
    } else if (v.isBool()) {
      key.add('b');
      key.add(v.toBool());
    } else if (v.isString()) {
      key.add('s');
      key.add_text(v.toStringRef());
    } else if (v.isIntList()) {
      key.add('l');
      for (const std::int64_t d : v.toIntVector()) key.add(d);
      key.add(std::int64_t{-1} << 62);
    } else if (v.isScalar()) {
      const c10::Scalar x = v.toScalar();
      key.add('S');
      key.add(static_cast<std::int8_t>(x.type()));
      if (x.isFloatingPoint()) {
        key.add(x.toDouble());
      } else {
        key.add(x.toLong());
      }
    } else if (v.isNone()) {
      key.add('n');
    } else {
      key.clear();  // an argument the key cannot hold: not cached
      return;
    }
  }
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

// ---- vmap: the batching rule ---------------------------------------------------------------------

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

}  // namespace multigather::torch_library
