// Pictures of a gather (multigather/lowering.hpp: trace_lowering, position_indices,
// explain_svg). The mapping a picture encodes (each output cell's data-input) is checked against
// the kernel's own result on the same operands: the input holds its own flat positions
// (np.arange), so the value the kernel writes into an output cell IS the input position it took.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "multigather/ops.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

using testing::explain_cases;
using testing::ExplainCase;
using testing::scatter_explain_cases;
using testing::ScatterExplainCase;

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

// ---- Scatters -----------------------------------------------------------------------------------

// The attributes of every element `tag` of class `cls` in the SVG text.
std::vector<std::map<std::string, std::string>> elements(const std::string& svg, const std::string& cls,
                                                         const std::string& tag = "rect") {
  std::vector<std::map<std::string, std::string>> found;
  const std::regex element("<" + tag + " ([^>]*)/>"), attr("([a-z-]+)=\"([^\"]*)\"");
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), element); it != std::sregex_iterator(); ++it) {
    const std::string body = (*it)[1];
    std::map<std::string, std::string> a;
    for (auto at = std::sregex_iterator(body.begin(), body.end(), attr); at != std::sregex_iterator(); ++at) {
      a[(*at)[1]] = (*at)[2];
    }
    if (cls.empty() ? a.count("id") > 0 : a["class"] == cls) found.push_back(std::move(a));
  }
  return found;
}

std::vector<std::int64_t> list_of(const std::string& text) {
  std::vector<std::int64_t> v;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t comma = text.find(',', at);
    v.push_back(std::stoll(text.substr(at, comma - at)));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return v;
}

float element_f32(const TensorView& v, std::int64_t core) {
  std::int64_t off = 0, rest = core;
  for (int d = v.rank() - 1; d >= 0; --d) {
    if (v.shape[d] > 0) {
      off += (rest % v.shape[d]) * v.strides[d];
      rest /= v.shape[d];
    }
  }
  return static_cast<const float*>(v.data)[off];
}

float combine(Reduction r, float a, float b) {
  switch (r) {
    case Reduction::kNone: return b;
    case Reduction::kAdd: return a + b;
    case Reduction::kMul: return a * b;
    case Reduction::kMin: return std::fmin(a, b);
    case Reduction::kMax: return std::fmax(a, b);
  }
  return b;
}

// The scatter picture's mapping against the kernel: every output cell drawn, with the
// positions of G the picture says reach it (data-update-cells, in combine order), combined by
// the lowering's reduction from the input cell (data-input) or from the first update, must be
// bit for bit what the kernel wrote there; every output element the picture does not draw (a
// partial write's rest) keeps the framework input.
void expect_scatter_picture_matches_kernel(const std::string& op, const Tensor& input, const Tensor& indices,
                                           const Tensor& updates, const Attributes& attrs, const std::string& svg) {
  Lowering l;
  Status s = lower_op(op, input.view(), indices.view(), updates.view(), attrs, &l);
  ASSERT_TRUE(s.ok()) << op << ": " << s.message();
  Tensor out;
  s = run_op(op, input.view(), indices.view(), updates.view(), attrs, &out);
  ASSERT_TRUE(s.ok()) << op << ": " << s.message();
  ASSERT_EQ(out.dtype(), DType::kFloat32);
  // The output starts from the core input: the framework's, a copy the lowering owns, or a
  // constant (tf.scatter_nd's zeros: one element, data-input 0).
  const float* start = l.owned_input ? l.owned_input->data_as<float>()
                       : l.input_is_constant ? static_cast<const float*>(l.input.data) : input.data_as<float>();
  const auto cells = elements(svg, "output");
  ASSERT_EQ(static_cast<std::int64_t>(cells.size()), l.input.numel()) << op;
  std::set<std::int64_t> drawn;
  std::size_t reached = 0;
  for (const auto& c : cells) {
    const std::int64_t f = std::stoll(c.at("data-output"));
    drawn.insert(f);
    const std::vector<std::int64_t> u = list_of(c.at("data-update-cells"));
    float want = start[std::stoll(c.at("data-input"))];
    for (std::size_t i = 0; i < u.size(); ++i) {
      float v = element_f32(l.updates, u[i]);
      // the lowering's step on the updates (torch.index_add's alpha, a subtraction's negation)
      if (l.updates_step.kind == UpdatesStep::Kind::kScale) {
        const Scalar& a = l.updates_step.factor;
        v *= static_cast<float>(a.kind == Scalar::Kind::kFloat ? a.f : a.kind == Scalar::Kind::kInt ? static_cast<double>(a.i)
                                                                                                    : static_cast<double>(a.u));
      }
      if (l.updates_step.kind == UpdatesStep::Kind::kNegate) v = -v;
      want = i == 0 && !l.include_input && l.reduction != Reduction::kNone ? v : combine(l.reduction, want, v);
    }
    EXPECT_EQ(c.at("data-combine"), u.empty() ? "kept" : std::string(reduction_name(l.reduction))) << op;
    const float got = out.data_as<float>()[f];
    EXPECT_EQ(std::memcmp(&got, &want, 4), 0) << op << ": output cell " << f << " is drawn as " << want
                                               << " (updates " << c.at("data-update-cells") << ") but the kernel wrote " << got;
    reached += !u.empty();
  }
  for (std::int64_t f = 0; f < out.numel(); ++f) {
    if (drawn.count(f) == 0) EXPECT_EQ(out.data_as<float>()[f], input.data_as<float>()[f]) << op << ": undrawn cell " << f;
  }
  EXPECT_GT(reached, 0u) << op << ": no update drawn reaching the output";
}

// Distinct small values: input e + 1, updates 10 (e + 1) (exact in float32 and in the labels).
Tensor markers(const Dims& shape, float scale) {
  Tensor t(DType::kFloat32, shape);
  for (std::int64_t e = 0; e < t.numel(); ++e) t.data_as<float>()[e] = scale * static_cast<float>(e + 1);
  return t;
}

TEST(ExplainSvgScatter, EveryScatterOpDrawsAndItsPictureAgreesWithTheKernel) {
  for (const ScatterExplainCase& c : scatter_explain_cases()) {
    SCOPED_TRACE(c.op);
    const DType idt = std::string(c.op) == "tosa.scatter" ? DType::kInt32 : DType::kInt64;
    Tensor indices;
    const Status p = position_indices(c.op, c.x, DType::kFloat32, c.i, idt, c.u, c.a, &indices);
    ASSERT_TRUE(p.ok()) << p.message();
    const Tensor input = markers(c.x, 1), updates = markers(c.u, 10);
    std::string positions, values;
    Status s = explain_svg(c.op, TensorView(nullptr, DType::kFloat32, c.x), TensorView(nullptr, idt, c.i),
                           TensorView(nullptr, DType::kFloat32, c.u), c.a, {}, &positions);
    ASSERT_TRUE(s.ok()) << s.message();
    s = explain_svg(c.op, input.view(), indices.view(), updates.view(), c.a, {}, &values);
    ASSERT_TRUE(s.ok()) << s.message();
    expect_scatter_picture_matches_kernel(c.op, input, indices, updates, c.a, values);
    // Shapes alone draw the same mapping (position_indices are the indices).
    const auto a = elements(positions, "output"), b = elements(values, "output");
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t n = 0; n < a.size(); ++n) EXPECT_EQ(a[n].at("data-updates"), b[n].at("data-updates"));
    EXPECT_NE(positions.find(std::string(c.op) + "("), std::string::npos) << "the framework call caption";
    EXPECT_NE(positions.find("lowered: scatter_multiaxis(input "), std::string::npos);
    EXPECT_NE(positions.find("lowered: for every o of G in row-major order: output["), std::string::npos);
    EXPECT_NE(positions.find("update cells show u + their C-order position"), std::string::npos);
    EXPECT_NE(values.find("; updates as given"), std::string::npos);
    EXPECT_NE(positions.find(": how the scatter moves data</title>"), std::string::npos);
  }
}

TEST(ExplainSvgScatter, EveryRegistryOpDraws) {
  std::set<std::string> drawn;
  for (const OpSpec& op : op_registry()) {
    std::string svg;
    Status s = InvalidArgument("no picture case for " + op.name);
    if (op.kind == OpKind::kScatter) {
      for (const ScatterExplainCase& c : scatter_explain_cases()) {
        if (op.name != c.op) continue;
        s = explain_svg(c.op, TensorView(nullptr, DType::kFloat32, c.x),
                        TensorView(nullptr, op.name == "tosa.scatter" ? DType::kInt32 : DType::kInt64, c.i),
                        TensorView(nullptr, DType::kFloat32, c.u), c.a, {}, &svg);
      }
    } else {
      for (const ExplainCase& c : op.kind == OpKind::kSegment ? testing::segment_explain_cases() : explain_cases()) {
        if (op.name != c.op) continue;
        s = explain_svg(c.op, TensorView(nullptr, DType::kFloat32, c.x),
                        TensorView(nullptr, op.name == "tosa.gather" ? DType::kInt32 : DType::kInt64, c.i), c.a, {}, &svg);
      }
    }
    ASSERT_TRUE(s.ok()) << op.name << ": " << s.message();
    EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\"", 0), 0u);
    EXPECT_EQ(svg.substr(svg.size() - 7), "</svg>\n");
    EXPECT_FALSE(elements(svg, "output").empty()) << op.name;
    drawn.insert(op.name);
  }
  EXPECT_EQ(drawn.size(), op_registry().size());
}

TEST(ExplainSvgScatter, DuplicatesLastWinsDropAndResolutionsAgainstTheKernel) {
  // input [5], axes [0]: -1 (negative: 4), 7 (out of range), 2 twice, 0, -9 (out of range).
  const Tensor input = markers({5}, 1), updates = markers({6}, 10);
  const Tensor indices = index_tensor(DType::kInt64, {6}, {-1, 7, 2, 2, 0, -9});
  struct Case { const char* mode; const char* reduction; std::vector<std::vector<std::int64_t>> reach; const char* dropped;
                std::vector<const char*> update_res; };
  const std::vector<Case> cases = {
      // out[0] <- o4; out[2] <- o2, o3 (none: o3 wins); out[4] <- o0; o1, o5 dropped.
      {"drop", "none", {{4}, {}, {2, 3}, {}, {0}}, "1,5", {"negative", "dropped", "in-range", "in-range", "in-range", "dropped"}},
      {"drop", "add", {{4}, {}, {2, 3}, {}, {0}}, "1,5", {"negative", "dropped", "in-range", "in-range", "in-range", "dropped"}},
      // clamp: 7 -> 4, -9 + 5 = -4 -> 0.
      {"clamp", "none", {{4, 5}, {}, {2, 3}, {}, {0, 1}}, "", {"negative", "clamped", "in-range", "in-range", "in-range", "clamped"}},
      // wrap: -1 -> 4, 7 -> 2, -9 -> 1.
      {"wrap", "max", {{4}, {5}, {1, 2, 3}, {}, {0}}, "", {"wrapped", "wrapped", "in-range", "in-range", "in-range", "wrapped"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.mode) + " " + c.reduction);
    Attributes a;
    a.set("axes", "0").set("index_mode", c.mode).set("reduction", c.reduction);
    std::string svg;
    const Status s = explain_svg("scatter_multiaxis", input.view(), indices.view(), updates.view(), a, {}, &svg);
    ASSERT_TRUE(s.ok()) << s.message();
    expect_scatter_picture_matches_kernel("scatter_multiaxis", input, indices, updates, a, svg);
    const auto out = elements(svg, "output");
    ASSERT_EQ(out.size(), 5u);
    for (std::size_t f = 0; f < 5; ++f) EXPECT_EQ(list_of(out[f].at("data-updates")), c.reach[f]) << "output cell " << f;
    const auto scatter = elements(svg, "", "g");
    ASSERT_EQ(scatter.size(), 1u);
    EXPECT_EQ(scatter[0].at("data-dropped"), c.dropped);
    EXPECT_EQ(scatter[0].at("data-reduction"), c.reduction);
    const auto upd = elements(svg, "update");
    ASSERT_EQ(upd.size(), 6u);
    for (std::size_t o = 0; o < 6; ++o) {
      // The update cell's border is the style of its lookup's resolution.
      const std::string want = std::string(c.update_res[o]);
      const std::string stroke = want == "negative" ? "#1f77b4" : want == "clamped" ? "#e67e00" : want == "wrapped" ? "#8e44ad"
                               : want == "dropped" ? "#7f7f7f" : "#555555";
      EXPECT_EQ(upd[o].at("stroke"), stroke) << "update " << o << " should be " << want;
    }
    // Duplicates: the cell o2 and o3 reach is framed red with "xN"; under none, o2 is overwritten.
    EXPECT_EQ(out[2].at("stroke"), "#c0392b");
    EXPECT_NE(svg.find(">x" + std::to_string(c.reach[2].size()) + "</text>"), std::string::npos);
    if (std::string(c.reduction) == "none") {
      EXPECT_EQ(upd[2].at("data-status"), "overwritten");
      EXPECT_EQ(upd[3].at("data-status"), "applied");
    }
    if (std::string(c.mode) == "drop") {
      EXPECT_EQ(upd[1].at("data-status"), "dropped");
      EXPECT_EQ(upd[1].at("fill"), "url(#dropped)");
    }
  }
}

TEST(ExplainSvgScatter, BroadcastIncludeInputAndPartialWrites) {
  // Input broadcasting: input [4,1] and G [2,3] (indices [2,3] along axis 0): the 3 updates of
  // each row reach one cell; include_input=false starts from the first of them.
  const Tensor input = markers({4, 1}, 1), updates = markers({2, 3}, 10);
  const Tensor indices = index_tensor(DType::kInt64, {2, 3}, {3, 3, 3, 1, 1, 1});
  Attributes a;
  a.set("axes", "0").set("reduction", "add").set("include_input", "false");
  std::string svg;
  const Status s = explain_svg("scatter_multiaxis", input.view(), indices.view(), updates.view(), a, {}, &svg);
  ASSERT_TRUE(s.ok()) << s.message();
  expect_scatter_picture_matches_kernel("scatter_multiaxis", input, indices, updates, a, svg);
  EXPECT_NE(svg.find("broadcast: d1 (1 -&gt; 3)"), std::string::npos) << "the input-broadcast dimension is named";
  EXPECT_NE(svg.find(">x3</text>"), std::string::npos);
  EXPECT_NE(svg.find(">10.+20.+30.</text>"), std::string::npos) << "include_input=false: the sum starts from the first update";
  // A partial write (torch.scatter: index smaller than src on dim 1): the rest keeps the input.
  const Tensor x = markers({3, 4}, 1), src = markers({2, 3}, 10);
  const Tensor idx = index_tensor(DType::kInt64, {2, 2}, {2, 0, 1, 2});
  Attributes t;
  t.set("dim", "0");
  ASSERT_TRUE(explain_svg("torch.scatter", x.view(), idx.view(), src.view(), t, {}, &svg).ok());
  expect_scatter_picture_matches_kernel("torch.scatter", x, idx, src, t, svg);
  EXPECT_NE(svg.find("the leading part of the output [3,4]"), std::string::npos);
}

TEST(ExplainSvgScatter, ErrorsNameTheRule) {
  std::string svg;
  Attributes a;
  a.set("axes", "0");
  Status s = explain_svg("scatter_multiaxis", TensorView(nullptr, DType::kFloat32, {4, 3}), TensorView(nullptr, DType::kInt64, {2, 1}),
                         TensorView(nullptr, DType::kFloat32, {30, 30}), a, {}, &svg);
  EXPECT_EQ(s.message(), "the updates has 900 cells; pictures are drawn up to 400 cells (choose smaller shapes)");
  SvgOptions far;
  far.cells = {6};
  s = explain_svg("scatter_multiaxis", TensorView(nullptr, DType::kFloat32, {4, 3}), TensorView(nullptr, DType::kInt64, {2, 1}),
                  TensorView(nullptr, DType::kFloat32, {2, 3}), a, far, &svg);
  EXPECT_EQ(s.message(), "cells: position 6 is outside G (the scatter shape: one position per update), which has 6 cells "
                         "(valid range [0, 6), C order of [2,3])");
  s = explain_svg("onnx.ScatterElements", TensorView(nullptr, DType::kFloat32, {4, 3}), TensorView(nullptr, DType::kInt64, {2, 3}), {}, {}, &svg);
  EXPECT_EQ(s.message(), "onnx.ScatterElements is a scatter: it needs updates (the values it writes), besides data and indices");
  const Tensor input = markers({4}, 1), updates = markers({2}, 10);
  const Tensor bad = index_tensor(DType::kInt64, {2}, {1, 9});
  s = explain_svg("onnx.ScatterElements", input.view(), bad.view(), updates.view(), {}, {}, &svg);
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange) << s.message();
}

}  // namespace
}  // namespace multigather
