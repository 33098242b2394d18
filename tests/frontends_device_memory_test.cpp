// Lowerings never read the operands' memory on the host when the operands live on a device
// (Device::kCUDA): every registry op is lowered over memory the host cannot touch (a PROT_NONE
// mapping stands for device memory, so no GPU is needed); a lowering that would have to read or
// copy the data must refuse with an InvalidArgument that names the CUDA device, and any host read
// is a segmentation fault the death test reports with the op's name.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "multigather/lowering.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

using testing::explain_cases;
using testing::ExplainCase;
using testing::scatter_explain_cases;
using testing::ScatterExplainCase;

/// A mapping the process may not read or write: stands for a device buffer.
class UnreadableMemory {
 public:
  UnreadableMemory() : data_(mmap(nullptr, kBytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) {}
  ~UnreadableMemory() {
    if (data_ != MAP_FAILED) munmap(data_, kBytes);
  }
  bool ok() const { return data_ != MAP_FAILED; }
  void* data() const { return data_; }

 private:
  static constexpr std::size_t kBytes = std::size_t{1} << 20;
  void* data_;
};

// Lowers `op` over unreadable operands on kCUDA; exits 0 when the lowering returned at all and
// any refusal names the device, 1 otherwise (message on stderr). Run in a death test's child.
[[noreturn]] void lower_on_device_and_exit(const char* op, const Dims& x, const Dims& i, const Dims* u,
                                           const Attributes& a, void* memory) {
  std::fprintf(stderr, "lowering %s\n", op);
  const DType index_dtype = std::string(op).rfind("tosa.", 0) == 0 ? DType::kInt32 : DType::kInt64;
  const TensorView input(memory, DType::kFloat32, x), indices(memory, index_dtype, i);
  Lowering l;
  const Status s = u == nullptr
                       ? lower_op(op, input, indices, a, &l, Device::kCUDA)
                       : lower_op(op, input, indices, TensorView(memory, DType::kFloat32, *u), a, &l, Device::kCUDA);
  if (!s.ok() && s.message().find("CUDA") == std::string::npos) {
    std::fprintf(stderr, "%s: refused without naming the device: %s\n", op, s.message().c_str());
    std::exit(1);
  }
  std::exit(0);
}

TEST(LoweringOnDeviceMemory, TorchIndexAddWithAlphaDescribesTheScaleWithoutReadingSource) {
  // torch.index_add with alpha != 1: the lowering describes the scale (the engines run it, on
  // either device) and reads nothing of source: over unreadable memory it succeeds, its updates
  // a view of source.
  UnreadableMemory memory;
  ASSERT_TRUE(memory.ok());
  const TensorView x(memory.data(), DType::kFloat32, {4, 3}), index(memory.data(), DType::kInt64, {2}),
      source(memory.data(), DType::kFloat32, {2, 3});
  Lowering l;
  const Status s = lower_op("torch.index_add", x, index, source, {{"dim", "0"}, {"alpha", "2"}}, &l, Device::kCUDA);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(l.updates_step.kind, UpdatesStep::Kind::kScale);
  EXPECT_EQ(l.updates.data, memory.data());
  EXPECT_EQ(l.owned_updates, nullptr);
  EXPECT_TRUE(lower_op("torch.index_add", x, index, source, {{"dim", "0"}}, &l, Device::kCUDA).ok());
}

TEST(LoweringOnDeviceMemory, TfSortedSegmentsTakeTheLastIdReadBackAsNumSegments) {
  // tf.math.segment_* on device ids: the caller gives num_segments = segment_ids[-1] + 1 (read
  // back, as TensorFlow's GPU kernel copies the last id to the host); the lowering reads nothing
  // and drops ids outside [0, num_segments) as TensorFlow's GPU kernel (unchecked: safe).
  UnreadableMemory memory;
  ASSERT_TRUE(memory.ok());
  const TensorView data(memory.data(), DType::kFloat32, {6, 3}), ids(memory.data(), DType::kInt64, {6});
  Lowering l;
  const Status s = lower_op("tf.math.segment_max", data, ids, {{"num_segments", "4"}}, &l, Device::kCUDA);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(l.output_shape, (Dims{4, 3}));
  const Status refused = lower_op("tf.math.segment_max", data, ids, Attributes{}, &l, Device::kCUDA);
  EXPECT_EQ(refused.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(refused.message().find("give num_segments = segment_ids[-1] + 1, read back from the device"),
            std::string::npos) << refused.message();
  const Status empty_rows = lower_op("tf.math.segment_max", data, ids, {{"num_segments", "0"}}, &l, Device::kCUDA);
  EXPECT_EQ(empty_rows.message(), "tf.math.segment_max: segment ids must be >= 0 (num_segments = 0: segment_ids[-1] < 0)");

  // The described lowering run by the CPU engine (host memory standing for the device's): sorted
  // ids give the host lowering's bytes in every reduction (an empty segment holds 0, max too);
  // ids past num_segments drop their rows; unsorted ids combine into their segments.
  const Tensor values = testing::f32({6, 3}, {1, -2, 3, 4, 5, -6, 7, 8, 9, -1, -2, -3, 2, 2, 2, 0.5, -7, 1});
  const Tensor sorted = testing::i64({6}, {0, 0, 2, 3, 3, 3});
  ExecutionContext on_cpu;
  on_cpu.device = Device::kCPU;
  for (const char* op : {"tf.math.segment_sum", "tf.math.segment_prod", "tf.math.segment_max", "tf.math.segment_min",
                         "tf.math.segment_mean"}) {
    SCOPED_TRACE(op);
    const Tensor want = run_op(op, values.view(), sorted.view(), Attributes{});
    Lowering described;
    ASSERT_TRUE(lower_op(op, values.view(), sorted.view(), {{"num_segments", "4"}}, &described, Device::kCUDA).ok());
    EXPECT_FALSE(described.reads_index_values);
    const Tensor got = execute(described, on_cpu);
    EXPECT_EQ(testing::values_f32(got), testing::values_f32(want));
    // host ids: num_segments must be segment_ids[-1] + 1
    Lowering host;
    EXPECT_TRUE(lower_op(op, values.view(), sorted.view(), {{"num_segments", "4"}}, &host).ok());
    EXPECT_EQ(lower_op(op, values.view(), sorted.view(), {{"num_segments", "5"}}, &host).message(),
              std::string(op) + ": num_segments = 5 must be segment_ids[-1] + 1 = 4");
  }
  const Tensor past = testing::i64({6}, {0, 0, 2, 3, 9, -1}), unsorted = testing::i64({6}, {2, 0, 2, 1, 0, 3});
  Lowering l_past, l_unsorted;
  ASSERT_TRUE(lower_op("tf.math.segment_sum", values.view(), past.view(), {{"num_segments", "4"}}, &l_past, Device::kCUDA).ok());
  EXPECT_EQ(testing::values_f32(execute(l_past, on_cpu)),
            testing::as_f32({5, 3, -3, 0, 0, 0, 7, 8, 9, -1, -2, -3}));
  ASSERT_TRUE(lower_op("tf.math.segment_sum", values.view(), unsorted.view(), {{"num_segments", "4"}}, &l_unsorted,
                       Device::kCUDA).ok());
  EXPECT_EQ(testing::values_f32(execute(l_unsorted, on_cpu)),
            testing::as_f32({6, 7, -4, -1, -2, -3, 8, 6, 12, 0.5, -7, 1}));
}

TEST(LoweringOnDeviceMemory, NoRegistryOpReadsItsOperandsOnTheHost) {
  UnreadableMemory memory;
  ASSERT_TRUE(memory.ok());
  for (const ExplainCase& c : explain_cases()) {
    EXPECT_EXIT(lower_on_device_and_exit(c.op, c.x, c.i, nullptr, c.a, memory.data()),
                ::testing::ExitedWithCode(0), "")
        << c.op;
  }
  // Segment ops: lowered for the CUDA engine, or refused where the lowering reads index values.
  for (const ExplainCase& c : testing::segment_explain_cases()) {
    EXPECT_EXIT(lower_on_device_and_exit(c.op, c.x, c.i, nullptr, c.a, memory.data()),
                ::testing::ExitedWithCode(0), "")
        << c.op;
  }
  // Segment ops whose output size would be read from the ids (num_segments / dim_size None).
  const std::vector<ExplainCase> sized_by_ids = {{"jax.ops.segment_max", {5, 2}, {5}, {}},
                                                 {"torch_scatter.scatter", {5, 2}, {5}, {{"dim", "0"}}},
                                                 {"torch_scatter.segment_coo", {5, 2}, {5}, {}}};
  for (const ExplainCase& c : sized_by_ids) {
    EXPECT_EXIT(lower_on_device_and_exit(c.op, c.x, c.i, nullptr, c.a, memory.data()),
                ::testing::ExitedWithCode(0), "")
        << c.op;
  }
  for (const ScatterExplainCase& c : scatter_explain_cases()) {
    EXPECT_EXIT(lower_on_device_and_exit(c.op, c.x, c.i, &c.u, c.a, memory.data()),
                ::testing::ExitedWithCode(0), "")
        << c.op;
  }
}

}  // namespace
}  // namespace multigather
