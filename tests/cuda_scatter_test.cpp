// The CUDA scatter (multigather/cuda.hpp, scatter_multiaxis_cuda_into) against the CPU engine's
// oracle, the reference kernel (docs/spec.md section 4), on the random cases of
// scatter_cases.hpp (every reduction, dtypes of every width, all index types, every mode,
// broadcasting both ways, strided and reversed outputs, include_input on and off).
//  - CudaScatterOnHost (no GPU needed): the kernel bodies themselves (scatter_rows.hpp) run on
//    the host over every thread of the launched grid, with std::stable_sort in the place of the
//    device's stable radix sort: keys, error flag, the deterministic combine byte for byte, and
//    the atomic combine (its host form: one read-modify-write per element).
//  - CudaScatter (GPU; skipped without one, a failure under MULTIGATHER_REQUIRE_GPU=1): the
//    public API on device memory, both modes, against the CPU engine, exact messages, and a
//    framework scatter (torch.index_add) through execute on device pointers.
//
// Replay: MULTIGATHER_SEED=<seed> ./multigather_tests --gtest_filter='CudaScatter*'
#include <gtest/gtest.h>

#if MULTIGATHER_HAVE_CUDA

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "core/float16_bits.hpp"
#include "kernels/cpu/run_validated.hpp"
#include "kernels/cuda/launch_params.hpp"
#include "kernels/combine.hpp"
#include "kernels/cuda/scatter_rows.hpp"
#include "kernels/cuda/divide_rows.hpp"
#include "kernels/cuda/vjp_rows.hpp"  // elementwise_blocks
#include "kernels/cpu/scatter_engine.hpp"
#include "multigather/cuda.hpp"
#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "multigather/sharding.hpp"
#include "multigather/transforms.hpp"
#include "plan/scatter_plan.hpp"
#include "cuda_test_support.hpp"
#include "scatter_cases.hpp"

namespace multigather {
namespace {

using test::Case;
using test::Result;

std::uint64_t seed() { return test::run_seed(); }

// ---- On the host: the kernel bodies over the launched grid ----------------------------------

struct RunKeys {  // step 1 over every thread of the key kernel's grid
  const detail::CudaScatterParams* s;
  std::int64_t threads;
  template <int UnitBytes, class Index, class Off>
  void operator()() {
    for (std::int64_t t = 0; t < threads; ++t) {
      detail::scatter_keys<Index, Off>(*s, static_cast<Off>(t), static_cast<Off>(threads));
    }
  }
};

template <class Off>
void stable_sort_rows(detail::CudaScatterParams* s) {
  using Key = std::make_unsigned_t<Off>;
  const auto n = static_cast<std::size_t>(s->rows.rows);
  auto* keys = static_cast<Key*>(s->keys);
  auto* values = static_cast<Off*>(s->values);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::vector<Key> k(n);
  std::vector<Off> v(n);
  for (std::size_t i = 0; i < n; ++i) {
    k[i] = keys[order[i]];
    v[i] = values[order[i]];
  }
  std::copy(k.begin(), k.end(), keys);
  std::copy(v.begin(), v.end(), values);
}

// Steps 2-3 on the host over every thread of the combine's grid (launch_blocks' grid for
// `multiprocessors`), in thread order (`reversed`: last thread first, as one of the orders a GPU
// may run atomics in).
template <class Off>
void combine_on_host(detail::CudaScatterParams s, DType dtype, Reduction reduction, bool atomic,
                     int multiprocessors, bool reversed = false) {
  if (!atomic) stable_sort_rows<Off>(&s);
  const std::int64_t threads = detail::launch_blocks(s.rows, multiprocessors) * detail::kThreadsPerBlock;
  auto each_thread = [&](auto body) {
    for (std::int64_t i = 0; i < threads; ++i) {
      const std::int64_t t = reversed ? threads - 1 - i : i;
      detail::scatter_thread<Off>(s, static_cast<Off>(t), static_cast<Off>(threads), body);
    }
  };
  if (atomic && !s.include_input && reduction != Reduction::kNone) {
    const auto es = element_size(dtype);
    each_thread([&](Off item, Off lane) {
      switch (es) {
        case 1: detail::scatter_identity_item<1, Off>(s, item, lane); break;
        case 2: detail::scatter_identity_item<2, Off>(s, item, lane); break;
        case 4: detail::scatter_identity_item<4, Off>(s, item, lane); break;
        case 8: detail::scatter_identity_item<8, Off>(s, item, lane); break;
        default: detail::scatter_identity_item<16, Off>(s, item, lane); break;
      }
    });
  }
  ASSERT_TRUE(detail::combine::visit_element_op(dtype, reduction, [&]<class Op>() {
    each_thread([&](Off item, Off lane) {
      if (atomic) {
        detail::scatter_item<Op, Off, true>(s, item, lane);
      } else {
        detail::scatter_item<Op, Off, false>(s, item, lane);
      }
    });
  }));
}

struct HostRun {
  bool ran = false;       // G was non-empty
  bool flagged = false;   // the key step raised the error flag
  std::vector<std::byte> bytes;
};

HostRun run_on_host(const Case& c, bool atomic, bool offsets64, int multiprocessors, bool reversed = false) {
  HostRun run;
  const test::CaseViews v = test::views_of(c, &run.bytes);
  detail::ValidatedScatter call;
  EXPECT_TRUE(detail::validate_scatter_operands(v.input, v.indices, v.updates, c.axes, c.options, &call).ok());
  EXPECT_TRUE(detail::validate_scatter_output(v.output, v.input, v.indices, v.updates, call, "output").ok());
  if (call.gather.shape.output_numel == 0) return run;
  run.ran = true;
  detail::CudaScatterParams s;  // planned as the CUDA API plans it
  detail::make_cuda_scatter_params(v.output, v.indices, call, c.options, &s);
  if (offsets64) s.rows.offsets32 = false;
  const std::size_t n = static_cast<std::size_t>(s.rows.rows);
  std::vector<std::uint64_t> keys(n), values(n);  // room for either width
  s.keys = keys.data();
  s.values = values.data();
  std::uint32_t flag = 0;
  if (c.options.index_mode == IndexMode::kError) s.rows.error_flag = &flag;
  RunKeys keys_run{&s, detail::scatter_key_blocks(s, multiprocessors) * detail::kThreadsPerBlock};
  EXPECT_TRUE(detail::visit_kernel_variant(s.rows, keys_run));
  run.flagged = flag != 0;
  if (run.flagged) return run;
  EXPECT_TRUE(detail::copy_view(v.input, v.output, 1).ok());
  atomic = atomic && detail::combine::has_atomic_form(c.dtype, call.reduction);
  if (s.rows.offsets32) {
    combine_on_host<std::int32_t>(s, c.dtype, call.reduction, atomic, multiprocessors, reversed);
  } else {
    combine_on_host<std::int64_t>(s, c.dtype, call.reduction, atomic, multiprocessors, reversed);
  }
  return run;
}

TEST(CudaScatterOnHost, RandomPlansMatchTheReference) {
  // Deterministic mode must equal the reference byte for byte (written elements and untouched
  // poison alike), in the 32- and 64-bit variants. Atomic mode run on the host in thread order
  // equals it too while each thread has one item (a single pass: row-major order), which the
  // small cases here always have with 4 multiprocessors.
  std::mt19937_64 rng(seed());
  int flagged = 0, compared = 0, atomic_compared = 0;
  for (int i = 0; i < 2000; ++i) {
    const std::uint64_t case_seed = rng();
    std::mt19937_64 case_rng(case_seed);
    const Case c = test::random_case(case_rng);
    const Result ref = test::run_case(c, true, 1);
    SCOPED_TRACE("case seed " + std::to_string(case_seed) + ": " + test::describe(c));
    for (const bool atomic : {false, true}) {
      const HostRun got = run_on_host(c, atomic, i % 2 == 1, 4);
      if (!got.ran) continue;
      if (ref.status.code() == StatusCode::kOutOfRange) {
        ASSERT_TRUE(got.flagged) << ref.status.message();
        flagged += !atomic;
        continue;
      }
      ASSERT_TRUE(ref.status.ok()) << ref.status.message();
      ASSERT_FALSE(got.flagged);
      ASSERT_TRUE(got.bytes == ref.bytes) << (atomic ? "atomic" : "deterministic");
      (atomic ? atomic_compared : compared) += 1;
    }
  }
  EXPECT_GT(flagged, 0);  // about 0.5% of random cases (10 of 2000) index out of range in error mode
  EXPECT_GT(compared, 1000);
  EXPECT_GT(atomic_compared, 1000);
}

TEST(CudaScatterOnHost, OrderFreeCombinesSkipTheSortAndEqualTheReferenceInAnyOrder) {
  // Deterministic CUDA scatters of integer add / mul / min / max combine with atomics, unsorted
  // (combine::order_free): their bytes must not depend on the order. The atomic form run with
  // the grid's threads backwards (each thread's items in reverse of row-major order) and with 1
  // multiprocessor (many items per thread) equals the reference byte for byte, include_input
  // false included; and the choice is the one launch_scatter_combine makes.
  namespace cb = detail::combine;
  EXPECT_TRUE(cb::combines_atomically(DType::kInt32, Reduction::kAdd, true));
  EXPECT_TRUE(cb::combines_atomically(DType::kUInt8, Reduction::kMin, true));
  EXPECT_TRUE(cb::combines_atomically(DType::kInt64, Reduction::kMul, true));
  EXPECT_FALSE(cb::combines_atomically(DType::kFloat32, Reduction::kAdd, true));
  EXPECT_FALSE(cb::combines_atomically(DType::kInt32, Reduction::kNone, true));
  EXPECT_FALSE(cb::combines_atomically(DType::kBool, Reduction::kAdd, true));
  EXPECT_FALSE(cb::combines_atomically(DType::kComplex128, Reduction::kMax, false));
  EXPECT_TRUE(cb::combines_atomically(DType::kFloat32, Reduction::kAdd, false));
  std::mt19937_64 rng(seed());
  int compared = 0, without_input = 0;
  for (int i = 0; i < 3000; ++i) {
    const std::uint64_t case_seed = rng();
    std::mt19937_64 case_rng(case_seed);
    const Case c = test::random_case(case_rng);
    if (!cb::order_free(c.dtype, c.options.reduction)) continue;
    const Result ref = test::run_case(c, true, 1);
    if (!ref.status.ok()) continue;
    SCOPED_TRACE("case seed " + std::to_string(case_seed) + ": " + test::describe(c));
    for (const int multiprocessors : {1, 4}) {
      const HostRun got = run_on_host(c, true, i % 2 == 1, multiprocessors, /*reversed=*/true);
      if (!got.ran) continue;
      ASSERT_FALSE(got.flagged);
      ASSERT_TRUE(got.bytes == ref.bytes);
      compared += 1;
      without_input += !c.options.include_input;
    }
  }
  EXPECT_GT(compared, 200);
  EXPECT_GT(without_input, 20);
}

TEST(CudaScatterOnHost, ComplexMinMaxWithNansTiesAndSignedZerosMatchTheReference) {
  // Complex min / max choose between whole pairs, so NaN on either side, real-part ties and +-0
  // must come out as the reference's bytes: deterministic mode (sort, then one owner per
  // target), and the atomic mode's host form in thread order (row-major here: complex64 swaps
  // the pair from the identity when include_input is false; complex128 runs deterministically).
  std::mt19937_64 rng(seed() + 9);
  int compared = 0;
  for (int i = 0; i < 600; ++i) {
    const std::uint64_t case_seed = rng();
    std::mt19937_64 case_rng(case_seed);
    const Case c = test::random_complex_order_case(case_rng);
    const Result ref = test::run_case(c, true, 1);
    SCOPED_TRACE("case seed " + std::to_string(case_seed) + ": " + test::describe(c));
    for (const bool atomic : {false, true}) {
      const HostRun got = run_on_host(c, atomic, i % 2 == 1, 4);
      if (!got.ran || ref.status.code() == StatusCode::kOutOfRange) continue;
      ASSERT_TRUE(ref.status.ok()) << ref.status.message();
      ASSERT_TRUE(got.bytes == ref.bytes) << (atomic ? "atomic" : "deterministic");
      ++compared;
    }
  }
  EXPECT_GT(compared, 800);
}

TEST(CudaScatterOnHost, ManyUpdatesPerTargetOverAGridStride) {
  // 4096 float32 updates into 3 targets (ScatterElements add along axis 0 of [4096, 1] -> [3, 1]),
  // then 64-element rows (index_add of [512, 64] into [5, 64]): one fake multiprocessor with the
  // real cap leaves grid-stride passes; the deterministic combine must still add in row-major
  // order, bit for bit the reference's float sum.
  for (const std::int64_t width : {std::int64_t{1}, std::int64_t{64}}) {
    Case c;
    c.dtype = DType::kFloat32;
    c.index_dtype = DType::kInt64;
    const std::int64_t n = width == 1 ? 4096 : 512, targets = width == 1 ? 3 : 5;
    c.input_shape = {targets, width};
    c.indices_shape = {n, 1};
    c.updates_shape = {n, width};
    c.axes = {0};
    c.options.reduction = Reduction::kAdd;
    std::mt19937_64 rng(seed() + static_cast<std::uint64_t>(width));
    test::fill_random(rng, c.input, c.dtype, targets * width);
    test::fill_random(rng, c.updates, c.dtype, n * width);
    c.indices.resize(static_cast<std::size_t>(n) * 8);
    for (std::int64_t i = 0; i < n; ++i) {
      const std::int64_t v = test::uniform(rng, 0, targets - 1);
      std::memcpy(c.indices.data() + i * 8, &v, 8);
    }
    c.output_strides = contiguous_strides(c.input_shape);
    c.output_span = targets * width;
    const Result ref = test::run_case(c, true, 1);
    ASSERT_TRUE(ref.status.ok());
    const HostRun got = run_on_host(c, false, false, 1);
    ASSERT_TRUE(got.ran);
    EXPECT_TRUE(got.bytes == ref.bytes) << "width " << width;
  }
}

// ---- Segment ops: the output filled with a host element, then the scatter -------------------

// The fill (scatter_rows.hpp's fill_thread) over every thread of launch_fill's grid, on the host.
void fill_on_host(const detail::CudaFillParams& f, int multiprocessors) {
  const std::int64_t threads = detail::elementwise_blocks(f.units, multiprocessors) * detail::kThreadsPerBlock;
  for (std::int64_t t = 0; t < threads; ++t) {
    switch (f.unit_bytes) {
      case 1: detail::fill_thread<1>(f, t, threads); break;
      case 2: detail::fill_thread<2>(f, t, threads); break;
      case 4: detail::fill_thread<4>(f, t, threads); break;
      case 8: detail::fill_thread<8>(f, t, threads); break;
      case 16: detail::fill_thread<16>(f, t, threads); break;
      default: FAIL() << "unit_bytes " << f.unit_bytes;
    }
  }
}

TEST(CudaScatterOnHost, FillWritesEveryElementAndNothingElse) {
  // Every element width, counts with and without a tail of the 16-byte unit, starts aligned and
  // not: each element gets the value's bytes, the bytes around stay, and the unit is the widest
  // the address and the length allow.
  std::mt19937_64 rng(seed() + 7);
  for (const std::size_t es : {1, 2, 4, 8, 16}) {
    for (const std::int64_t count : {0, 1, 3, 8, 17, 1000, 4099}) {
      for (std::size_t shift = 0; shift < 16; shift += es) {
        std::vector<unsigned char> element(es);
        for (auto& b : element) b = static_cast<unsigned char>(rng());
        alignas(16) static unsigned char buffer[16 * 4200];
        std::memset(buffer, 0xA5, sizeof buffer);
        unsigned char* out = buffer + 16 + shift;
        detail::CudaFillParams f;
        detail::make_cuda_fill_params(out, count, es, element.data(), &f);
        const std::int64_t bytes = count * static_cast<std::int64_t>(es);
        std::int64_t widest = 16;
        while (widest > static_cast<std::int64_t>(es) &&
               (bytes % widest != 0 || (16 + shift) % static_cast<std::size_t>(widest) != 0)) {
          widest /= 2;
        }
        EXPECT_EQ(f.unit_bytes, widest) << es << " " << count << " " << shift;
        EXPECT_EQ(f.units * f.unit_bytes, bytes);
        fill_on_host(f, 3);
        for (std::int64_t i = 0; i < count; ++i) {
          ASSERT_EQ(std::memcmp(out + i * static_cast<std::int64_t>(es), element.data(), es), 0)
              << "element " << i << " of " << count << ", " << es << " bytes, shift " << shift;
        }
        for (unsigned char* p = buffer; p < out; ++p) ASSERT_EQ(*p, 0xA5);
        for (unsigned char* p = out + bytes; p < buffer + sizeof buffer; ++p) ASSERT_EQ(*p, 0xA5);
      }
    }
  }
}

TEST(CudaScatterOnHost, MeanDivisionMatchesTheCpuEngine) {
  // divide_rows.hpp's body over its grid against the CPU engine's divide_by_count, byte for byte:
  // every dtype with a division, the input counted or not, sqrt_n, a strided output and a count
  // broadcast along one dimension (stride 0) holding 0 (left as it is), 1 and more.
  std::mt19937_64 rng(seed() + 17);
  const Dims shape{5, 4, 3};
  std::vector<std::int64_t> counts(5 * 3);
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<std::int64_t>(i % 6);
  const TensorView count(counts.data(), DType::kInt64, shape, {3, 0, 1});
  for (const DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kComplex64,
                            DType::kComplex128, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kInt8}) {
    for (const bool sqrt_count : {false, true}) {
      for (const bool include_input : {false, true}) {
        SCOPED_TRACE(std::string(dtype_name(dtype)) + (sqrt_count ? " sqrt" : "") + (include_input ? " input" : ""));
        const std::size_t es = element_size(dtype);
        std::vector<std::byte> want(2 * 60 * es), got;
        for (auto& b : want) b = static_cast<std::byte>(rng());
        if (dtype == DType::kFloat16 || dtype == DType::kBFloat16) {  // finite halves: clear the exponent's top bit
          for (std::size_t i = 1; i < want.size(); i += 2) want[i] &= std::byte{0x3F};
        }
        got = want;
        // every other element of a [5, 4, 3] view, dimensions reversed in memory order
        const Dims strides{2, 10, 40};
        const MutableTensorView cpu_out(want.data(), dtype, shape, strides);
        const bool divides = detail::divide_by_count(cpu_out, count, include_input, sqrt_count);
        ASSERT_EQ(detail::visit_divide(dtype, sqrt_count, []<class Op>() {}), divides);
        if (!divides) continue;
        detail::CudaDivideParams p;
        p.out = got.data();
        p.count = counts.data();
        p.numel = 60;
        p.rank = 3;
        for (int d = 0; d < 3; ++d) {
          p.shape[d] = shape[d];
          p.out_strides[d] = strides[d];
          p.count_strides[d] = count.strides[d];
        }
        p.extra = include_input ? 1 : 0;
        p.sqrt_count = sqrt_count;
        const std::int64_t threads = 7;  // a grid-stride loop that wraps
        detail::visit_divide(dtype, sqrt_count, [&]<class Op>() {
          for (std::int64_t t = 0; t < threads; ++t) detail::divide_thread<Op>(p, t, threads);
        });
        EXPECT_EQ(std::memcmp(got.data(), want.data(), want.size()), 0);
      }
    }
  }
}

struct SegmentCall {
  const char* op;
  Attributes attrs;
  DType dtype;
  Dims data_shape;
  DType ids_dtype;
  Dims ids_shape;
  std::int64_t id_low, id_high;  // ids drawn from [id_low, id_high]
};

// A segment op's core scatter as the CUDA engine runs it on device operands (cuda_api.cpp): its
// input is ONE host element broadcast to the output, so the output is filled with that element
// (fill_on_host), then keys, the stable sort and the owner's combine (run_on_host's steps); equal
// byte for byte to the CPU engine's execute of the same lowering.
TEST(CudaScatterOnHost, SegmentOpsStartFromTheFilledIdentityAndMatchTheCpuEngine) {
  const auto attrs = [](std::initializer_list<std::pair<const char*, const char*>> kv) {
    Attributes a;
    for (const auto& [k, v] : kv) a.set(k, v);
    return a;
  };
  const std::vector<SegmentCall> calls = {
      {"jax.ops.segment_sum", attrs({{"num_segments", "7"}}), DType::kFloat32, {40, 3}, DType::kInt32, {40}, -2, 8},
      {"jax.ops.segment_max", attrs({{"num_segments", "7"}}), DType::kFloat32, {40, 3}, DType::kInt64, {40}, -1, 8},
      {"jax.ops.segment_min", attrs({{"num_segments", "5"}}), DType::kFloat64, {33}, DType::kInt32, {33}, 0, 6},
      {"jax.ops.segment_prod", attrs({{"num_segments", "6"}, {"mode", "clip"}}), DType::kInt32, {30, 2}, DType::kInt64,
       {30}, -3, 9},
      {"tf.math.unsorted_segment_max", attrs({{"num_segments", "9"}}), DType::kFloat32, {25, 4}, DType::kInt32, {25},
       0, 8},
      {"tf.math.unsorted_segment_sum", attrs({{"num_segments", "4"}}), DType::kFloat64, {6, 5, 2}, DType::kInt64, {6, 5},
       -1, 3},
      {"torch_scatter.scatter", attrs({{"dim", "0"}, {"dim_size", "6"}, {"reduce", "sum"}}), DType::kFloat32, {50, 4},
       DType::kInt64, {50}, 0, 5},
      {"torch_scatter.scatter", attrs({{"dim", "0"}, {"dim_size", "6"}, {"reduce", "max"}}), DType::kFloat32, {50, 4},
       DType::kInt64, {50}, 0, 5},
      {"torch_scatter.scatter", attrs({{"dim", "1"}, {"dim_size", "5"}, {"reduce", "min"}}), DType::kFloat64, {3, 20},
       DType::kInt64, {3, 20}, 0, 4},
      {"torch_scatter.scatter", attrs({{"dim", "-1"}, {"dim_size", "4"}, {"reduce", "mul"}}), DType::kInt64, {2, 3, 9},
       DType::kInt64, {9}, 0, 3},
      {"torch_scatter.segment_coo", attrs({{"dim_size", "5"}, {"reduce", "sum"}}), DType::kFloat32, {2, 12, 3},
       DType::kInt64, {2, 12}, 0, 4},
  };
  std::mt19937_64 rng(seed() + 11);
  for (const SegmentCall& c : calls) {
    SCOPED_TRACE(c.op);
    Tensor data(c.dtype, c.data_shape), ids(c.ids_dtype, c.ids_shape);
    std::uniform_int_distribution<int> small(-4, 4);
    for (std::int64_t i = 0; i < data.numel(); ++i) {  // small integers: products stay exact
      const double v = small(rng) * (c.dtype == DType::kInt32 || c.dtype == DType::kInt64 ? 1.0 : 0.5);
      auto* p = static_cast<std::byte*>(data.data()) + i * static_cast<std::int64_t>(element_size(c.dtype));
      switch (c.dtype) {
        case DType::kFloat32: { const float f = static_cast<float>(v); std::memcpy(p, &f, 4); break; }
        case DType::kFloat64: std::memcpy(p, &v, 8); break;
        case DType::kInt32: { const auto n = static_cast<std::int32_t>(v); std::memcpy(p, &n, 4); break; }
        default: { const auto n = static_cast<std::int64_t>(v); std::memcpy(p, &n, 8); break; }
      }
    }
    std::uniform_int_distribution<std::int64_t> id(c.id_low, c.id_high);
    std::vector<std::int64_t> drawn(static_cast<std::size_t>(ids.numel()));
    for (auto& v : drawn) v = id(rng);
    if (std::string(c.op) == "torch_scatter.segment_coo") std::sort(drawn.begin(), drawn.end());
    for (std::size_t i = 0; i < drawn.size(); ++i) {
      if (c.ids_dtype == DType::kInt32) static_cast<std::int32_t*>(ids.data())[i] = static_cast<std::int32_t>(drawn[i]);
      else static_cast<std::int64_t*>(ids.data())[i] = drawn[i];
    }
    if (std::string(c.op) == "tf.math.unsorted_segment_sum" || std::string(c.op) == "torch_scatter.scatter" ||
        std::string(c.op) == "torch_scatter.segment_coo" || std::string(c.op) == "tf.math.unsorted_segment_max") {
      for (std::size_t i = 0; i < drawn.size(); ++i) {  // these raise on ids past the end: keep them in range
        const std::int64_t v = std::clamp<std::int64_t>(drawn[i], std::string(c.op).rfind("tf.", 0) == 0 ? -1 : 0, c.id_high);
        if (c.ids_dtype == DType::kInt32) static_cast<std::int32_t*>(ids.data())[i] = static_cast<std::int32_t>(v);
        else static_cast<std::int64_t*>(ids.data())[i] = v;
      }
    }
    Tensor want;
    const Status ran = run_op(c.op, data.view(), ids.view(), c.attrs, &want);
    ASSERT_TRUE(ran.ok()) << ran.message();
    Lowering l;
    ASSERT_TRUE(lower_op(c.op, data.view(), ids.view(), c.attrs, &l).ok());
    ASSERT_TRUE(l.input_is_constant);
    const ScatterOptions options = l.scatter_options();
    detail::ValidatedScatter call;
    call.gather.shape = l.shape;
    ASSERT_TRUE(detail::check_scatter_operands(l.input, l.indices, l.updates, options, &call).ok());
    Tensor got(c.dtype, want.shape());
    std::memset(got.data(), 0x5A, static_cast<std::size_t>(got.numel()) * element_size(c.dtype));
    const MutableTensorView core(got.data(), c.dtype, l.core_output_shape, l.core_output_strides);
    ASSERT_TRUE(detail::validate_scatter_output(core, l.input, l.indices, l.updates, call, "output").ok());
    // 2. the fill with the host element (ONE element: every stride of the input is 0).
    for (int d = 0; d < l.input.rank(); ++d) ASSERT_TRUE(l.input.shape[d] <= 1 || l.input.strides[d] == 0);
    detail::CudaFillParams f;
    detail::make_cuda_fill_params(got.data(), got.numel(), element_size(c.dtype), l.input.data, &f);
    fill_on_host(f, 2);
    if (call.gather.shape.output_numel > 0) {
      detail::CudaScatterParams s;
      detail::make_cuda_scatter_params(core, l.indices, call, options, &s);
      const std::size_t n = static_cast<std::size_t>(s.rows.rows);
      std::vector<std::uint64_t> keys(n), values(n);
      s.keys = keys.data();
      s.values = values.data();
      std::uint32_t flag = 0;
      if (options.index_mode == IndexMode::kError) s.rows.error_flag = &flag;
      RunKeys keys_run{&s, detail::scatter_key_blocks(s, 2) * detail::kThreadsPerBlock};
      ASSERT_TRUE(detail::visit_kernel_variant(s.rows, keys_run));
      ASSERT_EQ(flag, 0u);
      if (s.rows.offsets32) combine_on_host<std::int32_t>(s, c.dtype, call.reduction, false, 2);
      else combine_on_host<std::int64_t>(s, c.dtype, call.reduction, false, 2);
    }
    ASSERT_EQ(got.numel(), want.numel());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(want.numel()) * element_size(c.dtype)), 0);
  }
}

TEST(CudaScatterParams, KeysCoverNegativeStridesAndTheDroppedKeySortsLast) {
  // A reversed output [4, 3] (strides [-3, -1]): target offsets run from -11 to 0, so the bias
  // is 11 and keys 0..11 need 4 bits, whose all-ones value (15, the dropped key's low bits)
  // exceeds every key.
  std::vector<float> out(12), updates(6);
  std::vector<std::int64_t> ids = {0, 3};
  const TensorView in(out.data() + 11, DType::kFloat32, {4, 3}, {-3, -1});
  const MutableTensorView out_view(out.data() + 11, DType::kFloat32, {4, 3}, {-3, -1});
  const TensorView ix(ids.data(), DType::kInt64, {2, 1});
  const TensorView up(updates.data(), DType::kFloat32, {2, 3});
  const std::int64_t axes[] = {0};
  ScatterOptions o;
  o.reduction = Reduction::kAdd;
  detail::ValidatedScatter call;
  ASSERT_TRUE(detail::validate_scatter_operands(in, ix, up, axes, o, &call).ok());
  detail::CudaScatterParams s;
  detail::make_cuda_scatter_params(out_view, ix, call, o, &s);
  EXPECT_EQ(s.target_bias, 11);
  EXPECT_EQ(s.key_shift, 0);  // the strides 3 and 1 share no power of two
  EXPECT_EQ(s.key_bits, 4);
  EXPECT_EQ(s.rows.unit_bytes, 4);  // one element: the combine works on whole elements
  EXPECT_EQ(s.rows.rows_per_thread, 1);
  EXPECT_EQ(detail::scatter_key_blocks(s, 1), 1);
}

TEST(CudaScatterParams, RowScattersSortOnlyTheKeyBitsThatMove) {
  // index_add of 64-element rows into [50, 64] (indices [7, 1], broadcast along the row): every
  // target row starts at a multiple of 64, so the keys are row numbers (shift 6) and 49 needs 6
  // bits. The same output with an index per element (ScatterElements: one element a row, the
  // column's stride 1 moves it) and 3-element rows (stride 3) keep every bit.
  const auto plan = [](std::int64_t width, std::int64_t index_width) {
    std::vector<float> out(static_cast<std::size_t>(50 * width)), updates(static_cast<std::size_t>(7 * width));
    std::vector<std::int64_t> ids(7 * static_cast<std::size_t>(index_width), 3);
    const MutableTensorView out_view(out.data(), DType::kFloat32, {50, width});
    const TensorView ix(ids.data(), DType::kInt64, {7, index_width});
    const TensorView up(updates.data(), DType::kFloat32, {7, width});
    const std::int64_t axes[] = {0};
    ScatterOptions o;
    o.reduction = Reduction::kAdd;
    detail::ValidatedScatter call;
    EXPECT_TRUE(detail::validate_scatter_operands(TensorView(out_view.data, DType::kFloat32, out_view.shape), ix, up,
                                                  axes, o, &call).ok());
    detail::CudaScatterParams s;
    detail::make_cuda_scatter_params(out_view, ix, call, o, &s);
    return std::pair<int, int>(s.key_shift, s.key_bits);
  };
  EXPECT_EQ(plan(64, 1), (std::pair<int, int>(6, 6)));
  EXPECT_EQ(plan(64, 64), (std::pair<int, int>(0, 12)));  // 49 * 64 + 63 = 3199 < 2^12 - 1
  EXPECT_EQ(plan(3, 1), (std::pair<int, int>(0, 8)));     // 49 * 3 = 147 < 2^8 - 1
}

TEST(CudaScatterNoDevice, ValidationFirstThenTheMissingDevice) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  // Shape errors are the CPU core's, word for word, before any device question.
  std::vector<float> input(12), updates(6), out(12);
  std::vector<std::int64_t> ids = {0, 2};
  const std::int64_t axes[] = {0};
  const TensorView in(input.data(), DType::kFloat32, {4, 3});
  const TensorView ix(ids.data(), DType::kInt64, {2, 1});
  const TensorView bad_updates(updates.data(), DType::kFloat32, {3, 2});
  const MutableTensorView out_view(out.data(), DType::kFloat32, {4, 3});
  const Status cpu = scatter_multiaxis_into(in, ix, bad_updates, axes, out_view);
  const Status gpu = scatter_multiaxis_cuda_into(in, ix, bad_updates, axes, out_view);
  ASSERT_EQ(cpu.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(gpu.code(), cpu.code());
  EXPECT_EQ(gpu.message(), cpu.message());
  const Status no_device =
      scatter_multiaxis_cuda_into(in, ix, TensorView(updates.data(), DType::kFloat32, {2, 3}), axes, out_view);
  EXPECT_EQ(no_device.code(), StatusCode::kInternal);
  EXPECT_EQ(no_device.message(), "no CUDA device is available");
  // A framework scatter sent to the CUDA engine by the context says so, naming the op.
  Attributes attrs;
  attrs.set("dim", "0");
  Lowering l;
  ASSERT_TRUE(lower_op("torch.index_add", in, TensorView(ids.data(), DType::kInt64, {2}),
                       TensorView(updates.data(), DType::kFloat32, {2, 3}), attrs, &l).ok());
  ExecutionContext context;
  context.device = Device::kCUDA;
  const Status e = execute(l, out_view, context);
  EXPECT_EQ(e.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(e.message().find("torch.index_add: the CUDA engine was asked for, but no CUDA device"),
            std::string::npos) << e.message();
}

// ---- On a GPU --------------------------------------------------------------------------------

// Device memory holding a copy of `bytes`, freed at scope exit.
struct DeviceBytes {
  void* data = nullptr;
  std::size_t size = 0;
  explicit DeviceBytes(const std::vector<std::byte>& bytes) : size(bytes.size()) {
    EXPECT_EQ(cudaMalloc(&data, std::max<std::size_t>(size, 16)), cudaSuccess);
    if (size > 0) EXPECT_EQ(cudaMemcpy(data, bytes.data(), size, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBytes() { cudaFree(data); }
  std::vector<std::byte> download() const {
    std::vector<std::byte> host(size);
    if (size > 0) EXPECT_EQ(cudaMemcpy(host.data(), data, size, cudaMemcpyDeviceToHost), cudaSuccess);
    return host;
  }
};

// The bytes of a vector's elements (what DeviceBytes copies to the device).
template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
  std::vector<std::byte> b(v.size() * sizeof(T));
  if (!b.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

Result run_on_device(const Case& c, ScatterDeterminism mode, cudaStream_t stream) {
  std::vector<std::byte> poisoned;
  test::views_of(c, &poisoned);
  DeviceBytes in(c.input), ix(c.indices), up(c.updates), out(poisoned);
  const std::size_t es = element_size(c.dtype);
  const MutableTensorView out_view(static_cast<std::byte*>(out.data) + c.output_origin * static_cast<std::int64_t>(es),
                                   c.dtype, c.input_shape, c.output_strides);
  Result r;
  r.status = scatter_multiaxis_cuda_into(TensorView(in.data, c.dtype, c.input_shape),
                                         TensorView(ix.data, c.index_dtype, c.indices_shape),
                                         TensorView(up.data, c.dtype, c.updates_shape), c.axes, out_view,
                                         c.options, stream, mode);
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  r.bytes = out.download();
  return r;
}

bool order_independent(const Case& c) {
  const bool is_float = c.dtype == DType::kFloat16 || c.dtype == DType::kBFloat16 || c.dtype == DType::kFloat32 ||
                        c.dtype == DType::kFloat64 || c.dtype == DType::kComplex64 || c.dtype == DType::kComplex128;
  if (c.options.reduction == Reduction::kNone) return false;  // which duplicate wins
  return !is_float || c.options.reduction == Reduction::kMin || c.options.reduction == Reduction::kMax;
}

TEST(CudaScatter, RandomPlansMatchTheCpuEngine) {
  SKIP_WITHOUT_DEVICE();
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  std::mt19937_64 rng(seed() + 1);
  for (int i = 0; i < 600; ++i) {
    const std::uint64_t case_seed = rng();
    std::mt19937_64 case_rng(case_seed);
    const Case c = test::random_case(case_rng);
    SCOPED_TRACE("case seed " + std::to_string(case_seed) + ": " + test::describe(c));
    const Result want = test::run_case(c, false, 1);  // the CPU engine
    const Result det = run_on_device(c, ScatterDeterminism::kDeterministic, stream);
    ASSERT_EQ(det.status.code(), want.status.code()) << det.status.message();
    ASSERT_EQ(det.status.message(), want.status.message());
    if (want.status.ok()) ASSERT_TRUE(test::same_up_to_nan_bits(det.bytes, want.bytes, c.dtype)) << "deterministic";
    const Result atomic = run_on_device(c, ScatterDeterminism::kAtomic, stream);
    ASSERT_EQ(atomic.status.code(), want.status.code()) << atomic.status.message();
    if (want.status.ok() && order_independent(c)) {
      ASSERT_TRUE(test::same_up_to_nan_bits(atomic.bytes, want.bytes, c.dtype)) << "atomic";
    }
  }
  cudaStreamDestroy(stream);
}

TEST(CudaScatter, ComplexMinMaxWithNansTiesAndSignedZerosMatchTheCpuEngine) {
  SKIP_WITHOUT_DEVICE();
  // Deterministic mode chooses the CPU engine's pair every time, NaN bits included. Atomic
  // mode (complex64 swaps the pair; complex128 runs deterministically) gives the same bytes
  // where no NaN and no zero part is in play (then every order picks the same pair).
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  std::mt19937_64 rng(seed() + 10);
  for (int i = 0; i < 300; ++i) {
    const std::uint64_t case_seed = rng();
    std::mt19937_64 case_rng(case_seed);
    const Case c = test::random_complex_order_case(case_rng);
    SCOPED_TRACE("case seed " + std::to_string(case_seed) + ": " + test::describe(c));
    const Result want = test::run_case(c, false, 1);
    const Result det = run_on_device(c, ScatterDeterminism::kDeterministic, stream);
    ASSERT_EQ(det.status.code(), want.status.code()) << det.status.message();
    if (want.status.ok()) ASSERT_TRUE(det.bytes == want.bytes) << "deterministic";
    const Result atomic = run_on_device(c, ScatterDeterminism::kAtomic, stream);
    ASSERT_EQ(atomic.status.code(), want.status.code()) << atomic.status.message();
    const auto special = [&](const std::vector<std::byte>& bytes) {  // a NaN or a zero part
      const bool single = c.dtype == DType::kComplex64;
      for (std::size_t at = 0; at < bytes.size(); at += single ? 4 : 8) {
        double v = 0;
        if (single) { float f; std::memcpy(&f, bytes.data() + at, 4); v = f; } else { std::memcpy(&v, bytes.data() + at, 8); }
        if (v != v || v == 0) return true;
      }
      return false;
    };
    if (want.status.ok() && (c.dtype == DType::kComplex128 || (!special(c.input) && !special(c.updates)))) {
      ASSERT_TRUE(atomic.bytes == want.bytes) << "atomic";
    }
  }
  cudaStreamDestroy(stream);
}

TEST(CudaScatter, AtomicFloatAddIsCloseAndDeterministicIsExact) {
  SKIP_WITHOUT_DEVICE();
  // index_add of 100000 float32 rows of 16 into 37 targets: deterministic equals the CPU engine
  // bit for bit on every run; atomic equals it to float32 rounding of the sums.
  Case c;
  c.dtype = DType::kFloat32;
  c.input_shape = {37, 16};
  c.indices_shape = {100000, 1};
  c.updates_shape = {100000, 16};
  c.axes = {0};
  c.options.reduction = Reduction::kAdd;
  std::mt19937_64 rng(seed() + 2);
  test::fill_random(rng, c.input, c.dtype, 37 * 16);
  test::fill_random(rng, c.updates, c.dtype, 100000 * 16);
  c.indices.resize(100000 * 8);
  for (std::int64_t i = 0; i < 100000; ++i) {
    const std::int64_t v = test::uniform(rng, 0, 36);
    std::memcpy(c.indices.data() + i * 8, &v, 8);
  }
  c.output_strides = contiguous_strides(c.input_shape);
  c.output_span = 37 * 16;
  const Result want = test::run_case(c, false, 2);
  ASSERT_TRUE(want.status.ok());
  for (int run = 0; run < 3; ++run) {
    const Result det = run_on_device(c, ScatterDeterminism::kDeterministic, nullptr);
    ASSERT_TRUE(det.status.ok()) << det.status.message();
    EXPECT_TRUE(det.bytes == want.bytes) << "run " << run;
  }
  // Atomic: within the two summation orders' worst-case rounding (each sum of n terms is off by
  // at most (n - 1) u sum|x|, u = 2^-24), per output element. (A fixed 1e-2 failed one run in
  // several: 2700 terms of up to 143 drift further.)
  const Result atomic = run_on_device(c, ScatterDeterminism::kAtomic, nullptr);
  ASSERT_TRUE(atomic.status.ok());
  std::vector<float> a(37 * 16), w(37 * 16), in(37 * 16), up(100000 * 16);
  std::memcpy(a.data(), atomic.bytes.data(), a.size() * 4);
  std::memcpy(w.data(), want.bytes.data(), w.size() * 4);
  std::memcpy(in.data(), c.input.data(), in.size() * 4);
  std::memcpy(up.data(), c.updates.data(), up.size() * 4);
  std::vector<double> magnitude(37 * 16), terms(37 * 16, 1.0);
  for (std::size_t i = 0; i < in.size(); ++i) magnitude[i] = std::abs(in[i]);
  for (std::int64_t r = 0; r < 100000; ++r) {
    std::int64_t t = 0;
    std::memcpy(&t, c.indices.data() + r * 8, 8);
    for (int j = 0; j < 16; ++j) {
      magnitude[t * 16 + j] += std::abs(up[r * 16 + j]);
      terms[t * 16 + j] += 1;
    }
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], w[i], 2 * terms[i] * std::ldexp(magnitude[i], -24)) << i;
  }
  // With every partial sum exact in float32 (multiples of 1/8 below 2^21), any order gives the
  // same bytes: the atomic result then equals the CPU engine's exactly (no update lost or doubled).
  for (std::size_t i = 0; i < up.size(); ++i) up[i] = static_cast<float>(test::uniform(rng, -1000, 1000)) / 8.f;
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(test::uniform(rng, -1000, 1000)) / 8.f;
  std::memcpy(c.updates.data(), up.data(), up.size() * 4);
  std::memcpy(c.input.data(), in.data(), in.size() * 4);
  const Result exact = test::run_case(c, false, 2);
  ASSERT_TRUE(exact.status.ok());
  const Result exact_atomic = run_on_device(c, ScatterDeterminism::kAtomic, nullptr);
  ASSERT_TRUE(exact_atomic.status.ok());
  EXPECT_TRUE(exact_atomic.bytes == exact.bytes);
}

TEST(CudaScatter, OneBlockSortAndDeviceSortAroundTheirThresholdEqualTheCpuEngine) {
  SKIP_WITHOUT_DEVICE();
  // Up to 8192 rows (32-bit offsets) the deterministic scatter sorts in one thread block
  // (scatter_kernel.cu: small_sort_kernel), beyond with cub::DeviceRadixSort: float32 add and
  // reduction none (the last update wins: the sort's stability decides it) on both sides of the
  // threshold, few targets and many, with dropped rows (clamp would hide them: drop mode, a tenth
  // of the ids out of range), equal the CPU engine byte for byte.
  std::mt19937_64 rng(seed() + 3);
  for (const std::int64_t rows : {1, 100, 8191, 8192, 8193, 40000}) {
    for (const std::int64_t targets : {3, 5000}) {
      for (const Reduction reduction : {Reduction::kAdd, Reduction::kNone}) {
        Case c;
        c.dtype = DType::kFloat32;
        c.input_shape = {targets, 4};
        c.indices_shape = {rows, 1};
        c.updates_shape = {rows, 4};
        c.axes = {0};
        c.options.reduction = reduction;
        c.options.index_mode = IndexMode::kDrop;
        test::fill_random(rng, c.input, c.dtype, targets * 4);
        test::fill_random(rng, c.updates, c.dtype, rows * 4);
        c.indices.resize(static_cast<std::size_t>(rows) * 8);
        for (std::int64_t i = 0; i < rows; ++i) {
          const std::int64_t v = test::uniform(rng, 0, targets + targets / 10);
          std::memcpy(c.indices.data() + i * 8, &v, 8);
        }
        c.output_strides = contiguous_strides(c.input_shape);
        c.output_span = targets * 4;
        SCOPED_TRACE(std::to_string(rows) + " rows into " + std::to_string(targets) + ", reduction " +
                     std::string(reduction_name(reduction)));
        const Result want = test::run_case(c, false, 2);
        ASSERT_TRUE(want.status.ok()) << want.status.message();
        const Result got = run_on_device(c, ScatterDeterminism::kDeterministic, nullptr);
        ASSERT_TRUE(got.status.ok()) << got.status.message();
        EXPECT_TRUE(got.bytes == want.bytes);
      }
    }
  }
}

TEST(CudaScatter, FrameworkScatterRunsThroughExecuteOnDevicePointers) {
  SKIP_WITHOUT_DEVICE();
  // torch.index_add (dim 0) with device operands: execute picks the CUDA engine from where the
  // operands live; the result equals the same call on host operands.
  const std::vector<float> self = {1, 2, 3, 4, 5, 6}, source = {10, 20, 30, 40, 50, 60};
  const std::vector<std::int64_t> index = {2, 0, 2};
  Attributes attrs;
  attrs.set("dim", "0");
  const Tensor want = run_op("torch.index_add", TensorView(self.data(), DType::kFloat32, {3, 2}),
                             TensorView(index.data(), DType::kInt64, {3}),
                             TensorView(source.data(), DType::kFloat32, {3, 2}), attrs);
  DeviceBytes d_self(bytes_of(self)), d_index(bytes_of(index)), d_source(bytes_of(source));
  DeviceBytes d_out(std::vector<std::byte>(24));
  Lowering l;
  ASSERT_TRUE(lower_op("torch.index_add", TensorView(d_self.data, DType::kFloat32, {3, 2}),
                       TensorView(d_index.data, DType::kInt64, {3}),
                       TensorView(d_source.data, DType::kFloat32, {3, 2}), attrs, &l, Device::kCUDA).ok());
  const Status s = execute(l, MutableTensorView(d_out.data, DType::kFloat32, {3, 2}));
  ASSERT_TRUE(s.ok()) << s.message();
  const auto got = d_out.download();
  EXPECT_EQ(std::memcmp(got.data(), want.data(), 24), 0);
  // An out-of-range index: the framework's message, the output unchanged.
  const std::vector<std::int64_t> bad = {2, 0, 3};
  DeviceBytes d_bad(bytes_of(bad));
  Lowering lb;
  ASSERT_TRUE(lower_op("torch.index_add", TensorView(d_self.data, DType::kFloat32, {3, 2}),
                       TensorView(d_bad.data, DType::kInt64, {3}),
                       TensorView(d_source.data, DType::kFloat32, {3, 2}), attrs, &lb, Device::kCUDA).ok());
  const Status e = execute(lb, MutableTensorView(d_out.data, DType::kFloat32, {3, 2}));
  EXPECT_EQ(e.code(), StatusCode::kOutOfRange);
  EXPECT_NE(e.message().find("index[2] = 3"), std::string::npos) << e.message();
}

TEST(CudaScatter, SegmentOpsRunOnDevicePointers) {
  SKIP_WITHOUT_DEVICE();
  // Segment ops on device operands (their identity a host element the engine fills in; means
  // counted and divided there) equal the same calls on host operands, byte for byte; so do the
  // VJPs of a sum, a mean, a max and a min. Lowerings that read ids on
  // the host to size the output refuse device operands with a message that names them.
  std::mt19937_64 rng(seed() + 13);
  std::uniform_int_distribution<int> small(-6, 6);
  std::uniform_int_distribution<std::int64_t> id(-1, 6);
  std::vector<float> data(40 * 3);
  for (float& v : data) v = 0.25f * static_cast<float>(small(rng));
  std::vector<std::int64_t> ids(40), in_range(40);
  for (std::size_t i = 0; i < ids.size(); ++i) {
    ids[i] = id(rng);
    in_range[i] = std::clamp<std::int64_t>(ids[i], 0, 5);
  }
  const TensorView h_data(data.data(), DType::kFloat32, {40, 3});
  DeviceBytes d_data(bytes_of(data)), d_ids(bytes_of(ids)), d_in_range(bytes_of(in_range));
  struct Call {
    const char* op;
    std::vector<std::pair<const char*, const char*>> attrs;
    bool ids_in_range;  // torch_scatter and TF raise on an index outside [0, dim_size / num_segments)
  };
  const std::vector<Call> calls = {
      {"jax.ops.segment_sum", {{"num_segments", "6"}}, false},
      {"jax.ops.segment_max", {{"num_segments", "6"}}, false},
      {"tf.math.unsorted_segment_min", {{"num_segments", "7"}}, false},
      {"torch_scatter.scatter", {{"dim", "0"}, {"dim_size", "6"}, {"reduce", "max"}}, true},
      {"torch_scatter.scatter", {{"dim", "0"}, {"dim_size", "6"}, {"reduce", "sum"}}, true},
      {"torch_scatter.scatter", {{"dim", "0"}, {"dim_size", "6"}, {"reduce", "mean"}}, true},
      {"tf.math.unsorted_segment_sqrt_n", {{"num_segments", "7"}}, false},  // TF refuses ids >= num_segments
  };
  for (const Call& c : calls) {
    SCOPED_TRACE(c.op);
    Attributes attrs;
    for (const auto& [k, v] : c.attrs) attrs.set(k, v);
    const std::vector<std::int64_t>& host_ids = c.ids_in_range ? in_range : ids;
    const TensorView h_ids(host_ids.data(), DType::kInt64, {40});
    const Tensor want = run_op(c.op, h_data, h_ids, attrs);
    const TensorView dev_ids(c.ids_in_range ? d_in_range.data : d_ids.data, DType::kInt64, {40});
    const TensorView dev_data(d_data.data, DType::kFloat32, {40, 3});
    Lowering l;
    const Status lowered = lower_op(c.op, dev_data, dev_ids, attrs, &l);
    ASSERT_TRUE(lowered.ok()) << lowered.message();
    EXPECT_EQ(l.device, Device::kCUDA);
    DeviceBytes d_out(std::vector<std::byte>(static_cast<std::size_t>(want.numel()) * 4, std::byte{0x5A}));
    const Status ran = execute(l, MutableTensorView(d_out.data, DType::kFloat32, want.shape()));
    ASSERT_TRUE(ran.ok()) << ran.message();
    const auto got = d_out.download();
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
  }
  // VJPs on the device, against the host's bytes: the sum (grad_output gathered at each row's
  // segment, 0 where dropped), the mean (divided by each segment's count first), max / min
  // with many ties (JAX's rule shares a segment's gradient among them, torch_scatter's gives it
  // to the first one), and prod with zeros in the data (0.25 * small(rng): one in 13 is 0).
  std::vector<float> grad_output(6 * 3);
  for (float& v : grad_output) v = static_cast<float>(small(rng));
  DeviceBytes d_grad_output(bytes_of(grad_output));
  ExecutionContext on_device;
  on_device.device = Device::kCUDA;
  const std::vector<Call> vjps = {
      {"jax.ops.segment_sum", {{"num_segments", "6"}}, false},
      {"tf.math.unsorted_segment_mean", {{"num_segments", "6"}}, true},  // TF refuses ids >= num_segments
      {"jax.ops.segment_max", {{"num_segments", "6"}}, false},
      {"tf.math.unsorted_segment_min", {{"num_segments", "6"}}, true},  // TF refuses ids >= num_segments
      {"torch_scatter.scatter", {{"dim", "0"}, {"dim_size", "6"}, {"reduce", "max"}}, true},
      {"jax.ops.segment_prod", {{"num_segments", "6"}}, false},  // zeros among the data: TF's rule
      {"torch_scatter.scatter", {{"dim", "0"}, {"dim_size", "6"}, {"reduce", "mul"}}, true},
  };
  for (const Call& c : vjps) {
    SCOPED_TRACE(std::string(c.op) + " VJP");
    Attributes attrs;
    for (const auto& [k, v] : c.attrs) attrs.set(k, v);
    const std::vector<std::int64_t>& host_ids = c.ids_in_range ? in_range : ids;
    std::vector<float> want(40 * 3, -1.0f);
    const Status host = execute_vjp(c.op, h_data, TensorView(host_ids.data(), DType::kInt64, {40}), nullptr, attrs, 0,
                                    TensorView(grad_output.data(), DType::kFloat32, {6, 3}),
                                    MutableTensorView(want.data(), DType::kFloat32, {40, 3}), nullptr);
    ASSERT_TRUE(host.ok()) << host.message();
    DeviceBytes d_grad(std::vector<std::byte>(40 * 3 * 4, std::byte{0x5A}));
    const Status device = execute_vjp(c.op, TensorView(d_data.data, DType::kFloat32, {40, 3}),
                                      TensorView(c.ids_in_range ? d_in_range.data : d_ids.data, DType::kInt64, {40}),
                                      nullptr, attrs, 0, TensorView(d_grad_output.data, DType::kFloat32, {6, 3}),
                                      MutableTensorView(d_grad.data, DType::kFloat32, {40, 3}), nullptr, on_device);
    ASSERT_TRUE(device.ok()) << device.message();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = d_grad.download();
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
  }
  // What reads ids on the host refuses them on the device.
  Lowering refused;
  const Status no_count = lower_op("jax.ops.segment_sum", TensorView(d_data.data, DType::kFloat32, {40, 3}),
                                   TensorView(d_ids.data, DType::kInt64, {40}), Attributes{}, &refused);
  EXPECT_EQ(no_count.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(no_count.message().find("the values of segment_ids (their max + 1) are read on the host, and the operands "
                                    "are on a CUDA device (give num_segments)"), std::string::npos) << no_count.message();
}

// Ids from lengths, offsets or indptr are computed on the device (Lowering::segment_ids; the
// passes of kernels/segment_ids.hpp): forward, gradient and the errors of bad boundaries equal
// the CPU engine's, and a failed call writes nothing.
TEST(CudaScatter, SegmentIdsFromBoundariesAreComputedOnTheDevice) {
  SKIP_WITHOUT_DEVICE();
  std::vector<float> data(2 * 40 * 3);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>((i * 37) % 23) - 11.5f;
  DeviceBytes d_data(bytes_of(data));
  const TensorView h_data(data.data(), DType::kFloat32, {2, 40, 3});
  const TensorView dev_data(d_data.data, DType::kFloat32, {2, 40, 3});
  struct Call {
    const char* op;
    std::vector<std::int64_t> bounds;
    Dims bounds_shape;
    std::vector<std::pair<const char*, const char*>> attrs;
  };
  const std::vector<Call> calls = {
      {"torch.segment_reduce", {10, 0, 30, 40, 0, 0}, {2, 3}, {{"reduce", "sum"}, {"axis", "1"}}},
      {"torch.segment_reduce", {0, 5, 5, 39, 2, 2, 2, 40}, {2, 4}, {{"reduce", "max"}, {"axis", "1"}, {"lengths_are_offsets", "true"}}},
      {"torch.segment_reduce", {10, 20, 0, 5}, {2, 2}, {{"reduce", "mean"}, {"axis", "1"}, {"unsafe", "true"}}},
      {"torch_scatter.segment_csr", {0, 7, 7, 33, 40}, {1, 5}, {{"reduce", "sum"}}},
  };
  std::vector<float> grad(2 * 40 * 3);
  for (const Call& c : calls) {
    SCOPED_TRACE(c.op);
    Attributes attrs;
    for (const auto& [k, v] : c.attrs) attrs.set(k, v);
    DeviceBytes d_bounds(bytes_of(c.bounds));
    const TensorView h_bounds(c.bounds.data(), DType::kInt64, c.bounds_shape);
    const Tensor want = run_op(c.op, h_data, h_bounds, attrs);
    Lowering l;
    const Status lowered = lower_op(c.op, dev_data, TensorView(d_bounds.data, DType::kInt64, c.bounds_shape), attrs, &l);
    ASSERT_TRUE(lowered.ok()) << lowered.message();
    ASSERT_NE(l.segment_ids, nullptr);
    DeviceBytes d_out(std::vector<std::byte>(want.nbytes(), std::byte{0x5A}));
    const Status ran = execute(l, MutableTensorView(d_out.data, DType::kFloat32, want.shape()));
    ASSERT_TRUE(ran.ok()) << ran.message();
    const auto got = d_out.download();
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
    // the gradient of data
    std::vector<float> grad_output(static_cast<std::size_t>(want.numel()));
    for (std::size_t i = 0; i < grad_output.size(); ++i) grad_output[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
    DeviceBytes d_grad_output(bytes_of(grad_output));
    std::vector<float> grad_want(grad.size(), -1.0f);
    const TensorView h_grad_output(grad_output.data(), DType::kFloat32, want.shape());
    ASSERT_TRUE(execute_vjp(c.op, h_data, h_bounds, nullptr, attrs, 0, h_grad_output,
                            MutableTensorView(grad_want.data(), DType::kFloat32, {2, 40, 3}), nullptr).ok());
    DeviceBytes d_grad(std::vector<std::byte>(grad.size() * 4, std::byte{0x5A}));
    ExecutionContext on_device;
    on_device.device = Device::kCUDA;
    const Status vjp = execute_vjp(c.op, dev_data, TensorView(d_bounds.data, DType::kInt64, c.bounds_shape), nullptr, attrs, 0,
                                   TensorView(d_grad_output.data, DType::kFloat32, want.shape()),
                                   MutableTensorView(d_grad.data, DType::kFloat32, {2, 40, 3}), nullptr, on_device);
    ASSERT_TRUE(vjp.ok()) << vjp.message();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got_grad = d_grad.download();
    EXPECT_EQ(std::memcmp(got_grad.data(), grad_want.data(), got_grad.size()), 0);
  }
  // Bad boundaries: the CPU lowering's error, and the output untouched.
  Attributes sum;
  sum.set("reduce", "sum");
  sum.set("axis", "1");
  for (const std::vector<std::int64_t>& lengths : {std::vector<std::int64_t>{10, 31, 40, 0}, std::vector<std::int64_t>{10, 30, 41, -1}}) {
    DeviceBytes d_lengths(bytes_of(lengths));
    Lowering read, l;
    const Status want = lower_op("torch.segment_reduce", h_data, TensorView(lengths.data(), DType::kInt64, {2, 2}), sum, &read);
    ASSERT_FALSE(want.ok());
    ASSERT_TRUE(lower_op("torch.segment_reduce", dev_data, TensorView(d_lengths.data, DType::kInt64, {2, 2}), sum, &l).ok());
    DeviceBytes d_out(std::vector<std::byte>(2 * 2 * 3 * 4, std::byte{0x5A}));
    const Status got = execute(l, MutableTensorView(d_out.data, DType::kFloat32, {2, 2, 3}));
    EXPECT_EQ(got.code(), want.code());
    EXPECT_EQ(got.message(), want.message());
    for (std::byte b : d_out.download()) ASSERT_EQ(b, std::byte{0x5A});
  }
}

// torch.nn.functional.embedding_bag on device operands (kernels/gathered_bags.hpp): bag starts
// and ids checked on the device, then the fused reduction; the CPU engine's bytes for sum (with
// per_sample_weights), mean and max, padding_idx and include_last_offset, and the CPU's error
// (nothing written) for an id out of range and for decreasing offsets.
TEST(CudaScatter, EmbeddingBagRunsOnTheDevice) {
  SKIP_WITHOUT_DEVICE();
  std::vector<float> weight(50 * 8), psw(30);
  for (std::size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<float>((i * 29) % 17) * 0.25f - 2.0f;
  for (std::size_t i = 0; i < psw.size(); ++i) psw[i] = static_cast<float>(i % 5) * 0.5f - 1.0f;
  std::vector<std::int64_t> ids(30);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int64_t>((i * 13) % 50);
  const std::vector<std::int64_t> offsets = {0, 4, 4, 11, 29};
  DeviceBytes d_weight(bytes_of(weight)), d_psw(bytes_of(psw)), d_ids(bytes_of(ids)), d_offsets(bytes_of(offsets));
  const TensorView h_weight(weight.data(), DType::kFloat32, {50, 8}), dev_weight(d_weight.data, DType::kFloat32, {50, 8});
  struct Call {
    const char* mode;
    bool psw, last;
    int padding;
  };
  for (const Call& c : {Call{"sum", true, false, -1}, Call{"mean", false, true, 13}, Call{"max", false, false, 26},
                        Call{"sum", false, true, -1}}) {
    SCOPED_TRACE(c.mode);
    const auto attrs = [&](const TensorView& offs, const TensorView& weights) {
      Attributes a;
      a.set_string("mode", c.mode).set_tensor("offsets", offs).set_bool("include_last_offset", c.last);
      if (c.psw) a.set_tensor("per_sample_weights", weights);
      if (c.padding >= 0) a.set_int("padding_idx", c.padding);
      return a;
    };
    const Tensor want = run_op("torch.nn.functional.embedding_bag", h_weight, TensorView(ids.data(), DType::kInt64, {30}),
                               attrs(TensorView(offsets.data(), DType::kInt64, {5}), TensorView(psw.data(), DType::kFloat32, {30})));
    Lowering l;
    ASSERT_TRUE(lower_op("torch.nn.functional.embedding_bag", dev_weight, TensorView(d_ids.data, DType::kInt64, {30}),
                         attrs(TensorView(d_offsets.data, DType::kInt64, {5}), TensorView(d_psw.data, DType::kFloat32, {30})),
                         &l).ok());
    DeviceBytes d_out(std::vector<std::byte>(want.nbytes(), std::byte{0x5A}));
    const Status ran = execute(l, MutableTensorView(d_out.data, DType::kFloat32, want.shape()));
    ASSERT_TRUE(ran.ok()) << ran.message();
    const auto got = d_out.download();
    EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
  }
  // An id out of range, decreasing offsets: the CPU lowering's errors, nothing written.
  std::vector<std::int64_t> bad_ids = ids;
  bad_ids[17] = 50;
  const std::vector<std::int64_t> bad_offsets = {0, 9, 4};
  for (int which = 0; which < 2; ++which) {
    const std::vector<std::int64_t>& i = which == 0 ? bad_ids : ids;
    const std::vector<std::int64_t>& o = which == 0 ? std::vector<std::int64_t>{0, 10} : bad_offsets;
    DeviceBytes d_i(bytes_of(i)), d_o(bytes_of(o));
    const auto attrs = [&](const TensorView& offs) {
      Attributes a;
      a.set_string("mode", "sum").set_tensor("offsets", offs);
      return a;
    };
    const Dims o_shape{static_cast<std::int64_t>(o.size())};
    Lowering read, l;
    const Status want = lower_op("torch.nn.functional.embedding_bag", h_weight, TensorView(i.data(), DType::kInt64, {30}),
                                 attrs(TensorView(o.data(), DType::kInt64, o_shape)), &read);
    ASSERT_FALSE(want.ok());
    ASSERT_TRUE(lower_op("torch.nn.functional.embedding_bag", dev_weight, TensorView(d_i.data, DType::kInt64, {30}),
                         attrs(TensorView(d_o.data, DType::kInt64, o_shape)), &l).ok());
    DeviceBytes d_out(std::vector<std::byte>(static_cast<std::size_t>(o.size()) * 8 * 4, std::byte{0x5A}));
    const Status got = execute(l, MutableTensorView(d_out.data, DType::kFloat32, {static_cast<std::int64_t>(o.size()), 8}));
    EXPECT_EQ(got.code(), want.code());
    EXPECT_EQ(got.message(), want.message());
    for (std::byte b : d_out.download()) ASSERT_EQ(b, std::byte{0x5A});
  }
}

// embedding_bag's weight gradient on the device (kernels/gathered_bags.hpp, passes V1 to V4: a
// stable sort of the terms by table element, then each element's terms in bag order): the CPU
// engine's bytes for sum (with per_sample_weights), mean and max, padding_idx, in every floating
// dtype, at a small size (the one-block sort) and a large one with a hot row (cub's device sort);
// values whose every bit counts, so the order and rounding of each add show.
TEST(CudaScatter, EmbeddingBagGradientRunsOnTheDevice) {
  SKIP_WITHOUT_DEVICE();
  ExecutionContext on_device;
  on_device.device = Device::kCUDA;
  for (const std::int64_t n : {30, 20000}) {
    const std::int64_t v = 50, d = 8, bags = n / 7;
    std::vector<std::int64_t> ids(static_cast<std::size_t>(n)), offsets(static_cast<std::size_t>(bags));
    for (std::int64_t i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = i % 3 == 0 ? 7 : (i * 13) % v;  // row 7: hot
    for (std::int64_t b = 0; b < bags; ++b) offsets[static_cast<std::size_t>(b)] = b * 7 - (b % 2);
    offsets[0] = 0;
    DeviceBytes d_ids(bytes_of(ids)), d_offsets(bytes_of(offsets));
    for (const DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
      const std::size_t es = element_size(dtype);
      // weight, per_sample_weights and grad_output: float32 values of full precision, as the dtype
      const auto values = [&](std::int64_t count, int salt) {
        std::vector<std::byte> b(static_cast<std::size_t>(count) * es);
        for (std::int64_t i = 0; i < count; ++i) {
          const float x = std::sin(static_cast<float>(i * 7 + salt)) * 3.0f;
          const double wide = x;
          const std::uint16_t half = detail::float_to_half_bits(x), brain = detail::float_to_bfloat16_bits(x);
          const void* from = dtype == DType::kFloat32 ? static_cast<const void*>(&x)
                             : dtype == DType::kFloat64 ? static_cast<const void*>(&wide)
                             : dtype == DType::kFloat16 ? static_cast<const void*>(&half) : static_cast<const void*>(&brain);
          std::memcpy(b.data() + static_cast<std::size_t>(i) * es, from, es);
        }
        return b;
      };
      const std::vector<std::byte> weight = values(v * d, 1), psw = values(n, 2), grad = values(bags * d, 3);
      const TensorView h_weight(weight.data(), dtype, {v, d}), h_psw(psw.data(), dtype, {n}),
          h_grad(grad.data(), dtype, {bags, d});
      DeviceBytes d_weight(weight), d_psw(psw), d_grad_output(grad);
      struct Call {
        const char* mode;
        bool psw;
        int padding;
      };
      for (const Call& c : {Call{"sum", true, -1}, Call{"sum", false, 13}, Call{"mean", false, 7}, Call{"max", false, -1}}) {
        SCOPED_TRACE(std::string(c.mode) + " " + std::string(dtype_name(dtype)) + " n " + std::to_string(n));
        const auto attrs = [&](const TensorView& offs, const TensorView& weights) {
          Attributes a;
          a.set_string("mode", c.mode).set_tensor("offsets", offs);
          if (c.psw) a.set_tensor("per_sample_weights", weights);
          if (c.padding >= 0) a.set_int("padding_idx", c.padding);
          return a;
        };
        std::vector<std::byte> want(static_cast<std::size_t>(v * d) * es, std::byte{0x3C});
        const Status host = execute_vjp("torch.nn.functional.embedding_bag", h_weight,
                                        TensorView(ids.data(), DType::kInt64, {n}), nullptr,
                                        attrs(TensorView(offsets.data(), DType::kInt64, {bags}), h_psw), 0,
                                        h_grad, MutableTensorView(want.data(), dtype, {v, d}), nullptr);
        ASSERT_TRUE(host.ok()) << host.message();
        DeviceBytes d_grad(std::vector<std::byte>(want.size(), std::byte{0x5A}));
        const Status device = execute_vjp(
            "torch.nn.functional.embedding_bag", TensorView(d_weight.data, dtype, {v, d}),
            TensorView(d_ids.data, DType::kInt64, {n}), nullptr,
            attrs(TensorView(d_offsets.data, DType::kInt64, {bags}), TensorView(d_psw.data, dtype, {n})), 0,
            TensorView(d_grad_output.data, dtype, {bags, d}), MutableTensorView(d_grad.data, dtype, {v, d}), nullptr,
            on_device);
        ASSERT_TRUE(device.ok()) << device.message();
        EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        EXPECT_EQ(d_grad.download(), want);
      }
    }
  }
}

// One device's piece of a split call (execute_shard / execute_vjp_shard) on device operands
// (kernels/shard_piece.hpp): the indices resolved against the whole axis and shifted into the
// piece on the device; the CPU engine's bytes for a gather in modes fill (the first piece writes
// the fill value) and clamp, a scatter-add in mode drop, the gather's gradient; mode error is the
// CPU's message (worded from a host copy), nothing written.
TEST(CudaScatter, SplitCallPiecesRunOnTheDevice) {
  SKIP_WITHOUT_DEVICE();
  ExecutionContext on_device;
  on_device.device = Device::kCUDA;
  std::vector<double> x(10 * 3), u(6 * 3), g(6 * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>(i) * 0.5 - 3.0;
  for (std::size_t i = 0; i < u.size(); ++i) u[i] = std::sin(static_cast<double>(i) + 1.0);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = std::cos(static_cast<double>(i) + 2.0);
  const std::vector<std::int64_t> indices = {0, 9, -1, 12, 4, 4};  // whole axis 10: -1 -> 9, 12 out of range
  DeviceBytes d_indices(bytes_of(indices)), d_u(bytes_of(u)), d_g(bytes_of(g));
  for (const std::int64_t offset : {std::int64_t{0}, std::int64_t{5}}) {  // the pieces [0, 5) and [5, 10)
    const std::vector<double> piece(x.begin() + offset * 3, x.begin() + (offset + 5) * 3);
    DeviceBytes d_piece(bytes_of(piece));
    const std::vector<AxisShard> shards = {AxisShard{10, offset}};
    const TensorView h_x(piece.data(), DType::kFloat64, {5, 3}), dev_x(d_piece.data, DType::kFloat64, {5, 3});
    const TensorView h_i(indices.data(), DType::kInt64, {6, 1}), dev_i(d_indices.data, DType::kInt64, {6, 1});
    for (const char* mode : {"fill", "clamp", "error"}) {
      SCOPED_TRACE(std::string(mode) + " offset " + std::to_string(offset));
      Attributes attrs;
      attrs.set_ints("axes", {0}).set_string("index_mode", mode).set_float("fill_value", 7.25);
      std::vector<double> want(6 * 3, -1.0);
      const Status host = execute_shard("gather_multiaxis", h_x, h_i, nullptr, attrs, 0, shards,
                                        MutableTensorView(want.data(), DType::kFloat64, {6, 3}));
      DeviceBytes d_out(std::vector<std::byte>(want.size() * 8, std::byte{0x5A}));
      const Status device = execute_shard("gather_multiaxis", dev_x, dev_i, nullptr, attrs, 0, shards,
                                          MutableTensorView(d_out.data, DType::kFloat64, {6, 3}), on_device);
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      ASSERT_EQ(device.code(), host.code()) << device.message();
      EXPECT_EQ(device.message(), host.message());
      const auto got = d_out.download();
      if (!host.ok()) {
        for (std::byte b : got) ASSERT_EQ(b, std::byte{0x5A});
        continue;
      }
      EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size()), 0);
      // the gradient of the piece
      std::vector<double> want_grad(5 * 3, -1.0);
      ASSERT_TRUE(execute_vjp_shard("gather_multiaxis", h_x, h_i, nullptr, attrs, 0, shards,
                                    TensorView(g.data(), DType::kFloat64, {6, 3}),
                                    MutableTensorView(want_grad.data(), DType::kFloat64, {5, 3}), nullptr).ok());
      DeviceBytes d_grad(std::vector<std::byte>(want_grad.size() * 8, std::byte{0x5A}));
      const Status vjp = execute_vjp_shard("gather_multiaxis", dev_x, dev_i, nullptr, attrs, 0, shards,
                                           TensorView(d_g.data, DType::kFloat64, {6, 3}),
                                           MutableTensorView(d_grad.data, DType::kFloat64, {5, 3}), nullptr, on_device);
      ASSERT_TRUE(vjp.ok()) << vjp.message();
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto got_grad = d_grad.download();
      EXPECT_EQ(std::memcmp(got_grad.data(), want_grad.data(), got_grad.size()), 0);
    }
    // a scatter-add piece, updates out of range of the whole axis dropped
    Attributes attrs;
    attrs.set_ints("axes", {0}).set_string("reduction", "add").set_string("index_mode", "drop");
    const TensorView h_u(u.data(), DType::kFloat64, {6, 3}), dev_u(d_u.data, DType::kFloat64, {6, 3});
    std::vector<double> want_scatter(5 * 3, -1.0);
    const Status host = execute_shard("scatter_multiaxis", h_x, h_i, &h_u, attrs, 0, shards,
                                      MutableTensorView(want_scatter.data(), DType::kFloat64, {5, 3}));
    ASSERT_TRUE(host.ok()) << host.message();
    DeviceBytes d_out(std::vector<std::byte>(want_scatter.size() * 8, std::byte{0x5A}));
    const Status device = execute_shard("scatter_multiaxis", dev_x, dev_i, &dev_u, attrs, 0, shards,
                                        MutableTensorView(d_out.data, DType::kFloat64, {5, 3}), on_device);
    ASSERT_TRUE(device.ok()) << device.message();
    EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto got = d_out.download();
    EXPECT_EQ(std::memcmp(got.data(), want_scatter.data(), got.size()), 0);
  }
}

}  // namespace
}  // namespace multigather

#endif  // MULTIGATHER_HAVE_CUDA (with MULTIGATHER_CUDA=OFF this file is empty)
