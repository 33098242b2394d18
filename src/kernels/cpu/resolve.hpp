// Internal: index resolution for the CPU kernels, templated on the index type, the index mode
// and the negative rule. A tile of lookups is resolved into input offsets in one pass that also
// checks bounds (a branch-free "bad" flag; no second pass over the indices).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "core/index_resolve.hpp"
#include "plan/plan.hpp"

namespace multigather::detail::cpu {

/// Reads one index of type Index from possibly unaligned memory.
template <class Index>
inline Index load_index(const std::byte* p) noexcept {
  Index v;
  std::memcpy(&v, p, sizeof(Index));
  return v;
}

/// load_index's value as uint64, a negative one sign-extended first: huge, so that one unsigned
/// compare `v < size` tests both ends of [0, size) (the plain loops' check as stored).
template <class Index>
inline std::uint64_t load_index_unsigned(const std::byte* p) noexcept {
  if constexpr (std::is_signed_v<Index>) {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(load_index<Index>(p)));
  } else {
    return static_cast<std::uint64_t>(load_index<Index>(p));
  }
}

/// SPEC section 1's resolve(raw, size) for one coordinate (core/index_resolve.hpp, the one
/// resolver, with the policy fixed at compile time). Returns the position along the axis (always
/// in [0, size) when `ok`, 0 otherwise, so that nothing out of range is ever addressed). `ok` is
/// false for an index out of range under kError and kFill. kClamp and kWrap need size > 0 (the
/// engine reports empty axes before resolving anything).
template <class Index, IndexMode kMode, bool kNegative>
inline std::int64_t resolve_index(Index raw, std::int64_t size, bool& ok) noexcept {
  std::int64_t v;
  ok = ::multigather::detail::resolve_index<kMode, kNegative>(raw, size, &v) != IndexResolution::kOutOfRange;
  return v;
}

/// Where the coordinates of a run of lookups live and where they point.
struct TileCoordinates {
  const std::byte* indices = nullptr;  // coordinate 0 of the run's first lookup
  std::int64_t index_step = 0;         // bytes between consecutive lookups' coordinates
  std::int64_t coord_step = 0;         // bytes between coordinate j and j + 1
  std::int64_t input_step = 0;         // input elements between consecutive lookups (non-axis)
};

/// Resolves lookups [0, m) of a run: offsets[t] = t * input_step + sum_j v_j * axis_strides[j]
/// (input elements, relative to the run's base). Under kFill, fill[t] is set for a lookup with
/// an out-of-range coordinate. Returns false when some coordinate was out of range (kError,
/// kFill); offsets then stay in bounds (the bad coordinate contributes 0).
/// resolve_tile for exactly kK coordinates per lookup: one pass, one store per lookup.
template <int kK, class Index, class Offset, IndexMode kMode, bool kNegative>
bool resolve_tile_fixed(const GatherPlan& p, const TileCoordinates& c, int m, Offset* offsets,
                        std::uint8_t* fill) noexcept {
  const auto step = static_cast<Offset>(c.input_step);
  std::int64_t sizes[kK];
  Offset strides[kK];
  for (int j = 0; j < kK; ++j) {
    sizes[j] = p.axis_sizes[static_cast<std::size_t>(j)];
    strides[j] = static_cast<Offset>(p.axis_strides[static_cast<std::size_t>(j)]);
  }
  // Locals, not c's fields: a store to offsets may alias them, which would reload them per lookup.
  const std::byte* const indices = c.indices;
  const std::int64_t coord_step = c.coord_step;
  unsigned bad = 0;
  auto run = [&](auto index_step) {  // a std::int64_t, or a std::integral_constant
    for (int t = 0; t < m; ++t) {
      const std::byte* at = indices + t * static_cast<std::int64_t>(index_step);
      Offset offset = static_cast<Offset>(t) * step;
      unsigned out_of_range = 0;
      for (int j = 0; j < kK; ++j) {
        bool ok;
        const std::int64_t v =
            resolve_index<Index, kMode, kNegative>(load_index<Index>(at + j * coord_step), sizes[j], ok);
        offset += static_cast<Offset>(v) * strides[j];
        out_of_range |= static_cast<unsigned>(!ok);
      }
      offsets[t] = offset;
      bad |= out_of_range;
      if constexpr (kMode == IndexMode::kFill) fill[t] = static_cast<std::uint8_t>(out_of_range);
    }
  };
  // Contiguous single coordinates (GatherElements, take): a constant step, so that the
  // compiler loads the indices as vectors instead of one by one.
  if (kK == 1 && c.index_step == static_cast<std::int64_t>(sizeof(Index))) {
    run(std::integral_constant<std::int64_t, static_cast<std::int64_t>(sizeof(Index))>{});
  } else {
    run(c.index_step);
  }
  return bad == 0;
}

template <class Index, class Offset, IndexMode kMode, bool kNegative>
bool resolve_tile(const GatherPlan& p, const TileCoordinates& c, int m, Offset* offsets,
                  std::uint8_t* fill) noexcept {
  if (p.k == 1) return resolve_tile_fixed<1, Index, Offset, kMode, kNegative>(p, c, m, offsets, fill);
  if (p.k == 2) return resolve_tile_fixed<2, Index, Offset, kMode, kNegative>(p, c, m, offsets, fill);
  const auto step = static_cast<Offset>(c.input_step);
  for (int t = 0; t < m; ++t) offsets[t] = static_cast<Offset>(t) * step;
  if constexpr (kMode == IndexMode::kFill) {
    for (int t = 0; t < m; ++t) fill[t] = 0;
  }
  unsigned bad = 0;
  for (int j = 0; j < p.k; ++j) {
    const std::byte* base = c.indices + j * c.coord_step;
    const std::int64_t size = p.axis_sizes[static_cast<std::size_t>(j)];
    const auto stride = static_cast<Offset>(p.axis_strides[static_cast<std::size_t>(j)]);
    auto one = [&](int t, const std::byte* at) {
      bool ok;
      const std::int64_t v = resolve_index<Index, kMode, kNegative>(load_index<Index>(at), size, ok);
      offsets[t] += static_cast<Offset>(v) * stride;
      bad |= static_cast<unsigned>(!ok);
      if constexpr (kMode == IndexMode::kFill) fill[t] |= static_cast<std::uint8_t>(!ok);
    };
    if (c.index_step == static_cast<std::int64_t>(sizeof(Index))) {  // contiguous coordinates
      for (int t = 0; t < m; ++t) one(t, base + t * static_cast<std::int64_t>(sizeof(Index)));
    } else {
      for (int t = 0; t < m; ++t) one(t, base + t * c.index_step);
    }
  }
  return bad == 0;
}

}  // namespace multigather::detail::cpu
