// Internal: the body of the CUDA scatter kernels, written once for host and device (like
// gather_rows.hpp). A scatter is planned as the gather that reads its targets (plan/scatter_plan.hpp):
// gather_multiaxis(output, indices, axes) with the updates, broadcast to G, in the place of the
// gather's output. So CudaScatterParams::rows is a CudaGatherParams in ELEMENT units whose
// `input` is the scatter's output and whose `output` is the updates (read only), and
// locate_row gives, for every row of G in row-major order, the row of the output it combines
// into and the row of updates it reads.
//
// Deterministic mode (bit-identical to the CPU engine, whatever the launch; a NaN that the
// arithmetic makes has the GPU's canonical bits, as a CPU NaN has x86's):
//   1. scatter_keys: key[r] = (the target row's offset + bias (>= 0)) >> key_shift, or kDropped
//      for a dropped (or, in error mode, bad) lookup; value[r] = the updates row's offset. Raises
//      the error flag.
//   2. a STABLE sort of (key, value) by key (cub::BlockRadixSort or cub::DeviceRadixSort on
//      the device, std::stable_sort in the host tests): the rows of one target now sit
//      together, in row-major order.
//   3. scatter_item<..., Atomic = false>: the first sorted row of each target owns it; its thread
//      group combines the target's updates in order, each lane owning its units of the row.
// Atomic mode (faster, not deterministic; also the deterministic mode of integer add / mul /
// min / max, whose bytes no order changes: combine::order_free): step 1, then
// scatter_item<..., Atomic = true> combines every row with one atomic read-modify-write per
// element, in any order (after scatter_identity_item has set the targets to the reduction's
// identity when include_input is false).
#pragma once

#include <cstdint>
#include <type_traits>

#include "kernels/cuda/gather_rows.hpp"
#include "kernels/combine.hpp"

namespace multigather::detail {

/// A read-only load of one update element (through __ldg where it has an overload).
template <class T>
MULTIGATHER_HOST_DEVICE inline T load_update(const T* p) {
  if constexpr (std::is_floating_point_v<T> || (std::is_integral_v<T> && sizeof(T) <= 4)) {
    return load_readonly(p);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(load_readonly(reinterpret_cast<const unsigned long long*>(p)));
  } else {
    return *p;  // a complex element
  }
}

/// The key of a row that writes nothing: all bits set (sorts last).
template <class Key>
inline constexpr Key kDropped = ~Key{0};

/// A target row's key (the sort's), and back: its offset in the scatter's output (elements).
template <class Off>
MULTIGATHER_HOST_DEVICE inline std::make_unsigned_t<Off> target_key(const CudaScatterParams& s, Off offset) {
  return static_cast<std::make_unsigned_t<Off>>(offset + static_cast<Off>(s.target_bias)) >> s.key_shift;
}
template <class Off>
MULTIGATHER_HOST_DEVICE inline Off target_offset(const CudaScatterParams& s, std::make_unsigned_t<Off> key) {
  return static_cast<Off>(key << s.key_shift) - static_cast<Off>(s.target_bias);
}

/// Step 1 for rows thread, thread + threads, ...: every row's key and updates offset.
template <class Index, class Off>
MULTIGATHER_HOST_DEVICE inline void scatter_keys(const CudaScatterParams& s, Off thread, Off threads) {
  using Key = std::make_unsigned_t<Off>;
  const CudaGatherParams& p = s.rows;
  auto* keys = static_cast<Key*>(s.keys);
  auto* values = static_cast<Off*>(s.values);
  const Off rows = static_cast<Off>(p.rows);
  for (Off row = thread; row < rows; row += threads) {
    const RowPlace<Off> place = locate_row<Index, Off>(p, row);
    keys[row] = place.lookup == Lookup::kOk ? target_key<Off>(s, place.input) : kDropped<Key>;
    values[row] = place.output;
  }
}

/// Work item `item` (a sorted position and a chunk of its row) for thread `lane` of its group:
/// the (sorted) row at the head of its target's run combines the run, each lane its units.
template <class Op, class Off, bool Atomic>
MULTIGATHER_HOST_DEVICE inline void scatter_item(const CudaScatterParams& s, Off item, Off lane) {
  using T = typename Op::T;
  using Key = std::make_unsigned_t<Off>;
  const CudaGatherParams& p = s.rows;
  const auto* keys = static_cast<const Key*>(s.keys);
  const auto* values = static_cast<const Off*>(s.values);
  const ItemSpan<Off> span = item_span(p, item);
  const Off i = span.row, end = span.end;  // i: the row's position in the (sorted) keys
  const Key key = keys[i];
  if (key == kDropped<Key>) return;
  if (!Atomic && i > 0 && keys[i - 1] == key) return;  // not the head of its run
  const Off group = Off{1} << p.group_shift;
  T* dst = static_cast<T*>(const_cast<void*>(p.input)) + target_offset<Off>(s, key);
  const T* updates = static_cast<const T*>(p.output);
  if constexpr (Atomic) {
    const T* src = updates + values[i];
    for (Off u = span.begin + lane; u < end; u += group) Op::atomic(dst + u, load_update(src + u));
  } else {
    const Off rows = static_cast<Off>(p.rows);
    for (Off u = span.begin + lane; u < end; u += group) {
      Off j = i;
      T acc = s.include_input ? dst[u] : load_update(updates + values[j++] + u);
      // The run in steps of kFold rows: their offsets and updates are loaded before the first
      // of them is combined (kFold loads in flight instead of one), then combined in order (the
      // same left fold: the same bytes). The keys are sorted, so the window's last key equal to
      // the run's says the whole window is in the run.
      constexpr int kFold = sizeof(T) <= 8 ? 16 : 4;
      for (; j + kFold <= rows && keys[j + kFold - 1] == key; j += kFold) {
        T step[kFold];
        MULTIGATHER_UNROLL
        for (int f = 0; f < kFold; ++f) step[f] = load_update(updates + values[j + f] + u);
        MULTIGATHER_UNROLL
        for (int f = 0; f < kFold; ++f) acc = Op::apply(acc, step[f]);
      }
      for (; j < rows && keys[j] == key; ++j) acc = Op::apply(acc, load_update(updates + values[j] + u));
      dst[u] = acc;
    }
  }
}

/// Atomic mode with include_input = false: every target element starts as the identity.
template <int ElementBytes> struct ElementOf { using type = typename UnitOf<ElementBytes>::type; };
template <> struct ElementOf<8> { using type = std::uint64_t; };
template <> struct ElementOf<16> { using type = combine::Complex<double>; };  // 8-byte aligned

template <int ElementBytes, class Off>
MULTIGATHER_HOST_DEVICE inline void scatter_identity_item(const CudaScatterParams& s, Off item, Off lane) {
  using Unit = typename ElementOf<ElementBytes>::type;
  using Key = std::make_unsigned_t<Off>;
  const CudaGatherParams& p = s.rows;
  const ItemSpan<Off> span = item_span(p, item);
  const Key key = static_cast<const Key*>(s.keys)[span.row];
  if (key == kDropped<Key>) return;
  Unit* dst = static_cast<Unit*>(const_cast<void*>(p.input)) + target_offset<Off>(s, key);
  const Unit identity = *reinterpret_cast<const Unit*>(s.identity);
  for (Off u = span.begin + lane; u < span.end; u += Off{1} << p.group_shift) dst[u] = identity;
}

/// Thread `thread` of `threads` of the fill (CudaFillParams): units thread, thread + threads, ...
/// (the grid-stride loop) set to the pattern.
template <int UnitBytes>
MULTIGATHER_HOST_DEVICE inline void fill_thread(const CudaFillParams& f, std::int64_t thread, std::int64_t threads) {
  using Unit = typename UnitOf<UnitBytes>::type;
  const Unit value = *reinterpret_cast<const Unit*>(f.pattern);
  Unit* out = static_cast<Unit*>(f.out);
  for (std::int64_t u = thread; u < f.units; u += threads) out[u] = value;
}

/// Everything one thread of a scatter launch does over items (grid-stride; as gather_thread).
template <class Off, class Body>
MULTIGATHER_HOST_DEVICE inline void scatter_thread(const CudaScatterParams& s, Off thread, Off threads,
                                                   Body body) {
  const CudaGatherParams& p = s.rows;
  const Off items = static_cast<Off>(p.items);
  const Off lane = thread & ((Off{1} << p.group_shift) - 1);
  const Off step = threads >> p.group_shift;
  for (Off item = thread >> p.group_shift; item < items; item += step) body(item, lane);
}

}  // namespace multigather::detail
