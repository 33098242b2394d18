// Random configurations of the lowering recipes against direct transcriptions of each
// framework's formula (independent of multigather's views): onnx.Gather / tf.gather with batch
// dims (block), onnx.GatherND with batch dims (nd), numpy.advanced_index (adjacent and separated),
// and stablehlo.gather (random dimension numbers, windows, batching dims, index_vector_dim
// anywhere) against the StableHLO spec's semantics. The seed is printed; rerun one case with
// MULTIGATHER_SEED=<seed>.
#include <algorithm>
#include <cstdlib>
#include <random>

#include "op_test_support.hpp"

namespace multigather {
namespace {

using namespace testing;
using Vec = std::vector<std::int64_t>;

unsigned base_seed() {
  const char* env = std::getenv("MULTIGATHER_SEED");
  return env ? static_cast<unsigned>(std::strtoul(env, nullptr, 10)) : 20261121u;
}

std::int64_t numel(const Vec& s) {
  std::int64_t n = 1;
  for (auto v : s) n *= v;
  return n;
}

Vec unravel(std::int64_t flat, const Vec& shape) {
  Vec p(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    p[d] = flat % shape[d];
    flat /= shape[d];
  }
  return p;
}

std::int64_t ravel(const Vec& p, const Vec& shape) {
  std::int64_t f = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + p[d];
  return f;
}

Vec random_shape(std::mt19937& rng, int rank, int lo = 1, int hi = 4) {
  Vec s;
  for (int d = 0; d < rank; ++d) s.push_back(std::uniform_int_distribution<int>(lo, hi)(rng));
  return s;
}

std::vector<double> random_indices(std::mt19937& rng, std::int64_t n, int lo, int hi) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < n; ++i) v.push_back(std::uniform_int_distribution<int>(lo, hi)(rng));
  return v;
}

Dims dims(const Vec& v) { return Dims(std::span<const std::int64_t>(v)); }

TEST(RandomFrontends, BlockGatherWithBatchDims) {
  const unsigned seed = base_seed();
  std::printf("[random] BlockGatherWithBatchDims seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const int r = std::uniform_int_distribution<int>(1, 4)(rng);
    const int b = std::uniform_int_distribution<int>(0, r - 1)(rng);
    const int a = std::uniform_int_distribution<int>(b, r - 1)(rng);
    const Vec x = random_shape(rng, r);
    Vec is(x.begin(), x.begin() + b);
    for (const auto v : random_shape(rng, std::uniform_int_distribution<int>(0, 2)(rng))) is.push_back(v);
    const std::int64_t D = x[static_cast<std::size_t>(a)];
    const Tensor data = f32(dims(x), iota(static_cast<int>(numel(x))));
    const Tensor idx = i64(dims(is), random_indices(rng, numel(is), 0, static_cast<int>(D) - 1));
    // output[p.., i.., q..] = params[p.., indices[p[:b].., i..], q..]
    Vec os(x.begin(), x.begin() + a);
    os.insert(os.end(), is.begin() + b, is.end());
    os.insert(os.end(), x.begin() + a + 1, x.end());
    std::vector<double> want;
    for (std::int64_t f = 0; f < numel(os); ++f) {
      const Vec o = unravel(f, os);
      Vec ip(o.begin(), o.begin() + b);
      ip.insert(ip.end(), o.begin() + a, o.begin() + a + (static_cast<std::int64_t>(is.size()) - b));
      Vec xp(o.begin(), o.begin() + a);
      xp.push_back(idx.data_as<std::int64_t>()[ravel(ip, is)]);
      xp.insert(xp.end(), o.begin() + a + (static_cast<std::int64_t>(is.size()) - b), o.end());
      want.push_back(static_cast<double>(ravel(xp, x)));
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_op("tf.gather", data, idx, {{"axis", std::to_string(a)}, {"batch_dims", std::to_string(b)}}, dims(os), want);
    if (b == 0) expect_op("onnx.Gather", data, idx, {{"axis", std::to_string(a)}}, dims(os), want);
  }
}

TEST(RandomFrontends, GatherNdWithBatchDims) {
  const unsigned seed = base_seed() + 1;
  std::printf("[random] GatherNdWithBatchDims seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const int r = std::uniform_int_distribution<int>(1, 4)(rng);
    const int b = std::uniform_int_distribution<int>(0, r - 1)(rng);
    const int k = std::uniform_int_distribution<int>(1, r - b)(rng);
    const Vec x = random_shape(rng, r);
    Vec is(x.begin(), x.begin() + b);
    for (const auto v : random_shape(rng, std::uniform_int_distribution<int>(0, 2)(rng))) is.push_back(v);
    is.push_back(k);
    const Tensor data = f32(dims(x), iota(static_cast<int>(numel(x))));
    std::vector<double> iv;
    for (std::int64_t f = 0; f < numel(is); ++f) {
      const std::int64_t D = x[static_cast<std::size_t>(b + f % k)];
      iv.push_back(std::uniform_int_distribution<int>(static_cast<int>(-D), static_cast<int>(D) - 1)(rng));
    }
    const Tensor idx = i64(dims(is), iv);
    Vec os(is.begin(), is.end() - 1);
    os.insert(os.end(), x.begin() + b + k, x.end());
    const std::size_t jn = is.size() - 1;  // batch + index dims of the output
    std::vector<double> want;
    for (std::int64_t f = 0; f < numel(os); ++f) {
      const Vec o = unravel(f, os);
      Vec xp(o.begin(), o.begin() + b);
      Vec ip(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(jn));
      ip.push_back(0);
      for (int j = 0; j < k; ++j) {
        ip.back() = j;
        std::int64_t v = idx.data_as<std::int64_t>()[ravel(ip, is)];
        if (v < 0) v += x[static_cast<std::size_t>(b + j)];
        xp.push_back(v);
      }
      xp.insert(xp.end(), o.begin() + static_cast<std::ptrdiff_t>(jn), o.end());
      want.push_back(static_cast<double>(ravel(xp, x)));
    }
    SCOPED_TRACE("trial " + std::to_string(trial));
    expect_op("onnx.GatherND", data, idx, {{"batch_dims", std::to_string(b)}}, dims(os), want);
  }
}

TEST(RandomFrontends, AdvancedIndexing) {
  const unsigned seed = base_seed() + 2;
  std::printf("[random] AdvancedIndexing seed %u\n", seed);
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 200; ++trial) {
    const int r = std::uniform_int_distribution<int>(1, 4)(rng);
    const Vec x = random_shape(rng, r);
    Vec index_dims;
    for (int d = 0; d < r; ++d) {
      if (rng() % 2) index_dims.push_back(d);
    }
    if (index_dims.empty()) index_dims.push_back(rng() % r);
    const int k = static_cast<int>(index_dims.size());
    Vec is = random_shape(rng, std::uniform_int_distribution<int>(0, 2)(rng));
    const Vec bsh = is;
    is.push_back(k);
    std::vector<double> iv;
    for (std::int64_t f = 0; f < numel(is); ++f) {
      const std::int64_t D = x[static_cast<std::size_t>(index_dims[static_cast<std::size_t>(f % k)])];
      iv.push_back(std::uniform_int_distribution<int>(static_cast<int>(-D), static_cast<int>(D) - 1)(rng));
    }
    const Tensor data = f32(dims(x), iota(static_cast<int>(numel(x))));
    const Tensor idx = i64(dims(is), iv);
    const bool adjacent = index_dims.back() - index_dims.front() == k - 1;
    Vec rest;  // non-indexed dims of x
    for (int d = 0; d < r; ++d) {
      if (std::find(index_dims.begin(), index_dims.end(), d) == index_dims.end()) rest.push_back(d);
    }
    const std::int64_t s = index_dims.front();
    Vec os;
    if (adjacent) {
      os.assign(x.begin(), x.begin() + s);
      os.insert(os.end(), bsh.begin(), bsh.end());
      os.insert(os.end(), x.begin() + s + k, x.end());
    } else {
      os = bsh;
      for (auto d : rest) os.push_back(x[static_cast<std::size_t>(d)]);
    }
    std::vector<double> want;
    for (std::int64_t f = 0; f < numel(os); ++f) {
      const Vec o = unravel(f, os);
      Vec bpos, rpos;  // position in B, and in the non-indexed dims (in order)
      if (adjacent) {
        rpos.assign(o.begin(), o.begin() + s);
        bpos.assign(o.begin() + s, o.begin() + s + static_cast<std::ptrdiff_t>(bsh.size()));
        rpos.insert(rpos.end(), o.begin() + s + static_cast<std::ptrdiff_t>(bsh.size()), o.end());
      } else {
        bpos.assign(o.begin(), o.begin() + static_cast<std::ptrdiff_t>(bsh.size()));
        rpos.assign(o.begin() + static_cast<std::ptrdiff_t>(bsh.size()), o.end());
      }
      Vec xp(static_cast<std::size_t>(r));
      for (std::size_t i = 0; i < rest.size(); ++i) xp[static_cast<std::size_t>(rest[i])] = rpos[i];
      for (int j = 0; j < k; ++j) {
        Vec ip = bpos;
        ip.push_back(j);
        std::int64_t v = idx.data_as<std::int64_t>()[ravel(ip, is)];
        const std::int64_t d = index_dims[static_cast<std::size_t>(j)];
        if (v < 0) v += x[static_cast<std::size_t>(d)];
        xp[static_cast<std::size_t>(d)] = v;
      }
      want.push_back(static_cast<double>(ravel(xp, x)));
    }
    std::string dl;
    for (auto d : index_dims) dl += (dl.empty() ? "" : ",") + std::to_string(d);
    SCOPED_TRACE("trial " + std::to_string(trial) + " index_dims " + dl);
    expect_op("numpy.advanced_index", data, idx, {{"index_dims", dl}}, dims(os), want);
  }
}

// The StableHLO spec's gather semantics, transcribed (docs/spec.md#gather).
std::vector<double> stablehlo_oracle(const Vec& operand, const Tensor& start, const Vec& si,
                                     const Vec& offset_dims, const Vec& collapsed, const Vec& ob,
                                     const Vec& sib, const Vec& sim, std::int64_t ivd, const Vec& slice,
                                     const Vec& result_shape) {
  const int R = static_cast<int>(operand.size()), Q = static_cast<int>(si.size());
  std::vector<double> out;
  for (std::int64_t f = 0; f < numel(result_shape); ++f) {
    const Vec ri = unravel(f, result_shape);
    Vec batch_index, offset_index;
    for (std::size_t e = 0; e < ri.size(); ++e) {
      (std::find(offset_dims.begin(), offset_dims.end(), static_cast<std::int64_t>(e)) != offset_dims.end()
           ? offset_index : batch_index).push_back(ri[e]);
    }
    Vec start_index;
    for (std::size_t j = 0; j < sim.size(); ++j) {
      Vec sp;
      std::size_t bi = 0;
      for (int p = 0; p < Q; ++p) sp.push_back(p == ivd ? static_cast<std::int64_t>(j) : batch_index[bi++]);
      start_index.push_back(start.data_as<std::int64_t>()[ravel(sp, si)]);
    }
    Vec full_start(static_cast<std::size_t>(R), 0), full_batch(static_cast<std::size_t>(R), 0),
        full_offset(static_cast<std::size_t>(R), 0);
    for (std::size_t j = 0; j < sim.size(); ++j) {
      const std::int64_t d = sim[j];
      const std::int64_t hi = operand[static_cast<std::size_t>(d)] - slice[static_cast<std::size_t>(d)];
      full_start[static_cast<std::size_t>(d)] = std::clamp(start_index[j], std::int64_t{0}, hi);
    }
    for (std::size_t i = 0; i < ob.size(); ++i) {
      const std::int64_t p = sib[i];
      full_batch[static_cast<std::size_t>(ob[i])] = batch_index[static_cast<std::size_t>(p < ivd ? p : p - 1)];
    }
    std::size_t u = 0;
    for (int d = 0; d < R; ++d) {
      const bool skip = std::find(collapsed.begin(), collapsed.end(), d) != collapsed.end() ||
                        std::find(ob.begin(), ob.end(), d) != ob.end();
      if (!skip) full_offset[static_cast<std::size_t>(d)] = offset_index[u++];
    }
    Vec op(static_cast<std::size_t>(R));
    for (int d = 0; d < R; ++d) op[static_cast<std::size_t>(d)] = full_start[d] + full_batch[d] + full_offset[d];
    out.push_back(static_cast<double>(ravel(op, operand)));
  }
  return out;
}

std::string csv(const Vec& v) {
  std::string s;
  for (auto x : v) s += (s.empty() ? "" : ",") + std::to_string(x);
  return s;
}

TEST(RandomFrontends, StablehloGatherAgainstTheSpecSemantics) {
  const unsigned seed = base_seed() + 3;
  std::printf("[random] StablehloGatherAgainstTheSpecSemantics seed %u\n", seed);
  std::mt19937 rng(seed);
  int windowed = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int R = std::uniform_int_distribution<int>(1, 3)(rng);
    const Vec operand = random_shape(rng, R);
    Vec dims_left(static_cast<std::size_t>(R));
    for (int d = 0; d < R; ++d) dims_left[static_cast<std::size_t>(d)] = d;
    std::shuffle(dims_left.begin(), dims_left.end(), rng);
    Vec ob;  // at most one operand batching dim
    if (R >= 2 && rng() % 2) { ob.push_back(dims_left.back()); dims_left.pop_back(); }
    Vec sim;  // indexed dims, any order
    for (auto d : dims_left) {
      if (rng() % 2) sim.push_back(d);
    }
    Vec slice(static_cast<std::size_t>(R)), collapsed;
    for (int d = 0; d < R; ++d) {
      const std::int64_t D = operand[static_cast<std::size_t>(d)];
      if (std::find(ob.begin(), ob.end(), d) != ob.end()) { slice[static_cast<std::size_t>(d)] = 1; continue; }
      slice[static_cast<std::size_t>(d)] = std::uniform_int_distribution<std::int64_t>(1, D)(rng);
      if (slice[static_cast<std::size_t>(d)] == 1 && rng() % 2) collapsed.push_back(d);
    }
    std::sort(ob.begin(), ob.end());
    std::sort(collapsed.begin(), collapsed.end());
    // start_indices: free batch dims, the paired batching dims, the index vector dim (or implicit).
    const int k = static_cast<int>(sim.size());
    Vec si = random_shape(rng, std::uniform_int_distribution<int>(0, 2)(rng), 1, 3);
    Vec sib;
    for (auto d : ob) {
      const std::size_t at = rng() % (si.size() + 1);
      si.insert(si.begin() + static_cast<std::ptrdiff_t>(at), operand[static_cast<std::size_t>(d)]);
      for (auto& p : sib) if (p >= static_cast<std::int64_t>(at)) ++p;
      sib.push_back(static_cast<std::int64_t>(at));
    }
    std::int64_t ivd = static_cast<std::int64_t>(si.size());
    if (!(k == 1 && rng() % 2)) {
      ivd = static_cast<std::int64_t>(rng() % (si.size() + 1));
      si.insert(si.begin() + ivd, k);
      for (auto& p : sib) if (p >= ivd) ++p;
    }
    const int nbatch = static_cast<int>(si.size()) - (ivd < static_cast<std::int64_t>(si.size()) ? 1 : 0);
    const int noffset = R - static_cast<int>(collapsed.size() + ob.size());
    const int result_rank = nbatch + noffset;
    Vec positions(static_cast<std::size_t>(result_rank));
    for (int e = 0; e < result_rank; ++e) positions[static_cast<std::size_t>(e)] = e;
    std::shuffle(positions.begin(), positions.end(), rng);
    Vec offset_dims(positions.begin(), positions.begin() + noffset);
    std::sort(offset_dims.begin(), offset_dims.end());
    Vec result_shape(static_cast<std::size_t>(result_rank));
    {
      std::size_t u = 0, bi = 0;
      Vec offset_sizes, batch_sizes;
      for (int d = 0; d < R; ++d) {
        if (std::find(collapsed.begin(), collapsed.end(), d) == collapsed.end() &&
            std::find(ob.begin(), ob.end(), d) == ob.end()) offset_sizes.push_back(slice[static_cast<std::size_t>(d)]);
      }
      for (std::size_t p = 0; p < si.size(); ++p) if (static_cast<std::int64_t>(p) != ivd) batch_sizes.push_back(si[p]);
      for (int e = 0; e < result_rank; ++e) {
        result_shape[static_cast<std::size_t>(e)] =
            std::find(offset_dims.begin(), offset_dims.end(), e) != offset_dims.end() ? offset_sizes[u++] : batch_sizes[bi++];
      }
    }
    for (auto d : sim) windowed += slice[static_cast<std::size_t>(d)] != 1;
    const Tensor data = f32(dims(operand), iota(static_cast<int>(numel(operand))));
    const Tensor start = i64(dims(si), random_indices(rng, numel(si), -3, 6));
    const Attributes attrs{{"offset_dims", csv(offset_dims)}, {"collapsed_slice_dims", csv(collapsed)},
                           {"operand_batching_dims", csv(ob)}, {"start_indices_batching_dims", csv(sib)},
                           {"start_index_map", csv(sim)}, {"index_vector_dim", std::to_string(ivd)},
                           {"slice_sizes", csv(slice)}};
    SCOPED_TRACE("trial " + std::to_string(trial) + ": operand " + csv(operand) + " start_indices " + csv(si) +
                 " offset_dims " + csv(offset_dims) + " collapsed " + csv(collapsed) + " ob " + csv(ob) +
                 " sib " + csv(sib) + " sim " + csv(sim) + " ivd " + std::to_string(ivd) + " slices " + csv(slice));
    expect_op("stablehlo.gather", data, start, attrs, dims(result_shape),
              stablehlo_oracle(operand, start, si, offset_dims, collapsed, ob, sib, sim, ivd, slice, result_shape));
  }
  EXPECT_GT(windowed, 50);  // the windowed path is exercised, not only point gathers
}

}  // namespace
}  // namespace multigather
