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
    ++g.running;
  }
  g.run(g.body, worker);
  std::lock_guard<std::mutex> lock(g.mutex);
  if (--g.running == 0) g.idle.notify_all();
}

}  // namespace

const TaskPool* current_task_pool() noexcept { return t_pool; }

TaskPoolScope::TaskPoolScope(const TaskPool* pool) noexcept : saved_(t_pool) { t_pool = pool; }
TaskPoolScope::~TaskPoolScope() { t_pool = saved_; }

void schedule_workers(const TaskPool& pool, const std::shared_ptr<WorkerGroup>& group, int workers) {
  for (int w = 1; w < workers; ++w) {
    Task* task = new (std::nothrow) Task{group};
    if (task == nullptr) return;  // the workers that started (worker 0 at least) do the work
    pool.schedule(pool.context, run_task, task);
  }
}

}  // namespace multigather::detail
