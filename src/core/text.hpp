// Internal: the decimal text of an integer and of a position, for messages (shapes, indices,
// sizes). One definition for every layer under the API (python/src, above it, has its own).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace multigather::detail {

/// std::to_string of an int64, under the short name every message builder uses.
inline std::string str(std::int64_t v) { return std::to_string(v); }

/// A position as the messages write it inside brackets: "2,0,1" ("" for rank 0).
inline std::string position_text(std::span<const std::int64_t> at) {
  std::string s;
  for (std::size_t d = 0; d < at.size(); ++d) s += (d ? "," : "") + str(at[d]);
  return s;
}

}  // namespace multigather::detail
