// The memory of one-shot outputs (multigather/output_memory.hpp): malloc for small blocks, a
// bounded cache of mapped blocks for large ones.
//
// Layout. A malloc'd block's data is 64-byte aligned, with the distance back to malloc's pointer
// (1..64) in the byte just below it. A mapped block's data is the mapping itself (page-aligned,
// 2 MiB-aligned from 2 MiB on, so a power-of-two output fills whole huge pages); the live mapped
// blocks are listed with their lengths, and free_output_memory looks a page-aligned pointer up
// there first (a malloc'd block is page-aligned only by chance, and then not in the list).
#include "multigather/output_memory.hpp"

#include <cstdio>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sys/mman.h>
#define MULTIGATHER_MAPPED_OUTPUTS 1
#endif

namespace multigather {
namespace {

constexpr std::size_t kAlign = 64;
constexpr std::size_t kPage = 4096;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kDefaultLimit = std::size_t{256} << 20;

void* allocate_small(std::size_t bytes) {
  auto* raw = static_cast<unsigned char*>(std::malloc(bytes + kAlign));
  if (raw == nullptr) throw std::bad_alloc();
  const auto base = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (base + kAlign) & ~std::uintptr_t{kAlign - 1};
  auto* p = reinterpret_cast<unsigned char*>(aligned);
  p[-1] = static_cast<unsigned char>(aligned - base);  // 1..64
  return p;
}

#if defined(MULTIGATHER_MAPPED_OUTPUTS)

// The mapping length for `bytes` of data: whole 2 MiB pages from 2 MiB on (a huge page is
// never split with another block, and blocks of nearby sizes share a size class), whole
// 64 KiB below.
std::size_t mapping_length(std::size_t bytes) {
  const std::size_t unit = bytes >= kHugePage ? kHugePage : std::size_t{64} << 10;
  return (bytes + unit - 1) / unit * unit;
}

std::size_t limit_from_environment() {
  const char* text = std::getenv("MULTIGATHER_OUTPUT_CACHE_MB");
  if (text == nullptr || *text == '\0') return kDefaultLimit;
  char* end = nullptr;
  const unsigned long long mb = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || mb > (std::size_t{1} << 24)) return kDefaultLimit;
  return static_cast<std::size_t>(mb) << 20;
}

class BlockCache {
 public:
  struct Block {
    void* base;
    std::size_t length;
  };

  // A block of `length` (its size class): a cached one that fits (up to a quarter larger,
  // the smallest such, the most recently freed among equals), else a new mapping.
  void* take(std::size_t length) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.reserve(live_.size() + 1);  // the insert below cannot throw
    const std::size_t most = length + length / 4;
    std::size_t best = blocks_.size();
    for (std::size_t j = blocks_.size(); j-- > 0;) {
      const std::size_t l = blocks_[j].length;
      if (l >= length && l <= most && (best == blocks_.size() || l < blocks_[best].length)) best = j;
    }
    Block block{nullptr, length};
    if (best == blocks_.size()) {
      block.base = map_block(length);  // throws std::bad_alloc
      ++mapped_;
    } else {
      block = blocks_[best];
      cached_bytes_ -= block.length;
      blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(best));
      ++reused_;
    }
    live_.emplace(block.base, block.length);
    return block.base;
  }

  // Frees `data` when it is a live mapped block (into the cache; the oldest cached blocks are
  // unmapped to stay within the limit); false when it is not one.
  bool give(void* data) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto found = live_.find(data);
    if (found == live_.end()) return false;
    void* base = data;
    const std::size_t length = found->second;
    live_.erase(found);
    keep(base, length);
    return true;
  }

  void set_limit(std::size_t bytes) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    limit_ = bytes;
    while (!blocks_.empty() && cached_bytes_ > limit_) evict_oldest();
  }

  void lock() { mutex_.lock(); }
  void unlock() { mutex_.unlock(); }

  OutputMemoryStats stats() noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    OutputMemoryStats s;
    s.cached_bytes = cached_bytes_;
    s.cached_blocks = blocks_.size();
    s.limit_bytes = limit_;
    s.reused = reused_;
    s.mapped = mapped_;
    return s;
  }

 private:
  static void* map_block(std::size_t length);

  void keep(void* base, std::size_t length) noexcept {
    if (length > limit_ / 2) {
      munmap(base, length);
      return;
    }
    while (!blocks_.empty() && cached_bytes_ + length > limit_) evict_oldest();
    try {
      blocks_.push_back({base, length});
    } catch (...) {
      munmap(base, length);
      return;
    }
    cached_bytes_ += length;
  }

  void evict_oldest() noexcept {
    munmap(blocks_.front().base, blocks_.front().length);
    cached_bytes_ -= blocks_.front().length;
    blocks_.erase(blocks_.begin());
  }

  std::mutex mutex_;
  std::vector<Block> blocks_;  // cached (freed) blocks, oldest first
  std::unordered_map<void*, std::size_t> live_;  // mapped blocks in use: length
  std::size_t cached_bytes_ = 0;
  std::size_t limit_ = limit_from_environment();
  std::uint64_t reused_ = 0;
  std::uint64_t mapped_ = 0;
};

// Never destroyed: arrays handed to Python may be freed during interpreter shutdown, after
// static destructors would have run. A fork waits for the cache's lock, so that the child never
// inherits it locked by a thread that does not exist there.
BlockCache& cache() {
  static BlockCache* instance = [] {
    auto* c = new BlockCache();
    pthread_atfork([] { cache().lock(); }, [] { cache().unlock(); }, [] { cache().unlock(); });
    return c;
  }();
  return *instance;
}

void* BlockCache::map_block(std::size_t length) {
  if (length < kHugePage) {
    void* p = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    return p;
  }
  // 2 MiB-aligned: map one huge page more, unmap the ends.
  void* raw = mmap(nullptr, length + kHugePage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                   -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePage - 1) & ~(kHugePage - 1);
  if (aligned > start) munmap(raw, aligned - start);
  const std::uintptr_t tail = start + length + kHugePage - (aligned + length);
  if (tail > 0) munmap(reinterpret_cast<void*>(aligned + length), tail);
#if defined(MADV_HUGEPAGE)
  madvise(reinterpret_cast<void*>(aligned), length, MADV_HUGEPAGE);  // advisory
#endif
  return reinterpret_cast<void*>(aligned);
}

#endif  // MULTIGATHER_MAPPED_OUTPUTS

}  // namespace

void* allocate_output_memory(std::size_t bytes) {
#if defined(MULTIGATHER_MAPPED_OUTPUTS)
  if (bytes >= kOutputCacheMinBytes) {
    if (bytes > SIZE_MAX / 2) throw std::bad_alloc();
    return cache().take(mapping_length(bytes));
  }
#endif
  if (bytes > SIZE_MAX - kAlign) throw std::bad_alloc();
  return allocate_small(bytes);
}

void free_output_memory(void* data) noexcept {
  if (data == nullptr) return;
#if defined(MULTIGATHER_MAPPED_OUTPUTS)
  if ((reinterpret_cast<std::uintptr_t>(data) & (kPage - 1)) == 0 && cache().give(data)) return;
#endif
  auto* p = static_cast<unsigned char*>(data);
  std::free(p - p[-1]);
}

OutputMemoryStats output_memory_stats() noexcept {
#if defined(MULTIGATHER_MAPPED_OUTPUTS)
  return cache().stats();
#else
  return {};
#endif
}

void set_output_memory_cache_limit(std::size_t bytes) noexcept {
#if defined(MULTIGATHER_MAPPED_OUTPUTS)
  cache().set_limit(bytes);
#else
  (void)bytes;
#endif
}

std::string unable_to_allocate(DType dtype, const Dims& shape) {
  long double bytes = static_cast<long double>(element_size(dtype));
  std::string dims;
  for (int d = 0; d < shape.size(); ++d) {
    bytes *= static_cast<long double>(shape[d]);
    dims += (d ? ", " : "") + std::to_string(shape[d]);
  }
  if (shape.size() == 1) dims += ",";
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB", "ZiB", "YiB"};
  int unit = 0;
  while (bytes >= 1024 && unit < 8) {
    bytes /= 1024;
    ++unit;
  }
  char size[64];
  // numpy's _ArrayMemoryError: three significant digits ("4.00 EiB", "12.5 GiB", "512. MiB").
  if (unit == 0) {
    std::snprintf(size, sizeof size, "%.0Lf bytes", bytes);
  } else {
    std::snprintf(size, sizeof size, bytes < 10 ? "%.2Lf %s" : bytes < 100 ? "%.1Lf %s" : "%.0Lf. %s", bytes,
                  units[unit]);
  }
  return std::string("Unable to allocate ") + size + " for an array with shape (" + dims + ") and data type " +
         std::string(dtype_name(dtype));
}

}  // namespace multigather
