// Internal: the body of the CUDA gather kernel, one work item at a time. It is written once for
// host and device (MULTIGATHER_HOST_DEVICE): gather_kernel.cu runs it in a grid-stride loop,
// and the tests run the very same code on the CPU over every (item, lane) pair, so the index
// math, the row splitting and the index policies are checked even where no GPU exists.
#pragma once

#include <vector_types.h>  // uint2, uint4 (host-usable CUDA vector types)

#include <cstdint>
#include <type_traits>

#include "core/index_resolve.hpp"
#include "core/index_value.hpp"
#include "kernels/cuda/launch_params.hpp"

namespace multigather::detail {

template <int UnitBytes> struct UnitOf;
template <> struct UnitOf<1> { using type = std::uint8_t; };
template <> struct UnitOf<2> { using type = std::uint16_t; };
template <> struct UnitOf<4> { using type = std::uint32_t; };
template <> struct UnitOf<8> { using type = uint2; };
template <> struct UnitOf<16> { using type = uint4; };

/// A read-only load: through the non-coherent (texture) path on the device.
template <class T>
MULTIGATHER_HOST_DEVICE inline T load_readonly(const T* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

enum class Lookup { kOk, kFill, kBad };

/// SPEC section 1 resolve(v, n) (core/index_resolve.hpp, the one resolver): kOk with *out the
/// position, kFill (fill mode; a scatter's drop mode is planned as fill), or kBad.
template <class Index>
MULTIGATHER_HOST_DEVICE inline Lookup resolve(Index raw, std::int64_t size, IndexMode mode,
                                              bool negative, std::int64_t* out) {
  if (resolve_index(raw, size, mode, negative, out) != IndexResolution::kOutOfRange) return Lookup::kOk;
  return mode == IndexMode::kFill ? Lookup::kFill : Lookup::kBad;
}

/// Quotient of a row / item number by a dimension size: multiply-high in 32-bit mode.
template <class Off>
MULTIGATHER_HOST_DEVICE inline Off divide(Off n, std::int64_t divisor, const FastDivide& fast) {
  if constexpr (sizeof(Off) == 4) {
    return static_cast<Off>(fast.divide(static_cast<std::uint32_t>(n)));
  } else {
    return n / divisor;
  }
}

/// Where one row reads and writes (in units), and whether it copies, fills or is skipped.
template <class Off>
struct RowPlace {
  Off input = 0;
  Off output = 0;
  Lookup lookup = Lookup::kOk;
};

/// Row number -> outer coordinates -> offsets, then the row's k coordinates resolved. The
/// outermost coordinate needs no division. Raises the error flag for a bad index.
template <class Index, class Off>
MULTIGATHER_HOST_DEVICE inline RowPlace<Off> locate_row(const CudaGatherParams& p, Off row) {
  RowPlace<Off> place;
  Off ix_off = 0, rest = row;
  for (int d = p.rank - 1; d >= 0; --d) {
    Off coord = rest;
    if (d > 0) {
      const Off q = divide(rest, p.shape[d], p.shape_divide[d]);
      coord = rest - q * static_cast<Off>(p.shape[d]);
      rest = q;
    }
    place.input += coord * static_cast<Off>(p.input_strides[d]);
    ix_off += coord * static_cast<Off>(p.indices_strides[d]);
    place.output += coord * static_cast<Off>(p.output_strides[d]);
  }
  const auto* indices = static_cast<const Index*>(p.indices);
  for (int j = 0; j < p.k; ++j) {
    const Index raw =
        load_readonly(indices + ix_off + static_cast<Off>(j) * static_cast<Off>(p.coord_stride));
    std::int64_t v = 0;
    const Lookup l = resolve(raw, p.axis_sizes[j], p.index_mode, p.negative_indices, &v);
    if (l != Lookup::kOk) {
      if (l == Lookup::kBad || place.lookup == Lookup::kOk) place.lookup = l;
      continue;
    }
    place.input += static_cast<Off>(v) * static_cast<Off>(p.axis_strides[j]);
  }
  if (place.lookup == Lookup::kBad && p.error_flag != nullptr) *p.error_flag = 1u;
  return place;
}

/// Unit u of a filled row: the fill element's bytes at u's position within the element.
template <int UnitBytes>
MULTIGATHER_HOST_DEVICE inline typename UnitOf<UnitBytes>::type fill_unit(
    const CudaGatherParams& p, std::int64_t u) {
  using Unit = typename UnitOf<UnitBytes>::type;
  return reinterpret_cast<const Unit*>(p.fill_pattern)[u & (16 / UnitBytes - 1)];
}

/// A work item: its row, and the units [begin, end) of that row it moves (rows longer than
/// p.chunk_units are split into chunks, one item each). Shared by the gather and scatter kernels.
template <class Off>
struct ItemSpan {
  Off row, begin, end;
};

template <class Off>
MULTIGATHER_HOST_DEVICE inline ItemSpan<Off> item_span(const CudaGatherParams& p, Off item) {
  Off row = item, chunk = 0;
  if (p.chunks_per_row > 1) {
    row = divide(item, p.chunks_per_row, p.chunks_divide);
    chunk = item - row * static_cast<Off>(p.chunks_per_row);
  }
  const Off row_units = static_cast<Off>(p.row_units);
  const Off begin = chunk * static_cast<Off>(p.chunk_units);
  const Off end = begin + static_cast<Off>(p.chunk_units) < row_units
                      ? begin + static_cast<Off>(p.chunk_units) : row_units;
  return {row, begin, end};
}

/// Row path: work item `item` for thread `lane` of its group (lane < 2^group_shift). Moves
/// units begin + lane, begin + lane + group, ... of the item's chunk of its row.
template <int UnitBytes, class Index, class Off>
MULTIGATHER_HOST_DEVICE inline void gather_item(const CudaGatherParams& p, Off item, Off lane) {
  using Unit = typename UnitOf<UnitBytes>::type;
  const Off group = Off{1} << p.group_shift;
  const ItemSpan<Off> span = item_span(p, item);
  const RowPlace<Off> place = locate_row<Index, Off>(p, span.row);
  if (place.lookup == Lookup::kBad) return;  // nothing read from an invalid place, nothing written
  const Off end = span.end;
  Unit* dst = static_cast<Unit*>(p.output) + place.output;
  Off u = span.begin + lane;
  if (place.lookup == Lookup::kFill) {
    for (; u < end; u += group) dst[u] = fill_unit<UnitBytes>(p, u);
    return;
  }
  const Unit* src = static_cast<const Unit*>(p.input) + place.input;
  if (u + (kUnitsPerThread - 1) * group < end) {  // a full item: every load before any store
    Unit v[kUnitsPerThread];
MULTIGATHER_UNROLL
    for (int t = 0; t < kUnitsPerThread; ++t) v[t] = load_readonly(src + u + t * group);
MULTIGATHER_UNROLL
    for (int t = 0; t < kUnitsPerThread; ++t) dst[u + t * group] = v[t];
    return;
  }
  for (; u < end; u += group) dst[u] = load_readonly(src + u);
}

/// Element path (rows of one unit, one thread each): rows first, first + stride, ...,
/// first + (kUnitsPerThread - 1) * stride below p.items, with every index load, then every
/// input load issued before the first store, so that each thread keeps several independent
/// random reads in flight.
template <int UnitBytes, class Index, class Off>
MULTIGATHER_HOST_DEVICE inline void gather_elements(const CudaGatherParams& p, Off first,
                                                    Off stride) {
  using Unit = typename UnitOf<UnitBytes>::type;
  const Off items = static_cast<Off>(p.items);
  RowPlace<Off> place[kUnitsPerThread];
MULTIGATHER_UNROLL
  for (int t = 0; t < kUnitsPerThread; ++t) {
    const Off row = first + t * stride;
    if (row < items) {
      place[t] = locate_row<Index, Off>(p, row);
    } else {
      place[t].lookup = Lookup::kBad;  // past the end: nothing to do
    }
  }
  Unit v[kUnitsPerThread];
MULTIGATHER_UNROLL
  for (int t = 0; t < kUnitsPerThread; ++t) {
    if (place[t].lookup == Lookup::kOk) {
      v[t] = load_readonly(static_cast<const Unit*>(p.input) + place[t].input);
    } else {
      v[t] = fill_unit<UnitBytes>(p, 0);
    }
  }
MULTIGATHER_UNROLL
  for (int t = 0; t < kUnitsPerThread; ++t) {
    if (place[t].lookup != Lookup::kBad) static_cast<Unit*>(p.output)[place[t].output] = v[t];
  }
}

/// Everything one thread of the launched grid does: thread `thread` of a grid of `threads`
/// threads (gather_kernel.cu passes blockIdx.x * kThreadsPerBlock + threadIdx.x and
/// gridDim.x * kThreadsPerBlock; the tests call it for every thread of launch_blocks()'s grid).
///  - single-unit rows (rows_per_thread > 1): kUnitsPerThread rows per pass, strided by the grid
///    (gather_elements), passes kUnitsPerThread * threads rows apart;
///  - other rows: threads form groups of 2^group_shift consecutive threads; group g runs items
///    g, g + groups, g + 2 * groups, ... (grid-stride), its thread `lane` moving its units of each.
/// `threads` is a multiple of 2^group_shift (kThreadsPerBlock is, and a group is at most a block).
template <int UnitBytes, class Index, class Off>
MULTIGATHER_HOST_DEVICE inline void gather_thread(const CudaGatherParams& p, Off thread,
                                                  Off threads) {
  const Off items = static_cast<Off>(p.items);
  if (p.rows_per_thread > 1) {
    for (Off first = thread; first < items; first += threads * kUnitsPerThread) {
      gather_elements<UnitBytes, Index, Off>(p, first, threads);
    }
    return;
  }
  const Off lane = thread & ((Off{1} << p.group_shift) - 1);
  const Off step = threads >> p.group_shift;
  for (Off item = thread >> p.group_shift; item < items; item += step) {
    gather_item<UnitBytes, Index, Off>(p, item, lane);
  }
}

/// Calls visitor.template operator()<UnitBytes, Index, Off>() for the kernel variant `p`
/// needs; returns false for an unsupported unit width or index dtype.
template <class Off, int UnitBytes, class Visitor>
bool visit_index(DType index_dtype, Visitor& visitor) {
  return visit_index_type(index_dtype, [&]<class Index>() {  // the one index-dtype dispatch
    visitor.template operator()<UnitBytes, Index, Off>();
    return true;
  });
}

template <class Off, class Visitor>
bool visit_unit(const CudaGatherParams& p, Visitor& visitor) {
  switch (p.unit_bytes) {
    case 1: return visit_index<Off, 1>(p.index_dtype, visitor);
    case 2: return visit_index<Off, 2>(p.index_dtype, visitor);
    case 4: return visit_index<Off, 4>(p.index_dtype, visitor);
    case 8: return visit_index<Off, 8>(p.index_dtype, visitor);
    case 16: return visit_index<Off, 16>(p.index_dtype, visitor);
    default: return false;
  }
}

template <class Visitor>
bool visit_kernel_variant(const CudaGatherParams& p, Visitor& visitor) {
  return p.offsets32 ? visit_unit<std::int32_t>(p, visitor) : visit_unit<std::int64_t>(p, visitor);
}

}  // namespace multigather::detail
