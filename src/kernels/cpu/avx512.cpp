// The CPU engine's AVX-512 kernels: see avx512.hpp.
#include "kernels/cpu/avx512.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <type_traits>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define MULTIGATHER_X86_SIMD 1
#if defined(__GNUC__) && !defined(__clang__)
// GCC 12's AVX-512 headers warn falsely about their own "undefined" vectors (GCC bug 105593).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <immintrin.h>
#endif

namespace multigather::detail::cpu {
namespace {

#if defined(MULTIGATHER_X86_SIMD)
#define MULTIGATHER_AVX512 __attribute__((target("avx512f,avx512dq")))

bool cpu_has_avx512() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
}

#define MULTIGATHER_AVX2 __attribute__((target("avx2")))

bool cpu_has_avx2() noexcept {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2");
}

/// Eight indices of type Index from `p` (unaligned), as 64-bit lanes: int32 sign-extended
/// (a negative one stays negative, so huge as unsigned), uint32 zero-extended.
template <class Index>
MULTIGATHER_AVX512 inline __m512i load_indices8(const std::byte* p) noexcept {
  if constexpr (sizeof(Index) == 8) {
    return _mm512_loadu_si512(p);
  } else if constexpr (std::is_signed_v<Index>) {
    return _mm512_cvtepi32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  } else {
    return _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
}

/// gather_plain_run<W, Index, kUnit = true> on AVX-512 gathers: the same contract (returns the
/// number of lookups done; the caller resolves the one it stopped at the general way).
/// kPrefetch: the eight elements kSimdPrefetchGroups groups ahead are prefetched one by one
/// before each gather (their indices not checked yet: the addresses are computed in unsigned
/// arithmetic and only prefetched, which never faults).
template <std::size_t W, class Index, bool kPrefetch = false>
MULTIGATHER_AVX512 std::int64_t plain_run_avx512(const ElementRun& r, std::int64_t m) {
  static_assert(W == 4 || W == 8);
  constexpr auto is = static_cast<std::int64_t>(sizeof(Index));
  constexpr auto w = static_cast<std::int64_t>(W);
  const __m512i size = _mm512_set1_epi64(r.axis_size);
  const __m512i stride = _mm512_set1_epi64(r.axis_stride);
  const __m512i step8 = _mm512_set1_epi64(8 * r.input_step);
  // Lane j of `base`: (t + j) * input_step, the lookup's own input position along the run.
  __m512i base = _mm512_mullo_epi64(_mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7), _mm512_set1_epi64(r.input_step));
  std::int64_t t = 0;
  constexpr std::int64_t ahead = 8 * kSimdPrefetchGroups;
  const __m512i step_ahead = _mm512_set1_epi64(ahead * r.input_step);
  const auto origin = reinterpret_cast<std::uintptr_t>(r.input);
  for (; t + 8 <= m; t += 8) {
    if constexpr (kPrefetch) {
      if (t + ahead + 8 <= m) {
        alignas(64) std::uint64_t element[8];
        _mm512_store_si512(element, _mm512_add_epi64(_mm512_mullo_epi64(load_indices8<Index>(r.indices + (t + ahead) * is), stride),
                                                     _mm512_add_epi64(base, step_ahead)));
        for (int j = 0; j < 8; ++j) {
          __builtin_prefetch(reinterpret_cast<const void*>(origin + element[j] * static_cast<std::uint64_t>(w)));
        }
      }
    }
    const __m512i v = load_indices8<Index>(r.indices + t * is);
    if (_mm512_cmplt_epu64_mask(v, size) != 0xFF) break;  // one is not in [0, size) as it is
    const __m512i offsets = _mm512_add_epi64(_mm512_mullo_epi64(v, stride), base);  // elements
    base = _mm512_add_epi64(base, step8);
    if constexpr (W == 4) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(r.output + t * w), _mm512_i64gather_epi32(offsets, r.input, 4));
    } else {
      _mm512_storeu_si512(r.output + t * w, _mm512_i64gather_epi64(offsets, r.input, 8));
    }
  }
  if (t == m) return m;
  // The last lookups (fewer than eight), or the group with an index to hand over: the scalar
  // loop, which stops exactly at that index (within the group).
  ElementRun rest = r;
  rest.input += t * r.input_step * w;
  rest.indices += t * is;
  rest.output += t * w;
  return t + gather_plain_run<W, Index, true>(rest, m - t);
}

/// copy_large_blocks' mover: 64-byte moves, the stores aligned. bytes >= 64.
struct Avx512Move {
  static constexpr std::size_t kPrefetchBytes = 1024;
  MULTIGATHER_AVX512 static void move(std::byte* dst, const std::byte* src, std::size_t bytes) noexcept {
    // One unaligned move at the start, aligned stores from the first line boundary past dst,
    // one unaligned move ending at the block's end (the three may overlap).
    _mm512_storeu_si512(dst, _mm512_loadu_si512(src));
    std::size_t b = 64 - (reinterpret_cast<std::uintptr_t>(dst) & 63);
    for (; b + 64 <= bytes; b += 64) _mm512_store_si512(dst + b, _mm512_loadu_si512(src + b));
    _mm512_storeu_si512(dst + bytes - 64, _mm512_loadu_si512(src + bytes - 64));
  }
};

/// copy_chunked_blocks<..., kBytes> compiled for AVX-512: flatten inlines its body (and the
/// fixed-size memcpy, now whole 64-byte moves) into this AVX-512 function.
template <std::size_t W, class Offset, bool kFill, std::int64_t kBytes>
MULTIGATHER_AVX512 __attribute__((flatten)) void copy_chunked_avx512(const CopyRun& r, const Offset* offsets,
                                                                      const std::uint8_t* fill, int m) {
  copy_chunked_blocks<W, Offset, kFill, kBytes>(r, offsets, fill, m);
}

/// resolve_tile compiled for AVX-512: flatten inlines its body into this AVX-512 function,
/// where the compiler vectorizes the lookups' loop.
template <class Index, class Offset, IndexMode kMode, bool kNegative>
MULTIGATHER_AVX512 __attribute__((flatten)) bool resolve_tile_avx512(const GatherPlan& p, const TileCoordinates& c,
                                                                      int m, Offset* offsets,
                                                                      std::uint8_t* fill) noexcept {
  return resolve_tile<Index, Offset, kMode, kNegative>(p, c, m, offsets, fill);
}

/// contiguous_in_range (index_check.hpp) compiled for AVX-512.
template <class Index>
MULTIGATHER_AVX512 __attribute__((flatten)) bool range_check_avx512(const void* p, std::int64_t n, int c,
                                                                     const std::int64_t* lo,
                                                                     const std::int64_t* hi) noexcept {
  return contiguous_in_range(static_cast<const Index*>(p), n, c, lo, hi);
}

/// contiguous_in_range compiled for AVX2 (vpcmpgtq: the int64 min / max four at a time), for
/// CPUs without AVX-512.
template <class Index>
MULTIGATHER_AVX2 __attribute__((flatten)) bool range_check_avx2(const void* p, std::int64_t n, int c,
                                                                 const std::int64_t* lo,
                                                                 const std::int64_t* hi) noexcept {
  return contiguous_in_range(static_cast<const Index*>(p), n, c, lo, hi);
}

/// combine::Elementwise<E>::apply compiled for AVX-512.
template <class E>
MULTIGATHER_AVX512 __attribute__((flatten)) void combine_run_avx512(std::byte* dst, const std::byte* src,
                                                                     std::int64_t n) noexcept {
  combine::Elementwise<E>::apply(dst, src, n);
}

template <class T>
CombineRunFn pick_combine(Reduction reduction) noexcept {
  switch (reduction) {
    case Reduction::kAdd: return &combine_run_avx512<combine::FloatAdd<T>>;
    case Reduction::kMul: return &combine_run_avx512<combine::FloatMul<T>>;
    case Reduction::kMin: return &combine_run_avx512<combine::FloatMin<T>>;
    case Reduction::kMax: return &combine_run_avx512<combine::FloatMax<T>>;
    default: return nullptr;
  }
}

template <class T>
MULTIGATHER_AVX512 __attribute__((flatten)) std::int64_t bag_sum_avx512(const BagRows& b, std::byte* acc,
                                                                        std::int64_t first, std::int64_t end) noexcept {
  return sum_bag_rows<T>(b, acc, first, end);
}

/// The zmm operations of bag_sum_registers for float (16 lanes) and double (8 lanes).
template <class T>
struct Zmm;
template <>
struct Zmm<float> {
  using V = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  MULTIGATHER_AVX512 static V load(const float* p) noexcept { return _mm512_loadu_ps(p); }
  MULTIGATHER_AVX512 static V load(Mask m, const float* p) noexcept { return _mm512_maskz_loadu_ps(m, p); }
  MULTIGATHER_AVX512 static void store(float* p, Mask m, V v) noexcept { _mm512_mask_storeu_ps(p, m, v); }
  MULTIGATHER_AVX512 static V add(V a, V b) noexcept { return _mm512_add_ps(a, b); }
  MULTIGATHER_AVX512 static V mul(V a, V b) noexcept { return _mm512_mul_ps(a, b); }
  MULTIGATHER_AVX512 static V broadcast(float w) noexcept { return _mm512_set1_ps(w); }
  /// Where acc is not NaN and row is NaN or row > acc (kMax) / row < acc (kMin): the lanes
  /// where FloatMax / FloatMin take row (one compare masked by another).
  template <bool kMax>
  MULTIGATHER_AVX512 static Mask takes_row(V acc, V row) noexcept {
    return _mm512_mask_cmp_ps_mask(_mm512_cmp_ps_mask(acc, acc, _CMP_ORD_Q), row, acc,
                                     kMax ? _CMP_NLE_UQ : _CMP_NGE_UQ);
  }
  MULTIGATHER_AVX512 static V select(V a, Mask take_b, V b) noexcept { return _mm512_mask_mov_ps(a, take_b, b); }
};
template <>
struct Zmm<double> {
  using V = __m512d;
  using Mask = __mmask8;
  static constexpr int kLanes = 8;
  MULTIGATHER_AVX512 static V load(const double* p) noexcept { return _mm512_loadu_pd(p); }
  MULTIGATHER_AVX512 static V load(Mask m, const double* p) noexcept { return _mm512_maskz_loadu_pd(m, p); }
  MULTIGATHER_AVX512 static void store(double* p, Mask m, V v) noexcept { _mm512_mask_storeu_pd(p, m, v); }
  MULTIGATHER_AVX512 static V add(V a, V b) noexcept { return _mm512_add_pd(a, b); }
  MULTIGATHER_AVX512 static V mul(V a, V b) noexcept { return _mm512_mul_pd(a, b); }
  MULTIGATHER_AVX512 static V broadcast(double w) noexcept { return _mm512_set1_pd(w); }
  /// Where acc is not NaN and row is NaN or row > acc (kMax) / row < acc (kMin): the lanes
  /// where FloatMax / FloatMin take row (one compare masked by another).
  template <bool kMax>
  MULTIGATHER_AVX512 static Mask takes_row(V acc, V row) noexcept {
    return _mm512_mask_cmp_pd_mask(_mm512_cmp_pd_mask(acc, acc, _CMP_ORD_Q), row, acc,
                                     kMax ? _CMP_NLE_UQ : _CMP_NGE_UQ);
  }
  MULTIGATHER_AVX512 static V select(V a, Mask take_b, V b) noexcept { return _mm512_mask_mov_pd(a, take_b, b); }
};

/// sum_bag_rows for rows of K vectors at most (d in ((K - 1) * lanes, K * lanes]), with the
/// bag's accumulators in K zmm registers (the last one masked to d's tail, which is neither read
/// from the row nor stored): no accumulator load and store per row, so about half the
/// instructions per row of the generic loop, and more random rows in flight. The same
/// arithmetic in the same order (acc + row, or acc + w * row, no contraction), so the same
/// bytes. Faster than the generic loop on G3 (float32, d = 64; measured: bench/README.md,
/// "EmbeddingBag: G3, G3w, T3").
template <class T, int K>
MULTIGATHER_AVX512 std::int64_t bag_sum_registers(const BagRows& b, std::byte* acc_bytes, std::int64_t first,
                                                  std::int64_t end) noexcept {
  using Z = Zmm<T>;
  const int tail = static_cast<int>(b.d) - (K - 1) * Z::kLanes;  // in [1, lanes]
  const auto last = static_cast<typename Z::Mask>((1u << tail) - 1u);
  T* acc = reinterpret_cast<T*>(acc_bytes);
  typename Z::V a[K];
  for (int k = 0; k + 1 < K; ++k) a[k] = Z::load(acc + k * Z::kLanes);
  a[K - 1] = Z::load(last, acc + (K - 1) * Z::kLanes);
  const std::byte* table = b.table;
  const std::int64_t stride = b.row_stride;
  const std::int64_t* rows = b.rows;
  const std::int64_t row_bytes = b.d * static_cast<std::int64_t>(sizeof(T));
  const bool tail_line = spans_another_line(b, row_bytes);
  std::int64_t count = 0;
  for (std::int64_t n = first; n < end; ++n) {
    if (n + kPrefetchRows < b.prefetch_end) {  // ceil(row_bytes / 64) = K lines, unrolled
      prefetch_row(table + rows[n + kPrefetchRows] * stride, K, row_bytes, tail_line);
    }
    const std::int64_t r = rows[n];
    if (r == b.skip_row) continue;
    ++count;
    const T* row = reinterpret_cast<const T*>(table + r * stride);
    if (b.scale != nullptr) {
      T w;
      std::memcpy(&w, b.scale + n * b.scale_stride, sizeof w);
      const typename Z::V wv = Z::broadcast(w);
      for (int k = 0; k + 1 < K; ++k) a[k] = Z::add(a[k], Z::mul(wv, Z::load(row + k * Z::kLanes)));
      a[K - 1] = Z::add(a[K - 1], Z::mul(wv, Z::load(last, row + (K - 1) * Z::kLanes)));
    } else {
      for (int k = 0; k + 1 < K; ++k) a[k] = Z::add(a[k], Z::load(row + k * Z::kLanes));
      a[K - 1] = Z::add(a[K - 1], Z::load(last, row + (K - 1) * Z::kLanes));
    }
  }
  for (int k = 0; k + 1 < K; ++k) Z::store(acc + k * Z::kLanes, static_cast<typename Z::Mask>(~0u), a[k]);
  Z::store(acc + (K - 1) * Z::kLanes, last, a[K - 1]);
  return count;
}

/// combine.hpp's FloatAdd / FloatMul / FloatMin / FloatMax on 16 floats or 8 doubles at once:
/// acc <- E::apply(acc, row), lane by lane, with the scalar rules (each sum and product rounded
/// on its own; min / max keep acc's NaN, else take row's NaN, else the smaller / larger, acc
/// on ties), so the same values as Elementwise<E>.
template <class T, Reduction R>
MULTIGATHER_AVX512 inline typename Zmm<T>::V combine_lanes(typename Zmm<T>::V acc, typename Zmm<T>::V row) noexcept {
  using Z = Zmm<T>;
  // (An add or product of two NaNs takes the first operand's payload on x86, and compilers swap
  // these operands freely: the payload of such a NaN is not fixed by any of the engine's loops.)
  if constexpr (R == Reduction::kAdd) {
    return Z::add(acc, row);
  } else if constexpr (R == Reduction::kMul) {
    return Z::mul(acc, row);
  } else {
    return Z::select(acc, Z::template takes_row<R == Reduction::kMax>(acc, row), row);
  }
}

/// One tile of a scatter's lookups combined into their target rows of n elements (n in
/// ((K - 1) * lanes, K * lanes]) in order, with each RUN of consecutive lookups into one row kept
/// in K zmm registers: the row is loaded once, every update of the run combined in, and stored
/// once. Lookup t's row starts at element targets[t] of `out` and its updates at src + t *
/// src_step bytes. The same operations in the same order as Elementwise<E> per lookup (a stored
/// and reloaded value is the same value), so the same bytes. Sorted segment ids make runs of
/// about ten lookups (docs/bench.md G1, G4); for unsorted ones each run is one lookup, whose
/// random target row is prefetched at the start of its run kPrefetchTargets lookups ahead.
template <class T, Reduction R, int K>
MULTIGATHER_AVX512 void combine_runs_registers(std::byte* out_bytes, const std::int64_t* targets, std::int64_t m,
                                               const std::byte* src, std::int64_t src_step,
                                               std::int64_t n) noexcept {
  using Z = Zmm<T>;
  constexpr std::int64_t kPrefetchTargets = 16;
  const int tail = static_cast<int>(n) - (K - 1) * Z::kLanes;  // in [1, lanes]
  const auto last = static_cast<typename Z::Mask>((1u << tail) - 1u);
  const auto all = static_cast<typename Z::Mask>(~0u);
  T* out = reinterpret_cast<T*>(out_bytes);
  const std::int64_t row_bytes = n * static_cast<std::int64_t>(sizeof(T));
  const std::int64_t lines = (row_bytes + 63) / 64;
  std::int64_t t = 0;
  while (t < m) {
    const std::int64_t target = targets[t];
    T* dst = out + target;
    typename Z::V a[K];
    for (int k = 0; k + 1 < K; ++k) a[k] = Z::load(dst + k * Z::kLanes);
    a[K - 1] = Z::load(last, dst + (K - 1) * Z::kLanes);
    do {
      const std::int64_t ahead = t + kPrefetchTargets;
      if (ahead < m && targets[ahead] != targets[ahead - 1]) {  // a run starts there
        // targets are any element offsets: the row's last line is always taken too
        prefetch_row<true>(reinterpret_cast<const std::byte*>(out + targets[ahead]), lines, row_bytes, true);
      }
      const T* row = reinterpret_cast<const T*>(src + t * src_step);
      for (int k = 0; k + 1 < K; ++k) a[k] = combine_lanes<T, R>(a[k], Z::load(row + k * Z::kLanes));
      a[K - 1] = combine_lanes<T, R>(a[K - 1], Z::load(last, row + (K - 1) * Z::kLanes));
      ++t;
    } while (t < m && targets[t] == target);
    for (int k = 0; k + 1 < K; ++k) Z::store(dst + k * Z::kLanes, all, a[k]);
    Z::store(dst + (K - 1) * Z::kLanes, last, a[K - 1]);
  }
}

/// pick(std::integral_constant<int, K>{}) for rows of d elements of T that fit K in [1, 8] zmm
/// registers (d in ((K - 1) * lanes, K * lanes]); `beyond` for longer rows (and d <= 0).
template <class T, class Fn, class Result>
Result by_register_count(std::int64_t d, Fn pick, Result beyond) noexcept {
  constexpr int kLanes = Zmm<T>::kLanes;
  switch (d <= 0 ? 0 : (d + kLanes - 1) / kLanes) {
    case 1: return pick(std::integral_constant<int, 1>{});
    case 2: return pick(std::integral_constant<int, 2>{});
    case 3: return pick(std::integral_constant<int, 3>{});
    case 4: return pick(std::integral_constant<int, 4>{});
    case 5: return pick(std::integral_constant<int, 5>{});
    case 6: return pick(std::integral_constant<int, 6>{});
    case 7: return pick(std::integral_constant<int, 7>{});
    case 8: return pick(std::integral_constant<int, 8>{});
    default: return beyond;
  }
}

template <class T, Reduction R>
CombineRunsFn pick_runs_k(std::int64_t n) noexcept {
  return by_register_count<T>(
      n, [](auto k) -> CombineRunsFn { return &combine_runs_registers<T, R, decltype(k)::value>; }, CombineRunsFn{});
}

template <class T>
CombineRunsFn pick_runs(Reduction reduction, std::int64_t n) noexcept {
  switch (reduction) {
    case Reduction::kAdd: return pick_runs_k<T, Reduction::kAdd>(n);
    case Reduction::kMul: return pick_runs_k<T, Reduction::kMul>(n);
    case Reduction::kMin: return pick_runs_k<T, Reduction::kMin>(n);
    case Reduction::kMax: return pick_runs_k<T, Reduction::kMax>(n);
    default: return nullptr;
  }
}

/// The bag sum for rows of d elements of T: in registers up to 8 vectors, else the generic loop.
template <class T>
BagSumFn pick_bag_sum(std::int64_t d) noexcept {
  return by_register_count<T>(
      d, [](auto k) -> BagSumFn { return &bag_sum_registers<T, decltype(k)::value>; }, BagSumFn{&bag_sum_avx512<T>});
}

template <std::size_t W, bool kPrefetch>
PlainRunFn pick_index(std::size_t index_bytes, bool index_signed) noexcept {
  if (index_bytes == 8) {
    return index_signed ? &plain_run_avx512<W, std::int64_t, kPrefetch> : &plain_run_avx512<W, std::uint64_t, kPrefetch>;
  }
  if (index_bytes == 4) {
    return index_signed ? &plain_run_avx512<W, std::int32_t, kPrefetch> : &plain_run_avx512<W, std::uint32_t, kPrefetch>;
  }
  return nullptr;
}

template <bool kPrefetch>
PlainRunFn pick_plain(std::size_t width, std::size_t index_bytes, bool index_signed) noexcept {
  if (width == 4) return pick_index<4, kPrefetch>(index_bytes, index_signed);
  if (width == 8) return pick_index<8, kPrefetch>(index_bytes, index_signed);
  return nullptr;
}
#else
bool cpu_has_avx512() noexcept { return false; }
bool cpu_has_avx2() noexcept { return false; }
#endif  // MULTIGATHER_X86_SIMD

/// The switch: on unless the environment says MULTIGATHER_SIMD=0 (to compare with the scalar
/// loops, like PyTorch's ATEN_CPU_CAPABILITY=default) or set_simd_enabled(false) was called.
std::atomic<bool>& switch_flag() noexcept {
  static std::atomic<bool> on{[] {
    const char* env = std::getenv("MULTIGATHER_SIMD");
    return !(env != nullptr && std::strcmp(env, "0") == 0);
  }()};
  return on;
}

bool has_avx512() noexcept {
  static const bool has = cpu_has_avx512();
  return has;
}

/// The AVX2 tier (range_check_simd only): on where the switch is and the CPU has AVX2.
bool avx2_enabled() noexcept {
  static const bool has = cpu_has_avx2();
  return has && switch_flag().load(std::memory_order_relaxed);
}

}  // namespace

bool simd_enabled() noexcept { return has_avx512() && switch_flag().load(std::memory_order_relaxed); }

bool set_simd_enabled(bool on) noexcept { return switch_flag().exchange(on, std::memory_order_relaxed); }

#if defined(MULTIGATHER_X86_SIMD)
namespace {
/// Whether this CPU is AMD's (the rules below were measured on a Zen 4 and on an Intel Xeon).
bool cpu_is_amd() noexcept {
  static const bool amd = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") != 0;
  }();
  return amd;
}
}  // namespace
#endif

PlainRunFn plain_run_simd(std::size_t width, std::size_t index_bytes, bool index_signed, bool input_moves,
                          bool beyond_l2) noexcept {
  if (!simd_enabled()) return nullptr;
#if defined(MULTIGATHER_X86_SIMD)
  if (cpu_is_amd()) {
    return beyond_l2 ? pick_plain<true>(width, index_bytes, index_signed) : pick_plain<false>(width, index_bytes, index_signed);
  }
  if (input_moves || beyond_l2) return nullptr;  // the scalar loops (element_run.hpp)
  return pick_plain<false>(width, index_bytes, index_signed);
#else
  (void)width;
  (void)index_bytes;
  (void)index_signed;
  (void)input_moves;
  (void)beyond_l2;
#endif
  return nullptr;
}

PlainRunFn plain_run_simd_prefetching(std::size_t width, std::size_t index_bytes, bool index_signed) noexcept {
  if (!simd_enabled()) return nullptr;
#if defined(MULTIGATHER_X86_SIMD)
  return pick_plain<true>(width, index_bytes, index_signed);
#else
  (void)width;
  (void)index_bytes;
  (void)index_signed;
  return nullptr;
#endif
}

RangeCheckFn range_check_simd(std::size_t index_bytes, bool index_signed) noexcept {
#if defined(MULTIGATHER_X86_SIMD)
  if (simd_enabled()) {
    if (index_bytes == 8) return index_signed ? &range_check_avx512<std::int64_t> : &range_check_avx512<std::uint64_t>;
    if (index_bytes == 4) return index_signed ? &range_check_avx512<std::int32_t> : &range_check_avx512<std::uint32_t>;
  } else if (avx2_enabled()) {
    if (index_bytes == 8) return index_signed ? &range_check_avx2<std::int64_t> : &range_check_avx2<std::uint64_t>;
    if (index_bytes == 4) return index_signed ? &range_check_avx2<std::int32_t> : &range_check_avx2<std::uint32_t>;
  }
#else
  (void)index_bytes;
  (void)index_signed;
#endif
  return nullptr;
}

/// Blocks of more than kChunkedBlockMaxBytes and at most this many bytes take the AVX-512 block
/// mover, the rest `rep movsb`. Up to 64 KiB: on an Intel Xeon (row gathers from a 100 MB
/// table) the mover beat rep movsb at every row size measured, 2 to 64 KiB at 1 thread and 2 to
/// 8 KiB at 2. On AMD as well, except that from 2 KiB on a copy whose source and destination
/// share their offset within a 64-byte line keeps rep movsb: on a Zen 4 VM (rows gathered from a
/// numpy table whose rows start 16 bytes into a line), rep movsb was as fast or faster for 2 to
/// 16 KiB rows into a numpy output (the same offset as the table), and slower into a
/// line-aligned output (a one-shot result), at 1 and 2 threads. Below 2 KiB the mover won
/// either way (1 KiB rows). Measured: bench/README.md, "Measurements behind the CPU engine's
/// choices". Larger blocks were not measured and stay with rep movsb.
inline std::int64_t avx512_block_max_bytes(bool same_line_offset) noexcept {
#if defined(MULTIGATHER_X86_SIMD)
  return cpu_is_amd() && same_line_offset ? 2047 : 65536;
#else
  (void)same_line_offset;
  return 0;
#endif
}

template <class Offset, bool kFill>
CopyFn<Offset> large_blocks_simd(std::size_t width, std::int64_t bytes, bool same_line_offset) noexcept {
  if (!simd_enabled() || bytes <= kChunkedBlockMaxBytes || bytes > avx512_block_max_bytes(same_line_offset)) {
    return nullptr;
  }
#if defined(MULTIGATHER_X86_SIMD)
  switch (width) {
    case 1: return &copy_large_blocks<1, Offset, kFill, Avx512Move>;
    case 2: return &copy_large_blocks<2, Offset, kFill, Avx512Move>;
    case 4: return &copy_large_blocks<4, Offset, kFill, Avx512Move>;
    case 8: return &copy_large_blocks<8, Offset, kFill, Avx512Move>;
    case 16: return &copy_large_blocks<16, Offset, kFill, Avx512Move>;
    default: return nullptr;
  }
#else
  (void)width;
  return nullptr;
#endif
}

template CopyFn<std::int32_t> large_blocks_simd<std::int32_t, false>(std::size_t, std::int64_t, bool) noexcept;
template CopyFn<std::int32_t> large_blocks_simd<std::int32_t, true>(std::size_t, std::int64_t, bool) noexcept;
template CopyFn<std::int64_t> large_blocks_simd<std::int64_t, false>(std::size_t, std::int64_t, bool) noexcept;
template CopyFn<std::int64_t> large_blocks_simd<std::int64_t, true>(std::size_t, std::int64_t, bool) noexcept;

template <class Offset, bool kFill>
CopyFn<Offset> chunked_blocks_simd(std::size_t width, std::int64_t bytes) noexcept {
  if (!simd_enabled() || (bytes != 64 && bytes != 128)) return nullptr;
#if defined(MULTIGATHER_X86_SIMD)
  const bool b64 = bytes == 64;
  switch (width) {
    case 1: return b64 ? &copy_chunked_avx512<1, Offset, kFill, 64> : &copy_chunked_avx512<1, Offset, kFill, 128>;
    case 2: return b64 ? &copy_chunked_avx512<2, Offset, kFill, 64> : &copy_chunked_avx512<2, Offset, kFill, 128>;
    case 4: return b64 ? &copy_chunked_avx512<4, Offset, kFill, 64> : &copy_chunked_avx512<4, Offset, kFill, 128>;
    case 8: return b64 ? &copy_chunked_avx512<8, Offset, kFill, 64> : &copy_chunked_avx512<8, Offset, kFill, 128>;
    case 16: return b64 ? &copy_chunked_avx512<16, Offset, kFill, 64> : &copy_chunked_avx512<16, Offset, kFill, 128>;
    default: return nullptr;
  }
#else
  (void)width;
  return nullptr;
#endif
}

template CopyFn<std::int32_t> chunked_blocks_simd<std::int32_t, false>(std::size_t, std::int64_t) noexcept;
template CopyFn<std::int32_t> chunked_blocks_simd<std::int32_t, true>(std::size_t, std::int64_t) noexcept;
template CopyFn<std::int64_t> chunked_blocks_simd<std::int64_t, false>(std::size_t, std::int64_t) noexcept;
template CopyFn<std::int64_t> chunked_blocks_simd<std::int64_t, true>(std::size_t, std::int64_t) noexcept;

CombineRunFn combine_run_simd(DType dtype, Reduction reduction) noexcept {
  if (!simd_enabled()) return nullptr;
#if defined(MULTIGATHER_X86_SIMD)
  if (dtype == DType::kFloat32) return pick_combine<float>(reduction);
  if (dtype == DType::kFloat64) return pick_combine<double>(reduction);
#else
  (void)dtype;
  (void)reduction;
#endif
  return nullptr;
}

CombineRunsFn combine_runs_simd(DType dtype, Reduction reduction, std::int64_t n) noexcept {
  if (!simd_enabled()) return nullptr;
#if defined(MULTIGATHER_X86_SIMD)
  if (dtype == DType::kFloat32) return pick_runs<float>(reduction, n);
  if (dtype == DType::kFloat64) return pick_runs<double>(reduction, n);
#else
  (void)dtype;
  (void)reduction;
  (void)n;
#endif
  return nullptr;
}

BagSumFn bag_sum_simd(DType dtype, std::int64_t d) noexcept {
  if (!simd_enabled()) return nullptr;
#if defined(MULTIGATHER_X86_SIMD)
  if (dtype == DType::kFloat32) return pick_bag_sum<float>(d);
  if (dtype == DType::kFloat64) return pick_bag_sum<double>(d);
#else
  (void)dtype;
  (void)d;
#endif
  return nullptr;
}

template <class Index, class Offset, IndexMode kMode, bool kNegative>
ResolveFn<Offset> resolve_simd() noexcept {
  if (!simd_enabled()) return nullptr;
#if defined(MULTIGATHER_X86_SIMD)
  return &resolve_tile_avx512<Index, Offset, kMode, kNegative>;
#else
  return nullptr;
#endif
}

// Every mode and negative rule, for 32- and 64-bit signed indices and offsets.
#define MULTIGATHER_RESOLVE_SIMD(Index, Offset, kMode)                             \
  template ResolveFn<Offset> resolve_simd<Index, Offset, kMode, false>() noexcept; \
  template ResolveFn<Offset> resolve_simd<Index, Offset, kMode, true>() noexcept;
#define MULTIGATHER_RESOLVE_SIMD_MODES(Index, Offset)              \
  MULTIGATHER_RESOLVE_SIMD(Index, Offset, IndexMode::kError)       \
  MULTIGATHER_RESOLVE_SIMD(Index, Offset, IndexMode::kClamp)       \
  MULTIGATHER_RESOLVE_SIMD(Index, Offset, IndexMode::kWrap)        \
  MULTIGATHER_RESOLVE_SIMD(Index, Offset, IndexMode::kFill)
MULTIGATHER_RESOLVE_SIMD_MODES(std::int32_t, std::int32_t)
MULTIGATHER_RESOLVE_SIMD_MODES(std::int32_t, std::int64_t)
MULTIGATHER_RESOLVE_SIMD_MODES(std::int64_t, std::int32_t)
MULTIGATHER_RESOLVE_SIMD_MODES(std::int64_t, std::int64_t)
#undef MULTIGATHER_RESOLVE_SIMD_MODES
#undef MULTIGATHER_RESOLVE_SIMD

}  // namespace multigather::detail::cpu

#if defined(MULTIGATHER_X86_SIMD) && defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
