// Every error of SPEC section 1, with its exact message (messages are part of the API), and the
// mapping of status codes to the convenience API's exceptions.
#include <limits>

#include "core_support.hpp"

namespace {

using multigather::DType;
using multigather::Dims;
using multigather::GatherOptions;
using multigather::GatherShape;
using multigather::MutableTensorView;
using multigather::StatusCode;
using multigather::TensorView;

struct ErrorCase {
  const char* name;
  Dims input_shape;
  Dims indices_shape;
  std::vector<std::int64_t> axes;
  const char* message;
};

// Shape-only errors: infer_shape and gather_multiaxis_into must both report them.
const ErrorCase kShapeErrors[] = {
    {"rank mismatch", /*input=*/{2, 3}, /*indices=*/{2}, /*axes=*/{0},
     "indices rank 1 must equal input rank 2"},
    {"axis too large", {2, 3}, {2, 3}, {2}, "axes[0] = 2 is out of range [-2, 2) for input rank 2"},
    {"axis too negative", {2, 3}, {2, 3}, {0, -3},
     "axes[1] = -3 is out of range [-2, 2) for input rank 2"},
    {"axis on rank 0", {}, {}, {0}, "axes[0] = 0 is out of range [0, 0) for input rank 0"},
    {"repeated axis", {2, 3}, {2, 4}, {0, -2}, "axes[1] = -2 repeats axis 0 (axes must be distinct)"},
    {"last dim not a multiple", {4, 3}, {1, 3}, {0, 1},
     "indices.shape[1] = 3 is not a multiple of the coordinate size 2 (len(axes))"},
    {"not broadcastable", {4, 3}, {2, 2}, {0},
     "input.shape[1] = 3 and logical indices shape[1] = 2 are not broadcastable: dimension 1 is not "
     "in axes, so the sizes must be equal or one of them 1"},
    {"not broadcastable, logical shape", {4, 3, 5}, {4, 3, 6}, {0, 1},
     "input.shape[2] = 5 and logical indices shape[2] = 3 are not broadcastable: dimension 2 is not "
     "in axes, so the sizes must be equal or one of them 1"},
    {"negative size", {2, -2}, {2, 1}, {0}, "input.shape[1] = -2 is negative"},
    {"negative indices size", {2, 2}, {-1, 1}, {0}, "indices.shape[0] = -1 is negative"},
    {"rank above maximum",
     Dims(std::vector<std::int64_t>(17, 1)), Dims(std::vector<std::int64_t>(17, 1)), {0},
     "input rank 17 exceeds the maximum rank 16"},
    {"input element count overflow", {std::int64_t{1} << 40, std::int64_t{1} << 40}, {1, 1}, {0},
     "input shape [1099511627776,1099511627776] has an element count that overflows 64 bits"},
    {"output element count overflow", {std::int64_t{1} << 32, 1}, {1, std::int64_t{1} << 32}, {},
     "output shape [4294967296,4294967296] has an element count that overflows 64 bits"},
};

TEST(Errors, ShapeErrorsHaveExactMessages) {
  for (const ErrorCase& c : kShapeErrors) {
    SCOPED_TRACE(c.name);
    GatherShape shape;
    const auto s = multigather::infer_shape(c.input_shape, c.indices_shape, c.axes, &shape);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), c.message);
    // The same error from the full call (views without data: validation comes first).
    const auto s2 = multigather::gather_multiaxis_into(
        TensorView(nullptr, DType::kFloat32, c.input_shape),
        TensorView(nullptr, DType::kInt64, c.indices_shape), c.axes,
        MutableTensorView(nullptr, DType::kFloat32, {}), {});
    EXPECT_EQ(s2.message(), c.message);
    EXPECT_THROW(multigather::output_shape(c.input_shape, c.indices_shape, c.axes),
                 multigather::InvalidArgumentError);
  }
}

const float kData[6] = {1, 2, 3, 4, 5, 6};
const std::int64_t kIdx[2] = {1, 0};
const TensorView kInput(kData, DType::kFloat32, {2, 3});
const TensorView kIndices(kIdx, DType::kInt64, {2, 1});
const std::vector<std::int64_t> kAxis0 = {0};

multigather::Status into(const TensorView& input, const TensorView& indices, const MutableTensorView& out,
                         const GatherOptions& o = {}) {
  return multigather::gather_multiaxis_into(input, indices, kAxis0, out, o);
}

TEST(Errors, NonIntegerIndicesDtype) {
  const float fidx[2] = {1, 0};
  float out[6];
  const auto s = into(kInput, TensorView(fidx, DType::kFloat32, {2, 1}),
                      MutableTensorView(out, DType::kFloat32, {2, 3}));
  EXPECT_EQ(s.code(), StatusCode::kTypeError);
  EXPECT_EQ(s.message(),
            "indices dtype float32 is not an integer type (expected int8, int16, int32, int64, uint8, "
            "uint16, uint32 or uint64)");
  EXPECT_THROW(multigather::gather_multiaxis(kInput, TensorView(fidx, DType::kBool, {2, 1}), kAxis0),
               multigather::TypeMismatchError);
}

TEST(Errors, UnsupportedInputDtype) {
  float out[6];
  const auto s = into(TensorView(kData, static_cast<DType>(99), {2, 3}), kIndices,
                      MutableTensorView(out, DType::kFloat32, {2, 3}));
  EXPECT_EQ(s.code(), StatusCode::kTypeError);
  EXPECT_EQ(s.message(), "input dtype 99 is not supported");
}

TEST(Errors, OutputViewOfWrongShapeOrElementSize) {
  double out[6];
  auto s = into(kInput, kIndices, MutableTensorView(out, DType::kFloat32, {3, 2}));
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "output shape [3,2] does not match the inferred output shape [2,3]");
  s = into(kInput, kIndices, MutableTensorView(out, DType::kFloat64, {2, 3}));
  EXPECT_EQ(s.message(), "output dtype float64 has element size 8 but input dtype float32 has element size 4");
  // Same element size, other dtype: allowed (the operator moves bytes).
  std::int32_t iout[6];
  EXPECT_TRUE(into(kInput, kIndices, MutableTensorView(iout, DType::kInt32, {2, 3})).ok());
  EXPECT_EQ(iout[0], 0x40800000);  // bits of 4.0f
}

TEST(Errors, OutputByteSizeOverflow) {
  const Dims in{std::int64_t{1} << 31, 1};
  const Dims ix{1, std::int64_t{1} << 30};
  const auto s = multigather::gather_multiaxis_into(
      TensorView(nullptr, DType::kFloat64, in), TensorView(nullptr, DType::kInt64, ix), std::vector<std::int64_t>{},
      MutableTensorView(nullptr, DType::kFloat64, {std::int64_t{1} << 31, std::int64_t{1} << 30}));
  EXPECT_EQ(s.message(), "output shape [2147483648,1073741824] of float64 has a byte size that overflows 64 bits");
}

TEST(Errors, StridesReachingBeyond64Bits) {
  float out[3];
  const std::int64_t idx[3] = {0, 0, 0};
  const auto s = multigather::gather_multiaxis_into(
      TensorView(kData, DType::kFloat32, {3}, {std::numeric_limits<std::int64_t>::max() / 2}),
      TensorView(idx, DType::kInt64, {3}), kAxis0, MutableTensorView(out, DType::kFloat32, {3}));
  EXPECT_EQ(s.message(), "input strides [4611686018427387903] with shape [3] reach byte offsets that overflow 64 bits");
}

TEST(Errors, NullDataForNonEmptyTensors) {
  float out[6];
  auto s = into(TensorView(nullptr, DType::kFloat32, {2, 3}), kIndices, MutableTensorView(out, DType::kFloat32, {2, 3}));
  EXPECT_EQ(s.message(), "input data is null but input has 6 elements");
  s = into(kInput, kIndices, MutableTensorView(nullptr, DType::kFloat32, {2, 3}));
  EXPECT_EQ(s.message(), "output data is null but output has 6 elements");
  s = into(kInput, TensorView(nullptr, DType::kInt64, {2, 1}), MutableTensorView(out, DType::kFloat32, {2, 3}));
  EXPECT_EQ(s.message(), "indices data is null but indices has 2 elements");
}

TEST(Errors, FillValueNotRepresentable) {
  const std::uint8_t data[2] = {1, 2};
  std::uint8_t out[2];
  GatherOptions o;
  o.index_mode = multigather::IndexMode::kFill;
  o.fill_value = multigather::Scalar::from_int(-1);
  const auto s = multigather::gather_multiaxis_into(
      TensorView(data, DType::kUInt8, {2}), TensorView(kIdx, DType::kInt64, {2}), kAxis0,
      MutableTensorView(out, DType::kUInt8, {2}), o);
  EXPECT_EQ(s.message(), "fill_value -1 is not representable in uint8");
  o.fill_value = multigather::Scalar::from_float(0.5);
  EXPECT_EQ(multigather::gather_multiaxis_into(TensorView(data, DType::kUInt8, {2}), TensorView(kIdx, DType::kInt64, {2}),
                                               kAxis0, MutableTensorView(out, DType::kUInt8, {2}), o)
                .message(),
            "fill_value 0.5 is not representable in uint8");
}

TEST(Errors, BadOptions) {
  float out[6];
  GatherOptions o;
  o.index_mode = static_cast<multigather::IndexMode>(9);
  EXPECT_EQ(into(kInput, kIndices, MutableTensorView(out, DType::kFloat32, {2, 3}), o).message(),
            "index_mode 9 is not one of error, clamp, wrap, fill");
  o = {};
  o.num_threads = -2;
  EXPECT_EQ(into(kInput, kIndices, MutableTensorView(out, DType::kFloat32, {2, 3}), o).message(),
            "num_threads = -2 is negative");
}

TEST(Errors, OutOfRangeIndexThrowsIndexOutOfRangeError) {
  const std::int64_t bad[2] = {1, 2};
  try {
    multigather::gather_multiaxis(kInput, TensorView(bad, DType::kInt64, {2, 1}), kAxis0);
    FAIL() << "expected IndexOutOfRangeError";
  } catch (const multigather::IndexOutOfRangeError& e) {
    EXPECT_STREQ(e.what(), "indices[1,0] = 2 is out of range for axis 0 of size 2 (valid range [-2, 2))");
    EXPECT_EQ(e.code(), StatusCode::kOutOfRange);
  }
}

TEST(Errors, FirstBadIndexInOutputOrderIsReported) {
  // Two bad coordinates: the message names the first in output (C) order, on its own axis.
  const std::int32_t data[6] = {0, 1, 2, 3, 4, 5};
  const std::int64_t coords[4] = {1, 2, 5, 0};  // (1, 2) ok, (5, 0) bad on axis 0
  std::int32_t out[2];
  const auto s = multigather::gather_multiaxis_into(
      TensorView(data, DType::kInt32, {2, 3}), TensorView(coords, DType::kInt64, {1, 4}),
      std::vector<std::int64_t>{0, 1}, MutableTensorView(out, DType::kInt32, {1, 2}));
  EXPECT_EQ(s.message(), "indices[0,2] = 5 is out of range for axis 0 of size 2 (valid range [-2, 2))");
}

TEST(Errors, TensorConstructorRejectsBadShapes) {
  EXPECT_THROW(multigather::Tensor(DType::kFloat32, {2, -1}), multigather::InvalidArgumentError);
  EXPECT_THROW(multigather::Tensor(DType::kFloat64, {std::int64_t{1} << 62, 4}), multigather::InvalidArgumentError);
  EXPECT_THROW(multigather::Tensor(static_cast<DType>(50), {2}), multigather::TypeMismatchError);
}

}  // namespace
