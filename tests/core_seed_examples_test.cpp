// Every worked example of the seed (Dwayne Robinson's "Gather Multiaxis Operator" draft,
// https://github.com/fdwr/MachineLearningOperators/blob/main/Multigather.md, cited in
// docs/spec.md) that is written as a gather_multiaxis call: the "intermediate processing
// values" blocks, the GatherElements examples (which are gather_multiaxis calls as written)
// and the worked shape example. Expected values are the seed's own printed outputs.
#include <numeric>

#include "core_support.hpp"

namespace {

using multigather::Dims;
using mg_test::gather_values;
using mg_test::Host;
using V = std::vector<std::int32_t>;
using I = std::vector<std::int64_t>;

// input of shape [4,3] used by several seed examples.
const Host<std::int32_t> k4x3{{4, 3}, {0, 1, 2, 10, 11, 12, 20, 21, 22, 30, 31, 32}};

TEST(SeedExamples, WorkedShapeExample) {
  // input [4,2,1,2], indices [1,3,2,2], axes [1] -> output [4,3,2,2]: dims 0, 2, 3 broadcast.
  auto shape = multigather::output_shape({4, 2, 1, 2}, {1, 3, 2, 2}, std::vector<std::int64_t>{1});
  EXPECT_EQ(shape.output_shape, (Dims{4, 3, 2, 2}));
  EXPECT_EQ(shape.logical_indices_shape, (Dims{1, 3, 2, 2}));
  EXPECT_TRUE(shape.indices_broadcast[0]);
  EXPECT_TRUE(shape.input_broadcast[2]);
  EXPECT_FALSE(shape.input_broadcast[3]);
  EXPECT_FALSE(shape.indices_broadcast[3]);

  // Values: input = arange(16) in [4,2,1,2], so input[a, y, 0, d] = 4a + 2y + d.
  Host<std::int32_t> input{{4, 2, 1, 2}, V(16)};
  std::iota(input.values.begin(), input.values.end(), 0);
  Host<std::int64_t> indices{{1, 3, 2, 2}, {0, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 1}};
  Dims out_shape;
  auto out = gather_values(input, indices, {1}, {}, &out_shape);
  ASSERT_EQ(out_shape, (Dims{4, 3, 2, 2}));
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < 3; ++b)
      for (int c = 0; c < 2; ++c)
        for (int d = 0; d < 2; ++d) {
          const auto y = indices.values[static_cast<std::size_t>(b * 4 + c * 2 + d)];
          EXPECT_EQ(out[static_cast<std::size_t>(((a * 3 + b) * 2 + c) * 2 + d)], 4 * a + 2 * y + d);
        }
}

TEST(SeedExamples, GatherAxis0Rows) {
  // ONNX Gather axis 0, indices [3,1]: input [4,3], indices [2,1], output [2,3], axes [0].
  Dims shape;
  EXPECT_EQ(gather_values(k4x3, Host<std::int64_t>{{2, 1}, {3, 1}}, {0}, {}, &shape),
            (V{30, 31, 32, 10, 11, 12}));
  EXPECT_EQ(shape, (Dims{2, 3}));
}

TEST(SeedExamples, GatherAxis1) {
  // axis 1, indices [2,1,0,1,2]: input [4,3], indices [1,5], output [4,5], axes [1].
  Dims shape;
  EXPECT_EQ(gather_values(k4x3, Host<std::int64_t>{{1, 5}, {2, 1, 0, 1, 2}}, {1}, {}, &shape),
            (V{2, 1, 0, 1, 2, 12, 11, 10, 11, 12, 22, 21, 20, 21, 22, 32, 31, 30, 31, 32}));
  EXPECT_EQ(shape, (Dims{4, 5}));
}

TEST(SeedExamples, GatherAxis1With2DIndices) {
  // axis 1, indices [[0,1],[1,2]]: input [4,1,3], indices [1,2,2], output [4,2,2], axes [2].
  Host<std::int32_t> input{{4, 1, 3}, k4x3.values};
  Dims shape;
  EXPECT_EQ(gather_values(input, Host<std::int64_t>{{1, 2, 2}, {0, 1, 1, 2}}, {2}, {}, &shape),
            (V{0, 1, 1, 2, 10, 11, 11, 12, 20, 21, 21, 22, 30, 31, 31, 32}));
  EXPECT_EQ(shape, (Dims{4, 2, 2}));
}

TEST(SeedExamples, GatherScalarIndex) {
  // [[1,2],[3,4]], scalar index 1, axis 0 -> [3 4]. (The seed prints indices shape [2,1] for this
  // block, copied from the next example; a scalar index reshapes to [1,1], output [1,2].)
  const Host<std::int32_t> input{{2, 2}, {1, 2, 3, 4}};
  Dims shape;
  EXPECT_EQ(gather_values(input, Host<std::int64_t>{{1, 1}, {1}}, {0}, {}, &shape), (V{3, 4}));
  EXPECT_EQ(shape, (Dims{1, 2}));
}

TEST(SeedExamples, GatherVectorIndex) {
  // indices [1 0], axis 0: input [2,2], indices [2,1], output [2,2], axes [0].
  const Host<std::int32_t> input{{2, 2}, {1, 2, 3, 4}};
  EXPECT_EQ(gather_values(input, Host<std::int64_t>{{2, 1}, {1, 0}}, {0}), (V{3, 4, 1, 2}));
}

TEST(SeedExamples, GatherMatrixIndex) {
  // indices [[1 0],[0 1]], axis 0: input [2,1,2], indices [2,2,1], output [2,2,2], axes [0].
  const Host<std::int32_t> input{{2, 1, 2}, {1, 2, 3, 4}};
  Dims shape;
  EXPECT_EQ(gather_values(input, Host<std::int64_t>{{2, 2, 1}, {1, 0, 0, 1}}, {0}, {}, &shape),
            (V{3, 4, 1, 2, 1, 2, 3, 4}));
  EXPECT_EQ(shape, (Dims{2, 2, 2}));
}

const Host<std::int32_t> k2x2x2{{2, 2, 2}, {0, 1, 2, 3, 4, 5, 6, 7}};

TEST(SeedExamples, GatherNDPairs) {
  // indices [[0,1],[1,0]]: input [2,2,2], indices [1,2,1*2], output [1,2,2], axes [0,1].
  Dims shape;
  EXPECT_EQ(gather_values(k2x2x2, Host<std::int64_t>{{1, 2, 2}, {0, 1, 1, 0}}, {0, 1}, {}, &shape),
            (V{2, 3, 4, 5}));
  EXPECT_EQ(shape, (Dims{1, 2, 2}));
}

TEST(SeedExamples, GatherNDBlocks) {
  // indices [[1],[0],[1]]: input [2,2,2], indices [3,1,1], output [3,2,2], axes [0].
  Dims shape;
  EXPECT_EQ(gather_values(k2x2x2, Host<std::int64_t>{{3, 1, 1}, {1, 0, 1}}, {0}, {}, &shape),
            (V{4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(shape, (Dims{3, 2, 2}));
}

TEST(SeedExamples, GatherNDBatchDims1) {
  // batch_dims = 1, indices [[1],[0]]: input [2,2,2], indices [2,1,1], output [2,1,2], axes [1].
  Dims shape;
  EXPECT_EQ(gather_values(k2x2x2, Host<std::int64_t>{{2, 1, 1}, {1, 0}}, {1}, {}, &shape),
            (V{2, 3, 4, 5}));
  EXPECT_EQ(shape, (Dims{2, 1, 2}));
}

TEST(SeedExamples, GatherNDTriples) {
  // indices [5,3]: input [2,2,2], indices [5,1,1*3], output [5,1,1], axes [0,1,2].
  Dims shape;
  EXPECT_EQ(gather_values(k2x2x2,
                          Host<std::int64_t>{{5, 1, 3}, {0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1}},
                          {0, 1, 2}, {}, &shape),
            (V{1, 2, 4, 6, 7}));
  EXPECT_EQ(shape, (Dims{5, 1, 1}));
}

TEST(SeedExamples, GatherNDBroadcastsLeadingInputDims) {
  // batch_dims = 1, input [1,3] = [[0,1,2]], indices [[1],[2]] -> [1,2] (input dim 0 broadcasts).
  const Host<std::int32_t> input{{1, 3}, {0, 1, 2}};
  EXPECT_EQ(gather_values(input, Host<std::int64_t>{{2, 1}, {1, 2}}, {1}), (V{1, 2}));
}

TEST(SeedExamples, GatherElementsAxis0) {
  EXPECT_EQ(gather_values(k4x3, Host<std::int64_t>{{2, 3}, {3, 1, 1, 2, 0, 3}}, {0}),
            (V{30, 11, 12, 20, 1, 32}));
}

TEST(SeedExamples, GatherElementsAxis1) {
  EXPECT_EQ(gather_values(k4x3, Host<std::int64_t>{{4, 1}, {2, 1, 0, 2}}, {1}), (V{2, 11, 20, 32}));
}

TEST(SeedExamples, GatherElements3D) {
  const Host<std::int32_t> input{{4, 2, 2},
                                 {0, 1, 10, 11, 100, 101, 110, 111, 200, 201, 210, 211, 300, 301, 310, 311}};
  EXPECT_EQ(gather_values(input, Host<std::int64_t>{{1, 2, 2}, {0, 2, 1, 3}}, {0}),
            (V{0, 201, 110, 311}));
}

}  // namespace
