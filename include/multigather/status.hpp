// multigather/status.hpp: the exception-free error model of the core, and the exceptions of the
// C++ convenience API.
//
// The core (validation, planning, kernels) never throws and never aborts on user input: every
// entry point returns a Status whose message names the argument, the offending value and the
// rule, e.g. "indices[3,1] = 7 is out of range for axis 2 of size 5 (valid range [-5, 5))".
// Runtimes built without exceptions use these functions directly. The convenience API
// (gather_multiaxis returning a Tensor, the frontends' one-shot calls) throws the Error
// subclasses below; the Python package maps them to ValueError / IndexError / TypeError.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace multigather {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // shapes, ranks, axes, attributes, views (Python: ValueError)
  kOutOfRange = 2,       // an index value outside its axis under index_mode=error (IndexError)
  kTypeError = 3,        // unsupported or wrong dtype (Python: TypeError)
  kInternal = 4,         // a broken invariant of multigather itself; never user input
  kCancelled = 5,        // stopped by an InterruptScope's check, e.g. Ctrl-C (interrupt.hpp;
                         // Python: KeyboardInterrupt, CLI: exit code 130)
};

/// Why a call failed, for a caller that acts on it (a surface choosing the framework's exception
/// type, explain retrying a segment op with zero ids): callers branch on this, never on the
/// message's text. Most failures have none; the code stays what it is.
enum class StatusReason : int {
  kNone = 0,
  kNotImplemented = 1,    // a well-formed request this version does not do (a gradient of a
                          // scatter with reduction max; PyTorch: NotImplementedError)
  kNeedsIndexValues = 2,  // the output's shape depends on the indices' values, which this
                          // lowering was not given (shapes alone: explain, fake tensors)
  kOutOfMemory = 3,       // an output the call allocates could not be (code kInternal; Python:
                          // MemoryError, in numpy's words: unable_to_allocate)
  kPictureTooLarge = 4,   // explain_svg: an operand has more cells than SvgOptions::max_cells
                          // (Python names the argument that asked for the picture)
};

/// Result of a core call: ok, or a code with a one-line message (no trailing period), and
/// optionally a reason.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, StatusReason reason = StatusReason::kNone)
      : code_(code), reason_(reason), message_(std::move(message)) {}

  static Status Ok() { return {}; }
  bool ok() const noexcept { return code_ == StatusCode::kOk; }
  StatusCode code() const noexcept { return code_; }
  StatusReason reason() const noexcept { return reason_; }
  const std::string& message() const noexcept { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  StatusReason reason_ = StatusReason::kNone;
  std::string message_;
};

inline Status InvalidArgument(std::string message) {
  return {StatusCode::kInvalidArgument, std::move(message)};
}
inline Status OutOfRange(std::string message) {
  return {StatusCode::kOutOfRange, std::move(message)};
}
inline Status TypeError(std::string message) {
  return {StatusCode::kTypeError, std::move(message)};
}

/// Base of every exception the C++ convenience API throws; what() is the core's message.
class Error : public std::runtime_error {
 public:
  Error(StatusCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  StatusCode code() const noexcept { return code_; }

 private:
  StatusCode code_;
};

/// Shapes, ranks, axes, attributes or views that break a rule.
class InvalidArgumentError : public Error {
 public:
  explicit InvalidArgumentError(const std::string& m) : Error(StatusCode::kInvalidArgument, m) {}
};

/// An index value outside its axis under index_mode = error.
class IndexOutOfRangeError : public Error {
 public:
  explicit IndexOutOfRangeError(const std::string& m) : Error(StatusCode::kOutOfRange, m) {}
};

/// An unsupported dtype, or a dtype a rule forbids (float indices, ...).
class TypeMismatchError : public Error {
 public:
  explicit TypeMismatchError(const std::string& m) : Error(StatusCode::kTypeError, m) {}
};

/// Throws the Error subclass that matches `status`; does nothing when it is ok.
void throw_if_error(const Status& status);

}  // namespace multigather

/// Propagates a non-ok Status from the enclosing function (which must return Status).
#define MULTIGATHER_RETURN_IF_ERROR(expr)              \
  do {                                                 \
    ::multigather::Status mg_status_ = (expr);         \
    if (!mg_status_.ok()) return mg_status_;           \
  } while (false)
