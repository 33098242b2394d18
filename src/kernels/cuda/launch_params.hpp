// Internal: what one launch of the CUDA gather kernel needs, derived on the host from a
// normalized GatherPlan (plan/plan.hpp). Shared by the host planner (launch_params.cpp) and the
// kernel (gather_kernel.cu); plain data, no CUDA types, so it is unit-tested without a GPU.
//
// The kernel family sees every gather as ROWS: one row per lookup, a run of `row_units`
// consecutive units of `unit_bytes` bytes that is contiguous in both input and output.
//  - row/block path: the plan's innermost dimension is contiguous in input and output and does
//    not move the indices (an embedding row, a mid-axis block): a row is that whole block, and
//    units are as wide as alignment allows (16-byte vectors for aligned float32 rows).
//  - element path: anything else (GatherElements, flat take, strided views): a row is one
//    element.
// Rows are cut into work items of `chunk_units` units; a group of 2^group_shift consecutive
// threads runs one item, each thread moving up to kUnitsPerThread units. Rows of a single unit
// (the element path, short blocks) go kUnitsPerThread rows to a thread instead, so that each
// thread keeps that many independent random reads in flight.
#pragma once

#include <cstddef>
#include <cstdint>

#include "multigather/gather.hpp"
#include "multigather/scatter.hpp"
#include "kernels/cuda/fast_divide.hpp"

namespace multigather::detail {

/// Units one thread moves per work item, and single-unit rows one thread moves (independent
/// loads in flight before the first store).
inline constexpr int kUnitsPerThread = 4;
/// Threads per CUDA block of the gather kernel.
inline constexpr int kThreadsPerBlock = 256;

struct CudaGatherParams {
  // Outer loop nest over rows (the plan's dimensions minus the row block), C order.
  int rank = 0;
  std::int64_t shape[kMaxRank] = {};
  FastDivide shape_divide[kMaxRank] = {};  // valid when offsets32
  std::int64_t input_strides[kMaxRank] = {};    // in units
  std::int64_t indices_strides[kMaxRank] = {};  // in index elements
  std::int64_t output_strides[kMaxRank] = {};   // in units

  // Coordinates: axis j reads indices[index_offset + j * coord_stride].
  int k = 0;
  std::int64_t axis_strides[kMaxRank] = {};  // in units
  std::int64_t axis_sizes[kMaxRank] = {};
  std::int64_t coord_stride = 0;

  std::int64_t rows = 0;
  std::int64_t row_units = 0;
  std::int64_t chunk_units = 0;
  std::int64_t chunks_per_row = 1;
  FastDivide chunks_divide;  // valid when offsets32
  std::int64_t items = 0;    // rows * chunks_per_row
  int group_shift = 0;       // log2(threads per item)
  int rows_per_thread = 1;   // kUnitsPerThread for rows of one unit, else 1
  int unit_bytes = 1;        // 1, 2, 4, 8 or 16
  /// Every offset, row and item count fits in int32 (the kernel then uses 32-bit arithmetic
  /// and multiply-high division).
  bool offsets32 = false;
  bool block_path = false;   // informational: the row is the plan's inner block

  DType index_dtype = DType::kInt64;
  IndexMode index_mode = IndexMode::kError;
  bool negative_indices = true;
  /// The fill element repeated to 16 bytes; unit u of a row is fill_pattern unit
  /// u mod (16 / unit_bytes).
  alignas(16) unsigned char fill_pattern[16] = {};

  const void* input = nullptr;
  const void* indices = nullptr;
  void* output = nullptr;
  std::uint32_t* error_flag = nullptr;  // may be null
};

/// Blocks per multiprocessor at most (then the kernel's loops stride over the grid).
inline constexpr int kMaxBlocksPerMultiprocessor = 64;
/// The launch's cap in waves: blocks per multiprocessor = this many times the blocks a
/// multiprocessor holds at once for the kernel variant (its occupancy), at most
/// kMaxBlocksPerMultiprocessor.
inline constexpr int kWavesPerLaunch = 8;

/// The grid of one launch (pure): one thread group per work item when that needs at most
/// `blocks_per_multiprocessor` blocks of kThreadsPerBlock per multiprocessor, else that many
/// (a grid-stride loop covers the rest); at least one block. A `multiprocessors` under 1 counts
/// as 1. gather_kernel.cu launches exactly this; the host tests run the same grid.
std::int64_t launch_blocks(const CudaGatherParams& params, int multiprocessors,
                           int blocks_per_multiprocessor = kMaxBlocksPerMultiprocessor) noexcept;

struct GatherPlan;

/// Derives the launch of `plan` (pure: no CUDA call). `plan.numel` must be > 0.
/// Rows, their unit and the row/element choice are the plan's (kind, block, lookup_rank,
/// lookups, unit_bytes). `unit_bytes` 0: the plan's unit_bytes (the widest unit alignment
/// allows); else that unit (the scatter's: one element, whose alignment the caller has checked).
void make_cuda_params(const GatherPlan& plan, CudaGatherParams* params, int unit_bytes = 0) noexcept;

/// A scatter launch (scatter_rows.hpp): the gather that reads the scatter's targets, in element
/// units, plus the sort keys' range and the scratch arrays.
struct CudaScatterParams {
  CudaGatherParams rows;          // unit = element; input = scatter output, output = updates
  std::int64_t target_bias = 0;   // added to a target offset (elements) to make a key >= 0
  int key_shift = 0;              // key = (offset + bias) >> key_shift: every row's offset is a
                                  // multiple of 2^key_shift (the strides' common power of two)
  int key_bits = 1;               // keys (and kDropped's low bits) fit in this many bits
  bool include_input = true;
  /// The reduction's identity element (atomic mode, include_input = false): its first
  /// element_size bytes.
  alignas(16) unsigned char identity[16] = {};
  void* keys = nullptr;    // rows.rows entries of Key (std::uint32_t when rows.offsets32, else 64)
  void* values = nullptr;  // rows.rows entries of Off: the updates row's offset (elements)
};

/// The fill that starts a scatter's output from a host constant (cuda_api.cpp: an input that is
/// ONE element in host memory broadcast to the output, as a segment op's identity; scatter_rows.hpp's
/// fill_thread): `units` units of `unit_bytes` at `out`, each the first unit_bytes of `pattern`
/// (the element repeated).
struct CudaFillParams {
  void* out = nullptr;
  std::int64_t units = 0;
  int unit_bytes = 1;  // 1, 2, 4, 8 or 16
  alignas(16) unsigned char pattern[16] = {};
};

/// Plans the fill of `count` elements of `element_bytes` (1, 2, 4, 8 or 16) at `out` with
/// `element`'s bytes (pure: no CUDA call; the element is read here, on the host): the widest unit
/// that is a multiple of the element and divides both the address and the byte count.
void make_cuda_fill_params(void* out, std::int64_t count, std::size_t element_bytes, const void* element,
                           CudaFillParams* params) noexcept;

struct ValidatedScatter;

/// Derives the launch of a validated scatter into `output` (pure: no CUDA call). It is planned
/// as the gather that reads its targets (plan/scatter_plan.hpp: input = the scatter's output, output =
/// the updates broadcast to G), in element units; the identity is the reduction's
/// (combine::identity_bytes). G must be non-empty. The CUDA API and the host tests both plan so.
void make_cuda_scatter_params(const MutableTensorView& output, const TensorView& indices,
                              const ValidatedScatter& call, const ScatterOptions& options,
                              CudaScatterParams* params) noexcept;

/// The grid of the key kernel (pure): one thread per row up to the launch_blocks cap.
std::int64_t scatter_key_blocks(const CudaScatterParams& params, int multiprocessors,
                                int blocks_per_multiprocessor = kMaxBlocksPerMultiprocessor) noexcept;

}  // namespace multigather::detail
