// Internal: validation of a scatter_multiaxis call (docs/spec.md section 4). A scatter is
// planned as the gather that reads its targets: gather_multiaxis(output, indices, axes) visits,
// for every position o of G in row-major order, exactly the output element that o's update
// combines into. So the gather's validation gives G and the index rules, and make_plan (with
// the output as the gather's input and the updates, broadcast to G, as the gather's output)
// gives the normalized loop nest the scatter kernels walk.
#pragma once

#include "multigather/scatter.hpp"
#include "plan/plan.hpp"

namespace multigather::detail {

/// What validation establishes about a scatter call.
struct ValidatedScatter {
  ValidatedCall gather;     // the gather view of the call: G, dtypes, the negative rule
  TensorView updates;       // the caller's updates viewed with shape G (stride 0 where broadcast)
  Reduction reduction = Reduction::kNone;
  bool include_input = true;
};

/// The options of the gather that reads the scatter's targets: drop becomes fill (an
/// out-of-range lookup is flagged, never an error), the rest is copied.
GatherOptions gather_options_of(const ScatterOptions& options) noexcept;

/// Validates input, indices, updates, axes and options (everything but the output view and
/// the index values): every error of SPEC section 4 that needs no data. It is
/// check_scatter_options, infer_scatter_shape into call->gather.shape, check_scatter_operands.
Status validate_scatter_operands(const TensorView& input, const TensorView& indices,
                                 const TensorView& updates, std::span<const std::int64_t> axes,
                                 const ScatterOptions& options, ValidatedScatter* call) noexcept;

/// The options' part of validate_scatter_operands: index_mode (fill has no meaning for a scatter).
Status check_scatter_options(const ScatterOptions& options) noexcept;

/// The rest of validate_scatter_operands once call->gather.shape holds the scatter shape G (a
/// Lowering carries it, inferred when it was made: execute does not infer it again): dtypes,
/// reduction, extents, null data, and call->updates (the updates viewed with shape G).
Status check_scatter_operands(const TensorView& input, const TensorView& indices, const TensorView& updates,
                              const ScatterOptions& options, ValidatedScatter* call) noexcept;

/// Validates the output view against validated operands: input's shape, element size, extent,
/// null data, no self-overlap; it is `input` itself (in place) or does not overlap input; it
/// overlaps neither indices nor updates. `output_name` names it in messages ("output", "out").
Status validate_scatter_output(const MutableTensorView& output, const TensorView& input,
                               const TensorView& indices, const TensorView& updates,
                               const ValidatedScatter& call, std::string_view output_name) noexcept;

/// True when `output` is `input` itself (same data, dtype width, shape and strides): the scatter
/// runs in place and the copy of input is skipped.
bool scatters_in_place(const MutableTensorView& output, const TensorView& input) noexcept;

/// docs/spec.md section 5, "Accumulation of float16 and bfloat16": whether a scatter with these
/// options on `dtype` combines in float32 and rounds once (options.wide_accumulator, float16 /
/// bfloat16, a reduction that rounds: add, mul). The CPU engine and the reference kernel both
/// follow it.
bool accumulates_wide(const ScatterOptions& options, DType dtype) noexcept;

/// Runs a validated scatter (operands and output checked) on the CPU: first the index values
/// (error mode: the first out-of-range index, worded by the gather reference kernel, fails the
/// call before anything is written), then the copy of input into output (unless in place), then
/// the combine (the CPU engine, deterministic at any thread count).
/// `base` / `base_output` (a partial write, both or neither): step 2 copies `base` into
/// `base_output` (which holds `output`) instead of input into output, unless they are the same
/// view (in place).
/// keep_output_on_error false (an output allocated for this call, which the caller drops on
/// error): the index values are not checked in a pass of their own; the engine stops at the
/// first bad one, and the error is the same, but the output may hold partial data.
Status run_scatter_validated(const TensorView& input, const TensorView& indices,
                             const MutableTensorView& output, const ValidatedScatter& call,
                             const ScatterOptions& options, const TensorView* base = nullptr,
                             const MutableTensorView* base_output = nullptr,
                             bool keep_output_on_error = true) noexcept;

/// The reference: SPEC section 4 transcribed plainly (one thread, no plan). Same checks first.
Status reference_scatter(const TensorView& input, const TensorView& indices,
                         const MutableTensorView& output, const ValidatedScatter& call,
                         const ScatterOptions& options) noexcept;

}  // namespace multigather::detail
