// The CPU engine's workers on a host framework's pool: see core/task_pool.hpp.
#include "core/task_pool.hpp"

#include <new>

namespace multigather::detail {
namespace {

thread_local const TaskPool* t_pool = nullptr;

struct Task {
  std::shared_ptr<WorkerGroup> group;
};

void run_task(void* arg) noexcept {
  std::unique_ptr<Task> task(static_cast<Task*>(arg));
  WorkerGroup& g = *task->group;
  int worker = 0;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    if (g.closed) return;
    worker = g.next_worker++;
    g.running.fetch_add(1, std::memory_order_relaxed);
  }
  g.run(g.body, worker);
  std::lock_guard<std::mutex> lock(g.mutex);
  if (g.running.fetch_sub(1, std::memory_order_release) == 1) g.idle.notify_all();
}

}  // namespace

const TaskPool* current_task_pool() noexcept { return t_pool; }

void wait_for_workers(WorkerGroup& group) {
  // A worker still inside the body is finishing a chunk (the calling thread found none left):
  // about as long as a chunk takes, which is shorter than a sleep and a wake-up.
  for (int spin = 0; spin < (1 << 14); ++spin) {
    if (group.running.load(std::memory_order_acquire) == 0) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  std::unique_lock<std::mutex> lock(group.mutex);
  group.idle.wait(lock, [&] { return group.running.load(std::memory_order_acquire) == 0; });
}

TaskPoolScope::TaskPoolScope(const TaskPool* pool) noexcept : saved_(t_pool) { t_pool = pool; }
TaskPoolScope::~TaskPoolScope() { t_pool = saved_; }

void schedule_workers(const TaskPool& pool, const std::shared_ptr<WorkerGroup>& group, int workers) {
  for (int w = 1; w < workers; ++w) {
    Task* task = nullptr;
    try {
      task = new Task{group};
    } catch (const std::bad_alloc&) {
      return;  // the workers that started (worker 0 at least) do the work
    }
    pool.schedule(pool.context, run_task, task);
  }
}

}  // namespace multigather::detail
