// The scatter reference kernel: docs/spec.md section 4, transcribed plainly. One thread, a
// C-order walk of G; each update's target is the input position gather_multiaxis would read.
#include <cstring>
#include <vector>

#include "kernels/combine.hpp"
#include "core/float16_bits.hpp"
#include "core/odometer.hpp"
#include "kernels/reference/reference.hpp"
#include "plan/scatter_plan.hpp"

namespace multigather::detail {
namespace {


std::int64_t offset_of(const Dims& pos, const Dims& strides) {
  std::int64_t off = 0;
  for (int d = 0; d < pos.size(); ++d) off += pos[d] * strides[d];
  return off;
}

/// `from` (float16 or bfloat16, any strides) as a new C-contiguous float32 tensor (exact).
Tensor widened_plainly(const TensorView& from) {
  Tensor out(DType::kFloat32, from.shape);
  float* to = out.data_as<float>();
  const auto* bits = static_cast<const std::uint16_t*>(from.data);
  Dims p = Dims::filled(from.rank(), 0);
  for (std::int64_t n = 0; n < from.numel(); ++n, next_position(p, from.shape)) {
    const std::uint16_t b = bits[offset_of(p, from.strides)];
    to[n] = from.dtype == DType::kBFloat16 ? bfloat16_bits_to_float(b) : half_bits_to_float(b);
  }
  return out;
}

/// docs/spec.md section 5, "Accumulation of float16 and bfloat16": with wide_accumulator, an
/// add or mul of float16 / bfloat16 combines each output element in float32 (its start value
/// and every update widened) and rounds it once, to nearest even, when the call ends.
Status reference_scatter_wide(const TensorView& input, const TensorView& indices, const MutableTensorView& output,
                              const ValidatedScatter& call, const ScatterOptions& options) {
  const Tensor input32 = widened_plainly(input), updates32 = widened_plainly(call.updates);
  Tensor output32(DType::kFloat32, output.shape);
  ValidatedScatter call32 = call;
  call32.updates = updates32.view();
  call32.gather.input_dtype = DType::kFloat32;
  call32.gather.element_size = 4;
  ScatterOptions options32 = options;
  options32.wide_accumulator = false;
  MULTIGATHER_RETURN_IF_ERROR(reference_scatter(input32.view(), indices, output32.mutable_view(), call32, options32));
  auto* bits = static_cast<std::uint16_t*>(output.data);
  const float* from = output32.data_as<const float>();
  Dims p = Dims::filled(output.rank(), 0);
  for (std::int64_t n = 0; n < output.numel(); ++n, next_position(p, output.shape)) {
    bits[offset_of(p, output.strides)] =
        output.dtype == DType::kBFloat16 ? float_to_bfloat16_bits(from[n]) : float_to_half_bits(from[n]);
  }
  return Status::Ok();
}

}  // namespace

Status reference_scatter(const TensorView& input, const TensorView& indices,
                         const MutableTensorView& output, const ValidatedScatter& call,
                         const ScatterOptions& options) noexcept {
  try {
    if (accumulates_wide(options, input.dtype)) {
      return reference_scatter_wide(input, indices, output, call, options);
    }
    const GatherShape& s = call.gather.shape;
    const GatherOptions gather = gather_options_of(options);
    const TensorView targets(output.data, output.dtype, output.shape, output.strides);
    // 1. Index values, before anything is written: the gather that reads the targets reports
    //    the first out-of-range index (error mode, or an empty axis under clamp / wrap).
    MULTIGATHER_RETURN_IF_ERROR(reference_gather(targets, indices, call.gather, gather, MutableTensorView{}));
    const int r = input.rank();
    const std::int64_t es = static_cast<std::int64_t>(call.gather.element_size);
    const auto* in = static_cast<const std::byte*>(input.data);
    auto* out = static_cast<std::byte*>(output.data);
    const auto* up = static_cast<const std::byte*>(call.updates.data);
    const auto* ix = static_cast<const std::byte*>(indices.data);
    // 2. output = input.
    if (!scatters_in_place(output, input)) {
      Dims p = Dims::filled(r, 0);
      for (std::int64_t n = 0; n < input.numel(); ++n, next_position(p, input.shape)) {
        std::memmove(out + offset_of(p, output.strides) * es, in + offset_of(p, input.strides) * es,
                     static_cast<std::size_t>(es));
      }
    }
    if (s.output_numel == 0) return Status::Ok();
    // 3. For every o of G in C order: the target i, then combine (the first update of a target
    //    is assigned when include_input is false).
    std::int64_t positions = 0;
    element_count(input.shape, &positions);
    std::vector<bool> reached(call.include_input ? 0 : static_cast<std::size_t>(positions));
    const Dims in_c = contiguous_strides(input.shape);
    const int k = s.axes.size(), c = s.coordinate_size;
    const std::size_t is = element_size(indices.dtype);
    auto run = [&]<class Op>() {
      Dims o = Dims::filled(r, 0);
      for (std::int64_t n = 0; n < s.output_numel; ++n, next_position(o, s.output_shape)) {
        Dims i = Dims::filled(r, 0);
        for (int e = 0; e < r; ++e) {
          i[e] = (s.is_axis[static_cast<std::size_t>(e)] || input.shape[e] == 1) ? 0 : o[e];
        }
        bool dropped = false;
        for (int j = 0; j < k; ++j) {
          Dims p = Dims::filled(r, 0);
          for (int e = 0; e < r; ++e) p[e] = s.logical_indices_shape[e] == 1 ? 0 : o[e];
          p[r - 1] = p[r - 1] * c + j;
          const __int128 raw = read_index_value(ix + offset_of(p, indices.strides) * static_cast<std::int64_t>(is),
                                                indices.dtype);
          const std::int64_t size = input.shape[static_cast<int>(s.axes[j])];
          std::int64_t v = 0;
          // Out of range: drop (error mode failed in step 1).
          dropped = dropped || resolve_index_value(raw, size, options.index_mode, call.gather.negative_indices, &v) ==
                                   IndexResolution::kOutOfRange;
          i[static_cast<int>(s.axes[j])] = v;
        }
        if (dropped) continue;
        std::byte* dst = out + offset_of(i, output.strides) * es;
        const std::byte* src = up + offset_of(o, call.updates.strides) * es;
        if (!call.include_input && call.reduction != Reduction::kNone) {
          const auto flat = static_cast<std::size_t>(offset_of(i, in_c));
          if (!reached[flat]) {
            reached[flat] = true;
            std::memcpy(dst, src, static_cast<std::size_t>(es));
            continue;
          }
        }
        Op::apply(dst, src, 1);
      }
    };
    if (!combine::visit_combine(input.dtype, call.reduction, run)) {
      return Status(StatusCode::kInternal, "scatter: no combine for this dtype and reduction");
    }
    return Status::Ok();
  } catch (...) {
    return Status(StatusCode::kInternal, "out of memory while scattering");
  }
}

}  // namespace multigather::detail
