// The one lowering cache (multigather/lowering_cache.hpp): keys, hits moved to new operands
// (against lower_op on those operands and the reference gather), leases taken out and given
// back, entries replaced, lowerings with copies never kept.
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "multigather/lowering_cache.hpp"

namespace mg = multigather;

namespace {

struct Call {
  std::vector<float> input;
  std::vector<std::int64_t> indices;
  mg::TensorView in, idx;
  Call(std::int64_t rows, std::int64_t cols, std::vector<std::int64_t> ids) : input(rows * cols), indices(std::move(ids)) {
    std::iota(input.begin(), input.end(), float(rows * 1000));
    in = mg::TensorView(input.data(), mg::DType::kFloat32, {rows, cols});
    idx = mg::TensorView(indices.data(), mg::DType::kInt64, {static_cast<std::int64_t>(indices.size())});
  }
};

mg::LoweringKey key_of(const mg::TensorView& in, const mg::TensorView& idx, std::int64_t axis) {
  mg::LoweringKey key;
  key.add_view(in);
  key.add_view(idx);
  key.add(axis);
  return key;
}

mg::Lowering lowered(const Call& c, std::int64_t axis) {
  mg::Attributes attrs;
  attrs.set_int("axis", axis);
  mg::Lowering l;
  EXPECT_TRUE(mg::lower_op("onnx.Gather", c.in, c.idx, attrs, &l).ok());
  return l;
}

std::vector<float> run(const mg::Lowering& l) {
  std::int64_t n = 1;
  for (std::int64_t s : l.output_shape) n *= s;
  std::vector<float> out(static_cast<std::size_t>(n));
  EXPECT_TRUE(mg::execute(l, mg::MutableTensorView(out.data(), mg::DType::kFloat32, l.output_shape)).ok());
  return out;
}

}  // namespace

TEST(LoweringKey, EqualBytesOnlyForEqualLayoutsAndValues) {
  Call a(4, 3, {0, 2}), b(4, 3, {1, 1}), c(3, 4, {0, 2});
  EXPECT_TRUE(key_of(a.in, a.idx, 0) == key_of(b.in, b.idx, 0));  // data differs, layouts do not
  EXPECT_FALSE(key_of(a.in, a.idx, 0) == key_of(c.in, c.idx, 0));  // shape
  EXPECT_FALSE(key_of(a.in, a.idx, 0) == key_of(a.in, a.idx, 1));  // attribute
  mg::LoweringKey ab, a_b;
  ab.add_text("ab");
  ab.add_text("c");
  a_b.add_text("a");
  a_b.add_text("bc");
  EXPECT_FALSE(ab == a_b);
  mg::LoweringKey big;
  for (int i = 0; i < 1000; ++i) big.add(std::int64_t{i});  // grows past its first capacity
  mg::LoweringKey copy = big;
  EXPECT_TRUE(copy == big);
  copy.clear();
  EXPECT_TRUE(copy.empty());
}

TEST(LoweringCache, AHitIsTheLoweringOfTheNewOperandsAndALeaseIsOutWhileHeld) {
  mg::LoweringCache cache(2);
  Call first(5, 3, {4, 0, 2}), second(5, 3, {1, 1, 3});
  const mg::LoweringKey key = key_of(first.in, first.idx, 0);
  mg::LoweringCache::Lease miss;
  EXPECT_FALSE(cache.find(key, first.in.data, first.idx.data, nullptr, &miss));
  {
    mg::LoweringCache::Lease kept = cache.keep(key, lowered(first, 0), first.in, first.idx, nullptr);
    ASSERT_TRUE(kept);
    EXPECT_EQ(run(*kept.get()), run(lowered(first, 0)));
    // While the lease is out, the entry is empty: another call lowers on its own.
    mg::LoweringCache::Lease other;
    EXPECT_FALSE(cache.find(key, second.in.data, second.idx.data, nullptr, &other));
  }
  mg::LoweringCache::Lease hit;
  ASSERT_TRUE(cache.find(key, second.in.data, second.idx.data, nullptr, &hit));
  EXPECT_EQ(run(*hit.get()), run(lowered(second, 0)));  // moved to the second call's buffers
  std::vector<float> want = {second.input[3], second.input[4], second.input[5], second.input[3], second.input[4],
                             second.input[5], second.input[9], second.input[10], second.input[11]};
  EXPECT_EQ(run(*hit.get()), want);  // onnx.Gather along axis 0: rows 1, 1, 3
}

TEST(LoweringCache, EntriesAreReplacedOldestFirstAndAReplacedLeaseIsNotGivenBack) {
  mg::LoweringCache cache(1);
  Call a(4, 2, {1}), b(6, 2, {5});
  const mg::LoweringKey ka = key_of(a.in, a.idx, 0), kb = key_of(b.in, b.idx, 0);
  {
    mg::LoweringCache::Lease la = cache.keep(ka, lowered(a, 0), a.in, a.idx, nullptr);
    // b takes the only entry while a's lease is out: a's lowering is not given back over it.
    mg::LoweringCache::Lease lb = cache.keep(kb, lowered(b, 0), b.in, b.idx, nullptr);
  }
  mg::LoweringCache::Lease l;
  EXPECT_FALSE(cache.find(ka, a.in.data, a.idx.data, nullptr, &l));
  ASSERT_TRUE(cache.find(kb, b.in.data, b.idx.data, nullptr, &l));
  EXPECT_EQ(run(*l.get()), run(lowered(b, 0)));
}

TEST(LoweringCache, ALoweringThatCopiedAnOperandIsNotKept) {
  // onnx.Gather of a non-contiguous input of merged dimensions copies it (the lowering is then
  // a function of the values, not of the key alone): used by its lease, never kept.
  mg::LoweringCache cache;
  std::vector<float> data(24);
  std::iota(data.begin(), data.end(), 0.f);
  std::vector<std::int64_t> ids = {2, 0};
  const mg::TensorView in(data.data(), mg::DType::kFloat32, {2, 3}, {12, 2});  // strided rows and columns
  const mg::TensorView idx(ids.data(), mg::DType::kInt64, {2});
  mg::Lowering l;
  ASSERT_TRUE(mg::lower_op("torch.take", in, idx, mg::Attributes(), &l).ok());
  const mg::LoweringKey key = key_of(in, idx, 0);
  mg::LoweringAnchors anchors;
  const bool keepable = mg::lowering_anchors(l, in, idx, nullptr, &anchors);
  {
    const mg::LoweringCache::Lease lease = cache.keep(key, std::move(l), in, idx, nullptr);
    ASSERT_TRUE(lease);
  }
  mg::LoweringCache::Lease again;
  EXPECT_EQ(cache.find(key, in.data, idx.data, nullptr, &again), keepable);
  EXPECT_FALSE(keepable);  // torch.take flattens a strided input: a copy
}
