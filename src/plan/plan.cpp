// make_plan: the pure normalization step between validation and kernels.
#include "plan/plan.hpp"

#include <cstdint>

namespace multigather::detail {
namespace {

// Largest |element offset| a view reaches from its data pointer (validate_call has checked
// that it fits in int64).
std::int64_t view_extent(const Dims& shape, const Dims& strides) noexcept {
  std::int64_t extent = 0;
  for (int d = 0; d < shape.size(); ++d) {
    if (shape[d] == 0) return 0;
    const std::int64_t s = strides[d] < 0 ? -strides[d] : strides[d];
    extent += s * (shape[d] - 1);
  }
  return extent;
}

std::uint64_t abs_u64(std::int64_t v) noexcept {
  return static_cast<std::uint64_t>(v < 0 ? -v : v);
}

// Largest of 16, 8, 4, 2, 1 dividing every byte quantity a block copy of the plan adds to a
// pointer (GatherPlan::unit_bytes). Needs kind, block and lookup_rank.
// The gcd of 16 and any values is a power of two: the lowest set bit of 16 | v1 | v2 | ...
// (a power of two divides every value exactly when it is at most each one's lowest set bit).
int widest_unit(const GatherPlan& p) noexcept {
  const auto es = static_cast<std::int64_t>(p.element_size);
  std::uint64_t bits = 16;
  bits |= static_cast<std::uint64_t>(p.block * es);
  bits |= static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p.input));
  bits |= static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(p.output));
  for (int d = 0; d < p.lookup_rank; ++d) {
    bits |= abs_u64(p.input_strides[static_cast<std::size_t>(d)] * es);
    bits |= abs_u64(p.output_strides[static_cast<std::size_t>(d)] * es);
  }
  for (int j = 0; j < p.k; ++j) bits |= abs_u64(p.axis_strides[static_cast<std::size_t>(j)] * es);
  return static_cast<int>(bits & (~bits + 1));
}

}  // namespace

std::int64_t axes_reach(const std::int64_t* strides, const std::int64_t* sizes, int k) noexcept {
  std::int64_t reach = 0;
  for (int j = 0; j < k; ++j) {
    if (sizes[j] > 0) reach += static_cast<std::int64_t>(abs_u64(strides[j])) * (sizes[j] - 1);
  }
  return reach;
}

void make_plan(const TensorView& input, const TensorView& indices,
               const MutableTensorView& output, const ValidatedCall& call,
               const GatherOptions& options, GatherPlan* plan) noexcept {
  GatherPlan& p = *plan;  // filled in place: the per-call path copies no plan
  p = GatherPlan{};
  const GatherShape& s = call.shape;
  const int r = input.rank();
  const int c = s.coordinate_size;

  // 1. One loop dimension per output dimension; broadcast and axes become stride 0.
  //    Size-1 dimensions are dropped: their position is always 0.
  int n = 0;
  for (int d = 0; d < r; ++d) {
    const auto du = static_cast<std::size_t>(d);
    const std::int64_t size = s.output_shape[d];
    if (size == 1) continue;
    p.shape[static_cast<std::size_t>(n)] = size;
    p.input_strides[static_cast<std::size_t>(n)] =
        (s.is_axis[du] || input.shape[d] == 1) ? 0 : input.strides[d];
    p.indices_strides[static_cast<std::size_t>(n)] =
        (s.logical_indices_shape[d] == 1) ? 0 : indices.strides[d] * (d == r - 1 ? c : 1);
    p.output_strides[static_cast<std::size_t>(n)] = output.strides[d];
    ++n;
  }

  // 2. Coalesce neighbours (outer i, inner i+1) that are contiguous in all three operands:
  //    stride[i] == stride[i+1] * shape[i+1]. Dimensions are never reordered, so the C-order
  //    walk of the plan still visits output elements in the original C order.
  int m = 0;
  for (int i = 0; i < n; ++i) {
    const auto iu = static_cast<std::size_t>(i);
    if (m > 0) {
      const auto pu = static_cast<std::size_t>(m - 1);
      const std::int64_t inner = p.shape[iu];
      if (p.input_strides[pu] == p.input_strides[iu] * inner &&
          p.indices_strides[pu] == p.indices_strides[iu] * inner &&
          p.output_strides[pu] == p.output_strides[iu] * inner) {
        p.shape[pu] *= inner;
        p.input_strides[pu] = p.input_strides[iu];
        p.indices_strides[pu] = p.indices_strides[iu];
        p.output_strides[pu] = p.output_strides[iu];
        continue;
      }
    }
    const auto mu = static_cast<std::size_t>(m);
    p.shape[mu] = p.shape[iu];
    p.input_strides[mu] = p.input_strides[iu];
    p.indices_strides[mu] = p.indices_strides[iu];
    p.output_strides[mu] = p.output_strides[iu];
    ++m;
  }
  p.rank = m;

  // 3. Coordinates: axis j reads indices at index_offset + j * coord_stride.
  p.k = s.axes.size();
  for (int j = 0; j < p.k; ++j) {
    const auto a = static_cast<int>(s.axes[j]);
    p.axis_strides[static_cast<std::size_t>(j)] = input.strides[a];
    p.axis_sizes[static_cast<std::size_t>(j)] = input.shape[a];
  }
  p.coord_stride = r > 0 ? indices.strides[r - 1] : 0;

  p.numel = s.output_numel;
  p.input = static_cast<const std::byte*>(input.data);
  p.indices = static_cast<const std::byte*>(indices.data);
  p.output = static_cast<std::byte*>(output.data);
  p.element_size = call.element_size;
  p.index_dtype = indices.dtype;
  p.index_mode = options.index_mode;
  p.negative_indices = call.negative_indices;
  p.fill_bytes = call.fill_bytes;
  p.num_threads = options.num_threads;

  // 4. The inner block: a last dimension contiguous in input and output along which the index
  //    does not change (or no index is read: k == 0) is copied whole per lookup.
  const auto last = static_cast<std::size_t>(m > 0 ? m - 1 : 0);
  if (m > 0 && p.input_strides[last] == 1 && p.output_strides[last] == 1 &&
      (p.k == 0 || p.indices_strides[last] == 0)) {
    p.kind = PlanKind::kBlock;
    p.block = p.shape[last];
    p.lookup_rank = m - 1;
  } else {
    p.kind = PlanKind::kElement;
    p.block = 1;
    p.lookup_rank = m;
  }
  p.lookups = p.block > 0 ? p.numel / p.block : 0;  // block 0: an empty last dimension
  p.unit_bytes = widest_unit(p);

  constexpr std::int64_t kInt32Max = 2147483647;
  p.offsets_fit_int32 = view_extent(input.shape, input.strides) <= kInt32Max &&
                        view_extent(indices.shape, indices.strides) <= kInt32Max &&
                        view_extent(output.shape, output.strides) <= kInt32Max;
  const auto es = static_cast<std::int64_t>(p.element_size);
  const auto is = static_cast<std::int64_t>(element_size(indices.dtype));
  const __int128 work = static_cast<__int128>(p.numel) * es * 2 +
                       static_cast<__int128>(p.lookups) * p.k * is;
  p.work_bytes = work > INT64_MAX ? INT64_MAX : static_cast<std::int64_t>(work);
}

}  // namespace multigather::detail
