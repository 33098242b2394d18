// Internal (not installed): exceptions of a C++ body become a Status at the exception-free entry
// points of src/api (execute, the transforms).
#pragma once

#include <string>
#include <string_view>

#include "multigather/status.hpp"

namespace multigather::detail {

/// body() as a Status: multigather::Error keeps its code and message; anything else (an
/// allocation failure) is an Internal "out of memory while running OP".
template <class Body>
Status guarded(std::string_view op, const Body& body) noexcept {
  try {
    return body();
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (...) {
    try {
      return Status(StatusCode::kInternal, "out of memory while running " + std::string(op));
    } catch (...) {
      return Status(StatusCode::kInternal, "out of memory");
    }
  }
}

}  // namespace multigather::detail
