// The host side of kernels/segment_ids.hpp: the params of a SegmentBoundaries, both passes in
// loops (the CPU lowering and the CPU engine), and the words of a failure (every engine's).
#include "kernels/segment_ids.hpp"

#include <string>
#include <vector>

#include "core/index_value.hpp"
#include "core/text.hpp"
#include "multigather/lowering.hpp"

namespace multigather::detail {

std::int64_t segment_starts_count(const SegmentBoundaries& b) {
  if (b.offsets) return 0;
  std::int64_t rows = 1;
  for (int d = 0; d + 1 < b.bounds.rank(); ++d) rows *= b.bounds.shape[d];
  return rows * (b.segments + 1);
}

SegmentIdsParams segment_ids_params(const SegmentBoundaries& b, std::int64_t* ids, std::int64_t* starts,
                                    std::uint64_t* first_error) {
  SegmentIdsParams p;
  const TensorView& v = b.bounds;
  const int r = b.batch.size();
  p.bounds = v.data;
  p.bounds_int32 = v.dtype == DType::kInt32;
  p.offsets = b.offsets;
  p.check_sum = b.check_sum;
  p.batch_rank = r;
  p.k = v.shape[r];
  p.n = b.n;
  p.segments = b.segments;
  p.bound_step = v.strides[r];
  p.bound_rows = 1;
  p.rows = 1;
  std::int64_t row_stride = 1;
  for (int d = r - 1; d >= 0; --d) {
    p.bound_shape[d] = v.shape[d];
    p.bound_strides[d] = v.strides[d];
    p.batch[d] = b.batch[d];
    const bool shared = v.shape[d] == 1;
    p.batch_bound_strides[d] = shared ? 0 : v.strides[d];
    p.batch_row_strides[d] = shared ? 0 : row_stride;
    row_stride *= v.shape[d];
  }
  for (int d = 0; d < r; ++d) {
    p.bound_rows *= v.shape[d];
    p.rows *= b.batch[d];
  }
  if (p.rows == 0) p.bound_rows = 0;  // no data row reads a boundary: nothing is checked
  p.starts = starts;
  p.ids = ids;
  p.first_error = first_error;
  return p;
}

void segment_ids_on_host(const SegmentIdsParams& p) {
  *p.first_error = kNoSegmentIdsError;
  if (p.offsets) {
    check_offsets_thread(p, 0, 1);
  } else {
    lengths_starts_thread(p, 0, 1);
  }
  if (*p.first_error == kNoSegmentIdsError) segment_ids_thread(p, 0, 1);
}

Status segment_ids_error(const std::string& op, const SegmentBoundaries& b, const TensorView& host_bounds,
                         std::uint64_t code) {
  const TensorView& v = host_bounds;
  const int r = b.batch.size();
  const std::int64_t k = v.shape[r];
  const auto row = static_cast<std::int64_t>(code / static_cast<std::uint64_t>(k + 1));
  const auto s = static_cast<std::int64_t>(code % static_cast<std::uint64_t>(k + 1));
  // The boundary row's position (C order of batch'), and its values.
  std::vector<std::int64_t> at(static_cast<std::size_t>(r), 0);
  std::int64_t rest = row, base = 0;
  for (int d = r - 1; d >= 0; --d) {
    at[static_cast<std::size_t>(d)] = rest % v.shape[d];
    rest /= v.shape[d];
    base += at[static_cast<std::size_t>(d)] * v.strides[d];
  }
  const auto value = [&](std::int64_t j) -> __int128 {
    const std::int64_t e = base + j * v.strides[r];
    return v.dtype == DType::kInt32 ? static_cast<const std::int32_t*>(v.data)[e] : static_cast<const std::int64_t*>(v.data)[e];
  };
  const auto where = [&](std::int64_t j) {
    std::vector<std::int64_t> p = at;
    p.push_back(j);
    return b.name + "[" + position_text(p) + "] = " + index_text(value(j));
  };
  if (b.offsets) {
    if (value(s) < 0 || value(s) > b.n) {
      return OutOfRange(op + ": " + where(s) + " is out of range [0, " + str(b.n) + "] (the data's rows along the axis)");
    }
    return InvalidArgument(op + ": " + b.name + " must not decrease (" + where(s) + " follows " + index_text(value(s - 1)) + ")");
  }
  if (s < k) return InvalidArgument(op + ": " + where(s) + " is negative (lengths must be >= 0)");
  __int128 sum = 0;
  for (std::int64_t j = 0; j < k; ++j) sum += value(j);
  return InvalidArgument(op + ": " + b.name + "[" + position_text(at) + (at.empty() ? "" : ",") + ":] sums to " +
                         index_text(sum) + ", but the data has " + str(b.n) +
                         " rows along the axis (they must be equal; unsafe=True skips this check and drops rows "
                         "past the last segment)");
}

}  // namespace multigather::detail
