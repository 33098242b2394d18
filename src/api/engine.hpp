// Internal (not installed): what src/api asks about the engines (execute.cpp defines it;
// transforms.cpp asks it too, before a VJP on the CUDA engine).
#pragma once

#include "kernels/cpu/gathered_segments.hpp"
#include "multigather/lowering.hpp"

#include "kernels/cuda/cuda_hooks.hpp"  // CudaStreamMemory

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

/// update_count on the CUDA engine: `storage` stream-ordered device memory on `stream` (on the
/// device that owns `near`, named `near_name` in errors), the count a view of it as update_count's.
Status update_count_cuda(const Lowering& l, const ScatterOptions& options, const void* near, const char* near_name,
                         void* stream, CudaStreamMemory* storage, TensorView* count);

/// Lowering::updates_step run from `from` into `to` (same shape, any strides; `to` not
/// overlapping `from`) on the CPU engine, or with `cuda` on the CUDA engine on `stream`
/// (kernels/updates_step.hpp). InvalidArgument for a dtype without the step.
Status run_updates_step(const Lowering& l, const TensorView& from, const MutableTensorView& to, bool cuda,
                        void* stream);

/// The core updates `updates` (shape G, stride 0 where they broadcast) after l.updates_step, in
/// a temporary of one element per distinct update (host: *host; CUDA: *device, stream-ordered on
/// `stream`, on the device of `near`): *stepped views it with updates' shape and stride 0 where
/// they broadcast. Nothing when l has no step (*stepped = updates).
Status stepped_updates(const Lowering& l, const TensorView& updates, bool cuda, void* stream, const void* near,
                       Tensor* host, CudaStreamMemory* device, TensorView* stepped);

/// The fused kernel's call for a lowering with gathered rows (l.gathered: embedding_bag).
GatheredSegmentsCall gathered_call(const Lowering& l);

}  // namespace multigather::detail
