// Segment ids from per-row boundaries (kernels/segment_ids.hpp: torch.segment_reduce's lengths or
// offsets, torch_scatter.segment_csr's indptr), the one body that the CPU lowering runs in loops
// and the CUDA engine over grids:
//  - over every thread of a launched grid (the CUDA kernels' grid-stride loops, the threads run
//    backwards), against an oracle written from the rules (fill every row with S, then each
//    segment's rows), strided int32 / int64 boundaries, shared (size 1) batch rows, empty
//    segments, unsafe sums; bad boundaries give the code of the first failure in the oracle's
//    reading order;
//  - a lowering of CUDA operands (Lowering::segment_ids: described, not read) run by the CPU
//    engine gives the read lowering's bytes, errors and gradients.
#include <gtest/gtest.h>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "api/vjp.hpp"
#include "kernels/segment_ids.hpp"
#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "multigather/transforms.hpp"
#include "op_test_support.hpp"
#include "test_seed.hpp"

namespace multigather {
namespace {

using detail::kNoSegmentIdsError;
using testing::f32;
using testing::i32;
using testing::i64;
using testing::iota;
using detail::SegmentIdsParams;

struct Case {
  bool offsets = false;
  bool check_sum = false;
  bool int32 = false;
  std::vector<std::int64_t> batch;        // data's sizes before the axis
  std::vector<std::int64_t> bound_batch;  // batch[d] or 1
  std::int64_t k = 0, n = 0;
  std::vector<std::int64_t> values;       // [bound_batch.., K] in C order
};

// The ids and the first failure code as the CPU lowering read them before the shared body: data
// rows in C order, each row's boundaries in order, the first failure ends the reading.
void oracle(const Case& c, std::vector<std::int64_t>* ids, std::uint64_t* code) {
  const int r = static_cast<int>(c.batch.size());
  const std::int64_t segments = c.offsets ? c.k - 1 : c.k;
  std::int64_t rows = 1;
  for (std::int64_t s : c.batch) rows *= s;
  ids->assign(static_cast<std::size_t>(rows * c.n), segments);
  *code = kNoSegmentIdsError;
  std::vector<std::int64_t> at(static_cast<std::size_t>(r), 0);
  for (std::int64_t row = 0; row < rows; ++row) {
    std::int64_t bound_row = 0;
    for (int d = 0; d < r; ++d) bound_row = bound_row * c.bound_batch[d] + (c.bound_batch[d] == 1 ? 0 : at[d]);
    const std::int64_t* b = c.values.data() + bound_row * c.k;
    std::int64_t* id = ids->data() + row * c.n;
    const auto fail = [&](std::int64_t s) { *code = static_cast<std::uint64_t>(bound_row * (c.k + 1) + s); };
    if (c.offsets) {
      for (std::int64_t s = 0; s < c.k; ++s) {
        if (b[s] < 0 || b[s] > c.n || (s > 0 && b[s] < b[s - 1])) return fail(s);
        if (s > 0) std::fill(id + b[s - 1], id + b[s], s - 1);
      }
    } else {
      std::int64_t start = 0;
      for (std::int64_t s = 0; s < c.k; ++s) {
        if (b[s] < 0) return fail(s);
        const std::int64_t end = start + b[s];
        if (start < c.n) std::fill(id + start, id + std::min(end, c.n), s);
        start = end;
      }
      if (c.check_sum && start != c.n) return fail(c.k);
    }
    for (int d = r - 1; d >= 0; --d) {
      if (++at[d] < c.batch[d]) break;
      at[d] = 0;
    }
  }
}

// The boundaries as a strided view: every other element of a buffer twice as long, of c's dtype.
struct Bounds {
  std::vector<std::int64_t> i64;
  std::vector<std::int32_t> i32;
  TensorView view;
};

Bounds strided_bounds(const Case& c) {
  Bounds out;
  const std::size_t count = c.values.size();
  Dims shape(std::span<const std::int64_t>(c.bound_batch));
  shape.push_back(c.k);
  Dims strides = contiguous_strides(shape);
  for (int d = 0; d < strides.size(); ++d) strides[d] *= 2;
  const void* data = nullptr;
  if (c.int32) {
    out.i32.assign(2 * count + 1, -77);
    for (std::size_t i = 0; i < count; ++i) out.i32[2 * i] = static_cast<std::int32_t>(c.values[i]);
    data = out.i32.data();
  } else {
    out.i64.assign(2 * count + 1, -77);
    for (std::size_t i = 0; i < count; ++i) out.i64[2 * i] = c.values[i];
    data = out.i64.data();
  }
  out.view = TensorView(data, c.int32 ? DType::kInt32 : DType::kInt64, shape, strides);
  return out;
}

SegmentBoundaries boundaries_of(const Case& c, const TensorView& bounds) {
  SegmentBoundaries b;
  b.bounds = bounds;
  b.name = c.offsets ? "offsets" : "lengths";
  b.offsets = c.offsets;
  b.check_sum = c.check_sum;
  b.batch = Dims(std::span<const std::int64_t>(c.batch));
  b.n = c.n;
  b.segments = c.offsets ? c.k - 1 : c.k;
  return b;
}

// Both passes as the CUDA engine launches them: `threads` threads, run last to first.
void run_on_grid(const SegmentIdsParams& p, std::int64_t threads) {
  *p.first_error = kNoSegmentIdsError;
  for (std::int64_t t = threads - 1; t >= 0; --t) {
    if (p.offsets) {
      detail::check_offsets_thread(p, t, threads);
    } else {
      detail::lengths_starts_thread(p, t, threads);
    }
  }
  for (std::int64_t t = threads - 1; t >= 0; --t) detail::segment_ids_thread(p, t, threads);
}

Case random_case(std::mt19937_64& rng, bool valid) {
  Case c;
  c.offsets = rng() % 2 == 0;
  c.check_sum = !c.offsets && rng() % 2 == 0;
  c.int32 = rng() % 2 == 0;
  const int r = static_cast<int>(rng() % 3);
  for (int d = 0; d < r; ++d) {
    c.batch.push_back(static_cast<std::int64_t>(rng() % 3 + 1));
    c.bound_batch.push_back(rng() % 3 == 0 ? 1 : c.batch.back());
  }
  c.n = static_cast<std::int64_t>(rng() % 9);
  const std::int64_t segments = static_cast<std::int64_t>(rng() % 5);
  c.k = c.offsets ? segments + 1 : segments;
  std::int64_t bound_rows = 1;
  for (std::int64_t s : c.bound_batch) bound_rows *= s;
  for (std::int64_t row = 0; row < bound_rows; ++row) {
    if (c.offsets) {
      std::vector<std::int64_t> o(static_cast<std::size_t>(c.k));
      for (auto& v : o) v = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.n + 1));
      std::sort(o.begin(), o.end());
      c.values.insert(c.values.end(), o.begin(), o.end());
    } else {
      // lengths adding up to n where the sum is checked (else anything small)
      std::int64_t left = c.n;
      for (std::int64_t s = 0; s < c.k; ++s) {
        std::int64_t v = static_cast<std::int64_t>(rng() % 4);
        if (c.check_sum) v = s + 1 == c.k ? left : std::min(v, left);
        left -= v;
        c.values.push_back(v);
      }
      if (c.check_sum && c.k == 0 && c.n != 0) c.n = 0;  // no lengths add up to 0 rows only
    }
  }
  if (!valid && !c.values.empty()) {
    const std::size_t at = static_cast<std::size_t>(rng() % c.values.size());
    c.values[at] = rng() % 2 == 0 ? -1 - static_cast<std::int64_t>(rng() % 3) : c.n + 1 + static_cast<std::int64_t>(rng() % 3);
  }
  return c;
}

TEST(SegmentIds, OverALaunchedGridEqualTheRulesAndFindTheFirstFailure) {
  std::mt19937_64 rng(test::run_seed());
  int checked = 0, failures = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    const Case c = random_case(rng, iteration % 3 != 0);
    std::vector<std::int64_t> want;
    std::uint64_t want_code = 0;
    oracle(c, &want, &want_code);
    const Bounds bounds = strided_bounds(c);
    const SegmentBoundaries b = boundaries_of(c, bounds.view);
    for (std::int64_t threads : {1, 3, 64}) {
      std::vector<std::int64_t> ids(want.size(), -5);
      std::vector<std::int64_t> starts(static_cast<std::size_t>(detail::segment_starts_count(b)), -9);
      std::uint64_t code = 0;
      run_on_grid(detail::segment_ids_params(b, ids.data(), starts.data(), &code), threads);
      ASSERT_EQ(code, want_code) << "iteration " << iteration << " threads " << threads;
      if (code == kNoSegmentIdsError) {
        ASSERT_EQ(ids, want) << "iteration " << iteration << " threads " << threads;
      }
      // the host loop (the CPU lowering's and the CPU engine's) agrees
      std::vector<std::int64_t> host_ids(want.size(), -5);
      std::uint64_t host_code = 0;
      detail::segment_ids_on_host(detail::segment_ids_params(b, host_ids.data(), starts.data(), &host_code));
      ASSERT_EQ(host_code, want_code);
      if (host_code == kNoSegmentIdsError) ASSERT_EQ(host_ids, want);
    }
    ++checked;
    failures += want_code != kNoSegmentIdsError;
  }
  EXPECT_GT(failures, 300);
  EXPECT_GT(checked - failures, 1500);
}

TEST(SegmentIds, LengthsSumsSaturateWithoutOverflow) {
  // 2 + 2 (2^62 + 1) = 2^63 + 4 wraps a 64-bit sum; the running sums stop at n + 1 and the sum
  // check still fails, worded with the exact sum.
  Case c;
  c.check_sum = true;
  c.k = 3;
  c.n = 4;
  c.values = {2, (std::int64_t{1} << 62) + 1, (std::int64_t{1} << 62) + 1};
  const Bounds bounds = strided_bounds(c);
  const SegmentBoundaries b = boundaries_of(c, bounds.view);
  std::vector<std::int64_t> ids(4), starts(4);
  std::uint64_t code = 0;
  detail::segment_ids_on_host(detail::segment_ids_params(b, ids.data(), starts.data(), &code));
  ASSERT_EQ(code, 3u);
  EXPECT_EQ(detail::segment_ids_error("torch.segment_reduce", b, bounds.view, code).message(),
            "torch.segment_reduce: lengths[:] sums to 9223372036854775812, but the data has 4 rows along the axis "
            "(they must be equal; unsafe=True skips this check and drops rows past the last segment)");
  c.check_sum = false;  // unsafe: rows 0, 1 in segment 0, rows 2, 3 in segment 1
  const SegmentBoundaries unsafe = boundaries_of(c, bounds.view);
  detail::segment_ids_on_host(detail::segment_ids_params(unsafe, ids.data(), starts.data(), &code));
  ASSERT_EQ(code, kNoSegmentIdsError);
  EXPECT_EQ(ids, (std::vector<std::int64_t>{0, 0, 1, 1}));
}

// ---- A described lowering (CUDA operands) on the CPU engine --------------------------------------

struct SegmentCall {
  std::string op;
  Tensor data, bounds;
  Attributes attrs;
};

std::vector<SegmentCall> segment_calls() {
  std::vector<SegmentCall> calls;
  std::vector<double> x(2 * 7 * 3);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<double>((i * 37) % 23) - 11.5;
  const auto attrs = [](std::initializer_list<std::pair<const char*, const char*>> kv) {
    Attributes a;
    for (const auto& [k, v] : kv) a.set(k, v);
    return a;
  };
  calls.push_back({"torch.segment_reduce", f32({7, 3}, std::vector<double>(x.begin(), x.begin() + 21)),
                   i64({4}, {2, 0, 4, 1}), attrs({{"reduce", "sum"}})});
  calls.push_back({"torch.segment_reduce", f32({7, 3}, std::vector<double>(x.begin(), x.begin() + 21)),
                   i32({4}, {1, 3, 3, 6}), attrs({{"reduce", "max"}, {"lengths_are_offsets", "true"}})});
  calls.push_back({"torch.segment_reduce", f32({2, 7, 3}, x), i64({2, 3}, {3, 3, 1, 0, 7, 0}),
                   attrs({{"reduce", "mean"}, {"axis", "1"}})});
  calls.push_back({"torch.segment_reduce", f32({2, 7, 3}, x), i64({2, 2}, {3, 1, 0, 0}),
                   attrs({{"reduce", "min"}, {"axis", "1"}, {"unsafe", "true"}, {"initial", "0.5"}})});
  calls.push_back({"torch_scatter.segment_csr", f32({2, 7, 3}, x), i64({1, 4}, {0, 2, 2, 6}), attrs({{"reduce", "sum"}})});
  calls.push_back({"torch_scatter.segment_csr", f32({2, 7, 3}, x), i64({2, 3}, {1, 4, 7, 0, 0, 5}),
                   attrs({{"reduce", "mean"}})});
  return calls;
}

TEST(SegmentIds, ALoweringOfCudaOperandsDescribesThemAndTheCpuEngineGivesTheReadOnesBytes) {
  ExecutionContext on_cpu;
  on_cpu.device = Device::kCPU;
  for (const SegmentCall& c : segment_calls()) {
    SCOPED_TRACE(c.op + " bounds " + to_string(c.bounds.shape()));
    Lowering read, described;
    ASSERT_TRUE(lower_op(c.op, c.data.view(), c.bounds.view(), c.attrs, &read, Device::kCPU).ok());
    ASSERT_TRUE(lower_op(c.op, c.data.view(), c.bounds.view(), c.attrs, &described, Device::kCUDA).ok());
    EXPECT_EQ(read.segment_ids, nullptr);
    ASSERT_NE(described.segment_ids, nullptr);
    EXPECT_EQ(described.indices.data, nullptr);  // nothing was read
    EXPECT_EQ(described.owned_indices, nullptr);
    const Tensor want = execute(read, on_cpu);
    const Tensor got = execute(described, on_cpu);
    ASSERT_EQ(got.shape(), want.shape());
    EXPECT_EQ(std::memcmp(got.data(), want.data(), want.nbytes()), 0);
    // into a caller's output too (execute, not execute_alloc)
    Tensor into(want.dtype(), want.shape());
    ASSERT_TRUE(execute(described, into.mutable_view(), on_cpu).ok());
    EXPECT_EQ(std::memcmp(into.data(), want.data(), want.nbytes()), 0);
    // the gradient of data through the described lowering equals execute_vjp's (the read one)
    std::vector<double> g(static_cast<std::size_t>(want.numel()));
    for (std::size_t i = 0; i < g.size(); ++i) g[i] = 0.25 * static_cast<double>(i % 7) - 0.5;
    const Tensor grad_output = f32(want.shape(), g);
    Tensor grad_want(DType::kFloat32, c.data.shape()), grad_got(DType::kFloat32, c.data.shape());
    ASSERT_TRUE(execute_vjp(c.op, c.data.view(), c.bounds.view(), nullptr, c.attrs, 0, grad_output.view(),
                            grad_want.mutable_view(), nullptr, on_cpu).ok());
    Lowering on_grad;  // the VJP's lowering is made on the gradient's buffer
    ASSERT_TRUE(lower_op(c.op, grad_got.view(), c.bounds.view(), c.attrs, &on_grad, Device::kCUDA).ok());
    const TensorView input = c.data.view();
    ASSERT_TRUE(detail::vjp_one(on_grad, &input, 0, grad_output.view(), grad_got.mutable_view(), nullptr, on_cpu).ok());
    EXPECT_EQ(std::memcmp(grad_got.data(), grad_want.data(), grad_want.nbytes()), 0);
  }
}

TEST(SegmentIds, BadBoundariesOfCudaOperandsAreTheReadLoweringsErrorsAndWriteNothing) {
  ExecutionContext on_cpu;
  on_cpu.device = Device::kCPU;
  Attributes sum, offsets, csr;
  sum.set("reduce", "sum");
  offsets.set("reduce", "sum");
  offsets.set("lengths_are_offsets", "true");
  csr.set("reduce", "sum");
  const Tensor x = f32({2, 5, 1}, iota(10));
  struct Bad {
    const char* op;
    Tensor bounds;
    Attributes attrs;
  };
  std::vector<Bad> bad;
  bad.push_back({"torch.segment_reduce", i64({2}, {3, 1}), sum});                 // sums to 4, not 2
  bad.push_back({"torch.segment_reduce", i64({3}, {1, -1, 2}), sum});             // negative
  bad.push_back({"torch.segment_reduce", i32({3}, {0, 3, 6}), offsets});          // out of [0, 2]
  bad.push_back({"torch.segment_reduce", i64({3}, {1, 0, 2}), offsets});          // decreasing
  bad.push_back({"torch_scatter.segment_csr", i64({2, 3}, {0, 2, 5, 0, 4, 3}), csr});  // second row decreases
  bad.push_back({"torch_scatter.segment_csr", i64({1, 2}, {0, 6}), csr});         // past 5 rows
  for (const Bad& b : bad) {
    // torch.segment_reduce cuts axis 0 of a [2, 5, 1] input; segment_csr axis 1
    SCOPED_TRACE(std::string(b.op) + " " + to_string(b.bounds.shape()));
    Lowering read, described;
    const Status want = lower_op(b.op, x.view(), b.bounds.view(), b.attrs, &read, Device::kCPU);
    ASSERT_FALSE(want.ok());
    ASSERT_TRUE(lower_op(b.op, x.view(), b.bounds.view(), b.attrs, &described, Device::kCUDA).ok());
    Tensor out(DType::kFloat32, described.output_shape);
    std::memset(out.data(), 0x3C, out.nbytes());
    const std::vector<std::byte> before(static_cast<const std::byte*>(out.data()),
                                        static_cast<const std::byte*>(out.data()) + out.nbytes());
    const Status got = execute(described, out.mutable_view(), on_cpu);
    EXPECT_EQ(got.code(), want.code());
    EXPECT_EQ(got.message(), want.message());
    EXPECT_EQ(std::memcmp(out.data(), before.data(), before.size()), 0);
  }
}

}  // namespace
}  // namespace multigather
