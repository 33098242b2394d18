// A host framework's thread pool for ExecutionContext::task_pool, for the tests of the engine on
// a host pool (core/task_pool.hpp): tests/cpu_equivalence_test.cpp and the ThreadSanitizer-run
// tests/concurrency/concurrency_test.cpp.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "multigather/execute.hpp"

namespace multigather::testing {

/// A host framework's pool for ExecutionContext::task_pool: real threads, tasks that run only
/// after the call (a pool busy elsewhere), or tasks run at once inside schedule().
class HostPool {
 public:
  enum class Mode { kThreads, kLate, kInline };
  explicit HostPool(Mode mode = Mode::kThreads) : mode_(mode) {
    if (mode_ == Mode::kThreads) {
      for (int t = 0; t < 3; ++t) threads_.emplace_back([this] { serve(); });
    }
  }
  ~HostPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    ready_.notify_all();
    for (std::thread& t : threads_) t.join();
    run_late();
  }
  TaskPool pool() {
    TaskPool p;
    p.context = this;
    p.schedule = [](void* self, void (*task)(void*) noexcept, void* arg) {
      static_cast<HostPool*>(self)->schedule(task, arg);
    };
    p.num_threads = 4;
    return p;
  }
  int scheduled() const { return scheduled_.load(); }
  /// Runs the tasks a kLate pool held back (they must find their call finished).
  void run_late() {
    std::deque<std::function<void()>> late;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      late.swap(queue_);
    }
    for (auto& task : late) task();
  }

 private:
  void schedule(void (*task)(void*) noexcept, void* arg) {
    scheduled_.fetch_add(1);
    if (mode_ == Mode::kInline) {
      task(arg);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.emplace_back([task, arg] { task(arg); });
    }
    ready_.notify_one();
  }
  void serve() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        ready_.wait(lock, [&] { return stop_ || !queue_.empty(); });
        if (queue_.empty()) return;
        task = std::move(queue_.front());
        queue_.pop_front();
      }
      task();
    }
  }
  Mode mode_;
  std::atomic<int> scheduled_{0};
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

}  // namespace multigather::testing
