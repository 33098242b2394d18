// Internal: one index element of a run-time index dtype, read exactly (uint64 values above
// INT64_MAX included), and its text. The one reader for every place that reads an index whose
// type is known only at run time: the reference kernels, the out-of-range messages
// (plan/index_errors.cpp), the frontends that read index values (StableHLO's start indices) and
// the pictures. The CPU and CUDA engines read typed indices (kernels/cpu/resolve.hpp,
// kernels/cuda/gather_rows.hpp), dispatched once per call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "multigather/dtype.hpp"
#include "multigather/options.hpp"

namespace multigather::detail {

/// The one dispatch on an index dtype: fn.template operator()<Index>() for the integer type of
/// `dtype` (int8 ... uint64), its result; false for a dtype that is not an index dtype.
template <class Fn>
bool visit_index_type(DType dtype, Fn&& fn) {
  switch (dtype) {
    case DType::kInt8: return fn.template operator()<std::int8_t>();
    case DType::kUInt8: return fn.template operator()<std::uint8_t>();
    case DType::kInt16: return fn.template operator()<std::int16_t>();
    case DType::kUInt16: return fn.template operator()<std::uint16_t>();
    case DType::kInt32: return fn.template operator()<std::int32_t>();
    case DType::kUInt32: return fn.template operator()<std::uint32_t>();
    case DType::kInt64: return fn.template operator()<std::int64_t>();
    case DType::kUInt64: return fn.template operator()<std::uint64_t>();
    default: return false;
  }
}

/// The element at byte address `p` when `t` is an integer dtype (*value set, true); false
/// (and *value untouched) for any other dtype.
inline bool read_index(const std::byte* p, DType t, __int128* value) noexcept {
  return visit_index_type(t, [&]<class Index>() {
    Index x;
    std::memcpy(&x, p, sizeof x);
    *value = x;
    return true;
  });
}

/// read_index's value, 0 for a non-integer dtype.
inline __int128 read_index_value(const std::byte* p, DType t) noexcept {
  __int128 v = 0;
  read_index(p, t, &v);
  return v;
}

/// An index value as text: every int64 and uint64 value exactly ("-3", "18446744073709551615").
inline std::string index_text(__int128 v) {
  if (v >= INT64_MIN && v <= INT64_MAX) return std::to_string(static_cast<std::int64_t>(v));
  if (v >= 0 && v <= static_cast<__int128>(UINT64_MAX)) return std::to_string(static_cast<std::uint64_t>(v));
  const bool negative = v < 0;  // beyond 64 bits (arithmetic on indices, never a stored value)
  unsigned __int128 u = negative ? static_cast<unsigned __int128>(-(v + 1)) + 1 : static_cast<unsigned __int128>(v);
  std::string s;
  while (u != 0) {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(u % 10)));
    u /= 10;
  }
  return negative ? "-" + s : s;
}

/// The core's out-of-range message (docs/spec.md section 1) for the value `raw` at indices
/// position `position` ("3,1") indexing axis `axis` of size `size`: "indices[3,1] = 7 is out of
/// range for axis 2 of size 5 (valid range [-5, 5))"; an empty axis says so (and, outside error
/// mode, that the mode has no index to resolve to). Written once for the reference kernel (whose
/// message every engine reports) and the pieces of a split call (plan/sharding.cpp).
inline std::string out_of_range_text(const std::string& position, __int128 raw, std::int64_t axis,
                                     std::int64_t size, IndexMode mode, bool negative_indices) {
  std::string text = "indices[" + position + "] = " + index_text(raw) + " is out of range for axis " +
                     std::to_string(axis) + " of size " + std::to_string(size);
  if (size == 0) {
    text += " (the axis is empty";
    if (mode != IndexMode::kError) {
      text += ": index_mode " + std::string(index_mode_name(mode)) + " has no index to resolve to";
    }
    return text + ")";
  }
  if (negative_indices) return text + " (valid range [" + std::to_string(-size) + ", " + std::to_string(size) + "))";
  return text + " (valid range [0, " + std::to_string(size) + "))";
}

}  // namespace multigather::detail
