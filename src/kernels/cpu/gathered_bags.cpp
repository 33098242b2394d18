// The host side of kernels/gathered_bags.hpp: the params of a GatheredRows described for the
// device (the CUDA engine's launches, and the host tests that run the same passes).
#include "kernels/gathered_bags.hpp"

#include <algorithm>

#include "multigather/lowering.hpp"

namespace multigather::detail {

BagIndexParams bag_index_params(const GatheredRows& g, std::int64_t* rows, std::int64_t* bag_starts,
                                std::uint32_t* failed) {
  BagIndexParams p;
  const TensorView& ids = g.ids;
  p.ids = ids.data;
  switch (ids.dtype) {
    case DType::kInt64: p.ids_kind = 0; break;
    case DType::kInt32: p.ids_kind = 1; break;
    case DType::kInt16: p.ids_kind = 2; break;
    case DType::kInt8: p.ids_kind = 3; break;
    default: p.ids_kind = 4; break;  // kUInt8 (the lowering checked the dtype)
  }
  p.n = ids.numel();
  if (ids.rank() == 2) {
    p.ids_cols = ids.shape[1];
    p.ids_row_stride = ids.strides[0];
    p.ids_col_stride = ids.strides[1];
  } else {
    p.ids_cols = std::max<std::int64_t>(p.n, 1);
    p.ids_col_stride = ids.rank() == 1 ? ids.strides[0] : 1;
  }
  p.fixed = ids.rank() == 2;  // a 2-D input's bags are its rows
  if (!p.fixed) {
    p.offsets = g.offsets.data;
    p.offsets_int32 = g.offsets.dtype == DType::kInt32;
    p.offsets_count = g.offsets.numel();
    p.offsets_stride = g.offsets.rank() == 1 ? g.offsets.strides[0] : 1;
  }
  p.include_last_offset = g.include_last_offset;
  p.bags = g.bags;
  p.v_size = g.table.shape[0];
  p.rows = rows;
  p.bag_starts = bag_starts;
  p.failed = failed;
  return p;
}

GatheredBagsParams gathered_bags_params(const GatheredRows& g, const std::int64_t* rows, const std::int64_t* bag_starts,
                                        const MutableTensorView& bags, bool mean, bool max) {
  GatheredBagsParams p;
  p.table = g.table.data;
  p.table_row = g.table.strides[0];
  p.table_col = g.table.strides[1];
  p.bags = bags.shape[0];
  p.d = bags.shape[1];
  p.rows = rows;
  p.bag_starts = bag_starts;
  p.scale = g.scale.data;
  p.scale_stride = g.scale.data != nullptr ? g.scale.strides[0] : 0;
  p.skip_row = g.skip_row;
  p.mean = mean;
  p.max = max;
  p.out = bags.data;
  p.out_row = bags.strides[0];
  p.out_col = bags.strides[1];
  return p;
}

}  // namespace multigather::detail
