// Vector-Jacobian products on the CUDA engine (execute_vjp with ExecutionContext::device = kCUDA;
// src/api/transforms.cpp, the kernels of src/kernels/cuda/vjp_rows.hpp).
//  - CudaVjpOnHost (no GPU needed): the VJP's own kernel bodies (positions, the winner mask)
//    over every thread of their launched grid, byte for byte, untouched bytes included; the grid
//    size's golden table; and the harness of the GPU tests run with both sides on the CPU engine.
//  - CudaVjpNoDevice: without a device, a CUDA VJP checks its arguments as the CPU engine does,
//    then says that no device is available.
//  - CudaVjp (GPU; skipped without one, a failure under MULTIGATHER_REQUIRE_GPU=1): every
//    registry op's VJP on device memory equals the CPU engine's byte for byte (float32 values
//    that are not small integers, so sums in another order would differ; duplicate indices;
//    batch ranks 0-2 with broadcast leads; a scatter's grad_input aliasing grad_output, as XLA
//    passes it), the winner rule of reduction none, large duplicate-heavy sums, out-of-range
//    messages, and host memory refused by name.
//
// Replay: MULTIGATHER_SEED=<seed> ./multigather_tests --gtest_filter='CudaVjp*'
#include <gtest/gtest.h>

#if MULTIGATHER_HAVE_CUDA

#include <cuda_runtime.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "kernels/cuda/vjp_rows.hpp"
#include "multigather/cuda.hpp"
#include "multigather/multigather.hpp"
#include "multigather/transforms.hpp"
#include "op_test_support.hpp"
#include "test_seed.hpp"

namespace multigather {
namespace {

std::uint64_t seed() { return test::run_seed(); }

// ---- On the host: the kernel bodies over the launched grid -------------------------------------

TEST(CudaVjpOnHost, ElementwiseBlocksIsOneThreadPerElementUpToTheCap) {
  EXPECT_EQ(detail::elementwise_blocks(0, 132), 1);
  EXPECT_EQ(detail::elementwise_blocks(1, 132), 1);
  EXPECT_EQ(detail::elementwise_blocks(256, 132), 1);
  EXPECT_EQ(detail::elementwise_blocks(257, 132), 2);
  EXPECT_EQ(detail::elementwise_blocks(256 * 64, 1), 64);
  EXPECT_EQ(detail::elementwise_blocks(256 * 64 + 1, 1), 64);  // the cap: 64 blocks per SM
  EXPECT_EQ(detail::elementwise_blocks(256 * 64 + 1, 0), 64);  // under 1 SM counts as 1
  EXPECT_EQ(detail::elementwise_blocks(std::int64_t{1} << 40, 132), 132 * 64);
}

// Every thread of the grid vjp_kernel.cu launches, in thread order.
template <class Body>
void each_thread(std::int64_t count, int multiprocessors, const Body& body) {
  const std::int64_t threads = detail::elementwise_blocks(count, multiprocessors) * detail::kThreadsPerBlock;
  for (std::int64_t t = 0; t < threads; ++t) body(t, threads);
}

TEST(CudaVjpOnHost, PositionsOverTheLaunchedGrid) {
  for (const std::int64_t count : {std::int64_t{0}, std::int64_t{1}, std::int64_t{255}, std::int64_t{256},
                                   std::int64_t{257}, std::int64_t{40000}}) {
    for (const int multiprocessors : {1, 2, 3}) {
      std::vector<std::int64_t> positions(static_cast<std::size_t>(count) + 3, -7);  // 3 past the end
      each_thread(count, multiprocessors, [&](std::int64_t t, std::int64_t threads) {
        detail::positions_thread(positions.data(), count, t, threads);
      });
      for (std::int64_t p = 0; p < count; ++p) ASSERT_EQ(positions[static_cast<std::size_t>(p)], p);
      for (std::size_t p = static_cast<std::size_t>(count); p < positions.size(); ++p) ASSERT_EQ(positions[p], -7);
    }
  }
}

TEST(CudaVjpOnHost, SegmentTieKernelsOverTheLaunchedGrid) {
  // The bodies of a segment max's / min's gradient (ties, the ties' positions, the first tie) on
  // the host over the launched grid, against plain loops: every floating dtype with NaNs (they
  // tie nothing), signed zeros (they tie), equal and unequal values.
  std::mt19937_64 rng(test::run_seed() + 23);
  const std::int64_t count = 3000;
  const std::vector<double> pool = {1.5, -2.0, 0.0, -0.0, std::nan(""), 3.25, 1.5};
  std::vector<double> a(count), b(count);
  for (std::int64_t p = 0; p < count; ++p) {
    a[p] = pool[rng() % pool.size()];
    b[p] = rng() % 2 == 0 ? a[p] : pool[rng() % pool.size()];
  }
  for (const DType dtype : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(dtype));
    const std::size_t es = element_size(dtype);
    std::vector<std::byte> x(count * es), y(count * es);
    for (std::int64_t p = 0; p < count; ++p) {  // every pool value is exact in each dtype
      const auto put = [&](std::vector<std::byte>& v, double d) {
        std::byte* at = v.data() + p * static_cast<std::int64_t>(es);
        if (dtype == DType::kFloat32) { const float f = static_cast<float>(d); std::memcpy(at, &f, 4); }
        else if (dtype == DType::kFloat64) std::memcpy(at, &d, 8);
        else if (dtype == DType::kFloat16) { const std::uint16_t h = float_to_half(static_cast<float>(d)); std::memcpy(at, &h, 2); }
        else { const std::uint16_t h = float_to_bfloat16(static_cast<float>(d)); std::memcpy(at, &h, 2); }
      };
      put(x, a[p]);
      put(y, b[p]);
    }
    std::vector<std::int64_t> tie(count, -7);
    ASSERT_TRUE(detail::visit_floating(dtype, [&]<class E>() {
      each_thread(count, 2, [&](std::int64_t t, std::int64_t threads) {
        detail::ties_thread<E>(x.data(), y.data(), tie.data(), count, t, threads);
      });
    }));
    for (std::int64_t p = 0; p < count; ++p) ASSERT_EQ(tie[p], a[p] == b[p] ? 1 : 0) << p;
    std::vector<std::int64_t> where(count, -7), first(count, -7);
    each_thread(count, 2, [&](std::int64_t t, std::int64_t threads) {
      detail::positions_where_thread(tie.data(), -1, where.data(), count, t, threads);
    });
    for (std::int64_t p = 0; p < count; ++p) ASSERT_EQ(where[p], tie[p] != 0 ? p : -1);
    for (std::int64_t p = 0; p < count; ++p) where[p] = where[p] < 0 ? static_cast<std::int64_t>(rng() % count) : where[p];
    each_thread(count, 2, [&](std::int64_t t, std::int64_t threads) {
      detail::at_itself_thread(where.data(), first.data(), count, t, threads);
    });
    for (std::int64_t p = 0; p < count; ++p) ASSERT_EQ(first[p], where[p] == p ? 1 : 0);
  }
  EXPECT_FALSE(detail::visit_floating(DType::kInt32, []<class E>() {}));
}

template <int Bytes>
void check_keep_winners(std::mt19937_64& rng) {
  for (const std::int64_t count : {std::int64_t{1}, std::int64_t{300}, std::int64_t{20000}}) {
    for (const int multiprocessors : {1, 3}) {
      SCOPED_TRACE(std::to_string(Bytes) + "-byte elements, count " + std::to_string(count) + ", " +
                   std::to_string(multiprocessors) + " SMs");
      // won: the element itself (kept), -1 (dropped), another position (lost to it).
      std::vector<std::int64_t> won(static_cast<std::size_t>(count));
      for (std::int64_t p = 0; p < count; ++p) {
        const auto r = rng() % 3;
        won[static_cast<std::size_t>(p)] = r == 0 ? p : r == 1 ? -1 : static_cast<std::int64_t>(rng() % count);
      }
      // 8-byte aligned storage with 16 poison bytes past the end.
      const std::size_t bytes = static_cast<std::size_t>(count) * Bytes;
      std::vector<std::uint64_t> storage((bytes + 16 + 7) / 8);
      auto* grad = reinterpret_cast<std::uint8_t*>(storage.data());
      for (std::size_t b = 0; b < bytes + 16; ++b) grad[b] = static_cast<std::uint8_t>(rng() | 1);  // never 0
      std::vector<std::uint8_t> want(grad, grad + bytes + 16);
      for (std::int64_t p = 0; p < count; ++p) {
        if (won[static_cast<std::size_t>(p)] != p) std::memset(want.data() + p * Bytes, 0, Bytes);
      }
      each_thread(count, multiprocessors, [&](std::int64_t t, std::int64_t threads) {
        detail::keep_winners_thread<Bytes>(grad, won.data(), count, t, threads);
      });
      ASSERT_EQ(std::memcmp(grad, want.data(), bytes + 16), 0);
    }
  }
}

TEST(CudaVjpOnHost, KeepWinnersZeroesExactlyTheLosersOfEveryWidth) {
  std::mt19937_64 rng(seed() + 30);
  check_keep_winners<1>(rng);
  check_keep_winners<2>(rng);
  check_keep_winners<4>(rng);
  check_keep_winners<8>(rng);
  check_keep_winners<16>(rng);
}

// ---- The harness: one VJP on host or device memory ---------------------------------------------

using Bytes = std::vector<std::byte>;

void check_cuda(cudaError_t e, const char* what) { ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e); }

// Copies of host bytes on one side: host memory (the CPU engine) or device memory (the CUDA
// engine), freed with the Side.
class Side {
 public:
  explicit Side(bool device) : device_(device) {}
  ~Side() {
    for (void* p : device_memory_) cudaFree(p);
  }
  Side(const Side&) = delete;
  Side& operator=(const Side&) = delete;
  bool device() const { return device_; }
  void* put(const Bytes& bytes) {
    if (!device_) {
      host_.push_back(std::make_unique<std::uint64_t[]>(bytes.size() / 8 + 2));  // 8-byte aligned
      if (!bytes.empty()) std::memcpy(host_.back().get(), bytes.data(), bytes.size());
      return host_.back().get();
    }
    void* p = nullptr;
    check_cuda(cudaMalloc(&p, bytes.size() + 16), "cudaMalloc");
    device_memory_.push_back(p);
    if (!bytes.empty()) check_cuda(cudaMemcpy(p, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "upload");
    return p;
  }
  Bytes get(const void* p, std::size_t size) const {
    Bytes out(size);
    if (size == 0) return out;
    if (!device_) {
      std::memcpy(out.data(), p, size);
    } else {
      check_cuda(cudaMemcpy(out.data(), p, size, cudaMemcpyDeviceToHost), "download");
    }
    return out;
  }

 private:
  bool device_;
  std::vector<std::unique_ptr<std::uint64_t[]>> host_;
  std::vector<void*> device_memory_;
};

std::int64_t numel_of(const Dims& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

Dims prepend(const Dims& lead, const Dims& shape) {
  Dims out = lead;
  for (std::int64_t s : shape) out.push_back(s);
  return out;
}

// One VJP call's operands, as host bytes (float32 values, int64 indices).
struct Call {
  std::string op;
  Attributes attrs;
  bool scatter = false;
  int batch_rank = 0;
  Dims x, i, u, g;  // full shapes, batch dimensions included
  Bytes xb, ib, ub, gb;
};

struct VjpResult {
  Status status;
  Bytes grad_input, grad_updates;
};

// execute_vjp of `c` on `side` (the CUDA engine on device memory, on `stream`, else the CPU
// engine). The gradients start as poison (0xA5 bytes): every byte must be written. `alias`: a
// scatter's grad_input is grad_output's own buffer (XLA's input_output_aliases).
VjpResult run_vjp(const Call& c, Side& side, cudaStream_t stream, bool alias = false, bool deterministic = true) {
  const std::size_t gx_bytes = static_cast<std::size_t>(numel_of(c.x)) * 4;
  const std::size_t gu_bytes = static_cast<std::size_t>(numel_of(c.u)) * 4;
  void* x = side.put(c.xb);
  void* i = side.put(c.ib);
  void* u = side.put(c.ub);
  void* g = side.put(c.gb);
  void* gx = alias ? g : side.put(Bytes(gx_bytes, std::byte{0xA5}));
  void* gu = side.put(Bytes(gu_bytes, std::byte{0xA5}));
  const TensorView uv(u, DType::kFloat32, c.u);
  const MutableTensorView guv(gu, DType::kFloat32, c.u);
  ExecutionContext context;
  context.device = side.device() ? Device::kCUDA : Device::kCPU;
  context.stream = stream;
  context.deterministic = deterministic;
  VjpResult r;
  r.status = execute_vjp(c.op, TensorView(x, DType::kFloat32, c.x), TensorView(i, DType::kInt64, c.i),
                         c.scatter ? &uv : nullptr, c.attrs, c.batch_rank, TensorView(g, DType::kFloat32, c.g),
                         MutableTensorView(gx, DType::kFloat32, c.x), c.scatter ? &guv : nullptr, context);
  if (side.device()) check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  r.grad_input = side.get(gx, gx_bytes);
  if (c.scatter) r.grad_updates = side.get(gu, gu_bytes);
  return r;
}

Bytes random_f32(std::int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  Bytes b(static_cast<std::size_t>(n) * 4);
  for (std::int64_t k = 0; k < n; ++k) {
    const float v = d(rng);
    std::memcpy(b.data() + k * 4, &v, 4);
  }
  return b;
}

Bytes int64_bytes(const std::vector<std::int64_t>& v) {
  Bytes b(v.size() * 8);
  if (!v.empty()) std::memcpy(b.data(), v.data(), b.size());
  return b;
}

// The operands of registry case (op, x, i[, u]) with `lead` batch dimensions (the indices' own
// leads in `index_lead`: 1 = not batched) and index values 0/1 (duplicates), or all 0 when the
// op refuses those (`zeros`). The output cotangent's shape comes from the CPU engine's forward.
bool make_call(const std::string& op, const Dims& x, const Dims& i, const Dims* u, const Attributes& attrs,
               const Dims& lead, const Dims& index_lead, bool zeros, std::mt19937_64& rng, Call* c) {
  c->op = op;
  c->attrs = attrs;
  c->scatter = u != nullptr;
  c->batch_rank = lead.size();
  c->x = prepend(lead, x);
  c->i = prepend(index_lead, i);
  c->u = u != nullptr ? prepend(lead, *u) : Dims{};
  std::vector<std::int64_t> index_values(static_cast<std::size_t>(numel_of(c->i)));
  for (auto& v : index_values) v = zeros ? 0 : static_cast<std::int64_t>(rng() % 2);
  c->ib = int64_bytes(index_values);
  c->xb = random_f32(numel_of(c->x), rng);
  c->ub = random_f32(numel_of(c->u), rng);
  // The example's output shape: the op on example 0 (the CPU engine).
  const TensorView ex(c->xb.data(), DType::kFloat32, x), ix(c->ib.data(), DType::kInt64, i);
  Tensor y;
  const Status s = u != nullptr ? run_op(op, ex, ix, TensorView(c->ub.data(), DType::kFloat32, *u), attrs, &y)
                                : run_op(op, ex, ix, attrs, &y);
  if (!s.ok()) return false;
  c->g = prepend(lead, y.shape());
  c->gb = random_f32(numel_of(c->g), rng);
  return true;
}

struct Tally {
  int equal = 0;           // CUDA == CPU, byte for byte
  int refused_on_cuda = 0; // the lowering copies on the host: refused on a CUDA device
  int no_gradient = 0;     // refused by both engines (reductions without a gradient, copies)
};

// The CPU engine on `cpu`, the other engine on `other` (the CUDA engine on a GPU; the CPU
// engine again in the host self-check of the harness), compared.
void compare_engines(const Call& c, Side& cpu, Side& other, cudaStream_t stream, Tally* tally) {
  const VjpResult want = run_vjp(c, cpu, nullptr);
  const VjpResult got = run_vjp(c, other, stream);
  if (!want.status.ok()) {
    ASSERT_EQ(want.status.code(), StatusCode::kInvalidArgument) << want.status.message();
    EXPECT_FALSE(got.status.ok()) << "the CPU engine refused (" << want.status.message() << ")";
    ++tally->no_gradient;
    return;
  }
  if (!got.status.ok() && other.device()) {
    // Only a lowering that would read or copy data on the host refuses device operands.
    EXPECT_EQ(got.status.code(), StatusCode::kInvalidArgument) << got.status.message();
    EXPECT_NE(got.status.message().find("CUDA device"), std::string::npos) << got.status.message();
    ++tally->refused_on_cuda;
    return;
  }
  ASSERT_TRUE(got.status.ok()) << got.status.message();
  EXPECT_TRUE(got.grad_input == want.grad_input) << "grad_input";
  EXPECT_TRUE(got.grad_updates == want.grad_updates) << "grad_updates";
  if (c.scatter) {
    // grad_input in grad_output's own buffer: the same bytes.
    const VjpResult aliased = run_vjp(c, other, stream, /*alias=*/true);
    ASSERT_TRUE(aliased.status.ok()) << aliased.status.message();
    EXPECT_TRUE(aliased.grad_input == want.grad_input) << "aliased grad_input";
    EXPECT_TRUE(aliased.grad_updates == want.grad_updates) << "aliased grad_updates";
  }
  ++tally->equal;
}

// Every registry op (testing::explain_cases / scatter_explain_cases), batch ranks 0, 1, 2.
Tally every_registry_op(Side& cpu, Side& other, cudaStream_t stream, std::uint64_t s) {
  std::mt19937_64 rng(s);
  Tally tally;
  struct Layout {
    Dims lead, index_lead;
  };
  const std::vector<Layout> layouts = {{{}, {}}, {{3}, {3}}, {{3}, {1}}, {{2, 3}, {1, 3}}};
  const auto run_case = [&](const std::string& op, const Dims& x, const Dims& i, const Dims* u, const Attributes& a) {
    for (const Layout& layout : layouts) {
      SCOPED_TRACE(op + ", batch " + to_string(layout.lead) + ", indices' lead " + to_string(layout.index_lead));
      Call c;
      bool made = false;
      for (bool zeros : {false, true}) {
        if ((made = make_call(op, x, i, u, a, layout.lead, layout.index_lead, zeros, rng, &c))) break;
      }
      if (!made) continue;  // no valid call of these shapes (the CPU engine's forward refuses)
      compare_engines(c, cpu, other, stream, &tally);
    }
  };
  for (const auto& e : testing::explain_cases()) run_case(e.op, e.x, e.i, nullptr, e.a);
  for (const auto& e : testing::scatter_explain_cases()) run_case(e.op, e.x, e.i, &e.u, e.a);
  return tally;
}

TEST(CudaVjpOnHost, TheGpuHarnessRunsEveryRegistryOpOnTheCpuEngine) {
  // The comparison of CudaVjp.EveryRegistryOpEqualsTheCpuEngine with the CPU engine on both
  // sides: its calls are valid and most ops have a gradient.
  Side cpu(false), other(false);
  const Tally t = every_registry_op(cpu, other, nullptr, seed() + 31);
  EXPECT_GT(t.equal, 200);  // 216 when this was written (and 56 calls without a gradient)
  EXPECT_EQ(t.refused_on_cuda, 0);
  std::printf("[   INFO   ] %d calls with a gradient, %d without\n", t.equal, t.no_gradient);
}

// ---- Without a device ----------------------------------------------------------------------------

TEST(CudaVjpNoDevice, ArgumentsAreCheckedThenTheMissingDeviceIsNamed) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present (CudaVjp.* run there)";
  float x[12] = {}, g[6] = {}, gx[12] = {};
  std::int64_t i[6] = {};
  ExecutionContext context;
  context.device = Device::kCUDA;
  const Attributes attrs = {{"dim", "1"}};
  // The CPU engine's checks first, with its messages ...
  Status s = execute_vjp("torch.gather", TensorView(x, DType::kFloat32, {3, 4}), TensorView(i, DType::kInt64, {3, 2}),
                         nullptr, attrs, 0, TensorView(g, DType::kFloat32, {3, 2}),
                         MutableTensorView(gx, DType::kFloat32, {3, 4}, {1, 3}), nullptr, context);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "grad_input must be C-contiguous (strides [1,3] for shape [3,4])");
  // ... then the engine.
  s = execute_vjp("torch.gather", TensorView(x, DType::kFloat32, {3, 4}), TensorView(i, DType::kInt64, {3, 2}),
                  nullptr, attrs, 0, TensorView(g, DType::kFloat32, {3, 2}), MutableTensorView(gx, DType::kFloat32, {3, 4}),
                  nullptr, context);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "torch.gather: the CUDA engine was asked for, but no CUDA device is available (no driver "
                         "or no GPU)");
}

// ---- On a GPU ------------------------------------------------------------------------------------

class Stream {
 public:
  Stream() { check_cuda(cudaStreamCreate(&stream_), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

TEST(CudaVjp, EveryRegistryOpEqualsTheCpuEngine) {
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  Side cpu(false), gpu(true);
  const Tally t = every_registry_op(cpu, gpu, stream.get(), seed() + 32);
  EXPECT_GT(t.equal, 150);
  std::printf("[   INFO   ] %d calls equal the CPU engine, %d refused on a CUDA device, %d without a gradient\n",
              t.equal, t.refused_on_cuda, t.no_gradient);
}

// A call of `op` with explicit operands (float32 values, int64 indices).
Call explicit_call(const std::string& op, const Attributes& attrs, Dims x, Dims i, std::vector<std::int64_t> index,
                   Dims g, std::mt19937_64& rng, const Dims* u = nullptr, int batch_rank = 0) {
  Call c;
  c.op = op;
  c.attrs = attrs;
  c.batch_rank = batch_rank;
  c.scatter = u != nullptr;
  c.x = x;
  c.i = i;
  c.u = u != nullptr ? *u : Dims{};
  c.g = g;
  c.xb = random_f32(numel_of(x), rng);
  c.ib = int64_bytes(index);
  c.ub = random_f32(numel_of(c.u), rng);
  c.gb = random_f32(numel_of(g), rng);
  return c;
}

// torch.index_select of 20000 rows of 64 float32 from a 50-row table: the backward sums about
// 400 rows into each table row.
Call embedding_call(std::mt19937_64& rng) {
  std::vector<std::int64_t> ids(20000);
  for (auto& v : ids) v = static_cast<std::int64_t>(rng() % 50);
  return explicit_call("torch.index_select", {{"dim", "0"}}, {50, 64}, {20000}, ids, {20000, 64}, rng);
}

// TransformsVjp.PyTorchWritesGiveEveryDuplicateTheGradient's calls, scatter_multiaxis (only the
// last duplicate gets it) and torch.scatter (every duplicate), then 30000 updates of rows of 8
// into 1000 targets, 1 in 10 dropped (index_mode drop), batched by 2.
std::vector<Call> winner_calls(std::mt19937_64& rng) {
  std::vector<Call> calls;
  const Dims u3 = {3};
  calls.push_back(explicit_call("scatter_multiaxis", {{"axes", "0"}}, {4}, {3}, {0, 0, 2}, {4}, rng, &u3));
  calls.push_back(explicit_call("torch.scatter", {{"dim", "0"}}, {4}, {3}, {0, 0, 2}, {4}, rng, &u3));
  std::vector<std::int64_t> index(2 * 30000);
  for (auto& v : index) v = rng() % 10 == 0 ? 5000 : static_cast<std::int64_t>(rng() % 1000);
  const Dims u = {2, 30000, 8};
  calls.push_back(explicit_call("scatter_multiaxis", {{"axes", "0"}, {"index_mode", "drop"}}, {2, 1000, 8},
                                {2, 30000, 1}, index, {2, 1000, 8}, rng, &u, /*batch_rank=*/1));
  return calls;
}

// Whether the first update's gradient is zero (it lost its target to the second).
bool first_update_lost(const VjpResult& r) {
  float first = 0;
  std::memcpy(&first, r.grad_updates.data(), 4);
  return first == 0.0f;
}

std::vector<Call> out_of_range_calls(std::mt19937_64& rng) {
  const Dims u2 = {2, 3};
  return {explicit_call("torch.gather", {{"dim", "1"}}, {3, 4}, {3, 2}, {0, 1, 2, 9, 3, 0}, {3, 2}, rng),
          explicit_call("scatter_multiaxis", {{"axes", "0"}}, {4, 3}, {2, 1}, {1, 7}, {4, 3}, rng, &u2),
          explicit_call("scatter_multiaxis", {{"axes", "0"}, {"reduction", "add"}}, {4, 3}, {2, 1}, {-5, 0}, {4, 3},
                        rng, &u2)};
}

// The lowerings' steps on the updates: torch.index_add's alpha, the negation of
// tf.tensor_scatter_nd_sub and jax's .at[].subtract (grad_updates: alpha times, or minus, the
// gathered cotangent).
std::vector<Call> updates_step_calls(std::mt19937_64& rng) {
  const Dims u23 = {2, 3}, u2 = {2};
  return {explicit_call("torch.index_add", {{"dim", "0"}, {"alpha", "2.5"}}, {4, 3}, {2}, {1, 1}, {4, 3}, rng, &u23),
          explicit_call("tf.tensor_scatter_nd_sub", {}, {4, 3}, {2, 1}, {3, 0}, {4, 3}, rng, &u23),
          explicit_call("jax.at.subtract", {}, {5}, {2, 1}, {4, 4}, {5}, rng, &u2)};
}

TEST(CudaVjpOnHost, UpdatesStepsGiveTheScaledOrNegatedCotangent) {
  // On the CPU engine, against the step's rule: grad_updates is alpha (or -1) times the
  // cotangent read at each update's target; grad_input is the cotangent (they all add).
  std::mt19937_64 rng(seed() + 37);
  Side cpu(false);
  const std::vector<Call> calls = updates_step_calls(rng);
  const float factors[] = {2.5f, -1.0f, -1.0f};
  for (std::size_t k = 0; k < calls.size(); ++k) {
    const Call& c = calls[k];
    SCOPED_TRACE(c.op);
    const VjpResult r = run_vjp(c, cpu, nullptr);
    ASSERT_TRUE(r.status.ok()) << r.status.message();
    EXPECT_TRUE(r.grad_input == c.gb);
    std::vector<std::int64_t> targets(static_cast<std::size_t>(numel_of(c.i)));
    std::memcpy(targets.data(), c.ib.data(), c.ib.size());
    const std::int64_t row = numel_of(c.u) / static_cast<std::int64_t>(targets.size());
    for (std::int64_t e = 0; e < numel_of(c.u); ++e) {
      float g = 0, got = 0;
      std::memcpy(&g, c.gb.data() + (targets[static_cast<std::size_t>(e / row)] * row + e % row) * 4, 4);
      std::memcpy(&got, r.grad_updates.data() + e * 4, 4);
      EXPECT_EQ(got, g * factors[k]) << "update element " << e;
    }
  }
}

TEST(CudaVjp, UpdatesStepsEqualTheCpuEngine) {
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  std::mt19937_64 rng(seed() + 38);
  Side cpu(false), gpu(true);
  Tally tally;
  for (const Call& c : updates_step_calls(rng)) {
    SCOPED_TRACE(c.op);
    compare_engines(c, cpu, gpu, stream.get(), &tally);
  }
  EXPECT_EQ(tally.equal, 3);
}

TEST(CudaVjpOnHost, TheGpuTestsCallsAreValidOnTheCpuEngine) {
  std::mt19937_64 rng(seed() + 36);
  Side cpu(false);
  const VjpResult embedding = run_vjp(embedding_call(rng), cpu, nullptr);
  EXPECT_TRUE(embedding.status.ok()) << embedding.status.message();
  const std::vector<Call> winners = winner_calls(rng);
  for (std::size_t k = 0; k < winners.size(); ++k) {
    const VjpResult r = run_vjp(winners[k], cpu, nullptr);
    ASSERT_TRUE(r.status.ok()) << winners[k].op << ": " << r.status.message();
    if (k < 2) EXPECT_EQ(first_update_lost(r), k == 0) << winners[k].op;
  }
  for (const Call& c : out_of_range_calls(rng)) {
    EXPECT_EQ(run_vjp(c, cpu, nullptr).status.code(), StatusCode::kOutOfRange) << c.op;
  }
}

TEST(CudaVjp, EmbeddingBackwardSumsDuplicatesAsTheCpuEngineDoes) {
  // Deterministic: the CPU engine's bytes on every run; atomic (ExecutionContext::deterministic
  // = false): the same sums to float32 rounding.
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  std::mt19937_64 rng(seed() + 33);
  const Call c = embedding_call(rng);
  Side cpu(false), gpu(true);
  const VjpResult want = run_vjp(c, cpu, nullptr);
  ASSERT_TRUE(want.status.ok()) << want.status.message();
  for (int run = 0; run < 3; ++run) {
    const VjpResult got = run_vjp(c, gpu, stream.get());
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_TRUE(got.grad_input == want.grad_input) << "run " << run;
  }
  const VjpResult atomic = run_vjp(c, gpu, stream.get(), false, /*deterministic=*/false);
  ASSERT_TRUE(atomic.status.ok()) << atomic.status.message();
  std::vector<float> a(50 * 64), w(50 * 64);
  std::memcpy(a.data(), atomic.grad_input.data(), a.size() * 4);
  std::memcpy(w.data(), want.grad_input.data(), w.size() * 4);
  for (std::size_t k = 0; k < a.size(); ++k) EXPECT_NEAR(a[k], w[k], 1e-3f) << k;
}

TEST(CudaVjp, ScatterNoneGivesTheWinnerTheGradientAndPyTorchWritesEveryDuplicate) {
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  Side cpu(false), gpu(true);
  std::mt19937_64 rng(seed() + 34);
  const std::vector<Call> calls = winner_calls(rng);
  for (std::size_t k = 0; k < calls.size(); ++k) {
    const Call& c = calls[k];
    SCOPED_TRACE(c.op + " " + to_string(c.u));
    const VjpResult want = run_vjp(c, cpu, nullptr), got = run_vjp(c, gpu, stream.get());
    ASSERT_TRUE(want.status.ok()) << want.status.message();
    ASSERT_TRUE(got.status.ok()) << got.status.message();
    EXPECT_TRUE(got.grad_input == want.grad_input);
    EXPECT_TRUE(got.grad_updates == want.grad_updates);
    if (k < 2) EXPECT_EQ(first_update_lost(got), k == 0);
    const VjpResult aliased = run_vjp(c, gpu, stream.get(), /*alias=*/true);
    ASSERT_TRUE(aliased.status.ok()) << aliased.status.message();
    EXPECT_TRUE(aliased.grad_input == want.grad_input) << "aliased";
    EXPECT_TRUE(aliased.grad_updates == want.grad_updates) << "aliased";
  }
}

TEST(CudaVjp, OutOfRangeIndexHasTheCpuEnginesMessage) {
  SKIP_WITHOUT_DEVICE();
  Stream stream;
  Side cpu(false), gpu(true);
  std::mt19937_64 rng(seed() + 35);
  for (const Call& c : out_of_range_calls(rng)) {
    SCOPED_TRACE(c.op);
    const VjpResult want = run_vjp(c, cpu, nullptr), got = run_vjp(c, gpu, stream.get());
    EXPECT_EQ(want.status.code(), StatusCode::kOutOfRange) << want.status.message();
    EXPECT_EQ(got.status.code(), want.status.code()) << got.status.message();
    EXPECT_EQ(got.status.message(), want.status.message());
  }
}

TEST(CudaVjp, HostMemoryIsRefusedByName) {
  SKIP_WITHOUT_DEVICE();
  float x[12] = {}, g[6] = {}, gx[12] = {};
  std::int64_t i[6] = {};
  ExecutionContext context;
  context.device = Device::kCUDA;
  const Status s = execute_vjp("torch.gather", TensorView(x, DType::kFloat32, {3, 4}),
                               TensorView(i, DType::kInt64, {3, 2}), nullptr, {{"dim", "1"}}, 0,
                               TensorView(g, DType::kFloat32, {3, 2}), MutableTensorView(gx, DType::kFloat32, {3, 4}),
                               nullptr, context);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("grad_input.data is host memory"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace multigather

#endif  // MULTIGATHER_HAVE_CUDA (with MULTIGATHER_CUDA=OFF this file is empty)
