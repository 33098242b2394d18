// The out-of-range sentence in a framework's own terms (index_messages.hpp).
#include "core/index_messages.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include "core/index_value.hpp"
#include "core/odometer.hpp"
#include "core/text.hpp"

namespace multigather::detail {

Status framework_out_of_range(std::string_view op, const IndexErrorContext& c, const TensorView& v) {
  if (c.labels.empty() || v.data == nullptr) return Status::Ok();
  const int r = v.rank();
  const auto es = static_cast<std::int64_t>(element_size(v.dtype));
  std::vector<std::int64_t> pos(static_cast<std::size_t>(r), 0);
  for (std::int64_t e = 0, n = v.numel(); e < n; ++e) {
    std::int64_t off = 0;
    for (int d = 0; d < r; ++d) off += pos[static_cast<std::size_t>(d)] * v.strides[d];
    const __int128 value = read_index_value(static_cast<const std::byte*>(v.data) + off * es, v.dtype);
    const std::size_t j = c.coordinate_dim < 0 ? 0 : static_cast<std::size_t>(pos[static_cast<std::size_t>(c.coordinate_dim)]);
    const std::int64_t size = j < c.sizes.size() ? c.sizes[j] : 0, lo = c.negatives_wrap ? -size : 0;
    if (j < c.sizes.size() && (value < lo || value >= size)) {
      return OutOfRange(std::string(op) + ": " + c.indices_name + "[" + position_text(pos) + "] = " + index_text(value) + " is out of range for " +
                        c.labels[j] + " of size " + str(size) + " (valid range [" + str(lo) + ", " +
                        str(size) + "))" +
                        (c.rule.empty() || (c.rule_on_negatives && value >= 0) ? "" : "; " + c.rule));
    }
    next_position(pos, v.shape);
  }
  return Status::Ok();
}

}  // namespace multigather::detail
