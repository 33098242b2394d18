// torch.nn.functional.embedding_bag on the device (kernels/gathered_bags.hpp): a lowering of CUDA
// operands describes the bags (GatheredRows::ids / offsets / bags / check_values: nothing read),
// and the CUDA engine's three passes (bag starts and ids checked, then one thread per output
// element) run here on the host over launched grids, threads last to first, against the CPU
// engine's fused kernels (the read lowering executed) byte for byte: random tables of every
// floating dtype (strided too), 1-D ids with int32 / int64 offsets (include_last_offset, empty
// bags) and 2-D ids, sum (per_sample_weights), mean and max, padding_idx, ids of every index
// dtype. A bad offset or id raises the flag, and check_values words it as the CPU lowering does.
// The table's gradient (passes V1 to V4 and the sort between them) likewise, against the CPU
// engine's fused VJP (execute_vjp of the read lowering), on gradients whose every bit counts (the
// order and rounding of each add show).
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api/vjp.hpp"
#include "kernels/gathered_bags.hpp"
#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "multigather/transforms.hpp"
#include "test_seed.hpp"

namespace multigather {
namespace {

constexpr const char* kOp = "torch.nn.functional.embedding_bag";

struct Bags {
  Tensor weight, input, offsets, psw;
  TensorView weight_view;  // maybe a strided view of weight
  Attributes attrs;
  bool has_offsets = false, has_psw = false;
};

template <class T>
void fill_ints(Tensor* t, const std::vector<std::int64_t>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) static_cast<T*>(t->data())[i] = static_cast<T>(v[i]);
}

void fill_index(Tensor* t, const std::vector<std::int64_t>& v) {
  switch (t->dtype()) {
    case DType::kInt64: fill_ints<std::int64_t>(t, v); break;
    case DType::kInt32: fill_ints<std::int32_t>(t, v); break;
    case DType::kInt16: fill_ints<std::int16_t>(t, v); break;
    case DType::kInt8: fill_ints<std::int8_t>(t, v); break;
    default: fill_ints<std::uint8_t>(t, v); break;
  }
}

// Small multiples of 1/8 as the dtype's bytes (exact in every floating dtype).
void fill_floats(Tensor* t, std::mt19937_64& rng) {
  std::uniform_int_distribution<int> small(-16, 16);
  const std::int64_t n = t->numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = 0.125f * static_cast<float>(small(rng));
    std::uint32_t u;
    std::memcpy(&u, &v, 4);
    switch (t->dtype()) {
      case DType::kFloat32: static_cast<float*>(t->data())[i] = v; break;
      case DType::kFloat64: static_cast<double*>(t->data())[i] = v; break;
      case DType::kBFloat16: static_cast<std::uint16_t*>(t->data())[i] = static_cast<std::uint16_t>(u >> 16); break;
      default: {  // float16: the value is a multiple of 1/8 below 2: exact
        const _Float16 h = static_cast<_Float16>(v);
        std::memcpy(static_cast<std::uint16_t*>(t->data()) + i, &h, 2);
      }
    }
  }
}

Bags random_bags(std::mt19937_64& rng, bool valid) {
  static const DType kTables[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};
  static const DType kIds[] = {DType::kInt64, DType::kInt32, DType::kInt16, DType::kInt8, DType::kUInt8};
  static const char* kModes[] = {"sum", "mean", "max"};
  Bags b;
  const DType dtype = kTables[rng() % 4];
  const std::int64_t v = static_cast<std::int64_t>(rng() % 9 + 1), d = static_cast<std::int64_t>(rng() % 6 + 1);
  const bool strided = rng() % 3 == 0;  // every other column of a [V, 2D] table
  b.weight = Tensor(dtype, Dims{v, strided ? 2 * d : d});
  fill_floats(&b.weight, rng);
  b.weight_view = strided ? TensorView(b.weight.data(), dtype, Dims{v, d}, Dims{2 * d, 2}) : b.weight.view();
  const char* mode = kModes[rng() % 3];
  b.attrs.set_string("mode", mode);
  const bool two_d = rng() % 3 == 0;
  const DType id_type = kIds[rng() % 5];
  std::vector<std::int64_t> ids;
  std::vector<std::int64_t> offsets;
  if (two_d) {
    const std::int64_t rows = static_cast<std::int64_t>(rng() % 4), cols = static_cast<std::int64_t>(rng() % 4 + 1);
    for (std::int64_t i = 0; i < rows * cols; ++i) ids.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(v)));
    b.input = Tensor(id_type, Dims{rows, cols});
  } else {
    const std::int64_t n = static_cast<std::int64_t>(rng() % 12);
    for (std::int64_t i = 0; i < n; ++i) ids.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(v)));
    const bool last = rng() % 2 == 0;
    const std::int64_t bags = static_cast<std::int64_t>(rng() % 5) + (last ? 0 : 1);
    offsets.push_back(0);
    for (std::int64_t k = 1; k < bags; ++k) offsets.push_back(static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n + 1)));
    std::sort(offsets.begin(), offsets.end());
    if (last) offsets.push_back(n);
    b.attrs.set_bool("include_last_offset", last);
    b.input = Tensor(id_type, Dims{n});
    b.offsets = Tensor(rng() % 2 ? DType::kInt32 : DType::kInt64, Dims{static_cast<std::int64_t>(offsets.size())});
    b.has_offsets = true;
  }
  if (!valid) {
    if (!offsets.empty() && rng() % 2 == 0) {
      offsets[rng() % offsets.size()] = static_cast<std::int64_t>(ids.size() + 1 + rng() % 2);  // past N, or a decrease after it
    } else if (!ids.empty()) {
      ids[rng() % ids.size()] = rng() % 2 == 0 ? v : -1;  // out of [0, V) (-1 as uint8: 255)
    }
  }
  fill_index(&b.input, ids);
  if (b.has_offsets) {
    fill_index(&b.offsets, offsets);
    b.attrs.set_tensor("offsets", b.offsets.view());
  }
  if (std::string(mode) == "sum" && rng() % 2 == 0) {
    b.psw = Tensor(dtype, b.input.shape());
    fill_floats(&b.psw, rng);
    b.attrs.set_tensor("per_sample_weights", b.psw.view());
    b.has_psw = true;
  }
  if (rng() % 3 == 0) b.attrs.set_int("padding_idx", static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(v)) - (rng() % 2 ? v : 0));
  return b;
}

// Passes 1 and 2 over grids of `threads` threads (last to first) on host memory: false when a
// check raised the flag.
struct BagIndexOnGrid {
  std::vector<std::int64_t> rows, starts;
  bool run(const GatheredRows& g, std::int64_t threads) {
    rows.assign(static_cast<std::size_t>(g.ids.numel()) + 1, -9);
    starts.assign(static_cast<std::size_t>(g.bags) + 1, -9);
    std::uint32_t failed = 0;
    const detail::BagIndexParams p = detail::bag_index_params(g, rows.data(), starts.data(), &failed);
    for (std::int64_t t = threads - 1; t >= 0; --t) detail::bag_starts_thread(p, t, threads);
    for (std::int64_t t = threads - 1; t >= 0; --t) detail::bag_rows_thread(p, t, threads);
    return failed == 0;
  }
};

// The CUDA engine's passes over grids of `threads` threads (last to first) on host memory:
// false when a check raised the flag (nothing written to `out`).
bool run_on_grid(const GatheredRows& g, const MutableTensorView& out, bool mean, bool max, std::int64_t threads) {
  BagIndexOnGrid index;
  if (!index.run(g, threads)) return false;
  const detail::GatheredBagsParams q =
      detail::gathered_bags_params(g, index.rows.data(), index.starts.data(), out, mean, max);
  EXPECT_TRUE(detail::visit_floating(g.table.dtype, [&]<class E>() {
    for (std::int64_t t = threads - 1; t >= 0; --t) detail::gathered_bags_thread<E>(q, t, threads);
  }));
  return true;
}

TEST(GatheredBags, TheDevicePassesOverLaunchedGridsGiveTheCpuEnginesBytesAndErrors) {
  std::mt19937_64 rng(test::run_seed() + 41);
  int compared = 0, refused = 0;
  for (int iteration = 0; iteration < 2500; ++iteration) {
    const bool valid = iteration % 4 != 0;
    Bags b = random_bags(rng, valid);
    SCOPED_TRACE("iteration " + std::to_string(iteration));
    Lowering read, described;
    const Status want = lower_op(kOp, b.weight_view, b.input.view(), b.attrs, &read, Device::kCPU);
    const Status lowered = lower_op(kOp, b.weight_view, b.input.view(), b.attrs, &described, Device::kCUDA);
    if (!lowered.ok()) {  // a shape's error: the same on both
      EXPECT_EQ(want.message(), lowered.message());
      continue;
    }
    ASSERT_NE(described.gathered, nullptr);
    const GatheredRows& g = *described.gathered;
    ASSERT_EQ(g.rows, nullptr);  // nothing was read
    ASSERT_TRUE(static_cast<bool>(g.check_values));
    const bool mean = described.mean_by_count, max = described.reduction == Reduction::kMax;
    const Dims out_shape{g.bags, b.weight_view.shape[1]};
    for (std::int64_t threads : {1, 7, 64}) {
      Tensor out(b.weight_view.dtype, out_shape);
      std::memset(out.data(), 0x5A, out.nbytes());
      const bool ran = run_on_grid(g, out.mutable_view(), mean, max, threads);
      if (!want.ok()) {
        ASSERT_FALSE(ran) << want.message();
        for (std::size_t i = 0; i < out.nbytes(); ++i) ASSERT_EQ(static_cast<const std::uint8_t*>(out.data())[i], 0x5A);
        const TensorView offsets = b.has_offsets ? b.offsets.view() : TensorView();
        const Status words = g.check_values(b.input.view(), b.has_offsets ? &offsets : nullptr);
        EXPECT_EQ(words.code(), want.code());
        EXPECT_EQ(words.message(), want.message());
        continue;
      }
      ASSERT_TRUE(ran);
      const Tensor cpu = execute(read, ExecutionContext{});
      ASSERT_EQ(cpu.shape(), out_shape);
      ASSERT_EQ(std::memcmp(cpu.data(), out.data(), out.nbytes()), 0) << "threads " << threads;
    }
    // execute() of the described lowering on the CPU engine (its passes in loops): the same
    // bytes, or the same error with the caller's output untouched
    ExecutionContext on_cpu;
    on_cpu.device = Device::kCPU;
    Tensor into(b.weight_view.dtype, out_shape);
    std::memset(into.data(), 0x3C, into.nbytes());
    const Status ran = execute(described, into.mutable_view(), on_cpu);
    if (want.ok()) {
      ASSERT_TRUE(ran.ok()) << ran.message();
      const Tensor cpu = execute(read, ExecutionContext{});
      ASSERT_EQ(std::memcmp(cpu.data(), into.data(), into.nbytes()), 0);
    } else {
      EXPECT_EQ(ran.message(), want.message());
      for (std::size_t i = 0; i < into.nbytes(); ++i) ASSERT_EQ(static_cast<const std::uint8_t*>(into.data())[i], 0x3C);
    }
    ++(want.ok() ? compared : refused);
  }
  EXPECT_GT(compared, 1200);
  EXPECT_GT(refused, 200);
}

// Values of every magnitude and all their bits (finite), as the dtype's bytes.
void fill_full(Tensor* t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> value(-4.0, 4.0);
  const std::int64_t n = t->numel();
  for (std::int64_t i = 0; i < n; ++i) {
    const double v = value(rng);
    const float f = static_cast<float>(v);
    std::uint32_t u;
    std::memcpy(&u, &f, 4);
    switch (t->dtype()) {
      case DType::kFloat32: static_cast<float*>(t->data())[i] = f; break;
      case DType::kFloat64: static_cast<double*>(t->data())[i] = v; break;
      case DType::kBFloat16: static_cast<std::uint16_t*>(t->data())[i] = static_cast<std::uint16_t>(u >> 16); break;
      default: {
        const _Float16 h = static_cast<_Float16>(f);
        std::memcpy(static_cast<std::uint16_t*>(t->data()) + i, &h, 2);
      }
    }
  }
}

// Passes V1 to V4 over grids of `threads` threads (last to first), the sort between them on the
// host: false when a check of passes 1 and 2 raised the flag (nothing written).
bool vjp_on_grid(const GatheredRows& g, const TensorView& table, const TensorView& grad_output,
                 const MutableTensorView& grad_table, bool mean, bool max, std::int64_t threads) {
  BagIndexOnGrid index;
  if (!index.run(g, threads)) return false;
  detail::GatheredBagsVjpParams q = detail::gathered_bags_vjp_params(g, table, grad_output, grad_table, index.rows.data(),
                                                                     index.starts.data(), mean, max);
  const auto k = static_cast<std::size_t>(q.keys_count());
  std::vector<std::int64_t> bag_of(static_cast<std::size_t>(q.terms.n), -9), counts(static_cast<std::size_t>(q.terms.bags), -9),
      values(k, -9);
  std::vector<std::uint64_t> keys(k, 7);
  q.bag_of = bag_of.data();
  q.counts = counts.data();
  q.keys = keys.data();
  q.values = values.data();
  // the sort's keys must fit its bits: every kept key below 2^key_bits - 1
  EXPECT_TRUE(detail::visit_floating(grad_table.dtype, [&]<class E>() {
    if (!max) {
      for (std::int64_t t = threads - 1; t >= 0; --t) detail::vjp_bags_thread(q, t, threads);
    }
    for (std::int64_t t = threads - 1; t >= 0; --t) detail::vjp_keys_thread<E>(q, t, threads);
    for (std::int64_t t = threads - 1; t >= 0; --t) detail::vjp_zero_thread<E>(q, t, threads);
    for (const std::uint64_t key : keys) {
      if (key != detail::kDroppedKey) EXPECT_LT(key, (std::uint64_t{1} << q.key_bits) - 1);
    }
    detail::stable_sort_pairs(keys.data(), values.data(), k);
    for (std::int64_t t = threads - 1; t >= 0; --t) detail::vjp_runs_thread<E>(q, t, threads);
  }));
  return true;
}

TEST(GatheredBags, TheDeviceGradientPassesGiveTheCpuEnginesBytesAndErrors) {
  std::mt19937_64 rng(test::run_seed() + 43);
  int compared = 0, refused = 0;
  for (int iteration = 0; iteration < 2500; ++iteration) {
    const bool valid = iteration % 5 != 0;
    Bags b = random_bags(rng, valid);
    if (b.has_psw) fill_full(&b.psw, rng);  // products and sums that round
    SCOPED_TRACE("iteration " + std::to_string(iteration));
    const TensorView weight = b.weight_view;
    Lowering shape;
    if (!lower_op(kOp, weight, b.input.view(), b.attrs, &shape, Device::kCUDA).ok()) continue;
    const Dims out_shape{shape.gathered->bags, weight.shape[1]};
    Tensor grad(weight.dtype, out_shape);
    fill_full(&grad, rng);
    // the CPU engine's fused VJP (the read lowering)
    Tensor want(weight.dtype, weight.shape);
    std::memset(want.data(), 0x5A, want.nbytes());
    const Status cpu = execute_vjp(kOp, weight, b.input.view(), nullptr, b.attrs, 0, grad.view(), want.mutable_view(),
                                   nullptr, ExecutionContext{});
    // the lowering described for the device, made on the gradient's buffer (as execute_vjp makes it)
    Tensor got(weight.dtype, weight.shape);
    Lowering described;
    ASSERT_TRUE(lower_op(kOp, got.view(), b.input.view(), b.attrs, &described, Device::kCUDA).ok());
    const GatheredRows& g = *described.gathered;
    ASSERT_EQ(g.rows, nullptr);
    const bool mean = described.mean_by_count, max = described.reduction == Reduction::kMax;
    for (std::int64_t threads : {1, 5, 64}) {
      std::memset(got.data(), 0x5A, got.nbytes());
      const bool ran = vjp_on_grid(g, weight, grad.view(), got.mutable_view(), mean, max, threads);
      ASSERT_EQ(ran, cpu.ok()) << cpu.message();
      ASSERT_EQ(std::memcmp(want.data(), got.data(), got.nbytes()), 0) << "threads " << threads;
    }
    // vjp_one of the described lowering on the CPU engine (its passes in loops): the same bytes,
    // or the same error with the gradient untouched
    ExecutionContext on_cpu;
    on_cpu.device = Device::kCPU;
    std::memset(got.data(), 0x3C, got.nbytes());
    const Status ran = detail::vjp_one(described, &weight, 0, grad.view(), got.mutable_view(), nullptr, on_cpu);
    if (cpu.ok()) {
      ASSERT_TRUE(ran.ok()) << ran.message();
      ASSERT_EQ(std::memcmp(want.data(), got.data(), got.nbytes()), 0);
    } else {
      EXPECT_EQ(ran.code(), cpu.code());
      EXPECT_EQ(ran.message(), cpu.message());
      for (std::size_t i = 0; i < got.nbytes(); ++i) ASSERT_EQ(static_cast<const std::uint8_t*>(got.data())[i], 0x3C);
    }
    ++(cpu.ok() ? compared : refused);
  }
  EXPECT_GT(compared, 1500);
  EXPECT_GT(refused, 150);
}

}  // namespace
}  // namespace multigather
