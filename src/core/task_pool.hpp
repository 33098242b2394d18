// Internal (not installed): the CPU engine's workers on a host framework's thread pool
// (ExecutionContext::task_pool, multigather/execute.hpp) instead of OpenMP's team.
//
// execute / execute_batched / execute_vjp make the context's pool the calling thread's current
// pool for the call (TaskPoolScope); the engine's parallel loops ask parallel_workers() for their
// workers. With no pool, parallel_workers is an OpenMP parallel region. With a pool, worker 0 is
// the calling thread and workers 1..n-1 are tasks scheduled on the pool; a task that starts after
// the calling thread has finished the loop does nothing. So the loop never waits for a pool
// thread that is busy elsewhere (another call of the same executable, say): the bodies must share
// their work dynamically (each claims the next piece), so that the calling thread alone can do it
// all. Loops that need every worker at once (a barrier) must not use it.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "multigather/execute.hpp"

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
/// every worker runs, in an OpenMP parallel region of `workers` threads.
template <class Body>
void parallel_workers(int workers, Body& body) {
  const TaskPool* pool = current_task_pool();
  if (workers <= 1) {
    body(0);
    return;
  }
  if (pool == nullptr) {
#if defined(MULTIGATHER_HAVE_OPENMP)
#pragma omp parallel num_threads(workers)
    body(omp_get_thread_num());
#else
    for (int w = 0; w < workers; ++w) body(w);
#endif
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

}  // namespace multigather::detail
