// multigather/task_pool.hpp: TaskPool, a host framework's thread pool that the CPU engine can
// run its workers on (ExecutionContext::task_pool, multigather/execute.hpp). A type alone, so
// that the engine's side (src/core/task_pool.hpp) needs nothing of the API above it.
#pragma once

namespace multigather {

/// A host framework's thread pool for the CPU engine's workers (an XLA FFI handler's intra-op
/// pool), used instead of OpenMP's team: schedule(context, task, arg) must call task(arg) exactly
/// once, on any thread, now or later (a task that starts after the call finished does nothing).
/// num_threads: the pool's size, the most workers one call asks for (the calling thread is one).
/// The scatter engine's parallel phases, which need all their threads at once, stay on OpenMP.
///
/// A pool that runs loops only, synchronously (ONNX Runtime's KernelContext_ParallelFor), sets
/// parallel_for instead of schedule: parallel_for(context, count, fn, arg) must call fn(arg, i)
/// exactly once for every i in [0, count), on the pool's threads or the calling thread, and
/// return when all have returned.
struct TaskPool {
  void* context = nullptr;
  void (*schedule)(void* context, void (*task)(void* arg) noexcept, void* arg) = nullptr;
  int num_threads = 1;
  void (*parallel_for)(void* context, int count, void (*fn)(void* arg, int i) noexcept, void* arg) = nullptr;
};

}  // namespace multigather
