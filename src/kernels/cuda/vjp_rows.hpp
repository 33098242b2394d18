// Internal: the bodies of the CUDA VJP's own two kernels (vjp_kernel.cu), written once for host
// and device like gather_rows.hpp, so that the host tests run them over the launched grid.
// Everything else of a VJP on the CUDA engine is the gather and scatter kernels
// (api/transforms.cpp). Both serve the winner rule of a scatter with reduction none (only the
// update that wins an element gets its gradient):
//   positions_thread     positions[p] = p: each update's row-major position in G, scattered
//                        (reduction max) into the targets, so that each target holds its winner;
//   keep_winners_thread  grad[p] = 0 unless won[p] == p, where won (gathered back from the
//                        targets) is the winner of update p's target, -1 for a dropped update.
// Both are grid-stride loops over `count` elements, one element per thread per pass.
#pragma once

#include <cstdint>

#include "core/host_device.hpp"
#include "kernels/floating_element.hpp"  // ties_thread's elements, visit_floating
#include "multigather/dtype.hpp"
#include "kernels/cuda/launch_params.hpp"  // kThreadsPerBlock, kMaxBlocksPerMultiprocessor

namespace multigather::detail {

/// An element of `Bytes` bytes that is only ever zeroed. 16 bytes (complex128) are two 8-byte
/// words: the scatter's alignment rule asks min(element size, 8) of the updates.
template <int Bytes> struct ZeroUnit;
template <> struct ZeroUnit<1> { using type = std::uint8_t; };
template <> struct ZeroUnit<2> { using type = std::uint16_t; };
template <> struct ZeroUnit<4> { using type = std::uint32_t; };
template <> struct ZeroUnit<8> { using type = std::uint64_t; };
struct ZeroPair { std::uint64_t low, high; };
template <> struct ZeroUnit<16> { using type = ZeroPair; };

/// positions[p] = p for p = thread, thread + threads, ... below count.
MULTIGATHER_HOST_DEVICE inline void positions_thread(std::int64_t* positions, std::int64_t count,
                                                     std::int64_t thread, std::int64_t threads) {
  for (std::int64_t p = thread; p < count; p += threads) positions[p] = p;
}

/// Element p of `grad` (C-contiguous, `Bytes` bytes each) is zeroed unless won[p] == p, for
/// p = thread, thread + threads, ... below count.
template <int Bytes>
MULTIGATHER_HOST_DEVICE inline void keep_winners_thread(void* grad, const std::int64_t* won, std::int64_t count,
                                                        std::int64_t thread, std::int64_t threads) {
  using Unit = typename ZeroUnit<Bytes>::type;
  auto* g = static_cast<Unit*>(grad);
  for (std::int64_t p = thread; p < count; p += threads) {
    if (won[p] != p) g[p] = Unit{};
  }
}

// ---- A segment max's / min's gradient (api/transforms.cpp, segment_vjp) ------------------------

/// tie[p] = 1 when data[p] equals picked[p] (the segment's result at update p's segment; a NaN
/// equals nothing), else 0, for p = thread, thread + threads, ... below count: floating elements
/// E (kernels/floating_element.hpp: 16-bit floats compared exactly as float32).
template <class E>
MULTIGATHER_HOST_DEVICE inline void ties_thread(const void* data, const void* picked, std::int64_t* tie,
                                                std::int64_t count, std::int64_t thread, std::int64_t threads) {
  using T = typename E::Stored;
  const T* d = static_cast<const T*>(data);
  const T* r = static_cast<const T*>(picked);
  for (std::int64_t p = thread; p < count; p += threads) tie[p] = E::load(d[p]) == E::load(r[p]) ? 1 : 0;
}

/// out[p] = p where flag[p] != 0, else `none` (a tie's position, for a scatter min or the winner
/// mask), for p = thread, thread + threads, ... below count.
MULTIGATHER_HOST_DEVICE inline void positions_where_thread(const std::int64_t* flag, std::int64_t none,
                                                           std::int64_t* out, std::int64_t count,
                                                           std::int64_t thread, std::int64_t threads) {
  for (std::int64_t p = thread; p < count; p += threads) out[p] = flag[p] != 0 ? p : none;
}

/// flag[p] = 1 where at[p] == p (update p is its segment element's first tie), else 0.
MULTIGATHER_HOST_DEVICE inline void at_itself_thread(const std::int64_t* at, std::int64_t* flag, std::int64_t count,
                                                     std::int64_t thread, std::int64_t threads) {
  for (std::int64_t p = thread; p < count; p += threads) flag[p] = at[p] == p ? 1 : 0;
}

/// The grid of an elementwise VJP kernel over `count` elements (pure): one thread per element
/// while that needs at most kMaxBlocksPerMultiprocessor blocks of kThreadsPerBlock per
/// multiprocessor, else that many (the loops stride over the grid); at least one block. A
/// `multiprocessors` under 1 counts as 1. vjp_kernel.cu launches exactly this.
inline std::int64_t elementwise_blocks(std::int64_t count, int multiprocessors) noexcept {
  const std::int64_t needed = count > 0 ? (count + kThreadsPerBlock - 1) / kThreadsPerBlock : 1;
  const std::int64_t cap = std::int64_t{multiprocessors > 0 ? multiprocessors : 1} * kMaxBlocksPerMultiprocessor;
  return needed < cap ? needed : cap;
}

}  // namespace multigather::detail
