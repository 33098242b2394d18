// Status -> exception mapping of the convenience API.
#include "multigather/status.hpp"

namespace multigather {

void throw_if_error(const Status& status) {
  switch (status.code()) {
    case StatusCode::kOk:
      return;
    case StatusCode::kOutOfRange:
      throw IndexOutOfRangeError(status.message());
    case StatusCode::kTypeError:
      throw TypeMismatchError(status.message());
    case StatusCode::kInvalidArgument:
      throw InvalidArgumentError(status.message());
    case StatusCode::kInternal:
    case StatusCode::kCancelled:
      break;
  }
  throw Error(status.code(), status.message());
}

}  // namespace multigather
