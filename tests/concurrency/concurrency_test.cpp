// tests/concurrency/concurrency_test.cpp: the C++ API called from many threads at once
// (CTest label `concurrency`; also built and run under ThreadSanitizer by .ci/run, see
// scripts/tsan.sh).
//
// Each caller thread makes many calls with its own shapes, dtypes and outputs, through every
// entry point (gather_multiaxis_into, the throwing gather_multiaxis, lower_op + execute,
// run_op, execute_alloc, explain_op, the output memory cache) and checks every result against
// the reference kernel run by the same thread. All threads also read one shared input and
// execute one shared Lowering (const) concurrently. Engine threads: each call runs with
// num_threads = 1 under ThreadSanitizer (MULTIGATHER_TSAN=1 in the environment), because
// libgomp is not TSan-instrumented and its barriers are reported as races (false positives);
// the race surface under test is the library's shared state between CALLERS (registry, caches,
// output memory), which many caller threads exercise. In normal builds calls use 0/1/2 threads.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "multigather/execute.hpp"
#include "multigather/gather.hpp"
#include "multigather/lowering.hpp"
#include "multigather/output_memory.hpp"
#include "multigather/registry.hpp"

#include "host_pool.hpp"

namespace mg = multigather;
using mg::DType;
using mg::Dims;

namespace {

bool under_tsan() {
  const char* v = std::getenv("MULTIGATHER_TSAN");
  return v && *v && std::strcmp(v, "0") != 0;
}
int iterations() { return under_tsan() ? 300 : 2000; }
int engine_threads(std::mt19937& rng) {
  return under_tsan() ? 1 : static_cast<int>(rng() % 3);  // 0 = automatic, 1, 2
}

/// The first failure's description (the others are counted).
std::mutex g_first_mutex;
std::string g_first;
void fail(std::atomic<int>* failures, const std::string& what) {
  if ((*failures)++ == 0) {
    std::lock_guard<std::mutex> lock(g_first_mutex);
    g_first = what;
  }
}

std::vector<unsigned char> random_bytes(std::mt19937& rng, std::size_t n) {
  std::vector<unsigned char> b(n);
  for (auto& x : b) x = static_cast<unsigned char>(rng());
  return b;
}

constexpr DType kDTypes[] = {DType::kUInt8, DType::kInt16, DType::kFloat32, DType::kFloat64,
                             DType::kComplex128, DType::kBFloat16};

/// One thread's work: random core calls checked against the reference kernel.
void core_calls(unsigned seed, const mg::TensorView& shared, std::atomic<int>* failures) {
  std::mt19937 rng(seed);
  for (int it = 0; it < iterations(); ++it) {
    const bool use_shared = rng() % 4 == 0;
    const DType dtype = use_shared ? shared.dtype : kDTypes[rng() % std::size(kDTypes)];
    const int r = use_shared ? shared.rank() : 1 + static_cast<int>(rng() % 4);
    Dims xs;
    for (int d = 0; d < r; ++d) xs.push_back(use_shared ? shared.shape[d] : 1 + rng() % 5);
    const int axis = static_cast<int>(rng() % r);
    Dims is = xs;  // c = 1: the indices shape is the logical one
    is[axis] = 1 + rng() % 6;
    for (int d = 0; d < r; ++d) {
      if (d != axis && rng() % 3 == 0) is[d] = 1;  // broadcast along d
    }
    std::int64_t nx = 0, ni = 0;
    mg::element_count(xs, &nx);
    mg::element_count(is, &ni);
    const std::size_t es = mg::element_size(dtype);
    std::vector<unsigned char> own = random_bytes(rng, static_cast<std::size_t>(nx) * es);
    const mg::TensorView x(use_shared ? shared.data : own.data(), dtype, xs);
    std::vector<std::int32_t> idx(static_cast<std::size_t>(ni));
    for (auto& v : idx) v = static_cast<std::int32_t>(rng() % (2 * xs[axis])) - static_cast<std::int32_t>(xs[axis]);
    const mg::TensorView iv(idx.data(), DType::kInt32, is);
    const std::vector<std::int64_t> axes = {axis};
    mg::GatherOptions o;
    o.num_threads = engine_threads(rng);
    mg::GatherShape gs;
    if (!mg::infer_shape(xs, is, axes, &gs).ok()) { fail(failures, "infer_shape " + mg::to_string(xs) + mg::to_string(is)); continue; }
    const std::size_t nbytes = static_cast<std::size_t>(gs.output_numel) * es;
    std::vector<unsigned char> want(nbytes, 0), got(nbytes, 1);
    const mg::Status rs = mg::gather_multiaxis_reference(
        x, iv, axes, mg::MutableTensorView(want.data(), dtype, gs.output_shape), o);
    mg::Status gs2;
    switch (it % 3) {
      case 0:
        gs2 = mg::gather_multiaxis_into(x, iv, axes, mg::MutableTensorView(got.data(), dtype, gs.output_shape), o);
        break;
      case 1: {
        mg::Tensor t = mg::gather_multiaxis(x, iv, axes, o);
        std::memcpy(got.data(), t.data(), nbytes);
        break;
      }
      default: {  // the output memory cache: allocate, write, free from many threads
        void* block = mg::allocate_output_memory(nbytes + mg::kOutputCacheMinBytes * (rng() % 2));
        gs2 = mg::gather_multiaxis_into(x, iv, axes, mg::MutableTensorView(block, dtype, gs.output_shape), o);
        std::memcpy(got.data(), block, nbytes);
        mg::free_output_memory(block);
      }
    }
    if (!rs.ok() || !gs2.ok() || got != want) {
      fail(failures, "core call " + std::to_string(it % 3) + ": " + rs.message() + " | " + gs2.message());
    }
  }
}

/// One thread's work: registry ops through lower_op + execute / run_op / execute_alloc, and one
/// shared const Lowering executed by every thread.
void registry_calls(unsigned seed, const mg::Lowering* shared, const std::vector<float>* shared_want,
                    std::atomic<int>* failures) {
  std::mt19937 rng(seed);
  const char* ops[] = {"torch.gather", "onnx.GatherElements", "onnx.Gather", "numpy.take"};
  for (int it = 0; it < iterations(); ++it) {
    mg::ExecutionContext ctx;
    ctx.num_threads = engine_threads(rng);
    if (it % 5 == 0) {  // the shared lowering
      std::vector<float> out(shared_want->size(), -1.0f);
      const mg::Status s = mg::execute(*shared, mg::MutableTensorView(out.data(), DType::kFloat32, shared->output_shape), ctx);
      if (!s.ok() || out != *shared_want) fail(failures, "shared lowering: " + s.message());
      continue;
    }
    const char* op = ops[rng() % std::size(ops)];
    const Dims xs{static_cast<std::int64_t>(2 + rng() % 3), static_cast<std::int64_t>(2 + rng() % 4)};
    const Dims is{xs[0], static_cast<std::int64_t>(1 + rng() % xs[1])};  // valid for every op
    std::vector<float> x(static_cast<std::size_t>(xs[0] * xs[1]));
    for (auto& v : x) v = static_cast<float>(rng() % 1000);
    std::vector<std::int64_t> idx(static_cast<std::size_t>(is[0] * is[1]));
    for (auto& v : idx) v = static_cast<std::int64_t>(rng() % 2);  // valid for every op above
    mg::Attributes attrs;
    if (std::string(op) == "torch.gather") attrs.set_int("dim", 1);
    else if (std::string(op) == "numpy.take") attrs.set_int("axis", 0);
    else attrs.set_int("axis", 0);
    const mg::TensorView xv(x.data(), DType::kFloat32, xs), iv(idx.data(), DType::kInt64, is);
    mg::Lowering l;
    const mg::Status ls = mg::lower_op(op, xv, iv, attrs, &l);
    if (!ls.ok()) { fail(failures, ls.message()); continue; }
    std::int64_t n = 0;
    mg::element_count(l.output_shape, &n);
    std::vector<float> want(static_cast<std::size_t>(n), -2.0f);
    if (!mg::gather_multiaxis_reference(l.input, l.indices, l.axes,
                                        mg::MutableTensorView(want.data(), DType::kFloat32, l.core_output_shape,
                                                              l.core_output_strides),
                                        l.options).ok()) {
      fail(failures, std::string("reference on the lowering of ") + op);
      continue;
    }
    mg::Tensor t;
    mg::Status s;
    if (it % 3 == 0) {
      s = mg::run_op(op, xv, iv, attrs, &t, ctx);
    } else {
      mg::MutableTensorView view;
      s = mg::execute_alloc(l, ctx, &view, &t);
    }
    if (!s.ok() || t.numel() != n || std::memcmp(t.data(), want.data(), want.size() * 4) != 0) {
      fail(failures, std::string(op) + ": " + s.message());
    }
    if (it % 50 == 0) {
      std::string text;
      if (!mg::explain_op(op, xs, DType::kFloat32, is, DType::kInt64, attrs, &text).ok() || text.empty()) {
        fail(failures, std::string("explain ") + op);
      }
    }
  }
}

TEST(Concurrency, CoreCallsFromManyThreads) {
  std::vector<float> data(4 * 5 * 3);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
  const mg::TensorView shared(data.data(), DType::kFloat32, {4, 5, 3});
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 8; ++t) threads.emplace_back(core_calls, 1000 + t, std::cref(shared), &failures);
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << g_first;
}

TEST(Concurrency, RegistryCallsAndASharedLoweringFromManyThreads) {
  std::vector<float> x(6 * 7);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.5f;
  const std::vector<std::int64_t> idx = {5, 0, -1, 3, 2, 6};
  mg::Lowering shared;
  ASSERT_TRUE(mg::lower_op("onnx.Gather", mg::TensorView(x.data(), DType::kFloat32, {6, 7}),
                           mg::TensorView(idx.data(), DType::kInt64, {2, 3}),
                           mg::Attributes().set_int("axis", 1), &shared).ok());
  std::vector<float> want(6 * 2 * 3);
  for (int a = 0; a < 6; ++a) {
    for (int j = 0; j < 6; ++j) {
      const std::int64_t c = idx[static_cast<std::size_t>(j)] < 0 ? idx[static_cast<std::size_t>(j)] + 7 : idx[static_cast<std::size_t>(j)];
      want[static_cast<std::size_t>(a * 6 + j)] = x[static_cast<std::size_t>(a * 7 + c)];
    }
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < 8; ++t) threads.emplace_back(registry_calls, 2000 + t, &shared, &want, &failures);
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0) << g_first;
}

TEST(Concurrency, CallersSharingOneHostPool) {
  // Four callers execute one shared Lowering on one host pool (as XLA's executions share its
  // intra-op pool): the engine's workers are each caller plus pool tasks (core/task_pool.hpp).
  // No OpenMP here, so ThreadSanitizer sees every synchronization.
  constexpr std::int64_t kRows = 512, kCols = 256, kLookups = 2048;
  std::vector<float> table(static_cast<std::size_t>(kRows * kCols));
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i % 1000) * 0.25f;
  std::vector<std::int64_t> ids(kLookups);
  for (std::int64_t i = 0; i < kLookups; ++i) ids[static_cast<std::size_t>(i)] = (i * 7919) % kRows;
  mg::Lowering shared;
  ASSERT_TRUE(mg::lower_op("onnx.Gather", mg::TensorView(table.data(), DType::kFloat32, {kRows, kCols}),
                           mg::TensorView(ids.data(), DType::kInt64, {kLookups}),
                           mg::Attributes().set_int("axis", 0), &shared).ok());
  mg::testing::HostPool host;  // three threads
  const mg::TaskPool pool = host.pool();
  std::atomic<int> failures{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      std::vector<float> out(static_cast<std::size_t>(kLookups * kCols));
      mg::ExecutionContext context;
      context.task_pool = &pool;
      context.num_threads = 4;
      for (int call = 0; call < 20; ++call) {
        std::memset(out.data(), 0, out.size() * sizeof(float));
        const mg::Status s = mg::execute(shared, mg::MutableTensorView(out.data(), DType::kFloat32, {kLookups, kCols}), context);
        bool same = s.ok();
        for (std::int64_t i = 0; same && i < kLookups; ++i) {
          same = std::memcmp(&out[static_cast<std::size_t>(i * kCols)], &table[static_cast<std::size_t>(ids[static_cast<std::size_t>(i)] * kCols)],
                             kCols * sizeof(float)) == 0;
        }
        if (!same) failures.fetch_add(1);
      }
    });
  }
  for (auto& th : callers) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
