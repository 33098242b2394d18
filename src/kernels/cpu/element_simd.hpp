// Internal: the plain element loop (element_run.hpp's gather_plain_run) on AVX-512 gathers, for
// x86-64 CPUs with AVX-512F and AVX-512DQ, chosen at run time (the library is built for the
// baseline x86-64; only element_simd.cpp's kernels use AVX-512, under a target attribute).
//
// Eight lookups a step: load eight indices (int32 / uint32 widened to 64 bits), one unsigned
// compare against the axis size (a negative index is huge as unsigned), then one
// vpgatherqd / vpgatherqq of the eight elements and one store. An index that is not already in
// [0, size) is never used as an address: its group of eight goes to the scalar plain loop,
// which stops exactly at it, as gather_plain_run does. Far fewer instructions per lookup than
// the scalar loop, so more random reads are in flight. Measured on this project's machine
// (AMD EPYC, Zen 4), 1 thread, in a standalone loop: GatherElements on axis 0 from 16 MiB,
// 5.1-5.8 -> 4.4-4.5 ms; flat take of 4M from 64 MiB, 33.0 -> 31.2-31.7 ms.
#pragma once

#include <cstddef>

#include "kernels/cpu/element_run.hpp"

namespace multigather::detail::cpu {

/// The AVX-512 plain element loop for element width `width` (4 or 8 bytes) and an index type
/// of `index_bytes` bytes (4 or 8) and signedness `index_signed`, with indices and output
/// contiguous along the run (kUnit); nullptr when the combination has none, when the CPU lacks
/// AVX-512F / AVX-512DQ, on other architectures, or when set_simd_enabled(false).
PlainRunFn plain_run_simd(std::size_t width, std::size_t index_bytes, bool index_signed) noexcept;

/// Whether plain_run_simd may return a kernel: the CPU has the instructions, the environment
/// variable MULTIGATHER_SIMD is not "0" (read once) and set_simd_enabled(false) was not called.
bool simd_enabled() noexcept;

/// Switches the AVX-512 kernels off (false) or back on where the CPU has them (true); returns
/// the previous setting. For tests that compare both paths; not thread-safe against running calls.
bool set_simd_enabled(bool on) noexcept;

}  // namespace multigather::detail::cpu
