// float16 / bfloat16 <-> float32 for the wide-accumulator scatters (widen.hpp): one pass over
// the view, row by row (the last dimension an inner loop), its rows split among the CPU threads.
#include "kernels/cpu/widen.hpp"

#include <algorithm>

#include "core/broadcast_fold.hpp"
#include "core/float16_bits.hpp"
#include "core/odometer.hpp"
#include "core/task_pool.hpp"
#include "kernels/cpu/cpu.hpp"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define MULTIGATHER_WIDEN_F16C 1
#endif

namespace multigather::detail::cpu {
namespace {

#if defined(MULTIGATHER_WIDEN_F16C)
// float16 rows with the F16C conversions (8 at a time, round to nearest even as
// float_to_half_bits), where the CPU has them; the scalar conversions finish each row.
__attribute__((target("avx,f16c"))) void half_row_to_float(const std::uint16_t* p, float* q, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    _mm256_storeu_ps(q + j, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p + j))));
  }
  for (; j < n; ++j) q[j] = half_bits_to_float(p[j]);
}

__attribute__((target("avx,f16c"))) void float_row_to_half(const float* p, std::uint16_t* q, std::int64_t n) {
  std::int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + j), _mm256_cvtps_ph(_mm256_loadu_ps(p + j), _MM_FROUND_TO_NEAREST_INT));
  }
  for (; j < n; ++j) q[j] = float_to_half_bits(p[j]);
}

bool has_f16c() noexcept {
  // Every x86 CPU with AVX2 has F16C (Intel since Ivy Bridge, AMD since Piledriver); clang 14's
  // __builtin_cpu_supports does not know "f16c" itself.
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}
#else
bool has_f16c() noexcept { return false; }
void half_row_to_float(const std::uint16_t*, float*, std::int64_t) {}
void float_row_to_half(const float*, std::uint16_t*, std::int64_t) {}
#endif

/// Calls row(element offset of the row's first element in the view, row number) for each row
/// (all dimensions but the last) of a view of `shape` / `strides`, in C order, the rows split
/// among num_threads (0: automatic) workers; `inner` is the last dimension's size (1 for rank 0).
template <class Row>
void for_each_row(const Dims& shape, const Dims& strides, int num_threads, Row&& row) {
  const int rank = shape.size();
  std::int64_t numel = 1;
  for (int d = 0; d < rank; ++d) numel *= shape[d];
  if (numel == 0) return;
  const std::int64_t inner = rank > 0 ? shape[rank - 1] : 1;
  const std::int64_t rows = numel / inner;
  Dims outer_shape, outer_strides;  // every dimension but the last
  for (int d = 0; d + 1 < rank; ++d) {
    outer_shape.push_back(shape[d]);
    outer_strides.push_back(strides[d]);
  }
  const int threads = cpu_thread_count(numel * 6, rows, num_threads);  // 2 bytes read, 4 written
  auto piece = [&](std::int64_t w) {
    const std::int64_t begin = static_cast<std::int64_t>(static_cast<__int128>(rows) * w / threads);
    const std::int64_t end = static_cast<std::int64_t>(static_cast<__int128>(rows) * (w + 1) / threads);
    if (begin >= end) return true;
    std::int64_t pos[kMaxRank] = {};
    std::int64_t offset = 0;
    for (std::int64_t r = begin, d = outer_shape.size() - 1; d >= 0; --d) {  // unravel `begin`
      pos[d] = r % outer_shape[static_cast<int>(d)];
      r /= outer_shape[static_cast<int>(d)];
      offset += pos[d] * outer_strides[static_cast<int>(d)];
    }
    for (std::int64_t r = begin; r < end; ++r) {
      row(offset, r);
      next_position(pos, outer_shape, outer_strides, &offset);
    }
    return true;
  };
  if (threads <= 1) {
    piece(0);
    return;
  }
  parallel_pieces(threads, threads, piece);
}

}  // namespace

Tensor widened(const TensorView& from, int num_threads) {
  Tensor out(DType::kFloat32, from.shape);
  float* const to = out.data_as<float>();
  const auto* const bits = static_cast<const std::uint16_t*>(from.data);
  const int rank = from.shape.size();
  const std::int64_t inner = rank > 0 ? from.shape[rank - 1] : 1, step = rank > 0 ? from.strides[rank - 1] : 0;
  const bool brain = from.dtype == DType::kBFloat16, f16c = has_f16c();
  for_each_row(from.shape, from.strides, num_threads, [&](std::int64_t offset, std::int64_t r) {
    const std::uint16_t* p = bits + offset;
    float* q = to + r * inner;
    if (brain) {
      for (std::int64_t j = 0; j < inner; ++j) q[j] = bfloat16_bits_to_float(p[j * step]);
    } else if (step == 1 && f16c) {
      half_row_to_float(p, q, inner);
    } else {
      for (std::int64_t j = 0; j < inner; ++j) q[j] = half_bits_to_float(p[j * step]);
    }
  });
  return out;
}

TensorView widened_broadcast(const TensorView& from, Tensor* storage, int num_threads) {
  const Dims stored = stored_shape(from);
  *storage = widened(TensorView(from.data, from.dtype, stored, from.strides), num_threads);
  return TensorView(storage->data(), DType::kFloat32, from.shape, rebroadcast_strides(from, stored));
}

void narrow_into(const TensorView& from, const MutableTensorView& to, int num_threads) noexcept {
  const auto* const values = static_cast<const float*>(from.data);
  auto* const bits = static_cast<std::uint16_t*>(to.data);
  const int rank = to.shape.size();
  const std::int64_t inner = rank > 0 ? to.shape[rank - 1] : 1, step = rank > 0 ? to.strides[rank - 1] : 0;
  const bool brain = to.dtype == DType::kBFloat16, f16c = has_f16c();
  for_each_row(to.shape, to.strides, num_threads, [&](std::int64_t offset, std::int64_t r) {
    const float* p = values + r * inner;
    std::uint16_t* q = bits + offset;
    if (brain) {
      for (std::int64_t j = 0; j < inner; ++j) q[j * step] = float_to_bfloat16_bits(p[j]);
    } else if (step == 1 && f16c) {
      float_row_to_half(p, q, inner);
    } else {
      for (std::int64_t j = 0; j < inner; ++j) q[j * step] = float_to_half_bits(p[j]);
    }
  });
}

}  // namespace multigather::detail::cpu
