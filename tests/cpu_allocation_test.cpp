// The per-call path (validate, plan, kernel) allocates nothing on success: counted through the
// global operator new, which this file replaces for the whole test executable (it forwards to
// malloc and only counts).
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <new>
#include <vector>

#include "multigather/multigather.hpp"

namespace {
std::atomic<std::int64_t> g_allocations{0};
}  // namespace

void* operator new(std::size_t n) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

namespace mg = multigather;

std::int64_t allocations_during(const std::function<void()>& call) {
  const std::int64_t before = g_allocations.load();
  call();
  return g_allocations.load() - before;
}

TEST(CpuAllocation, IntoCallsAllocateNothing) {
  // The tiny case of docs/bench.md and a row gather large enough to use every thread.
  struct Case { mg::Dims input, indices; std::vector<std::int64_t> axes; };
  const Case cases[] = {{{16, 16}, {4, 1}, {0}}, {{4096, 256}, {8192, 1}, {0}},
                        {{64, 64, 8}, {64, 512, 2}, {2, 1}}};
  for (const Case& c : cases) {
    mg::Tensor input(mg::DType::kFloat32, c.input);
    mg::Tensor indices(mg::DType::kInt64, c.indices);
    for (std::int64_t i = 0; i < indices.numel(); ++i) indices.data_as<std::int64_t>()[i] = i % 5;
    const mg::GatherShape shape = mg::output_shape(c.input, c.indices, c.axes);
    mg::Tensor output(mg::DType::kFloat32, shape.output_shape);
    const mg::TensorView in = input.view(), ix = indices.view();
    const mg::MutableTensorView out = output.mutable_view();
    for (const int threads : {1, 0, 2}) {
      mg::GatherOptions options;
      options.num_threads = threads;
      ASSERT_TRUE(mg::gather_multiaxis_into(in, ix, c.axes, out, options).ok());  // warm-up
      mg::Status status;
      EXPECT_EQ(allocations_during([&] {
                  status = mg::gather_multiaxis_into(in, ix, c.axes, out, options);
                }),
                0)
          << "input " << mg::to_string(c.input) << ", num_threads " << threads;
      EXPECT_TRUE(status.ok());
    }
  }
}

TEST(CpuAllocation, CountsTheErrorMessageOfABadIndex) {
  // The counter itself works: an out-of-range index makes a message string (a heap string).
  mg::Tensor input(mg::DType::kFloat32, {16, 16});
  mg::Tensor indices(mg::DType::kInt64, {4, 1});
  mg::Tensor output(mg::DType::kFloat32, {4, 16});
  for (int i = 0; i < 4; ++i) indices.data_as<std::int64_t>()[i] = 16 + i;
  std::vector<std::int64_t> axes = {0};
  mg::Status status;
  EXPECT_GT(allocations_during([&] {
              status = mg::gather_multiaxis_into(input.view(), indices.view(), axes,
                                                 output.mutable_view());
            }),
            0);
  EXPECT_EQ(status.message(),
            "indices[0,0] = 16 is out of range for axis 0 of size 16 (valid range [-16, 16))");
}

}  // namespace
