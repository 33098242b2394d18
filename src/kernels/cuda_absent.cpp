// The CUDA engine's entry points in a build without it (MULTIGATHER_CUDA=OFF; a CUDA build
// compiles kernels/cuda/cuda_api.cpp instead): every call returns InvalidArgument "this build
// has no CUDA engine (build with MULTIGATHER_CUDA=ON)", cuda_device_available() is false and no
// memory is a CUDA pointer. So src/api calls one set of functions in every build, with no
// preprocessor branch; its callers refuse a CUDA call by name first (cuda_engine_available).
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cuda/cuda_hooks.hpp"
#include "multigather/cuda.hpp"

namespace multigather {
namespace {

Status no_cuda_engine() { return InvalidArgument("this build has no CUDA engine (build with MULTIGATHER_CUDA=ON)"); }

}  // namespace

bool cuda_device_available() noexcept { return false; }

Status gather_multiaxis_cuda_into(const TensorView&, const TensorView&, std::span<const std::int64_t>,
                                  const MutableTensorView&, const GatherOptions&, void*) noexcept {
  return no_cuda_engine();
}

Status gather_multiaxis_cuda_enqueue(const TensorView&, const TensorView&, std::span<const std::int64_t>,
                                     const MutableTensorView&, const GatherOptions&, void*, std::uint32_t*) noexcept {
  return no_cuda_engine();
}

Status scatter_multiaxis_cuda_into(const TensorView&, const TensorView&, const TensorView&,
                                   std::span<const std::int64_t>, const MutableTensorView&, const ScatterOptions&,
                                   void*, ScatterDeterminism) noexcept {
  return no_cuda_engine();
}

}  // namespace multigather

namespace multigather::detail {

bool cuda_engine_built() noexcept { return false; }

Status copy_view_to_host(const TensorView&, std::vector<std::byte>*, TensorView*) noexcept { return no_cuda_engine(); }

Status run_scatter_validated_cuda(const TensorView&, const TensorView&, const MutableTensorView&,
                                  const ValidatedScatter&, const ScatterOptions&, void*, bool, const TensorView*,
                                  const MutableTensorView*) noexcept {
  return no_cuda_engine();
}

Status cuda_memset_async(void*, int, std::size_t, const char*, void*) noexcept { return no_cuda_engine(); }

Status cuda_copy_async(void*, const char*, const void*, const char*, std::size_t, void*) noexcept {
  return no_cuda_engine();
}

CudaStreamMemory::~CudaStreamMemory() = default;

Status CudaStreamMemory::allocate(std::size_t, const void*, const char*, void*) noexcept { return no_cuda_engine(); }

bool cuda_has_division(DType, bool) noexcept { return false; }

Status cuda_count_updates(const MutableTensorView&, const TensorView&, std::span<const std::int64_t>,
                          const ScatterOptions&, void*) noexcept {
  return no_cuda_engine();
}

Status cuda_updates_step(const UpdatesStepParams&, DType, bool, void*) noexcept {
  return no_cuda_engine();
}

Status cuda_gathered_bags(const GatheredRows&, const MutableTensorView&, bool, bool, bool*, void*) noexcept {
  return no_cuda_engine();
}

Status cuda_gathered_bags_vjp(const GatheredRows&, const TensorView&, const TensorView&, const MutableTensorView&, bool,
                              bool, bool*, void*) noexcept {
  return no_cuda_engine();
}

Status cuda_prod_gradient(const ProdGradientParams&, DType, bool, void*) noexcept { return no_cuda_engine(); }

Status cuda_shard_piece(ShardPieceParams, std::int64_t*, void*) noexcept { return no_cuda_engine(); }

Status cuda_shard_fill(const ShardFillParams&, void*) noexcept { return no_cuda_engine(); }

Status cuda_segment_ids(SegmentIdsParams, std::uint64_t*, void*) noexcept { return no_cuda_engine(); }

Status cuda_divide_by_count(const MutableTensorView&, const TensorView&, bool, bool, void*) noexcept {
  return no_cuda_engine();
}

Status cuda_fill(void*, std::int64_t, std::size_t, const void*, const char*, void*) noexcept {
  return no_cuda_engine();
}

Status cuda_ties(const void*, const void*, DType, std::int64_t*, std::int64_t, void*) noexcept {
  return no_cuda_engine();
}

Status cuda_positions_where(const std::int64_t*, std::int64_t, std::int64_t*, std::int64_t, void*) noexcept {
  return no_cuda_engine();
}

Status cuda_at_itself(const std::int64_t*, std::int64_t*, std::int64_t, void*) noexcept { return no_cuda_engine(); }

Status cuda_positions(std::int64_t*, std::int64_t, void*) noexcept { return no_cuda_engine(); }

Status cuda_keep_winners(void*, DType, const std::int64_t*, std::int64_t, void*) noexcept { return no_cuda_engine(); }

}  // namespace multigather::detail
