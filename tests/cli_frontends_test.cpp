// `multigather run/explain/ops` for the registry ops (tools/cli/framework_ops.cpp): every op,
// gather_multiaxis included, explains through the CLI with its framework attribute flags; runs through .npy files give the
// documented golden values (ONNX GatherND batch_dims=1, tf.gather batch_dims=1, the StableHLO
// interpreter's windowed gather, WebNN's clamp); framework errors keep their message and exit code.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "cli/cli.hpp"
#include "npy.hpp"
#include "op_test_support.hpp"
#include "scratch_dir.hpp"

namespace multigather {
namespace {

using namespace testing;

struct CliResult {
  int code = -1;
  std::string out, err;
};

CliResult cli_run(std::vector<std::string> args) {
  args.insert(args.begin(), "multigather");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  std::ostringstream out, err;
  CliResult r;
  r.code = cli::main(static_cast<int>(argv.size()), argv.data(), out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

std::string shape_flag(const char* name, const Dims& d) {
  std::string s = std::string("--") + name + "=";
  for (int i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s;
}

class CliFrontends : public ScratchDirTest {
 protected:
  // Runs OP on `input`/`indices` through .npy files; returns the output (or the failure).
  CliResult run(const std::string& op, const Tensor& input, const Tensor& indices,
                std::vector<std::string> flags, Tensor* output) {
    EXPECT_TRUE(npy::write_npy(path("x.npy"), input.view()).ok());
    EXPECT_TRUE(npy::write_npy(path("i.npy"), indices.view()).ok());
    std::vector<std::string> args = {"run", op, "--input", path("x.npy"), "--indices", path("i.npy"),
                                     "--output", path("o.npy")};
    args.insert(args.end(), flags.begin(), flags.end());
    CliResult r = cli_run(args);
    if (r.code == 0) {
      npy::NpyArray a;
      EXPECT_TRUE(npy::read_npy(path("o.npy"), &a).ok());
      *output = Tensor::copy_of(a.view);
    }
    return r;
  }
};

TEST_F(CliFrontends, EveryOpExplainsWithItsAttributeFlags) {
  for (const ExplainCase& c : explain_cases()) {
    std::vector<std::string> args = {"explain", c.op, shape_flag("input-shape", c.x), shape_flag("indices-shape", c.i)};
    for (const auto& [name, value] : c.a.items()) args.push_back("--" + name + "=" + value.text);  // texts
    const CliResult r = cli_run(args);
    EXPECT_EQ(r.code, 0) << c.op << ": " << r.err;
    EXPECT_NE(r.out.find("op:                 " + std::string(c.op) + "    ["), std::string::npos) << c.op << r.out;
    EXPECT_NE(r.out.find("lowered call:       gather_multiaxis("), std::string::npos) << c.op << r.out;
  }
  for (const ExplainCase& c : testing::segment_explain_cases()) {
    std::vector<std::string> args = {"explain", c.op, shape_flag("input-shape", c.x), shape_flag("indices-shape", c.i)};
    for (const auto& [name, value] : c.a.items()) args.push_back("--" + name + "=" + value.text);
    const CliResult r = cli_run(args);
    EXPECT_EQ(r.code, 0) << c.op << ": " << r.err;
    EXPECT_NE(r.out.find("op:                 " + std::string(c.op) + "    [segment]"), std::string::npos) << c.op << r.out;
    EXPECT_NE(r.out.find("lowered call:       scatter_multiaxis("), std::string::npos) << c.op << r.out;
  }
}

TEST_F(CliFrontends, OpsListsEveryRegistryOpGroupedByClass) {
  const CliResult r = cli_run({"ops"});
  ASSERT_EQ(r.code, 0);
  std::size_t last = 0;
  for (const auto& [cls, what] : equivalence_classes()) {
    for (const OpSpec& op : op_registry()) {
      if (op.equivalence_class != cls) continue;
      const std::size_t at = r.out.find(op.name + "\n");
      ASSERT_NE(at, std::string::npos) << op.name;
      EXPECT_GE(at, last) << op.name << " is listed out of its class group";
      last = at;
    }
  }
}

TEST_F(CliFrontends, RunGoldenValues) {
  Tensor out;
  // ONNX GatherND example 5 (batch_dims=1).
  ASSERT_EQ(run("onnx.GatherND", f32({2, 2, 2}, iota(8)), i64({2, 1}, {1, 0}), {"--batch-dims=1"}, &out).code, 0);
  EXPECT_EQ(values_f32(out), as_f32({2, 3, 4, 5}));
  // tf.gather batch_dims=1, axis=1: output[b, i] = params[b, indices[b, i]].
  ASSERT_EQ(run("tf.gather", f32({2, 3}, {0, 1, 2, 10, 11, 12}), i32({2, 2}, {2, 0, 1, 1}),
                {"--axis=1", "--batch_dims=1"}, &out).code, 0);
  EXPECT_EQ(values_f32(out), as_f32({2, 0, 11, 11}));
  // The StableHLO interpreter's windowed gather (stablehlo/tests/interpret/gather.mlir).
  ASSERT_EQ(run("stablehlo.gather", f32({3, 4, 2}, iota(24, 1)), i64({2, 3, 2}, {0, 0, 1, 0, 2, 1, 0, 1, 1, 1, 0, 9}),
                {"--offset-dims=2,3", "--collapsed-slice-dims=0", "--start-index-map=1,0", "--index-vector-dim=2",
                 "--slice-sizes=1,2,2"},
                &out).code, 0);
  EXPECT_EQ(to_string(out.shape()), "[2,3,2,2]");
  EXPECT_EQ(values_f32(out), as_f32({1, 2, 3, 4, 3, 4, 5, 6, 13, 14, 15, 16, 9, 10, 11, 12, 11, 12, 13, 14, 17, 18, 19, 20}));
  // WebNN clamps after wrapping once (WPT): 10 -> row 1, -10 -> row 0 on a dim of 2.
  ASSERT_EQ(run("webnn.gather", f32({2, 2}, iota(4)), i32({2}, {10, -10}), {}, &out).code, 0);
  EXPECT_EQ(values_f32(out), as_f32({2, 3, 0, 1}));
  // numpy.take mode=clip does not wrap negatives.
  ASSERT_EQ(run("numpy.take", f32({3}, {4, 3, 5}), i64({2}, {-1, 9}), {"--mode=clip"}, &out).code, 0);
  EXPECT_EQ(values_f32(out), as_f32({4, 5}));
}

TEST_F(CliFrontends, FrameworkErrorsKeepTheirMessageAndExitCode) {
  Tensor out;
  CliResult r = run("torch.gather", f32({2, 2}, iota(4)), i64({1, 1}, {-1}), {"--dim=1"}, &out);
  EXPECT_EQ(r.code, cli::kExitOutOfRange);
  EXPECT_EQ(r.err, "multigather: error: torch.gather: index[0,0] = -1 is out of range for dim 1 of size 2 (valid "
                   "range [0, 2)); torch.gather rejects negative indices (pytorch#55143)\n");
  r = run("onnx.GatherND", f32({2, 2, 2}, iota(8)), i64({3, 1}, {0, 0, 0}), {"--batch-dims=1"}, &out);
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_EQ(r.err, "multigather: error: onnx.GatherND: batch_dims = 1: data.shape[0] = 2 and indices.shape[0] = 3 "
                   "must be equal (batch dimensions are not broadcast)\n");
  r = cli_run({"explain", "onnx.GatherND", "--input-shape=2,2", "--indices-shape=1,2", "--indices-dtype=int32"});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_EQ(r.err, "multigather: error: onnx.GatherND: indices dtype int32 is not supported (onnx.GatherND accepts "
                   "int64)\n");
  r = cli_run({"explain", "tensor.gather", "--input-shape=2,2", "--indices-shape=1,2", "--gather-dims=1,0"});
  EXPECT_EQ(r.code, cli::kExitUsage);
  EXPECT_EQ(r.err, "multigather: error: tensor.gather: gather_dims [1,0] must be strictly increasing\n");
  r = cli_run({"explain", "tf.gather", "--input-shape=2,2", "--indices-shape=1", "--mode=clip"});
  EXPECT_EQ(r.code, cli::kExitUsage);
}

// docs/cli.md's `explain` examples (gather_multiaxis in "Usage", tf.gather in "Framework ops";
// they were the README's) are the real output of the commands they show.
TEST_F(CliFrontends, ReadmeExplainExampleIsTheRealOutput) {
  std::ifstream f(std::string(MULTIGATHER_SOURCE_DIR) + "/docs/cli.md");
  const std::string readme((std::istreambuf_iterator<char>(f)), {});
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"explain", "gather_multiaxis", "--input-shape=4,2,1,2", "--indices-shape=1,3,2,2", "--axes=1"},
           {"explain", "tf.gather", "--input-shape=3,5", "--indices-shape=3,2", "--axis=1", "--batch-dims=1"}}) {
    std::string command = "$ build/multigather";
    for (const std::string& a : args) command += " " + a;
    command += "\n";
    SCOPED_TRACE(command);
    const std::size_t begin = readme.find(command);
    ASSERT_NE(begin, std::string::npos);
    const std::size_t end = readme.find("```", begin);
    const std::string shown = readme.substr(begin + command.size(), end - begin - command.size());
    const CliResult r = cli_run(args);
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out, shown);
  }
}

}  // namespace
}  // namespace multigather
