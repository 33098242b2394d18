// multigather/tensor.hpp: shapes, strided tensor views and an owning tensor.
//
// Vocabulary follows std::mdspan: a view has extents (`shape`) and `strides` counted in ELEMENTS
// (not bytes). Any stride is allowed, including negative strides and stride 0 (a broadcast
// dimension: every position along it reads the same element). Shapes and strides live in inline
// arrays of capacity kMaxRank, so building a view never allocates.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>

#include "multigather/dtype.hpp"

namespace multigather {

/// Largest rank a view can hold. Framework lowerings add unit dimensions (ONNX Gather on a rank-r
/// input with rank-q indices becomes rank r+q), hence more than the usual 8.
inline constexpr int kMaxRank = 16;

/// A list of at most kMaxRank 64-bit integers (a shape, strides, a position). Constructing one
/// from more than kMaxRank values keeps the true size() and drops the values past kMaxRank;
/// validation then reports "rank N exceeds the maximum rank 16" instead of failing here.
class Dims {
 public:
  Dims() = default;
  Dims(std::initializer_list<std::int64_t> values) { assign(values.begin(), values.size()); }
  explicit Dims(std::span<const std::int64_t> values) { assign(values.data(), values.size()); }
  /// n copies of `value`.
  static Dims filled(int n, std::int64_t value) noexcept {
    Dims d;
    d.resize(n, value);
    return d;
  }

  int size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  /// True when more than kMaxRank values were given (the extra ones are not stored).
  bool overflowed() const noexcept { return size_ > kMaxRank; }
  std::int64_t& operator[](int i) noexcept { return values_[static_cast<std::size_t>(i)]; }
  std::int64_t operator[](int i) const noexcept { return values_[static_cast<std::size_t>(i)]; }
  const std::int64_t* data() const noexcept { return values_.data(); }
  std::int64_t* data() noexcept { return values_.data(); }
  const std::int64_t* begin() const noexcept { return values_.data(); }
  const std::int64_t* end() const noexcept { return values_.data() + stored(); }
  std::int64_t back() const noexcept { return values_[static_cast<std::size_t>(size_ - 1)]; }
  std::span<const std::int64_t> span() const noexcept { return {values_.data(), (std::size_t)stored()}; }
  /// Appends one value (past kMaxRank only the count grows).
  void push_back(std::int64_t v) noexcept {
    if (size_ < kMaxRank) values_[static_cast<std::size_t>(size_)] = v;
    if (size_ < kMaxCount) ++size_;
  }
  /// size() 0 (the stored values stay; none is read again before being set).
  void clear() noexcept { size_ = 0; }
  void resize(int n, std::int64_t fill = 0) noexcept {
    if (n < 0) n = 0;
    for (int i = size_; i < n && i < kMaxRank; ++i) values_[static_cast<std::size_t>(i)] = fill;
    size_ = n > kMaxCount ? kMaxCount : n;
  }

  friend bool operator==(const Dims& a, const Dims& b) noexcept {
    if (a.size_ != b.size_) return false;
    for (int i = 0; i < a.stored(); ++i) {
      if (a.values_[static_cast<std::size_t>(i)] != b.values_[static_cast<std::size_t>(i)]) return false;
    }
    return true;
  }

 private:
  static constexpr int kMaxCount = 1024;  // the largest size() kept (past it, the count saturates)
  int stored() const noexcept { return size_ < kMaxRank ? size_ : kMaxRank; }
  void assign(const std::int64_t* values, std::size_t n) noexcept {
    size_ = static_cast<int>(n > kMaxCount ? kMaxCount : n);
    for (int i = 0; i < stored(); ++i) values_[static_cast<std::size_t>(i)] = values[i];
  }
  std::array<std::int64_t, kMaxRank> values_{};
  int size_ = 0;
};

/// "[4,3,2]" (the notation of every message and of `explain`).
std::string to_string(const Dims& dims);

/// Product of the sizes; false when it overflows int64 (then *count is unspecified).
inline bool element_count(const Dims& shape, std::int64_t* count) noexcept {
  std::int64_t n = 1;
  bool overflow = false;
  for (int i = 0; i < shape.size() && i < kMaxRank; ++i) {
    if (shape[i] == 0) {
      *count = 0;
      return true;  // an empty shape never overflows, whatever the other sizes
    }
    if (shape[i] < 0 || __builtin_mul_overflow(n, shape[i], &n)) overflow = true;
  }
  *count = n;
  return !overflow;
}

/// Row-major (C order) strides, in elements, for `shape`.
inline Dims contiguous_strides(const Dims& shape) noexcept {
  Dims strides = Dims::filled(shape.size(), 1);
  std::int64_t s = 1;
  for (int i = shape.size() - 1; i >= 0; --i) {
    if (i >= kMaxRank) continue;
    strides[i] = s;
    // Saturates for shapes whose element count overflows: validation rejects those anyway.
    if (shape[i] > 1 && __builtin_mul_overflow(s, shape[i], &s)) s = INT64_MAX;
  }
  return strides;
}

/// Product of the sizes, saturated at INT64_MAX when it overflows.
inline std::int64_t saturating_numel(const Dims& shape) noexcept {
  std::int64_t n = 0;
  return element_count(shape, &n) ? n : INT64_MAX;
}

/// A read-only strided view: data pointer, dtype, shape, strides in elements.
/// `data` points at the element at position [0, ..., 0]; it may be null only when the view has
/// no elements. The view does not own its memory.
///
/// A lowering takes null data as a call on shapes alone (explain, shape inference): it cannot
/// read index values then. A framework tensor with no elements often has null data too
/// (PyTorch, DLPack); a surface gives it empty_tensor_data() instead, so that its values, all
/// none of them, are known.
struct TensorView {
  const void* data = nullptr;
  DType dtype = DType::kFloat32;
  Dims shape;
  Dims strides;

  TensorView() = default;
  /// A C-contiguous view.
  TensorView(const void* d, DType t, const Dims& s)
      : data(d), dtype(t), shape(s), strides(contiguous_strides(s)) {}
  TensorView(const void* d, DType t, const Dims& s, const Dims& st)
      : data(d), dtype(t), shape(s), strides(st) {}

  int rank() const noexcept { return shape.size(); }
  /// Product of the shape (0 when any dimension is 0); saturates at INT64_MAX on overflow.
  std::int64_t numel() const noexcept { return saturating_numel(shape); }
  bool is_contiguous() const noexcept;
};

/// A writable strided view (the output of an "into" call).
struct MutableTensorView {
  void* data = nullptr;
  DType dtype = DType::kFloat32;
  Dims shape;
  Dims strides;

  MutableTensorView() = default;
  MutableTensorView(void* d, DType t, const Dims& s)
      : data(d), dtype(t), shape(s), strides(contiguous_strides(s)) {}
  MutableTensorView(void* d, DType t, const Dims& s, const Dims& st)
      : data(d), dtype(t), shape(s), strides(st) {}

  int rank() const noexcept { return shape.size(); }
  std::int64_t numel() const noexcept { return saturating_numel(shape); }
  /// Whether the view addresses its elements as a C-contiguous array (size-1 dimensions'
  /// strides never matter; an empty view is contiguous).
  bool is_contiguous() const noexcept;
  operator TensorView() const { return TensorView(data, dtype, shape, strides); }
};

/// A valid address holding no element, for the data of a view with no elements whose
/// framework gives a null pointer (TensorView): 64 zero bytes, never written.
inline void* empty_tensor_data() noexcept {
  alignas(64) static unsigned char none[64] = {};
  return none;
}

// ---- Extents (std::mdspan's required_span_size) --------------------------------------------

/// The number of elements a strided layout spans: 1 + sum_d (shape[d] - 1) * |strides[d]|,
/// or 0 when the shape has no elements (std::mdspan's required_span_size, with negative strides
/// counted by magnitude). False when the span overflows int64.
bool required_span(const Dims& shape, const Dims& strides, std::int64_t* span) noexcept;

/// The byte interval [*first, *last] (inclusive) that a view can touch; false when the view has
/// no elements or no data. Saturating: only meaningful for views that passed validation.
bool byte_range(const TensorView& view, std::uintptr_t* first, std::uintptr_t* last) noexcept;

/// True when the byte intervals of two views intersect (conservative: two interleaved views that
/// share no element still count as overlapping).
bool views_overlap(const TensorView& a, const TensorView& b) noexcept;

/// True when two different positions of the layout may address the same element: a stride 0 on
/// a dimension of size > 1, or strides that interleave (checked as: sorted by |stride|, each
/// dimension's |stride| exceeds the span of the dimensions inside it). Conservative: a few
/// exotic non-overlapping layouts are reported too. Writing through such a view races on a GPU
/// and loses data anywhere.
bool has_self_overlap(const Dims& shape, const Dims& strides) noexcept;

/// An owning, C-contiguous tensor with 64-byte aligned storage.
class Tensor {
 public:
  Tensor() = default;
  /// Allocates (uninitialized) storage for `shape`. Throws InvalidArgumentError when the shape
  /// is invalid (negative size, rank > kMaxRank, byte size overflowing 64 bits) or the dtype is
  /// unsupported, std::bad_alloc when memory runs out.
  Tensor(DType dtype, Dims shape);
  /// A contiguous copy of `view` (any strides).
  static Tensor copy_of(const TensorView& view);

  DType dtype() const noexcept { return dtype_; }
  const Dims& shape() const noexcept { return shape_; }
  int rank() const noexcept { return shape_.size(); }
  std::int64_t numel() const noexcept { return numel_; }
  std::size_t nbytes() const noexcept { return static_cast<std::size_t>(numel_) * element_size(dtype_); }
  void* data() noexcept { return storage_.get(); }
  const void* data() const noexcept { return storage_.get(); }
  template <class T> T* data_as() noexcept { return static_cast<T*>(data()); }
  template <class T> const T* data_as() const noexcept { return static_cast<const T*>(data()); }

  TensorView view() const { return TensorView(data(), dtype_, shape_); }
  MutableTensorView mutable_view() { return MutableTensorView(data(), dtype_, shape_); }
  /// Same bytes, another shape with the same element count (throws InvalidArgumentError).
  void reshape(const Dims& shape);

 private:
  struct AlignedFree { void operator()(void* p) const noexcept; };
  DType dtype_ = DType::kFloat32;
  Dims shape_;
  std::int64_t numel_ = 0;
  std::unique_ptr<void, AlignedFree> storage_;
};

}  // namespace multigather
