// Dims, views and the owning Tensor.
#include "multigather/tensor.hpp"
#include "core/odometer.hpp"

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "multigather/output_memory.hpp"
#include "multigather/status.hpp"

namespace multigather {

std::string to_string(const Dims& dims) {
  std::string s = "[";
  for (int i = 0; i < dims.size() && i < kMaxRank; ++i) {
    if (i) s += ',';
    s += std::to_string(dims[i]);
  }
  if (dims.overflowed()) s += ",...";
  s += ']';
  return s;
}

bool required_span(const Dims& shape, const Dims& strides, std::int64_t* span) noexcept {
  std::int64_t n = 0;
  if (element_count(shape, &n) && n == 0) {
    *span = 0;
    return true;
  }
  std::int64_t reach = 0;
  for (int d = 0; d < shape.size() && d < kMaxRank && d < strides.size(); ++d) {
    std::int64_t s = strides[d];
    if (s == INT64_MIN) return false;
    std::int64_t term = 0;
    if (__builtin_mul_overflow(s < 0 ? -s : s, shape[d] - 1, &term) ||
        __builtin_add_overflow(reach, term, &reach)) {
      return false;
    }
  }
  if (__builtin_add_overflow(reach, 1, &reach)) return false;
  *span = reach;
  return true;
}

bool byte_range(const TensorView& v, std::uintptr_t* first, std::uintptr_t* last) noexcept {
  if (v.data == nullptr || v.numel() == 0) return false;
  const auto es = static_cast<std::int64_t>(element_size(v.dtype));
  std::int64_t low = 0, high = 0;  // element offsets of the lowest and highest reachable element
  for (int d = 0; d < v.rank() && d < kMaxRank && d < v.strides.size(); ++d) {
    const std::int64_t reach = v.strides[d] * (v.shape[d] - 1);
    (reach < 0 ? low : high) += reach;
  }
  const auto base = reinterpret_cast<std::uintptr_t>(v.data);
  *first = base + static_cast<std::uintptr_t>(low * es);
  *last = base + static_cast<std::uintptr_t>(high * es + es - 1);
  return true;
}

bool views_overlap(const TensorView& a, const TensorView& b) noexcept {
  std::uintptr_t a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  if (!byte_range(a, &a0, &a1) || !byte_range(b, &b0, &b1)) return false;
  return a0 <= b1 && b0 <= a1;
}

// C-contiguous for its shape: each moving dimension's stride is the span of those inside it.
// An empty shape is contiguous. A span past INT64_MAX is no stride, so a moving dimension
// outside it is not contiguous (the shape is unchecked here: a caller may pass any sizes).
static bool contiguous(const Dims& shape, const Dims& strides) noexcept {
  if (shape.overflowed() || strides.size() != shape.size()) return false;
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0) return true;
  }
  std::int64_t expected = 1;
  bool past_int64 = false;
  for (int i = shape.size() - 1; i >= 0; --i) {
    if (shape[i] == 1) continue;
    if (past_int64 || strides[i] != expected) return false;
    past_int64 = __builtin_mul_overflow(expected, shape[i], &expected);
  }
  return true;
}

bool has_self_overlap(const Dims& shape, const Dims& strides) noexcept {
  std::int64_t n = 0;
  const bool counted = element_count(shape, &n);
  if (counted && n <= 1) return false;
  // The common case first: C-contiguous.
  if (counted && contiguous(shape, strides)) {
    return false;
  }
  // The dimensions that move (size > 1), sorted by |stride|.
  std::array<std::int64_t, kMaxRank> size{}, stride{};
  int m = 0;
  for (int d = 0; d < shape.size() && d < kMaxRank && d < strides.size(); ++d) {
    if (shape[d] <= 1) continue;
    const std::int64_t s = strides[d] < 0 ? -strides[d] : strides[d];
    int i = m++;
    while (i > 0 && stride[static_cast<std::size_t>(i - 1)] > s) {
      stride[static_cast<std::size_t>(i)] = stride[static_cast<std::size_t>(i - 1)];
      size[static_cast<std::size_t>(i)] = size[static_cast<std::size_t>(i - 1)];
      --i;
    }
    stride[static_cast<std::size_t>(i)] = s;
    size[static_cast<std::size_t>(i)] = shape[d];
  }
  std::int64_t inner_span = 1;  // elements spanned by the dimensions inside the current one
  for (int i = 0; i < m; ++i) {
    const std::int64_t s = stride[static_cast<std::size_t>(i)];
    if (s < inner_span) return true;  // includes stride 0
    std::int64_t reach = 0;
    if (__builtin_mul_overflow(s, size[static_cast<std::size_t>(i)] - 1, &reach) ||
        __builtin_add_overflow(inner_span, reach, &inner_span)) {
      return false;  // validation rejects such extents anyway
    }
  }
  return false;
}

bool TensorView::is_contiguous() const noexcept { return contiguous(shape, strides); }
bool MutableTensorView::is_contiguous() const noexcept { return contiguous(shape, strides); }


// Tensor storage: allocate_output_memory (multigather/output_memory.hpp), 64-byte aligned:
// malloc for small tensors; large ones are mapped (2 MiB-aligned with transparent huge pages
// from 2 MiB on) and, once freed, kept in a bounded cache that the next tensor of a similar
// size reuses, so that a repeated one-shot call pays no fresh page faults.
void Tensor::AlignedFree::operator()(void* p) const noexcept { free_output_memory(p); }

Tensor::Tensor(DType dtype, Dims shape) : dtype_(dtype), shape_(shape) {
  if (!is_valid(dtype)) throw TypeMismatchError("dtype " + std::to_string(int(dtype)) + " is not supported");
  if (shape.overflowed()) {
    throw InvalidArgumentError("tensor rank " + std::to_string(shape.size()) +
                               " exceeds the maximum rank " + std::to_string(kMaxRank));
  }
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) {
      throw InvalidArgumentError("tensor shape[" + std::to_string(i) + "] = " +
                                 std::to_string(shape[i]) + " is negative");
    }
  }
  std::int64_t bytes = 0;
  if (!element_count(shape, &numel_) ||
      __builtin_mul_overflow(numel_, static_cast<std::int64_t>(element_size(dtype)), &bytes) ||
      bytes > INT64_MAX - 64) {
    throw InvalidArgumentError("tensor shape " + to_string(shape) + " of " +
                               std::string(dtype_name(dtype)) + " overflows 64-bit byte sizes");
  }
  storage_.reset(allocate_output_memory(static_cast<std::size_t>(bytes)));
}

Tensor Tensor::copy_of(const TensorView& view) {
  Tensor t(view.dtype, view.shape);
  if (t.numel_ == 0) return t;
  const std::size_t es = element_size(view.dtype);
  const int r = view.rank();
  Dims pos = Dims::filled(r, 0);
  auto* out = static_cast<std::byte*>(t.data());
  const auto* in = static_cast<const std::byte*>(view.data);
  std::int64_t offset = 0;
  for (std::int64_t n = 0; n < t.numel_; ++n) {
    std::memcpy(out + n * static_cast<std::int64_t>(es), in + offset * static_cast<std::int64_t>(es), es);
    detail::next_position(pos, view.shape, view.strides, &offset);
  }
  return t;
}

void Tensor::reshape(const Dims& shape) {
  std::int64_t n = 0;
  if (shape.overflowed() || !element_count(shape, &n) || n != numel_) {
    throw InvalidArgumentError("cannot reshape a tensor of shape " + to_string(shape_) +
                               " to " + to_string(shape) + ": element counts differ");
  }
  for (int i = 0; i < shape.size(); ++i) {
    if (shape[i] < 0) throw InvalidArgumentError("reshape target " + to_string(shape) + " has a negative size");
  }
  shape_ = shape;
}

}  // namespace multigather
