// tests/large/large_sizes_test.cpp: 64-bit sizes (CTest label `large`, its own executable).
//
// One uint8 input of 2^31 + 2^20 elements (2.15 GB) goes through the block kernel and the
// element kernel with lookups at positions beyond 2^31, with positive and negative strides, on
// one and two threads; outputs are checked against the reference kernel AND against the input
// pattern itself (an independent oracle: value(position) is a hash of the position). An output
// view spanning more than 2^31 elements (lazily committed memory: only the touched pages cost)
// checks the output side. The 32-bit offset fast path (GatherPlan::offsets_fit_int32) is checked
// at its boundary: a view whose farthest element is 2^31 - 1 away takes it, 2^31 does not, and
// both give the right values there.
//
// Memory: about 2.2 GB resident (the input) plus a few pages. Not registered in sanitizer builds
// (ASan's shadow memory would add another ~0.3-2 GB and its allocator caps single
// allocations below this size); see tests/CMakeLists.txt.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "multigather/gather.hpp"
#include "plan/plan.hpp"

namespace mg = multigather;
using mg::DType;
using mg::Dims;

namespace {

constexpr std::int64_t kTwo31 = std::int64_t{1} << 31;
constexpr std::int64_t kN = kTwo31 + (std::int64_t{1} << 20);

std::uint8_t pattern(std::int64_t i) {
  const std::uint64_t u = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;
  return static_cast<std::uint8_t>(u >> 56);
}

/// Anonymous memory, committed only where touched (no page is zeroed up front).
struct Mapping {
  explicit Mapping(std::size_t n) : size(n) {
    void* p = ::mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    data = p == MAP_FAILED ? nullptr : static_cast<std::uint8_t*>(p);
  }
  ~Mapping() { if (data) ::munmap(data, size); }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
};

/// The big input, filled once for every test of the suite.
class LargeSizes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    input_ = new Mapping(static_cast<std::size_t>(kN));
    if (!input_->data) return;
    std::uint8_t* p = input_->data;
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < kN; ++i) p[i] = pattern(i);
  }
  static void TearDownTestSuite() { delete input_; input_ = nullptr; }
  void SetUp() override {
    if (!input_ || !input_->data) GTEST_SKIP() << "cannot map " << kN << " bytes";
  }
  static const std::uint8_t* input() { return input_->data; }
  static Mapping* input_;
};
Mapping* LargeSizes::input_ = nullptr;

/// Runs the engine (threads 1 and 2) and the reference kernel on the same views; returns the
/// engine's output (C-contiguous) after checking it equals the reference's.
std::vector<std::uint8_t> run_both(const mg::TensorView& in, const mg::TensorView& idx,
                                   std::vector<std::int64_t> axes, mg::GatherOptions o = {}) {
  mg::GatherShape s;
  EXPECT_TRUE(mg::infer_shape(in.shape, idx.shape, axes, &s).ok());
  std::vector<std::uint8_t> ref(static_cast<std::size_t>(s.output_numel), 0xEE);
  const mg::Status rs = mg::gather_multiaxis_reference(
      in, idx, axes, mg::MutableTensorView(ref.data(), DType::kUInt8, s.output_shape), o);
  EXPECT_TRUE(rs.ok()) << rs.message();
  std::vector<std::uint8_t> got;
  for (int threads : {1, 2}) {
    o.num_threads = threads;
    got.assign(ref.size(), 0x11);
    const mg::Status gs = mg::gather_multiaxis_into(
        in, idx, axes, mg::MutableTensorView(got.data(), DType::kUInt8, s.output_shape), o);
    EXPECT_TRUE(gs.ok()) << gs.message();
    EXPECT_EQ(got, ref) << "threads " << threads;
  }
  return got;
}

mg::detail::GatherPlan plan_of(const mg::TensorView& in, const mg::TensorView& idx,
                               std::vector<std::int64_t> axes) {
  mg::GatherShape s;
  EXPECT_TRUE(mg::infer_shape(in.shape, idx.shape, axes, &s).ok());
  std::vector<std::uint8_t> out(static_cast<std::size_t>(s.output_numel));
  const mg::MutableTensorView ov(out.data(), DType::kUInt8, s.output_shape);
  mg::detail::ValidatedCall call;
  const mg::Status vs = mg::detail::validate_call(in, idx, axes, ov, {}, &call);
  EXPECT_TRUE(vs.ok()) << vs.message();
  mg::detail::GatherPlan plan;
  mg::detail::make_plan(in, idx, ov, call, {}, &plan);
  return plan;
}

bool fits_int32(const mg::TensorView& in, const mg::TensorView& idx, std::vector<std::int64_t> axes) {
  return plan_of(in, idx, axes).offsets_fit_int32;
}
bool is_block(const mg::TensorView& in, const mg::TensorView& idx, std::vector<std::int64_t> axes) {
  return plan_of(in, idx, axes).kind == mg::detail::PlanKind::kBlock;
}

TEST_F(LargeSizes, ElementKernelBeyond2Pow31) {
  // 1-D take along axis 0: positions around 2^31, the last one, negative indices from the end.
  const std::vector<std::int64_t> idx = {0, kTwo31 - 1, kTwo31, kTwo31 + 1, kTwo31 + 12345,
                                         kN - 1, -1, -(kN - kTwo31), 7, kN / 2 + kTwo31 / 4};
  const mg::TensorView in(input(), DType::kUInt8, {kN});
  const mg::TensorView iv(idx.data(), DType::kInt64, {static_cast<std::int64_t>(idx.size())});
  EXPECT_FALSE(fits_int32(in, iv, {0}));
  EXPECT_FALSE(is_block(in, iv, {0}));
  const std::vector<std::uint8_t> got = run_both(in, iv, {0});
  for (std::size_t j = 0; j < idx.size(); ++j) {
    const std::int64_t pos = idx[j] < 0 ? idx[j] + kN : idx[j];
    EXPECT_EQ(got[j], pattern(pos)) << "indices[" << j << "] = " << idx[j];
  }
  // Out of range just past the end, and clamp / wrap there.
  const std::vector<std::int64_t> bad = {kN};
  const mg::TensorView bv(bad.data(), DType::kInt64, {1});
  std::uint8_t one = 0;
  const mg::Status s = mg::gather_multiaxis_into(in, bv, std::vector<std::int64_t>{0},
                                                 mg::MutableTensorView(&one, DType::kUInt8, {1}));
  EXPECT_EQ(s.code(), mg::StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find(std::to_string(kN)), std::string::npos) << s.message();
  mg::GatherOptions clamp;
  clamp.index_mode = mg::IndexMode::kClamp;
  EXPECT_EQ(run_both(in, bv, {0}, clamp)[0], pattern(kN - 1));
  mg::GatherOptions wrap;
  wrap.index_mode = mg::IndexMode::kWrap;
  EXPECT_EQ(run_both(in, bv, {0}, wrap)[0], pattern(0));
}

TEST_F(LargeSizes, ElementKernelGatherElementsRows) {
  // GatherElements-like [R, C] along axis 1 with R * C > 2^31: every lookup reads its own row.
  constexpr std::int64_t kC = std::int64_t{1} << 20;
  constexpr std::int64_t kR = kN / kC;  // 2049 rows: the last rows lie beyond 2^31
  const mg::TensorView in(input(), DType::kUInt8, {kR, kC});
  std::vector<std::int32_t> idx(static_cast<std::size_t>(kR * 3));
  for (std::int64_t r = 0; r < kR; ++r) {
    idx[static_cast<std::size_t>(r * 3 + 0)] = static_cast<std::int32_t>((r * 7919) % kC);
    idx[static_cast<std::size_t>(r * 3 + 1)] = static_cast<std::int32_t>(kC - 1);
    idx[static_cast<std::size_t>(r * 3 + 2)] = -1;
  }
  const mg::TensorView iv(idx.data(), DType::kInt32, {kR, 3});
  EXPECT_FALSE(fits_int32(in, iv, {1}));
  EXPECT_FALSE(is_block(in, iv, {1}));
  const std::vector<std::uint8_t> got = run_both(in, iv, {1});
  for (std::int64_t r = kR - 3; r < kR; ++r) {
    for (int j = 0; j < 3; ++j) {
      const std::int64_t v = idx[static_cast<std::size_t>(r * 3 + j)];
      EXPECT_EQ(got[static_cast<std::size_t>(r * 3 + j)], pattern(r * kC + (v < 0 ? v + kC : v)));
    }
  }
}

TEST_F(LargeSizes, BlockKernelBeyond2Pow31) {
  // Rows of 4096 bytes along axis 0 (one lookup per block), rows past 2^31 / 4096 included.
  constexpr std::int64_t kB = 4096;
  constexpr std::int64_t kR = kN / kB;
  const std::vector<std::int64_t> rows = {0, kTwo31 / kB - 1, kTwo31 / kB, kR - 1, -1, kR / 2};
  const mg::TensorView in(input(), DType::kUInt8, {kR, kB});
  const mg::TensorView iv(rows.data(), DType::kInt64, {static_cast<std::int64_t>(rows.size()), 1});
  EXPECT_FALSE(fits_int32(in, iv, {0}));
  EXPECT_TRUE(is_block(in, iv, {0}));
  const std::vector<std::uint8_t> got = run_both(in, iv, {0});
  for (std::size_t j = 0; j < rows.size(); ++j) {
    const std::int64_t r = rows[j] < 0 ? rows[j] + kR : rows[j];
    for (std::int64_t t : {std::int64_t{0}, std::int64_t{1}, kB / 2, kB - 1}) {
      EXPECT_EQ(got[j * kB + t], pattern(r * kB + t)) << "row " << r << " column " << t;
    }
  }
}

TEST_F(LargeSizes, NegativeStridesBeyond2Pow31) {
  // The whole input reversed (data at the last element, stride -1): offsets down to -(kN - 1).
  const mg::TensorView in(input() + (kN - 1), DType::kUInt8, Dims{kN}, Dims{-1});
  const std::vector<std::int64_t> idx = {0, kTwo31, kN - 1, -1};
  const mg::TensorView iv(idx.data(), DType::kInt64, {4});
  EXPECT_FALSE(fits_int32(in, iv, {0}));
  const std::vector<std::uint8_t> got = run_both(in, iv, {0});
  for (std::size_t j = 0; j < idx.size(); ++j) {
    const std::int64_t pos = idx[j] < 0 ? idx[j] + kN : idx[j];
    EXPECT_EQ(got[j], pattern(kN - 1 - pos));
  }
}

TEST_F(LargeSizes, Int32FastPathBoundary) {
  // Farthest element 2^31 - 1 away: the 32-bit path, exact at the last element.
  const std::vector<std::int64_t> idx = {kTwo31 - 1, kTwo31 - 2, 0, -1};
  const mg::TensorView iv(idx.data(), DType::kInt64, {4});
  const mg::TensorView at_limit(input(), DType::kUInt8, {kTwo31});
  EXPECT_TRUE(fits_int32(at_limit, iv, {0}));
  std::vector<std::uint8_t> got = run_both(at_limit, iv, {0});
  EXPECT_EQ(got[0], pattern(kTwo31 - 1));
  EXPECT_EQ(got[1], pattern(kTwo31 - 2));
  EXPECT_EQ(got[3], pattern(kTwo31 - 1));
  // One more element: an offset of 2^31 does not fit, the 64-bit path runs.
  const std::vector<std::int64_t> idx2 = {kTwo31, kTwo31 - 1, -1};
  const mg::TensorView iv2(idx2.data(), DType::kInt64, {3});
  const mg::TensorView past(input(), DType::kUInt8, {kTwo31 + 1});
  EXPECT_FALSE(fits_int32(past, iv2, {0}));
  got = run_both(past, iv2, {0});
  EXPECT_EQ(got[0], pattern(kTwo31));
  EXPECT_EQ(got[1], pattern(kTwo31 - 1));
  EXPECT_EQ(got[2], pattern(kTwo31));
  // Negative stride at the limit: offsets down to -(2^31 - 1) fit, -(2^31) does not.
  const mg::TensorView neg_limit(input() + (kTwo31 - 1), DType::kUInt8, Dims{kTwo31}, Dims{-1});
  EXPECT_TRUE(fits_int32(neg_limit, iv, {0}));
  EXPECT_EQ(run_both(neg_limit, iv, {0})[0], pattern(0));
  const mg::TensorView neg_past(input() + kTwo31, DType::kUInt8, Dims{kTwo31 + 1}, Dims{-1});
  EXPECT_FALSE(fits_int32(neg_past, iv2, {0}));
  EXPECT_EQ(run_both(neg_past, iv2, {0})[0], pattern(0));
  // Block views whose rows reach exactly 2^31 - 1 (the 32-bit path) and 2^31 (not): the last
  // byte of the last row exact in both (the wide rows overlap: an input may).
  constexpr std::int64_t kB = std::int64_t{1} << 16;
  const std::vector<std::int64_t> r = {kTwo31 / kB - 1, 0};
  const mg::TensorView rv(r.data(), DType::kInt64, {2, 1});
  const mg::TensorView rows(input(), DType::kUInt8, Dims{kTwo31 / kB, kB});
  EXPECT_TRUE(fits_int32(rows, rv, {0}));
  EXPECT_TRUE(is_block(rows, rv, {0}));
  got = run_both(rows, rv, {0});
  EXPECT_EQ(got[kB - 1], pattern(kTwo31 - 1));
  EXPECT_EQ(got[kB], pattern(0));
  const mg::TensorView wide(input(), DType::kUInt8, Dims{kTwo31 / kB, kB + 1}, Dims{kB, 1});
  EXPECT_FALSE(fits_int32(wide, rv, {0}));  // extent (2^15 - 1) * 2^16 + 2^16 = 2^31
  EXPECT_TRUE(is_block(wide, rv, {0}));
  got = run_both(wide, rv, {0});
  EXPECT_EQ(got[kB], pattern(kTwo31));
  EXPECT_EQ(got[kB - 1], pattern(kTwo31 - 1));
}

TEST_F(LargeSizes, OutputViewSpanningBeyond2Pow31) {
  // A strided output whose rows lie 2^31 + 64 elements apart (lazily committed memory), and
  // indices read through a stride of 2^31 + 8 elements: the output and indices offsets leave
  // the 32-bit range while the input is small.
  constexpr std::int64_t kRowGap = kTwo31 + 64;
  Mapping out_a(static_cast<std::size_t>(kRowGap + 256)), out_b(static_cast<std::size_t>(kRowGap + 256));
  ASSERT_TRUE(out_a.data && out_b.data);
  const mg::TensorView in(input() + kTwo31, DType::kUInt8, {3, 256});
  Mapping ind(static_cast<std::size_t>(kTwo31 + 16));
  ASSERT_TRUE(ind.data);
  auto* ip = reinterpret_cast<std::int8_t*>(ind.data);
  ip[0] = 2;
  ip[kTwo31 + 8] = -3;  // row 0
  const mg::TensorView iv(ip, DType::kInt8, Dims{2, 1}, Dims{kTwo31 + 8, 1});
  const mg::MutableTensorView oa(out_a.data, DType::kUInt8, Dims{2, 256}, Dims{kRowGap, 1});
  const mg::MutableTensorView ob(out_b.data, DType::kUInt8, Dims{2, 256}, Dims{kRowGap, 1});
  EXPECT_FALSE(fits_int32(in, iv, {0}));
  const std::vector<std::int64_t> axes = {0};
  ASSERT_TRUE(mg::gather_multiaxis_reference(in, iv, axes, ob).ok());
  for (int threads : {1, 2}) {
    mg::GatherOptions o;
    o.num_threads = threads;
    const mg::Status s = mg::gather_multiaxis_into(in, iv, axes, oa, o);
    ASSERT_TRUE(s.ok()) << s.message();
    for (std::int64_t t = 0; t < 256; ++t) {
      EXPECT_EQ(out_a.data[t], pattern(kTwo31 + 2 * 256 + t));
      EXPECT_EQ(out_a.data[kRowGap + t], pattern(kTwo31 + t));
      EXPECT_EQ(out_a.data[kRowGap + t], out_b.data[kRowGap + t]);
      EXPECT_EQ(out_a.data[t], out_b.data[t]);
    }
  }
}

}  // namespace
