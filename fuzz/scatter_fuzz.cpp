// fuzz/scatter_fuzz.cpp: scatter_multiaxis_into on arbitrary views against its reference kernel.
//
// The bytes choose a rank (0-16), input / indices / updates shapes (updates broadcast or wrong
// at times), strides (negative, zero, overlapping), dtypes (every input dtype, sometimes a
// different updates dtype; every index dtype, sometimes a float one), axes (sometimes invalid),
// the reduction, the index mode (fill included: an error), the negative rule, include_input,
// the thread count and the engine's threading rule, the output's strides, in place or not, and the data. The engine and the
// reference (scatter_multiaxis_reference: the spec formula, one thread) run on the same views
// into two outputs of the same layout, pre-filled alike. Findings: different statuses; output
// bytes that differ after success (NaNs compare equal whatever their payload: the combine of
// two NaNs may keep either); an output changed by a failed call (every check comes before the
// first write).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "kernels/cpu/scatter_engine.hpp"
#include "multigather/scatter.hpp"

using namespace multigather;
using namespace multigather::fuzz;

namespace {

bool is_nan(DType t, const unsigned char* p) {
  switch (t) {
    case DType::kFloat32: case DType::kComplex64: {
      float v[2] = {0, 0};
      std::memcpy(v, p, t == DType::kFloat32 ? 4 : 8);
      return std::isnan(v[0]) || std::isnan(v[1]);
    }
    case DType::kFloat64: case DType::kComplex128: {
      double v[2] = {0, 0};
      std::memcpy(v, p, t == DType::kFloat64 ? 8 : 16);
      return std::isnan(v[0]) || std::isnan(v[1]);
    }
    case DType::kFloat16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0;
    }
    case DType::kBFloat16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      return (h & 0x7F80) == 0x7F80 && (h & 0x007F) != 0;
    }
    default: return false;
  }
}

// Equal bytes element by element, or both NaN.
bool same_values(DType t, const std::vector<unsigned char>& a, const std::vector<unsigned char>& b) {
  if (a.size() != b.size()) return false;
  const std::size_t es = element_size(t);
  for (std::size_t at = 0; at + es <= a.size(); at += es) {
    if (std::memcmp(&a[at], &b[at], es) == 0) continue;
    if (!(is_nan(t, &a[at]) && is_nan(t, &b[at]))) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider p(data, size);
  const int r = p.ConsumeIntegralInRange<int>(0, 17);  // 17: above kMaxRank
  const std::int64_t max_size = r <= 4 ? 5 : (r <= 8 ? 3 : 2);
  const DType dtype = p.PickValueInArray(kAllDTypes);
  const DType updates_dtype = p.ConsumeIntegralInRange<int>(0, 30) == 0 ? p.PickValueInArray(kAllDTypes) : dtype;
  const DType index_dtype = p.ConsumeIntegralInRange<int>(0, 15) == 0 ? p.PickValueInArray(kAllDTypes)
                                                                       : p.PickValueInArray(kIndexDTypes);
  const Dims input_shape = pick_shape(p, r, max_size);

  const int k = p.ConsumeIntegralInRange<int>(0, r < 4 ? r : 4);
  std::vector<std::int64_t> axes;
  for (int j = 0; j < k; ++j) {
    if (p.ConsumeIntegralInRange<int>(0, 20) == 0) {
      axes.push_back(p.ConsumeIntegralInRange<std::int64_t>(-r - 2, r + 2));
    } else {
      axes.push_back(p.ConsumeIntegralInRange<std::int64_t>(r > 0 ? -r : 0, r > 0 ? r - 1 : 0));
    }
  }
  const int c = k > 0 ? k : 1;
  Dims indices_shape;
  std::int64_t count = 1;
  for (int d = 0; d < r && d < kMaxRank; ++d) {
    std::int64_t n;
    switch (p.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: n = 1; break;
      case 1: n = p.ConsumeIntegralInRange<std::int64_t>(0, max_size); break;
      default: n = input_shape[d]; break;
    }
    if (d == r - 1) n = n * c + (p.ConsumeIntegralInRange<int>(0, 30) == 0 ? 1 : 0);
    if (count * (n > 0 ? n : 1) > kMaxElements) n = d == r - 1 ? c : 1;
    count *= n > 0 ? n : 1;
    indices_shape.push_back(n);
  }
  if (r > kMaxRank) indices_shape = input_shape;

  // Updates: G's shape, with size-1 (broadcast) dimensions; now and then a wrong size or rank.
  GatherShape gs;
  const Status inferred = infer_shape(input_shape, indices_shape, axes, &gs);
  if (inferred.ok() && gs.output_numel > kMaxElements) return 0;
  Dims updates_shape = inferred.ok() ? gs.output_shape : input_shape;
  for (int d = 0; d < updates_shape.size() && d < kMaxRank; ++d) {
    if (p.ConsumeIntegralInRange<int>(0, 4) == 0) updates_shape[d] = 1;
  }
  if (p.ConsumeIntegralInRange<int>(0, 40) == 0 && !updates_shape.empty()) updates_shape[0] += 1;
  if (p.ConsumeIntegralInRange<int>(0, 60) == 0) updates_shape.push_back(1);

  ScatterOptions options;
  options.reduction = static_cast<Reduction>(p.ConsumeIntegralInRange<int>(0, 4));
  options.index_mode = static_cast<IndexMode>(p.ConsumeIntegralInRange<int>(0, 4));
  options.negative_indices = p.ConsumeBool();
  options.include_input = p.ConsumeBool();
  options.num_threads = p.ConsumeIntegralInRange<int>(0, 3);
  // The engine's threading rule: automatic, or one of its three threaded paths forced on these
  // small cases (buckets, slabs, filtered), with num_threads taken as given.
  detail::set_scatter_threading(static_cast<detail::ScatterThreading>(p.ConsumeIntegralInRange<int>(0, 3)));

  const std::size_t es = element_size(dtype);
  const std::size_t is = element_size(index_dtype);
  const std::size_t us = element_size(updates_dtype);
  StridedBuffer in, idx, upd;
  if (!pick_strides(p, input_shape, es, &in)) return 0;
  if (!pick_strides(p, indices_shape, is, &idx)) return 0;
  if (!pick_strides(p, updates_shape, us, &upd)) return 0;
  fill_bytes(p, in.bytes);
  fill_indices(p, index_dtype, idx.bytes);
  fill_bytes(p, upd.bytes);
  const bool in_place = p.ConsumeBool();
  StridedBuffer out;
  Dims output_shape = input_shape;
  if (in_place) {
    out = in;  // the engine and the reference each scatter into their own copy of the input
  } else {
    if (!pick_strides(p, output_shape, es, &out)) return 0;
    if (!out.bytes.empty()) std::memset(out.bytes.data(), 0xA5, out.bytes.size());
  }
  StridedBuffer ref = out;
  StridedBuffer in_ref = in;  // in place: the reference's input is its own buffer

  const TensorView indices(idx.data(is), index_dtype, indices_shape, idx.strides);
  const TensorView updates(upd.data(us), updates_dtype, updates_shape, upd.strides);
  const std::vector<unsigned char> before = out.bytes;
  Status got, want;
  if (in_place) {
    got = scatter_multiaxis_into(TensorView(out.data(es), dtype, input_shape, out.strides), indices, updates, axes,
                                 MutableTensorView(out.data(es), dtype, output_shape, out.strides), options);
    want = scatter_multiaxis_reference(TensorView(ref.data(es), dtype, input_shape, ref.strides), indices, updates,
                                       axes, MutableTensorView(ref.data(es), dtype, output_shape, ref.strides),
                                       options);
  } else {
    const TensorView input(in.data(es), dtype, input_shape, in.strides);
    got = scatter_multiaxis_into(input, indices, updates, axes,
                                 MutableTensorView(out.data(es), dtype, output_shape, out.strides), options);
    want = scatter_multiaxis_reference(TensorView(in_ref.data(es), dtype, input_shape, in_ref.strides), indices,
                                       updates, axes,
                                       MutableTensorView(ref.data(es), dtype, output_shape, ref.strides), options);
  }
  if (got.ok() != want.ok() || got.code() != want.code()) {
    die("status differs from the reference kernel:",
        "engine '" + got.message() + "' reference '" + want.message() + "'");
  }
  if (!got.ok() && out.bytes != before) die("a failed scatter changed its output", got.message());
  if (got.ok() && !same_values(dtype, out.bytes, ref.bytes)) {
    die("output differs from the reference kernel", "input " + to_string(input_shape) + " indices " +
                                                         to_string(indices_shape) + " updates " +
                                                         to_string(updates_shape));
  }
  if (!got.ok() && got.message() != want.message()) {
    die("error message differs:", "'" + got.message() + "' vs '" + want.message() + "'");
  }
  return 0;
}
