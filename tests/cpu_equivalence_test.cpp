// The CPU engine against the reference kernel (the SPEC formula) on randomized cases: element
// widths 1..16 bytes, all eight index types, the four index modes, the negative rule,
// broadcasting, strided / transposed / reversed views and forced thread counts.
//
// The seed is printed; replay a run with MULTIGATHER_SEED=<seed> (a failing case prints its
// own case seed, which replays that case alone with MULTIGATHER_CASES=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <thread>
#include <vector>

#include "core/task_pool.hpp"
#include "host_pool.hpp"
#include "kernels/cpu/cpu.hpp"
#include "kernels/cpu/avx512.hpp"
#include "kernels/cpu/element_run.hpp"
#include "kernels/cpu/index_check.hpp"
#include "generic_kernel_oracle.hpp"
#include "kernels/reference/reference.hpp"
#include "plan/plan.hpp"
#include "test_seed.hpp"

namespace mg = multigather;

namespace {

using Rng = std::mt19937_64;

using mg::test::run_seed;

int case_count(int fallback) {
  const char* env = std::getenv("MULTIGATHER_CASES");
  return env ? std::atoi(env) : fallback;
}

std::int64_t uniform(Rng& rng, std::int64_t lo, std::int64_t hi) {  // [lo, hi]
  return std::uniform_int_distribution<std::int64_t>(lo, hi)(rng);
}
bool chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

/// A strided view over its own buffer: dims permuted in memory, gaps, reversed dimensions.
struct StridedBuffer {
  std::vector<std::byte> bytes;
  std::int64_t origin = 0;  // byte offset of element [0, ..., 0]
  mg::Dims strides;
  std::byte* data() { return bytes.data() + origin; }
};

StridedBuffer make_buffer(Rng& rng, const mg::Dims& shape, std::size_t es, bool allow_broadcast) {
  const int r = shape.size();
  std::vector<int> order(static_cast<std::size_t>(r));
  for (int d = 0; d < r; ++d) order[static_cast<std::size_t>(d)] = d;
  if (chance(rng, 0.3)) std::shuffle(order.begin(), order.end(), rng);
  const bool plain = chance(rng, 0.4);
  StridedBuffer b;
  b.strides = mg::Dims::filled(r, 0);
  std::int64_t stride = 1;
  for (int i = r - 1; i >= 0; --i) {  // innermost memory dimension first
    const int d = order[static_cast<std::size_t>(i)];
    const std::int64_t gap = plain ? 1 : uniform(rng, 1, 2);
    stride *= gap;
    b.strides[d] = stride;
    stride *= std::max<std::int64_t>(shape[d], 1);
  }
  std::int64_t lo = 0, hi = 0;
  for (int d = 0; d < r; ++d) {
    if (!plain && chance(rng, 0.2)) b.strides[d] = -b.strides[d];
    if (allow_broadcast && !plain && chance(rng, 0.1)) b.strides[d] = 0;  // a stride-0 view
    const std::int64_t reach = b.strides[d] * std::max<std::int64_t>(shape[d] - 1, 0);
    (reach < 0 ? lo : hi) += reach;
  }
  b.bytes.resize(static_cast<std::size_t>((hi - lo + 1) * static_cast<std::int64_t>(es)));
  b.origin = -lo * static_cast<std::int64_t>(es);
  for (auto& x : b.bytes) x = static_cast<std::byte>(rng());
  return b;
}

template <class T>
void store_index(std::byte* p, std::int64_t v) {
  const T t = static_cast<T>(v);
  std::memcpy(p, &t, sizeof(T));
}

void write_index(std::byte* p, mg::DType t, std::int64_t v) {
  switch (t) {
    case mg::DType::kInt8: return store_index<std::int8_t>(p, v);
    case mg::DType::kUInt8: return store_index<std::uint8_t>(p, v);
    case mg::DType::kInt16: return store_index<std::int16_t>(p, v);
    case mg::DType::kUInt16: return store_index<std::uint16_t>(p, v);
    case mg::DType::kInt32: return store_index<std::int32_t>(p, v);
    case mg::DType::kUInt32: return store_index<std::uint32_t>(p, v);
    case mg::DType::kInt64: return store_index<std::int64_t>(p, v);
    default: return store_index<std::uint64_t>(p, v);  // v's bits: -1 is UINT64_MAX
  }
}

/// One random call: views, axes, options. Index values depend on the mode (in range, negative,
/// or anything at all).
struct RandomCall {
  mg::DType dtype = mg::DType::kFloat32;
  mg::DType index_dtype = mg::DType::kInt64;
  StridedBuffer input, indices;
  mg::TensorView input_view, indices_view;
  mg::Dims output_shape;
  std::vector<std::int64_t> axes;
  mg::GatherOptions options;
};

RandomCall make_call(Rng& rng) {
  static const mg::DType kDTypes[] = {mg::DType::kUInt8, mg::DType::kFloat16, mg::DType::kFloat32,
                                      mg::DType::kFloat64, mg::DType::kComplex128};
  static const mg::DType kIndexTypes[] = {mg::DType::kInt8,  mg::DType::kUInt8, mg::DType::kInt16,
                                          mg::DType::kUInt16, mg::DType::kInt32, mg::DType::kUInt32,
                                          mg::DType::kInt64, mg::DType::kUInt64};
  RandomCall c;
  c.dtype = kDTypes[uniform(rng, 0, 4)];
  c.index_dtype = kIndexTypes[uniform(rng, 0, 7)];
  const int r = static_cast<int>(chance(rng, 0.03) ? 0 : uniform(rng, 1, 4));
  const bool big = chance(rng, 0.15);  // long rows: several tiles, chunks split mid-row
  mg::Dims in_shape = mg::Dims::filled(r, 1);
  for (int d = 0; d < r; ++d) {
    in_shape[d] = chance(rng, 0.02) ? 0 : uniform(rng, 1, 5);
    if (d == r - 1 && chance(rng, 0.4)) in_shape[d] = uniform(rng, 1, 40);  // blocks of 64 B+
  }
  const int k = r == 0 ? 0 : static_cast<int>(uniform(rng, 0, r));
  std::vector<int> dims(static_cast<std::size_t>(r));
  for (int d = 0; d < r; ++d) dims[static_cast<std::size_t>(d)] = d;
  std::shuffle(dims.begin(), dims.end(), rng);
  std::vector<bool> is_axis(static_cast<std::size_t>(r), false);
  for (int j = 0; j < k; ++j) {
    const int a = dims[static_cast<std::size_t>(j)];
    is_axis[static_cast<std::size_t>(a)] = true;
    c.axes.push_back(chance(rng, 0.3) ? a - r : a);
  }
  const int cs = std::max(k, 1);
  mg::Dims logical = mg::Dims::filled(r, 1);
  for (int d = 0; d < r; ++d) {
    if (is_axis[static_cast<std::size_t>(d)]) {
      const bool long_axis = big && d == dims[0];  // one long axis at most
      logical[d] = chance(rng, 0.03) ? 0 : uniform(rng, 1, long_axis ? 700 : 6);
    } else if (in_shape[d] == 1) {
      logical[d] = chance(rng, 0.5) ? uniform(rng, 1, 4) : 1;  // input broadcast
    } else {
      logical[d] = chance(rng, 0.25) ? 1 : in_shape[d];  // index broadcast
    }
  }
  if (big && r > 0 && k == 0) logical[0] = uniform(rng, 1, 700);
  if (big && r > 0 && k == 0 && in_shape[0] != 1) logical[0] = in_shape[0];
  mg::Dims ix_shape = logical;
  if (r > 0) ix_shape[r - 1] *= cs;

  const std::size_t es = mg::element_size(c.dtype);
  const std::size_t is = mg::element_size(c.index_dtype);
  c.input = make_buffer(rng, in_shape, es, true);
  c.indices = make_buffer(rng, ix_shape, is, true);

  const int mode = static_cast<int>(uniform(rng, 0, 3));
  c.options.index_mode = static_cast<mg::IndexMode>(mode);
  c.options.negative_indices = chance(rng, 0.7);
  c.options.fill_value = mg::Scalar::from_int(uniform(rng, 0, 100));
  const bool signed_ix = !mg::is_unsigned_integer(c.index_dtype);
  const bool wild = c.options.index_mode != mg::IndexMode::kError || chance(rng, 0.1);
  // Index values: per coordinate position of the buffer (a stride-0 view shares values).
  std::int64_t n = 1;
  for (int d = 0; d < r; ++d) n *= ix_shape[d];
  mg::Dims pos = mg::Dims::filled(r, 0);
  for (std::int64_t e = 0; e < n; ++e) {
    const int j = r > 0 ? static_cast<int>(pos[r - 1] % cs) : 0;
    const std::int64_t size = k > 0 ? in_shape[static_cast<int>(dims[static_cast<std::size_t>(j)])] : 1;
    std::int64_t v = uniform(rng, 0, std::max<std::int64_t>(size - 1, 0));
    if (signed_ix && c.options.negative_indices && chance(rng, 0.3)) v -= size;
    if (wild && chance(rng, 0.2)) {
      static const std::int64_t kWild[] = {-1, -2, 5, 7, 100, -100, 127, -128, 255, 65535, -32768,
                                           std::numeric_limits<std::int64_t>::max(),
                                           std::numeric_limits<std::int64_t>::min()};
      v = chance(rng, 0.5) ? kWild[uniform(rng, 0, 12)] : size + uniform(rng, 0, 3);
    }
    std::int64_t off = 0;
    for (int d = 0; d < r; ++d) off += pos[d] * c.indices.strides[d];
    write_index(c.indices.data() + off * static_cast<std::int64_t>(is), c.index_dtype, v);
    for (int d = r - 1; d >= 0; --d) {
      if (++pos[d] < ix_shape[d]) break;
      pos[d] = 0;
    }
  }
  c.input_view = mg::TensorView(c.input.data(), c.dtype, in_shape, c.input.strides);
  c.indices_view = mg::TensorView(c.indices.data(), c.index_dtype, ix_shape, c.indices.strides);
  mg::GatherShape shape;
  EXPECT_TRUE(mg::infer_shape(in_shape, ix_shape, c.axes, &shape).ok());
  c.output_shape = shape.output_shape;
  return c;
}

std::string describe(const RandomCall& c) {
  std::string s = "input " + mg::to_string(c.input_view.shape) + " strides " +
                  mg::to_string(c.input_view.strides) + " " +
                  std::string(mg::dtype_name(c.dtype)) + ", indices " +
                  mg::to_string(c.indices_view.shape) + " strides " +
                  mg::to_string(c.indices_view.strides) + " " +
                  std::string(mg::dtype_name(c.index_dtype)) + ", axes [";
  for (std::size_t j = 0; j < c.axes.size(); ++j) s += (j ? "," : "") + std::to_string(c.axes[j]);
  return s + "], mode " + std::string(mg::index_mode_name(c.options.index_mode)) +
         ", negative_indices " + (c.options.negative_indices ? "true" : "false");
}

/// A C-contiguous buffer of `shape` (random bytes).
StridedBuffer contiguous_buffer(Rng& rng, const mg::Dims& shape, std::size_t es) {
  StridedBuffer b;
  b.strides = mg::Dims::filled(shape.size(), 1);
  std::int64_t count = 1;
  for (int d = shape.size() - 1; d >= 0; --d) {
    b.strides[d] = count;
    count *= shape[d];
  }
  b.bytes.resize(static_cast<std::size_t>(count) * es);
  for (auto& x : b.bytes) x = static_cast<std::byte>(rng());
  return b;
}

/// Runs `run` on a fresh (sentinel-filled) output, strided at random unless `contiguous`, and
/// the reference on another; both outputs, gaps included, must be byte-identical, and both
/// must agree on success.
template <class Run>
void expect_same_as_reference(Rng& rng, const RandomCall& c, const char* what, Run run, bool contiguous = false) {
  const std::size_t es = mg::element_size(c.dtype);
  Rng layout = rng;  // same layout for both outputs
  StridedBuffer expected = contiguous ? contiguous_buffer(layout, c.output_shape, es)
                                      : make_buffer(layout, c.output_shape, es, false);
  StridedBuffer got = expected;
  const mg::MutableTensorView ev(expected.data(), c.dtype, c.output_shape, expected.strides);
  const mg::MutableTensorView gv(got.data(), c.dtype, c.output_shape, got.strides);
  const mg::Status ref = mg::gather_multiaxis_reference(c.input_view, c.indices_view, c.axes, ev, c.options);
  const mg::Status fast = run(gv);
  ASSERT_EQ(ref.ok(), fast.ok()) << what << ": reference says '" << ref.message()
                                 << "', fast kernel says '" << fast.message() << "'";
  if (!ref.ok()) {
    EXPECT_EQ(ref.message(), fast.message()) << what;
    return;  // on error the output is unspecified
  }
  EXPECT_TRUE(expected.bytes == got.bytes) << what << ": outputs differ";
}

mg::Status run_plan(const RandomCall& c, const mg::MutableTensorView& out, int threads, bool generic) {
  mg::detail::ValidatedCall call;
  MULTIGATHER_RETURN_IF_ERROR(mg::detail::validate_call(c.input_view, c.indices_view, c.axes, out,
                                                        c.options, &call));
  if (call.shape.output_numel == 0) return mg::Status::Ok();
  mg::detail::GatherPlan plan;
  mg::detail::make_plan(c.input_view, c.indices_view, out, call, c.options, &plan);
  const bool ok = generic ? mg::testing::run_generic_plan(plan)
                          : mg::detail::run_cpu_with_threads(plan, threads);
  if (ok) return mg::Status::Ok();
  // The kernels only flag a bad index; the message comes from the reference, as in the API.
  const mg::Status error = mg::detail::reference_gather(c.input_view, c.indices_view, call,
                                                        c.options, mg::MutableTensorView{});
  return error.ok() ? mg::Status(mg::StatusCode::kInternal, "kernel flagged an index the reference accepts")
                    : error;
}

void for_each_case(int fallback_count, void (*body)(Rng&, const RandomCall&)) {
  const int count = case_count(fallback_count);
  for (int i = 0; i < count; ++i) {
    const std::uint64_t case_seed = run_seed() + static_cast<std::uint64_t>(i);
    Rng rng(case_seed);
    const RandomCall c = make_call(rng);
    SCOPED_TRACE("case seed " + std::to_string(case_seed) + ": " + describe(c));
    body(rng, c);
    if (::testing::Test::HasFailure()) return;  // one replayable failure is enough
  }
}

TEST(CpuEquivalence, PublicApiMatchesReference) {
  for_each_case(1500, [](Rng& rng, const RandomCall& c) {
    expect_same_as_reference(rng, c, "gather_multiaxis_into", [&](const mg::MutableTensorView& out) {
      return mg::gather_multiaxis_into(c.input_view, c.indices_view, c.axes, out, c.options);
    });
  });
}

TEST(CpuEquivalence, ForcedThreadCountsMatchReference) {
  for_each_case(800, [](Rng& rng, const RandomCall& c) {
    for (const int threads : {1, 2, 3, 7, 65}) {  // 65: more threads than the engine's 64 chunk owners
      const std::string what = "run_cpu_with_threads(" + std::to_string(threads) + ")";
      expect_same_as_reference(rng, c, what.c_str(), [&](const mg::MutableTensorView& out) {
        return run_plan(c, out, threads, false);
      });
    }
  });
}

TEST(CpuEquivalence, ThreadsOfAHostPoolMatchReference) {
  // ExecutionContext::task_pool: the engine's workers are the calling thread plus pool tasks
  // that claim work as they start; a task that starts after the call does nothing (kLate), and
  // one run inside schedule() does the work itself (kInline).
  using mg::testing::HostPool;
  for (const HostPool::Mode mode : {HostPool::Mode::kThreads, HostPool::Mode::kLate, HostPool::Mode::kInline}) {
    HostPool host(mode);
    const mg::TaskPool pool = host.pool();
    const mg::detail::TaskPoolScope scope(&pool);
    for_each_case(200, [](Rng& rng, const RandomCall& c) {
      for (const int threads : {2, 3, 7}) {
        const std::string what = "run_cpu_with_threads(" + std::to_string(threads) + ") on a host pool";
        expect_same_as_reference(rng, c, what.c_str(), [&](const mg::MutableTensorView& out) {
          return run_plan(c, out, threads, false);
        });
      }
      expect_same_as_reference(rng, c, "gather_multiaxis_into on a host pool", [&](const mg::MutableTensorView& out) {
        mg::GatherOptions o = c.options;
        o.num_threads = 3;
        return mg::gather_multiaxis_into(c.input_view, c.indices_view, c.axes, out, o);
      });
    });
    host.run_late();
    EXPECT_GT(host.scheduled(), 0);  // the engine's workers did go to the pool
  }
}

TEST(CpuEquivalence, ALoopPoolInTheOptionsMatchesReference) {
  // GatherOptions::task_pool with parallel_for (a synchronous loop, as ONNX Runtime's
  // KernelContext_ParallelFor): every worker runs once, on std::threads or on the calling
  // thread in turn; the result is the reference kernel's.
  struct Loops {
    bool threads = true;
    std::atomic<int> calls{0};
  };
  for (const bool threads : {true, false}) {
    Loops loops;
    loops.threads = threads;
    mg::TaskPool pool;
    pool.context = &loops;
    pool.num_threads = 4;
    pool.parallel_for = [](void* ctx, int count, void (*fn)(void* arg, int i) noexcept, void* arg) {
      auto* l = static_cast<Loops*>(ctx);
      l->calls.fetch_add(1);
      if (!l->threads) {
        for (int i = count - 1; i >= 0; --i) fn(arg, i);  // the calling thread, last worker first
        return;
      }
      std::vector<std::thread> team;
      for (int i = 1; i < count; ++i) team.emplace_back([=] { fn(arg, i); });
      fn(arg, 0);
      for (std::thread& t : team) t.join();
    };
    static const mg::TaskPool* loop_pool = nullptr;  // for_each_case takes a plain function
    loop_pool = &pool;
    for_each_case(200, [](Rng& rng, const RandomCall& c) {
      expect_same_as_reference(rng, c, "gather_multiaxis_into with a parallel_for pool", [&](const mg::MutableTensorView& out) {
        mg::GatherOptions o = c.options;
        o.num_threads = 3;
        o.task_pool = loop_pool;
        return mg::gather_multiaxis_into(c.input_view, c.indices_view, c.axes, out, o);
      });
    });
    // A call big enough for several workers (the random ones are mostly too small): 2048 rows
    // of 1 KiB out of a 4 MiB table.
    std::vector<float> table(1024 * 256);
    for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i);
    std::vector<std::int64_t> rows(2048);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int64_t>((i * 7919) % 1024);
    const mg::TensorView input(table.data(), mg::DType::kFloat32, mg::Dims{1024, 256});
    const mg::TensorView indices(rows.data(), mg::DType::kInt64, mg::Dims{2048, 1});
    std::vector<float> got(2048 * 256), want(2048 * 256);
    const std::int64_t axes[] = {0};
    mg::GatherOptions o;
    o.num_threads = 3;
    o.task_pool = &pool;
    const int before = loops.calls.load();
    ASSERT_TRUE(mg::gather_multiaxis_into(input, indices, axes, mg::MutableTensorView(got.data(), mg::DType::kFloat32, mg::Dims{2048, 256}), o).ok());
    EXPECT_GT(loops.calls.load(), before);  // the engine's loops did go to the pool
    ASSERT_TRUE(mg::gather_multiaxis_reference(input, indices, axes, mg::MutableTensorView(want.data(), mg::DType::kFloat32, mg::Dims{2048, 256})).ok());
    EXPECT_EQ(got, want);
  }
}

TEST(CpuEquivalence, GenericKernelMatchesReference) {
  for_each_case(800, [](Rng& rng, const RandomCall& c) {
    expect_same_as_reference(rng, c, "run_generic_plan (tests/generic_kernel_oracle.hpp)", [&](const mg::MutableTensorView& out) {
      return run_plan(c, out, 1, true);
    });
  });
}

TEST(CpuEquivalence, LargeSpanElementGathersMatchReference) {
  // Lookups spread over 800 KiB of input take the prefetching element loop (the random cases
  // above are too small for it): a flat take and a GatherElements on axis 0, every mode; over
  // 4.4-4.8 MiB, the plain loop with software prefetch (element_run.hpp, kPlainPrefetchSpanBytes;
  // on AMD CPUs the GatherElements takes the AVX-512 gathers there, avx512.hpp).
  // Then GatherElements on the last axis with 4 KiB rows: the row kernel (element_run.hpp), which
  // prefetches the next row while gathering one (rows split across threads, too).
  Rng rng(run_seed() ^ 0x5eedULL);
  struct Shape { mg::Dims input, indices; std::vector<std::int64_t> axes; };
  const Shape shapes[] = {{{200000}, {3000}, {0}},         {{800, 250}, {40, 250}, {0}},
                          {{1200000}, {3000}, {0}},        {{1100, 1000}, {9, 1000}, {0}},
                          {{300, 1000}, {300, 70}, {1}}};
  for (const Shape& sh : shapes) {
    for (const mg::DType index_dtype : {mg::DType::kInt32, mg::DType::kInt64, mg::DType::kUInt64}) {
      for (const int mode : {0, 1, 2, 3}) {
        RandomCall c;
        c.dtype = mg::DType::kFloat32;
        c.index_dtype = index_dtype;
        c.axes = sh.axes;
        c.options.index_mode = static_cast<mg::IndexMode>(mode);
        c.input = make_buffer(rng, sh.input, 4, false);
        c.indices = make_buffer(rng, sh.indices, mg::element_size(index_dtype), false);
        const std::int64_t n = sh.input[static_cast<int>(sh.axes[0])];
        std::int64_t count = 1;
        for (int d = 0; d < sh.indices.size(); ++d) count *= sh.indices[d];
        mg::Dims pos = mg::Dims::filled(sh.indices.size(), 0);
        for (std::int64_t e = 0; e < count; ++e) {
          std::int64_t v = uniform(rng, 0, n - 1);
          if (index_dtype != mg::DType::kUInt64 && chance(rng, 0.3)) v -= n;
          if (mode != 0 && chance(rng, 0.1)) v = uniform(rng, -3 * n, 3 * n);
          std::int64_t off = 0;
          for (int d = 0; d < sh.indices.size(); ++d) off += pos[d] * c.indices.strides[d];
          write_index(c.indices.data() + off * static_cast<std::int64_t>(mg::element_size(index_dtype)),
                      index_dtype, v);
          for (int d = sh.indices.size() - 1; d >= 0; --d) {
            if (++pos[d] < sh.indices[d]) break;
            pos[d] = 0;
          }
        }
        c.input_view = mg::TensorView(c.input.data(), c.dtype, sh.input, c.input.strides);
        c.indices_view = mg::TensorView(c.indices.data(), index_dtype, sh.indices, c.indices.strides);
        c.output_shape = mg::output_shape(sh.input, sh.indices, c.axes).output_shape;
        SCOPED_TRACE(describe(c));
        for (const int threads : {1, 2, 3}) {
          expect_same_as_reference(rng, c, "large span", [&](const mg::MutableTensorView& out) {
            return run_plan(c, out, threads, false);
          });
        }
      }
    }
  }
}

TEST(CpuEquivalence, PlainElementLoopStopsAtEveryPositionOfItsUnrolledBody) {
  // The plain element loop (element_run.hpp) runs while indices are in range as they are and
  // hands the first other one to the general path, then starts again: one negative or
  // out-of-range index at each position of the 4-way unrolled body, near the start, the middle
  // and the end of a run, in every mode, for a flat take and a GatherElements on axis 0; and
  // over 4.4 MiB, where the loop prefetches kPlainPrefetchDistance lookups ahead: also where the
  // prefetching part hands over to the unrolled tail.
  Rng rng(run_seed() ^ 0x91a1ULL);
  struct Shape { mg::Dims input, indices; std::vector<std::int64_t> axes; };
  const Shape shapes[] = {{{5000}, {2051}, {0}}, {{300, 64}, {7, 64}, {0}}, {{1100000}, {2051}, {0}}};
  constexpr std::int64_t kAhead = mg::detail::cpu::kPlainPrefetchDistance;
  for (const Shape& sh : shapes) {
    const std::int64_t n = sh.input[static_cast<int>(sh.axes[0])];
    std::int64_t count = 1;
    for (int d = 0; d < sh.indices.size(); ++d) count *= sh.indices[d];
    for (const std::int64_t at : {std::int64_t{0}, std::int64_t{1}, std::int64_t{2}, std::int64_t{3},
                                  count / 2 + 1, count - kAhead - 1, count - kAhead, count - 2, count - 1}) {
      for (const std::int64_t odd : {std::int64_t{-1}, -n, n, n + 5, std::int64_t{-3} * n}) {
        for (const int mode : {0, 1, 2, 3}) {
          RandomCall c;
          c.dtype = mg::DType::kFloat32;
          c.index_dtype = mg::DType::kInt64;
          c.axes = sh.axes;
          c.options.index_mode = static_cast<mg::IndexMode>(mode);
          c.input = make_buffer(rng, sh.input, 4, false);
          c.indices = make_buffer(rng, sh.indices, 8, false);
          mg::Dims pos = mg::Dims::filled(sh.indices.size(), 0);
          for (std::int64_t e = 0; e < count; ++e) {
            std::int64_t off = 0;
            for (int d = 0; d < sh.indices.size(); ++d) off += pos[d] * c.indices.strides[d];
            write_index(c.indices.data() + off * 8, c.index_dtype, e == at ? odd : uniform(rng, 0, n - 1));
            for (int d = sh.indices.size() - 1; d >= 0; --d) {
              if (++pos[d] < sh.indices[d]) break;
              pos[d] = 0;
            }
          }
          c.input_view = mg::TensorView(c.input.data(), c.dtype, sh.input, c.input.strides);
          c.indices_view = mg::TensorView(c.indices.data(), c.index_dtype, sh.indices, c.indices.strides);
          c.output_shape = mg::output_shape(sh.input, sh.indices, c.axes).output_shape;
          SCOPED_TRACE(describe(c) + ", index " + std::to_string(odd) + " at lookup " + std::to_string(at));
          for (const int threads : {1, 2}) {
            expect_same_as_reference(rng, c, "plain loop", [&](const mg::MutableTensorView& out) {
              return run_plan(c, out, threads, false);
            });
          }
        }
      }
    }
  }
}

/// Switches the AVX-512 kernels on or off for a scope (avx512.hpp).
class SimdScope {
 public:
  explicit SimdScope(bool on) : before_(mg::detail::cpu::set_simd_enabled(on)) {}
  ~SimdScope() { mg::detail::cpu::set_simd_enabled(before_); }
  SimdScope(const SimdScope&) = delete;
  SimdScope& operator=(const SimdScope&) = delete;

 private:
  bool before_;
};

template <class Index>
void check_range_kernels(Rng& rng) {
  // Bounds per coordinate (c of them, repeated along the values as lookups' coordinates are).
  using Limits = std::numeric_limits<Index>;
  for (int c = 1; c <= 5; ++c) {
    std::int64_t lo[16], hi[16];
    for (int j = 0; j < c; ++j) {
      lo[j] = std::is_signed_v<Index> ? -static_cast<std::int64_t>(rng() % 50) : 0;
      hi[j] = static_cast<std::int64_t>(rng() % 100);
    }
    for (const std::int64_t n : {std::int64_t{1}, std::int64_t{3}, std::int64_t{4}, std::int64_t{7}, std::int64_t{8},
                                 std::int64_t{9}, std::int64_t{40}, std::int64_t{129}, std::int64_t{1000}}) {
      if (n % c != 0 && c > 1) continue;  // whole lookups, as the engine's pieces are
      std::vector<Index> values(static_cast<std::size_t>(n));
      for (std::int64_t e = 0; e < n; ++e) {
        const int j = static_cast<int>(e % c);
        values[static_cast<std::size_t>(e)] = static_cast<Index>(
            lo[j] + static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(hi[j] - lo[j] + 1)));
      }
      // In range; then one value just outside, at the far ends of the type, at every position.
      std::vector<Index> odd_values = {static_cast<Index>(Limits::max()), static_cast<Index>(Limits::min())};
      for (int j = 0; j < c; ++j) {
        odd_values.push_back(static_cast<Index>(hi[j] + 1));
        if (std::is_signed_v<Index>) odd_values.push_back(static_cast<Index>(lo[j] - 1));
      }
      if constexpr (!std::is_signed_v<Index>) odd_values.push_back(static_cast<Index>(Limits::max() / 2 + 1));
      const auto oracle = [&](const std::vector<Index>& v) {
        for (std::int64_t e = 0; e < n; ++e) {
          const int j = static_cast<int>(e % c);
          const Index x = v[static_cast<std::size_t>(e)];
          const bool below = std::is_signed_v<Index> && static_cast<std::int64_t>(x) < lo[j];
          const bool above = std::is_signed_v<Index> ? static_cast<std::int64_t>(x) > hi[j]
                                                     : static_cast<std::uint64_t>(x) > static_cast<std::uint64_t>(hi[j]);
          if (below || above) return false;
        }
        return true;
      };
      const mg::detail::cpu::RangeCheckFn simd = mg::detail::cpu::range_check_simd(sizeof(Index), std::is_signed_v<Index>);
      const auto agree = [&](const std::vector<Index>& v, const char* what) {
        const bool want = oracle(v);
        ASSERT_EQ(mg::detail::cpu::contiguous_in_range(v.data(), n, c, lo, hi), want) << what << " n=" << n << " c=" << c;
        if (simd != nullptr) ASSERT_EQ(simd(v.data(), n, c, lo, hi), want) << what << " n=" << n << " c=" << c;
      };
      agree(values, "in range");
      for (std::int64_t at = 0; at < n; at += (n > 64 ? 37 : 1)) {
        std::vector<Index> v = values;
        v[static_cast<std::size_t>(at)] = odd_values[rng() % odd_values.size()];
        agree(v, "one odd value");
      }
    }
  }
}

TEST(CpuEquivalence, IndexRangeCheckKernelsAgreeWithTheOracle) {
  // The index pre-check over contiguous values (index_check.hpp's contiguous_in_range, and the
  // SIMD one the engine takes where the CPU has AVX-512 or AVX2: range_check_simd) against a
  // plain loop: every index type, 1 to 5 coordinates per lookup, lengths around the vector
  // widths, and one value just outside its coordinate's bounds or at the type's far ends
  // (a uint64 from 2^63 on is negative as int64) at every position.
  std::printf("SIMD index range check: %s\n", mg::detail::cpu::range_check_simd(8, true) != nullptr ? "on" : "not available");
  Rng rng(run_seed() ^ 0x7a9eULL);
  check_range_kernels<std::int32_t>(rng);
  check_range_kernels<std::uint32_t>(rng);
  check_range_kernels<std::int64_t>(rng);
  check_range_kernels<std::uint64_t>(rng);
  {
    SimdScope off(false);
    EXPECT_EQ(mg::detail::cpu::range_check_simd(8, true), nullptr);
  }
}

TEST(CpuEquivalence, SimdPlainLoopHandsOverAtEveryLaneAndMatchesScalar) {
  // The AVX-512 plain loop (avx512.hpp; 4- and 8-byte elements, 32- and 64-bit indices,
  // contiguous indices and output) takes eight lookups a step and hands a group with an index
  // that is not in range as it is to the scalar loop, which stops exactly at it. One odd index
  // at every lane of the first groups, across a group boundary and in the tail (runs of 2051
  // and 67: not multiples of 8), every mode, with the AVX-512 kernels on and off: both against
  // the reference. (Where the CPU lacks AVX-512 both runs take the scalar loop.)
  std::printf("AVX-512 plain element loop: %s\n",
              mg::detail::cpu::simd_enabled() ? "on (tested against the scalar loop)" : "not available on this CPU");
  Rng rng(run_seed() ^ 0x51dULL);
  struct Shape { mg::Dims input, indices; std::vector<std::int64_t> axes; };
  const Shape shapes[] = {{{5000}, {2051}, {0}}, {{300, 67}, {5, 67}, {0}}};
  const mg::DType dtypes[] = {mg::DType::kFloat32, mg::DType::kFloat64};
  const mg::DType index_dtypes[] = {mg::DType::kInt32, mg::DType::kUInt32, mg::DType::kInt64, mg::DType::kUInt64};
  for (const Shape& sh : shapes) {
    const std::int64_t n = sh.input[static_cast<int>(sh.axes[0])];
    std::int64_t count = 1;
    for (int d = 0; d < sh.indices.size(); ++d) count *= sh.indices[d];
    for (const mg::DType dtype : dtypes) {
      for (const mg::DType index_dtype : index_dtypes) {
        const std::int64_t is = static_cast<std::int64_t>(mg::element_size(index_dtype));
        for (const std::int64_t at : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{1}, std::int64_t{3},
                                      std::int64_t{4}, std::int64_t{6}, std::int64_t{7}, std::int64_t{8},
                                      std::int64_t{15}, std::int64_t{66}, count - 3, count - 1}) {
          for (const std::int64_t odd : {std::int64_t{-1}, n, std::int64_t{-3} * n}) {
            for (const int mode : {0, 1, 2, 3}) {
              RandomCall c;
              c.dtype = dtype;
              c.index_dtype = index_dtype;
              c.axes = sh.axes;
              c.options.index_mode = static_cast<mg::IndexMode>(mode);
              c.input = make_buffer(rng, sh.input, mg::element_size(dtype), false);
              c.indices = contiguous_buffer(rng, sh.indices, mg::element_size(index_dtype));
              for (std::int64_t e = 0; e < count; ++e) {
                write_index(c.indices.data() + e * is, index_dtype, e == at ? odd : uniform(rng, 0, n - 1));
              }
              c.input_view = mg::TensorView(c.input.data(), c.dtype, sh.input, c.input.strides);
              c.indices_view = mg::TensorView(c.indices.data(), index_dtype, sh.indices, c.indices.strides);
              c.output_shape = mg::output_shape(sh.input, sh.indices, c.axes).output_shape;
              SCOPED_TRACE(describe(c) + ", index " + std::to_string(odd) + " at lookup " + std::to_string(at));
              for (const bool simd : {true, false}) {
                const SimdScope scope(simd);
                for (const int threads : {1, 2}) {
                  expect_same_as_reference(
                      rng, c, simd ? "AVX-512 plain loop" : "scalar plain loop",
                      [&](const mg::MutableTensorView& out) { return run_plan(c, out, threads, false); },
                      /*contiguous=*/true);
                }
              }
            }
          }
        }
      }
    }
  }
}

/// A run over `input` (row-major [rows, cols]) for the direct plain-loop tests: lookup t reads
/// input[t * input_step + indices[t] * cols] (axis size `rows`) and writes output[t].
template <class T, class Index>
mg::detail::cpu::ElementRun element_run_over(const std::vector<T>& input, const std::vector<Index>& indices,
                                             std::vector<T>& output, std::int64_t input_step, std::int64_t cols,
                                             std::int64_t rows) {
  mg::detail::cpu::ElementRun r;
  r.input = reinterpret_cast<const std::byte*>(input.data());
  r.indices = reinterpret_cast<const std::byte*>(indices.data());
  r.output = reinterpret_cast<std::byte*>(output.data());
  r.input_step = input_step;
  r.axis_stride = cols;
  r.axis_size = rows;
  return r;
}

TEST(CpuEquivalence, SimdPlainLoopOnAMovingInputMatchesScalar) {
  // Runs whose input moves along the run (GatherElements on a non-last axis: lookup t reads
  // input[t + idx[t] * axis_stride]) take the AVX-512 plain loop on AMD CPUs only
  // (plain_run_simd, avx512.hpp), so elsewhere the test above does not reach it. The kernel itself
  // (the one plain_run_simd hands out for any run) is checked here on such runs against the
  // scalar loop, wherever the CPU has AVX-512: the lookups done, and every element written.
  namespace cpu = mg::detail::cpu;
  const cpu::PlainRunFn simd = cpu::plain_run_simd(4, 8, true, /*input_moves=*/false, /*beyond_l2=*/false);
  if (simd == nullptr) GTEST_SKIP() << "no AVX-512 plain loop on this CPU";
  Rng rng(run_seed() ^ 0x30e5ULL);
  constexpr std::int64_t kRows = 300, kCols = 67;  // 67: a tail after eight groups of eight
  std::vector<float> input(static_cast<std::size_t>(kRows * kCols));
  for (float& v : input) v = static_cast<float>(uniform(rng, -1000, 1000));
  for (const std::int64_t at : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{5}, std::int64_t{8}, std::int64_t{66}}) {
    std::vector<std::int64_t> indices(static_cast<std::size_t>(kCols));
    for (std::int64_t t = 0; t < kCols; ++t) indices[static_cast<std::size_t>(t)] = t == at ? kRows : uniform(rng, 0, kRows - 1);
    std::vector<float> got(static_cast<std::size_t>(kCols), -1.0f), want(static_cast<std::size_t>(kCols), -1.0f);
    cpu::ElementRun r = element_run_over(input, indices, got, 1, kCols, kRows);
    const std::int64_t done = simd(r, kCols);
    r.output = reinterpret_cast<std::byte*>(want.data());
    const std::int64_t want_done = cpu::gather_plain_run<4, std::int64_t, true>(r, kCols);
    SCOPED_TRACE("index " + std::to_string(kRows) + " at lookup " + std::to_string(at));
    EXPECT_EQ(done, at < 0 ? kCols : at);
    EXPECT_EQ(done, want_done);
    EXPECT_TRUE(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(done) * sizeof(float)) == 0);
    for (std::int64_t t = 0; t < done; ++t) {
      EXPECT_EQ(got[static_cast<std::size_t>(t)], input[static_cast<std::size_t>(t + indices[static_cast<std::size_t>(t)] * kCols)]);
    }
  }
}

TEST(CpuEquivalence, PrefetchingPlainLoopMatchesScalar) {
  // The scalar plain loop with software prefetch (element_run.hpp: gather_plain_run<..., true>)
  // runs only where the lookups reach 4 MiB or more, and on AMD CPUs a moving input there takes
  // the AVX-512 gathers instead, so LargeSpanElementGathersMatchReference may not reach it with
  // one. Checked here directly on moving and fixed inputs against the loop without prefetch:
  // runs shorter and longer than the prefetch distance, an index out of range at the first
  // lookup, inside and at the end of the prefetched window (the prefetch reads it ahead of the
  // check, as an address only), negative, and none.
  namespace cpu = mg::detail::cpu;
  Rng rng(run_seed() ^ 0x9f37ULL);
  constexpr std::int64_t kRows = 500, kCols = 200;
  std::vector<float> input(static_cast<std::size_t>(kRows * kCols));
  for (float& v : input) v = static_cast<float>(uniform(rng, -1000, 1000));
  for (const std::int64_t m : {std::int64_t{5}, cpu::kPlainPrefetchDistance, std::int64_t{kCols}}) {
    for (const std::int64_t input_step : {std::int64_t{0}, std::int64_t{1}}) {
      for (const std::int64_t at : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{3}, m - cpu::kPlainPrefetchDistance,
                                    m - 1}) {
        if (at >= m || at < -1) continue;
        for (const std::int64_t bad : {kRows, std::int64_t{-1}}) {
          std::vector<std::int64_t> indices(static_cast<std::size_t>(m));
          for (std::int64_t t = 0; t < m; ++t) indices[static_cast<std::size_t>(t)] = t == at ? bad : uniform(rng, 0, kRows - 1);
          std::vector<float> got(static_cast<std::size_t>(m), -1.0f), want(static_cast<std::size_t>(m), -1.0f);
          cpu::ElementRun r = element_run_over(input, indices, got, input_step, kCols, kRows);
          const std::int64_t done = cpu::gather_plain_run<4, std::int64_t, true, true>(r, m);
          r.output = reinterpret_cast<std::byte*>(want.data());
          const std::int64_t want_done = cpu::gather_plain_run<4, std::int64_t, true>(r, m);
          SCOPED_TRACE("m " + std::to_string(m) + ", input_step " + std::to_string(input_step) + ", index " +
                       std::to_string(bad) + " at lookup " + std::to_string(at));
          EXPECT_EQ(done, at < 0 ? m : at);
          EXPECT_EQ(done, want_done);
          EXPECT_TRUE(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(m) * sizeof(float)) == 0);
          for (std::int64_t t = 0; t < done; ++t) {
            EXPECT_EQ(got[static_cast<std::size_t>(t)],
                      input[static_cast<std::size_t>(t * input_step + indices[static_cast<std::size_t>(t)] * kCols)]);
          }
        }
      }
    }
  }
}

/// One run of the prefetching AVX-512 plain loop against the scalar loop without prefetch, for
/// element type T and index type Index: the lookups done, and every element written.
template <class T, class Index>
void check_simd_prefetching_run(std::mt19937_64& rng, std::int64_t m, std::int64_t input_step, std::int64_t at,
                                std::int64_t bad) {
  namespace cpu = mg::detail::cpu;
  const cpu::PlainRunFn simd = cpu::plain_run_simd_prefetching(sizeof(T), sizeof(Index), std::is_signed_v<Index>);
  ASSERT_NE(simd, nullptr);
  constexpr std::int64_t kRows = 40, kCols = 620;  // kCols > m: a moving input stays inside
  std::vector<T> input(static_cast<std::size_t>(kRows * kCols));
  for (T& v : input) v = static_cast<T>(uniform(rng, -1000, 1000));
  std::vector<Index> indices(static_cast<std::size_t>(m));
  for (std::int64_t t = 0; t < m; ++t) {
    indices[static_cast<std::size_t>(t)] = static_cast<Index>(t == at ? bad : uniform(rng, 0, kRows - 1));
  }
  std::vector<T> got(static_cast<std::size_t>(m), T(-1)), want(static_cast<std::size_t>(m), T(-1));
  cpu::ElementRun r = element_run_over(input, indices, got, input_step, kCols, kRows);
  const std::int64_t done = simd(r, m);
  r.output = reinterpret_cast<std::byte*>(want.data());
  const std::int64_t want_done = cpu::gather_plain_run<sizeof(T), Index, true>(r, m);
  SCOPED_TRACE("element " + std::to_string(sizeof(T)) + " bytes, index " + std::to_string(sizeof(Index)) +
               " bytes, m " + std::to_string(m) + ", input_step " + std::to_string(input_step) + ", index " +
               std::to_string(bad) + " at lookup " + std::to_string(at));
  EXPECT_EQ(done, at < 0 ? m : at);
  EXPECT_EQ(done, want_done);
  EXPECT_TRUE(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(m) * sizeof(T)) == 0);
}

TEST(CpuEquivalence, SimdPrefetchingPlainLoopMatchesScalar) {
  // The AVX-512 plain loop that prefetches kSimdPrefetchGroups groups of eight ahead (taken
  // beyond the L2 cache on AMD CPUs only, so LargeSpanElementGathersMatchReference reaches it
  // there only) checked directly wherever the CPU has AVX-512, against the scalar loop without
  // prefetch: runs shorter than the prefetch window, exactly as long, one group longer and much
  // longer (with a tail after the last group of eight); moving and fixed inputs; an index out of
  // range (too large, negative, or far outside any mapping, whose prefetch address is garbage
  // that must not fault) at the first lookup, inside the first prefetched window, at the first
  // lookup the loop prefetches, and at the end.
  namespace cpu = mg::detail::cpu;
  if (cpu::plain_run_simd_prefetching(4, 8, true) == nullptr) GTEST_SKIP() << "no AVX-512 plain loop on this CPU";
  Rng rng(run_seed() ^ 0x5f37ULL);
  constexpr std::int64_t window = 8 * cpu::kSimdPrefetchGroups;
  for (const std::int64_t m : {std::int64_t{7}, window, window + 8, window + 9, std::int64_t{613}}) {
    for (const std::int64_t input_step : {std::int64_t{0}, std::int64_t{1}}) {
      for (const std::int64_t at : {std::int64_t{-1}, std::int64_t{0}, std::int64_t{5}, window, m - 1}) {
        if (at >= m) continue;
        for (const std::int64_t bad : {std::int64_t{500}, std::int64_t{-1}, std::int64_t{1} << 60, INT64_MIN}) {
          check_simd_prefetching_run<float, std::int64_t>(rng, m, input_step, at, bad);
          check_simd_prefetching_run<double, std::int64_t>(rng, m, input_step, at, bad);
          // 32-bit indices: the far values at their type's ends.
          const std::int64_t bad32 = bad == INT64_MIN ? INT32_MIN : bad > INT32_MAX ? INT32_MAX : bad;
          check_simd_prefetching_run<float, std::int32_t>(rng, m, input_step, at, bad32);
          check_simd_prefetching_run<double, std::uint32_t>(rng, m, input_step, at, bad32);
        }
      }
    }
  }
}

TEST(CpuEquivalence, SimdBlockKernelsMatchReferenceAtEveryAlignment) {
  // The AVX-512 block kernels (avx512.hpp) where the CPU has AVX-512: blocks of 64 and 128
  // bytes (copy_chunked_blocks compiled for AVX-512) and of 257 bytes to 64 KiB (the block
  // mover: an unaligned move at each end, aligned stores between; on AMD, 2 and 4 KiB blocks
  // run rep movsb where source and destination share their offset within a line, else the
  // mover; on uint8 and float32 only, for time),
  // behind two coordinates per lookup (the tile resolver compiled for AVX-512), 32- and 64-bit
  // indices. Every element
  // width, odd block sizes (rows of a uint8 output start at every alignment), contiguous and
  // random output layouts, every mode (kFill writes the fill value over whole blocks), AVX-512
  // on and off, against the reference.
  Rng rng(run_seed() ^ 0xb10cULL);
  const mg::DType dtypes[] = {mg::DType::kUInt8, mg::DType::kFloat16, mg::DType::kFloat32,
                              mg::DType::kFloat64, mg::DType::kComplex128};
  for (const mg::DType dtype : dtypes) {
    const auto es = static_cast<std::int64_t>(mg::element_size(dtype));
    for (const std::int64_t bytes : {64, 128, 257, 300, 511, 1024, 1031, 2047, 2048, 4099}) {
      if (bytes > 2048 && dtype != mg::DType::kUInt8 && dtype != mg::DType::kFloat32) continue;
      const std::int64_t block = bytes <= 128 ? bytes / es : std::max<std::int64_t>(bytes / es, 256 / es + 1);
      for (const int mode : {0, 1, 2, 3}) {
        for (const bool contiguous : {true, false}) {
          RandomCall c;
          c.dtype = dtype;
          c.index_dtype = chance(rng, 0.5) ? mg::DType::kInt64 : mg::DType::kInt32;
          c.axes = {0, 1};
          c.options.index_mode = static_cast<mg::IndexMode>(mode);
          c.options.negative_indices = chance(rng, 0.5);
          c.options.fill_value = mg::Scalar::from_int(7);
          const mg::Dims in_shape{9, 5, block};
          const mg::Dims ix_shape{70, 1, 2};  // 70 lookups of (i, j)
          const auto is = static_cast<std::int64_t>(mg::element_size(c.index_dtype));
          c.input = make_buffer(rng, in_shape, static_cast<std::size_t>(es), false);
          c.indices = contiguous_buffer(rng, ix_shape, static_cast<std::size_t>(is));
          for (std::int64_t e = 0; e < 140; ++e) {
            const std::int64_t size = in_shape[static_cast<int>(e % 2)];
            const bool odd = mode != 0 && chance(rng, 0.1);
            std::int64_t v = odd ? uniform(rng, -30, 30) : uniform(rng, 0, size - 1);
            if (!odd && c.options.negative_indices && chance(rng, 0.2)) v -= size;
            write_index(c.indices.data() + e * is, c.index_dtype, v);
          }
          c.input_view = mg::TensorView(c.input.data(), c.dtype, in_shape, c.input.strides);
          c.indices_view = mg::TensorView(c.indices.data(), c.index_dtype, ix_shape, c.indices.strides);
          c.output_shape = mg::output_shape(in_shape, ix_shape, c.axes).output_shape;
          SCOPED_TRACE(describe(c) + (contiguous ? ", contiguous output" : ", random output layout"));
          for (const bool simd : {true, false}) {
            const SimdScope scope(simd);
            for (const int threads : {1, 2}) {
              expect_same_as_reference(
                  rng, c, simd ? "AVX-512 block kernels" : "scalar block kernels",
                  [&](const mg::MutableTensorView& out) { return run_plan(c, out, threads, false); }, contiguous);
            }
          }
        }
      }
    }
  }
}

TEST(CpuEquivalence, RandomCasesMatchReferenceWithSimdOff) {
  // The random cases with the AVX-512 kernels switched off (the other tests run them on where
  // the CPU has AVX-512): the scalar loops stay tested on an AVX-512 machine.
  const SimdScope scope(false);
  for_each_case(600, [](Rng& rng, const RandomCall& c) {
    for (const int threads : {1, 2}) {
      expect_same_as_reference(rng, c, "scalar kernels", [&](const mg::MutableTensorView& out) {
        return run_plan(c, out, threads, false);
      });
    }
  });
}

}  // namespace
