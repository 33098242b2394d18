// fuzz/fuzz_support.hpp: helpers shared by the libFuzzer targets (fuzz/*_fuzz.cpp).
//
// Every size drawn from the fuzzer's bytes is capped here (kMaxElements, kMaxBytes), so that no
// input can make a target allocate more than a few MiB, whatever the bytes say.
#pragma once

#include <fuzzer/FuzzedDataProvider.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "multigather/dtype.hpp"
#include "multigather/status.hpp"
#include "multigather/tensor.hpp"

namespace multigather::fuzz {

inline constexpr std::int64_t kMaxElements = 1 << 12;  // per operand (logical elements)
inline constexpr std::int64_t kMaxSpan = 1 << 15;      // elements a strided view may span

inline constexpr DType kAllDTypes[] = {
    DType::kBool,    DType::kInt8,     DType::kUInt8,     DType::kInt16,         DType::kUInt16,
    DType::kInt32,   DType::kUInt32,   DType::kInt64,     DType::kUInt64,        DType::kFloat16,
    DType::kBFloat16, DType::kFloat32, DType::kFloat64,   DType::kComplex64,     DType::kComplex128,
    DType::kFloat8E4M3FN, DType::kFloat8E5M2};
inline constexpr DType kIndexDTypes[] = {DType::kInt8,   DType::kUInt8,  DType::kInt16,
                                         DType::kUInt16, DType::kInt32,  DType::kUInt32,
                                         DType::kInt64,  DType::kUInt64};

[[noreturn]] inline void die(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "FUZZ FINDING: %s %s\n", what, detail.c_str());
  std::abort();
}

/// A shape of `rank` sizes in [0, max_size] whose element count stays within kMaxElements.
inline Dims pick_shape(FuzzedDataProvider& p, int rank, std::int64_t max_size) {
  Dims shape;
  std::int64_t count = 1;
  for (int d = 0; d < rank; ++d) {
    std::int64_t n = p.ConsumeIntegralInRange<std::int64_t>(0, max_size);
    if (d >= kMaxRank) n = 1;  // past kMaxRank only the count is kept
    if (count * (n > 0 ? n : 1) > kMaxElements) n = 1;
    count *= (n > 0 ? n : 1);
    shape.push_back(n);
  }
  return shape;
}

/// Storage for a strided view: `bytes` holds the span, `offset` elements in is position 0.
struct StridedBuffer {
  std::vector<unsigned char> bytes;
  Dims strides;
  std::int64_t origin = 0;  // element offset of position [0, ..., 0] inside `bytes`
  void* data(std::size_t element) { return bytes.empty() ? nullptr : bytes.data() + origin * element; }
};

/// Strides for `shape` drawn from the bytes: each dimension's stride is a C-order base stride
/// times one of {1, -1, 0, 2, -2, 3}, or (layout 0) plain C order; any rank. Overlapping views
/// (stride 0, interleaved) happen. Returns false when the span would exceed kMaxSpan.
inline bool pick_strides(FuzzedDataProvider& p, const Dims& shape, std::size_t element,
                         StridedBuffer* out) {
  static constexpr std::int64_t kMult[] = {1, -1, 0, 2, -2, 3};
  const int r = shape.size();
  if (shape.overflowed()) {  // rank above kMaxRank: validation rejects it before any access
    out->strides = shape;
    out->origin = 0;
    out->bytes.assign(16 * element, 0);
    return true;
  }
  const bool plain = p.ConsumeBool();
  Dims base = Dims::filled(r, 1);
  for (int d = r - 2; d >= 0; --d) {
    const std::int64_t n = shape[d + 1] > 0 ? shape[d + 1] : 1;
    base[d] = base[d + 1] * n;
  }
  out->strides = Dims::filled(r, 0);
  std::int64_t lo = 0, hi = 0;
  bool empty = false;
  for (int d = 0; d < r; ++d) {
    const std::int64_t m = plain ? 1 : kMult[p.ConsumeIntegralInRange<int>(0, 5)];
    out->strides[d] = base[d] * m;
    if (shape[d] == 0) empty = true;
    const std::int64_t reach = (shape[d] > 0 ? shape[d] - 1 : 0) * out->strides[d];
    if (reach < 0) lo += reach; else hi += reach;
  }
  if (hi - lo + 1 > kMaxSpan) return false;
  out->origin = -lo;
  out->bytes.assign(empty ? 0 : static_cast<std::size_t>(hi - lo + 1) * element, 0);
  return true;
}

/// Fills `bytes` from the fuzzer, then with a repeating pattern when the fuzzer runs dry.
inline void fill_bytes(FuzzedDataProvider& p, std::vector<unsigned char>& bytes) {
  const std::size_t n = std::min(bytes.size(), p.remaining_bytes() / 2);
  const std::vector<unsigned char> got = p.ConsumeBytes<unsigned char>(n);
  if (!got.empty()) std::memcpy(bytes.data(), got.data(), got.size());
  for (std::size_t i = got.size(); i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i * 37 + 11);
}

/// Writes index values of `dtype` into `bytes`: mostly small values near the valid range, some
/// extremes of the type.
inline void fill_indices(FuzzedDataProvider& p, DType dtype, std::vector<unsigned char>& bytes) {
  const std::size_t w = element_size(dtype);
  for (std::size_t at = 0; at + w <= bytes.size(); at += w) {
    std::int64_t v;
    switch (p.ConsumeIntegralInRange<int>(0, 7)) {
      case 0: v = p.ConsumeIntegral<std::int64_t>(); break;
      case 1: v = p.ConsumeIntegralInRange<std::int64_t>(-20, 20); break;
      default: v = p.ConsumeIntegralInRange<std::int64_t>(-4, 4); break;
    }
    std::memset(bytes.data() + at, 0, w);
    std::memcpy(bytes.data() + at, &v, w < 8 ? w : 8);  // little endian: the low bytes
  }
}

}  // namespace multigather::fuzz
