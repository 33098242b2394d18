// Pictures of a gather (multigather/lowering.hpp: trace_lowering, position_indices,
// explain_svg). The mapping a picture encodes (each output cell's data-input) is checked against
// the kernel's own result on the same operands: the input holds its own flat positions
// (np.arange), so the value the kernel writes into an output cell IS the input position it took.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "multigather/ops.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

using testing::explain_cases;
using testing::ExplainCase;

Tensor arange(const Dims& shape) {
  Tensor t(DType::kInt64, shape);
  for (std::int64_t e = 0; e < t.numel(); ++e) t.data_as<std::int64_t>()[e] = e;
  return t;
}

Tensor index_tensor(DType dtype, const Dims& shape, const std::vector<std::int64_t>& values) {
  Tensor t(DType::kInt64, shape);
  EXPECT_EQ(t.numel(), static_cast<std::int64_t>(values.size()));
  std::memcpy(t.data(), values.data(), values.size() * 8);
  if (dtype == DType::kInt64) return t;
  Tensor u(dtype, shape);
  for (std::int64_t e = 0; e < t.numel(); ++e) {
    const std::int64_t v = values[static_cast<std::size_t>(e)];
    if (dtype == DType::kInt32) { const auto x = static_cast<std::int32_t>(v); std::memcpy(u.data_as<std::byte>() + 4 * e, &x, 4); }
  }
  return u;
}

// data-input of the output cell at framework position f, read from the SVG text.
std::int64_t picture_input_of(const std::string& svg, std::int64_t f) {
  const std::string key = "id=\"out-" + std::to_string(f) + "\" class=\"output\" data-output=\"" +
                          std::to_string(f) + "\" data-input=\"";
  const std::size_t at = svg.find(key);
  if (at == std::string::npos) return -2;
  return std::stoll(svg.substr(at + key.size(), 24));
}

// The picture's mapping, cell by cell, against the kernel's output on an arange input.
void expect_picture_matches_kernel(const std::string& op, const Tensor& input, const Tensor& indices,
                                   const Attributes& attrs, const std::string& svg, std::int64_t fill = -1) {
  Tensor out;
  const Status s = run_op(op, input.view(), indices.view(), attrs, &out);
  ASSERT_TRUE(s.ok()) << op << ": " << s.message();
  ASSERT_EQ(out.dtype(), DType::kInt64);
  ASSERT_GT(out.numel(), 0) << op;
  for (std::int64_t f = 0; f < out.numel(); ++f) {
    const std::int64_t got = out.data_as<std::int64_t>()[f];
    const std::int64_t drawn = picture_input_of(svg, f);
    if (drawn == -1) {
      EXPECT_EQ(got, fill) << op << ": output cell " << f << " is drawn filled";
    } else {
      EXPECT_EQ(drawn, got) << op << ": output cell " << f << " is drawn taking input " << drawn
                            << " but the kernel wrote input " << got;
    }
  }
}

TEST(ExplainSvg, EveryRegistryOpDrawsAndItsPictureAgreesWithTheKernel) {
  std::vector<std::string> drawn;
  for (const ExplainCase& c : explain_cases()) {
    const DType idt = std::string(c.op) == "tosa.gather" ? DType::kInt32 : DType::kInt64;
    Tensor indices;
    const Status p = position_indices(c.op, c.x, DType::kInt64, c.i, idt, c.a, &indices);
    ASSERT_TRUE(p.ok()) << c.op << ": " << p.message();
    const Tensor input = arange(c.x);
    // Positions mode (shapes alone): the cells show positions, the indices are position_indices.
    std::string positions, values;
    Status s = explain_svg(c.op, TensorView(nullptr, DType::kInt64, c.x), TensorView(nullptr, idt, c.i), c.a, {}, &positions);
    ASSERT_TRUE(s.ok()) << c.op << ": " << s.message();
    expect_picture_matches_kernel(c.op, input, indices, c.a, positions);
    // Values mode: the same arrays given.
    s = explain_svg(c.op, input.view(), indices.view(), c.a, {}, &values);
    ASSERT_TRUE(s.ok()) << c.op << ": " << s.message();
    expect_picture_matches_kernel(c.op, input, indices, c.a, values);
    EXPECT_NE(positions.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
    EXPECT_NE(positions.find(std::string(c.op) + "("), std::string::npos) << "the framework call caption";
    EXPECT_NE(positions.find("lowered: gather_multiaxis("), std::string::npos);
    EXPECT_NE(positions.find("positions: input cells show"), std::string::npos);
    EXPECT_NE(values.find("values: cells show"), std::string::npos);
    drawn.push_back(c.op);
  }
  std::size_t gathers = 0;
  for (const OpSpec& op : op_registry()) gathers += op.kind == OpKind::kGather;
  EXPECT_EQ(drawn.size(), gathers) << "every registry gather has a picture case";
}

TEST(ExplainSvg, TraceAgreesWithTheReferenceKernelInEveryIndexMode) {
  // input [3,4] arange, axes [1], indices hold negative and out-of-range values.
  const Tensor input = arange({3, 4});
  const Tensor indices = index_tensor(DType::kInt64, {3, 3}, {-1, 5, 2, -6, 0, 3, 9, -2, 1});
  struct Case { const char* mode; bool negative; std::vector<const char*> resolutions; };
  const std::vector<Case> cases = {
      {"clamp", true, {"negative", "clamped", "in-range", "clamped", "in-range", "in-range", "clamped", "negative", "in-range"}},
      {"clamp", false, {"clamped", "clamped", "in-range", "clamped", "in-range", "in-range", "clamped", "clamped", "in-range"}},
      {"wrap", true, {"wrapped", "wrapped", "in-range", "wrapped", "in-range", "in-range", "wrapped", "wrapped", "in-range"}},
      {"fill", true, {"negative", "filled", "in-range", "filled", "in-range", "in-range", "filled", "negative", "in-range"}},
  };
  for (const Case& c : cases) {
    Attributes a;
    a.set("axes", "1").set("index_mode", c.mode).set("negative_indices", c.negative ? "true" : "false").set("fill_value", "-7");
    Lowering l;
    ASSERT_TRUE(lower_op("gather_multiaxis", input.view(), indices.view(), a, &l).ok());
    std::vector<CellTrace> cells;
    ASSERT_TRUE(trace_lowering(l, &cells).ok());
    const Tensor expected = run_op("gather_multiaxis", input.view(), indices.view(), a);
    ASSERT_EQ(cells.size(), 9u);
    for (std::size_t n = 0; n < cells.size(); ++n) {
      const std::int64_t want = expected.data_as<std::int64_t>()[cells[n].framework_output];
      EXPECT_EQ(cells[n].input < 0 ? -7 : cells[n].input, want) << c.mode << " cell " << n;
      EXPECT_EQ(resolution_name(cells[n].resolution), c.resolutions[n]) << c.mode << " cell " << n;
      ASSERT_EQ(cells[n].indices.size(), 1u);
      EXPECT_EQ(cells[n].indices[0], static_cast<std::int64_t>(n)) << "the indices cell that gave the coordinate";
    }
    std::string svg;
    ASSERT_TRUE(explain_svg("gather_multiaxis", input.view(), indices.view(), a, {}, &svg).ok());
    expect_picture_matches_kernel("gather_multiaxis", input, indices, a, svg, -7);
    if (std::string(c.mode) == "fill") {
      EXPECT_NE(svg.find("data-resolution=\"filled\""), std::string::npos);
      EXPECT_NE(svg.find("fill=\"url(#filled)\""), std::string::npos);
    }
  }
}

TEST(ExplainSvg, TwoCoordinatesAndTheIndicesCellsThatGaveThem) {
  // tf.gather_nd: indices [2,2] hold (row, col) pairs; the core folds them last (c = 2).
  const Tensor input = arange({3, 4});
  const Tensor indices = index_tensor(DType::kInt64, {2, 2}, {2, 1, 0, 3});
  Lowering l;
  ASSERT_TRUE(lower_op("tf.gather_nd", input.view(), indices.view(), {}, &l).ok());
  std::vector<CellTrace> cells;
  ASSERT_TRUE(trace_lowering(l, &cells).ok());
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].values, (std::vector<std::int64_t>{2, 1}));
  EXPECT_EQ(cells[1].values, (std::vector<std::int64_t>{0, 3}));
  std::string svg;
  ASSERT_TRUE(explain_svg("tf.gather_nd", input.view(), indices.view(), {}, {}, &svg).ok());
  EXPECT_EQ(picture_input_of(svg, 0), 9);
  EXPECT_EQ(picture_input_of(svg, 1), 3);
  EXPECT_NE(svg.find("data-output=\"0\" data-input=\"9\" data-indices=\"0,1\""), std::string::npos) << svg;
  EXPECT_NE(svg.find("data-output=\"1\" data-input=\"3\" data-indices=\"2,3\""), std::string::npos);
}

TEST(ExplainSvg, ErrorsNameTheRule) {
  std::string svg;
  Attributes a;
  a.set("axis", "1");
  Status s = explain_svg("onnx.Gather", TensorView(nullptr, DType::kFloat32, {64, 64}),
                         TensorView(nullptr, DType::kInt64, {2}), a, {}, &svg);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "the input has 4096 cells; pictures are drawn up to 400 cells (choose smaller shapes)");
  SvgOptions small;
  small.max_cells = 100;
  s = explain_svg("onnx.Gather", TensorView(nullptr, DType::kFloat32, {4, 20}),
                  TensorView(nullptr, DType::kInt64, {30}), a, small, &svg);
  EXPECT_EQ(s.message(), "the output has 120 cells; pictures are drawn up to 100 cells (choose smaller shapes)");
  SvgOptions far;
  far.cells = {8};
  s = explain_svg("onnx.Gather", TensorView(nullptr, DType::kFloat32, {4, 4}),
                  TensorView(nullptr, DType::kInt64, {2}), a, far, &svg);
  EXPECT_EQ(s.message(), "cells: output cell 8 is outside the output, which has 8 cells (valid range [0, 8), C order of [4,2])");
  // An index out of range under the framework's error rule: the framework's message.
  const Tensor input = arange({4, 4});
  const Tensor bad = index_tensor(DType::kInt64, {2}, {1, 9});
  s = explain_svg("onnx.Gather", input.view(), bad.view(), a, {}, &svg);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_NE(s.message().find("onnx.Gather: indices[1] = 9 is out of range"), std::string::npos) << s.message();
}

TEST(ExplainSvg, DeterministicAndArrowsForChosenCells) {
  Attributes a;
  a.set("axes", "1");
  std::string one, two;
  ASSERT_TRUE(explain_svg("gather_multiaxis", TensorView(nullptr, DType::kFloat32, {4, 2, 1, 2}),
                          TensorView(nullptr, DType::kInt64, {1, 3, 2, 2}), a, {}, &one).ok());
  ASSERT_TRUE(explain_svg("gather_multiaxis", TensorView(nullptr, DType::kFloat32, {4, 2, 1, 2}),
                          TensorView(nullptr, DType::kInt64, {1, 3, 2, 2}), a, {}, &two).ok());
  EXPECT_EQ(one, two);
  const auto count = [](const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(one, "class=\"link\""), 4u) << "48 output cells: 4 lookups drawn by default";
  SvgOptions chosen;
  chosen.cells = {5, 47};
  ASSERT_TRUE(explain_svg("gather_multiaxis", TensorView(nullptr, DType::kFloat32, {4, 2, 1, 2}),
                          TensorView(nullptr, DType::kInt64, {1, 3, 2, 2}), a, chosen, &two).ok());
  EXPECT_EQ(count(two, "class=\"link\""), 2u);
  EXPECT_NE(two.find("class=\"link\" data-output=\"5\""), std::string::npos);
  EXPECT_NE(two.find("class=\"index-link\" data-output=\"47\""), std::string::npos);
  // Broadcast dimensions are named under the grids.
  EXPECT_NE(one.find("indexed: d1; broadcast: d2 (1 -&gt; 2)"), std::string::npos);
  EXPECT_NE(one.find("broadcast: d0 (1 -&gt; 4)"), std::string::npos);
}

}  // namespace
}  // namespace multigather
