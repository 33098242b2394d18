// Internal: the decimal text of an integer, for messages (shapes, indices, sizes). One
// definition for every layer under the API (python/src, above it, has its own).
#pragma once

#include <cstdint>
#include <string>

namespace multigather::detail {

/// std::to_string of an int64, under the short name every message builder uses.
inline std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace multigather::detail
