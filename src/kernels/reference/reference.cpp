// The reference kernel: SPEC section 1, transcribed plainly. No fast paths, one thread.
#include "kernels/reference/reference.hpp"
#include "core/odometer.hpp"

#include <cstring>
#include <string>

namespace multigather::detail {

using i128 = __int128;

Status reference_gather(const TensorView& input, const TensorView& indices,
                        const ValidatedCall& call, const GatherOptions& options,
                        const MutableTensorView& output) noexcept {
  const GatherShape& s = call.shape;
  if (s.output_numel == 0) return Status::Ok();  // no lookup, never an error
  const int r = input.rank();
  const int k = s.axes.size();
  const int c = s.coordinate_size;
  const std::size_t es = call.element_size;
  const std::size_t is = element_size(indices.dtype);
  const auto* in = static_cast<const std::byte*>(input.data);
  const auto* ix = static_cast<const std::byte*>(indices.data);
  auto* out = static_cast<std::byte*>(output.data);

  Dims o = Dims::filled(r, 0);  // output position, C-order odometer
  for (std::int64_t n = 0; n < s.output_numel; ++n) {
    // q: the logical indices position (index broadcasting); i: the input position.
    Dims q = Dims::filled(r, 0);
    Dims i = Dims::filled(r, 0);
    for (int e = 0; e < r; ++e) {
      q[e] = s.logical_indices_shape[e] == 1 ? 0 : o[e];
      i[e] = (s.is_axis[static_cast<std::size_t>(e)] || input.shape[e] == 1) ? 0 : o[e];
    }
    bool fill = false;
    for (int j = 0; j < k; ++j) {
      // The j-th coordinate is indices[q0, ..., q_{r-2}, q_{r-1} * c + j].
      Dims p = q;
      p[r - 1] = q[r - 1] * c + j;
      std::int64_t ioff = 0;
      for (int e = 0; e < r; ++e) ioff += p[e] * indices.strides[e];
      const i128 raw = read_index_value(ix + ioff * static_cast<std::int64_t>(is), indices.dtype);
      const std::int64_t axis = s.axes[j];
      const std::int64_t size = input.shape[static_cast<int>(axis)];
      std::int64_t v = 0;
      const bool in_range = resolve_index_value(raw, size, options.index_mode, call.negative_indices, &v) !=
                            IndexResolution::kOutOfRange;
      if (!in_range) {
        if (options.index_mode == IndexMode::kFill) {
          fill = true;
          continue;
        }
        std::string pos;
        for (int e = 0; e < r; ++e) pos += (e ? "," : "") + std::to_string(p[e]);
        return OutOfRange(out_of_range_text(pos, raw, axis, size, options.index_mode, call.negative_indices));
      }
      i[static_cast<int>(axis)] = static_cast<std::int64_t>(v);
    }
    if (out != nullptr) {
      std::int64_t ooff = 0;
      for (int e = 0; e < r; ++e) ooff += o[e] * output.strides[e];
      std::byte* dst = out + ooff * static_cast<std::int64_t>(es);
      if (fill) {
        std::memcpy(dst, call.fill_bytes.data(), es);
      } else {
        std::int64_t ioff = 0;
        for (int e = 0; e < r; ++e) ioff += i[e] * input.strides[e];
        std::memcpy(dst, in + ioff * static_cast<std::int64_t>(es), es);
      }
    }
    next_position(o, s.output_shape);
  }
  return Status::Ok();
}

}  // namespace multigather::detail
