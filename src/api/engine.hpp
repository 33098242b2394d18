// Internal (not installed): what src/api asks about the engines (execute.cpp defines it;
// transforms.cpp asks it too, before a VJP on the CUDA engine).
#pragma once

#include "kernels/cpu/gathered_segments.hpp"
#include "multigather/lowering.hpp"

namespace multigather::detail {

/// Ok when this build and machine can run `l` on the CUDA engine, else InvalidArgument naming
/// the op and why: no CUDA engine in the build ("... this build has no CUDA engine (build with
/// MULTIGATHER_CUDA=ON)"), or no usable device.
Status cuda_engine_available(const Lowering& l);

/// How many updates of the scatter `l` reach each element of its core output (the lowering's
/// indices and index policy; on the CPU engine): a view of `storage` with the core output's
/// shape. It is kept once per position of the dimensions that are axes or along which the
/// indices vary, and broadcast (stride 0) along the others, where every update covers the
/// dimension whole (a segment's features). The division of a mean (execute.cpp) and the
/// gradient of a segment mean (transforms.cpp) read it.
Status update_count(const Lowering& l, const ScatterOptions& options, Tensor* storage, TensorView* count);

/// The shape of update_count's storage: the core output's, 1 along the dimensions where the
/// count does not change.
Dims count_shape(const Lowering& l);

/// update_count's view of `data` (int64, C-contiguous of count_shape(l)): the core output's
/// shape, stride 0 along the dimensions count_shape keeps once.
TensorView count_view(const Lowering& l, const void* data);

/// The fused kernel's call for a lowering with gathered rows (l.gathered: embedding_bag).
GatheredSegmentsCall gathered_call(const Lowering& l);

}  // namespace multigather::detail
