// fuzz/registry_fuzz.cpp: every registry op, lowered and executed, against the reference kernel
// (a segment op, which lowers onto a scatter, against the scatter's).
//
// The bytes choose an op of op_registry(), its attributes (omitted, typed values of every kind,
// none, or text through the one attribute parser; unknown names sometimes), the input and
// indices shapes, strides (negative, zero, overlapping), dtypes and data. lower_op, then
// execute into a C-contiguous output of the framework's shape. Every call either returns an
// error status or a result equal to the reference kernel (gather_multiaxis_reference) run on
// the same lowering (its views, axes and options), placed by core_output_strides. A segment op
// whose updates are gathered rows (embedding_bag: the fused kernel) is checked against the
// scatter reference run on the rows gathered into a tensor: bytes for float32 / float64 sums,
// the status elsewhere (16-bit sums accumulate in float32, max keeps PyTorch's NaN rule).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz_support.hpp"
#include "multigather/execute.hpp"
#include "multigather/gather.hpp"
#include "multigather/lowering.hpp"
#include "multigather/registry.hpp"

using namespace multigather;
using namespace multigather::fuzz;

namespace {

/// Storage of the tensor attributes picked for one call (alive until the next call).
std::vector<std::int64_t>& tensor_storage(std::size_t j) {
  static std::vector<std::vector<std::int64_t>> storage(8);
  return storage[j % storage.size()];
}

AttrArg pick_attr(FuzzedDataProvider& p, const AttrSpec& spec, std::size_t j) {
  AttrArg a;
  const auto small = [&] { return p.ConsumeIntegralInRange<std::int64_t>(-4, 4); };
  switch (p.ConsumeIntegralInRange<int>(0, 9)) {
    case 0: a.kind = AttrArg::Kind::kNone; break;
    case 1:
      a.kind = AttrArg::Kind::kText;
      a.text = p.ConsumeRandomLengthString(16);
      break;
    case 2:  // a value of some other type
      a.kind = static_cast<AttrArg::Kind>(p.ConsumeIntegralInRange<int>(2, 6));
      a.i = p.ConsumeIntegral<std::int64_t>();
      a.list = {small(), small()};
      a.scalar = Scalar::from_float(p.ConsumeFloatingPoint<double>());
      a.b = p.ConsumeBool();
      a.text = p.ConsumeRandomLengthString(8);
      break;
    default:  // a value of the declared type, mostly plausible
      switch (spec.type) {
        case AttrType::kInt:
        case AttrType::kOptionalInt:
          a.kind = AttrArg::Kind::kInt;
          a.i = p.ConsumeIntegralInRange<int>(0, 10) == 0 ? p.ConsumeIntegral<std::int64_t>() : small();
          break;
        case AttrType::kIntList: {
          a.kind = AttrArg::Kind::kIntList;
          const int n = p.ConsumeIntegralInRange<int>(0, 5);
          for (int j = 0; j < n; ++j) a.list.push_back(small());
          break;
        }
        case AttrType::kEnum:
          a.kind = AttrArg::Kind::kString;
          a.text = spec.choices.empty() || p.ConsumeIntegralInRange<int>(0, 10) == 0
                       ? p.ConsumeRandomLengthString(8)
                       : spec.choices[p.ConsumeIntegralInRange<std::size_t>(0, spec.choices.size() - 1)];
          break;
        case AttrType::kScalar:
        case AttrType::kOptionalScalar:
          a.kind = AttrArg::Kind::kScalar;
          switch (p.ConsumeIntegralInRange<int>(0, 2)) {
            case 0: a.scalar = Scalar::from_int(small()); break;
            case 1: a.scalar = Scalar::from_uint(p.ConsumeIntegral<std::uint64_t>()); break;
            default: a.scalar = Scalar::from_float(p.ConsumeFloatingPoint<double>()); break;
          }
          break;
        case AttrType::kBool:
          a.kind = AttrArg::Kind::kBool;
          a.b = p.ConsumeBool();
          break;
        case AttrType::kTensor: {  // mostly non-decreasing offsets from 0
          std::vector<std::int64_t>& v = tensor_storage(j);
          v.clear();
          const int n = p.ConsumeIntegralInRange<int>(0, 5);
          for (int k = 0; k < n; ++k) v.push_back(k == 0 && p.ConsumeBool() ? 0 : p.ConsumeIntegralInRange<std::int64_t>(-1, 8));
          if (p.ConsumeBool()) std::sort(v.begin(), v.end());
          a.kind = AttrArg::Kind::kTensor;
          a.tensor = TensorView(v.data(), DType::kInt64, Dims{static_cast<std::int64_t>(v.size())});
          break;
        }
      }
  }
  return a;
}

/// The rows a gathered lowering reads, written out: out[n, f] = table[rows[n], f] (times
/// scale[n]), in the dtype's own arithmetic (float32 / float64; other dtypes are left as they are).
void gather_rows(const Lowering& l, Tensor* out) {
  const GatheredRows& g = *l.gathered;
  const std::int64_t n = g.rows == nullptr || g.bag_starts.empty() ? 0 : g.bag_starts.back(), d = g.table.shape[1];
  const auto each = [&]<class T>() {
    auto* o = static_cast<T*>(out->data());
    const auto* t = static_cast<const T*>(g.table.data);
    const auto* w = static_cast<const T*>(g.scale.data);
    for (std::int64_t r = 0; r < n; ++r) {
      for (std::int64_t f = 0; f < d; ++f) {
        const T v = t[g.rows[r] * g.table.strides[0] + f * g.table.strides[1]];
        o[r * d + f] = w != nullptr ? w[r * g.scale.strides[0]] * v : v;
      }
    }
  };
  if (out->numel() != n * d) return;
  if (g.table.dtype == DType::kFloat32) each.template operator()<float>();
  if (g.table.dtype == DType::kFloat64) each.template operator()<double>();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider p(data, size);
  const std::vector<OpSpec>& ops = op_registry();
  const OpSpec& op = ops[p.ConsumeIntegralInRange<std::size_t>(0, ops.size() - 1)];

  Attributes attrs;
  for (std::size_t j = 0; j < op.attrs.size(); ++j) {
    const AttrSpec& spec = op.attrs[j];
    if (p.ConsumeBool()) continue;  // the default
    std::string name = spec.name;
    if (p.ConsumeIntegralInRange<int>(0, 3) == 0) {
      for (char& ch : name) if (ch == '_') ch = '-';
    }
    attrs.set_arg(name, pick_attr(p, spec, j));
  }
  if (p.ConsumeIntegralInRange<int>(0, 40) == 0) attrs.set(p.ConsumeRandomLengthString(8), "1");

  const int rx = p.ConsumeIntegralInRange<int>(0, 5);
  const int ri = p.ConsumeIntegralInRange<int>(0, 4);
  const DType dtype = p.PickValueInArray(kAllDTypes);
  const DType index_dtype = p.ConsumeIntegralInRange<int>(0, 15) == 0
                                ? p.PickValueInArray(kAllDTypes)
                                : p.PickValueInArray(kIndexDTypes);
  const Dims input_shape = pick_shape(p, rx, 4);
  Dims indices_shape = pick_shape(p, ri, 4);
  const std::size_t es = element_size(dtype), is = element_size(index_dtype);
  StridedBuffer in, idx;
  if (!pick_strides(p, input_shape, es, &in) || !pick_strides(p, indices_shape, is, &idx)) return 0;
  fill_bytes(p, in.bytes);
  fill_indices(p, index_dtype, idx.bytes);
  const TensorView input(in.data(es), dtype, input_shape, in.strides);
  const TensorView indices(idx.data(is), index_dtype, indices_shape, idx.strides);

  Lowering l;
  if (!lower_op(op.name, input, indices, attrs, &l).ok()) return 0;
  std::int64_t numel = 0;
  if (!element_count(l.output_shape, &numel) || numel > (1 << 16)) return 0;

  ExecutionContext context;
  context.num_threads = p.ConsumeIntegralInRange<int>(-1, 3);
  std::vector<unsigned char> got(static_cast<std::size_t>(numel) * es, 0x5A);
  std::vector<unsigned char> want = got;
  const Status s = execute(l, MutableTensorView(got.empty() ? nullptr : got.data(), dtype, l.output_shape), context);
  const MutableTensorView core(want.empty() ? nullptr : want.data(), dtype, l.core_output_shape,
                               l.core_output_strides);
  // A segment op (called as a gather) lowers onto a scatter: the scatter reference is its
  // oracle, except for a mean's division (the reference has none: status only).
  const bool scatter = l.kind == OpKind::kScatter;
  Tensor gathered;
  TensorView updates = l.updates, core_indices = l.indices;
  std::vector<std::int64_t> bag;  // a gathered lowering's core indices (shapes only): each row's bag
  if (l.gathered != nullptr) {
    gathered = Tensor(dtype, l.updates.shape);
    gather_rows(l, &gathered);
    updates = gathered.view();
    bag = bag_of_rows(*l.gathered);
    if (!bag.empty()) core_indices.data = bag.data();
  }
  const Status r = scatter ? scatter_multiaxis_reference(l.input, core_indices, updates, l.axes, core, l.scatter_options())
                           : gather_multiaxis_reference(l.input, l.indices, l.axes, core, l.options);
  const bool exact_gathered = l.gathered == nullptr ||
                              (l.reduction == Reduction::kAdd && (dtype == DType::kFloat32 || dtype == DType::kFloat64));
  if ((scatter && l.mean_by_count) || !exact_gathered) want = got;
  if (s.ok() != r.ok()) {
    die(("status differs from the reference kernel for " + op.name).c_str(),
        "execute '" + s.message() + "' reference '" + r.message() + "'");
  }
  if (s.ok() && got != want) {
    die(("output differs from the reference kernel for " + op.name).c_str(),
        "input " + to_string(input_shape) + " indices " + to_string(indices_shape));
  }
  return 0;
}
