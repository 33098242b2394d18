// multigather/interrupt.hpp: stopping a long call (Ctrl-C) on the CPU engines.
//
// A call can ask for 2^62 lookups (a stride-0 index view) and run for years. Inside an
// InterruptScope, the CPU engines (gather, the gather's index pre-check, scatter) ask the
// scope's check, from the thread that made the call, about every kInterruptPollLookups lookups;
// when it answers true the call's threads stop at their next piece of work and the call fails
// with StatusCode::kCancelled ("interrupted"). The output is then as a failed call leaves it:
// unchanged when the stop came before the first write (a scatter's validation pass, a gather's
// index pre-check); a gather or scatter stopped while writing leaves part of its result. Python
// installs a scope around every call whose check runs the interpreter's signal handlers (Ctrl-C
// raises KeyboardInterrupt); the CLI one that reads its SIGINT flag (exit code 130).
#pragma once

#include <atomic>
#include <cstdint>

namespace multigather {

/// Lookups between two calls of the check, per calling thread (about a few milliseconds).
inline constexpr std::int64_t kInterruptPollLookups = std::int64_t{1} << 22;

/// Answers whether to stop the call now. Called on the thread that made the call, never
/// concurrently with itself for one scope; it must not call into multigather.
using InterruptCheck = bool (*)(void* context) noexcept;

namespace detail {
// The engines' side (src/core/interrupt_poll.hpp), which reads a scope's private state.
bool interrupt_requested(std::int64_t lookups) noexcept;
bool interrupted() noexcept;
}  // namespace detail

/// Installs `check` for the calls made by this thread until the scope ends (scopes nest: the
/// innermost one is asked). Not copyable or movable: the engines refer to it while a call runs.
class InterruptScope {
 public:
  InterruptScope(InterruptCheck check, void* context) noexcept;
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

  /// Whether the check answered true during a call in this scope (that call was cancelled).
  bool interrupted() const noexcept { return stopped_.load(std::memory_order_relaxed); }

 private:
  friend bool detail::interrupt_requested(std::int64_t lookups) noexcept;
  friend bool detail::interrupted() noexcept;
  // The stop flag the call's threads read, and the calling thread's count of lookups since the
  // last check.
  std::atomic<bool> stopped_{false};
  std::int64_t pending_ = 0;
  InterruptCheck check_;
  void* context_;
  InterruptScope* previous_;
};

}  // namespace multigather
