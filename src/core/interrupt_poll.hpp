// Internal (not installed): how the CPU engines honour an InterruptScope (multigather/
// interrupt.hpp). The calling thread's scope is a thread-local; the threads of a parallel region
// adopt the caller's scope for the region's duration (InterruptShare), so that every thread of
// a call sees its stop flag, while only the calling thread asks the check.
#pragma once

#include <cstdint>

#include "multigather/interrupt.hpp"
#include "multigather/status.hpp"

namespace multigather::detail {

/// The scope this thread runs under: its own (the calling thread), the caller's (a worker
/// inside InterruptShare), or null.
InterruptScope* current_interrupt() noexcept;

/// Whether the running call must stop, after `lookups` more lookups of work: reads the stop
/// flag; the calling thread also asks the check once kInterruptPollLookups have accumulated.
/// False, at the cost of one thread-local read, outside any scope.
bool interrupt_requested(std::int64_t lookups) noexcept;

/// Whether the call made by this thread was cancelled (its scope's check answered true).
bool interrupted() noexcept;

/// The status of a cancelled call.
inline Status cancelled() {
  return Status(StatusCode::kCancelled, "interrupted: the call was stopped by its interrupt check "
                                        "(Ctrl-C) before it finished");
}

/// Inside a parallel region: this worker adopts the calling thread's scope (null: none) until
/// the end of its block.
class InterruptShare {
 public:
  explicit InterruptShare(InterruptScope* scope) noexcept;
  ~InterruptShare();
  InterruptShare(const InterruptShare&) = delete;
  InterruptShare& operator=(const InterruptShare&) = delete;

 private:
  InterruptScope* saved_;
  bool owner_saved_;
};

}  // namespace multigather::detail
