// multigather/transforms.hpp: what a framework's transformations need from the one pipeline:
// batching (jax.vmap) and the vector-Jacobian product (jax.grad, the adjoint of SPEC section 4).
//
// Both start from the op's ordinary Lowering (lower_op) and stay on the one execute path:
//  - batching LIFTS the Lowering: the batch dimensions become leading dimensions of the core
//    call (a broadcast dimension for an operand that is not batched), so one execute runs the
//    whole batch with no loop. Only a lowering that copied data (StableHLO windows, numpy.put's
//    flattening of a non-contiguous operand) is run example by example;
//  - the VJP of a gather op is the scatter-add of the output cotangent through the SAME lowered
//    view of the input (its input-broadcast dimensions sum), the VJP of a scatter op is a gather
//    of the cotangent through the same lowered targets (with "none", only the winning update of
//    each element gets a gradient), both run by the core operators.
//
// The surfaces: the XLA FFI handlers of the Python package (python/src/jax_ffi.cpp,
// multigather.jax); nothing here depends on JAX.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>

#include "multigather/execute.hpp"

namespace multigather {

/// One call site's lowering, kept between its calls: an XLA custom call's handler state (a
/// compiled executable calls the same op with the same attributes and operand shapes every
/// time, on new buffers). Passed to execute_batched / execute_vjp, it saves lower_op (and the
/// batch lift) on every call after the first: the kept lowering is moved to the call's buffers
/// (move_lowering). It is kept only when it is a function of the shapes alone
/// (lowering_anchors: no copied operand, no partial-write base, no empty operand); a call whose
/// operands differ from the kept ones in shape, strides or dtype, or whose op name differs, is
/// lowered afresh (and replaces it). One cache serves ONE (op, attributes) call site: the
/// attributes are not compared. Thread-safe: a call that finds the cache in use by another
/// thread lowers on its own. It holds a LoweringCache of one entry
/// (multigather/lowering_cache.hpp), the cache every surface uses.
class CallSiteCache {
 public:
  CallSiteCache();
  ~CallSiteCache();
  CallSiteCache(const CallSiteCache&) = delete;
  CallSiteCache& operator=(const CallSiteCache&) = delete;

  /// How many times calls through this cache ran lower_op (each example of a call that runs
  /// example by example counts once): a test hook.
  std::int64_t lowerings() const noexcept { return lowerings_.load(std::memory_order_relaxed); }

  struct Entry;  // its LoweringCache (transforms.cpp)

 private:
  friend struct CallSiteLease;
  std::mutex mutex_;
  std::unique_ptr<Entry> entry_;
  std::atomic<std::int64_t> lowerings_{0};
};

/// One call of registry op `name` on operands that carry `batch_rank` leading batch
/// dimensions (jax.vmap's "expand_dims" convention: each leading size is the batch size or 1,
/// and 1 means "not batched": the operand is broadcast). The trailing dimensions are one
/// example's operands; `output` is a C-contiguous view of batch_shape ++ the op's output shape,
/// where batch_shape[j] is the largest leading size j of the operands.
///
/// Every example is lowered by lower_op exactly as an unbatched call would be, then the lowering
/// is lifted: the batch dimensions become leading non-axis dimensions of the core gather or
/// scatter (broadcast where an operand is not batched), and one execute runs them all. When
/// the example's lowering made a copy of an operand, each example is lowered and executed in
/// turn instead (the same results). Errors: those of lower_op and execute; an out-of-range
/// index is reported as the unbatched call reports it, prefixed with its batch element
/// ("batch element [2]: indices[0,1] = 9 is out of range for axis 0 of size 4 ...");
/// InvalidArgument for leading sizes that are neither 1 nor the
/// batch size, or a batch_rank above an operand's rank.
/// `cache`: null, or this call site's CallSiteCache (see there).
Status execute_batched(std::string_view name, const TensorView& input, const TensorView& indices,
                       const TensorView* updates, const Attributes& attrs, int batch_rank,
                       const MutableTensorView& output, const ExecutionContext& context = {},
                       CallSiteCache* cache = nullptr) noexcept;

/// Whether a scatter's input cotangent is the output cotangent itself (reduction add onto the
/// input it starts from: every element keeps its gradient), so that a framework can pass the
/// output's gradient on without a copy and ask execute_vjp for the updates' only (a
/// grad_input view with null data: nothing is written to it). False for a gather, for none
/// (overwritten elements get zero), include_input=false, mean, and lowerings that start from
/// their own zeros (tf.scatter_nd).
bool input_gradient_is_identity(const Lowering& lowering) noexcept;

/// The vector-Jacobian product of registry op `name` at (input, indices[, updates]) for the
/// output cotangent `grad_output` (of batch_shape ++ the op's output shape; C-contiguous when
/// batch_rank > 0; unbatched, any layout, copied C-contiguous on the engine first when it is
/// not: a framework passes the expanded scalar of a sum's gradient as it is).
/// Writes the cotangents of the differentiable operands, C-contiguous views of batch_shape ++
/// the operand's example shape (batch_rank and the leading sizes as in execute_batched; the
/// values of input and updates are never read, only their shapes, except by a segment max /
/// min, below):
///  - a gather op: `grad_input` = scatter_multiaxis(zeros, lowered indices, grad_output, axes,
///    reduction=add) through the lowered input view: an element read k times gets the sum of
///    its k cotangents, an input dimension the op broadcasts sums; index_mode fill becomes drop
///    (a filled element has no source), error / clamp / wrap stay;
///  - a scatter op (reduction none or add; `grad_updates` may be null when not needed):
///    grad_input = grad_output, zeroed where an update overwrote the element (none, or add
///    with include_input=false); grad_updates = grad_output gathered at each update's target
///    (a dropped update gets 0; with none only the update that wins an element gets it, or every
///    update of it where the row says so: OpSpec::gradient_to_every_duplicate, PyTorch's ops),
///    summed over the dimensions along which the op broadcasts updates, then through the
///    lowering's step on the updates (Lowering::updates_step: alpha times it for
///    torch.index_add's alpha, its negation for a subtraction). grad_input is zero where the
///    output starts from the lowering's own constant (tf.scatter_nd's zeros). A scatter's
///    grad_input with null data is not written (input_gradient_is_identity: the caller has it);
///  - a segment op (OpKind::kSegment; docs/spec.md section 6): grad_input is the data's
///    cotangent: sum gathers grad_output at each row's segment, mean / sqrt_n divide it by the
///    count (or its root) first, max / min give it to the rows equal to the segment's result,
///    shared equally among ties, prod gives each row the product of the others in its segment
///    (TensorFlow's rule, zeros included); max / min / prod READ the data: `input` must then
///    hold its values, C-contiguous (the forward runs again to find the result).
///    Every one runs on either engine (prod's steps too: kernels/prod_gradient.hpp), and so does
///    embedding_bag's table gradient (the fused VJP; on the device kernels/gathered_bags.hpp's
///    passes, the CPU engine's bytes); embedding_bag's runs unbatched only.
/// Engines: the CPU engine, or with context.device == kCUDA the CUDA engine on device memory, on
/// context.stream (every step enqueued there, temporaries stream-ordered; only index_mode error
/// synchronizes), with the same checks and messages; a gather's scatter-add is deterministic
/// (the CPU engine's bytes) unless context.deterministic is false. A build or machine without
/// the CUDA engine refuses a CUDA VJP as execute refuses CUDA operands (InvalidArgument).
/// Errors: those of lower_op / execute; InvalidArgument for a scatter with reduction mul, min
/// or max (their gradients are not implemented), a gather whose lowering copies or re-reads
/// the input through overlapping windows, and updates the lowering copied (a scalar value):
/// there is no view through which their gradient flows.
/// `cache`: null, or this call site's CallSiteCache (its lowering is made on grad_input, indices
/// and grad_updates, or updates when grad_updates is null).
Status execute_vjp(std::string_view name, const TensorView& input, const TensorView& indices,
                   const TensorView* updates, const Attributes& attrs, int batch_rank,
                   const TensorView& grad_output, const MutableTensorView& grad_input,
                   const MutableTensorView* grad_updates, const ExecutionContext& context = {},
                   CallSiteCache* cache = nullptr) noexcept;

}  // namespace multigather
