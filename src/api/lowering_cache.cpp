// The one lowering cache (multigather/lowering_cache.hpp).
#include "multigather/lowering_cache.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace multigather {

void LoweringKey::grow(std::size_t size) {
  const std::size_t capacity = std::max<std::size_t>(size, 2 * capacity_ + 64);
  auto data = std::make_unique<unsigned char[]>(capacity);
  if (size_ > 0) std::memcpy(data.get(), data_.get(), size_);
  data_ = std::move(data);
  capacity_ = capacity;
}

LoweringCache::Lease LoweringCache::keep(const LoweringKey& key, Lowering&& l, const TensorView& input,
                                         const TensorView& indices, const TensorView* updates) {
  Lease lease;
  lease.lowering_ = std::make_unique<Lowering>(std::move(l));
  LoweringAnchors anchors;
  if (key.empty() || !lowering_anchors(*lease.lowering_, input, indices, updates, &anchors)) return lease;
  const std::size_t j = next_;
  next_ = (next_ + 1) % entries_.size();
  Entry& e = entries_[j];
  e.key = key;
  ++e.generation;
  e.lowering.reset();  // the lease gives it back
  e.anchors = anchors;
  lease.cache_ = this;
  lease.entry_ = j;
  lease.generation_ = e.generation;
  return lease;
}

}  // namespace multigather
