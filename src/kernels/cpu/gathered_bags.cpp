// The host side of kernels/gathered_bags.hpp: the params of a GatheredRows described for the
// device (the CUDA engine's launches, and the host tests that run the same passes).
#include "kernels/gathered_bags.hpp"

#include <algorithm>
#include <bit>
#include <utility>
#include <vector>

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

BagTerms bag_terms(const GatheredRows& g, const TensorView& table, std::int64_t bags, std::int64_t d,
                   const std::int64_t* rows, const std::int64_t* bag_starts, bool mean, bool max) {
  BagTerms t;
  t.table = table.data;
  t.table_row = table.rank() == 2 ? table.strides[0] : 0;
  t.table_col = table.rank() == 2 ? table.strides[1] : 1;
  t.bags = bags;
  t.d = d;
  t.n = g.ids.numel();
  t.rows = rows;
  t.bag_starts = bag_starts;
  t.scale = g.scale.data;
  t.scale_stride = g.scale.data != nullptr ? g.scale.strides[0] : 0;
  t.skip_row = g.skip_row;
  t.mean = mean;
  t.max = max;
  return t;
}

GatheredBagsParams gathered_bags_params(const GatheredRows& g, const std::int64_t* rows, const std::int64_t* bag_starts,
                                        const MutableTensorView& bags, bool mean, bool max) {
  GatheredBagsParams p;
  p.terms = bag_terms(g, g.table, bags.shape[0], bags.shape[1], rows, bag_starts, mean, max);
  p.out = bags.data;
  p.out_row = bags.strides[0];
  p.out_col = bags.strides[1];
  return p;
}

GatheredBagsVjpParams gathered_bags_vjp_params(const GatheredRows& g, const TensorView& table,
                                               const TensorView& grad_output, const MutableTensorView& grad_table,
                                               const std::int64_t* rows, const std::int64_t* bag_starts, bool mean,
                                               bool max) {
  GatheredBagsVjpParams p;
  p.terms = bag_terms(g, table, grad_output.shape[0], grad_output.shape[1], rows, bag_starts, mean, max);
  p.grad = grad_output.data;
  p.grad_row = grad_output.strides[0];
  p.grad_col = grad_output.strides[1];
  p.grad_table = grad_table.data;
  p.v_size = grad_table.shape[0];
  p.grad_table_row = grad_table.strides[0];
  p.grad_table_col = grad_table.strides[1];
  // Every key is below 2^key_bits - 1: V (max: V * D) < 2^key_bits.
  const auto largest = static_cast<std::uint64_t>(max ? p.v_size * p.terms.d : p.v_size);
  p.key_bits = std::max(1, static_cast<int>(std::bit_width(largest)));
  return p;
}

bool gathered_bags_vjp_on_host(const GatheredBagsVjpParams& given, DType dtype) {
  GatheredBagsVjpParams p = given;
  const auto k = static_cast<std::size_t>(p.keys_count());
  const bool max = p.terms.max;
  std::vector<std::int64_t> bag_of(max ? 0 : static_cast<std::size_t>(p.terms.n)),
      counts(max ? 0 : static_cast<std::size_t>(p.terms.bags));
  std::vector<std::uint64_t> keys(k);
  std::vector<std::int64_t> values(k);
  p.bag_of = bag_of.data();
  p.counts = counts.data();
  p.keys = keys.data();
  p.values = values.data();
  return visit_floating(dtype, [&]<class E>() {
    if (!max) vjp_bags_thread(p, 0, 1);
    vjp_keys_thread<E>(p, 0, 1);
    vjp_zero_thread<E>(p, 0, 1);
    stable_sort_pairs(keys.data(), values.data(), k);
    vjp_runs_thread<E>(p, 0, 1);
  });
}

void stable_sort_pairs(std::uint64_t* keys, std::int64_t* values, std::size_t n) {
  // Sorted by (key, position): the stable order by key (std::sort needs no temporary buffer).
  std::vector<std::pair<std::uint64_t, std::size_t>> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = {keys[i], i};
  std::sort(order.begin(), order.end());
  std::vector<std::int64_t> v(values, values + n);
  for (std::size_t i = 0; i < n; ++i) {
    keys[i] = order[i].first;
    values[i] = v[order[i].second];
  }
}

}  // namespace multigather::detail
