// The multigather tool (tools/cli): run and explain round trips through .npy files, checked
// against numpy-computed examples, gather_multiaxis_reference and hand-worked values; exit
// codes and exact error lines; an existing output file survives a failed run; and the real
// executable.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "multigather/gather.hpp"
#include "npy.hpp"
#include "scratch_dir.hpp"

namespace fs = std::filesystem;
using namespace multigather;

namespace {

const std::string kSource = MULTIGATHER_SOURCE_DIR;

struct Result {
  int code = -1;
  std::string out, err;
};

std::string file_bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

class CliTest : public ScratchDirTest {
 protected:
  /// Runs `multigather ARGS...` in-process.
  static Result cli(std::vector<std::string> args) {
    args.insert(args.begin(), "multigather");
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    std::ostringstream out, err;
    Result r;
    r.code = cli::main(static_cast<int>(argv.size()), argv.data(), out, err);
    r.out = out.str();
    r.err = err.str();
    return r;
  }
  std::string save(const std::string& name, const TensorView& view) const {
    EXPECT_TRUE(npy::write_npy(path(name), view).ok());
    return path(name);
  }
  static npy::NpyArray load(const std::string& file, const npy::ReadOptions& options = {}) {
    npy::NpyArray a;
    const Status s = npy::read_npy(file, &a, options);
    EXPECT_TRUE(s.ok()) << s.message();
    return a;
  }
  std::string example(const std::string& name, const std::string& file) const {
    return kSource + "/examples/" + name + "/" + file;
  }

};

/// Tensors whose bytes follow a fixed pattern (any dtype: the operator only moves bytes).
Tensor patterned(DType dtype, Dims shape, unsigned seed) {
  Tensor t(dtype, shape);
  std::mt19937 rng(seed);
  auto* b = static_cast<unsigned char*>(t.data());
  for (std::size_t i = 0; i < t.nbytes(); ++i) {
    b[i] = static_cast<unsigned char>(dtype == DType::kBool ? rng() % 2 : rng() & 0x7f);
  }
  return t;
}

Tensor int64_indices(Dims shape, std::int64_t lo, std::int64_t hi, unsigned seed) {
  Tensor t(DType::kInt64, shape);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<std::int64_t> dist(lo, hi);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data_as<std::int64_t>()[i] = dist(rng);
  return t;
}

// ---- Round trips ---------------------------------------------------------------------------

// examples/*/expected.npy were computed by numpy (take_along_axis, fancy indexing) in
// examples/make_examples.py; the CLI's .npy output must be byte-identical to np.save's.
TEST_F(CliTest, ExamplesMatchNumpy) {
  for (const std::string name : {"elements_axis0", "nd_axes01", "points_xy"}) {
    SCOPED_TRACE(name);
    std::istringstream command(file_bytes(example(name, "command.txt")));
    std::vector<std::string> args;
    for (std::string word; command >> word;) {
      args.push_back(word.rfind("examples/", 0) == 0 ? kSource + "/" + word : word);
    }
    args.push_back("--output=" + path("out.npy"));
    const Result r = cli(args);
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(file_bytes(path("out.npy")), file_bytes(example(name, "expected.npy")));
  }
}

// The seed's GatherElements example, worked by hand: output [[30,11,12],[20,1,32]].
TEST_F(CliTest, PrintsTextWithoutOutput) {
  Result r = cli({"run", "gather_multiaxis", "--input", example("elements_axis0", "input.npy"),
                  "--indices", example("elements_axis0", "indices.npy"), "--axes=0"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "int64 [2,3]\n[[30 11 12]\n [20  1 32]]\n");
  EXPECT_EQ(r.err, "");
  // (x, y) points into images 100*b + 10*y + x, axes 2,1: (3,0)->3, (1,2)->21, (0,1)->110,
  // (2,2)->122.
  r = cli({"run", "gather_multiaxis", "--input", example("points_xy", "input.npy"), "--indices",
           example("points_xy", "indices.npy"), "--axes", "2,1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "int32 [2,2,1]\n[[[  3]\n  [ 21]]\n\n [[110]\n  [122]]]\n");
}

struct RoundTripCase {
  const char* name;
  DType dtype;
  Dims input_shape;
  Dims indices_shape;
  std::vector<std::int64_t> axes;
  std::int64_t lo, hi;  // index values drawn from [lo, hi]
  std::vector<std::string> flags;
  GatherOptions options;  // what the flags mean
};

GatherOptions opts(IndexMode mode, bool negative = true, Scalar fill = {}) {
  GatherOptions o;
  o.index_mode = mode;
  o.negative_indices = negative;
  o.fill_value = fill;
  return o;
}

// Every dtype through the CLI, with each index mode and both flag spellings; the output file
// must equal gather_multiaxis_reference on the same tensors.
TEST_F(CliTest, RunMatchesReference) {
  const RoundTripCase cases[] = {
      {"float16_axis1", DType::kFloat16, {3, 4, 5}, {3, 2, 5}, {1}, -4, 3, {}, opts(IndexMode::kError)},
      {"bfloat16_axes20", DType::kBFloat16, {2, 3, 4}, {1, 3, 6}, {2, 0}, -2, 1, {}, opts(IndexMode::kError)},
      {"complex128_clamp", DType::kComplex128, {4, 3}, {2, 3}, {0}, -9, 9,
       {"--index_mode=clamp"}, opts(IndexMode::kClamp)},
      {"complex64_wrap", DType::kComplex64, {4, 3}, {4, 2}, {1}, -9, 9,
       {"--index-mode", "wrap"}, opts(IndexMode::kWrap)},
      {"bool_clip", DType::kBool, {5, 1}, {3, 4}, {0}, -3, 7,
       {"--index_mode", "clamp", "--negative_indices", "false"}, opts(IndexMode::kClamp, false)},
      {"int32_fill", DType::kInt32, {3, 3}, {3, 2}, {1}, -5, 5,
       {"--index-mode=fill", "--fill-value=-7"}, opts(IndexMode::kFill, true, Scalar::from_int(-7))},
      {"float32_fill_nan", DType::kFloat32, {6}, {4}, {0}, -8, 8,
       {"--index-mode=fill", "--fill_value", "nan", "--negative-indices=false"},
       opts(IndexMode::kFill, false, Scalar::from_float(NAN))},
      {"uint64_broadcast_k0", DType::kUInt64, {1, 3}, {2, 1}, {}, 0, 0, {}, opts(IndexMode::kError)},
      {"int8_scalar", DType::kInt8, {}, {}, {}, 0, 0, {}, opts(IndexMode::kError)},
      {"float64_rank5", DType::kFloat64, {2, 1, 3, 2, 2}, {1, 4, 3, 1, 4}, {-1, 1}, -1, 0, {},
       opts(IndexMode::kError)},
      {"uint16_empty", DType::kUInt16, {3, 0}, {2, 0}, {0}, 0, 2, {}, opts(IndexMode::kError)},
  };
  unsigned seed = 1;
  for (const RoundTripCase& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor input = patterned(c.dtype, c.input_shape, seed++);
    const Tensor indices = int64_indices(c.indices_shape, c.lo, c.hi, seed++);
    std::string axes = "--axes=";
    for (std::size_t j = 0; j < c.axes.size(); ++j) axes += (j ? "," : "") + std::to_string(c.axes[j]);
    std::vector<std::string> args = {"run", "gather_multiaxis", "--input", save("in.npy", input.view()),
                                     "--indices", save("ix.npy", indices.view()), axes,
                                     "--output", path("out.npy")};
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    const Result r = cli(args);
    ASSERT_EQ(r.code, 0) << r.err;

    const GatherShape shape = output_shape(c.input_shape, c.indices_shape, c.axes);
    Tensor expected(c.dtype, shape.output_shape);
    ASSERT_TRUE(gather_multiaxis_reference(input.view(), indices.view(), c.axes,
                                           expected.mutable_view(), c.options).ok());
    const npy::NpyArray got = load(path("out.npy"));
    EXPECT_EQ(got.view.dtype, c.dtype);
    EXPECT_EQ(got.view.shape, shape.output_shape);
    EXPECT_EQ(std::memcmp(got.view.data, expected.data(), expected.nbytes()), 0);
  }
}

// float8_e4m3fn is written as '<V1' (like ml_dtypes), which names no dtype: reading it back
// needs --input-dtype.
TEST_F(CliTest, VoidInputNeedsInputDtype) {
  const Tensor input = patterned(DType::kFloat8E4M3FN, {4}, 7);
  const std::int64_t ix[2] = {3, 0};
  const std::string in = save("in.npy", input.view());
  const std::string idx = save("ix.npy", TensorView(ix, DType::kInt64, {2}));
  Result r = cli({"run", "gather_multiaxis", "--input", in, "--indices", idx, "--axes=0"});
  EXPECT_EQ(r.code, cli::kExitIo);
  EXPECT_EQ(r.err, "multigather: error: --input '" + in + "': unsupported descr '<V1': raw 1-byte "
                   "void data that names no dtype (ml_dtypes writes '<V2' only for bfloat16 but "
                   "'<V1' for every 1-byte type); pass its dtype with --input-dtype\n");
  r = cli({"run", "gather_multiaxis", "--input", in, "--indices", idx, "--axes=0",
           "--input_dtype=float8_e4m3fn", "--output", path("out.npy")});
  ASSERT_EQ(r.code, 0) << r.err;
  const npy::NpyArray got = load(path("out.npy"), {DType::kFloat8E4M3FN});
  const auto* in_bytes = static_cast<const unsigned char*>(input.data());
  const auto* out_bytes = static_cast<const unsigned char*>(got.view.data);
  EXPECT_EQ(out_bytes[0], in_bytes[3]);
  EXPECT_EQ(out_bytes[1], in_bytes[0]);
}

// A Fortran-order input (a strided view) gives the same result as its C-order copy.
TEST_F(CliTest, FortranOrderInput) {
  // [[0,1,2],[10,11,12]] stored column by column.
  const std::int32_t columns[6] = {0, 10, 1, 11, 2, 12};
  std::string bytes = npy::to_npy_bytes(TensorView(columns, DType::kInt32, {2, 3}));
  bytes.replace(bytes.find("False"), 5, "True ");
  std::ofstream(path("f.npy"), std::ios::binary) << bytes;
  const std::int64_t ix[2] = {2, 0};  // [[2],[0]] along axis 1 -> [[2],[10]]
  const Result r = cli({"run", "gather_multiaxis", "--input", path("f.npy"), "--indices",
                        save("ix.npy", TensorView(ix, DType::kInt64, {2, 1})), "--axes=1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "int32 [2,1]\n[[ 2]\n [10]]\n");
}

TEST_F(CliTest, OptionSpellingsAgree) {
  const std::string in = example("elements_axis0", "input.npy");
  const std::int64_t ix[6] = {5, -1, 1, 2, 0, -7};
  const std::string idx = save("ix.npy", TensorView(ix, DType::kInt64, {2, 3}));
  // clamp with negative wrap: 5 -> 3, -1 -> 3, -7 -> -3 -> 0.
  const std::string expected = "int64 [2,3]\n[[30 31 12]\n [20  1  2]]\n";
  for (const auto& spelling : std::vector<std::vector<std::string>>{
           {"--index-mode=clamp", "--axes=0"},
           {"--index-mode", "clamp", "--axes", "0"},
           {"--index_mode=clamp", "--axes", "0"},
           {"--index_mode", "clamp", "--negative_indices=true", "--axes=0"},
           {"--axes=[0]", "--index-mode=clamp", "--negative-indices", "1"}}) {
    std::vector<std::string> args = {"run", "gather_multiaxis", "--input=" + in, "--indices", idx};
    args.insert(args.end(), spelling.begin(), spelling.end());
    const Result r = cli(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, expected) << spelling[0];
  }
}

// Flag values go through the library's one attribute parser, so every op accepts the same
// spellings: bools true/false, 1/0, yes/no, on/off in any case; lists "0", "[0]", "(0)", " 0 ".
// gather_multiaxis --negative-indices and coreml.gather_along_axis --validate-indices (which
// the CLI once parsed with two different parsers) agree on every one.
TEST_F(CliTest, BoolAndListSpellingsAreTheLibrarys) {
  const std::string in = example("elements_axis0", "input.npy");  // [4,3]
  const std::int64_t neg[3] = {-1, 0, 1};
  const std::string neg_idx = save("neg.npy", TensorView(neg, DType::kInt64, {1, 3}));
  const std::int64_t big[3] = {9, 0, 1};
  const std::string big_idx = save("big.npy", TensorView(big, DType::kInt64, {1, 3}));
  const std::vector<std::string> yes = {"true", "True", "TRUE", "1", "yes", "Yes", "on", "ON"};
  const std::vector<std::string> no = {"false", "False", "0", "no", "NO", "off", "Off"};
  const auto run = [&](const std::string& op, const std::string& idx, std::vector<std::string> flags) {
    std::vector<std::string> args = {"run", op, "--input", in, "--indices", idx};
    args.insert(args.end(), flags.begin(), flags.end());
    return cli(args);
  };
  for (const std::string& t : yes) {
    SCOPED_TRACE(t);
    // -1 wraps to row 3: [[30 1 12]].
    Result r = run("gather_multiaxis", neg_idx, {"--axes=0", "--negative-indices=" + t});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "int64 [1,3]\n[[30  1 12]]\n");
    // 9 is out of range for axis 0 of size 4: an error when validated.
    r = run("coreml.gather_along_axis", big_idx, {"--axis=0", "--validate-indices=" + t});
    EXPECT_EQ(r.code, cli::kExitOutOfRange) << r.err;
  }
  for (const std::string& f : no) {
    SCOPED_TRACE(f);
    Result r = run("gather_multiaxis", neg_idx, {"--axes=0", "--negative-indices=" + f});
    EXPECT_EQ(r.code, cli::kExitOutOfRange) << r.err;
    // Not validated: Core ML's "undefined but memory safe", which multigather clamps: 9 -> 3.
    r = run("coreml.gather_along_axis", big_idx, {"--axis=0", "--validate_indices", f});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "int64 [1,3]\n[[30  1 12]]\n");
  }
  for (const std::string& axes : {"--axes=0", "--axes=[0]", "--axes=(0)", "--axes= 0 ", "--axes=[ 0 ]"}) {
    SCOPED_TRACE(axes);
    const Result r = run("gather_multiaxis", neg_idx, {axes});
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, "int64 [1,3]\n[[30  1 12]]\n");
  }
  // The same wording of a bad bool for both ops: the library's, naming op and attribute.
  Result r = run("gather_multiaxis", neg_idx, {"--axes=0", "--negative-indices=maybe"});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_EQ(r.err, "multigather: error: gather_multiaxis: attribute negative_indices: 'maybe' is not a "
                   "bool (expected true/false, 1/0, yes/no, on/off)\n");
  r = run("coreml.gather_along_axis", big_idx, {"--validate-indices=maybe"});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_EQ(r.err, "multigather: error: coreml.gather_along_axis: attribute validate_indices: 'maybe' is "
                   "not a bool (expected true/false, 1/0, yes/no, on/off)\n");
}

// ---- explain and ops -------------------------------------------------------------------------

// The seed's worked example: input [4,2,1,2], indices [1,3,2,2], axes [1] -> output [4,3,2,2];
// dims 0, 2, 3 broadcast (4|1 -> 4, 1|2 -> 2, 2|2 -> 2), dim 1 comes from indices.
TEST_F(CliTest, ExplainSeedExample) {
  const Result r = cli({"explain", "gather_multiaxis", "--input-shape=4,2,1,2",
                        "--indices-shape=1,3,2,2", "--axes=1"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "op:                 gather_multiaxis    [multiaxis]\n"
            "signature:          gather_multiaxis(input, indices, axes, index_mode='error', negative_indices=True, "
            "fill_value=0)\n"
            "formula:            output[o] = input[i], i[d] = o[d] (d not in axes, broadcast), "
            "i[axes[j]] = indices[q.., q_last*c + j]\n"
            "follows:            docs/spec.md section 1\n"
            "attributes:         axes=[1] index_mode=error negative_indices=true fill_value=0\n"
            "input:              [4,2,1,2] float32\n"
            "indices:            [1,3,2,2] int64\n"
            "lowered call:       gather_multiaxis(input [4,2,1,2], indices [1,3,2,2], axes [1])\n"
            "  input view:       shape [4,2,1,2] strides [4,2,2,1]\n"
            "  indices view:     actual [1,3,2,2] logical [1,3,2,2] strides [12,4,2,1]\n"
            "  axes:             [1]  (k = 1, coordinate size c = 1)\n"
            "  index mode:       error, negative_indices=true\n"
            "core output:        [4,3,2,2]  (48 elements)\n"
            "output:             [4,3,2,2]\n"
            "\n"
            "  dim  input  indices  output  how\n"
            "    0      4        1       4  indices broadcast (1 -> 4)\n"
            "    1      2        3       3  axis (axes[0]): size from indices; coordinate 0 "
            "indexes input size 2\n"
            "    2      1        2       2  input broadcast (1 -> 2)\n"
            "    3      2        2       2  equal\n"
            "\n"
            "  output[o0,o1,o2,o3] = input[o0, indices[0,o1,o2,o3], 0, o3]\n"
            "  each index v for an axis of size n (index_mode=error): v < 0 becomes v + n "
            "(signed index dtypes), then v outside [0, n) is an error (IndexError; CLI exit code "
            "4)\n");
}

// Two-axis coordinates in (x, y) order: indices [2,2,2*... ] -> L = [2,2,1]; coordinate j of
// logical position (o0, o1, 0) is indices[o0, o1, j].
TEST_F(CliTest, ExplainMultiaxisFormula) {
  const Result r = cli({"explain", "gather_multiaxis", "--input_shape", "2,3,4", "--indices_shape",
                        "2,2,2", "--axes", "2,1", "--index-mode=wrap"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("  indices view:     actual [2,2,2] logical [2,2,1]"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("  axes:             [2,1]  (k = 2, coordinate size c = 2)\n"), std::string::npos);
  EXPECT_NE(r.out.find("core output:        [2,2,1]  (4 elements)\n"), std::string::npos);
  EXPECT_NE(r.out.find("\noutput:             [2,2,1]\n"), std::string::npos);
  EXPECT_NE(r.out.find("  output[o0,o1,o2] = input[o0, indices[o0,o1,1], indices[o0,o1,0]]\n"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(index_mode=wrap): v becomes v mod n (floor modulo)"), std::string::npos);
  // Last logical size > 1 with c = 2: coordinate j sits at 2*o_last + j.
  const Result r2 = cli({"explain", "gather_multiaxis", "--input-shape=5,6", "--indices-shape=1,8",
                         "--axes=0,1"});
  EXPECT_NE(r2.out.find("output[o0,o1] = input[indices[0,2*o1], indices[0,2*o1+1]]"),
            std::string::npos) << r2.out;
}

TEST_F(CliTest, OpsListsGatherMultiaxis) {
  const Result r = cli({"ops"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "gather_multiaxis");
}

TEST_F(CliTest, HelpAndVersion) {
  Result r = cli({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Exit codes: 0 ok, 1 internal error, 2 usage or validation error, 3 I/O "
                       "or .npy format error, 4 index out of range"), std::string::npos);
  r = cli({"run", "gather_multiaxis", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--index-mode"), std::string::npos);
  r = cli({"--version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out.rfind("multigather ", 0), 0u);
}

// ---- Errors ------------------------------------------------------------------------------------

TEST_F(CliTest, ErrorsHaveExitCodesAndOneLine) {
  const std::string in = example("elements_axis0", "input.npy");
  const std::string idx = example("elements_axis0", "indices.npy");
  const std::int64_t bad[6] = {5, 1, 1, 2, 0, 3};
  const std::string bad_idx = save("bad.npy", TensorView(bad, DType::kInt64, {2, 3}));
  const float fl[1] = {0};
  const std::string float_idx = save("float.npy", TensorView(fl, DType::kFloat32, {1, 1}));
  std::ofstream(path("corrupt.npy")) << "\x93NUMPY\x01";
  const std::vector<std::string> run = {"run", "gather_multiaxis", "--input", in, "--indices"};
  const auto with = [&](std::string indices, std::vector<std::string> more) {
    std::vector<std::string> a = run;
    a.push_back(indices);
    a.insert(a.end(), more.begin(), more.end());
    return a;
  };
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string message;
  };
  const Case cases[] = {
      {{"run", "onnx.Gatherr"}, 2, "unknown op 'onnx.Gatherr' (multigather ops lists the available ops)"},
      {{"run"}, 2, "run: missing the op name, e.g. multigather run gather_multiaxis ... "
                   "(multigather ops lists the ops)"},
      {{"frobnicate"}, 2, "unknown command 'frobnicate' (expected run, explain, lower or ops; see multigather --help)"},
      {with(idx, {}), 2, "--axes is required"},
      {with(idx, {"--axes=1,x"}), 2, "gather_multiaxis: attribute axes: '1,x' is not a list of "
                                     "integers (expected a comma-separated list like 2,1; empty: '')"},
      {with(idx, {"--axes=5"}), 2, "axes[0] = 5 is out of range [-2, 2) for input rank 2"},
      {with(idx, {"--axes=0", "--index-mode=bogus"}), 2,
       "gather_multiaxis: attribute index_mode: 'bogus' is not one of error, clamp, wrap, fill"},
      {with(idx, {"--axes=0", "--negative-indices=maybe"}), 2,
       "gather_multiaxis: attribute negative_indices: 'maybe' is not a bool (expected true/false, "
       "1/0, yes/no, on/off)"},
      {with(idx, {"--axes=0", "--fill-value=abc"}), 2,
       "gather_multiaxis: attribute fill_value: 'abc' is not a number (expected an integer, a "
       "float, nan, inf, true or false)"},
      {with(bad_idx, {"--axes=0", "--index-mode=fill", "--fill-value=1.5"}), 2,
       "fill_value 1.5 is not representable in int64"},
      {with(float_idx, {"--axes=0"}), 2,
       "indices dtype float32 is not an integer type (expected int8, int16, int32, int64, uint8, "
       "uint16, uint32 or uint64)"},
      {with(idx, {"--axes=0", "--input-dtype=float9"}), 2, "--input-dtype: 'float9' is not a dtype name"},
      {with(bad_idx, {"--axes=0"}), 4,
       "indices[0,0] = 5 is out of range for axis 0 of size 4 (valid range [-4, 4))"},
      {with(path("missing.npy"), {"--axes=0"}), 3,
       "--indices '" + path("missing.npy") + "': cannot open: no such file"},
      {with(path("corrupt.npy"), {"--axes=0"}), 3,
       "--indices '" + path("corrupt.npy") + "': truncated file: 7 bytes, shorter than the "
                                             "10-byte .npy preamble"},
      {with(idx, {"--axes=0", "--output", path("no/dir/out.npy")}), 3,
       "--output '" + path("no/dir/out.npy") + "': cannot create a temporary file in '" +
           path("no/dir") + "': No such file or directory"},
      {{"explain", "gather_multiaxis", "--input-shape=4,3", "--indices-shape=2", "--axes=0"}, 2,
       "indices rank 1 must equal input rank 2"},
      {{"explain", "gather_multiaxis", "--input-shape=4,x", "--indices-shape=2", "--axes=0"}, 2,
       "--input-shape: '4,x' is not a list of integers (expected a comma-separated list like 2,1; "
       "empty: '')"},
      {{"explain", "gather_multiaxis", "--input-shape=4,3", "--indices-shape=4,3"}, 2, "--axes is required"},
      {with(idx, {"--axes=[1"}), 2,
       "gather_multiaxis: attribute axes: '[1' has unbalanced brackets (expected a list like 2,1, [2, 1] or (2, 1))"},
      {with(idx, {"--axes=(0]"}), 2,
       "gather_multiaxis: attribute axes: '(0]' has unbalanced brackets (expected a list like 2,1, [2, 1] or (2, 1))"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.args.back());
    const Result r = cli(c.args);
    EXPECT_EQ(r.code, c.code);
    EXPECT_EQ(r.err, "multigather: error: " + c.message + "\n");
    EXPECT_EQ(r.out, "");
  }
}

// A failed run never replaces an existing output file, and leaves no temporary file.
TEST_F(CliTest, FailedRunLeavesOutputUntouched) {
  const std::string out = path("out.npy");
  const std::string precious = "precious bytes\n";
  std::ofstream(out, std::ios::binary) << precious;
  const std::int64_t bad[6] = {3, 1, 1, 2, 0, 4};
  const std::string bad_idx = save("bad.npy", TensorView(bad, DType::kInt64, {2, 3}));
  std::ofstream(path("corrupt.npy")) << "not a npy file";
  const std::string in = example("elements_axis0", "input.npy");
  const std::vector<std::vector<std::string>> failing = {
      {"--indices", bad_idx, "--axes=0"},                                   // out of range: 4
      {"--indices", path("corrupt.npy"), "--axes=0"},                       // I/O: 3
      {"--indices", example("elements_axis0", "indices.npy"), "--axes=7"},  // validation: 2
  };
  const int codes[] = {4, 3, 2};
  for (std::size_t i = 0; i < failing.size(); ++i) {
    std::vector<std::string> args = {"run", "gather_multiaxis", "--input", in, "--output", out};
    args.insert(args.end(), failing[i].begin(), failing[i].end());
    EXPECT_EQ(cli(args).code, codes[i]);
    EXPECT_EQ(file_bytes(out), precious);
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 3);

  // A successful run replaces it.
  const Result ok = cli({"run", "gather_multiaxis", "--input", in, "--indices",
                         example("elements_axis0", "indices.npy"), "--axes=0", "--output", out});
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(file_bytes(out), file_bytes(example("elements_axis0", "expected.npy")));
}

// ---- The real executable -----------------------------------------------------------------------

/// Runs the built `multigather` with `args` (shell words), returns exit code, stdout, stderr.
Result run_binary(const std::string& args, const fs::path& dir) {
  const std::string err_file = (dir / "stderr.txt").string();
  const std::string command =
      std::string(MULTIGATHER_CLI_PATH) + " " + args + " 2>" + err_file + " </dev/null";
  Result r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) r.out.append(buf, n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.err = file_bytes(err_file);
  return r;
}

TEST_F(CliTest, RealBinary) {
  const std::string e = kSource + "/examples/elements_axis0/";
  Result r = run_binary("run gather_multiaxis --input " + e + "input.npy --indices " + e +
                            "indices.npy --axes=0",
                        dir_);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "int64 [2,3]\n[[30 11 12]\n [20  1 32]]\n");
  r = run_binary("run gather_multiaxis --input " + e + "input.npy --indices " + e +
                     "input.npy --axes=0 --output " + path("o.npy"),
                 dir_);
  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "multigather: error: indices[1,0] = 10 is out of range for axis 0 of size 4 "
                   "(valid range [-4, 4))\n");
  EXPECT_FALSE(fs::exists(path("o.npy")));
}

}  // namespace

namespace {

// scatter_multiaxis through the CLI: --updates, the reduction flag, explain with
// --updates-shape, explain --svg, and the errors (a scatter without --updates; a bad updates shape).
TEST_F(CliTest, ScatterMultiaxisRunAndExplain) {
  std::vector<float> x(6, 1.0f);
  std::vector<std::int64_t> ix{2, 0, 2};
  std::vector<float> u{10, 20, 30};
  const std::string in = save("x.npy", TensorView(x.data(), DType::kFloat32, {6}));
  const std::string idx = save("i.npy", TensorView(ix.data(), DType::kInt64, {3}));
  const std::string up = save("u.npy", TensorView(u.data(), DType::kFloat32, {3}));
  // numpy: x = np.ones(6, 'f4'); np.add.at(x, [2, 0, 2], [10, 20, 30]) -> [21, 1, 41, 1, 1, 1]
  Result r = cli({"run", "scatter_multiaxis", "--input", in, "--indices", idx, "--updates", up,
                  "--axes=0", "--reduction=add"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "float32 [6]\n[21.  1. 41.  1.  1.  1.]\n");
  // Assign: the last update of a duplicate wins (x[[2, 0, 2]] = [10, 20, 30] in numpy: 30).
  r = cli({"run", "scatter_multiaxis", "--input", in, "--indices", idx, "--updates", up, "--axes=0"});
  EXPECT_EQ(r.out, "float32 [6]\n[20.  1. 30.  1.  1.  1.]\n");
  r = cli({"run", "scatter_multiaxis", "--input", in, "--indices", idx, "--axes=0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "multigather: error: --updates is required\n");
  r = cli({"run", "scatter_multiaxis", "--input", in, "--indices", idx, "--updates", in, "--axes=0"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "multigather: error: updates shape [6] does not broadcast to the scatter shape [3] "
                   "(the gather shape of input and indices): updates.shape[0] = 6 must be 3 or 1\n");
  r = cli({"explain", "scatter_multiaxis", "--input-shape=4,3", "--indices-shape=2,1",
           "--updates-shape=2,3", "--axes=0", "--reduction=max"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("lowered call:       scatter_multiaxis(updates [2,3], input [4,3], indices [2,1], axes [0])"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("reduction:        max (updates reaching one element combine in row-major order"),
            std::string::npos) << r.out;
  // explain SCATTER_OP --svg: the picture (shapes, or the updates' values with --updates).
  r = cli({"explain", "numpy.add_at", "--input", in, "--indices", idx, "--updates", up, "--svg", "-"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("<title>numpy.add_at: how the scatter moves data</title>"), std::string::npos);
  // np.add.at(x, [2, 0, 2], [10, 20, 30]): x[2] = 1 + 10 + 30, drawn with both updates.
  EXPECT_NE(r.out.find("data-output=\"2\" data-input=\"2\" data-updates=\"0,2\""), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(">1.+10.+30.</text>"), std::string::npos);
  r = cli({"explain", "scatter_multiaxis", "--input-shape=4,3", "--indices-shape=2,1", "--updates-shape=2,3",
           "--axes=0", "--svg", "-"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("lowered: scatter_multiaxis(input [4,3], indices [2,1], updates [2,3], axes [0], reduction=none"),
            std::string::npos) << r.out;
  r = cli({"explain", "scatter_multiaxis", "--input-shape=4,3", "--indices-shape=2,1", "--axes=0", "--svg", "-"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "multigather: error: --updates-shape is required (or, with --svg, --updates FILE)\n");
  r = cli({"explain", "numpy.add_at", "--input-shape=6", "--indices-shape=3", "--updates", up});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "multigather: error: --updates is an option of explain --svg FILE (the picture); the text explain takes shapes only\n");
}

}  // namespace
