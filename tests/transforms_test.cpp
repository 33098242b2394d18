// Batching and VJPs of every registry op (multigather/transforms.hpp; src/api/transforms.cpp),
// the C++ side of multigather.jax's vmap and grad. Oracles:
//   TransformsBatched  execute_batched on operands with 1 or 2 leading batch dimensions (each
//                      operand batched or broadcast) equals run_op on each example in turn
//   TransformsVjp      the dot-product test of the adjoint, exact in float64 on small integers:
//                      <op(x[, u]), g> == <x, vjp_x(g)> (+ <u, vjp_u(g)>), for every gather op and
//                      every scatter op with reduction none or add (both are linear in x and u for
//                      fixed indices); ops without a gradient say so
#include <deque>
#include <cmath>
#include <algorithm>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <span>
#include <utility>
#include <string>
#include <vector>

#include "multigather/multigather.hpp"
#include "multigather/sharding.hpp"
#include "multigather/transforms.hpp"
#include "op_test_support.hpp"

namespace multigather {
namespace {

using testing::explain_cases;
using testing::scatter_explain_cases;

Dims prepend(const Dims& lead, const Dims& shape) {
  Dims out = lead;
  for (std::int64_t s : shape) out.push_back(s);
  return out;
}

// Small integers as float64 (sums of products stay exact).
Tensor random_f64(const Dims& shape, std::mt19937& rng) {
  Tensor t(DType::kFloat64, shape);
  std::uniform_int_distribution<int> d(-4, 4);
  for (std::int64_t k = 0; k < t.numel(); ++k) t.data_as<double>()[k] = d(rng);
  return t;
}

// Index values 0 / 1 (in range for every case's shapes, duplicates included), or all 0.
// tf.math.segment_* takes sorted ids and torch_scatter.segment_csr a non-decreasing indptr:
// their 0 / 1 values are sorted.
Tensor indices_of(const std::string& op, const Dims& shape, bool zeros, std::mt19937& rng) {
  Tensor t(DType::kInt64, shape);
  std::uniform_int_distribution<int> d(0, 1);
  auto* v = t.data_as<std::int64_t>();
  for (std::int64_t k = 0; k < t.numel(); ++k) v[k] = zeros ? 0 : d(rng);
  if (op.rfind("tf.math.segment_", 0) == 0 || op == "torch_scatter.segment_csr") std::sort(v, v + t.numel());
  return t;
}

double dot(const Tensor& a, const Tensor& b) {
  double s = 0;
  for (std::int64_t k = 0; k < a.numel(); ++k) s += a.data_as<double>()[k] * b.data_as<double>()[k];
  return s;
}

struct Case {
  std::string op;
  Dims x, i, u;
  bool scatter = false;
  Attributes attrs;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const auto& c : explain_cases()) cases.push_back({c.op, c.x, c.i, {}, false, c.a});
  for (const auto& c : testing::segment_explain_cases()) cases.push_back({c.op, c.x, c.i, {}, false, c.a});
  for (const auto& c : scatter_explain_cases()) cases.push_back({c.op, c.x, c.i, c.u, true, c.a});
  return cases;
}

// Runs one example through run_op; false (and no failure) when the indices are out of range
// for this op, so that the caller can try other index values.
bool run_example(const Case& c, const TensorView& x, const TensorView& i, const TensorView& u, Tensor* out,
                 Status* status) {
  *status = c.scatter ? run_op(c.op, x, i, u, c.attrs, out) : run_op(c.op, x, i, c.attrs, out);
  return status->ok();
}

// Index values that the op accepts for these shapes (0/1 random, else all 0).
bool valid_indices(const Case& c, std::mt19937& rng, Tensor* indices) {
  for (bool zeros : {false, true}) {
    *indices = indices_of(c.op, c.i, zeros, rng);
    Tensor x = random_f64(c.x, rng), u = random_f64(c.u, rng), out;
    Status s;
    if (run_example(c, x.view(), indices->view(), u.view(), &out, &s)) return true;
    if (s.code() != StatusCode::kOutOfRange) {
      ADD_FAILURE() << c.op << ": " << s.message();
      return false;
    }
  }
  ADD_FAILURE() << c.op << ": no index values in range";
  return false;
}

TEST(TransformsBatched, EveryRegistryOpEqualsALoopOverExamples) {
  std::mt19937 rng(11);
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.op);
    Tensor one_index;
    if (!valid_indices(c, rng, &one_index)) continue;
    // batch [3] with each operand batched or not, and batch [2, 3] with mixed leads
    const std::vector<std::pair<Dims, std::vector<Dims>>> layouts = {
        {{3}, {{3}, {3}, {3}}}, {{3}, {{1}, {3}, {3}}}, {{3}, {{3}, {1}, {3}}},
        {{3}, {{3}, {3}, {1}}}, {{3}, {{1}, {1}, {3}}}, {{2, 3}, {{2, 1}, {1, 3}, {2, 3}}}};
    for (const auto& [batch, leads] : layouts) {
      if (!c.scatter && leads[0] == leads[2] && leads[0] == Dims{1}) continue;
      const Tensor x = random_f64(prepend(leads[0], c.x), rng);
      Tensor i(DType::kInt64, prepend(leads[1], c.i));
      for (std::int64_t k = 0; k < i.numel(); ++k) {
        i.data_as<std::int64_t>()[k] = one_index.data_as<std::int64_t>()[k % one_index.numel()];
      }
      const Tensor u = random_f64(prepend(leads[2], c.u), rng);
      if (!c.scatter && leads[0] == Dims{1} && leads[1] == Dims{1}) continue;  // nothing batched
      Tensor first;
      Status s;
      ASSERT_TRUE(run_example(c, TensorView(x.data(), x.dtype(), c.x), TensorView(i.data(), i.dtype(), c.i),
                              TensorView(u.data(), u.dtype(), c.u), &first, &s)) << s.message();
      Tensor out(DType::kFloat64, prepend(batch, first.shape()));
      const TensorView uv = u.view();
      s = execute_batched(c.op, x.view(), i.view(), c.scatter ? &uv : nullptr, c.attrs, batch.size(),
                          out.mutable_view());
      ASSERT_TRUE(s.ok()) << s.message();
      // the oracle: each example alone
      std::int64_t count = 1;
      for (std::int64_t b : batch) count *= b;
      const std::int64_t n_out = first.numel();
      for (std::int64_t b = 0; b < count; ++b) {
        const std::int64_t b0 = batch.size() == 2 ? b / batch[1] : b, b1 = batch.size() == 2 ? b % batch[1] : 0;
        auto offset = [&](const Dims& lead, const Tensor& t, const Dims& example) {
          std::int64_t per = 1;
          for (std::int64_t s2 : example) per *= s2;
          std::int64_t pos = 0;
          if (batch.size() == 1) pos = lead[0] == 1 ? 0 : b0;
          else pos = (lead[0] == 1 ? 0 : b0) * lead[1] + (lead[1] == 1 ? 0 : b1);
          return static_cast<const std::byte*>(t.data()) + pos * per * static_cast<std::int64_t>(element_size(t.dtype()));
        };
        Tensor want;
        ASSERT_TRUE(run_example(c, TensorView(offset(leads[0], x, c.x), x.dtype(), c.x),
                                TensorView(offset(leads[1], i, c.i), i.dtype(), c.i),
                                TensorView(offset(leads[2], u, c.u), u.dtype(), c.u), &want, &s)) << s.message();
        for (std::int64_t k = 0; k < n_out; ++k) {
          ASSERT_EQ(out.data_as<double>()[b * n_out + k], want.data_as<double>()[k])
              << "batch " << to_string(batch) << " element " << b << " position " << k;
        }
      }
    }
  }
}

TEST(TransformsBatched, AnOutOfRangeIndexNamesItsBatchElement) {
  const Tensor x = testing::make_tensor(DType::kFloat64, {4, 3}, testing::iota(12));
  const Tensor i = testing::i64({2, 2, 1}, {0, 1, 3, 9});
  Tensor out(DType::kFloat64, {2, 2, 3});
  Attributes attrs;
  attrs.set_ints("axes", {0});
  const Status s = execute_batched("gather_multiaxis", TensorView(x.data(), x.dtype(), {1, 4, 3}), i.view(), nullptr,
                                   attrs, 1, out.mutable_view());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), "batch element [1]: indices[1,0] = 9 is out of range for axis 0 of size 4 (valid range [-4, 4))");
}

TEST(TransformsCallSiteCache, EveryRegistryOpLowersOnceAndGivesTheUncachedResults) {
  // One CallSiteCache per call site (an XLA custom call's handler state): the second and third
  // calls, on other buffers with other values, reuse the first call's lowering (moved to their
  // buffers) unless it copied an operand, and give execute_batched's uncached results, for
  // batch_rank 0 and 1; the VJP keeps its own lowering the same way.
  std::mt19937 rng(5);
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.op);
    Tensor index;
    if (!valid_indices(c, rng, &index)) continue;
    for (int batch_rank : {0, 1}) {
      const Dims lead = batch_rank == 0 ? Dims{} : Dims{2};
      CallSiteCache cache, vjp_cache;
      bool copies = false;
      std::deque<Tensor> earlier;  // every call's operands stay alive: a stale view would read them
      for (int call = 0; call < 3; ++call) {
        const Tensor& x = earlier.emplace_back(random_f64(prepend(lead, c.x), rng));
        const Tensor& u = earlier.emplace_back(random_f64(prepend(lead, c.u), rng));
        Tensor i(DType::kInt64, prepend(lead, c.i));
        for (std::int64_t k = 0; k < i.numel(); ++k) {
          i.data_as<std::int64_t>()[k] = index.data_as<std::int64_t>()[k % index.numel()];
        }
        const TensorView uv = u.view();
        const TensorView* updates = c.scatter ? &uv : nullptr;
        Tensor example;
        Status s;
        ASSERT_TRUE(run_example(c, TensorView(x.data(), x.dtype(), c.x), TensorView(i.data(), i.dtype(), c.i),
                                TensorView(u.data(), u.dtype(), c.u), &example, &s)) << s.message();
        const Dims out_shape = prepend(lead, example.shape());
        Tensor want(DType::kFloat64, out_shape), got(DType::kFloat64, out_shape);
        ASSERT_TRUE(execute_batched(c.op, x.view(), i.view(), updates, c.attrs, batch_rank, want.mutable_view()).ok());
        s = execute_batched(c.op, x.view(), i.view(), updates, c.attrs, batch_rank, got.mutable_view(), {}, &cache);
        ASSERT_TRUE(s.ok()) << s.message();
        ASSERT_EQ(std::memcmp(got.data(), want.data(), static_cast<std::size_t>(got.numel()) * 8), 0)
            << "batch_rank " << batch_rank << " call " << call;
        if (call == 0) {
          Lowering l;
          ASSERT_TRUE((c.scatter ? lower_op(c.op, TensorView(x.data(), x.dtype(), c.x), TensorView(i.data(), i.dtype(), c.i),
                                            TensorView(u.data(), u.dtype(), c.u), c.attrs, &l)
                                 : lower_op(c.op, TensorView(x.data(), x.dtype(), c.x), TensorView(i.data(), i.dtype(), c.i),
                                            c.attrs, &l)).ok());
          copies = l.owned_input != nullptr || l.owned_indices != nullptr || l.owned_updates != nullptr ||
                   l.has_scatter_base || l.reads_index_values;
        }
        // The VJP (where the op has one), cached and not.
        const Tensor g = random_f64(out_shape, rng);
        Tensor gx(DType::kFloat64, x.shape()), gu(DType::kFloat64, u.shape());
        Tensor gx2(DType::kFloat64, x.shape()), gu2(DType::kFloat64, u.shape());
        const MutableTensorView gu_v = gu.mutable_view(), gu2_v = gu2.mutable_view();
        const Status plain = execute_vjp(c.op, x.view(), i.view(), updates, c.attrs, batch_rank, g.view(),
                                         gx.mutable_view(), c.scatter ? &gu_v : nullptr);
        const Status cached = execute_vjp(c.op, x.view(), i.view(), updates, c.attrs, batch_rank, g.view(),
                                          gx2.mutable_view(), c.scatter ? &gu2_v : nullptr, {}, &vjp_cache);
        ASSERT_EQ(plain.code(), cached.code()) << cached.message();
        if (plain.ok()) {
          EXPECT_EQ(std::memcmp(gx.data(), gx2.data(), static_cast<std::size_t>(gx.numel()) * 8), 0);
          if (c.scatter) EXPECT_EQ(std::memcmp(gu.data(), gu2.data(), static_cast<std::size_t>(gu.numel()) * 8), 0);
        }
      }
      if (!copies) EXPECT_EQ(cache.lowerings(), 1) << "batch_rank " << batch_rank;
      EXPECT_LE(cache.lowerings(), batch_rank == 0 ? 3 : 9);  // copies: each example, each call
    }
  }
}

TEST(TransformsCallSiteCache, AGradientNotAskedForIsStillLoweredOnce) {
  // A framework that passes a scatter's input gradient on (torch's scatter_add) asks execute_vjp
  // for the updates' gradient alone: grad_input comes with null data (nothing is written there).
  // A gradient of the updates not asked for comes as null-data updates. Either way the call
  // site keeps its lowering (made on a stand-in base) and gives the gradients of a call that
  // asked for both.
  std::mt19937 rng(9);
  for (const Case& c : all_cases()) {
    if (!c.scatter) continue;
    SCOPED_TRACE(c.op);
    Tensor index;
    if (!valid_indices(c, rng, &index)) continue;
    Lowering l;
    const Tensor probe_x = random_f64(c.x, rng), probe_u = random_f64(c.u, rng);
    ASSERT_TRUE(lower_op(c.op, probe_x.view(), index.view(), probe_u.view(), c.attrs, &l).ok());
    const bool copies = l.owned_input != nullptr || l.owned_indices != nullptr || l.owned_updates != nullptr ||
                        l.has_scatter_base || l.reads_index_values;
    CallSiteCache updates_only, input_only;
    std::deque<Tensor> earlier;  // every call's buffers stay alive: a stale view would read them
    for (int call = 0; call < 3; ++call) {
      const Tensor& x = earlier.emplace_back(random_f64(c.x, rng));
      const Tensor& u = earlier.emplace_back(random_f64(c.u, rng));
      Tensor example;
      Status s;
      ASSERT_TRUE(run_example(c, x.view(), index.view(), u.view(), &example, &s)) << s.message();
      const Tensor& g = earlier.emplace_back(random_f64(example.shape(), rng));
      Tensor gx(DType::kFloat64, x.shape()), gu(DType::kFloat64, u.shape());
      const MutableTensorView gu_v = gu.mutable_view();
      const TensorView uv = u.view();
      const Status both = execute_vjp(c.op, x.view(), index.view(), &uv, c.attrs, 0, g.view(), gx.mutable_view(), &gu_v);
      if (!both.ok()) break;  // a reduction without a gradient: nothing to compare
      Tensor gu2(DType::kFloat64, u.shape()), gx2(DType::kFloat64, x.shape());
      const MutableTensorView gu2_v = gu2.mutable_view();
      const MutableTensorView no_grad_input(nullptr, DType::kFloat64, x.shape());
      ASSERT_TRUE(execute_vjp(c.op, x.view(), index.view(), &uv, c.attrs, 0, g.view(), no_grad_input, &gu2_v, {},
                              &updates_only).ok());
      EXPECT_EQ(std::memcmp(gu.data(), gu2.data(), static_cast<std::size_t>(gu.numel()) * 8), 0) << "call " << call;
      const TensorView no_updates(nullptr, DType::kFloat64, u.shape());
      ASSERT_TRUE(execute_vjp(c.op, x.view(), index.view(), &no_updates, c.attrs, 0, g.view(), gx2.mutable_view(),
                              nullptr, {}, &input_only).ok());
      EXPECT_EQ(std::memcmp(gx.data(), gx2.data(), static_cast<std::size_t>(gx.numel()) * 8), 0) << "call " << call;
    }
    if (!copies) {
      EXPECT_LE(updates_only.lowerings(), 1);
      EXPECT_LE(input_only.lowerings(), 1);
    }
  }
}

TEST(TransformsVjp, PyTorchWritesGiveEveryDuplicateTheGradient) {
  // torch.scatter(x, 0, index=[0, 0, 2], src): PyTorch's derivatives.yaml gives src
  // grad.gather(0, index), both duplicates included; x's gradient is zero where src wrote.
  // scatter_multiaxis (JAX's rule, the derivative of what runs): only the last duplicate.
  const double x[4] = {1, 2, 3, 4}, src[3] = {5, 6, 7}, g[4] = {10, 20, 30, 40};
  const std::int64_t index[3] = {0, 0, 2};
  double gx[4], gsrc[3];
  const TensorView xv(x, DType::kFloat64, {4}), iv(index, DType::kInt64, {3}), uv(src, DType::kFloat64, {3});
  const MutableTensorView gsrc_v(gsrc, DType::kFloat64, {3});
  Attributes attrs;
  attrs.set_int("dim", 0);
  ASSERT_TRUE(execute_vjp("torch.scatter", xv, iv, &uv, attrs, 0, TensorView(g, DType::kFloat64, {4}),
                          MutableTensorView(gx, DType::kFloat64, {4}), &gsrc_v).ok());
  EXPECT_EQ(std::vector<double>(gx, gx + 4), (std::vector<double>{0, 20, 0, 40}));
  EXPECT_EQ(std::vector<double>(gsrc, gsrc + 3), (std::vector<double>{10, 10, 30}));
  Attributes core;
  core.set_ints("axes", {0});
  ASSERT_TRUE(execute_vjp("scatter_multiaxis", xv, iv,
                          &uv, core, 0, TensorView(g, DType::kFloat64, {4}),
                          MutableTensorView(gx, DType::kFloat64, {4}), &gsrc_v).ok());
  EXPECT_EQ(std::vector<double>(gsrc, gsrc + 3), (std::vector<double>{0, 10, 30}));
}

TEST(TransformsVjp, GradOutputInAnyLayoutGivesTheContiguousBytes) {
  // Unbatched, execute_vjp takes grad_output in any layout (copied C-contiguous first): every
  // element at twice its C-contiguous offset, and a broadcast of one element (every stride 0:
  // torch's gradient of a sum). Either gives the gradients of the same values laid out
  // C-contiguously, byte for byte, with a call-site cache too (the kept lowering serves every
  // layout); grad_output is not written. Batched, grad_output must be C-contiguous.
  std::mt19937 rng(11);
  int strided = 0, broadcast = 0;
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.op);
    Tensor index;
    if (!valid_indices(c, rng, &index)) continue;
    const Tensor x = random_f64(c.x, rng), u = random_f64(c.u, rng);
    const TensorView uv = u.view();
    const TensorView* updates = c.scatter ? &uv : nullptr;
    Tensor example;
    Status s;
    ASSERT_TRUE(run_example(c, x.view(), index.view(), uv, &example, &s)) << s.message();
    const Dims out_shape = example.shape();
    const std::int64_t n = example.numel();
    if (n <= 1) continue;
    // grad_output's values three ways: C-contiguous, every other element of a buffer twice as
    // long, and one value repeated (with its C-contiguous twin).
    const Tensor dense = random_f64(out_shape, rng);
    Tensor spread(DType::kFloat64, {2 * n});
    for (std::int64_t k = 0; k < n; ++k) {
      spread.data_as<double>()[2 * k] = dense.data_as<double>()[k];
      spread.data_as<double>()[2 * k + 1] = 1e300;  // never read
    }
    Dims spread_strides = TensorView(dense.data(), DType::kFloat64, out_shape).strides;
    for (int d = 0; d < spread_strides.size(); ++d) spread_strides[d] *= 2;
    const double one = 3;
    Tensor ones(DType::kFloat64, out_shape);
    for (std::int64_t k = 0; k < n; ++k) ones.data_as<double>()[k] = one;
    const std::vector<std::pair<TensorView, TensorView>> layouts = {
        {TensorView(spread.data(), DType::kFloat64, out_shape, spread_strides), dense.view()},
        {TensorView(&one, DType::kFloat64, out_shape, Dims::filled(out_shape.size(), 0)), ones.view()},
    };
    CallSiteCache cache;
    for (int pass = 0; pass < 2; ++pass) {  // uncached, then the cached lowering
      for (const auto& [view, twin] : layouts) {
        Tensor want_x(DType::kFloat64, c.x), want_u(DType::kFloat64, c.u);
        Tensor got_x(DType::kFloat64, c.x), got_u(DType::kFloat64, c.u);
        const MutableTensorView want_u_v = want_u.mutable_view(), got_u_v = got_u.mutable_view();
        const Status want = execute_vjp(c.op, x.view(), index.view(), updates, c.attrs, 0, twin,
                                        want_x.mutable_view(), c.scatter ? &want_u_v : nullptr);
        const Status got = execute_vjp(c.op, x.view(), index.view(), updates, c.attrs, 0, view,
                                       got_x.mutable_view(), c.scatter ? &got_u_v : nullptr, {},
                                       pass == 1 ? &cache : nullptr);
        ASSERT_EQ(got.code(), want.code()) << got.message();
        ASSERT_EQ(got.message(), want.message());
        if (!want.ok()) continue;
        EXPECT_EQ(std::memcmp(got_x.data(), want_x.data(), static_cast<std::size_t>(got_x.numel()) * 8), 0);
        if (c.scatter) EXPECT_EQ(std::memcmp(got_u.data(), want_u.data(), static_cast<std::size_t>(got_u.numel()) * 8), 0);
        (view.strides[0] == 0 ? broadcast : strided) += 1;
      }
    }
    for (std::int64_t k = 0; k < n; ++k) {
      ASSERT_EQ(spread.data_as<double>()[2 * k + 1], 1e300);
      ASSERT_EQ(spread.data_as<double>()[2 * k], dense.data_as<double>()[k]);
    }
    // Batched: one example of batch 2, grad_output spread as above.
    Tensor x2(DType::kFloat64, prepend({2}, c.x)), gx2(DType::kFloat64, prepend({2}, c.x));
    Tensor i2(DType::kInt64, prepend({2}, c.i)), g2(DType::kFloat64, {4 * n});
    for (std::int64_t k = 0; k < i2.numel(); ++k) {
      i2.data_as<std::int64_t>()[k] = index.data_as<std::int64_t>()[k % index.numel()];
    }
    const Dims g2_shape = prepend({2}, out_shape);
    Dims g2_strides = TensorView(g2.data(), DType::kFloat64, g2_shape).strides;
    for (int d = 0; d < g2_strides.size(); ++d) g2_strides[d] *= 2;
    if (c.scatter) continue;  // the check is the same for every op; a gather's operands suffice
    s = execute_vjp(c.op, x2.view(), i2.view(), nullptr, c.attrs, 1, TensorView(g2.data(), DType::kFloat64, g2_shape, g2_strides),
                    gx2.mutable_view(), nullptr);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(s.message(), "grad_output must be C-contiguous (strides " + to_string(g2_strides) + " for shape " +
                               to_string(g2_shape) + ")");
  }
  EXPECT_GT(strided, 100);
  EXPECT_GT(broadcast, 100);
}

TEST(StatusReasons, CallersActOnTheReasonNotTheMessage) {
  // A scatter-max gradient is not implemented (the torch library raises NotImplementedError on
  // this reason); a sorted segment op given shapes alone needs the ids' values, and explain_op
  // then explains it with every id 0. Other failures carry no reason.
  const double x[4] = {1, 2, 3, 4}, src[3] = {5, 6, 7}, g[4] = {10, 20, 30, 40};
  const std::int64_t index[3] = {0, 0, 2};
  double gx[4], gsrc[3];
  const MutableTensorView gsrc_v(gsrc, DType::kFloat64, {3});
  const TensorView uv(src, DType::kFloat64, {3});
  Attributes attrs;
  attrs.set_int("dim", 0);
  attrs.set("reduce", "amax");
  const Status max_grad = execute_vjp("torch.scatter_reduce", TensorView(x, DType::kFloat64, {4}),
                                      TensorView(index, DType::kInt64, {3}), &uv, attrs, 0,
                                      TensorView(g, DType::kFloat64, {4}), MutableTensorView(gx, DType::kFloat64, {4}),
                                      &gsrc_v);
  ASSERT_FALSE(max_grad.ok());
  EXPECT_EQ(max_grad.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(max_grad.reason(), StatusReason::kNotImplemented) << max_grad.message();
  EXPECT_NE(max_grad.message().find("is not implemented"), std::string::npos) << max_grad.message();

  Lowering l;
  const Status sized = lower_op("tf.math.segment_sum", TensorView(nullptr, DType::kFloat32, {4, 3}),
                                TensorView(nullptr, DType::kInt64, {4}), Attributes{}, &l);
  EXPECT_EQ(sized.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(sized.reason(), StatusReason::kNeedsIndexValues) << sized.message();
  std::string text;
  ASSERT_TRUE(explain_op("tf.math.segment_sum", {4, 3}, DType::kFloat32, {4}, DType::kInt64, Attributes{}, &text).ok());
  EXPECT_NE(text.find("explained with every id 0"), std::string::npos) << text;

  const Status plain = lower_op("torch.gather", TensorView(nullptr, DType::kFloat32, {4, 3}),
                                TensorView(nullptr, DType::kInt64, {4}), attrs, &l);
  EXPECT_FALSE(plain.ok());
  EXPECT_EQ(plain.reason(), StatusReason::kNone) << plain.message();
}

#if !defined(MULTIGATHER_HAVE_CUDA)
TEST(TransformsVjp, ACudaVjpInABuildWithoutTheCudaEngineIsRefusedByName) {
  // As any CUDA operand in such a build (execute); the CUDA build's counterpart is
  // CudaVjpNoDevice (tests/cuda_vjp_test.cpp).
  const double x[12] = {}, g[6] = {};
  double gx[12];
  const std::int64_t i[6] = {};
  ExecutionContext context;
  context.device = Device::kCUDA;
  const Status s = execute_vjp("torch.gather", TensorView(x, DType::kFloat64, {3, 4}),
                               TensorView(i, DType::kInt64, {3, 2}), nullptr, {{"dim", "1"}}, 0,
                               TensorView(g, DType::kFloat64, {3, 2}), MutableTensorView(gx, DType::kFloat64, {3, 4}),
                               nullptr, context);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "torch.gather: the operands are on a CUDA device, but this build has no CUDA engine "
                         "(build with MULTIGATHER_CUDA=ON)");
}
#endif

TEST(TransformsVjp, DotProductTestOfEveryRegistryOp) {
  std::mt19937 rng(5);
  int checked = 0;
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.op);
    Tensor i;
    if (!valid_indices(c, rng, &i)) continue;
    for (int batch_rank : {0, 1}) {
      const Dims lead = batch_rank ? Dims{2} : Dims{};
      const Tensor x = random_f64(prepend(lead, c.x), rng), u = random_f64(prepend(lead, c.u), rng);
      Tensor ib(DType::kInt64, prepend(lead, c.i));
      for (std::int64_t k = 0; k < ib.numel(); ++k) ib.data_as<std::int64_t>()[k] = i.data_as<std::int64_t>()[k % i.numel()];
      Tensor y(DType::kFloat64, {});
      {
        Tensor y0;
        Status s;
        ASSERT_TRUE(run_example(c, TensorView(x.data(), x.dtype(), c.x), i.view(), TensorView(u.data(), u.dtype(), c.u), &y0, &s));
        y = Tensor(DType::kFloat64, prepend(lead, y0.shape()));
      }
      const TensorView uv = u.view();
      ASSERT_TRUE(execute_batched(c.op, x.view(), ib.view(), c.scatter ? &uv : nullptr, c.attrs, batch_rank,
                                  y.mutable_view()).ok());
      if (c.scatter) {
        // XLA aliases a scatter's output with its input: the same result in place.
        Tensor in_place(DType::kFloat64, y.shape());
        ASSERT_EQ(in_place.nbytes(), x.nbytes());
        std::memcpy(in_place.data(), x.data(), x.nbytes());
        const Status s2 = execute_batched(c.op, in_place.view(), ib.view(), &uv, c.attrs, batch_rank,
                                          in_place.mutable_view());
        ASSERT_TRUE(s2.ok()) << s2.message();
        EXPECT_EQ(std::memcmp(in_place.data(), y.data(), y.nbytes()), 0) << "in place, batch_rank " << batch_rank;
      }
      const Tensor g = random_f64(y.shape(), rng);
      Tensor gx(DType::kFloat64, x.shape()), gu(DType::kFloat64, u.shape());
      const MutableTensorView guv = gu.mutable_view();
      const Status s = execute_vjp(c.op, x.view(), ib.view(), c.scatter ? &uv : nullptr, c.attrs, batch_rank,
                                   g.view(), gx.mutable_view(), c.scatter ? &guv : nullptr);
      if (!s.ok()) {
        // Only documented refusals: reductions without a gradient, copied operands.
        EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.message();
        EXPECT_TRUE(s.message().find("not implemented") != std::string::npos ||
                    s.message().find("no gradient") != std::string::npos) << s.message();
        continue;
      }
      const OpSpec* spec = find_op(c.op);
      Lowering lowered;  // a segment op's reduction (torch.segment_reduce's is an attribute)
      if (spec->kind == OpKind::kSegment) {
        ASSERT_TRUE(lower_op(c.op, TensorView(x.data(), x.dtype(), c.x), i.view(), c.attrs, &lowered).ok());
      }
      if (spec->kind == OpKind::kSegment && lowered.reduction != Reduction::kAdd) {
        // Not linear (max / min piecewise, with +-inf in empty segments; prod multilinear): no
        // adjoint identity; tests/python/test_segment.py checks these gradients against JAX's
        // and TensorFlow's.
        continue;
      }
      const double lhs = dot(y, g);
      const double rhs = dot(x, gx) + (c.scatter ? dot(u, gu) : 0.0);
      // PyTorch's writes give every duplicate update the gradient (TransformsVjp.
      // PyTorchWritesGiveEveryDuplicateTheGradient): the adjoint only without duplicates.
      if (spec->gradient_to_every_duplicate && lhs != rhs) continue;
      if (spec->kind == OpKind::kSegment) {
        // mean and sqrt_n divide by the counts: equal up to rounding.
        EXPECT_NEAR(lhs, rhs, 1e-12 * (1 + std::abs(lhs))) << "batch_rank " << batch_rank;
      } else {
        EXPECT_EQ(lhs, rhs) << "batch_rank " << batch_rank;
      }
      ++checked;
      if (c.scatter) {
        // ... and grad_input with grad_output.
        Tensor ga(DType::kFloat64, g.shape()), gua(DType::kFloat64, u.shape());
        std::memcpy(ga.data(), g.data(), g.nbytes());
        const MutableTensorView guav = gua.mutable_view();
        const Status s3 = execute_vjp(c.op, x.view(), ib.view(), &uv, c.attrs, batch_rank, ga.view(),
                                      ga.mutable_view(), &guav);
        ASSERT_TRUE(s3.ok()) << s3.message();
        EXPECT_EQ(std::memcmp(ga.data(), gx.data(), gx.nbytes()), 0) << "aliased grad_input";
        EXPECT_EQ(std::memcmp(gua.data(), gu.data(), gu.nbytes()), 0) << "aliased grad_updates";
      }
    }
  }
  EXPECT_GT(checked, 60);  // most ops are differentiable
}

}  // namespace
// ---- Sharding: one device's piece of a split call (multigather/sharding.hpp) ---------------------

namespace {

// Rows [begin, end) of dimension `dim` of a C-contiguous tensor, as a new contiguous tensor.
Tensor slice(const Tensor& t, int dim, std::int64_t begin, std::int64_t end) {
  Dims shape = t.shape();
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  for (int d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  const std::int64_t n = shape[dim], es = static_cast<std::int64_t>(element_size(t.dtype()));
  shape[dim] = end - begin;
  Tensor out(t.dtype(), shape);
  for (std::int64_t o = 0; o < outer; ++o) {
    std::memcpy(static_cast<std::byte*>(out.data()) + o * (end - begin) * inner * es,
                static_cast<const std::byte*>(t.data()) + (o * n + begin) * inner * es,
                static_cast<std::size_t>((end - begin) * inner * es));
  }
  return out;
}

void expect_same(const Tensor& got, const Tensor& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (std::int64_t k = 0; k < got.numel(); ++k) {
    ASSERT_EQ(got.data_as<double>()[k], want.data_as<double>()[k]) << what << " position " << k;
  }
}

Tensor sum(const Tensor& a, const Tensor& b) {
  Tensor out(DType::kFloat64, a.shape());
  for (std::int64_t k = 0; k < a.numel(); ++k) out.data_as<double>()[k] = a.data_as<double>()[k] + b.data_as<double>()[k];
  return out;
}

}  // namespace

TEST(TransformsShard, EveryRegistryOpsPiecesMakeTheUnsplitCall) {
  // For every registry op and every gathered axis the sharding factors name: the input split
  // in two pieces along it; a gather's pieces sum to the unsplit output, a scatter's pieces are
  // its rows; the same for their VJPs (grad_input by rows, a scatter's grad_updates summed).
  std::mt19937 rng(23);
  int split_calls = 0;
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.op);
    Tensor i;
    if (!valid_indices(c, rng, &i)) continue;
    const Tensor x = random_f64(c.x, rng), u = random_f64(c.u, rng);
    const TensorView uv = u.view();
    const TensorView* updates = c.scatter ? &uv : nullptr;
    Lowering l;
    ASSERT_TRUE((c.scatter ? lower_op(c.op, x.view(), i.view(), uv, c.attrs, &l)
                           : lower_op(c.op, x.view(), i.view(), c.attrs, &l)).ok());
    std::vector<ShardingFactor> factors;
    ASSERT_TRUE(sharding_factors(l, x.view(), i.view(), updates, &factors).ok());
    Tensor whole(DType::kFloat64, l.output_shape);
    ASSERT_TRUE(execute_batched(c.op, x.view(), i.view(), updates, c.attrs, 0, whole.mutable_view()).ok());
    const Tensor g = random_f64(l.output_shape, rng);
    Tensor whole_gi(DType::kFloat64, c.x), whole_gu(DType::kFloat64, c.u);
    MutableTensorView whole_gu_view = whole_gu.mutable_view();
    const bool has_vjp = execute_vjp(c.op, x.view(), i.view(), updates, c.attrs, 0, g.view(), whole_gi.mutable_view(),
                                     c.scatter ? &whole_gu_view : nullptr).ok();
    for (const ShardingFactor& f : factors) {
      if (f.role != FactorRole::kGathered || f.input < 0) continue;
      SCOPED_TRACE("input dimension " + std::to_string(f.input));
      const std::int64_t n = c.x[f.input], h = n / 2;
      Tensor sum_out, sum_gu;
      for (const auto& [begin, end] : {std::pair{std::int64_t{0}, h}, std::pair{h, n}}) {
        const Tensor piece = slice(x, f.input, begin, end);
        std::vector<AxisShard> shards;
        for (int j = 0; j < l.shape.axes.size(); ++j) {
          shards.push_back(j == f.axis ? AxisShard{n, begin} : AxisShard{l.input.shape[l.shape.axes[j]], 0});
        }
        Tensor out(DType::kFloat64, c.scatter ? piece.shape() : l.output_shape);
        const Status s = execute_shard(c.op, piece.view(), i.view(), updates, c.attrs, 0, shards, out.mutable_view());
        ASSERT_TRUE(s.ok()) << s.message();
        ++split_calls;
        if (c.scatter) {
          expect_same(out, slice(whole, f.output, begin, end), "scatter piece [" + std::to_string(begin) + ", " +
                                                                    std::to_string(end) + ")");
        } else {
          sum_out = begin == 0 ? std::move(out) : sum(sum_out, out);
        }
        if (!has_vjp) continue;
        Tensor gi(DType::kFloat64, piece.shape()), gu(DType::kFloat64, c.u);
        MutableTensorView gu_view = gu.mutable_view();
        const Tensor g_piece = c.scatter ? slice(g, f.output, begin, end) : Tensor();
        const Status v = execute_vjp_shard(c.op, piece.view(), i.view(), updates, c.attrs, 0, shards,
                                           c.scatter ? g_piece.view() : g.view(),
                                           gi.mutable_view(), c.scatter ? &gu_view : nullptr);
        ASSERT_TRUE(v.ok()) << v.message();
        expect_same(gi, slice(whole_gi, f.input, begin, end), "grad_input piece");
        if (c.scatter) sum_gu = begin == 0 ? std::move(gu) : sum(sum_gu, gu);
      }
      if (!c.scatter) expect_same(sum_out, whole, "the sum of the gather's pieces");
      if (c.scatter && has_vjp) expect_same(sum_gu, whole_gu, "the sum of the pieces' grad_updates");
    }
  }
  EXPECT_GT(split_calls, 40);
}

/// dimension `dim` of two tensors of equal other sizes, joined (C-contiguous).
Tensor concat(const Tensor& a, const Tensor& b, int dim) {
  Dims shape = a.shape();
  std::int64_t outer = 1, inner = 1;
  for (int d = 0; d < dim; ++d) outer *= shape[d];
  for (int d = dim + 1; d < shape.size(); ++d) inner *= shape[d];
  const std::int64_t na = a.shape()[dim], nb = b.shape()[dim], es = static_cast<std::int64_t>(element_size(a.dtype()));
  shape[dim] = na + nb;
  Tensor out(a.dtype(), shape);
  auto* o = static_cast<std::byte*>(out.data());
  for (std::int64_t k = 0; k < outer; ++k) {
    std::memcpy(o + k * (na + nb) * inner * es, static_cast<const std::byte*>(a.data()) + k * na * inner * es,
                static_cast<std::size_t>(na * inner * es));
    std::memcpy(o + (k * (na + nb) + na) * inner * es, static_cast<const std::byte*>(b.data()) + k * nb * inner * es,
                static_cast<std::size_t>(nb * inner * es));
  }
  return out;
}

TEST(TransformsShard, SegmentOpsPiecesMakeTheUnsplitCall) {
  // A segment op's factors (the data is the core's updates): the data's feature dimensions are
  // operand factors (in data and output), its rows with the ids an index factor (in data and
  // ids), the output's segments a gathered factor (in the output only). Checked by their pieces,
  // in float64 on small integers (exact): the data split in two along an operand factor gives
  // the output's two halves; data and ids split along an index factor give two partial results
  // that sum to the whole for a sum (the devices' all-reduce). An initial value (counted once
  // per piece), gathered rows (embedding_bag) and computed ids (lengths, offsets) map no index
  // factor: those are "other" (replicated).
  std::mt19937 rng(31);
  int operand_checks = 0, index_checks = 0;
  for (const auto& c : testing::segment_explain_cases()) {
    SCOPED_TRACE(c.op);
    const Tensor x = random_f64(c.x, rng);
    Tensor i(DType::kInt64, c.i);
    for (std::int64_t k = 0; k < i.numel(); ++k) i.data_as<std::int64_t>()[k] = 0;  // valid for every row
    const TensorView iv = i.view();
    Lowering l;
    ASSERT_TRUE(lower_op(c.op, x.view(), iv, c.a, &l).ok());
    std::vector<ShardingFactor> factors;
    ASSERT_TRUE(sharding_factors(l, x.view(), iv, nullptr, &factors).ok());
    Tensor whole;
    ASSERT_TRUE(run_op(c.op, x.view(), iv, c.a, &whole).ok());
    for (const ShardingFactor& f : factors) {
      EXPECT_EQ(f.updates, -1) << "a segment op reports its data's dimensions as the input's";
      if (f.role == FactorRole::kGathered) {
        EXPECT_TRUE(f.input < 0 && f.indices < 0 && f.output == 0) << "the segments: in the output only";
      } else if (f.role == FactorRole::kOperand) {
        ASSERT_TRUE(f.input >= 0 && f.output >= 0 && f.indices < 0);
        const std::int64_t half = f.size / 2;
        Tensor lo, hi;
        ASSERT_TRUE(run_op(c.op, slice(x, f.input, 0, half).view(), iv, c.a, &lo).ok());
        ASSERT_TRUE(run_op(c.op, slice(x, f.input, half, f.size).view(), iv, c.a, &hi).ok());
        expect_same(concat(lo, hi, f.output), whole, "the operand halves");
        ++operand_checks;
      } else if (f.role == FactorRole::kIndex || f.role == FactorRole::kLookup) {
        ASSERT_TRUE(f.input >= 0 && f.indices >= 0 && f.output < 0);
        EXPECT_TRUE(l.gathered == nullptr && l.owned_input == nullptr && !l.indices_computed);
        if (f.call != FactorStrategy::kSum) continue;  // the core replicates it
        const std::int64_t half = f.size / 2;
        Tensor lo, hi;
        ASSERT_TRUE(run_op(c.op, slice(x, f.input, 0, half).view(), slice(i, f.indices, 0, half).view(), c.a, &lo).ok());
        ASSERT_TRUE(run_op(c.op, slice(x, f.input, half, f.size).view(), slice(i, f.indices, half, f.size).view(), c.a, &hi).ok());
        expect_same(sum(lo, hi), whole, "the partial sums of the index halves");
        ++index_checks;
      }
    }
    if (l.gathered != nullptr || l.indices_computed) {
      for (const ShardingFactor& f : factors) EXPECT_NE(f.role, FactorRole::kIndex) << "no index factor";
    }
  }
  EXPECT_GE(operand_checks, 15);
  EXPECT_GE(index_checks, 3);  // jax's, tf's unsorted and tf's sorted segment_sum, torch_scatter's sum
}

TEST(TransformsShard, EveryFactorsStrategyCombinesItsPiecesExactly) {
  // The core's rule of sums (ShardingFactor::call and ::gradient), checked by its meaning on
  // every registry op, in float64 on small integers (exact): the tensors that carry a factor
  // split in two along it,
  //  - kSplit: the two pieces' results are the whole result's halves along the factor;
  //  - kSum: they are partial sums (the first piece with the input, the second with zeros, as a
  //    partitioner's all-reduce starts them), and add up to the whole result.
  // And the rule's other side: a scatter whose index or lookup factor it replicates has a case
  // here whose partial sums are NOT the whole result (set keeps one winner, mul / min / max do
  // not add). Gradients: a gather's grad_input along an index or lookup factor (kSum) is the
  // sum of the halves' gradients.
  std::mt19937 rng(37);
  int split_checks = 0, sum_checks = 0, replicated_differ = 0, gradient_checks = 0;
  const auto halves = [](const Tensor& t, int dim, std::int64_t size) {
    const std::int64_t h = size / 2;
    if (dim < 0) return std::pair{Tensor::copy_of(t.view()), Tensor::copy_of(t.view())};  // not carried
    return std::pair{slice(t, dim, 0, h), slice(t, dim, h, size)};
  };
  for (const Case& c : all_cases()) {
    SCOPED_TRACE(c.op);
    Tensor i;
    if (!valid_indices(c, rng, &i)) continue;
    if (find_op(c.op)->kind == OpKind::kSegment) {  // ids 0 (tf.math.segment_*'s output size is the last id + 1)
      for (std::int64_t k = 0; k < i.numel(); ++k) i.data_as<std::int64_t>()[k] = 0;
    }
    const Tensor x = random_f64(c.x, rng), u = random_f64(c.u, rng);
    const TensorView uv = u.view();
    Lowering l;
    ASSERT_TRUE((c.scatter ? lower_op(c.op, x.view(), i.view(), uv, c.attrs, &l)
                           : lower_op(c.op, x.view(), i.view(), c.attrs, &l)).ok());
    std::vector<ShardingFactor> factors;
    ASSERT_TRUE(sharding_factors(l, x.view(), i.view(), c.scatter ? &uv : nullptr, &factors).ok());
    const auto run = [&](const Tensor& xp, const Tensor& ip, const Tensor& up, Tensor* out) {
      return c.scatter ? run_op(c.op, xp.view(), ip.view(), up.view(), c.attrs, out)
                       : run_op(c.op, xp.view(), ip.view(), c.attrs, out);
    };
    Tensor whole;
    ASSERT_TRUE(run(x, i, u, &whole).ok());
    const bool scatter_kind = c.scatter && l.spec->kind == OpKind::kScatter;
    for (const ShardingFactor& f : factors) {
      SCOPED_TRACE(std::string(factor_role_name(f.role)) + " factor, call " + std::string(factor_strategy_name(f.call)));
      if (f.role == FactorRole::kGathered) continue;  // execute_shard's pieces: the tests above
      const auto [x0, x1] = halves(x, f.input, f.size);
      const auto [i0, i1] = halves(i, f.indices, f.size);
      const auto [u0, u1] = halves(u, c.scatter ? f.updates : -1, f.size);
      if (f.call == FactorStrategy::kSplit) {
        Tensor a, b;
        // (an attribute that states a size, stablehlo's slice_sizes, is the partitioner's to
        // rewrite: such a piece is not callable with the unsplit call's attributes)
        if (!run(x0, i0, u0, &a).ok()) continue;
        ASSERT_TRUE(run(x1, i1, u1, &b).ok());
        ASSERT_GE(f.output, 0) << "a split factor of the call lies in its output";
        expect_same(concat(a, b, f.output), whole, "the halves of a split factor");
        ++split_checks;
      } else if (f.call == FactorStrategy::kSum || (scatter_kind && f.role != FactorRole::kCoordinate &&
                                                    f.role != FactorRole::kOther)) {
        Tensor a, b;
        Tensor zeros(DType::kFloat64, x.shape());
        std::memset(zeros.data(), 0, zeros.nbytes());
        // (a segment op's data carries its rows' factor; a scatter's input never carries it)
        ASSERT_TRUE(run(x0, i0, u0, &a).ok());
        ASSERT_TRUE(run(f.input >= 0 ? x1 : zeros, i1, u1, &b).ok());
        const Tensor total = sum(a, b);
        if (f.call == FactorStrategy::kSum) {
          expect_same(total, whole, "the partial sums of a summed factor");
          ++sum_checks;
        } else if (std::memcmp(total.data(), whole.data(), whole.nbytes()) != 0) {
          ++replicated_differ;
        }
      }
    }
    // A gather's gradient: grad_input along an index / lookup factor is the sum of the halves'.
    if (c.scatter) continue;
    const Tensor g = random_f64(l.output_shape, rng);
    Tensor whole_gi(DType::kFloat64, c.x);
    if (!execute_vjp(c.op, x.view(), i.view(), nullptr, c.attrs, 0, g.view(), whole_gi.mutable_view(), nullptr).ok()) continue;
    for (const ShardingFactor& f : factors) {
      if (f.gradient != FactorStrategy::kSum) continue;
      ASSERT_TRUE(f.role == FactorRole::kIndex || f.role == FactorRole::kLookup) << factor_role_name(f.role);
      const auto [i0, i1] = halves(i, f.indices, f.size);
      const auto [g0, g1] = halves(g, f.output, f.size);
      Tensor a(DType::kFloat64, c.x), b(DType::kFloat64, c.x);
      ASSERT_TRUE(execute_vjp(c.op, x.view(), i0.view(), nullptr, c.attrs, 0, g0.view(), a.mutable_view(), nullptr).ok());
      ASSERT_TRUE(execute_vjp(c.op, x.view(), i1.view(), nullptr, c.attrs, 0, g1.view(), b.mutable_view(), nullptr).ok());
      expect_same(sum(a, b), whole_gi, "the sum of the halves' grad_input");
      ++gradient_checks;
    }
  }
  EXPECT_GT(split_checks, 40);
  EXPECT_GT(sum_checks, 5);
  EXPECT_GT(replicated_differ, 2);
  EXPECT_GT(gradient_checks, 10);
}

TEST(TransformsShard, BatchedPiecesMakeTheBatchedCall) {
  // jax.vmap of a row-split gather: indices with a leading batch of 3, the input unbatched
  // (a leading 1); the two pieces' sums equal execute_batched, and their VJPs its rows.
  std::mt19937 rng(29);
  int pieces = 0;
  for (const Case& c : all_cases()) {
    if (c.scatter || find_op(c.op)->kind == OpKind::kSegment) continue;  // segment ops: above
    SCOPED_TRACE(c.op);
    Tensor one;
    if (!valid_indices(c, rng, &one)) continue;
    const Tensor x = random_f64(prepend({1}, c.x), rng);
    Tensor i(DType::kInt64, prepend({3}, c.i));
    for (std::int64_t k = 0; k < i.numel(); ++k) {
      i.data_as<std::int64_t>()[k] = one.data_as<std::int64_t>()[(k * 7) % one.numel()];
    }
    Lowering l;
    ASSERT_TRUE(lower_op(c.op, TensorView(x.data(), x.dtype(), c.x), TensorView(i.data(), i.dtype(), c.i), c.attrs, &l).ok());
    std::vector<ShardingFactor> factors;
    ASSERT_TRUE(sharding_factors(l, TensorView(x.data(), x.dtype(), c.x), TensorView(i.data(), i.dtype(), c.i), nullptr,
                                 &factors).ok());
    const Dims out_shape = prepend({3}, l.output_shape);
    Tensor whole(DType::kFloat64, out_shape);
    if (!execute_batched(c.op, x.view(), i.view(), nullptr, c.attrs, 1, whole.mutable_view()).ok()) continue;
    const Tensor g = random_f64(out_shape, rng);
    Tensor whole_gi(DType::kFloat64, prepend({3}, c.x));
    const bool has_vjp = execute_vjp(c.op, x.view(), i.view(), nullptr, c.attrs, 1, g.view(), whole_gi.mutable_view(),
                                     nullptr).ok();
    for (const ShardingFactor& f : factors) {
      if (f.role != FactorRole::kGathered) continue;
      const std::int64_t n = c.x[f.input], h = n / 2;
      Tensor total;
      for (const auto& [begin, end] : {std::pair{std::int64_t{0}, h}, std::pair{h, n}}) {
        const Tensor piece = slice(x, f.input + 1, begin, end);
        std::vector<AxisShard> shards;
        for (int j = 0; j < l.shape.axes.size(); ++j) {
          shards.push_back(j == f.axis ? AxisShard{n, begin} : AxisShard{-1, 0});  // -1: not split
        }
        Tensor out(DType::kFloat64, out_shape);
        const Status s = execute_shard(c.op, piece.view(), i.view(), nullptr, c.attrs, 1, shards, out.mutable_view());
        ASSERT_TRUE(s.ok()) << s.message();
        ++pieces;
        total = begin == 0 ? std::move(out) : sum(total, out);
        if (!has_vjp) continue;
        Dims gi_shape = piece.shape();
        gi_shape[0] = 3;
        Tensor gi(DType::kFloat64, gi_shape);
        const Status v = execute_vjp_shard(c.op, piece.view(), i.view(), nullptr, c.attrs, 1, shards, g.view(),
                                           gi.mutable_view(), nullptr);
        ASSERT_TRUE(v.ok()) << v.message();
        expect_same(gi, slice(whole_gi, f.input + 1, begin, end), "batched grad_input piece");
      }
      expect_same(total, whole, "the sum of the batched pieces");
    }
  }
  EXPECT_GT(pieces, 30);
}

TEST(TransformsShard, IndexRulesResolveAgainstTheWholeAxis) {
  // gather_multiaxis over a [6, 2] input split 4 + 2 rows: clamp, wrap, fill (a non-zero fill
  // value, written by the first piece only) and negatives equal the unsplit call; error mode
  // fails with the unsplit call's message.
  const Tensor x = testing::make_tensor(DType::kFloat64, {6, 2}, testing::iota(12));
  const Tensor i = testing::i64({5, 1}, {-1, 7, 3, -9, 5});
  for (const char* mode : {"clamp", "wrap", "fill"}) {
    SCOPED_TRACE(mode);
    Attributes attrs;
    attrs.set_ints("axes", {0});
    attrs.set_string("index_mode", mode);
    attrs.set_float("fill_value", -2.5);
    Tensor whole(DType::kFloat64, {5, 2});
    ASSERT_TRUE(execute_batched("gather_multiaxis", x.view(), i.view(), nullptr, attrs, 0, whole.mutable_view()).ok());
    Tensor total;
    for (const auto& [begin, end] : {std::pair{std::int64_t{0}, std::int64_t{4}}, std::pair{std::int64_t{4}, std::int64_t{6}}}) {
      Tensor out(DType::kFloat64, {5, 2});
      const AxisShard shard{6, begin};
      const Status s = execute_shard("gather_multiaxis", slice(x, 0, begin, end).view(), i.view(), nullptr, attrs, 0,
                                     std::span(&shard, 1), out.mutable_view());
      ASSERT_TRUE(s.ok()) << s.message();
      total = begin == 0 ? std::move(out) : sum(total, out);
    }
    expect_same(total, whole, "the pieces' sum");
  }
  Attributes attrs;
  attrs.set_ints("axes", {0});
  Tensor whole(DType::kFloat64, {5, 2}), out(DType::kFloat64, {5, 2});
  const Status unsplit = execute_batched("gather_multiaxis", x.view(), i.view(), nullptr, attrs, 0, whole.mutable_view());
  ASSERT_EQ(unsplit.code(), StatusCode::kOutOfRange);
  const AxisShard shard{6, 4};
  const Status s = execute_shard("gather_multiaxis", slice(x, 0, 4, 6).view(), i.view(), nullptr, attrs, 0,
                                 std::span(&shard, 1), out.mutable_view());
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  EXPECT_EQ(s.message(), unsplit.message());
  const AxisShard too_far{6, 5};
  EXPECT_EQ(execute_shard("gather_multiaxis", slice(x, 0, 4, 6).view(), i.view(), nullptr, attrs, 0,
                          std::span(&too_far, 1), out.mutable_view()).code(), StatusCode::kInvalidArgument);
}

}  // namespace multigather
