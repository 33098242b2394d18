// multigather/output_memory.hpp: the memory of one-shot outputs (Tensor storage, the arrays the
// Python package hands to numpy and the frameworks).
//
// A one-shot call that writes into freshly mapped memory pays a page fault per 4 KiB page it
// writes, in every call: on a VM about as much as the gather itself (elements_last_axis, 4 MiB
// output; measured: bench/README.md, "Measurements behind the CPU engine's choices"). So large
// blocks (>= kOutputCacheMinBytes) come from mmap, 2 MiB-aligned with transparent huge pages
// when they are that large, and go back, when freed, to a small cache of recently freed blocks
// (bounded in bytes, thread-safe) that the next call of a similar size reuses: its pages are
// already there.
// A fresh block is first touched by the threads that write the output (nothing is prefaulted or
// zeroed), so its page faults are taken in parallel. Small blocks are malloc'd.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "multigather/dtype.hpp"
#include "multigather/tensor.hpp"

namespace multigather {

/// Blocks of at least this many bytes are mapped and cached; smaller ones are malloc'd.
inline constexpr std::size_t kOutputCacheMinBytes = std::size_t{128} << 10;

/// `bytes` (0 allowed) of uninitialized memory, 64-byte aligned, to be freed with
/// free_output_memory. Throws std::bad_alloc when memory runs out.
void* allocate_output_memory(std::size_t bytes);

/// numpy's words for an output that cannot be allocated: "Unable to allocate 4.00 EiB for an
/// array with shape (1073741824, 1073741824) and data type float32" (Python: MemoryError).
std::string unable_to_allocate(DType dtype, const Dims& shape);

/// Frees a block of allocate_output_memory (null: nothing). Large blocks go to the cache (the
/// least recently freed ones leave it, unmapped, when it would exceed its limit).
void free_output_memory(void* data) noexcept;

struct OutputMemoryStats {
  std::size_t cached_bytes = 0;   // bytes of freed blocks held for reuse
  std::size_t cached_blocks = 0;
  std::size_t limit_bytes = 0;    // the cache's bound
  std::uint64_t reused = 0;       // large allocations served from the cache
  std::uint64_t mapped = 0;       // large allocations that mapped fresh memory
};
OutputMemoryStats output_memory_stats() noexcept;

/// Bounds the cache of freed blocks (default 256 MiB, or MULTIGATHER_OUTPUT_CACHE_MB from the
/// environment at the first allocation); 0 turns it off. Blocks above the new bound are
/// unmapped now.
void set_output_memory_cache_limit(std::size_t bytes) noexcept;

}  // namespace multigather
