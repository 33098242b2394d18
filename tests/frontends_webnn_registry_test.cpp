// webnn.* edge cases beyond the WPT vectors (unsigned indices, clamp after wrap-once, strict
// gatherElements), the registry (every op lowers, explains and runs; attributes typed with
// defaults; exact attribute errors) and the gather_multiaxis entry.
#include <set>

#include "multigather/frontends/webnn.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;

TEST(Webnn, ClampAfterWrapOnceAndUnsignedIndices) {
  const Tensor x = f32({4}, {10, 11, 12, 13});
  expect_op("webnn.gather", x, i32({5}, {-1, -4, -5, 4, 100}), {}, {5}, {13, 10, 10, 13, 13});
  Tensor big(DType::kUInt32, Dims{1});
  big.data_as<std::uint32_t>()[0] = UINT32_MAX;  // never negative: clamps to N-1
  expect_op("webnn.gather", x, big, {}, {1}, {13});
  expect_op("webnn.gatherND", f32({2, 2}, iota(4)), make_tensor(DType::kUInt32, {1, 2}, {1, 9}), {}, {1}, {3});
}

TEST(Webnn, Errors) {
  expect_error("webnn.gather", f32({2, 3}, iota(6)), i32({1}, {0}), {{"axis", "-1"}}, StatusCode::kInvalidArgument,
               "webnn.gather: axis = -1 must be in [0, 2) (an unsigned long less than the input rank 2)");
  expect_error("webnn.gatherElements", f32({2, 3}, iota(6)), i32({2, 2}, {0, 0, 0, 0}), {{"axis", "0"}},
               StatusCode::kInvalidArgument,
               "webnn.gatherElements: indices.shape[1] = 2 and input.shape[1] = 3 must be equal (only axis 0 may differ)");
  expect_error("webnn.gatherND", f32({2, 3}, iota(6)), make_tensor(DType::kUInt64, {1, 1}, {0}), {},
               StatusCode::kTypeError,
               "webnn.gatherND: indices dtype uint64 is not supported (webnn.gatherND accepts int32, uint32, int64)");
}

TEST(Registry, EveryOpOfSpecSection2IsRegistered) {
  const std::set<std::string> want = {
      "gather_multiaxis", "onnx.Gather", "onnx.GatherElements", "onnx.GatherND", "torch.gather", "torch.take",
      "torch.take_along_dim", "torch.index_select", "numpy.take", "numpy.take_along_axis", "numpy.advanced_index",
      "tf.gather", "tf.gather_nd", "jax.numpy.take", "jax.numpy.take_along_axis", "coreml.gather",
      "coreml.gather_along_axis", "coreml.gather_nd", "tosa.gather", "tensor.gather", "tcp.gather",
      "tcp.gather_nd", "stablehlo.gather", "webnn.gather", "webnn.gatherElements", "webnn.gatherND",
      "dml.Gather", "dml.GatherElements", "dml.GatherND"};
  std::set<std::string> have;
  for (const OpSpec& op : op_registry()) {
    if (op.kind != OpKind::kGather) continue;
    EXPECT_TRUE(have.insert(op.name).second) << "duplicate " << op.name;
    EXPECT_FALSE(op.formula.empty()) << op.name;
    EXPECT_FALSE(op.source.empty()) << op.name;
    bool known_class = false;
    for (const auto& [cls, what] : equivalence_classes()) known_class |= cls == op.equivalence_class;
    EXPECT_TRUE(known_class) << op.name << " " << op.equivalence_class;
    EXPECT_EQ(find_op(op.name), &op);
  }
  EXPECT_EQ(have, want);
  EXPECT_EQ(find_op("onnx.Gatherr"), nullptr);
  const std::string listing = list_ops();
  EXPECT_NE(listing.find("nd: multiple contiguous axes block gather"), std::string::npos);
  EXPECT_NE(listing.find("--batch-dims (int, default 0)"), std::string::npos);
}

TEST(Registry, AttributesAreTypedWithDefaults) {
  const OpSpec* op = find_op("tf.gather");
  ASSERT_NE(op, nullptr);
  AttributeValues v;
  ASSERT_TRUE(resolve_attributes(*op, {{"batch-dims", "1"}}, &v).ok());
  EXPECT_EQ(v.get_int("batch_dims"), 1);
  EXPECT_FALSE(v.get_optional_int("axis").has_value());
  EXPECT_EQ(v.get_enum("index_mode"), "error");
  EXPECT_EQ(v.to_string(), "axis=none batch_dims=1 index_mode=error");
  Status s = resolve_attributes(*op, {{"batch_dims", "1"}, {"batch_dims", "2"}}, &v);
  EXPECT_EQ(s.message(), "tf.gather: attribute 'batch_dims' is given twice");
  const OpSpec* shlo = find_op("stablehlo.gather");
  s = resolve_attributes(*shlo, {{"slice_sizes", "1,x"}}, &v);
  EXPECT_EQ(s.message(), "stablehlo.gather: attribute slice_sizes: '1,x' is not a list of integers (expected a "
                         "comma-separated list like 2,1; empty: '')");
  ASSERT_TRUE(resolve_attributes(*shlo, {{"slice_sizes", "[1, 2]"}}, &v).ok());
  EXPECT_EQ(v.get_ints("slice_sizes"), (std::vector<std::int64_t>{1, 2}));
  s = resolve_attributes(*find_op("coreml.gather"), {{"validate_indices", "maybe"}}, &v);
  EXPECT_EQ(s.message(), "coreml.gather: attribute validate_indices: 'maybe' is not a bool (expected true/false, "
                         "1/0, yes/no, on/off)");
  Lowering l;
  s = lower_op("onnx.Gatherr", TensorView(), TensorView(), {}, &l);
  EXPECT_EQ(s.message(), "unknown op 'onnx.Gatherr' (did you mean onnx.Gather?)");
}

TEST(Registry, EveryOpExplainsFromShapesAlone) {
  std::set<std::string> seen;
  for (const ExplainCase& c : explain_cases()) {
    std::string text;
    const Status s = explain_op(c.op, c.x, DType::kFloat32, c.i, DType::kInt64, c.a, &text);
    ASSERT_TRUE(s.ok()) << c.op << ": " << s.message();
    EXPECT_NE(text.find("lowered call:"), std::string::npos) << c.op;
    EXPECT_NE(text.find("formula:"), std::string::npos) << c.op;
    seen.insert(c.op);
  }
  for (const ExplainCase& c : testing::segment_explain_cases()) {
    std::string text;
    const Status s = explain_op(c.op, c.x, DType::kFloat32, c.i, DType::kInt64, c.a, &text);
    ASSERT_TRUE(s.ok()) << c.op << ": " << s.message();
    EXPECT_NE(text.find("lowered call:       scatter_multiaxis(updates"), std::string::npos) << c.op << text;
    EXPECT_NE(text.find("formula:"), std::string::npos) << c.op;
    seen.insert(c.op);
  }
  for (const ScatterExplainCase& c : scatter_explain_cases()) {
    std::string text;
    const Status s = explain_op(c.op, c.x, DType::kFloat32, c.i, DType::kInt64, c.u, c.a, &text);
    ASSERT_TRUE(s.ok()) << c.op << ": " << s.message();
    EXPECT_NE(text.find("lowered call:       scatter_multiaxis(updates"), std::string::npos) << c.op << text;
    EXPECT_NE(text.find("reduction:"), std::string::npos) << c.op;
    EXPECT_NE(text.find("formula:"), std::string::npos) << c.op;
    // The core output of a scatter has its core input's shape, and says how many elements.
    Lowering l;
    ASSERT_TRUE(lower_op(c.op, TensorView(nullptr, DType::kFloat32, c.x), TensorView(nullptr, DType::kInt64, c.i),
                         TensorView(nullptr, DType::kFloat32, c.u), c.a, &l).ok());
    std::int64_t n = 0;
    element_count(l.core_output_shape, &n);
    EXPECT_NE(text.find("core output:        " + to_string(l.core_output_shape) + "  (" + std::to_string(n) +
                        " elements)"), std::string::npos) << c.op << text;
    seen.insert(c.op);
  }
  EXPECT_EQ(seen.size(), op_registry().size());
}

TEST(Registry, ScatterOpsAreRegisteredAndNeedUpdates) {
  std::set<std::string> have;
  for (const OpSpec& op : op_registry()) {
    if (op.kind != OpKind::kScatter) continue;
    have.insert(op.name);
    EXPECT_NE(op.lower_scatter, nullptr) << op.name;
    EXPECT_EQ(op.lower, nullptr) << op.name;
    Lowering l;
    const Status s = lower_op(op.name, TensorView(nullptr, DType::kFloat32, Dims{3}),
                              TensorView(nullptr, DType::kInt64, Dims{2}), {}, &l);
    EXPECT_EQ(s.message(), op.name + " is a scatter: it needs " + op.updates_name +
                               " (the values it writes), besides " + op.input_name + " and " + op.indices_name);
  }
  const std::set<std::string> want = {"scatter_multiaxis", "onnx.ScatterElements", "onnx.ScatterND",
                                      "torch.scatter", "torch.scatter_add", "torch.scatter_reduce",
                                      "torch.index_add", "numpy.put_along_axis", "numpy.add_at",
                                      "webnn.scatterElements", "webnn.scatterND",
                                      "tf.tensor_scatter_nd_update", "tf.tensor_scatter_nd_add",
                                      "tf.tensor_scatter_nd_sub", "tf.tensor_scatter_nd_min",
                                      "tf.tensor_scatter_nd_max", "tf.scatter_nd", "coreml.scatter",
                                      "coreml.scatter_along_axis", "coreml.scatter_nd", "tosa.scatter",
                                      "dml.ScatterElements", "dml.ScatterND", "tensor.scatter",
                                      "numpy.multiply_at", "numpy.minimum_at", "numpy.maximum_at",
                                      "torch.index_copy", "torch.index_fill", "torch.put", "numpy.put",
                                      "jax.at.set", "jax.at.add", "jax.at.subtract", "jax.at.multiply",
                                      "jax.at.min", "jax.at.max", "stablehlo.scatter", "torch.index_put"};
  EXPECT_EQ(have, want);
  Lowering l;
  const Status s = lower_op("onnx.Gather", TensorView(nullptr, DType::kFloat32, Dims{3}),
                            TensorView(nullptr, DType::kInt64, Dims{2}), TensorView(nullptr, DType::kFloat32, Dims{2}),
                            {}, &l);
  EXPECT_EQ(s.message(), "onnx.Gather is a gather: it takes no updates");
}

TEST(Registry, GatherMultiaxisEntry) {
  // The seed's example: input [4,2,1,2], indices [1,3,2,2], axes [1] -> [4,3,2,2].
  const Lowering l = lower_shapes("gather_multiaxis", {4, 2, 1, 2}, {1, 3, 2, 2}, {{"axes", "1"}});
  EXPECT_EQ(to_string(l.output_shape), "[4,3,2,2]");
  expect_op("gather_multiaxis", f32({2, 3}, iota(6)), i64({2, 2}, {1, 2, 0, 7}),
            {{"axes", "0,1"}, {"index_mode", "fill"}, {"fill_value", "-1"}}, {2, 1}, {5, -1});
  expect_error("gather_multiaxis", f32({2, 3}, iota(6)), i64({1, 1}, {5}), {{"axes", "1"}}, StatusCode::kOutOfRange,
               "indices[0,0] = 5 is out of range for axis 1 of size 3 (valid range [-3, 3))");
}

TEST(Registry, ThrowingConvenienceMapsStatusToExceptions) {
  EXPECT_THROW(run_op("torch.gather", f32({2}, {1, 2}).view(), i64({1}, {-1}).view()), IndexOutOfRangeError);
  EXPECT_THROW(run_op("onnx.GatherND", f32({2}, {1, 2}).view(), i32({1, 1}, {0}).view()), TypeMismatchError);
  EXPECT_THROW(run_op("onnx.Gather", f32({2}, {1, 2}).view(), i64({1}, {0}).view(), {{"axis", "3"}}), InvalidArgumentError);
}

}  // namespace
}  // namespace multigather

namespace multigather {
namespace {

TEST(Registry, ViewsAboveTheMaximumRankAreRejectedBeforeAnyLowering) {
  const Dims big = Dims::filled(kMaxRank + 1, 1);
  const TensorView x(nullptr, DType::kFloat32, big, big);
  const TensorView i(nullptr, DType::kInt64, Dims{1});
  Lowering l;
  for (const OpSpec& op : op_registry()) {
    AttributeValues defaults;
    ASSERT_TRUE(resolve_attributes(op, {}, &defaults).ok()) << op.name;
    const Status s = op.kind == OpKind::kScatter ? op.lower_scatter(x, i, x, defaults, &l)
                                                 : op.lower(x, i, defaults, &l);
    // The core op is the identity lowering: its messages are the core's own, unprefixed.
    const std::string prefix = op.family == "core" ? "" : op.name + ": ";
    EXPECT_EQ(s.message(), prefix + "input rank 17 exceeds the maximum rank 16") << op.name;
  }
}

}  // namespace
}  // namespace multigather
