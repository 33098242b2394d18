// The CUDA backend against the CPU reference kernel (the oracle), on randomized plans: ranks,
// axes, element widths, all eight index types, every index mode, negative indices, broadcasting
// on both sides, permuted / padded / negative / zero strides, misaligned pointers, long rows.
// GPU tests skip without a device; the host-side planner (launch parameters, fast division) and
// the no-device behaviour are tested everywhere the CUDA backend is built.
//
// Replay a random case: MULTIGATHER_TEST_SEED=<seed printed on failure> ./multigather_tests
//   --gtest_filter='Cuda*'
#include <gtest/gtest.h>

#if MULTIGATHER_HAVE_CUDA

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/gather_rows.hpp"
#include "kernels/cuda/launch_params.hpp"
#include "multigather/cuda.hpp"
#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "plan/plan.hpp"
#include "cuda_test_support.hpp"

namespace multigather {
namespace {

// ---- Host-only: fast division and the launch planner ----------------------------------------

TEST(CudaFastDivide, MatchesIntegerDivision) {
  std::mt19937_64 rng(20261121);
  std::vector<std::uint32_t> divisors = {1, 2, 3, 5, 7, 10, 64, 100, 255, 256, 1000, 65535,
                                         65537, (1u << 30) - 1, 1u << 30, (1u << 31) - 1};
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % ((1u << 31) - 1));
  for (std::uint32_t d : divisors) {
    const detail::FastDivide fast(d);
    std::vector<std::uint32_t> dividends = {0, 1, d - 1, d, d + 1, (1u << 31) - 1};
    for (int i = 0; i < 200; ++i) dividends.push_back(static_cast<std::uint32_t>(rng() % (1u << 31)));
    for (std::uint32_t n : dividends) {
      if (n >= (1u << 31)) continue;
      ASSERT_EQ(fast.divide(n), n / d) << n << " / " << d;
    }
  }
}

// Plans a call on placeholder pointers (the planner never dereferences them).
detail::CudaGatherParams plan_for(const TensorView& input, const TensorView& indices,
                                  std::span<const std::int64_t> axes, const GatherOptions& options) {
  GatherShape shape;
  EXPECT_TRUE(infer_shape(input.shape, indices.shape, axes, &shape).ok());
  MutableTensorView output(reinterpret_cast<void*>(std::uintptr_t{0x20000000}), input.dtype,
                           shape.output_shape);
  detail::ValidatedCall call;
  const Status status = detail::validate_call(input, indices, axes, output, options, &call);
  EXPECT_TRUE(status.ok()) << status.message();
  detail::GatherPlan plan;
  detail::make_plan(input, indices, output, call, options, &plan);
  detail::CudaGatherParams params;
  detail::make_cuda_params(plan, &params);
  return params;
}

// Launch parameters worked out by hand. Units are as wide as every pointer, stride and row
// length allows (16 bytes at most); a group has round_up_pow2(row_units / 4) threads (at most
// 256), each moving up to 4 units; rows longer than one group's 4 * group units are split.
struct LaunchRow {
  const char* what;
  std::uintptr_t input_address;
  Dims input_shape;
  DType dtype;
  Dims indices_shape;
  std::int64_t axis;
  bool block_path;
  int unit_bytes;
  std::int64_t rows, row_units;
  int group_shift;
  std::int64_t chunks_per_row;
  int rows_per_thread;
  bool offsets32;
};

const LaunchRow kLaunchRows[] = {
    // BENCH embedding: rows of 2048 bytes = 128 units of 16 bytes -> 32 threads (a warp).
    {"embedding", 0x10000000, {50000, 512}, DType::kFloat32, {8192, 1}, /*axis=*/0,
     /*block_path=*/true, /*unit_bytes=*/16, /*rows=*/8192, /*row_units=*/128, /*group_shift=*/5,
     /*chunks_per_row=*/1, /*rows_per_thread=*/1, /*offsets32=*/true},
    // BENCH embedding_fp16: rows of 128 bytes = 8 units -> 2 threads per row.
    {"embedding_fp16", 0x10000000, {1000000, 64}, DType::kFloat16, {65536, 1}, 0, true, 16, 65536,
     8, 1, 1, 1, true},
    // The table 4 bytes past a 16-byte boundary: 4-byte units, 512 per row -> 128 threads.
    {"misaligned table", 0x10000004, {100, 512}, DType::kFloat32, {10, 1}, 0, true, 4, 10, 512, 7,
     1, 1, true},
    // BENCH elements_last_axis: every output element has its own index -> one element per row,
    // 4 rows per thread.
    {"take_along_axis", 0x10000000, {4096, 1024}, DType::kFloat32, {4096, 256}, 1, false, 4,
     4096 * 256, 1, 0, 1, 4, true},
    // Blocks of 2 floats on 8-byte boundaries: one 8-byte unit per row, 4 rows per thread.
    {"pairs", 0x10000008, {1000, 2}, DType::kFloat32, {300, 1}, 0, true, 8, 300, 1, 0, 1, 4, true},
    // Rows of 65536 floats = 16384 units: 256 threads x 4 units = 1024 units per item -> 16.
    {"long rows", 0x10000000, {2, 65536}, DType::kFloat32, {3, 1}, 0, true, 16, 3, 16384, 8, 16,
     1, true},
    // [2^20, 4096] f32 spans 2^30 units of 16 bytes: 32-bit offsets still exact.
    {"1 GiB-unit table", 0x10000000, {1 << 20, 4096}, DType::kFloat32, {8, 1}, 0, true, 16, 8,
     1024, 8, 1, 1, true},
    // [2^22, 4096] f32 spans 2^32 units: beyond int32, the 64-bit variant.
    {"4 Gi-unit table", 0x10000000, {1 << 22, 4096}, DType::kFloat32, {8, 1}, 0, true, 16, 8, 1024,
     8, 1, 1, false},
};

// The launch parameters of a row of the table (its addresses are never dereferenced).
detail::CudaGatherParams params_for_row(const LaunchRow& row) {
  const std::int64_t axes[] = {row.axis};
  return plan_for(
      TensorView(reinterpret_cast<const void*>(row.input_address), row.dtype, row.input_shape),
      TensorView(reinterpret_cast<const void*>(std::uintptr_t{0x30000000}), DType::kInt64,
                 row.indices_shape),
      axes, {});
}

TEST(CudaLaunchParams, GoldenTable) {
  for (const LaunchRow& row : kLaunchRows) {
    SCOPED_TRACE(row.what);
    const auto p = params_for_row(row);
    EXPECT_EQ(p.block_path, row.block_path);
    EXPECT_EQ(p.unit_bytes, row.unit_bytes);
    EXPECT_EQ(p.rows, row.rows);
    EXPECT_EQ(p.row_units, row.row_units);
    EXPECT_EQ(p.group_shift, row.group_shift);
    EXPECT_EQ(p.chunks_per_row, row.chunks_per_row);
    EXPECT_EQ(p.rows_per_thread, row.rows_per_thread);
    EXPECT_EQ(p.items, row.rows * row.chunks_per_row);
    EXPECT_EQ(p.offsets32, row.offsets32);
  }
}

TEST(CudaLaunchParams, EmbeddingStridesAreInUnits) {
  const std::int64_t axes[] = {0};
  const auto p = plan_for(TensorView(reinterpret_cast<const void*>(std::uintptr_t{0x10000000}),
                                     DType::kFloat32, {50000, 512}),
                          TensorView(reinterpret_cast<const void*>(std::uintptr_t{0x30000000}),
                                     DType::kInt64, {8192, 1}),
                          axes, {});
  ASSERT_EQ(p.rank, 1);
  EXPECT_EQ(p.shape[0], 8192);
  EXPECT_EQ(p.input_strides[0], 0);     // the axis moves only through the index
  EXPECT_EQ(p.output_strides[0], 128);  // 512 floats = 128 units of 16 bytes
  EXPECT_EQ(p.axis_strides[0], 128);
  EXPECT_EQ(p.indices_strides[0], 1);
}

TEST(CudaLaunchParams, FillPatternRepeatsTheElement) {
  GatherOptions options;
  options.index_mode = IndexMode::kFill;
  options.fill_value = Scalar::from_int(0x1234);
  const std::int64_t axes[] = {0};
  const auto p = plan_for(TensorView(reinterpret_cast<const void*>(std::uintptr_t{0x10000000}),
                                     DType::kUInt16, {4, 4}),
                          TensorView(reinterpret_cast<const void*>(std::uintptr_t{0x30000000}),
                                     DType::kInt32, {2, 1}),
                          axes, options);
  for (int b = 0; b < 16; b += 2) {
    std::uint16_t v;
    std::memcpy(&v, p.fill_pattern + b, 2);
    EXPECT_EQ(v, 0x1234) << "byte " << b;
  }
}

// ---- Without a device -----------------------------------------------------------------------

TEST(CudaNoDevice, ValidationStillReportsShapeErrorsAndThenTheMissingDevice) {
  if (cuda_device_available()) GTEST_SKIP() << "a CUDA device is present";
  float in[6] = {};
  std::int64_t ix[2] = {0, 1};
  float out[6] = {};  // the {2, 3} output's six elements (a shorter array let the view reach ix)
  const std::int64_t bad_axes[] = {2};
  Status s = gather_multiaxis_cuda_into(TensorView(in, DType::kFloat32, {2, 3}),
                                        TensorView(ix, DType::kInt64, {2, 1}), bad_axes,
                                        MutableTensorView(out, DType::kFloat32, {2, 3}));
  EXPECT_EQ(s.message(), "axes[0] = 2 is out of range [-2, 2) for input rank 2");
  const std::int64_t axes[] = {0};
  s = gather_multiaxis_cuda_into(TensorView(in, DType::kFloat32, {2, 3}),
                                 TensorView(ix, DType::kInt64, {2, 1}), axes,
                                 MutableTensorView(out, DType::kFloat32, {2, 3}));
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_EQ(s.message(), "no CUDA device is available");
}

TEST(CudaApi, MisalignedIndicesAreRefusedBeforeAnyDeviceWork) {
  // Checked on the host before any pointer query, so the message is the same with or without
  // a device.
  alignas(8) std::byte storage[32] = {};
  float in[6] = {};
  float out[6] = {};
  const std::int64_t axes[] = {0};
  const Status s = gather_multiaxis_cuda_into(
      TensorView(in, DType::kFloat32, {2, 3}), TensorView(storage + 4, DType::kInt64, {2, 1}),
      axes, MutableTensorView(out, DType::kFloat32, {2, 3}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "indices.data is not aligned to its element size 8 (the CUDA backend "
                         "loads whole indices)");
}

// ---- On a GPU -------------------------------------------------------------------------------

void check_cuda(cudaError_t e, const char* what) {
  ASSERT_EQ(e, cudaSuccess) << what << ": " << cudaGetErrorString(e);
}

TEST(CudaGather, DeviceIsThere) {
  // First of the GPU tests: states what the runtime sees (in the log of every run).
  std::printf("[   INFO   ] %s\n", device_count_answer().c_str());
  SKIP_WITHOUT_DEVICE();
  int device = 0;
  cudaDeviceProp prop{};
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  std::printf("[   INFO   ] device %d: %s, compute capability %d.%d, %d SMs\n", device, prop.name,
              prop.major, prop.minor, prop.multiProcessorCount);
}

TEST(CudaLowering, AutoDeviceFindsCudaOperandsAndTheUpdatesStepsRunThere) {
  // lower_op's default device (kAuto) asks where the operands live: on device memory, the
  // lowering is for the CUDA engine; torch.index_add's alpha and tf.tensor_scatter_nd_sub's
  // negation are the engines' steps, run on the device: the same bytes as the CPU engine.
  SKIP_WITHOUT_DEVICE();
  const float x_host[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::int64_t index_host[2] = {2, 2};
  const float source_host[6] = {0.5f, -1.25f, 3, 1e-3f, -0.0f, 7};
  const std::int64_t nd_index_host[2] = {3, 0};
  void* memory = nullptr;
  check_cuda(cudaMalloc(&memory, 4096), "cudaMalloc");
  auto* base = static_cast<std::byte*>(memory);
  check_cuda(cudaMemcpy(base, x_host, sizeof x_host, cudaMemcpyHostToDevice), "upload x");
  check_cuda(cudaMemcpy(base + 256, index_host, sizeof index_host, cudaMemcpyHostToDevice), "upload index");
  check_cuda(cudaMemcpy(base + 512, source_host, sizeof source_host, cudaMemcpyHostToDevice), "upload source");
  check_cuda(cudaMemcpy(base + 768, nd_index_host, sizeof nd_index_host, cudaMemcpyHostToDevice), "upload nd index");
  const TensorView x(base, DType::kFloat32, {4, 3}), index(base + 256, DType::kInt64, {2}),
      source(base + 512, DType::kFloat32, {2, 3}), nd_index(base + 768, DType::kInt64, {2, 1});
  struct Step {
    const char* op;
    TensorView device_index;
    const void* host_index;
    Dims index_shape;
    Attributes attrs;
  };
  const Step steps[] = {{"torch.index_add", index, index_host, {2}, {{"dim", "0"}, {"alpha", "2.5"}}},
                        {"tf.tensor_scatter_nd_sub", nd_index, nd_index_host, {2, 1}, {}}};
  for (const Step& s : steps) {
    SCOPED_TRACE(s.op);
    Lowering l;
    const Status lowered = lower_op(s.op, x, s.device_index, source, s.attrs, &l);
    ASSERT_TRUE(lowered.ok()) << lowered.message();
    EXPECT_EQ(l.device, Device::kCUDA);
    EXPECT_NE(l.updates_step.kind, UpdatesStep::Kind::kNone);
    const MutableTensorView out(base + 1024, DType::kFloat32, {4, 3});
    const Status ran = execute(l, out);
    ASSERT_TRUE(ran.ok()) << ran.message();
    float got[12] = {};
    check_cuda(cudaMemcpy(got, base + 1024, sizeof got, cudaMemcpyDeviceToHost), "download");
    Tensor want;
    ASSERT_TRUE(run_op(s.op, TensorView(x_host, DType::kFloat32, {4, 3}),
                       TensorView(s.host_index, DType::kInt64, s.index_shape),
                       TensorView(source_host, DType::kFloat32, {2, 3}), s.attrs, &want).ok());
    EXPECT_EQ(std::memcmp(got, want.data(), sizeof got), 0);
  }
  cudaFree(memory);
}

// Device storage holding a copy of a host byte buffer.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
    check_cuda(cudaMalloc(&data_, bytes ? bytes : 1), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  std::byte* get() const { return static_cast<std::byte*>(data_); }
  void upload(const std::vector<std::byte>& host) {
    check_cuda(cudaMemcpy(data_, host.data(), host.size(), cudaMemcpyHostToDevice), "upload");
  }
  std::vector<std::byte> download() const {
    std::vector<std::byte> host(bytes_);
    check_cuda(cudaMemcpy(host.data(), data_, bytes_, cudaMemcpyDeviceToHost), "download");
    return host;
  }

 private:
  void* data_ = nullptr;
  std::size_t bytes_;
};

// A strided layout of `shape` inside a storage buffer: position 0 sits at element `origin`.
struct Layout {
  Dims strides;
  std::int64_t origin = 0;
  std::int64_t storage = 1;  // elements
};

Layout random_layout(const Dims& shape, std::mt19937_64& rng, bool allow_broadcast) {
  const int r = shape.size();
  Layout l;
  l.strides = Dims::filled(r, 0);
  std::vector<int> order(static_cast<std::size_t>(r));
  std::iota(order.begin(), order.end(), 0);
  const int kind = static_cast<int>(rng() % 4);  // 0 contiguous, 1 permuted, 2 padded, 3 mixed
  if (kind == 1 || kind == 3) std::shuffle(order.begin(), order.end(), rng);
  std::int64_t stride = (kind >= 2) ? 1 + static_cast<std::int64_t>(rng() % 2) : 1;
  for (int i = r - 1; i >= 0; --i) {
    const int d = order[static_cast<std::size_t>(i)];
    l.strides[d] = stride;
    stride *= std::max<std::int64_t>(shape[d], 1) + ((kind >= 2 && rng() % 2) ? 1 : 0);
  }
  if (kind == 3 && r > 0) {
    const int d = static_cast<int>(rng() % static_cast<unsigned>(r));
    l.strides[d] = -l.strides[d];  // walk one dimension backwards
  }
  if (allow_broadcast && r > 0 && rng() % 4 == 0) {
    l.strides[static_cast<int>(rng() % static_cast<unsigned>(r))] = 0;  // an expanded dimension
  }
  std::int64_t low = 0, high = 0;
  for (int d = 0; d < r; ++d) {
    if (shape[d] == 0) return Layout{l.strides, 0, 1};
    const std::int64_t reach = l.strides[d] * (shape[d] - 1);
    (reach < 0 ? low : high) += reach;
  }
  l.origin = -low;
  l.storage = high - low + 1;
  return l;
}

// One operand in host and device storage with the same layout.
struct Operand {
  DType dtype;
  Dims shape;
  Layout layout;
  std::vector<std::byte> host;
  std::unique_ptr<DeviceBuffer> device;
  std::size_t offset_bytes = 0;  // extra misalignment of position 0

  std::size_t es() const { return element_size(dtype); }
  std::byte* host_origin() { return host.data() + offset_bytes + layout.origin * es(); }
  std::byte* device_origin() const { return device->get() + offset_bytes + layout.origin * es(); }
  TensorView host_view() { return TensorView(host_origin(), dtype, shape, layout.strides); }
  TensorView device_view() const { return TensorView(device_origin(), dtype, shape, layout.strides); }
};

void allocate(Operand* op, std::size_t misalign) {
  op->offset_bytes = misalign;
  op->host.resize(op->offset_bytes + static_cast<std::size_t>(op->layout.storage) * op->es());
}

void upload(Operand* op) {
  op->device = std::make_unique<DeviceBuffer>(op->host.size());
  op->device->upload(op->host);
}

void fill_random_bytes(std::vector<std::byte>* bytes, std::mt19937_64& rng) {
  for (auto& b : *bytes) b = static_cast<std::byte>(rng() & 0xff);
}

// Writes index value `v` (already representable) into the index element at `p`.
void store_index(std::byte* p, DType t, __int128 v) {
  switch (t) {
    case DType::kInt8: { auto x = static_cast<std::int8_t>(v); std::memcpy(p, &x, 1); break; }
    case DType::kUInt8: { auto x = static_cast<std::uint8_t>(v); std::memcpy(p, &x, 1); break; }
    case DType::kInt16: { auto x = static_cast<std::int16_t>(v); std::memcpy(p, &x, 2); break; }
    case DType::kUInt16: { auto x = static_cast<std::uint16_t>(v); std::memcpy(p, &x, 2); break; }
    case DType::kInt32: { auto x = static_cast<std::int32_t>(v); std::memcpy(p, &x, 4); break; }
    case DType::kUInt32: { auto x = static_cast<std::uint32_t>(v); std::memcpy(p, &x, 4); break; }
    case DType::kInt64: { auto x = static_cast<std::int64_t>(v); std::memcpy(p, &x, 8); break; }
    default: { auto x = static_cast<std::uint64_t>(v); std::memcpy(p, &x, 8); break; }
  }
}

// A random index for an axis of size n: mostly valid (negative ones too), sometimes out of range
// or extreme (type minimum / maximum, unsigned 64-bit values above INT64_MAX).
__int128 random_index(std::mt19937_64& rng, DType t, std::int64_t n, bool negative, int bad_per_mille) {
  const bool is_unsigned = is_unsigned_integer(t);
  const int bits = static_cast<int>(element_size(t)) * 8;
  const __int128 lo = is_unsigned ? 0 : -(static_cast<__int128>(1) << (bits - 1));
  const __int128 hi = is_unsigned ? (static_cast<__int128>(1) << bits) - 1
                                  : (static_cast<__int128>(1) << (bits - 1)) - 1;
  __int128 v;
  if (n > 0 && static_cast<int>(rng() % 1000) >= bad_per_mille) {
    v = static_cast<__int128>(rng() % static_cast<std::uint64_t>(n));
    if (negative && !is_unsigned && rng() % 3 == 0) v -= n;
  } else {
    switch (rng() % 4) {
      case 0: v = n + static_cast<__int128>(rng() % 5); break;
      case 1: v = -n - 1 - static_cast<__int128>(rng() % 5); break;
      case 2: v = lo; break;
      default: v = hi; break;
    }
  }
  return std::clamp(v, lo, hi);
}

struct Case {
  Operand input, indices, output;
  std::vector<std::int64_t> axes;
  GatherOptions options;
  std::string description;
};

constexpr DType kIndexTypes[] = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16,
                                 DType::kInt32, DType::kUInt32, DType::kInt64, DType::kUInt64};
constexpr DType kDataTypes[] = {DType::kUInt8, DType::kFloat16, DType::kFloat32, DType::kFloat64,
                                DType::kComplex128};

// Builds a random valid call: shapes, axes, layouts, index values and options.
void random_case(std::mt19937_64& rng, Case* c) {
  const int r = 1 + static_cast<int>(rng() % 4);
  const int k = static_cast<int>(rng() % static_cast<unsigned>(std::min(r, 3) + 1));
  const int cs = std::max(k, 1);
  Dims in_shape = Dims::filled(r, 1), logical = Dims::filled(r, 1);
  std::vector<int> dims(static_cast<std::size_t>(r));
  std::iota(dims.begin(), dims.end(), 0);
  std::shuffle(dims.begin(), dims.end(), rng);
  std::vector<bool> is_axis(static_cast<std::size_t>(r), false);
  c->axes.clear();
  for (int j = 0; j < k; ++j) {
    const int d = dims[static_cast<std::size_t>(j)];
    is_axis[static_cast<std::size_t>(d)] = true;
    c->axes.push_back(rng() % 2 ? d : d - r);
  }
  // A long contiguous inner block now and then, so rows of many units and split rows occur.
  const bool long_rows = rng() % 4 == 0;
  for (int d = 0; d < r; ++d) {
    const bool inner = d == r - 1;
    const std::int64_t size = (inner && long_rows) ? 300 + static_cast<std::int64_t>(rng() % 1800)
                                                   : static_cast<std::int64_t>(rng() % 6);
    in_shape[d] = size;
    if (is_axis[static_cast<std::size_t>(d)]) {
      logical[d] = 1 + static_cast<std::int64_t>(rng() % 5);
      if (rng() % 25 == 0) in_shape[d] = 0;  // an empty indexed axis
    } else {
      switch (rng() % 4) {
        case 0: logical[d] = 1; break;                   // indices broadcast
        case 1: in_shape[d] = 1; logical[d] = 1 + static_cast<std::int64_t>(rng() % 5); break;
        default: logical[d] = size; break;
      }
    }
  }
  Dims ix_shape = logical;
  ix_shape[r - 1] *= cs;

  c->options = GatherOptions{};
  c->options.index_mode = static_cast<IndexMode>(rng() % 4);
  c->options.negative_indices = rng() % 4 != 0;
  c->options.fill_value = Scalar::from_int(static_cast<std::int64_t>(rng() % 100));
  const DType data_type = kDataTypes[rng() % std::size(kDataTypes)];
  const DType index_type = kIndexTypes[rng() % std::size(kIndexTypes)];

  GatherShape s;
  ASSERT_TRUE(infer_shape(in_shape, ix_shape, c->axes, &s).ok());
  c->input = Operand{data_type, in_shape, random_layout(in_shape, rng, true), {}, nullptr};
  c->indices = Operand{index_type, ix_shape, random_layout(ix_shape, rng, true), {}, nullptr};
  c->output = Operand{data_type, s.output_shape, random_layout(s.output_shape, rng, false), {}, nullptr};
  // Pointers off their natural alignment (by whole elements) exercise the narrow units.
  // Half an element too (a complex128 array on an 8-byte boundary): units narrower than one
  // element then carry the fill value piece by piece.
  const auto misalign = [&rng](std::size_t es) -> std::size_t {
    switch (rng() % 6) {
      case 0: return es * (1 + rng() % 3);
      case 1: return es / 2;
      default: return 0;
    }
  };
  allocate(&c->input, misalign(element_size(data_type)));
  allocate(&c->indices, rng() % 4 == 0 ? element_size(index_type) : 0);
  allocate(&c->output, misalign(element_size(data_type)));
  fill_random_bytes(&c->input.host, rng);
  fill_random_bytes(&c->output.host, rng);  // poison: unwritten output bytes must stay as they are

  // Index values. A position of the index buffer may be shared by broadcast (stride 0), so
  // coordinate j is written for every logical position; the last write wins for both kernels.
  const bool error_mode = c->options.index_mode == IndexMode::kError;
  const int bad_per_mille = error_mode ? (rng() % 3 == 0 ? 2 : 0) : 150;
  const bool negative = c->options.negative_indices;
  std::int64_t count = 0;
  ASSERT_TRUE(element_count(ix_shape, &count));
  Dims pos = Dims::filled(r, 0);
  for (std::int64_t n = 0; n < count; ++n) {
    const int j = static_cast<int>(pos[r - 1] % cs);
    std::int64_t axis_size = 5;
    if (k > 0) {
      const std::int64_t a = c->axes[static_cast<std::size_t>(j)];
      axis_size = in_shape[static_cast<int>(a < 0 ? a + r : a)];
    }
    std::int64_t off = 0;
    for (int d = 0; d < r; ++d) off += pos[d] * c->indices.layout.strides[d];
    store_index(c->indices.host_origin() + off * static_cast<std::int64_t>(c->indices.es()),
                index_type, random_index(rng, index_type, axis_size, negative, bad_per_mille));
    for (int d = r - 1; d >= 0; --d) {
      if (++pos[d] < ix_shape[d]) break;
      pos[d] = 0;
    }
  }
  c->description = "input " + to_string(in_shape) + " " + std::string(dtype_name(data_type)) +
                   " strides " + to_string(c->input.layout.strides) + ", indices " +
                   to_string(ix_shape) + " " + std::string(dtype_name(index_type)) + " strides " +
                   to_string(c->indices.layout.strides) + ", output strides " +
                   to_string(c->output.layout.strides) + ", mode " +
                   std::string(index_mode_name(c->options.index_mode)) +
                   (negative ? ", negative" : ", no negative") + ", k " + std::to_string(k);
}

std::uint64_t base_seed() {
  if (const char* s = std::getenv("MULTIGATHER_TEST_SEED")) return std::strtoull(s, nullptr, 10);
  return 20261121;
}

int case_count() {
  if (const char* s = std::getenv("MULTIGATHER_TEST_CASES")) return std::atoi(s);
  return 3000;
}

// Runs body(case, expected status, expected output storage, case number) on each random case,
// or only on the case MULTIGATHER_TEST_SEED names. The case's output storage stays poisoned; the
// reference kernel's result is in the expected storage (same layout).
template <class Body>
void for_each_random_case(Body body) {
  const std::uint64_t seed0 = base_seed();
  const int cases = std::getenv("MULTIGATHER_TEST_SEED") != nullptr ? 1 : case_count();
  for (int i = 0; i < cases; ++i) {
    const std::uint64_t seed = seed0 + static_cast<std::uint64_t>(i);
    std::mt19937_64 rng(seed);
    Case c;
    random_case(rng, &c);
    if (::testing::Test::HasFatalFailure()) return;
    SCOPED_TRACE("replay: MULTIGATHER_TEST_SEED=" + std::to_string(seed) + " (" + c.description + ")");
    std::vector<std::byte> expected_out = c.output.host;
    const Status expected = gather_multiaxis_reference(
        c.input.host_view(), c.indices.host_view(), c.axes,
        MutableTensorView(expected_out.data() + (c.output.host_origin() - c.output.host.data()),
                          c.output.dtype, c.output.shape, c.output.layout.strides),
        c.options);
    body(c, expected, expected_out, i);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

void expect_same_bytes(const std::vector<std::byte>& got, const std::vector<std::byte>& want) {
  ASSERT_EQ(got.size(), want.size());
  const auto mismatch = std::mismatch(got.begin(), got.end(), want.begin());
  ASSERT_TRUE(mismatch.first == got.end())
      << "first differing output byte " << (mismatch.first - got.begin()) << " of " << got.size();
}

// Runs the kernel body on the CPU as the kernel's loops would on a grid of `threads` threads:
// single-unit rows through gather_elements, other rows through gather_item for every lane.
struct RunItemsOnHost {
  const detail::CudaGatherParams* params;
  std::int64_t threads;
  template <int UnitBytes, class Index, class Off>
  void operator()() {
    const auto items = static_cast<Off>(params->items);
    if (params->rows_per_thread > 1) {
      const auto n = static_cast<Off>(threads);
      for (Off thread = 0; thread < n; ++thread) {
        for (Off first = thread; first < items; first += n * detail::kUnitsPerThread) {
          detail::gather_elements<UnitBytes, Index, Off>(*params, first, n);
        }
      }
      return;
    }
    const Off group = Off{1} << params->group_shift;
    for (Off item = 0; item < items; ++item) {
      for (Off lane = 0; lane < group; ++lane) {
        detail::gather_item<UnitBytes, Index, Off>(*params, item, lane);
      }
    }
  }
};

// The launch parameters of case `c` writing into `out_view` (host storage), as the CUDA API
// derives them; false when the output is empty (nothing is launched).
bool host_params_for(Case& c, const MutableTensorView& out_view, detail::CudaGatherParams* params) {
  detail::ValidatedCall call;
  const Status valid = detail::validate_call(c.input.host_view(), c.indices.host_view(), c.axes,
                                             out_view, c.options, &call);
  EXPECT_TRUE(valid.ok()) << valid.message();
  if (!valid.ok() || call.shape.output_numel == 0) return false;
  detail::GatherPlan plan;
  detail::make_plan(c.input.host_view(), c.indices.host_view(), out_view, call, c.options, &plan);
  detail::make_cuda_params(plan, params);
  return true;
}

// Runs `run` (a kernel-variant visitor over `*params`) on the host into a poisoned copy of the
// case's output, then checks the error flag against the reference status and, on success, the
// bytes (written ones and untouched poison). Returns whether the reference failed.
template <class MakeRun>
bool run_case_on_host(Case& c, const Status& expected, const std::vector<std::byte>& want, int i,
                      detail::CudaGatherParams* params, MakeRun make_run) {
  std::vector<std::byte> kernel_out = c.output.host;  // poisoned
  const MutableTensorView out_view(
      kernel_out.data() + (c.output.host_origin() - c.output.host.data()), c.output.dtype,
      c.output.shape, c.output.layout.strides);
  if (!host_params_for(c, out_view, params)) return false;
  if (i % 2 == 1) params->offsets32 = false;  // the 64-bit variant must agree too
  std::uint32_t flag = 0;
  params->error_flag = &flag;
  auto run = make_run(*params);
  EXPECT_TRUE(detail::visit_kernel_variant(*params, run));
  EXPECT_EQ(flag != 0, !expected.ok()) << expected.message();
  if (expected.ok()) expect_same_bytes(kernel_out, want);
  return !expected.ok();
}

TEST(CudaKernelOnHost, RandomPlansMatchTheReference) {
  // The device code path minus the launch: planner + kernel body, executed on the host, in both
  // the 32-bit and the 64-bit offset variants. Runs without a GPU.
  int flagged = 0, rows_split = 0, wide_units = 0;
  for_each_random_case([&](Case& c, const Status& expected, const std::vector<std::byte>& want,
                           int i) {
    detail::CudaGatherParams params;
    flagged += run_case_on_host(c, expected, want, i, &params, [&](const auto& p) {
      return RunItemsOnHost{&p, 1 + i % 7};  // grids of 1..7 threads: every stride pattern
    });
    rows_split += params.chunks_per_row > 1;
    wide_units += params.unit_bytes == 16;
  });
  if (std::getenv("MULTIGATHER_TEST_SEED") == nullptr) {  // every path the generator aims at
    EXPECT_GT(flagged, 0);
    EXPECT_GT(rows_split, 0);
    EXPECT_GT(wide_units, 0);
  }
}

// ---- The launched grid, emulated on the host ----------------------------------------------
//
// gather_kernel.cu launches launch_blocks(params, multiprocessors) blocks of kThreadsPerBlock
// threads, each running gather_thread(params, thread, threads). RunGridOnHost runs that very
// function for every thread of the same grid, one after the other: the thread -> (item, lane)
// mapping, the grid-stride loops and the grid size are the kernel's own code. Small fake
// multiprocessor counts (and caps of 1-2 blocks per multiprocessor) make the grid smaller than
// the work, so the loops go around.

struct RunGridOnHost {
  const detail::CudaGatherParams* params;
  std::int64_t blocks;
  template <int UnitBytes, class Index, class Off>
  void operator()() {
    const auto threads = static_cast<Off>(blocks * detail::kThreadsPerBlock);
    for (Off thread = 0; thread < threads; ++thread) {
      detail::gather_thread<UnitBytes, Index, Off>(*params, thread, threads);
    }
  }
};

// Whether the kernel's loops take more than one pass on a grid of `blocks` blocks.
bool grid_strides(const detail::CudaGatherParams& p, std::int64_t blocks) {
  const std::int64_t needed = ((p.items + p.rows_per_thread - 1) / p.rows_per_thread)
                              << p.group_shift;
  return needed > blocks * detail::kThreadsPerBlock;
}

TEST(CudaLaunchParams, LaunchBlocksIsOneGroupPerItemUpToTheCap) {
  const auto blocks_for = [](const char* what, int multiprocessors, int per_multiprocessor) {
    for (const LaunchRow& row : kLaunchRows) {
      if (std::string(row.what) != what) continue;
      return detail::launch_blocks(params_for_row(row), multiprocessors, per_multiprocessor);
    }
    ADD_FAILURE() << "no launch row " << what;
    return std::int64_t{0};
  };
  constexpr int kCap = detail::kMaxBlocksPerMultiprocessor;
  // 8192 rows x a warp each = 262144 threads = 1024 blocks: under 132 x 64, over 1 x 64.
  EXPECT_EQ(blocks_for("embedding", 132, kCap), 1024);
  EXPECT_EQ(blocks_for("embedding", 1, kCap), 64);
  EXPECT_EQ(blocks_for("embedding", 3, 2), 6);
  EXPECT_EQ(blocks_for("embedding", 0, kCap), 64);  // no count: one multiprocessor
  EXPECT_EQ(blocks_for("embedding", 2, 0), 2);      // no cap: one block each
  // 4096 x 256 single-element rows, 4 per thread: 262144 threads.
  EXPECT_EQ(blocks_for("take_along_axis", 132, kCap), 1024);
  // 300 rows of one unit, 4 per thread: 75 threads, one block.
  EXPECT_EQ(blocks_for("pairs", 132, kCap), 1);
  // 3 rows x 16 items x 256 threads.
  EXPECT_EQ(blocks_for("long rows", 132, kCap), 48);
  EXPECT_EQ(blocks_for("long rows", 1, 1), 1);
}

TEST(CudaKernelOnHost, LaunchedGridMatchesTheReference) {
  // Every random case on two grids: the launched one for 1-3 fake multiprocessors, and the one
  // for 1-2 multiprocessors capped at 1-2 blocks each (256-1024 threads), which the larger
  // cases outgrow, so the grid-stride loops run with every group size.
  int strided = 0, element_strided = 0, split_strided = 0;
  for_each_random_case([&](Case& c, const Status& expected, const std::vector<std::byte>& want,
                           int i) {
    const int multiprocessors = 1 + i % 3;
    for (const int per_multiprocessor : {detail::kMaxBlocksPerMultiprocessor, 1 + i % 2}) {
      SCOPED_TRACE("grid of " + std::to_string(multiprocessors) + " multiprocessors x at most " +
                   std::to_string(per_multiprocessor) + " blocks");
      detail::CudaGatherParams params;
      std::int64_t blocks = 0;
      run_case_on_host(c, expected, want, i, &params, [&](const auto& p) {
        blocks = detail::launch_blocks(p, multiprocessors, per_multiprocessor);
        return RunGridOnHost{&p, blocks};
      });
      if (::testing::Test::HasFailure()) return;
      if (blocks > 0 && grid_strides(params, blocks)) {
        ++strided;
        element_strided += params.rows_per_thread > 1;
        split_strided += params.chunks_per_row > 1;
      }
    }
  });
  if (std::getenv("MULTIGATHER_TEST_SEED") == nullptr) {
    EXPECT_GT(strided, 50);
    EXPECT_GT(element_strided, 0);
    EXPECT_GT(split_strided, 0);
  }
}

// A host buffer of `n` values of T: v(0), v(1), ...
template <class T, class F>
std::vector<T> values(std::int64_t n, F v) {
  std::vector<T> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = v(i);
  return out;
}

TEST(CudaKernelOnHost, LargePlansStrideOverTheLaunchedGridOfOneMultiprocessor) {
  // The real cap (64 blocks per multiprocessor) on one fake multiprocessor: 16384 threads,
  // fewer than these plans need, so every path takes several grid-stride passes.
  struct Large {
    const char* what;
    Dims input_shape;
    DType dtype;
    Dims indices_shape;
    DType index_dtype;
    std::int64_t axis;
    IndexMode mode;
  };
  const Large cases[] = {
      // flat take, 4 single-element rows per thread: 100000 rows > 4 x 16384.
      {"flat take, clamp", {50}, DType::kFloat32, {100000}, DType::kInt32, 0, IndexMode::kClamp},
      // 32-byte rows of 2-4 units (16- or 8-byte aligned storage), one thread per row: 40000
      // items > 16384 threads.
      {"embedding rows, wrap", {64, 16}, DType::kUInt16, {40000, 1}, DType::kInt64, 0,
       IndexMode::kWrap},
      // rows of 8192 float64 = 4096 units: groups of 256 threads, 4 items per row, 150 rows:
      // 600 items x 256 threads > 16384.
      {"split rows, fill", {7, 8192}, DType::kFloat64, {150, 1}, DType::kInt16, 0,
       IndexMode::kFill},
  };
  for (const Large& l : cases) {
    SCOPED_TRACE(l.what);
    std::int64_t in_numel = 0, ix_numel = 0;
    ASSERT_TRUE(element_count(l.input_shape, &in_numel));
    ASSERT_TRUE(element_count(l.indices_shape, &ix_numel));
    const std::int64_t axis_size = l.input_shape[static_cast<int>(l.axis)];
    const auto input = values<std::byte>(in_numel * static_cast<std::int64_t>(element_size(l.dtype)),
                                         [](std::int64_t i) { return std::byte(i * 7 + 1); });
    std::vector<std::byte> indices(static_cast<std::size_t>(ix_numel) * element_size(l.index_dtype));
    std::mt19937_64 rng(static_cast<std::uint64_t>(ix_numel));
    for (std::int64_t i = 0; i < ix_numel; ++i) {  // in range, negative, and out of range
      const auto v = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(4 * axis_size)) -
                     2 * axis_size;
      store_index(indices.data() + i * static_cast<std::int64_t>(element_size(l.index_dtype)),
                  l.index_dtype, v);
    }
    GatherOptions options;
    options.index_mode = l.mode;
    options.fill_value = Scalar::from_int(3);
    const std::int64_t axes[] = {l.axis};
    const TensorView in_view(input.data(), l.dtype, l.input_shape);
    const TensorView ix_view(indices.data(), l.index_dtype, l.indices_shape);
    const GatherShape shape = output_shape(l.input_shape, l.indices_shape, axes);
    std::int64_t out_numel = 0;
    ASSERT_TRUE(element_count(shape.output_shape, &out_numel));
    const std::size_t out_bytes = static_cast<std::size_t>(out_numel) * element_size(l.dtype);
    std::vector<std::byte> want(out_bytes, std::byte{0xEE}), got(out_bytes, std::byte{0xEE});
    const Status expected = gather_multiaxis_reference(
        in_view, ix_view, axes, MutableTensorView(want.data(), l.dtype, shape.output_shape), options);
    ASSERT_TRUE(expected.ok()) << expected.message();
    for (const bool offsets32 : {true, false}) {
      const MutableTensorView out_view(got.data(), l.dtype, shape.output_shape);
      detail::ValidatedCall call;
      ASSERT_TRUE(detail::validate_call(in_view, ix_view, axes, out_view, options, &call).ok());
      detail::GatherPlan plan;
      detail::make_plan(in_view, ix_view, out_view, call, options, &plan);
      detail::CudaGatherParams params;
      detail::make_cuda_params(plan, &params);
      ASSERT_TRUE(params.offsets32);
      params.offsets32 = offsets32;
      const std::int64_t blocks = detail::launch_blocks(params, 1);
      ASSERT_EQ(blocks, detail::kMaxBlocksPerMultiprocessor);
      ASSERT_TRUE(grid_strides(params, blocks));
      std::fill(got.begin(), got.end(), std::byte{0xEE});
      RunGridOnHost run{&params, blocks};
      ASSERT_TRUE(detail::visit_kernel_variant(params, run));
      expect_same_bytes(got, want);
    }
  }
}

TEST(CudaGather, RandomPlansMatchTheReference) {
  SKIP_WITHOUT_DEVICE();
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreate(&stream), "cudaStreamCreate");
  int bad_index_cases = 0;
  for_each_random_case([&](Case& c, const Status& expected, const std::vector<std::byte>& want,
                           int i) {
    upload(&c.input);
    upload(&c.indices);
    upload(&c.output);
    if (::testing::Test::HasFatalFailure()) return;
    const MutableTensorView device_out(c.output.device_origin(), c.output.dtype, c.output.shape,
                                       c.output.layout.strides);
    // Alternate the synchronous call on a created stream and the enqueue form with a flag.
    Status actual;
    if (i % 2 == 0) {
      actual = gather_multiaxis_cuda_into(c.input.device_view(), c.indices.device_view(), c.axes,
                                          device_out, c.options, stream);
    } else {
      DeviceBuffer flag(sizeof(std::uint32_t));
      check_cuda(cudaMemset(flag.get(), 0, sizeof(std::uint32_t)), "memset flag");
      actual = gather_multiaxis_cuda_enqueue(
          c.input.device_view(), c.indices.device_view(), c.axes, device_out, c.options, nullptr,
          reinterpret_cast<std::uint32_t*>(flag.get()));
      check_cuda(cudaDeviceSynchronize(), "kernel");
      std::uint32_t raised = 0;
      check_cuda(cudaMemcpy(&raised, flag.get(), 4, cudaMemcpyDeviceToHost), "flag");
      if (actual.ok() && raised != 0) {
        // The enqueue form reports a bad index through the flag; the sync form gives the message.
        actual = gather_multiaxis_cuda_into(c.input.device_view(), c.indices.device_view(),
                                            c.axes, device_out, c.options, stream);
        EXPECT_FALSE(actual.ok()) << "flag raised but the synchronous call succeeded";
      }
    }
    ASSERT_EQ(actual.code(), expected.code()) << actual.message() << " vs " << expected.message();
    ASSERT_EQ(actual.message(), expected.message());
    if (!expected.ok()) {
      ++bad_index_cases;
      return;  // the output is unspecified after an error
    }
    check_cuda(cudaStreamSynchronize(stream), "stream");
    expect_same_bytes(c.output.device->download(), want);
  });
  if (std::getenv("MULTIGATHER_TEST_SEED") == nullptr) {
    EXPECT_GT(bad_index_cases, 0) << "the generator produced no error-mode failures";
  }
  cudaStreamDestroy(stream);
}

TEST(CudaGather, OutOfRangeMessageIsTheCoreMessage) {
  SKIP_WITHOUT_DEVICE();
  const std::vector<float> host_in = {10, 11, 12, 13, 14};
  const std::vector<std::int64_t> host_ix = {0, 7, 1};
  DeviceBuffer in(sizeof(float) * 5), ix(sizeof(std::int64_t) * 3), out(sizeof(float) * 3);
  check_cuda(cudaMemcpy(in.get(), host_in.data(), 20, cudaMemcpyHostToDevice), "in");
  check_cuda(cudaMemcpy(ix.get(), host_ix.data(), 24, cudaMemcpyHostToDevice), "ix");
  const std::int64_t axes[] = {0};
  const Status s = gather_multiaxis_cuda_into(TensorView(in.get(), DType::kFloat32, {5}),
                                              TensorView(ix.get(), DType::kInt64, {3}), axes,
                                              MutableTensorView(out.get(), DType::kFloat32, {3}));
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(),
            "indices[1] = 7 is out of range for axis 0 of size 5 (valid range [-5, 5))");
}

TEST(CudaGather, ClampWrapAndFillOnOneRow) {
  SKIP_WITHOUT_DEVICE();
  // input [5] = 10..14; indices {-1, 5, -7, 18446744073709551615 (uint64 max)} worked by hand:
  //   clamp (negative on): -1 -> 4, 5 -> 4, -7 -> -2 -> 0, max -> 4
  //   wrap:                 -1 -> 4, 5 -> 0, -7 -> 3        (int64 indices)
  //   fill 99:              -1 -> 4, 5 -> fill, -7 -> fill
  const std::vector<float> host_in = {10, 11, 12, 13, 14};
  DeviceBuffer in(20), ix(24), out(12);
  check_cuda(cudaMemcpy(in.get(), host_in.data(), 20, cudaMemcpyHostToDevice), "in");
  const std::int64_t axes[] = {0};
  const auto run = [&](std::vector<std::int64_t> idx, IndexMode mode) {
    check_cuda(cudaMemcpy(ix.get(), idx.data(), 24, cudaMemcpyHostToDevice), "ix");
    GatherOptions o;
    o.index_mode = mode;
    o.fill_value = Scalar::from_int(99);
    const Status s = gather_multiaxis_cuda_into(TensorView(in.get(), DType::kFloat32, {5}),
                                                TensorView(ix.get(), DType::kInt64, {3}), axes,
                                                MutableTensorView(out.get(), DType::kFloat32, {3}), o);
    EXPECT_TRUE(s.ok()) << s.message();
    std::vector<float> r(3);
    check_cuda(cudaMemcpy(r.data(), out.get(), 12, cudaMemcpyDeviceToHost), "out");
    return r;
  };
  EXPECT_EQ(run({-1, 5, -7}, IndexMode::kClamp), (std::vector<float>{14, 14, 10}));
  EXPECT_EQ(run({-1, 5, -7}, IndexMode::kWrap), (std::vector<float>{14, 10, 13}));
  EXPECT_EQ(run({-1, 5, -7}, IndexMode::kFill), (std::vector<float>{14, 99, 99}));
  // uint64 max is far above INT64_MAX: clamp gives the last element, wrap its value mod 5
  // (18446744073709551615 mod 5 = 0), never a negative index.
  const std::vector<std::uint64_t> huge = {18446744073709551615ull, 2, 9223372036854775808ull};
  check_cuda(cudaMemcpy(ix.get(), huge.data(), 24, cudaMemcpyHostToDevice), "ix");
  for (const auto& [mode, want] : {std::pair{IndexMode::kClamp, std::vector<float>{14, 12, 14}},
                                   std::pair{IndexMode::kWrap, std::vector<float>{10, 12, 13}}}) {
    GatherOptions o;
    o.index_mode = mode;
    const Status s = gather_multiaxis_cuda_into(TensorView(in.get(), DType::kFloat32, {5}),
                                                TensorView(ix.get(), DType::kUInt64, {3}), axes,
                                                MutableTensorView(out.get(), DType::kFloat32, {3}), o);
    ASSERT_TRUE(s.ok()) << s.message();
    std::vector<float> r(3);
    check_cuda(cudaMemcpy(r.data(), out.get(), 12, cudaMemcpyDeviceToHost), "out");
    EXPECT_EQ(r, want) << index_mode_name(mode);
  }
}

TEST(CudaGather, HostPointerIsRejectedByName) {
  SKIP_WITHOUT_DEVICE();
  std::vector<float> host_in(6, 1.0f);
  DeviceBuffer ix(16), out(24);
  const std::int64_t axes[] = {0};
  const Status s = gather_multiaxis_cuda_into(
      TensorView(host_in.data(), DType::kFloat32, {2, 3}), TensorView(ix.get(), DType::kInt64, {2, 1}),
      axes, MutableTensorView(out.get(), DType::kFloat32, {2, 3}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "input.data is host memory; the CUDA backend needs device memory "
                         "(cudaMalloc, managed, or mapped pinned memory)");
}

TEST(CudaGather, InputBeyond32BitOffsets) {
  SKIP_WITHOUT_DEVICE();
  // A uint8 input of 2^31 + 64 bytes forces the 64-bit kernel; indices reach its last bytes.
  const std::int64_t n = (std::int64_t{1} << 31) + 64;
  std::size_t free_bytes = 0, total = 0;
  check_cuda(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
  if (free_bytes < static_cast<std::size_t>(n) + (std::size_t{1} << 30)) {
    GTEST_SKIP() << "needs 3 GiB of free device memory";
  }
  DeviceBuffer in(static_cast<std::size_t>(n)), ix(8 * 4), out(4);
  const std::vector<std::uint8_t> tail = {1, 2, 3, 4, 5, 6, 7, 8};
  check_cuda(cudaMemset(in.get(), 0, static_cast<std::size_t>(n)), "memset");
  check_cuda(cudaMemcpy(in.get() + n - 8, tail.data(), 8, cudaMemcpyHostToDevice), "tail");
  const std::vector<std::int64_t> idx = {n - 1, -8, 0, n - 5};  // -8 -> n - 8
  check_cuda(cudaMemcpy(ix.get(), idx.data(), 32, cudaMemcpyHostToDevice), "ix");
  const std::int64_t axes[] = {0};
  const Status s = gather_multiaxis_cuda_into(TensorView(in.get(), DType::kUInt8, {n}),
                                              TensorView(ix.get(), DType::kInt64, {4}), axes,
                                              MutableTensorView(out.get(), DType::kUInt8, {4}));
  ASSERT_TRUE(s.ok()) << s.message();
  std::vector<std::uint8_t> r(4);
  check_cuda(cudaMemcpy(r.data(), out.get(), 4, cudaMemcpyDeviceToHost), "out");
  EXPECT_EQ(r, (std::vector<std::uint8_t>{8, 1, 0, 4}));
}

}  // namespace
}  // namespace multigather

#endif  // MULTIGATHER_HAVE_CUDA (with MULTIGATHER_CUDA=OFF this file is empty)
