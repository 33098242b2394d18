// Internal (not installed): the CPU engine's workers on a host framework's thread pool
// (ExecutionContext::task_pool; the type: multigather/task_pool.hpp) instead of OpenMP's team.
//
// execute / execute_batched / execute_vjp make the context's pool the calling thread's current
// pool for the call (TaskPoolScope); the engine's parallel loops ask parallel_workers() for their
// workers. With no pool, parallel_workers is an OpenMP parallel region. With a pool, worker 0 is
// the calling thread and workers 1..n-1 are tasks scheduled on the pool; a task that starts after
// the calling thread has finished the loop does nothing (a pool with parallel_for instead runs
// every worker, then returns). So the loop never waits for a pool
// thread that is busy elsewhere (another call of the same executable, say): the bodies must share
// their work dynamically (each claims the next piece), so that the calling thread alone can do it
// all. Loops that need every worker at once (a barrier) must not use it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "core/interrupt_poll.hpp"
#include "multigather/task_pool.hpp"

#if defined(MULTIGATHER_HAVE_OPENMP)
#include <omp.h>
#endif

namespace multigather::detail {

/// The pool of the call this thread runs (null: none, OpenMP).
const TaskPool* current_task_pool() noexcept;

/// Makes `pool` (null: none) this thread's current pool until the end of the scope.
class TaskPoolScope {
 public:
  explicit TaskPoolScope(const TaskPool* pool) noexcept;
  ~TaskPoolScope();
  TaskPoolScope(const TaskPoolScope&) = delete;
  TaskPoolScope& operator=(const TaskPoolScope&) = delete;

 private:
  const TaskPool* saved_;
};

/// What the pool's tasks of one parallel_workers call share; it outlives the call (a task that
/// starts late still reads `closed`).
struct WorkerGroup {
  std::mutex mutex;
  std::condition_variable idle;
  bool closed = false;            // the calling thread is done: late tasks return at once
  std::atomic<int> running{0};    // tasks inside the body (changed under mutex)
  int next_worker = 1;   // the worker number of the next task to start
  void (*run)(void* body, int worker) = nullptr;
  void* body = nullptr;  // valid while !closed or running > 0
};

void schedule_workers(const TaskPool& pool, const std::shared_ptr<WorkerGroup>& group, int workers);

/// Returns when no task of the (closed) group is inside the body: spins briefly first (a worker
/// finishing its last chunk), then sleeps on the condition variable.
void wait_for_workers(WorkerGroup& group);

/// Runs body(worker) for workers 0..workers-1 (worker 0 on the calling thread). With a current
/// pool, a worker whose task starts after worker 0 returned is skipped (see above); without one,
/// every worker runs, in an OpenMP parallel region of up to `workers` threads.
template <class Body>
void parallel_workers(int workers, Body& body) {
  const TaskPool* pool = current_task_pool();
  if (workers <= 1) {
    body(0);
    return;
  }
  if (pool == nullptr) {
#if defined(MULTIGATHER_HAVE_OPENMP)
    // Every worker number runs once, however many threads OpenMP gives the team.
#pragma omp parallel num_threads(workers)
    for (int w = omp_get_thread_num(); w < workers; w += omp_get_num_threads()) body(w);
#else
    for (int w = 0; w < workers; ++w) body(w);
#endif
    return;
  }
  if (pool->parallel_for != nullptr) {  // a synchronous loop: every worker runs once
    pool->parallel_for(pool->context, workers, [](void* b, int worker) noexcept { (*static_cast<Body*>(b))(worker); },
                       &body);
    return;
  }
  auto group = std::make_shared<WorkerGroup>();
  group->run = [](void* b, int worker) { (*static_cast<Body*>(b))(worker); };
  group->body = &body;
  schedule_workers(*pool, group, workers);
  body(0);
  {
    std::lock_guard<std::mutex> lock(group->mutex);
    group->closed = true;
  }
  wait_for_workers(*group);
}

/// Runs piece(t) for t in [0, count) on `workers` workers (parallel_workers) until a piece
/// returns false; whether none did. Without a host pool every worker runs and takes its own
/// contiguous block of pieces, as OpenMP's static schedule (each worker's share, the calling
/// thread's included, is fixed: the calling thread, which asks the interrupt check, polls as
/// often as its share says). On a host pool the workers claim pieces one at a time, so that the
/// ones that start do them all. Every worker adopts the calling thread's interrupt scope.
template <class Piece>
bool parallel_pieces(int workers, std::int64_t count, Piece& piece) {
  InterruptScope* const interrupt = current_interrupt();
  std::atomic<bool> ok{true};
  std::atomic<std::int64_t> next{0};
  const bool every_worker_runs = current_task_pool() == nullptr;
  auto worker = [&](int w) {
    const InterruptShare share(interrupt);
    auto done = [&](std::int64_t t) {  // runs piece t; whether to stop
      if (!piece(t)) ok.store(false, std::memory_order_relaxed);
      return !ok.load(std::memory_order_relaxed);
    };
    if (every_worker_runs) {
      auto at = [&](int i) { return static_cast<std::int64_t>(static_cast<__int128>(count) * i / workers); };
      for (std::int64_t t = at(w), end = at(w + 1); t < end && !done(t); ++t) {
      }
    } else {
      for (std::int64_t t = next.fetch_add(1, std::memory_order_relaxed); t < count && !done(t);
           t = next.fetch_add(1, std::memory_order_relaxed)) {
      }
    }
  };
  parallel_workers(workers, worker);
  return ok.load(std::memory_order_relaxed);
}

}  // namespace multigather::detail
