// python/torch_library/multigather_torch.hpp: internal: what libmultigather_torch's files share
// (the library's description: multigather_torch.cpp).
//
//   multigather_torch.cpp: the ops (one schema per registry row, and its backward, generated
//     from the row), tensors and attributes as the core reads them, the embedding composite,
//     and the registration (TORCH_LIBRARY: every kernel at its dispatch key);
//   multigather_torch_kernels.cpp: the CPU / CUDA kernel (lower_op + execute, a thread-local
//     lowering cache; the forward and the VJP) and the vmap batching rule;
//   multigather_torch_autograd.cpp: the autograd kernel and its nodes, and scatter_reduce's
//     gradients (prod / amax / amin / mean, as PyTorch defines them).
#pragma once

#include <ATen/ATen.h>
#include <ATen/core/dispatch/Dispatcher.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "multigather/attributes.hpp"
#include "multigather/execute.hpp"
#include "multigather/lowering_cache.hpp"
#include "multigather/registry.hpp"
#include "torch_dtype.h"

namespace multigather::torch_library {

using multigather::AttrSpec;
using multigather::AttrType;
using multigather::Attributes;
using multigather::DType;
using multigather::python::dtype_of;
using multigather::OpKind;
using multigather::OpSpec;
using multigather::Status;
using multigather::StatusCode;

// ---- the ops: one per registry row (multigather_torch.cpp) ------------------------------------

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

/// Where a call's arguments sit: the forward's at `forward` (the op's args, input and updates as
/// their sizes in a backward), then a scatter backward's input_grad and updates_grad, then
/// batch_rank.
struct Frame {
  std::size_t forward = 0, input_grad = 0, updates_grad = 0, batch_rank = 0;
};

/// The Frame of a call whose arguments start at stack position `first`.
Frame frame_of(const TorchOp& op, bool backward, std::size_t first);

/// The TorchOp of each registry row with OpSpec::torch_op, in registry order (made on first use).
std::vector<TorchOp>& torch_ops();

/// The TorchOp of a registered operator ("multigather::gather" or "..._backward").
const TorchOp& torch_op_of(const c10::OperatorHandle& handle, bool* backward);

// ---- tensors and attributes (multigather_torch.cpp) --------------------------------------------

multigather::Dims dims_of(c10::IntArrayRef values);

/// A view of `t` for the core; TypeError for a dtype multigather lacks, ValueError above kMaxRank
/// (`op` and `name` in the message).
multigather::TensorView view_of(const at::Tensor& t, const std::string& op, const char* name);

multigather::MutableTensorView mutable_view_of(const at::Tensor& t);

/// Raises a failed Status as the c10 error of its kind (IndexError, TypeError,
/// NotImplementedError, ValueError, ...).
void check(const Status& s);

/// The attribute arguments of a call (forward args start at stack position `first`).
Attributes attributes_of(const TorchOp& op, const torch::jit::Stack& stack, std::size_t first);

/// Where a call runs: torch's intra-op thread count on the CPU; on CUDA, the device's current
/// stream (a build without the CUDA engine refuses CUDA operands in execute, by name).
multigather::ExecutionContext context_for(const at::Tensor& input);

// ---- the kernels (multigather_torch_kernels.cpp) -------------------------------------------------

/// The key of a call's arguments stack[first, first + count) on `device`, for the lowering
/// caches: each tensor's dtype, sizes and strides, every other argument's value; empty when an
/// argument is of a kind the key cannot hold (then nothing is cached).
void key_of(const torch::jit::Stack& stack, std::size_t first, std::size_t count, const at::Device& device,
            multigather::LoweringKey* out);

/// A few values, each kept with the key of the call it was made for (key_of), the oldest
/// replaced first: the per-thread memos of the kernels (the VJP's call-site caches) and of the
/// autograd node (whether a scatter passes its input's gradient on). Not thread-safe: each
/// thread holds its own.
template <class Value, std::size_t N>
class KeyedRing {
 public:
  /// The value kept for `key`, or null.
  Value* find(const multigather::LoweringKey& key) {
    for (auto& [k, value] : entries_) {
      if (!k.empty() && k == key) return &value;
    }
    return nullptr;
  }

  /// Keeps `value` for `key` in place of the oldest entry; the kept value.
  Value& keep(const multigather::LoweringKey& key, Value value) {
    std::pair<multigather::LoweringKey, Value>& entry = entries_[next_++ % N];
    entry.first = key;
    entry.second = std::move(value);
    return entry.second;
  }

 private:
  std::array<std::pair<multigather::LoweringKey, Value>, N> entries_;
  std::size_t next_ = 0;
};

/// The CPU and CUDA kernel of every op and its backward: run_forward, or run_backward (the VJP).
void compute_kernel(const c10::OperatorHandle& handle, torch::jit::Stack* stack);

/// functorch's batching rule for every op (torch.func.vmap): the operands' batch dimension at
/// this vmap level moves to the front (an operand that is not batched gets a leading 1), and
/// the op runs once with batch_rank + 1 (execute_batched lifts the row's lowering: no loop over
/// the batch). A backward's input_size / updates_size get the batch size in front: its
/// gradients are per example. The results are batched at dimension 0.
void batched_kernel(const c10::OperatorHandle& handle, torch::jit::Stack* stack);

// ---- autograd (multigather_torch_autograd.cpp) --------------------------------------------------

/// The Autograd kernel of every op and its backward: the call below autograd, then the node
/// whose backward is the row's _backward op (ForwardBackward), the forward op (BackwardBackward)
/// or scatter_reduce's gradient rules (ScatterReduceBackward).
void autograd_kernel(const c10::OperatorHandle& handle, c10::DispatchKeySet keys, torch::jit::Stack* stack);

/// multigather::scatter_reduce_values_backward: the value-reading gradients (scatter_reduce_grads)
/// as one op, so that torch.compile keeps them one opaque call (Inductor's code for their masks
/// over src's size took almost half of a compiled step of bench/torch_ops.py's message-passing
/// model; measured: bench/README.md, "Measurements behind the CPU engine's choices").
/// Not differentiable again (autogradNotImplementedFallback: a double backward raises).
void scatter_reduce_values_kernel(const c10::OperatorHandle& handle, torch::jit::Stack* stack);

/// Its schema.
extern const char* const kScatterReduceValuesSchema;

}  // namespace multigather::torch_library
