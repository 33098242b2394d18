// The one pipeline, lower_op -> Lowering -> execute(Lowering, output, ExecutionContext)
// (multigather/lowering.hpp, multigather/execute.hpp; src/api/execute.cpp), tested through its
// public surface. Every value is checked against an independent oracle: a loop that spells out
// the framework's formula, or the reference kernel (gather_multiaxis_reference).
//
//   ExecuteStrides     outputs of any strides: a reshape the strides can express (no copy) and
//                      one they cannot (a staging buffer), both equal to the contiguous result
//   ExecuteOverlap     the overlap rule (output vs input, output vs indices, stride 0,
//                      interleaved strides) through gather_multiaxis_into and execute: the exact
//                      InvalidArgument message, and not one byte written
//   PipelineExtents    required_span / byte_range / views_overlap / has_self_overlap by hand
//   PipelineAttributes typed attributes lower exactly as texts; type errors; the bool spellings
//   ExecuteContext     num_threads, execute_alloc with and without an allocator, Device::kCUDA
//   PipelineInferOnce  a Lowering's shape is infer_shape of its own views, for every op
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "multigather/multigather.hpp"
#include "op_test_support.hpp"
#if MULTIGATHER_HAVE_CUDA
#include "multigather/cuda.hpp"
#endif

namespace multigather {
namespace {

using testing::explain_cases;

constexpr float kSentinel = -777.0f;

// `n` floats 0, 1, 2, ... scaled so that every element is distinguishable (v = 10 * i + 0.5).
std::vector<float> distinct_floats(std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = 10.0f * static_cast<float>(i) + 0.5f;
  return v;
}

// The element at position `pos` of a float view (any strides).
float at(const TensorView& v, std::initializer_list<std::int64_t> pos) {
  std::int64_t off = 0;
  int d = 0;
  for (std::int64_t p : pos) off += p * v.strides[d++];
  return static_cast<const float*>(v.data)[off];
}

Lowering lower(const std::string& op, const TensorView& input, const TensorView& indices,
               const Attributes& attrs) {
  Lowering l;
  const Status s = lower_op(op, input, indices, attrs, &l);
  EXPECT_TRUE(s.ok()) << op << ": " << s.message();
  return l;
}

// The result of `l` written into a new C-contiguous buffer (the path every other result is
// compared with).
std::vector<float> contiguous_result(const Lowering& l) {
  std::int64_t n = 0;
  element_count(l.output_shape, &n);
  std::vector<float> out(static_cast<std::size_t>(n), kSentinel);
  const Status s = execute(l, MutableTensorView(out.data(), DType::kFloat32, l.output_shape));
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// ---- ExecuteStrides -------------------------------------------------------------------------

// onnx.Gather, data [5,3], indices [4], axis 0: output [4,3], out[i, j] = data[indices[i], j].
struct OnnxGatherCase {
  std::vector<float> data = distinct_floats(15);
  std::vector<std::int64_t> idx = {4, 0, -1, 2};
  TensorView data_view() const { return TensorView(data.data(), DType::kFloat32, {5, 3}); }
  TensorView idx_view() const { return TensorView(idx.data(), DType::kInt64, {4}); }
  float expected(int i, int j) const {
    const std::int64_t r = idx[static_cast<std::size_t>(i)] < 0 ? idx[static_cast<std::size_t>(i)] + 5
                                                                 : idx[static_cast<std::size_t>(i)];
    return data[static_cast<std::size_t>(r * 3 + j)];
  }
};

TEST(ExecuteStrides, ContiguousResultMatchesTheOnnxFormula) {
  const OnnxGatherCase c;
  const Lowering l = lower("onnx.Gather", c.data_view(), c.idx_view(), Attributes().set_int("axis", 0));
  ASSERT_EQ(to_string(l.output_shape), "[4,3]");
  const std::vector<float> out = contiguous_result(l);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) EXPECT_EQ(out[static_cast<std::size_t>(i * 3 + j)], c.expected(i, j)) << i << "," << j;
  }
}

TEST(ExecuteStrides, TransposedOutputTheReshapeCanExpress) {
  // The core output [1,4,3] is a pure reshape of the output [4,3] (unit dimension inserted), so
  // a transposed output (strides [1,4] into a [3,4] buffer) is addressed in place, no staging.
  const OnnxGatherCase c;
  const Lowering l = lower("onnx.Gather", c.data_view(), c.idx_view(), Attributes().set_int("axis", 0));
  ASSERT_TRUE(l.core_output_strides == contiguous_strides(l.core_output_shape)) << "not a pure reshape";
  ASSERT_EQ(to_string(l.core_output_shape), "[1,4,3]");
  std::vector<float> buffer(12, kSentinel);
  const MutableTensorView out(buffer.data(), DType::kFloat32, {4, 3}, {1, 4});
  ASSERT_TRUE(execute(l, out).ok());
  const std::vector<float> reference = contiguous_result(l);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) {
      EXPECT_EQ(at(out, {i, j}), c.expected(i, j)) << i << "," << j;
      EXPECT_EQ(at(out, {i, j}), reference[static_cast<std::size_t>(i * 3 + j)]);
    }
  }
}

TEST(ExecuteStrides, SlicedAndNegativeStrideOutputs) {
  // Every other row of an [8,3] buffer, and the rows and columns reversed (negative strides):
  // untouched elements keep the sentinel.
  const OnnxGatherCase c;
  const Lowering l = lower("onnx.Gather", c.data_view(), c.idx_view(), Attributes().set_int("axis", 0));
  {
    std::vector<float> buffer(24, kSentinel);
    const MutableTensorView out(buffer.data(), DType::kFloat32, {4, 3}, {6, 1});
    ASSERT_TRUE(execute(l, out).ok());
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) {
        EXPECT_EQ(buffer[static_cast<std::size_t>(i * 6 + j)], c.expected(i, j));
        EXPECT_EQ(buffer[static_cast<std::size_t>(i * 6 + 3 + j)], kSentinel);
      }
    }
  }
  {
    std::vector<float> buffer(12, kSentinel);
    const MutableTensorView out(buffer.data() + 11, DType::kFloat32, {4, 3}, {-3, -1});
    ASSERT_TRUE(execute(l, out).ok());
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(buffer[static_cast<std::size_t>(11 - 3 * i - j)], c.expected(i, j));
    }
  }
}

TEST(ExecuteStrides, OutputWithUnitAndEmptyDims) {
  // onnx.Gather with 0-D indices drops the axis: data [5,3], indices 2 -> [3]; a strided 1-D
  // output. Then an empty indices tensor: nothing is written, whatever the strides.
  const OnnxGatherCase c;
  const std::int64_t scalar = 2;
  const Lowering l = lower("onnx.Gather", c.data_view(), TensorView(&scalar, DType::kInt64, {}),
                           Attributes().set_int("axis", 0));
  ASSERT_EQ(to_string(l.output_shape), "[3]");
  std::vector<float> buffer(9, kSentinel);
  ASSERT_TRUE(execute(l, MutableTensorView(buffer.data(), DType::kFloat32, {3}, {3})).ok());
  for (int j = 0; j < 3; ++j) {
    EXPECT_EQ(buffer[static_cast<std::size_t>(3 * j)], c.data[static_cast<std::size_t>(6 + j)]);
    EXPECT_EQ(buffer[static_cast<std::size_t>(3 * j + 1)], kSentinel);
  }

  const Lowering e = lower("onnx.Gather", c.data_view(), TensorView(c.idx.data(), DType::kInt64, {0}),
                           Attributes().set_int("axis", 0));
  ASSERT_EQ(to_string(e.output_shape), "[0,3]");
  float one = kSentinel;
  ASSERT_TRUE(execute(e, MutableTensorView(&one, DType::kFloat32, {0, 3}, {5, 7})).ok());
  EXPECT_EQ(one, kSentinel);
}

// stablehlo.gather with offset_dims=[0]: operand [3,4], start_indices [[2],[0]] (index_vector_dim
// 1), rows of 4 collapsed on dim 0: result[o, b] = operand[start[b], o], shape [4,2]. The core
// output [2,1,4] is written with strides [1,0,2]: a permutation, not a reshape.
struct StablehloCase {
  std::vector<float> operand = distinct_floats(12);
  std::vector<std::int64_t> starts = {2, 0};
  TensorView operand_view() const { return TensorView(operand.data(), DType::kFloat32, {3, 4}); }
  TensorView starts_view() const { return TensorView(starts.data(), DType::kInt64, {2, 1}); }
  Attributes attrs() const {
    return Attributes()
        .set_ints("offset_dims", {0})
        .set_ints("collapsed_slice_dims", {0})
        .set_ints("start_index_map", {0})
        .set_int("index_vector_dim", 1)
        .set_ints("slice_sizes", {1, 4});
  }
  float expected(int o, int b) const {
    return operand[static_cast<std::size_t>(starts[static_cast<std::size_t>(b)] * 4 + o)];
  }
};

TEST(ExecuteStrides, PermutedResultIntoAStridedOutputGoesThroughStaging) {
  const StablehloCase c;
  const Lowering l = lower("stablehlo.gather", c.operand_view(), c.starts_view(), c.attrs());
  ASSERT_EQ(to_string(l.output_shape), "[4,2]");
  ASSERT_EQ(to_string(l.core_output_shape), "[2,1,4]");
  ASSERT_FALSE(l.core_output_strides == contiguous_strides(l.core_output_shape))
      << "expected a permuted core output (the staging path)";
  const std::vector<float> reference = contiguous_result(l);
  for (int o = 0; o < 4; ++o) {
    for (int b = 0; b < 2; ++b) EXPECT_EQ(reference[static_cast<std::size_t>(o * 2 + b)], c.expected(o, b));
  }
  // A transposed output ([2,4] buffer) and a padded one (row stride 3): neither can hold the
  // permuted core output as a view, so the result is staged and then copied.
  for (const Dims& strides : {Dims{1, 4}, Dims{3, 1}, Dims{-1, -4}}) {
    std::vector<float> buffer(12, kSentinel);
    float* base = strides[0] < 0 ? buffer.data() + 7 : buffer.data();
    const MutableTensorView out(base, DType::kFloat32, {4, 2}, strides);
    const Status s = execute(l, out);
    ASSERT_TRUE(s.ok()) << to_string(strides) << ": " << s.message();
    for (int o = 0; o < 4; ++o) {
      for (int b = 0; b < 2; ++b) {
        EXPECT_EQ(at(out, {o, b}), reference[static_cast<std::size_t>(o * 2 + b)]) << to_string(strides);
      }
    }
    if (strides == Dims{3, 1}) {
      for (int o = 0; o < 4; ++o) EXPECT_EQ(buffer[static_cast<std::size_t>(o * 3 + 2)], kSentinel);
    }
  }
}

TEST(ExecuteStrides, StagingStillRejectsABadOutputBeforeWriting) {
  // The staging path validates the caller's view (not only the staging buffer's): a stride 0
  // and an output over the operand are refused, nothing written.
  StablehloCase c;
  const Lowering l = lower("stablehlo.gather", c.operand_view(), c.starts_view(), c.attrs());
  std::vector<float> buffer(8, kSentinel);
  Status s = execute(l, MutableTensorView(buffer.data(), DType::kFloat32, {4, 2}, {0, 1}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "output strides [0,1] with shape [4,2] address one element from several "
                         "positions (a stride 0 or interleaved strides): writes through it would "
                         "race and lose data");
  EXPECT_EQ(buffer, std::vector<float>(8, kSentinel));

  const std::vector<float> before = c.operand;
  s = execute(l, MutableTensorView(c.operand.data(), DType::kFloat32, {4, 2}, {1, 4}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "output overlaps input or indices (gather cannot write into memory it reads)");
  EXPECT_EQ(c.operand, before);
}

TEST(ExecuteStrides, WrongOutputShapeIsNamedWithTheOp) {
  const OnnxGatherCase c;
  const Lowering l = lower("onnx.Gather", c.data_view(), c.idx_view(), Attributes().set_int("axis", 0));
  std::vector<float> buffer(12, kSentinel);
  const Status s = execute(l, MutableTensorView(buffer.data(), DType::kFloat32, {3, 4}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "onnx.Gather: output shape [3,4] does not match the output shape [4,3]");
  EXPECT_EQ(buffer, std::vector<float>(12, kSentinel));
}

// ---- ExecuteOverlap -------------------------------------------------------------------------

const char* const kOverlap = "output overlaps input or indices (gather cannot write into memory it reads)";

std::string self_overlap_message(const Dims& strides, const Dims& shape) {
  return "output strides " + to_string(strides) + " with shape " + to_string(shape) +
         " address one element from several positions (a stride 0 or interleaved strides): "
         "writes through it would race and lose data";
}

// The core call of OnnxGatherCase: input [5,3], indices [4,1] (int64), axes [0] -> [4,3].
struct CoreCase {
  std::vector<double> data = std::vector<double>(15);
  std::vector<std::int64_t> idx = {4, 0, 1, 2};
  const std::int64_t axes[1] = {0};
  CoreCase() {
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = 1.5 + static_cast<double>(i);
  }
  TensorView input() const { return TensorView(data.data(), DType::kFloat64, {5, 3}); }
  TensorView indices() const { return TensorView(idx.data(), DType::kInt64, {4, 1}); }
  Status into(const MutableTensorView& out) const {
    return gather_multiaxis_into(input(), indices(), axes, out);
  }
};

TEST(ExecuteOverlap, CoreRejectsAnOutputOverTheInputAndWritesNothing) {
  CoreCase c;
  const std::vector<double> before = c.data;
  // Rows 1..4 of the input itself, and the input read backwards: both overlap.
  Status s = c.into(MutableTensorView(c.data.data() + 3, DType::kFloat64, {4, 3}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), kOverlap);
  s = c.into(MutableTensorView(c.data.data() + 14, DType::kFloat64, {4, 3}, {-3, -1}));
  EXPECT_EQ(s.message(), kOverlap);
  // Same bytes seen as int64 (element size 8 matches).
  s = c.into(MutableTensorView(c.data.data(), DType::kInt64, {4, 3}));
  EXPECT_EQ(s.message(), kOverlap);
  EXPECT_EQ(c.data, before);
}

TEST(ExecuteOverlap, CoreRejectsAnOutputOverTheIndicesAndWritesNothing) {
  // A [4,3] float64 output whose first row lies on the indices: the indices keep their values.
  CoreCase c;
  std::vector<std::int64_t> storage(16, 0);
  std::memcpy(storage.data() + 12, c.idx.data(), 4 * sizeof(std::int64_t));
  const TensorView indices(storage.data() + 12, DType::kInt64, {4, 1});
  const Status s = gather_multiaxis_into(c.input(), indices, c.axes,
                                         MutableTensorView(storage.data() + 2, DType::kFloat64, {4, 3}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), kOverlap);
  EXPECT_EQ(std::vector<std::int64_t>(storage.begin() + 12, storage.end()), c.idx);
  EXPECT_EQ(std::vector<std::int64_t>(storage.begin(), storage.begin() + 12), std::vector<std::int64_t>(12, 0));
}

TEST(ExecuteOverlap, CoreRejectsSelfOverlappingOutputs) {
  CoreCase c;
  for (const Dims& strides : {Dims{0, 1}, Dims{1, 0}, Dims{1, 1}, Dims{2, 1}, Dims{-1, 1}}) {
    std::vector<double> buffer(32, -1.0);
    const MutableTensorView out(buffer.data() + 8, DType::kFloat64, {4, 3}, strides);
    const Status s = c.into(out);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << to_string(strides);
    EXPECT_EQ(s.message(), self_overlap_message(strides, {4, 3}));
    EXPECT_EQ(buffer, std::vector<double>(32, -1.0)) << to_string(strides);
  }
  // The brief's [2,2] strides [1,1]: input [2,2], indices [2,1] along axis 0.
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<std::int64_t> i = {1, 0};
  std::vector<float> buffer(4, kSentinel);
  const std::int64_t axes[] = {0};
  const Status s = gather_multiaxis_into(TensorView(x.data(), DType::kFloat32, {2, 2}),
                                         TensorView(i.data(), DType::kInt64, {2, 1}), axes,
                                         MutableTensorView(buffer.data(), DType::kFloat32, {2, 2}, {1, 1}));
  EXPECT_EQ(s.message(), self_overlap_message({1, 1}, {2, 2}));
  EXPECT_EQ(buffer, std::vector<float>(4, kSentinel));
}

TEST(ExecuteOverlap, CoreAcceptsStrideZeroOnUnitDimsAndDisjointNeighbours) {
  // A stride 0 on a size-1 dimension never addresses two positions; an output right after the
  // input (touching, not overlapping) is fine. Values against the reference kernel.
  CoreCase c;
  std::vector<double> buffer(12, -1.0);
  ASSERT_TRUE(c.into(MutableTensorView(buffer.data(), DType::kFloat64, {4, 3}, {3, 1})).ok());
  std::vector<double> ref(12, 0.0);
  ASSERT_TRUE(gather_multiaxis_reference(c.input(), c.indices(), c.axes,
                                         MutableTensorView(ref.data(), DType::kFloat64, {4, 3})).ok());
  EXPECT_EQ(buffer, ref);

  std::vector<double> joint(15 + 12, -1.0);
  std::memcpy(joint.data(), c.data.data(), 15 * sizeof(double));
  const TensorView input(joint.data(), DType::kFloat64, {5, 3});
  ASSERT_TRUE(gather_multiaxis_into(input, c.indices(), c.axes,
                                    MutableTensorView(joint.data() + 15, DType::kFloat64, {4, 3})).ok());
  EXPECT_EQ(std::vector<double>(joint.begin() + 15, joint.end()), ref);

  // Input [1,3] gathered along axis 0 into an output [4,1,3]... here: a [1,3] output with
  // strides [0,1] (the stride 0 is on a unit dimension).
  const std::int64_t one = 0;
  std::vector<double> row(3, -1.0);
  ASSERT_TRUE(gather_multiaxis_into(c.input(), TensorView(&one, DType::kInt64, {1, 1}), c.axes,
                                    MutableTensorView(row.data(), DType::kFloat64, {1, 3}, {0, 1})).ok());
  EXPECT_EQ(row, std::vector<double>(c.data.begin(), c.data.begin() + 3));
}

TEST(ExecuteOverlap, RegistryOpRejectsOverlapThroughExecute) {
  // onnx.Gather through lower_op + execute: the same rule and messages as the core (the core
  // output is a view of the caller's buffer, so the checks run on the bytes the caller passed).
  CoreCase c;
  Lowering l;
  ASSERT_TRUE(lower_op("onnx.Gather", c.input(), TensorView(c.idx.data(), DType::kInt64, {4}),
                       Attributes().set_int("axis", 0), &l).ok());
  const std::vector<double> before = c.data;
  Status s = execute(l, MutableTensorView(c.data.data() + 3, DType::kFloat64, {4, 3}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), kOverlap);
  // A strided (but reshape-expressible) output over the input.
  s = execute(l, MutableTensorView(c.data.data(), DType::kFloat64, {4, 3}, {1, 4}));
  EXPECT_EQ(s.message(), kOverlap);
  // Over the indices (read as float64: element size 8).
  std::vector<std::int64_t> storage(16, 0);
  std::memcpy(storage.data() + 12, c.idx.data(), 4 * sizeof(std::int64_t));
  Lowering li;
  ASSERT_TRUE(lower_op("onnx.Gather", c.input(), TensorView(storage.data() + 12, DType::kInt64, {4}),
                       Attributes().set_int("axis", 0), &li).ok());
  s = execute(li, MutableTensorView(storage.data() + 4, DType::kFloat64, {4, 3}));
  EXPECT_EQ(s.message(), kOverlap);
  EXPECT_EQ(std::vector<std::int64_t>(storage.begin() + 12, storage.end()), c.idx);
  EXPECT_EQ(std::vector<std::int64_t>(storage.begin(), storage.begin() + 12), std::vector<std::int64_t>(12, 0));
  EXPECT_EQ(c.data, before);
}

TEST(ExecuteOverlap, RegistryOpRejectsSelfOverlappingOutputs) {
  // A stride 0 and interleaved strides on the caller's [4,3] output. execute checks the core's
  // view of the caller's buffer: the rule holds and nothing is written. (The message's strides
  // and shape are checked in RegistryOpSelfOverlapMessageNamesTheCallersView.)
  CoreCase c;
  Lowering l;
  ASSERT_TRUE(lower_op("onnx.Gather", c.input(), TensorView(c.idx.data(), DType::kInt64, {4}),
                       Attributes().set_int("axis", 0), &l).ok());
  for (const Dims& strides : {Dims{0, 1}, Dims{1, 0}, Dims{1, 1}, Dims{2, 1}}) {
    std::vector<double> buffer(32, -1.0);
    const Status s = execute(l, MutableTensorView(buffer.data() + 8, DType::kFloat64, {4, 3}, strides));
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << to_string(strides);
    EXPECT_NE(s.message().find(" address one element from several positions (a stride 0 or "
                               "interleaved strides): writes through it would race and lose data"),
              std::string::npos) << s.message();
    EXPECT_EQ(buffer, std::vector<double>(32, -1.0)) << to_string(strides);
  }
  // The brief's [2,2] strides [1,1] through onnx.GatherElements (core output = output shape).
  const std::vector<float> x = {1, 2, 3, 4};
  const std::vector<std::int64_t> i = {1, 0, 0, 1};
  Lowering g;
  ASSERT_TRUE(lower_op("onnx.GatherElements", TensorView(x.data(), DType::kFloat32, {2, 2}),
                       TensorView(i.data(), DType::kInt64, {2, 2}), {}, &g).ok());
  std::vector<float> buffer(4, kSentinel);
  const Status s = execute(g, MutableTensorView(buffer.data(), DType::kFloat32, {2, 2}, {1, 1}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), self_overlap_message({1, 1}, {2, 2}));
  EXPECT_EQ(buffer, std::vector<float>(4, kSentinel));
}

// For an op whose core output is a reshape of the output (onnx.Gather: core [1,4,3], output
// [4,3]), a self-overlapping output is reported with the strides and shape the caller passed.
TEST(ExecuteOverlap, RegistryOpSelfOverlapMessageNamesTheCallersView) {
  CoreCase c;
  Lowering l;
  ASSERT_TRUE(lower_op("onnx.Gather", c.input(), TensorView(c.idx.data(), DType::kInt64, {4}),
                       Attributes().set_int("axis", 0), &l).ok());
  std::vector<double> buffer(32, -1.0);
  const Status s = execute(l, MutableTensorView(buffer.data() + 8, DType::kFloat64, {4, 3}, {0, 1}));
  EXPECT_EQ(s.message(), self_overlap_message({0, 1}, {4, 3}));
}

// ---- PipelineExtents ------------------------------------------------------------------------

TEST(PipelineExtents, RequiredSpan) {
  std::int64_t span = -1;
  ASSERT_TRUE(required_span({2, 3}, {3, 1}, &span));
  EXPECT_EQ(span, 6);  // 1 + 1*3 + 2*1
  ASSERT_TRUE(required_span({2, 3}, {-3, 1}, &span));
  EXPECT_EQ(span, 6);  // negative strides count by magnitude
  ASSERT_TRUE(required_span({2, 3}, {1, 2}, &span));
  EXPECT_EQ(span, 6);  // column-major
  ASSERT_TRUE(required_span({2, 3}, {6, 1}, &span));
  EXPECT_EQ(span, 9);  // padded rows: 1 + 6 + 2
  ASSERT_TRUE(required_span({4}, {0}, &span));
  EXPECT_EQ(span, 1);  // broadcast
  ASSERT_TRUE(required_span({2, 2}, {1, 1}, &span));
  EXPECT_EQ(span, 3);  // interleaved
  ASSERT_TRUE(required_span({3, 0, 5}, {100, 7, 1}, &span));
  EXPECT_EQ(span, 0);  // no elements
  ASSERT_TRUE(required_span({}, {}, &span));
  EXPECT_EQ(span, 1);  // a scalar
  ASSERT_TRUE(required_span({1, 5}, {-1000, -2}, &span));
  EXPECT_EQ(span, 9);  // the unit dimension adds nothing
  const std::int64_t big = std::numeric_limits<std::int64_t>::max();
  EXPECT_FALSE(required_span({3}, {big}, &span));
  EXPECT_FALSE(required_span({2}, {std::numeric_limits<std::int64_t>::min()}, &span));
  EXPECT_FALSE(required_span({3, 2}, {big / 2 + 1, 1}, &span));  // 2 * (big / 2 + 1) overflows
}

TEST(PipelineExtents, ByteRange) {
  alignas(16) float buffer[16] = {};
  const auto base = reinterpret_cast<std::uintptr_t>(buffer);
  std::uintptr_t first = 0, last = 0;
  ASSERT_TRUE(byte_range(TensorView(buffer, DType::kFloat32, {2, 3}), &first, &last));
  EXPECT_EQ(first, base);
  EXPECT_EQ(last, base + 6 * 4 - 1);
  // Rows reversed: data points at row 1; the range reaches back to row 0.
  ASSERT_TRUE(byte_range(TensorView(buffer + 3, DType::kFloat32, {2, 3}, {-3, 1}), &first, &last));
  EXPECT_EQ(first, base);
  EXPECT_EQ(last, base + 6 * 4 - 1);
  // Both reversed from the last element: [0, 24).
  ASSERT_TRUE(byte_range(TensorView(buffer + 5, DType::kFloat32, {2, 3}, {-3, -1}), &first, &last));
  EXPECT_EQ(first, base);
  EXPECT_EQ(last, base + 6 * 4 - 1);
  // A padded column (stride 4, 3 elements): elements 2, 6, 10 as float64 -> bytes [16, 88).
  ASSERT_TRUE(byte_range(TensorView(buffer + 4, DType::kFloat64, {3}, {4}), &first, &last));
  EXPECT_EQ(first, base + 16);
  EXPECT_EQ(last, base + 16 + 8 * 8 + 7);
  // Broadcast: one element.
  ASSERT_TRUE(byte_range(TensorView(buffer + 1, DType::kInt16, {5}, {0}), &first, &last));
  EXPECT_EQ(first, base + 4);
  EXPECT_EQ(last, base + 5);
  // No elements, or no data: no range.
  EXPECT_FALSE(byte_range(TensorView(buffer, DType::kFloat32, {0, 3}), &first, &last));
  EXPECT_FALSE(byte_range(TensorView(nullptr, DType::kFloat32, {2, 3}), &first, &last));
}

TEST(PipelineExtents, ViewsOverlap) {
  float buffer[24] = {};
  const TensorView low(buffer, DType::kFloat32, {2, 3});       // elements [0, 6)
  const TensorView high(buffer + 6, DType::kFloat32, {2, 3});  // [6, 12): touches, no overlap
  EXPECT_FALSE(views_overlap(low, high));
  EXPECT_FALSE(views_overlap(high, low));
  EXPECT_TRUE(views_overlap(low, TensorView(buffer + 5, DType::kFloat32, {1})));
  // One byte of overlap counts.
  EXPECT_TRUE(views_overlap(TensorView(buffer + 5, DType::kFloat32, {1}),
                            TensorView(reinterpret_cast<std::uint8_t*>(buffer + 6) - 1, DType::kUInt8, {1})));
  EXPECT_FALSE(views_overlap(TensorView(buffer + 5, DType::kFloat32, {1}),
                             TensorView(reinterpret_cast<std::uint8_t*>(buffer + 6), DType::kUInt8, {1})));
  // A negative stride reaches back into `low`: data at element 8, rows of 3 going down.
  EXPECT_TRUE(views_overlap(low, TensorView(buffer + 8, DType::kFloat32, {2, 3}, {-3, 1})));
  EXPECT_FALSE(views_overlap(low, TensorView(buffer + 11, DType::kFloat32, {2, 3}, {-3, 1})));
  // Interleaved views (even and odd elements) share no element but count as overlapping (the
  // documented conservative rule).
  EXPECT_TRUE(views_overlap(TensorView(buffer, DType::kFloat32, {4}, {2}),
                            TensorView(buffer + 1, DType::kFloat32, {4}, {2})));
  // Empty views overlap nothing.
  EXPECT_FALSE(views_overlap(low, TensorView(buffer, DType::kFloat32, {0})));
  // A view with itself.
  EXPECT_TRUE(views_overlap(low, low));
}

TEST(PipelineExtents, HasSelfOverlap) {
  EXPECT_FALSE(has_self_overlap({2, 3}, {3, 1}));
  EXPECT_FALSE(has_self_overlap({2, 3}, {1, 2}));    // column-major
  EXPECT_FALSE(has_self_overlap({2, 3}, {6, 1}));    // padded rows
  EXPECT_FALSE(has_self_overlap({2, 3}, {-3, -1}));  // reversed
  EXPECT_FALSE(has_self_overlap({3, 2}, {-1, 3}));   // transposed and reversed
  EXPECT_FALSE(has_self_overlap({1, 4}, {0, 1}));    // stride 0 on a unit dimension
  EXPECT_FALSE(has_self_overlap({0, 4}, {0, 0}));    // no elements
  EXPECT_FALSE(has_self_overlap({}, {}));            // a scalar
  EXPECT_TRUE(has_self_overlap({5}, {0}));           // broadcast
  EXPECT_TRUE(has_self_overlap({2, 3}, {0, 1}));
  EXPECT_TRUE(has_self_overlap({2, 2}, {1, 1}));     // interleaved: [0,1] and [1,0] share 1
  EXPECT_TRUE(has_self_overlap({2, 3}, {2, 1}));     // rows overlap by one element
  EXPECT_TRUE(has_self_overlap({2, 3}, {-2, 1}));    // the same, reversed
  EXPECT_TRUE(has_self_overlap({3, 2}, {1, -1}));
  EXPECT_FALSE(has_self_overlap({2, 2}, {3, 1}));    // a gap between rows
}

// is_contiguous reads any sizes (an output view is asked before its element count is checked):
// a span past INT64_MAX is no stride, and no multiplication overflows (the fuzzer found one).
TEST(PipelineExtents, IsContiguousWithSpansPastInt64) {
  const std::int64_t big = 3043755358311222165;  // * 4 overflows int64
  float one = 0;
  EXPECT_TRUE(MutableTensorView(&one, DType::kFloat32, {4, big, 1}, {big, 1, 1}).is_contiguous());
  // The span of the inner two is 4 * big, past INT64_MAX: no stride of the outer one is it.
  EXPECT_FALSE(MutableTensorView(&one, DType::kFloat32, {2, 4, big}, {-1, big, 1}).is_contiguous());
  EXPECT_FALSE(TensorView(&one, DType::kFloat32, {2, 4, big}, {0, big, 1}).is_contiguous());
  EXPECT_TRUE(TensorView(&one, DType::kFloat32, {1, 4, big}, {5, big, 1}).is_contiguous());
  EXPECT_TRUE(TensorView(&one, DType::kFloat32, {1, big}, {7, 1}).is_contiguous());
  EXPECT_TRUE(TensorView(&one, DType::kFloat32, {big, big, 0}, {0, 0, 0}).is_contiguous());  // empty
  EXPECT_TRUE(TensorView(&one, DType::kFloat32, {2, 3}, {3, 1}).is_contiguous());
  EXPECT_FALSE(TensorView(&one, DType::kFloat32, {2, 3}, {3}).is_contiguous());  // strides for another rank
}

// ---- PipelineAttributes ---------------------------------------------------------------------

// The observable result of a lowering: views, axes, options, shapes, strides, attributes.
std::string describe(const Lowering& l) {
  std::string s = l.op + " | " + l.attributes.to_string() + " | in " + to_string(l.input.shape) +
                  to_string(l.input.strides) + " ix " + to_string(l.indices.shape) +
                  to_string(l.indices.strides) + " axes";
  for (auto a : l.axes) s += " " + std::to_string(a);
  s += " | mode " + std::string(index_mode_name(l.options.index_mode)) +
       " neg " + (l.options.negative_indices ? "1" : "0") + " fill " + l.options.fill_value.to_string() +
       " | core " + to_string(l.core_output_shape) + to_string(l.core_output_strides) + " out " +
       to_string(l.output_shape);
  return s;
}

struct TypedCase {
  const char* op;
  Dims x, i;
  Attributes typed, text;
};

TEST(PipelineAttributes, TypedValuesLowerExactlyAsTexts) {
  const std::vector<TypedCase> cases = {
      {"onnx.Gather", {4, 3}, {2, 2}, Attributes().set_int("axis", 1), {{"axis", "1"}}},
      {"onnx.Gather", {4, 3}, {2, 2}, Attributes().set_int("axis", -1), {{"axis", "-1"}}},
      {"onnx.Gather", {4, 3}, {2, 2}, Attributes().set_none("axis"), {{"axis", "0"}}},  // none = default
      {"numpy.take", {3, 4}, {2}, Attributes().set_none("axis").set_string("mode", "clip"),
       {{"axis", "none"}, {"mode", "clip"}}},
      {"numpy.take", {3, 4}, {2}, Attributes().set_int("axis", 1).set_string("mode", "wrap"),
       {{"axis", "1"}, {"mode", "wrap"}}},
      {"gather_multiaxis", {4, 5, 6}, {4, 1, 2},
       Attributes().set_ints("axes", {1, 2}).set_string("index_mode", "fill")
           .set_bool("negative_indices", false).set_scalar("fill_value", Scalar::from_float(-2.5)),
       {{"axes", "[1, 2]"}, {"index_mode", "fill"}, {"negative_indices", "off"}, {"fill_value", "-2.5"}}},
      {"gather_multiaxis", {4, 5}, {4, 5}, Attributes().set_ints("axes", {}),
       {{"axes", ""}}},
      {"gather_multiaxis", {4, 5}, {4, 1}, Attributes().set_ints("axes", {0}).set_string("index_mode", "fill")
           .set_int("fill_value", 7),  // an int where a scalar is expected
       {{"axes", "0"}, {"index_mode", "fill"}, {"fill_value", "7"}}},
      {"coreml.gather", {3, 4}, {3, 2},
       Attributes().set_int("axis", 1).set_int("batch_dims", 1).set_bool("validate_indices", true),
       {{"axis", "1"}, {"batch-dims", "1"}, {"validate_indices", "yes"}}},
      {"jax.numpy.take", {3, 4}, {2}, Attributes().set_int("axis", 0).set_string("mode", "fill").set_float("fill_value", 1.5),
       {{"axis", "0"}, {"mode", "fill"}, {"fill_value", "1.5"}}},
      {"jax.numpy.take", {3, 4}, {2}, Attributes().set_none("axis").set_none("mode").set_none("fill_value"),
       {{"axis", "none"}, {"fill_value", "none"}}},
      {"tensor.gather", {4, 5, 6}, {1, 2, 3, 2},
       Attributes().set_ints("gather_dims", {1, 2}).set_bool("rank_reduced", true),
       {{"gather_dims", "(1, 2)"}, {"rank_reduced", "True"}}},
      {"stablehlo.gather", {3, 4, 2}, {2, 3, 2},
       Attributes().set_ints("offset_dims", {2, 3}).set_ints("collapsed_slice_dims", {0})
           .set_ints("start_index_map", {1, 0}).set_int("index_vector_dim", 2).set_ints("slice_sizes", {1, 2, 2}),
       {{"offset_dims", "2,3"}, {"collapsed_slice_dims", "0"}, {"start_index_map", "1,0"},
        {"index_vector_dim", "2"}, {"slice_sizes", "1,2,2"}}},
  };
  for (const TypedCase& c : cases) {
    Lowering typed, text;
    const TensorView x(nullptr, DType::kFloat32, c.x), i(nullptr, DType::kInt64, c.i);
    const Status st = lower_op(c.op, x, i, c.typed, &typed);
    const Status sx = lower_op(c.op, x, i, c.text, &text);
    ASSERT_TRUE(st.ok()) << c.op << " typed: " << st.message();
    ASSERT_TRUE(sx.ok()) << c.op << " text: " << sx.message();
    EXPECT_EQ(describe(typed), describe(text));
  }
}

TEST(PipelineAttributes, TypedValuesRunLikeTexts) {
  // The values too: gather_multiaxis with fill / no negative rule, against the reference kernel.
  const std::vector<float> x = distinct_floats(20);
  const std::vector<std::int64_t> i = {3, -1, 9, 0};  // -1 and 9 are out of range -> fill
  const TensorView xv(x.data(), DType::kFloat32, {4, 5}), iv(i.data(), DType::kInt64, {1, 4});
  Tensor typed = run_op("gather_multiaxis", xv, iv,
                        Attributes().set_ints("axes", {1}).set_string("index_mode", "fill")
                            .set_bool("negative_indices", false).set_float("fill_value", -2.5));
  Tensor text = run_op("gather_multiaxis", xv, iv,
                       {{"axes", "1"}, {"index_mode", "fill"}, {"negative_indices", "false"}, {"fill_value", "-2.5"}});
  ASSERT_EQ(to_string(typed.shape()), "[4,4]");
  GatherOptions o;
  o.index_mode = IndexMode::kFill;
  o.negative_indices = false;
  o.fill_value = Scalar::from_float(-2.5);
  Tensor ref(DType::kFloat32, {4, 4});
  const std::int64_t axes[] = {1};
  ASSERT_TRUE(gather_multiaxis_reference(xv, iv, axes, ref.mutable_view(), o).ok());
  EXPECT_EQ(0, std::memcmp(typed.data(), ref.data(), ref.nbytes()));
  EXPECT_EQ(0, std::memcmp(text.data(), ref.data(), ref.nbytes()));
  EXPECT_EQ(typed.data_as<float>()[1], -2.5f);
  EXPECT_EQ(typed.data_as<float>()[0], x[3]);
}

TEST(PipelineAttributes, WrongTypesAreTypeErrorsNamingTheAttribute) {
  const TensorView x(nullptr, DType::kFloat32, {4, 3}), i(nullptr, DType::kInt64, {2});
  struct Bad { const char* op; Attributes a; const char* message; };
  const std::vector<Bad> bad = {
      {"onnx.Gather", Attributes().set_string("axis", "1"), "onnx.Gather: attribute axis: expected int, got string '1'"},
      {"onnx.Gather", Attributes().set_bool("axis", true), "onnx.Gather: attribute axis: expected int, got bool true"},
      {"onnx.Gather", Attributes().set_float("axis", 1.0), "onnx.Gather: attribute axis: expected int, got float 1"},
      {"onnx.Gather", Attributes().set_ints("axis", {1}), "onnx.Gather: attribute axis: expected int, got int list [1]"},
      {"numpy.take", Attributes().set_string("axis", "none"), "numpy.take: attribute axis: expected int|none, got string 'none'"},
      {"numpy.take", Attributes().set_int("mode", 1), "numpy.take: attribute mode: expected enum, got int 1"},
      {"gather_multiaxis", Attributes().set_int("axes", 0), "gather_multiaxis: attribute axes: expected int list, got int 0"},
      {"gather_multiaxis", Attributes().set_ints("axes", {0}).set_int("negative_indices", 1),
       "gather_multiaxis: attribute negative_indices: expected bool, got int 1"},
      {"gather_multiaxis", Attributes().set_ints("axes", {0}).set_string("fill_value", "0"),
       "gather_multiaxis: attribute fill_value: expected scalar, got string '0'"},
  };
  for (const Bad& b : bad) {
    Lowering l;
    const Status s = lower_op(b.op, x, i, b.a, &l);
    EXPECT_EQ(s.code(), StatusCode::kTypeError) << b.message << " / " << s.message();
    EXPECT_EQ(s.message(), b.message);
  }
  // Not type errors: an unknown name, a bad enum choice (InvalidArgument), named by the
  // framework name (dashes accepted on input, never printed as a flag).
  Lowering l;
  Status s = lower_op("onnx.Gather", x, i, Attributes().set_int("dim", 0), &l);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "onnx.Gather has no attribute 'dim' (attributes: axis)");
  s = lower_op("numpy.take", x, i, Attributes().set_string("mode", "clamp"), &l);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "numpy.take: attribute mode: 'clamp' is not one of raise, wrap, clip");
  s = lower_op("onnx.Gather", x, i, Attributes().set("axis", "x"), &l);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "onnx.Gather: attribute axis: 'x' is not an integer");
  s = lower_op("onnx.Gather", x, i, Attributes().set_int("axis", 0).set_int("axis", 1), &l);
  EXPECT_EQ(s.message(), "onnx.Gather: attribute 'axis' is given twice");
  s = lower_op("tf.gather", x, i, Attributes().set_int("batch-dims", 0).set_int("batch_dims", 0), &l);
  EXPECT_EQ(s.message(), "tf.gather: attribute 'batch_dims' is given twice");
}

TEST(PipelineAttributes, OneTextParserForBools) {
  const AttrSpec spec{"negative_indices", AttrType::kBool, "true", {}, ""};
  for (const char* t : {"true", "True", "TRUE", "yes", "Yes", "on", "ON", "1"}) {
    AttrValue v;
    ASSERT_TRUE(parse_attribute(spec, t, &v).ok()) << t;
    EXPECT_TRUE(v.b) << t;
  }
  for (const char* t : {"false", "False", "FALSE", "no", "No", "off", "OFF", "0"}) {
    AttrValue v;
    v.b = true;
    ASSERT_TRUE(parse_attribute(spec, t, &v).ok()) << t;
    EXPECT_FALSE(v.b) << t;
  }
  for (const char* t : {"", "2", "t", "y", "truee", "none"}) {
    AttrValue v;
    const Status s = parse_attribute(spec, t, &v);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << t;
    EXPECT_EQ(s.message(), "attribute negative_indices: '" + std::string(t) +
                               "' is not a bool (expected true/false, 1/0, yes/no, on/off)");
  }
  // The same parser behind lower_op: every spelling gives the same lowering as a typed bool.
  const TensorView x(nullptr, DType::kFloat32, {4, 3}), i(nullptr, DType::kInt64, {2, 1});
  for (const bool value : {true, false}) {
    Lowering typed;
    ASSERT_TRUE(lower_op("gather_multiaxis", x, i,
                         Attributes().set_ints("axes", {0}).set_bool("negative_indices", value), &typed).ok());
    for (const char* t : value ? std::vector<const char*>{"true", "True", "yes", "on", "1"}
                               : std::vector<const char*>{"false", "False", "no", "off", "0"}) {
      Lowering text;
      ASSERT_TRUE(lower_op("gather_multiaxis", x, i, {{"axes", "0"}, {"negative-indices", t}}, &text).ok()) << t;
      EXPECT_EQ(text.options.negative_indices, value) << t;
      EXPECT_EQ(describe(text), describe(typed)) << t;
    }
  }
}

// ---- ExecuteContext -------------------------------------------------------------------------

TEST(ExecuteContext, NumThreadsOverrideGivesTheReferenceResult) {
  // 64 Ki lookups of 16 floats (4 MiB moved): enough work for several threads. Every thread
  // count, and the lowering's own (-1), match the reference kernel.
  const std::int64_t rows = 1024, cols = 16, n = 65536;
  std::vector<float> x = distinct_floats(static_cast<std::size_t>(rows * cols));
  std::vector<std::int32_t> idx(static_cast<std::size_t>(n));
  for (std::int64_t k = 0; k < n; ++k) idx[static_cast<std::size_t>(k)] = static_cast<std::int32_t>((k * 7919) % rows);
  Lowering l;
  ASSERT_TRUE(lower_op("onnx.Gather", TensorView(x.data(), DType::kFloat32, {rows, cols}),
                       TensorView(idx.data(), DType::kInt32, {n}), Attributes().set_int("axis", 0), &l).ok());
  Tensor ref(DType::kFloat32, l.core_output_shape);
  ASSERT_TRUE(gather_multiaxis_reference(l.input, l.indices, l.axes, ref.mutable_view(), l.options).ok());
  for (const int threads : {-1, 0, 1, 2, 3, 8}) {
    ExecutionContext context;
    context.num_threads = threads;
    std::vector<float> out(static_cast<std::size_t>(n * cols), kSentinel);
    const Status s = execute(l, MutableTensorView(out.data(), DType::kFloat32, {n, cols}), context);
    ASSERT_TRUE(s.ok()) << threads << ": " << s.message();
    EXPECT_EQ(0, std::memcmp(out.data(), ref.data(), ref.nbytes())) << "num_threads " << threads;
  }
  // The override replaces the lowering's value; a lowering's own negative value is still refused.
  Lowering bad = l;
  bad.options.num_threads = -3;
  std::vector<float> out(static_cast<std::size_t>(n * cols), kSentinel);
  const MutableTensorView view(out.data(), DType::kFloat32, {n, cols});
  Status s = execute(bad, view);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "num_threads = -3 is negative");
  ExecutionContext two;
  two.num_threads = 2;
  s = execute(bad, view, two);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(0, std::memcmp(out.data(), ref.data(), ref.nbytes()));
}

struct AllocatorLog {
  int calls = 0;
  DType dtype = DType::kBool;
  Dims shape;
  std::vector<float> storage;
  bool fail = false;
  bool transposed = false;
};

bool log_allocator(void* context, DType dtype, const Dims& shape, MutableTensorView* output) {
  auto* log = static_cast<AllocatorLog*>(context);
  ++log->calls;
  log->dtype = dtype;
  log->shape = shape;
  if (log->fail) return false;
  std::int64_t n = 0;
  element_count(shape, &n);
  log->storage.assign(static_cast<std::size_t>(n), kSentinel);
  if (log->transposed && shape.size() == 2) {  // column-major: strides [1, rows]
    *output = MutableTensorView(log->storage.data(), dtype, shape, {1, shape[0]});
  } else {
    *output = MutableTensorView(log->storage.data(), dtype, shape);
  }
  return true;
}

TEST(ExecuteContext, ExecuteAllocWithAndWithoutAnAllocator) {
  const OnnxGatherCase c;
  const Lowering l = lower("onnx.Gather", c.data_view(), c.idx_view(), Attributes().set_int("axis", 0));
  // No allocator: a Tensor owned by the caller.
  {
    Tensor owned;
    MutableTensorView view;
    ASSERT_TRUE(execute_alloc(l, {}, &view, &owned).ok());
    EXPECT_EQ(view.data, owned.data());
    EXPECT_EQ(to_string(owned.shape()), "[4,3]");
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(owned.data_as<float>()[i * 3 + j], c.expected(i, j));
    }
  }
  // The caller's allocator, contiguous and column-major: called once with dtype and shape.
  for (const bool transposed : {false, true}) {
    AllocatorLog log;
    log.transposed = transposed;
    ExecutionContext context;
    context.allocate = &log_allocator;
    context.allocator_context = &log;
    Tensor owned;
    MutableTensorView view;
    const Status s = execute_alloc(l, context, &view, &owned);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(log.calls, 1);
    EXPECT_EQ(log.dtype, DType::kFloat32);
    EXPECT_EQ(to_string(log.shape), "[4,3]");
    EXPECT_EQ(owned.numel(), 0) << "the owned tensor stays empty with an allocator";
    EXPECT_EQ(view.data, log.storage.data());
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 3; ++j) EXPECT_EQ(at(view, {i, j}), c.expected(i, j)) << transposed;
    }
  }
  // An allocator that fails.
  {
    AllocatorLog log;
    log.fail = true;
    ExecutionContext context;
    context.allocate = &log_allocator;
    context.allocator_context = &log;
    Tensor owned;
    MutableTensorView view;
    const Status s = execute_alloc(l, context, &view, &owned);
    EXPECT_EQ(s.code(), StatusCode::kInternal);
    EXPECT_EQ(s.message(), "onnx.Gather: the output allocator failed");
    EXPECT_EQ(log.calls, 1);
  }
  // The throwing one-shot form ignores the allocator and returns a new tensor.
  {
    AllocatorLog log;
    ExecutionContext context;
    context.allocate = &log_allocator;
    context.allocator_context = &log;
    const Tensor t = execute(l, context);
    EXPECT_EQ(log.calls, 0);
    EXPECT_EQ(t.data_as<float>()[0], c.expected(0, 0));
  }
  // An allocator on the staging path (permuted stablehlo result into a column-major output).
  {
    const StablehloCase h;
    const Lowering sl = lower("stablehlo.gather", h.operand_view(), h.starts_view(), h.attrs());
    AllocatorLog log;
    log.transposed = true;
    ExecutionContext context;
    context.allocate = &log_allocator;
    context.allocator_context = &log;
    Tensor owned;
    MutableTensorView view;
    ASSERT_TRUE(execute_alloc(sl, context, &view, &owned).ok());
    for (int o = 0; o < 4; ++o) {
      for (int b = 0; b < 2; ++b) EXPECT_EQ(at(view, {o, b}), h.expected(o, b));
    }
  }
}

TEST(ExecuteContext, InvalidFillValueFailsThroughExecuteAlloc) {
  // A fill value the input dtype cannot hold passes lower_op (shapes and dtypes only) and fails
  // in execute, with the core's message; the output is not returned.
  const std::vector<std::int32_t> x(12, 3);
  const std::vector<std::int64_t> i = {0, 9};
  Lowering l;
  ASSERT_TRUE(lower_op("gather_multiaxis", TensorView(x.data(), DType::kInt32, {4, 3}),
                       TensorView(i.data(), DType::kInt64, {2, 1}),
                       Attributes().set_ints("axes", {0}).set_string("index_mode", "fill").set_float("fill_value", 1.5),
                       &l).ok());
  Tensor owned;
  MutableTensorView view;
  const Status s = execute_alloc(l, {}, &view, &owned);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "fill_value 1.5 is not representable in int32");
  EXPECT_EQ(view.data, nullptr);
}

// execute.hpp: the allocator is "called once, on the calling thread, after validation" (as the
// core's gather_multiaxis_alloc does): a bad fill value fails before any allocation.
TEST(ExecuteContext, AllocatorIsNotCalledForAnInvalidFillValue) {
  const std::vector<std::int32_t> x(12, 3);
  const std::vector<std::int64_t> i = {0, 9};
  Lowering l;
  ASSERT_TRUE(lower_op("gather_multiaxis", TensorView(x.data(), DType::kInt32, {4, 3}),
                       TensorView(i.data(), DType::kInt64, {2, 1}),
                       Attributes().set_ints("axes", {0}).set_string("index_mode", "fill").set_float("fill_value", 1.5),
                       &l).ok());
  AllocatorLog log;
  ExecutionContext context;
  context.allocate = &log_allocator;
  context.allocator_context = &log;
  Tensor owned;
  MutableTensorView view;
  EXPECT_FALSE(execute_alloc(l, context, &view, &owned).ok());
  EXPECT_EQ(log.calls, 0);
}

TEST(ExecuteContext, OutOfRangeIsNamedInTheFrameworksTermsThroughExecuteAlloc) {
  OnnxGatherCase c;
  c.idx[2] = 5;
  const Lowering l = lower("onnx.Gather", c.data_view(), c.idx_view(), Attributes().set_int("axis", 0));
  Tensor owned;
  MutableTensorView view;
  const Status s = execute_alloc(l, {}, &view, &owned);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "onnx.Gather: indices[2] = 5 is out of range for axis 0 of size 5 (valid "
                         "range [-5, 5)); ONNX indices must lie in [-s, s-1]");
}

TEST(ExecuteContext, CudaDeviceOnHostMemoryGivesAClearError) {
  const OnnxGatherCase c;
  const Lowering l = lower("onnx.Gather", c.data_view(), c.idx_view(), Attributes().set_int("axis", 0));
  ExecutionContext context;
  context.device = Device::kCUDA;
  std::vector<float> buffer(12, kSentinel);
  const MutableTensorView out(buffer.data(), DType::kFloat32, {4, 3});
  const Status s = execute(l, out, context);
  EXPECT_FALSE(s.ok());
#if MULTIGATHER_HAVE_CUDA
  if (cuda_device_available()) {
    // Host pointers on a machine with a GPU: the CUDA backend names the host operand.
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
  } else {
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
    EXPECT_EQ(s.message(), "onnx.Gather: the CUDA engine was asked for, but no CUDA device is "
                           "available (no driver or no GPU)");
  }
#else
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "onnx.Gather: the operands are on a CUDA device, but this build has no "
                         "CUDA engine (build with MULTIGATHER_CUDA=ON)");
#endif
  EXPECT_EQ(buffer, std::vector<float>(12, kSentinel));

  // A strided output that needs staging is refused on CUDA before anything runs.
  const StablehloCase h;
  const Lowering sl = lower("stablehlo.gather", h.operand_view(), h.starts_view(), h.attrs());
  std::vector<float> strided(8, kSentinel);
  const Status st = execute(sl, MutableTensorView(strided.data(), DType::kFloat32, {4, 2}, {1, 4}), context);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.message(), "stablehlo.gather: output strides [1,4] cannot hold the core output [2,1,4] "
                          "as a view; on a CUDA device pass a C-contiguous output");
  EXPECT_EQ(strided, std::vector<float>(8, kSentinel));

  // The one-shot form without an allocator cannot put a result on a device.
  Tensor owned;
  MutableTensorView view;
  const Status sa = execute_alloc(l, context, &view, &owned);
  EXPECT_EQ(sa.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sa.message(), "onnx.Gather: a one-shot call on CUDA operands needs an allocator in the "
                          "ExecutionContext (Tensor storage is host memory)");

  // lower_op with Device::kCUDA refuses lowerings that read the data on the host.
  Lowering windowed;
  const Status sw = lower_op("stablehlo.gather", h.operand_view(), h.starts_view(),
                             Attributes().set_ints("offset_dims", {1, 2}).set_ints("collapsed_slice_dims", {})
                                 .set_ints("start_index_map", {0}).set_int("index_vector_dim", 1)
                                 .set_ints("slice_sizes", {2, 4}),
                             &windowed, Device::kCUDA);
  EXPECT_EQ(sw.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sw.message(), "stablehlo.gather: windowed slices (slice_sizes > 1 on an indexed "
                          "dimension) materialize their indices on the host; on a CUDA device "
                          "this lowering is not supported: copy start_indices to the host");
}

TEST(ExecuteContext, OutputNameIsUsedInMessages) {
  CoreCase c;
  Lowering l;
  ASSERT_TRUE(lower_op("onnx.Gather", c.input(), TensorView(c.idx.data(), DType::kInt64, {4}),
                       Attributes().set_int("axis", 0), &l).ok());
  ExecutionContext context;
  context.output_name = "out";
  Status s = execute(l, MutableTensorView(c.data.data(), DType::kFloat64, {4, 3}), context);
  EXPECT_EQ(s.message(), "out overlaps input or indices (gather cannot write into memory it reads)");
  std::vector<double> buffer(12);
  s = execute(l, MutableTensorView(buffer.data(), DType::kFloat64, {3, 4}), context);
  EXPECT_EQ(s.message(), "onnx.Gather: out shape [3,4] does not match the output shape [4,3]");
}

// ---- PipelineInferOnce ----------------------------------------------------------------------

TEST(PipelineInferOnce, LoweringShapeIsInferShapeOfItsViews) {
  for (const auto& c : explain_cases()) {
    SCOPED_TRACE(c.op);
    Lowering l;
    ASSERT_TRUE(lower_op(c.op, TensorView(nullptr, DType::kFloat32, c.x),
                         TensorView(nullptr, DType::kInt64, c.i), c.a, &l).ok());
    GatherShape s;
    ASSERT_TRUE(infer_shape(l.input.shape, l.indices.shape, l.axes, &s).ok());
    EXPECT_EQ(to_string(l.shape.output_shape), to_string(s.output_shape));
    EXPECT_EQ(to_string(l.shape.logical_indices_shape), to_string(s.logical_indices_shape));
    EXPECT_EQ(l.shape.axes, s.axes);
    EXPECT_EQ(l.shape.coordinate_size, s.coordinate_size);
    EXPECT_EQ(l.shape.output_numel, s.output_numel);
    EXPECT_EQ(l.shape.is_axis, s.is_axis);
    EXPECT_EQ(l.shape.input_broadcast, s.input_broadcast);
    EXPECT_EQ(l.shape.indices_broadcast, s.indices_broadcast);
    EXPECT_EQ(to_string(l.core_output_shape), to_string(s.output_shape));
    EXPECT_EQ(to_string(l.logical_indices_shape), to_string(s.logical_indices_shape));
    EXPECT_EQ(l.core_output_strides.size(), l.core_output_shape.size());
    std::int64_t framework = 0;
    ASSERT_TRUE(element_count(l.output_shape, &framework));
    EXPECT_EQ(framework, s.output_numel) << "the framework output holds the core output";
  }
}

TEST(PipelineInferOnce, ExecuteRunsTheLoweringsShapeOnRealData) {
  // Every registry op on data: the framework result through execute equals the reference
  // kernel run on the lowering's views, placed by core_output_strides.
  for (const auto& c : explain_cases()) {
    SCOPED_TRACE(c.op);
    std::int64_t nx = 0, ni = 0;
    element_count(c.x, &nx);
    element_count(c.i, &ni);
    const std::vector<float> x = distinct_floats(static_cast<std::size_t>(nx));
    std::vector<std::int64_t> idx(static_cast<std::size_t>(ni));
    for (std::int64_t k = 0; k < ni; ++k) idx[static_cast<std::size_t>(k)] = k % 2;  // valid everywhere
    Lowering l;
    const Status ls = lower_op(c.op, TensorView(x.data(), DType::kFloat32, c.x),
                               TensorView(idx.data(), DType::kInt64, c.i), c.a, &l);
    ASSERT_TRUE(ls.ok()) << ls.message();
    Tensor out = execute(l);
    std::vector<float> ref(static_cast<std::size_t>(out.numel()), kSentinel);
    ASSERT_TRUE(gather_multiaxis_reference(
                    l.input, l.indices, l.axes,
                    MutableTensorView(ref.data(), DType::kFloat32, l.core_output_shape, l.core_output_strides),
                    l.options).ok());
    EXPECT_EQ(testing::values_f32(out), ref);
  }
}

}  // namespace
}  // namespace multigather
