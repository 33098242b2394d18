// torch.nn.functional.embedding_bag through the CLI: the offsets tensor attribute from a .npy file
// (the C API and engine cases: frontends_embedding_bag_test.cpp). Built with the CLI only
// (tests/CMakeLists.txt leaves cli*_test.cpp out of a build without tools/).
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.hpp"
#include "multigather/tensor.hpp"
#include "npy.hpp"
#include "scratch_dir.hpp"

namespace multigather {
namespace {

constexpr const char* kOp = "torch.nn.functional.embedding_bag";

class EmbeddingBagCli : public ScratchDirTest {};

TEST_F(EmbeddingBagCli, OffsetsFromANpyFile) {
  Tensor weight(DType::kFloat32, {3, 2}), input(DType::kInt64, {3}), offsets(DType::kInt64, {2});
  for (int k = 0; k < 6; ++k) weight.data_as<float>()[k] = static_cast<float>(k + 1);
  const std::int64_t ids[] = {2, 0, 2}, offs[] = {0, 1};
  std::copy(ids, ids + 3, input.data_as<std::int64_t>());
  std::copy(offs, offs + 2, offsets.data_as<std::int64_t>());
  ASSERT_TRUE(npy::write_npy(path("w.npy"), weight.view()).ok());
  ASSERT_TRUE(npy::write_npy(path("i.npy"), input.view()).ok());
  ASSERT_TRUE(npy::write_npy(path("o.npy"), offsets.view()).ok());
  std::vector<std::string> args = {"multigather", "run", kOp, "--input", path("w.npy"), "--indices", path("i.npy"),
                                   "--offsets", path("o.npy"), "--mode", "max", "--output", path("out.npy")};
  std::vector<char*> argv;
  for (std::string& s : args) argv.push_back(s.data());
  std::ostringstream out, err;
  ASSERT_EQ(cli::main(static_cast<int>(argv.size()), argv.data(), out, err), 0) << err.str();
  npy::NpyArray result;
  ASSERT_TRUE(npy::read_npy(path("out.npy"), &result).ok());
  const auto* r = static_cast<const float*>(result.view.data);
  EXPECT_EQ(result.view.shape, (Dims{2, 2}));
  EXPECT_EQ(std::vector<float>(r, r + 4), (std::vector<float>{5, 6, 5, 6}));  // max(w[0], w[2]) = w[2]
  args[8] = path("missing.npy");
  argv.clear();
  for (std::string& s : args) argv.push_back(s.data());
  std::ostringstream out2, err2;
  EXPECT_NE(cli::main(static_cast<int>(argv.size()), argv.data(), out2, err2), 0);
  EXPECT_NE(err2.str().find("--offsets"), std::string::npos) << err2.str();
}

}  // namespace
}  // namespace multigather
