// multigather/sharding.hpp: one call split across devices (docs/distributed.md).
//
// A framework that partitions programs (XLA's SPMD partitioner under jax.jit, PyTorch's
// DTensor) needs two things from an op it cannot see into:
//  1. which dimensions of its operands and result may be split, and how the pieces combine:
//     sharding_factors() reads them off the op's Lowering, the same for every registry op,
//     on the CORE call's dimensions (docs/spec.md section 1: per dimension an axis, a broadcast
//     or an equal dimension), and names each framework dimension's factor;
//  2. for an input split along a gathered axis (a row-sharded embedding table), a way to run
//     one device's piece exactly: execute_shard() resolves every index against the WHOLE
//     axis by the op's own rule (error, clamp, wrap, fill, drop, negatives), then gathers or
//     scatters only what falls in this device's rows. Summed over the devices, a gather's
//     pieces are the unsharded result; a scatter's are its rows of it.
//
// The four strategies are XLA's for its own gather and scatter (gather_scatter_handler.cc) and
// Shardy's factor kinds: index-parallel (kBatch), operand pass-through (kOperand), trivially
// sliced operand (kGathered), index pass-through (kIndex, kLookup).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "multigather/transforms.hpp"

namespace multigather {

/// What splitting one factor (one core dimension, or one side of it) across devices means.
enum class FactorRole : std::uint8_t {
  /// A dimension that is not an axis, with equal sizes in input and indices (and updates): in
  /// input, indices, updates and output. Split alike everywhere, each device computes its part.
  kBatch = 0,
  /// Not an axis; the indices broadcast along it (size 1): in input, output (and updates).
  kOperand = 1,
  /// Not an axis; the input broadcasts along it: in indices and the output of a gather; in
  /// indices and updates of a scatter, whose updates along it combine into the same elements.
  kIndex = 2,
  /// An axis, the lookups' side: in indices and the output of a gather; in indices and updates
  /// of a scatter.
  kLookup = 3,
  /// An axis, the input's side: in input (and a scatter's output). A gather split along it
  /// sums its devices' pieces (execute_shard); a scatter's device applies the updates that land
  /// in its rows.
  kGathered = 4,
  /// The coordinates dimension of indices (several axes): never split.
  kCoordinate = 5,
  /// A framework dimension the lowering merged, split or copied: never split.
  kOther = 6,
};
std::string_view factor_role_name(FactorRole role) noexcept;  // "batch", ..., "other"

/// How a call, or its VJP, may keep one factor split across devices: the rule of exact sums,
/// decided here once for every partitioner (Shardy under jax.jit and DTensor only map it).
enum class FactorStrategy : std::uint8_t {
  /// Each device computes its slice of every tensor that carries the factor. A result that
  /// lacks it is the sum of the devices' results (a gather's gradient into an input that
  /// broadcasts along it).
  kSplit = 0,
  /// Each device's results are partial sums of the whole results (an all-reduce adds them):
  /// a scatter-add's updates along an index factor, a segment sum's rows.
  kSum = 1,
  /// A gathered axis: execute_shard / execute_vjp_shard run one device's piece (every index
  /// resolved against the whole axis); a gather's pieces sum, a scatter keeps its rows.
  kPiece = 2,
  /// Every device needs all of it: the devices' pieces along it do not combine exactly (a
  /// scatter under set / mul / min / max / mean, a copied input, a segment op's max or
  /// counts, a coordinates dimension, one the lowering merged, split or copied).
  kReplicate = 3,
};
std::string_view factor_strategy_name(FactorStrategy strategy) noexcept;  // "split", "sum", "piece", "replicate"

/// Whether the devices' updates of scatter or segment lowering `l` combine exactly as partial
/// sums (an all-reduce adds them): reduction add (not mean), and for a scatter into the
/// framework's own input (include_input, not copied by the lowering). The rule behind
/// ShardingFactor::call kSum.
bool updates_combine_as_sums(const Lowering& l) noexcept;

/// One factor of a call: its role, size and the FRAMEWORK dimension it occupies in each tensor
/// (-1: absent). `axis`: j for an axis factor (kLookup, kGathered: the call's axes[j]), else -1.
/// `call` / `gradient`: how the call and its VJP (execute_vjp) may keep the factor split:
///  - batch, operand: kSplit, both;
///  - gathered: kPiece, both (a segment op's segments, never split: kReplicate);
///  - index, lookup of a gather: kSplit, and the gradient kSum (into the input);
///  - index, lookup of a scatter whose updates ADD into the framework's own input
///    (reduction add, include_input, the input not copied by the lowering): kSum, and the
///    gradient (grad_updates: grad_output gathered) kSplit, or kSum where the updates
///    broadcast along it; any other reduction: kReplicate;
///  - index, lookup of a segment op: sum: kSum, and its gradient kSplit; any other reduction
///    (mean's and sqrt_n's counts, max, min, prod): kReplicate;
///  - coordinate, other: kReplicate.
/// A partitioner that cannot let one device's bad index fail alone (XLA: the others wait at
/// their next collective) also replicates the factors that split the indices of a call that
/// checks index values (index_mode error, Lowering::reads_index_values): a policy of its own,
/// not of the sums.
struct ShardingFactor {
  FactorRole role = FactorRole::kOther;
  std::int64_t size = 0;
  int axis = -1;
  int input = -1, indices = -1, updates = -1, output = -1;
  FactorStrategy call = FactorStrategy::kReplicate;
  FactorStrategy gradient = FactorStrategy::kReplicate;
};

/// The factors of lowering `l`, made from the framework operands `input`, `indices` and
/// `updates` (null for a gather op; C-contiguous layouts, data may be null): every framework
/// dimension of size > 1 of input, indices, updates and the output (l.output_shape) lies in
/// exactly one factor; dimensions of size 1 lie in none. A core dimension that a tensor's view
/// does not take whole from one of its framework dimensions (a merge, a split, a copy made by
/// the lowering) makes its factor kOther. A segment op (OpKind::kSegment: its framework input,
/// the data, is the core's updates, and no framework tensor holds the core input, the
/// reduction's identity) reports its data's dimensions as `input`: features are kOperand (data,
/// output), rows with the ids kIndex (data, indices; kOther where an initial value starts each
/// segment, the ids are computed or the updates are gathered rows), segments kGathered (output
/// only). Errors: InvalidArgument for operands that are not C-contiguous.
Status sharding_factors(const Lowering& l, const TensorView& input, const TensorView& indices,
                        const TensorView* updates, std::vector<ShardingFactor>* factors);

/// A device's piece of the input along the call's axis axes[j]: the whole axis has `size`
/// elements, this device holds [offset, offset + local size). A negative size: the axis is not
/// split (the piece holds all of it; offset unused).
struct AxisShard {
  std::int64_t size = 0;
  std::int64_t offset = 0;
};

/// One device's piece of registry op `name` when its input is split along the core call's
/// axes: `input` (and a scatter's output) hold the rows [shards[j].offset, + local size) of each
/// axis axes[j] (one AxisShard per axis; an axis that is not split: {-1, 0} or {its size, 0}); indices and
/// updates are whole along the axes (they may be split along other dimensions). Every index is
/// resolved against the whole axis by the op's rule (negatives, clamp, wrap; error mode fails
/// with the unsplit call's message, sizes included, before anything is written), then:
///  - a gather writes, at each output element, the input element when it lies in this piece,
///    else 0; a filled element (index_mode fill, out of range of the whole axis) gets the fill
///    value on the piece whose offsets are all 0, else 0. The sum of the pieces is the unsplit
///    result (exact: one piece holds each element);
///  - a scatter applies exactly the updates whose targets lie in this piece (order, duplicates
///    and reductions as unsplit), so its output is the unsplit output's rows.
/// `batch_rank`: leading batch dimensions of the operands and output, as execute_batched's (the
/// call is lifted by them; a lowering that copies an operand cannot be). Either engine: with
/// context.device kCUDA the indices are resolved into the piece on the device (one check word
/// read back: a synchronization; an error is worded from a host copy of the indices). Errors:
/// those of lower_op, execute_batched and execute; InvalidArgument for a shard count other than
/// the number of axes, or a piece that does not fit its axis (offset < 0, offset + local size >
/// size).
Status execute_shard(std::string_view name, const TensorView& input, const TensorView& indices,
                     const TensorView* updates, const Attributes& attrs, int batch_rank,
                     std::span<const AxisShard> shards, const MutableTensorView& output,
                     const ExecutionContext& context = {}) noexcept;

/// execute_vjp of one device's piece, as execute_shard splits the forward call (batch_rank too):
/// a gather's grad_input holds this piece's rows of the input cotangent (the updates of the
/// scatter-add whose targets lie here); a scatter's grad_input its rows, and its grad_updates
/// this piece's part of the updates' cotangent (0 for updates whose targets lie elsewhere: the
/// pieces sum to the unsplit cotangent). Same errors as execute_vjp and execute_shard.
Status execute_vjp_shard(std::string_view name, const TensorView& input, const TensorView& indices,
                         const TensorView* updates, const Attributes& attrs, int batch_rank,
                         std::span<const AxisShard> shards, const TensorView& grad_output,
                         const MutableTensorView& grad_input, const MutableTensorView* grad_updates,
                         const ExecutionContext& context = {}) noexcept;

}  // namespace multigather
