// InterruptScope and the engines' side of it: see multigather/interrupt.hpp, core/interrupt_poll.hpp.
#include "core/interrupt_poll.hpp"

namespace multigather {
namespace {

thread_local InterruptScope* t_scope = nullptr;  // the scope this thread reads
thread_local bool t_owner = false;               // this thread made the call (asks the check)

}  // namespace

InterruptScope::InterruptScope(InterruptCheck check, void* context) noexcept
    : check_(check), context_(context), previous_(t_scope) {
  t_scope = this;
  t_owner = true;
}

InterruptScope::~InterruptScope() {
  t_scope = previous_;
  t_owner = previous_ != nullptr;
}

namespace detail {

InterruptScope* current_interrupt() noexcept { return t_scope; }

bool interrupt_requested(std::int64_t lookups) noexcept {
  InterruptScope* s = t_scope;
  if (s == nullptr) return false;
  if (s->stopped_.load(std::memory_order_relaxed)) return true;
  if (!t_owner) return false;
  s->pending_ += lookups;
  if (s->pending_ < kInterruptPollLookups) return false;
  s->pending_ = 0;
  if (s->check_ == nullptr || !s->check_(s->context_)) return false;
  s->stopped_.store(true, std::memory_order_relaxed);
  return true;
}

bool interrupted() noexcept {
  const InterruptScope* s = t_scope;
  return s != nullptr && s->stopped_.load(std::memory_order_relaxed);
}

InterruptShare::InterruptShare(InterruptScope* scope) noexcept : saved_(t_scope), owner_saved_(t_owner) {
  // The calling thread (OpenMP's thread 0 of the region) keeps its own role.
  if (t_scope != scope) {
    t_scope = scope;
    t_owner = false;
  }
}

InterruptShare::~InterruptShare() {
  t_scope = saved_;
  t_owner = owner_saved_;
}

}  // namespace detail
}  // namespace multigather
