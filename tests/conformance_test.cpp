// Every vector of tests/data/conformance/ (WPT WebNN conformance + validation, ONNX node tests
// with concrete .pb data) through the op it names: exact output bytes, or the expected error.
#include <fstream>
#include <nlohmann/json.hpp>

#include "op_test_support.hpp"

namespace multigather {
namespace {

using nlohmann::json;
using testing::make_tensor;

json load(const std::string& file) {
  const std::string path = std::string(MULTIGATHER_CONFORMANCE_DIR) + "/" + file;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  json j;
  if (in.good()) in >> j;
  return j;
}

Dims shape_of(const json& t) {
  Dims d;
  for (const auto& v : t.at("shape")) d.push_back(v.get<std::int64_t>());
  return d;
}

DType dtype_of(const json& t) {
  const auto d = parse_dtype(t.at("dtype").get<std::string>());
  EXPECT_TRUE(d.has_value()) << t.at("dtype");
  return d.value_or(DType::kFloat32);
}

// Literal values -> bytes of the tensor's dtype (integers exactly, floats via float32 / half).
Tensor tensor_of(const json& t) {
  std::vector<double> values;
  for (const auto& v : t.at("data")) values.push_back(v.get<double>());
  return make_tensor(dtype_of(t), shape_of(t), values);
}

Attributes attrs_of(const json& c) {
  Attributes a;
  for (const auto& [name, value] : c.at("attrs").items()) {
    a.set(name, value.is_string() ? value.get<std::string>() : std::to_string(value.get<std::int64_t>()));
  }
  return a;
}

// Runs one vector; returns "" when it passes, else the reason.
std::string run_case(const json& c) {
  const std::string op = c.at("op");
  const Attributes attrs = attrs_of(c);
  const bool expect_error = c.at("expect_error").get<bool>();
  const bool has_data = c.at("input").at("data").is_array();
  if (!has_data) {  // validation vectors: shapes and dtypes only
    Lowering l;
    const TensorView x(nullptr, dtype_of(c.at("input")), shape_of(c.at("input")));
    const TensorView i(nullptr, dtype_of(c.at("indices")), shape_of(c.at("indices")));
    const Status s = c.contains("updates")
                         ? lower_op(op, x, i, TensorView(nullptr, dtype_of(c.at("updates")), shape_of(c.at("updates"))),
                                    attrs, &l)
                         : lower_op(op, x, i, attrs, &l);
    if (expect_error) return s.ok() ? "expected an error, got output " + to_string(l.output_shape) : "";
    if (!s.ok()) return "unexpected error: " + s.message();
    const Dims want = shape_of(c.at("expected"));
    return l.output_shape == want ? "" : "shape " + to_string(l.output_shape) + " != " + to_string(want);
  }
  const Tensor input = tensor_of(c.at("input"));
  const Tensor indices = tensor_of(c.at("indices"));
  Tensor out;
  Status s;
  if (c.contains("updates")) {  // a scatter vector
    const Tensor updates = tensor_of(c.at("updates"));
    s = run_op(op, input.view(), indices.view(), updates.view(), attrs, &out);
  } else {
    s = run_op(op, input.view(), indices.view(), attrs, &out);
  }
  if (expect_error) return s.ok() ? "expected an error" : "";
  if (!s.ok()) return "unexpected error: " + s.message();
  const Tensor want = tensor_of(c.at("expected"));
  if (!(out.shape() == want.shape())) return "shape " + to_string(out.shape()) + " != " + to_string(want.shape());
  if (out.dtype() != want.dtype()) return "dtype differs";
  if (std::memcmp(out.data(), want.data(), want.nbytes()) != 0) return "bytes differ";
  return "";
}

// `skip_random`: onnx_node.json marks np.random data as "random" (its concrete values are in
// onnx_node_pb.json); those vectors are counted as skipped.
// `skip_op`: vectors of an op multigather does not implement (onnx.Scatter, deprecated since
// opset 11 and equal to ScatterElements without reduction) are counted as skipped.
void run_file(const std::string& file, std::size_t expected_count, bool skip_random = false,
              const std::string& skip_op = "") {
  const json cases = load(file);
  ASSERT_EQ(cases.size(), expected_count) << file;
  std::size_t passed = 0, skipped = 0;
  for (const json& c : cases) {
    if ((skip_random && (c.at("input").at("data").is_string() || c.at("expected").at("data").is_string())) ||
        (!skip_op.empty() && c.at("op").get<std::string>() == skip_op)) {
      ++skipped;
      continue;
    }
    const std::string why = run_case(c);
    if (why.empty()) ++passed;
    else ADD_FAILURE() << file << ": " << c.at("name").get<std::string>() << " (" << c.at("op").get<std::string>() << "): " << why;
  }
  std::printf("[conformance] %s: %zu/%zu vectors passed (%zu skipped: random data or an op not implemented)\n", file.c_str(), passed,
              cases.size() - skipped, skipped);
}

TEST(Conformance, WebnnWpt) { run_file("webnn_wpt.json", 77); }
TEST(Conformance, WebnnWptValidation) { run_file("webnn_wpt_validation.json", 20); }
// WebNN scatterElements (10) and scatterND (7), bit for bit (float32 literals rounded to float32 as
// the WPT harness's Float32Array does; the int8 case clamps index 2147483647 to the last row).
TEST(Conformance, WebnnWptScatter) { run_file("webnn_wpt_scatter.json", 17); }
// 17 shape / dtype cases, 13 must throw.
TEST(Conformance, WebnnWptScatterValidation) { run_file("webnn_wpt_scatter_validation.json", 17); }
TEST(Conformance, OnnxNodePb) { run_file("onnx_node_pb.json", 10); }
// ScatterElements (7) and ScatterND (7) at opset 18, bit for bit; the 2 onnx.Scatter vectors
// (opset 10) are skipped.
TEST(Conformance, OnnxNodeScatterPb) { run_file("onnx_node_scatter_pb.json", 16, false, "onnx.Scatter"); }
TEST(Conformance, OnnxNodeTranscribed) { run_file("onnx_node.json", 10, /*skip_random=*/true); }

}  // namespace
}  // namespace multigather
