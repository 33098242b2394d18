// Internal: the launchers of the CUDA engine's segment ids (segment_ids_kernel.cu; body in
// kernels/segment_ids.hpp). They do not synchronize; the current device must own the pointers
// and `stream`.
#pragma once

#include <cuda_runtime.h>

#include "kernels/segment_ids.hpp"

namespace multigather::detail {

/// Pass 1 (offsets: one thread per boundary element; lengths: one per boundary row, which writes
/// its starts) into *p.first_error (device memory, set to kNoSegmentIdsError by the caller).
cudaError_t launch_segment_ids_check(const SegmentIdsParams& p, int multiprocessors, cudaStream_t stream) noexcept;
/// Pass 2: one thread per id element.
cudaError_t launch_segment_ids(const SegmentIdsParams& p, int multiprocessors, cudaStream_t stream) noexcept;

}  // namespace multigather::detail
