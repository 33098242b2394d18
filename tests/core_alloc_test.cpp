// gather_multiaxis_alloc: the one-shot call with the caller's allocator (what the Python
// binding's numpy fast path uses). Results are checked against the reference kernel.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "multigather/multigather.hpp"

namespace {

namespace mg = multigather;

struct Arena {
  std::vector<float> storage;
  int calls = 0;
  mg::Dims shape;
  bool fail = false;
};

bool allocate(void* context, mg::DType dtype, const mg::Dims& shape, mg::MutableTensorView* output) {
  auto* arena = static_cast<Arena*>(context);
  ++arena->calls;
  arena->shape = shape;
  if (arena->fail) return false;
  std::int64_t numel = 0;
  mg::element_count(shape, &numel);
  arena->storage.assign(static_cast<std::size_t>(numel), -1.0f);
  *output = mg::MutableTensorView(arena->storage.data(), dtype, shape);
  return true;
}

TEST(GatherAlloc, AllocatesTheOutputShapeOnceAndMatchesTheReference) {
  // GatherElements-like: input [3,4], indices [3,2] along axis 1 -> [3,2].
  std::vector<float> input(12);
  for (int i = 0; i < 12; ++i) input[i] = static_cast<float>(10 * i);
  const std::vector<std::int64_t> indices = {3, 0, -1, 1, 2, 2};
  const mg::TensorView in(input.data(), mg::DType::kFloat32, mg::Dims{3, 4});
  const mg::TensorView ix(indices.data(), mg::DType::kInt64, mg::Dims{3, 2});
  const std::vector<std::int64_t> axes = {1};
  Arena arena;
  ASSERT_TRUE(mg::gather_multiaxis_alloc(in, ix, axes, {}, &allocate, &arena).ok());
  EXPECT_EQ(arena.calls, 1);
  EXPECT_EQ(arena.shape, (mg::Dims{3, 2}));
  std::vector<float> expected(6);
  ASSERT_TRUE(mg::gather_multiaxis_reference(in, ix, axes,
                                             mg::MutableTensorView(expected.data(), mg::DType::kFloat32, mg::Dims{3, 2}))
                  .ok());
  EXPECT_EQ(arena.storage, expected);
  EXPECT_EQ(arena.storage, (std::vector<float>{30, 0, 70, 50, 100, 100}));
}

TEST(GatherAlloc, InvalidOperandsNeverCallTheAllocator) {
  std::vector<float> input(12, 0.0f);
  const std::vector<std::int64_t> indices = {0, 1};
  const mg::TensorView in(input.data(), mg::DType::kFloat32, mg::Dims{3, 4});
  const mg::TensorView ix(indices.data(), mg::DType::kInt64, mg::Dims{2});  // rank 1 != 2
  const std::vector<std::int64_t> axes = {0};
  Arena arena;
  const mg::Status status = mg::gather_multiaxis_alloc(in, ix, axes, {}, &allocate, &arena);
  EXPECT_EQ(status.code(), mg::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "indices rank 1 must equal input rank 2");
  EXPECT_EQ(arena.calls, 0);
}

TEST(GatherAlloc, AFailedAllocatorAndABadIndexAreReported) {
  std::vector<float> input(12, 0.0f);
  const std::vector<std::int64_t> indices = {0, 7};
  const mg::TensorView in(input.data(), mg::DType::kFloat32, mg::Dims{3, 4});
  const mg::TensorView ix(indices.data(), mg::DType::kInt64, mg::Dims{2, 1});
  const std::vector<std::int64_t> axes = {0};
  Arena failing;
  failing.fail = true;
  const mg::Status failed = mg::gather_multiaxis_alloc(in, ix, axes, {}, &allocate, &failing);
  EXPECT_EQ(failed.code(), mg::StatusCode::kInternal);
  EXPECT_EQ(failed.message(), "the output allocator failed");
  EXPECT_EQ(mg::gather_multiaxis_alloc(in, ix, axes, {}, nullptr, nullptr).code(), mg::StatusCode::kInternal);

  Arena arena;
  const mg::Status bad = mg::gather_multiaxis_alloc(in, ix, axes, {}, &allocate, &arena);
  EXPECT_EQ(bad.code(), mg::StatusCode::kOutOfRange);
  EXPECT_EQ(bad.message(), "indices[1,0] = 7 is out of range for axis 0 of size 3 (valid range [-3, 3))");
}

}  // namespace
