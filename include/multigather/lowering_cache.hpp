// multigather/lowering_cache.hpp: the one lowering cache. A repeated call (same op, attributes,
// device and operand layouts, new buffers) need not run lower_op again: a kept Lowering is
// moved to the call's operands (move_lowering). Each surface that repeats calls holds
// LoweringCaches: the Python door (one per registry op), the torch library (one per op and
// thread), an XLA call site (CallSiteCache, multigather/transforms.hpp: one entry).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "multigather/lowering.hpp"

namespace multigather {

/// What a kept Lowering is a function of, as bytes: everything lower_op reads but the
/// operands' addresses. The surface adds the device, each operand's layout (add_view) and its
/// attributes in its own encoding; two keys are equal when their bytes are.
class LoweringKey {
 public:
  LoweringKey() = default;
  LoweringKey(const LoweringKey& other) { *this = other; }
  LoweringKey& operator=(const LoweringKey& other) {
    if (this != &other) {
      size_ = 0;
      add_bytes(other.data_.get(), other.size_);
    }
    return *this;
  }
  LoweringKey(LoweringKey&&) noexcept = default;
  LoweringKey& operator=(LoweringKey&&) noexcept = default;

  void clear() noexcept { size_ = 0; }  // keeps the capacity: no allocation per call
  bool empty() const noexcept { return size_ == 0; }
  void add_bytes(const void* data, std::size_t size) {
    if (size == 0) return;
    if (size_ + size > capacity_) grow(size_ + size);
    std::memcpy(data_.get() + size_, data, size);
    size_ += size;
  }
  /// A trivially copyable value's bytes.
  template <class T>
  void add(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    add_bytes(&value, sizeof value);
  }
  /// `count` words, each stored as such (a short loop of 8-byte stores, not a memcpy call).
  void add_words(const std::int64_t* words, std::size_t count) {
    const std::size_t bytes = count * sizeof(std::int64_t);
    if (size_ + bytes > capacity_) grow(size_ + bytes);
    unsigned char* at = data_.get() + size_;
    for (std::size_t j = 0; j < count; ++j) std::memcpy(at + j * sizeof(std::int64_t), words + j, sizeof(std::int64_t));
    size_ += bytes;
  }
  /// An operand's layout: dtype, rank, shape and strides (elements); not its data.
  void add_view(const TensorView& view) {
    const auto rank = static_cast<std::size_t>(view.shape.span().size());
    const auto strides = static_cast<std::size_t>(view.strides.span().size());
    add(static_cast<std::uint64_t>(view.dtype) | static_cast<std::uint64_t>(view.shape.size()) << 8 |
        static_cast<std::uint64_t>(view.strides.size()) << 32);
    add_words(view.shape.data(), rank);
    add_words(view.strides.data(), strides);
  }
  /// A text, its length first (so that "ab" + "c" and "a" + "bc" differ).
  void add_text(std::string_view text) {
    add(static_cast<std::uint64_t>(text.size()));
    add_bytes(text.data(), text.size());
  }
  bool operator==(const LoweringKey& other) const noexcept {
    return size_ == other.size_ && (size_ == 0 || std::memcmp(data_.get(), other.data_.get(), size_) == 0);
  }

 private:
  void grow(std::size_t size);
  std::unique_ptr<unsigned char[]> data_;
  std::size_t size_ = 0, capacity_ = 0;
};

/// A few Lowerings of recent calls (4 by default), each kept with where its views sit in the
/// operands it was made for (LoweringAnchors). Not thread-safe: its holder serializes the
/// calls (the GIL, thread_local storage, a mutex), leases included; a lease takes its Lowering
/// out of the cache, so a call that runs while another's lease is out (the GIL released
/// around execute) finds nothing and lowers on its own. find and the lease are inline: they are
/// on every repeated call's path (the door's included).
class LoweringCache {
 public:
  explicit LoweringCache(int entries = 4) : entries_(static_cast<std::size_t>(entries > 0 ? entries : 1)) {}
  LoweringCache(const LoweringCache&) = delete;
  LoweringCache& operator=(const LoweringCache&) = delete;

  /// One call's Lowering, kept or not: a cache's is given back to its entry when the lease
  /// ends, unless the entry was given another key meanwhile.
  class Lease {
   public:
    Lease() = default;
    Lease(Lease&& other) noexcept
        : cache_(other.cache_), entry_(other.entry_), generation_(other.generation_),
          lowering_(std::move(other.lowering_)) {
      other.cache_ = nullptr;
    }
    Lease& operator=(Lease&& other) noexcept {
      if (this != &other) {
        give_back();
        cache_ = other.cache_;
        entry_ = other.entry_;
        generation_ = other.generation_;
        lowering_ = std::move(other.lowering_);
        other.cache_ = nullptr;
      }
      return *this;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { give_back(); }
    Lowering* get() const noexcept { return lowering_.get(); }  // null: nothing found
    explicit operator bool() const noexcept { return lowering_ != nullptr; }

   private:
    friend class LoweringCache;
    void give_back() noexcept {
      if (cache_ == nullptr || lowering_ == nullptr) return;
      Entry& e = cache_->entries_[entry_];
      if (e.generation == generation_ && e.lowering == nullptr) e.lowering = std::move(lowering_);
      cache_ = nullptr;
    }
    LoweringCache* cache_ = nullptr;
    std::size_t entry_ = 0;
    std::uint64_t generation_ = 0;
    std::unique_ptr<Lowering> lowering_;
  };

  /// The Lowering kept under `key`, moved to these operands' data (`updates`: null for a
  /// gather), into `*lease` (an empty one: true); false, `*lease` untouched, when none is kept.
  bool find(const LoweringKey& key, const void* input, const void* indices, const void* updates, Lease* lease) {
    if (key.empty()) return false;
    for (std::size_t j = 0; j < entries_.size(); ++j) {
      Entry& e = entries_[j];
      if (e.lowering == nullptr || !(e.key == key)) continue;
      lease->cache_ = this;
      lease->entry_ = j;
      lease->generation_ = e.generation;
      lease->lowering_ = std::move(e.lowering);
      move_lowering(lease->lowering_.get(), e.anchors, input, indices, updates);
      return true;
    }
    return false;
  }

  /// A lease on `l` (made for these operands). `l` is also kept under `key`, replacing the
  /// oldest entry, when it is a function of the key alone (lowering_anchors: no copies, no
  /// index values read, views inside the operands) and the key is not empty.
  Lease keep(const LoweringKey& key, Lowering&& l, const TensorView& input, const TensorView& indices,
             const TensorView* updates);

 private:
  struct Entry {
    LoweringKey key;                     // empty: unused
    std::uint64_t generation = 0;        // bumped when the entry gets another key
    std::unique_ptr<Lowering> lowering;  // null while a lease has it out (or unused)
    LoweringAnchors anchors;
  };
  std::vector<Entry> entries_;
  std::size_t next_ = 0;
};

}  // namespace multigather
