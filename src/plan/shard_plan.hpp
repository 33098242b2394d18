// Internal: one device's piece of a call split along its gathered axes (multigather/sharding.hpp,
// execute_shard): the indices resolved against the whole axes, shifted into the piece.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/shard_piece.hpp"
#include "multigather/sharding.hpp"

namespace multigather::detail {

/// What localize() found: which logical index positions (C order over l.shape's logical
/// indices shape) are out of range of the WHOLE axes under index_mode fill (filled by exactly
/// one piece), empty when none is.
struct ShardFill {
  std::vector<std::uint8_t> out_of_range;
};

/// `local` (lowered on this device's operands) as the piece `shards` of the whole call:
/// *out reads int64 indices it owns, resolved by local's rule against shards[j].size and
/// shifted by -shards[j].offset, with every index outside the piece (or out of range of the whole
/// axis) pointing past it; its mode is fill with 0 (a gather) or drop (a scatter), with no
/// negative rule. Error mode fails here, before anything is written, with local's message for
/// the whole sizes. *fill: the positions a piece fills with the fill value (gather, mode fill).
Status localize(const Lowering& local, std::span<const AxisShard> shards, Lowering* out, ShardFill* fill);

/// Writes local's fill value at every core output element whose indices `fill` marks, into
/// `output` (the framework output of `local`).
Status write_fill(const Lowering& local, const ShardFill& fill, const MutableTensorView& output);

/// localize's steps on an engine (kernels/shard_piece.hpp: the CUDA engine's): the params of
/// step 1 for `local`'s indices and `shards` (checked as localize checks them; the output arrays
/// are the caller's), and of step 2 for `output` (the framework output of `local`) and the marks.
Status shard_piece_params(const Lowering& local, std::span<const AxisShard> shards, ShardPieceParams* p);
Status shard_fill_params(const Lowering& local, const MutableTensorView& output, const std::uint8_t* out_of_range,
                         ShardFillParams* f);
/// `local` as a piece reading the resolved int64 indices `resolved` (localize's result).
void as_piece(const Lowering& local, const TensorView& resolved, Lowering* out);

/// Whether every piece offset is 0 (this device fills the elements out of range of the whole axes).
bool first_piece(std::span<const AxisShard> shards) noexcept;

}  // namespace multigather::detail
