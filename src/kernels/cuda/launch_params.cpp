// The host half of the CUDA backend's planning: GatherPlan -> CudaGatherParams, and a validated
// scatter -> CudaScatterParams. Pure.
#include <algorithm>
#include <bit>
#include <cstring>

#include "kernels/cuda/launch_params.hpp"
#include "kernels/combine.hpp"
#include "plan/plan.hpp"
#include "plan/scatter_plan.hpp"

namespace multigather::detail {
namespace {

constexpr std::int64_t kInt32Limit = std::int64_t{1} << 31;
// Work items in 32-bit mode stay below 2^31 even after one grid-stride step of a full grid.
constexpr std::int64_t kItems32Limit = std::int64_t{1} << 30;

std::int64_t abs64(std::int64_t v) { return v < 0 ? -v : v; }

std::int64_t round_up_pow2(std::int64_t v) {
  std::int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

int log2_exact(std::int64_t pow2) {
  int s = 0;
  while ((std::int64_t{1} << s) < pow2) ++s;
  return s;
}

}  // namespace

std::int64_t launch_blocks(const CudaGatherParams& params, int multiprocessors,
                           int blocks_per_multiprocessor) noexcept {
  const std::int64_t threads =
      ((params.items + params.rows_per_thread - 1) / params.rows_per_thread) << params.group_shift;
  const std::int64_t needed = (threads + kThreadsPerBlock - 1) / kThreadsPerBlock;
  const std::int64_t cap = std::int64_t{multiprocessors > 0 ? multiprocessors : 1} *
                           (blocks_per_multiprocessor > 0 ? blocks_per_multiprocessor : 1);
  return std::max<std::int64_t>(1, std::min(needed, cap));
}

void make_cuda_params(const GatherPlan& p, CudaGatherParams* out, int unit_bytes) noexcept {
  CudaGatherParams c;
  const auto es = static_cast<std::int64_t>(p.element_size);

  // Rows: the plan's kind, block and copy unit (a row is a block, or one element).
  c.block_path = p.kind == PlanKind::kBlock;
  c.rank = p.lookup_rank;
  const std::int64_t row_bytes = p.block * es;

  c.unit_bytes = unit_bytes > 0 ? unit_bytes : p.unit_bytes;
  const std::int64_t ub = c.unit_bytes;
  c.row_units = row_bytes / ub;
  c.rows = p.lookups;

  // A group of threads per row, each moving up to kUnitsPerThread units per item; rows longer
  // than one item are split so that long rows still spread over the whole GPU.
  const std::int64_t per_thread = kUnitsPerThread;
  std::int64_t group = round_up_pow2((c.row_units + per_thread - 1) / per_thread);
  if (group > kThreadsPerBlock) group = kThreadsPerBlock;
  c.group_shift = log2_exact(group);
  c.chunk_units = group * per_thread;
  c.chunks_per_row = (c.row_units + c.chunk_units - 1) / c.chunk_units;
  c.items = c.rows * c.chunks_per_row;
  c.rows_per_thread = c.row_units == 1 ? kUnitsPerThread : 1;

  // Extents (largest |offset| reached) decide whether 32-bit arithmetic is exact.
  std::int64_t input_extent = c.row_units, output_extent = c.row_units, index_extent = 1;
  for (int d = 0; d < c.rank; ++d) {
    const auto du = static_cast<std::size_t>(d);
    c.shape[du] = p.shape[du];
    c.input_strides[du] = p.input_strides[du] * es / ub;
    c.output_strides[du] = p.output_strides[du] * es / ub;
    c.indices_strides[du] = p.k > 0 ? p.indices_strides[du] : 0;
    input_extent += abs64(c.input_strides[du]) * (c.shape[du] - 1);
    output_extent += abs64(c.output_strides[du]) * (c.shape[du] - 1);
    index_extent += abs64(c.indices_strides[du]) * (c.shape[du] - 1);
  }
  c.k = p.k;
  for (int j = 0; j < p.k; ++j) {
    const auto ju = static_cast<std::size_t>(j);
    c.axis_strides[ju] = p.axis_strides[ju] * es / ub;
    c.axis_sizes[ju] = p.axis_sizes[ju];
  }
  input_extent += axes_reach(c.axis_strides, c.axis_sizes, c.k);
  c.coord_stride = p.coord_stride;
  if (p.k > 1) index_extent += abs64(p.coord_stride) * (p.k - 1);

  c.offsets32 = c.items < kItems32Limit && input_extent < kInt32Limit &&
                output_extent < kInt32Limit && index_extent < kInt32Limit;
  if (c.offsets32) {
    for (int d = 0; d < c.rank; ++d) {
      const auto du = static_cast<std::size_t>(d);
      c.shape_divide[du] = FastDivide(static_cast<std::uint32_t>(c.shape[du]));
    }
    c.chunks_divide = FastDivide(static_cast<std::uint32_t>(c.chunks_per_row));
  }

  c.index_dtype = p.index_dtype;
  c.index_mode = p.index_mode;
  c.negative_indices = p.negative_indices;
  for (std::size_t b = 0; b < sizeof(c.fill_pattern); b += p.element_size) {
    std::memcpy(c.fill_pattern + b, p.fill_bytes.data(), p.element_size);
  }
  c.input = p.input;
  c.indices = p.indices;
  c.output = p.output;
  *out = c;
}

void make_cuda_scatter_params(const MutableTensorView& output, const TensorView& indices,
                              const ValidatedScatter& call, const ScatterOptions& options,
                              CudaScatterParams* params) noexcept {
  const TensorView targets(output.data, output.dtype, output.shape, output.strides);
  const MutableTensorView updates(const_cast<void*>(call.updates.data), call.updates.dtype,
                                  call.updates.shape, call.updates.strides);  // read only
  GatherPlan plan;
  make_plan(targets, indices, updates, call.gather, gather_options_of(options), &plan);
  CudaScatterParams s;
  make_cuda_params(plan, &s.rows, static_cast<int>(plan.element_size));
  s.rows.rows_per_thread = 1;  // the scatter kernels run one row (or chunk) per thread group
  const CudaGatherParams& c = s.rows;
  // The range of a target row's offset (elements): each dimension adds its lowest or highest.
  // Every row's offset (and lo) is a sum of multiples of the strides that move it, so their
  // common power of two (the lowest bit set in any of them) leaves the keys' low bits zero: the
  // sort skips them (a row scatter of 512-element rows into 50000 rows sorts 16 bits, not 25).
  std::int64_t lo = 0, hi = 0;
  std::uint64_t moving = 0;  // the moving strides' bits, or'ed
  const auto reach = [&](std::int64_t stride, std::int64_t size) {
    const std::int64_t r = size > 0 ? stride * (size - 1) : 0;
    (r < 0 ? lo : hi) += r;
    if (size > 1) moving |= static_cast<std::uint64_t>(stride < 0 ? -stride : stride);
  };
  for (int d = 0; d < c.rank; ++d) reach(c.input_strides[d], c.shape[d]);
  for (int j = 0; j < c.k; ++j) reach(c.axis_strides[j], c.axis_sizes[j]);
  s.target_bias = -lo;
  s.key_shift = moving == 0 ? 0 : std::min(std::countr_zero(moving), 62);
  const std::uint64_t max_key = static_cast<std::uint64_t>(hi - lo) >> s.key_shift;
  s.key_bits = 1;  // the dropped key's low key_bits bits (all ones) must exceed every key
  while (s.key_bits < 64 && ((std::uint64_t{1} << s.key_bits) - 1) <= max_key) ++s.key_bits;
  s.include_input = call.include_input;
  combine::identity_bytes(output.dtype, call.reduction, s.identity);
  *params = s;
}

void make_cuda_fill_params(void* out, std::int64_t count, std::size_t element_bytes, const void* element,
                           CudaFillParams* params) noexcept {
  CudaFillParams f;
  f.out = out;
  const auto es = static_cast<std::int64_t>(element_bytes);
  for (std::int64_t at = 0; at + es <= 16; at += es) std::memcpy(f.pattern + at, element, element_bytes);
  const std::int64_t bytes = count * es;
  const auto address = reinterpret_cast<std::uintptr_t>(out);
  std::int64_t unit = 16;
  while (unit > es && (bytes % unit != 0 || address % static_cast<std::uintptr_t>(unit) != 0)) unit /= 2;
  f.unit_bytes = static_cast<int>(unit);
  f.units = bytes / unit;
  *params = f;
}

std::int64_t scatter_key_blocks(const CudaScatterParams& params, int multiprocessors,
                                int blocks_per_multiprocessor) noexcept {
  CudaGatherParams one_per_row = params.rows;
  one_per_row.items = params.rows.rows;
  one_per_row.group_shift = 0;
  one_per_row.rows_per_thread = 1;
  return launch_blocks(one_per_row, multiprocessors, blocks_per_multiprocessor);
}

}  // namespace multigather::detail
