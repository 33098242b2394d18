// Internal: the launchers of a split call's piece on the CUDA engine (shard_piece_kernel.cu;
// bodies in kernels/shard_piece.hpp). They do not synchronize; the current device must own the
// pointers and `stream`.
#pragma once

#include <cuda_runtime.h>

#include "kernels/shard_piece.hpp"

namespace multigather::detail {

/// Step 1: the indices resolved into the piece (p.first_error, device memory, set to n by the
/// caller; p.out_of_range zeroed by the caller when p.gather_fill).
cudaError_t launch_shard_piece(const ShardPieceParams& p, int multiprocessors, cudaStream_t stream) noexcept;
/// Step 2: the fill value at every core output element whose logical position is marked.
cudaError_t launch_shard_fill(const ShardFillParams& p, int multiprocessors, cudaStream_t stream) noexcept;

}  // namespace multigather::detail
