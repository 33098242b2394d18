// One device's piece of a split call on the device (kernels/shard_piece.hpp), the bodies the CUDA
// engine runs over grids, here on the host over launched grids (threads last to first), against
// plan/sharding.cpp's localize / write_fill (what the CPU engine runs): random gather_multiaxis /
// scatter_multiaxis calls (one or two axes, every index mode, negative rule on and off, index
// dtypes of 8 to 64 bits, signed and unsigned, empty axes), one axis split at a random offset:
// the same resolved indices, the same marks of fill positions, the same fill, and an error
// exactly where localize fails.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/shard_piece.hpp"
#include "multigather/lowering.hpp"
#include "multigather/sharding.hpp"
#include "plan/shard_plan.hpp"
#include "test_seed.hpp"

namespace multigather {
namespace {

template <class T>
void fill_values(Tensor* t, const std::vector<std::int64_t>& v) {
  for (std::size_t i = 0; i < v.size(); ++i) static_cast<T*>(t->data())[i] = static_cast<T>(v[i]);
}

Tensor index_tensor(DType dtype, const Dims& shape, const std::vector<std::int64_t>& v) {
  Tensor t(dtype, shape);
  switch (dtype) {
    case DType::kInt8: fill_values<std::int8_t>(&t, v); break;
    case DType::kInt32: fill_values<std::int32_t>(&t, v); break;
    case DType::kUInt8: fill_values<std::uint8_t>(&t, v); break;
    case DType::kUInt64: fill_values<std::uint64_t>(&t, v); break;
    default: fill_values<std::int64_t>(&t, v); break;
  }
  return t;
}

TEST(ShardPiece, TheDeviceBodiesOverLaunchedGridsGiveLocalizesIndicesMarksFillAndErrors) {
  std::mt19937_64 rng(test::run_seed() + 47);
  const auto pick = [&](std::int64_t n) { return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n)); };
  static const DType kIndexTypes[] = {DType::kInt8, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt64};
  int ran = 0, failed = 0, filled = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    SCOPED_TRACE("iteration " + std::to_string(iteration));
    const bool scatter = iteration % 3 == 0;
    const int r = static_cast<int>(pick(3)) + 1;
    const int k = r >= 2 && pick(2) == 0 ? 2 : 1;
    std::vector<std::int64_t> axes;
    while (static_cast<int>(axes.size()) < k) {
      const std::int64_t a = pick(r);
      if (axes.empty() || axes[0] != a) axes.push_back(a);
    }
    Dims whole;
    for (int d = 0; d < r; ++d) whole.push_back(pick(8) == 0 ? 0 : pick(5) + 1);
    // one axis split: the piece holds [offset, offset + local) of it
    const int split = static_cast<int>(pick(k));
    const std::int64_t n_split = whole[static_cast<int>(axes[static_cast<std::size_t>(split)])];
    const std::int64_t local = n_split == 0 ? 0 : pick(n_split) + 1, offset = pick(n_split - local + 1);
    Dims piece_shape = whole;
    piece_shape[static_cast<int>(axes[static_cast<std::size_t>(split)])] = local;
    std::vector<AxisShard> shards;
    for (int j = 0; j < k; ++j) {
      const std::int64_t n = whole[static_cast<int>(axes[static_cast<std::size_t>(j)])];
      shards.push_back(j == split ? AxisShard{n, offset} : (pick(2) == 0 ? AxisShard{-1, 0} : AxisShard{n, 0}));
    }
    // indices: the input's rank, the last dimension L * c; values around the whole axes
    Dims ishape;
    for (int d = 0; d < r; ++d) ishape.push_back(pick(3) + 1);
    ishape[r - 1] *= k;
    const DType idtype = kIndexTypes[pick(5)];
    std::vector<std::int64_t> values;
    for (std::int64_t e = 0, n = TensorView(nullptr, idtype, ishape).numel(); e < n; ++e) {
      const std::int64_t size = whole[static_cast<int>(axes[static_cast<std::size_t>(e % k)])];
      std::int64_t v = pick(2 * size + 5) - size - 2;
      if (idtype == DType::kUInt8 || idtype == DType::kUInt64) v = v < 0 ? (idtype == DType::kUInt8 ? 200 : -v) : v;
      values.push_back(v);
    }
    const Tensor indices = index_tensor(idtype, ishape, values);
    static const char* kGatherModes[] = {"error", "clamp", "wrap", "fill"};
    static const char* kScatterModes[] = {"error", "clamp", "wrap", "drop"};
    Attributes attrs;
    attrs.set_ints("axes", axes);
    attrs.set_string("index_mode", scatter ? kScatterModes[pick(4)] : kGatherModes[pick(4)]);
    attrs.set_bool("negative_indices", pick(2) == 0);
    if (!scatter && pick(2) == 0) attrs.set_float("fill_value", -3.5);
    const Tensor input(DType::kFloat32, piece_shape);
    Lowering l;
    Status lowered;
    Tensor updates;
    if (scatter) {
      Dims ushape = ishape;
      ushape[r - 1] /= k;
      for (int d = 0; d < r; ++d) {
        bool is_axis = false;
        for (std::int64_t a : axes) is_axis = is_axis || a == d;
        if (!is_axis && ushape[d] == 1) ushape[d] = piece_shape[d];
      }
      updates = Tensor(DType::kFloat32, ushape);
      lowered = lower_op("scatter_multiaxis", input.view(), indices.view(), updates.view(), attrs, &l);
    } else {
      lowered = lower_op("gather_multiaxis", input.view(), indices.view(), attrs, &l);
    }
    if (!lowered.ok()) continue;  // shapes that do not broadcast
    // the oracle: localize
    Lowering piece;
    detail::ShardFill fill;
    const Status want = detail::localize(l, shards, &piece, &fill);
    // the bodies
    detail::ShardPieceParams p;
    const Status params = detail::shard_piece_params(l, shards, &p);
    if (!params.ok()) {  // a shard that does not fit: localize's own refusal
      EXPECT_EQ(params.message(), want.message());
      continue;
    }
    std::vector<std::int64_t> resolved(static_cast<std::size_t>(p.n), -9);
    std::vector<std::uint8_t> marks(static_cast<std::size_t>(p.n / p.c + 1), 0);
    unsigned long long first = static_cast<unsigned long long>(p.n);
    p.resolved = resolved.data();
    p.out_of_range = marks.data();
    p.first_error = &first;
    const std::int64_t threads = 1 + pick(40);
    for (std::int64_t t = threads - 1; t >= 0; --t) detail::shard_piece_thread(p, t, threads);
    if (!want.ok()) {
      EXPECT_LT(first, static_cast<unsigned long long>(p.n)) << want.message();
      ++failed;
      continue;
    }
    ASSERT_EQ(first, static_cast<unsigned long long>(p.n));
    ASSERT_EQ(piece.indices.dtype, DType::kInt64);
    ASSERT_EQ(std::memcmp(resolved.data(), piece.indices.data, resolved.size() * 8), 0);
    for (std::size_t q = 0; q < static_cast<std::size_t>(p.n / p.c); ++q) {
      ASSERT_EQ(marks[q], fill.out_of_range.empty() ? 0 : fill.out_of_range[q]) << "position " << q;
    }
    ++ran;
    if (scatter || fill.out_of_range.empty()) continue;
    // the fill: write_fill against shard_fill_thread, on outputs of the same bytes
    Tensor a(DType::kFloat32, l.output_shape), b(DType::kFloat32, l.output_shape);
    std::memset(a.data(), 0x11, a.nbytes());
    std::memset(b.data(), 0x11, b.nbytes());
    ASSERT_TRUE(detail::write_fill(l, fill, a.mutable_view()).ok());
    detail::ShardFillParams f;
    ASSERT_TRUE(detail::shard_fill_params(l, b.mutable_view(), marks.data(), &f).ok());
    for (std::int64_t t = threads - 1; t >= 0; --t) detail::shard_fill_thread(f, t, threads);
    ASSERT_EQ(std::memcmp(a.data(), b.data(), a.nbytes()), 0);
    ++filled;
  }
  EXPECT_GT(ran, 800);
  EXPECT_GT(failed, 200);
  EXPECT_GT(filled, 50);
}

}  // namespace
}  // namespace multigather
