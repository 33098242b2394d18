// fuzz/gather_fuzz.cpp: gather_multiaxis_into on arbitrary views against the reference kernel.
//
// The bytes choose a rank (0-16), input and indices shapes, strides (negative, zero,
// overlapping), dtypes (every input dtype; every index dtype, sometimes a float one), axes
// (sometimes invalid), the index mode, the negative rule, the fill value, the thread count,
// the output's strides and the data. The engine and the reference kernel
// (gather_multiaxis_reference: the spec formula, one thread) run on the same views into two
// outputs of the same layout, pre-filled alike. Finding: different statuses, or different
// output bytes after success.
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "multigather/gather.hpp"

using namespace multigather;
using namespace multigather::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider p(data, size);
  const int r = p.ConsumeIntegralInRange<int>(0, 17);  // 17: above kMaxRank
  const std::int64_t max_size = r <= 4 ? 5 : (r <= 8 ? 3 : 2);
  const DType dtype = p.PickValueInArray(kAllDTypes);
  const DType index_dtype = p.ConsumeIntegralInRange<int>(0, 15) == 0
                                ? p.PickValueInArray(kAllDTypes)
                                : p.PickValueInArray(kIndexDTypes);
  const Dims input_shape = pick_shape(p, r, max_size);

  // Axes: k coordinates, mostly valid and distinct.
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

  // Indices shape: per dimension the input's size, 1 (broadcast) or another small size; the
  // last holds L * c coordinates (sometimes not a multiple of c).
  const int ri = p.ConsumeIntegralInRange<int>(0, 30) == 0 ? p.ConsumeIntegralInRange<int>(0, 17) : r;
  Dims indices_shape;
  std::int64_t count = 1;
  for (int d = 0; d < ri; ++d) {
    std::int64_t n;
    switch (p.ConsumeIntegralInRange<int>(0, 3)) {
      case 0: n = 1; break;
      case 1: n = p.ConsumeIntegralInRange<std::int64_t>(0, max_size); break;
      default: n = d < r && d < kMaxRank ? input_shape[d] : 1; break;
    }
    if (d >= kMaxRank) n = 1;
    if (d == ri - 1) n = n * c + (p.ConsumeIntegralInRange<int>(0, 30) == 0 ? 1 : 0);
    if (count * (n > 0 ? n : 1) > kMaxElements) n = d == ri - 1 ? c : 1;
    count *= n > 0 ? n : 1;
    indices_shape.push_back(n);
  }

  GatherOptions options;
  options.index_mode = static_cast<IndexMode>(p.ConsumeIntegralInRange<int>(0, 3));
  options.negative_indices = p.ConsumeBool();
  switch (p.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: options.fill_value = Scalar::from_int(p.ConsumeIntegral<std::int64_t>()); break;
    case 1: options.fill_value = Scalar::from_uint(p.ConsumeIntegral<std::uint64_t>()); break;
    case 2: options.fill_value = Scalar::from_float(p.ConsumeFloatingPoint<double>()); break;
    default: options.fill_value = Scalar::from_int(p.ConsumeIntegralInRange<int>(-2, 2)); break;
  }
  options.num_threads = p.ConsumeIntegralInRange<int>(0, 3);

  const std::size_t es = element_size(dtype);
  const std::size_t is = element_size(index_dtype);
  StridedBuffer in, idx;
  if (!pick_strides(p, input_shape, es, &in)) return 0;
  if (!pick_strides(p, indices_shape, is, &idx)) return 0;

  // The output: the inferred shape when there is one, with fuzzed strides (overlapping outputs
  // must be rejected alike); otherwise a small contiguous view.
  GatherShape gs;
  const Status inferred = infer_shape(input_shape, indices_shape, axes, &gs);
  Dims output_shape = inferred.ok() ? gs.output_shape : Dims::filled(r <= kMaxRank ? r : 0, 1);
  if (inferred.ok() && gs.output_numel > kMaxElements) return 0;
  StridedBuffer out;
  if (!pick_strides(p, output_shape, es, &out)) return 0;
  if (p.ConsumeIntegralInRange<int>(0, 40) == 0 && !output_shape.empty()) {
    output_shape[0] += 1;  // a wrong output shape must be rejected alike
  }

  fill_bytes(p, in.bytes);
  fill_indices(p, index_dtype, idx.bytes);
  if (!out.bytes.empty()) std::memset(out.bytes.data(), 0xA5, out.bytes.size());
  StridedBuffer ref = out;

  const TensorView input(in.data(es), dtype, input_shape, in.strides);
  const TensorView indices(idx.data(is), index_dtype, indices_shape, idx.strides);
  const Status got = gather_multiaxis_into(
      input, indices, axes, MutableTensorView(out.data(es), dtype, output_shape, out.strides), options);
  const Status want = gather_multiaxis_reference(
      input, indices, axes, MutableTensorView(ref.data(es), dtype, output_shape, ref.strides), options);
  if (got.ok() != want.ok() || got.code() != want.code()) {
    die("status differs from the reference kernel:",
        "engine '" + got.message() + "' reference '" + want.message() + "'");
  }
  if (got.ok() && out.bytes != ref.bytes) {
    die("output differs from the reference kernel", "input " + to_string(input_shape) + " indices " +
                                                         to_string(indices_shape));
  }
  if (!got.ok() && got.code() == StatusCode::kOutOfRange && got.message() != want.message()) {
    die("out-of-range message differs:", "'" + got.message() + "' vs '" + want.message() + "'");
  }
  return 0;
}
