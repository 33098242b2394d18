// multigather/lowering.hpp: step 1 of the one pipeline, lower(op, attributes, operands).
//
//     lower_op(op, input, indices, attributes) -> Lowering -> execute(Lowering, output, context)
//
// Every framework gather (onnx.Gather, torch.gather, tf.gather_nd, stablehlo.gather, ...) and
// the core operator itself (gather_multiaxis: the identity lowering) is a LOWERING: a pure
// function from (input view, indices view, typed attributes) to one validated call of
// gather_multiaxis (input view, indices view, axes, options, inferred shape) plus the
// framework's output shape and the strides that place the core output inside it. Lowerings
// reshape and slice views; they copy data only where an op's notes say so (merging
// non-contiguous dimensions, StableHLO windows). Shapes and dtypes alone suffice (null data
// pointers): that is shape inference and `explain`. Step 2, execute, is multigather/execute.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "multigather/gather.hpp"
#include "multigather/index_error_context.hpp"
#include "multigather/registry.hpp"
#include "multigather/scatter.hpp"

namespace multigather {

/// Where a call's operands live, and so which engine runs it.
enum class Device : std::uint8_t {
  kAuto = 0,  // execute: CUDA when the operands are CUDA memory (CUDA builds), else CPU
  kCPU = 1,
  kCUDA = 2,
};
std::string_view device_name(Device device) noexcept;  // "auto", "cpu", "cuda"

/// The result of lowering one op call onto gather_multiaxis (or, for a scatter op, onto
/// scatter_multiaxis): made once per call, it carries the validated core shape, so execute
/// infers nothing again.
///
/// A scatter's Lowering reads the same fields with these meanings: `input`, `indices`, `axes`
/// and `options` are the core scatter's (its index_mode may be drop); `shape` is G, the shape
/// of the gather that reads the targets; `updates` broadcasts to G; `core_output_shape` is the
/// core input's shape (a scatter's output has its input's shape), `output_shape` the framework's
/// output shape, `core_output_strides` the core output's place inside it.
/// The updates of a segment op that GATHERS them from a table (torch.nn.functional.embedding_bag;
/// docs/spec.md section 6): core update row n is row rows[n] of `table`, times scale[n] where
/// scale has data (per_sample_weights). The update rows of segment (bag) b are [bag_starts[b],
/// bag_starts[b+1]); a row with rows[n] == skip_row (padding_idx) takes no part (its core index
/// is dropped). execute reduces each bag straight from the table: the gathered rows are never
/// written. The lowering checked every rows[n] against the table (null without index data).
/// The core indices (each update row's bag) are shapes only: nothing reads them (bag_of_rows
/// makes them where a picture needs them).
struct GatheredRows {
  GatheredRows() = default;
  GatheredRows(const GatheredRows&) = delete;  // rows may point into owned_rows
  GatheredRows& operator=(const GatheredRows&) = delete;

  TensorView table;                      // [V, D] (the framework's weight)
  /// [N]: the framework's ids read in place where they are C-ordered int64, else owned_rows.
  const std::int64_t* rows = nullptr;
  std::vector<std::int64_t> owned_rows;  // the ids as int64 in C order (int32 or strided ids)
  std::vector<std::int64_t> bag_starts;  // [B + 1]; bag_starts[B] = N
  TensorView scale;                      // [N] of table's dtype, or no data
  std::shared_ptr<Tensor> owned_scale;   // scale's copy when the framework's was not a vector view
  std::int64_t skip_row = -1;
  /// On a CUDA device the lowering reads nothing: rows and bag_starts stay empty, and the CUDA
  /// engine reads the framework's ids (input, [N] or [B, L]) and offsets ([K], no data for a 2-D
  /// input) itself, into B bags (kernels/gathered_bags.hpp). A failed check there is worded by
  /// check_values (the CPU lowering's checks) from host copies of ids and offsets.
  TensorView ids;
  TensorView offsets;
  bool include_last_offset = false;
  std::int64_t bags = 0;
  std::function<Status(const TensorView& ids, const TensorView* offsets)> check_values;
};

/// Each update row's bag (B for a row in no bag or equal to skip_row): the core scatter's
/// indices, which the fused kernel never needs. Empty without index data.
std::vector<std::int64_t> bag_of_rows(const GatheredRows& g);

/// Segment ids that the ENGINE computes from per-row boundaries (a lowering of CUDA operands:
/// lowerings never read device memory): torch.segment_reduce's lengths or offsets,
/// torch_scatter.segment_csr's indptr. The core indices are then a view of shape [batch.., n]
/// with no data; execute and the VJPs compute the ids first, on the operands' engine
/// (kernels/segment_ids.hpp: the same passes the CPU lowering runs on host values), and a bad
/// boundary is the CPU lowering's error, before anything is written. docs/spec.md section 6.
struct SegmentBoundaries {
  TensorView bounds;        // the framework's [batch'.., K] (batch'[d]: batch[d], or 1: shared)
  std::string name;         // "lengths", "offsets", "indptr" (the messages' word)
  bool offsets = false;     // offsets (K = S + 1), else lengths (K = S)
  bool check_sum = false;   // lengths must add up to n (torch.segment_reduce without unsafe)
  Dims batch;               // the data's sizes before the axis
  std::int64_t n = 0;       // the data's rows along the axis
  std::int64_t segments = 0;  // S
};

/// An elementwise step on a scatter's updates that the lowering DESCRIBES and the engines run
/// (CPU and CUDA alike; kernels/updates_step.hpp) on the core updates view before the combine,
/// into a temporary: torch.index_add's alpha (kScale), the negation of jax's .at[].subtract,
/// tf.tensor_scatter_nd_sub and Core ML's mode "sub" (kNegate). Lowering::updates stays a view
/// of the framework's updates, so such a lowering is a function of the operands' layouts (kept
/// by the surfaces' lowering caches), a partitioner may split the updates, and execute_vjp
/// gives the updates' cotangent through the same step (alpha * or - the gathered grad_output).
struct UpdatesStep {
  enum class Kind : std::uint8_t { kNone = 0, kScale = 1, kNegate = 2 };
  Kind kind = Kind::kNone;
  /// kScale: the factor (integer dtypes take it truncated toward zero, PyTorch's rule).
  Scalar factor = Scalar::from_int(1);
};

struct Lowering {
  std::string op;
  const OpSpec* spec = nullptr;  // the registry row
  OpKind kind = OpKind::kGather;  // the core operator: kScatter for a scatter or segment op
  AttributeValues attributes;    // resolved, in spec order (explain prints them)
  Device device = Device::kCPU;  // where the operands live (lowerings never read device memory)
  TensorView input;    // the core's input view (a reshape/slice of the framework input)
  TensorView indices;  // the core's indices view (actual shape; coordinates folded last)
  std::vector<std::int64_t> axes;
  GatherOptions options;
  GatherShape shape;  // infer_shape(input, indices, axes), computed once
  Dims logical_indices_shape;
  Dims core_output_shape;
  Dims output_shape;  // the framework's output shape
  /// Strides (elements) of the core output view inside a C-contiguous buffer of output_shape.
  Dims core_output_strides;
  /// Copies made by the lowering (null when none); indices/input point into them.
  std::shared_ptr<Tensor> owned_indices;
  std::shared_ptr<Tensor> owned_input;
  std::vector<std::string> notes;  // printed by explain (copies made, policies chosen)
  /// The core indices are COMPUTED from the framework's (StableHLO windows: a clamped start plus
  /// the window's iota, with the sizes of these operands), not a view of them: set from shapes
  /// alone too, so that a partitioner knows that the index values depend on the input's size.
  bool indices_computed = false;
  /// The core input is constant static storage, not a view of the operands (a segment op's
  /// identity, tf.scatter_nd's zeros: one element broadcast): it stays where it is when the
  /// lowering moves to new operands (move_lowering), a lift gives it stride 0 along the batch,
  /// and the framework's input (if any) takes no part in the result (its gradient is zero).
  bool input_is_constant = false;
  /// The lowering read index VALUES (an output size taken from them, or a check the core's index
  /// modes cannot express, as tf.math.unsorted_segment_*'s): it is not a function of the
  /// operands' layouts alone, so no surface keeps it for another call.
  bool reads_index_values = false;
  IndexErrorContext index_errors;
  // Scatter ops only:
  TensorView updates;  // the core's updates view (rank r; each dimension G's size or 1)
  Reduction reduction = Reduction::kNone;
  bool include_input = true;
  std::shared_ptr<Tensor> owned_updates;  // a copy made by the lowering (a scalar value)
  /// The core updates are COMPUTED from the framework's, not a view of them: set from shapes
  /// alone too, so that a transformation knows before running that no gradient flows to the
  /// framework's updates through a view.
  bool updates_computed = false;
  /// A mean (torch.scatter_reduce reduce = "mean"): the core scatter adds (reduction add), then
  /// execute divides each element that updates reached by their count (+1 when include_input),
  /// a second scatter of ones through the same indices; integers by floor division.
  bool mean_by_count = false;
  /// With mean_by_count: divide by the square root of the count instead (tf.math.
  /// unsorted_segment_sqrt_n; floating dtypes only).
  bool sqrt_count = false;
  /// A segment max / min whose gradient goes to the FIRST data element (row-major) equal to its
  /// segment's result, not shared among ties (torch_scatter's rule: its arg output's element).
  bool gradient_to_first_tie = false;
  /// float16 / bfloat16 adds and products combine in float32 and round once per element, on the
  /// CPU engine (ScatterOptions::wide_accumulator): the scatter of a scatter row, and the
  /// scatter-add of a gather row's gradient. Set by the rows whose framework accumulates so
  /// (PyTorch's CPU scatter_add / scatter_reduce / scatter(reduce=) and index_add on rank >= 2
  /// with alpha 1, and so the gradients of torch.gather, take_along_dim and index_select on
  /// rank >= 2; torch_scatter's sum and mean, which call scatter_add_). A mean divides the
  /// rounded sum in the dtype, as those frameworks do. docs/spec.md section 5.
  bool wide_accumulator = false;
  /// A partial write (ONNX Runtime / torch: an index smaller than the data on a dimension that
  /// is not scattered): the core input is a leading part of the framework's input, and the
  /// output starts as a copy of the WHOLE framework input `scatter_base` (output_shape), into
  /// whose leading part (core_output_strides) the core scatters. Unset (rank 0, no data) else.
  bool has_scatter_base = false;
  TensorView scatter_base;
  /// A segment op whose updates are gathered rows (GatheredRows; null: updates is a view). The
  /// core updates view then has data null: only its shape says what the scatter combines.
  std::shared_ptr<const GatheredRows> gathered;
  /// The engines' step on the updates view (none: the view is scattered as it is).
  UpdatesStep updates_step;
  /// The core indices' values, computed by the engine (null: l.indices has them).
  std::shared_ptr<const SegmentBoundaries> segment_ids;
  /// The core scatter's options (reduction, index policy, include_input, threads).
  ScatterOptions scatter_options() const noexcept {
    ScatterOptions o;
    o.reduction = reduction;
    o.index_mode = options.index_mode;
    o.negative_indices = options.negative_indices;
    o.include_input = include_input;
    o.num_threads = options.num_threads;
    o.wide_accumulator = wide_accumulator;
    return o;
  }
};

/// Lowers a call of registry op `name` (data pointers may be null: shapes and dtypes alone
/// suffice). `device` says where the data lives (kAuto: CUDA when an operand is CUDA device or
/// managed memory, in CUDA builds; else CPU): a lowering that would have to read or copy the
/// data on the host (StableHLO windows, non-contiguous flattening)
/// fails on kCUDA with an InvalidArgument saying so, instead of touching device memory.
/// Errors, all prefixed with the op name and worded by the framework's rule:
///  - InvalidArgument: unknown op or attribute, a bad attribute value, ranks/shapes/axes/batch
///    dims the framework rejects ("onnx.GatherND: batch_dims = 1: data.shape[0] = 2 and
///    indices.shape[0] = 3 must be equal (batch dimensions are not broadcast)");
///  - TypeError: an index dtype the framework does not accept, an attribute of the wrong type.
Status lower_op(std::string_view name, const TensorView& input, const TensorView& indices,
                const Attributes& attrs, Lowering* out, Device device = Device::kAuto);

/// Lowers a call of scatter op `name` (spec->kind == OpKind::kScatter) with the framework's
/// `updates`. The same errors as the gather form; a gather op called with updates, or a scatter
/// op called without (the form above), is an InvalidArgument naming the op and what it takes.
Status lower_op(std::string_view name, const TensorView& input, const TensorView& indices,
                const TensorView& updates, const Attributes& attrs, Lowering* out,
                Device device = Device::kAuto);

/// Where a Lowering's views sit in its operands, so that a surface can keep it for the next call
/// with the same op, shapes, strides, dtypes, device and attributes (lower_op is a pure function
/// of those; only the data pointers change): byte offsets of the lowered input, indices, index-
/// error indices and updates from the operands' data.
struct LoweringAnchors {
  std::ptrdiff_t input = 0, indices = 0, error_indices = 0, updates = 0;
  bool has_error_indices = false;
  bool constant_input = false;  // l.input_is_constant: the input view stays
  bool updates_in_input = false;  // a segment op: the core updates are a view of the framework input
};

/// The anchors of `l`, lowered from these operands (`updates`: a scatter op's, else null), or
/// false when `l` is not a function of the key alone: it copied data (a flattened operand, a
/// scalar value), it read index values (reads_index_values), it writes over a base (a
/// partial scatter), an operand or its output is
/// empty (lowerings read index values then, for the framework's errors), or a view lies
/// outside its operand's bytes.
bool lowering_anchors(const Lowering& l, const TensorView& input, const TensorView& indices,
                      const TensorView* updates, LoweringAnchors* anchors) noexcept;

/// `l` (anchored by `anchors`) moved to operands of the same shapes, strides and dtypes at
/// `input`, `indices` and `updates` (null for a gather).
void move_lowering(Lowering* l, const LoweringAnchors& anchors, const void* input, const void* indices,
                   const void* updates) noexcept;

/// The text of `multigather explain OP`, built from the Lowering of shapes and dtypes alone:
/// the framework's signature, formula and source, the attributes, the lowered core call (views,
/// axes, index policy), the per-dimension table (which dimension is an axis, which operand
/// broadcasts), the formula written out for these shapes, and the framework output shape.
Status explain_op(std::string_view name, const Dims& input_shape, DType input_dtype,
                  const Dims& indices_shape, DType indices_dtype, const Attributes& attrs,
                  std::string* text);
/// explain_op for a scatter op, with the updates' shape (its dtype is the input's).
Status explain_op(std::string_view name, const Dims& input_shape, DType input_dtype,
                  const Dims& indices_shape, DType indices_dtype, const Dims& updates_shape,
                  const Attributes& attrs, std::string* text);
/// The same text for an existing lowering (input/indices: the framework's operands).
std::string explain_lowering(const Lowering& lowering, const TensorView& input,
                             const TensorView& indices);

// ---- Pictures: what explain --svg draws -------------------------------------------------------

/// How one coordinate of one lookup was resolved (docs/spec.md section 1, resolve(v, n)).
enum class Resolution : std::uint8_t {
  kInRange = 0,     // v in [0, n), taken as is
  kNegative = 1,    // v < 0 became v + n (negative_indices), then in range
  kClamped = 2,     // index_mode=clamp moved v into [0, n-1]
  kWrapped = 3,     // index_mode=wrap: v mod n differs from v
  kFilled = 4,      // index_mode=fill: v out of range, the element is fill_value
  kDropped = 5,     // index_mode=drop (scatters): v out of range, the update is skipped
};
std::string_view resolution_name(Resolution r) noexcept;  // "in-range", "negative", ..., "dropped"

/// One element of a lowered call's core output: which core input element it takes, and which
/// core indices elements gave its coordinates. Positions are row-major (C order) positions in
/// the core views of the Lowering (l.input, l.indices actual shape, l.core_output_shape).
/// For a scatter's Lowering the same trace is the mapping "update position o -> target": `output`
/// is the position o in G (the gather shape; l.updates broadcasts to it), `input` the core input
/// position the update combines into (-1: dropped), `framework_output` that target's position in
/// the framework output (C order; -1 when dropped).
struct CellTrace {
  std::int64_t output = 0;            // position in the core output (a scatter: in G)
  std::int64_t framework_output = 0;  // its position in the framework output (C order)
  std::int64_t input = -1;            // position in the core input view; -1: filled (or dropped)
  std::vector<std::int64_t> indices;  // per coordinate j: position in the core indices view
  std::vector<std::int64_t> values;   // per coordinate j: the index value read (saturated to int64)
  std::vector<Resolution> resolutions;  // per coordinate j
  Resolution resolution = Resolution::kInRange;  // the cell's: the highest of its coordinates'
};

/// The lookup of every core output element of `lowering`, in core output order: the SPEC
/// formula (gather.hpp) applied to the lowering's views, reading index values from host memory.
/// It is the one function behind the pictures; the tests check it against the kernel's result.
/// Errors: InvalidArgument when the indices data is null and k > 0 (shapes alone do not say
/// where elements go) or lives on a CUDA device; OutOfRange, in the framework's words, for an
/// index out of range under index_mode=error (the call itself would fail the same way);
/// InvalidArgument for more than `max_cells` output elements.
Status trace_lowering(const Lowering& lowering, std::vector<CellTrace>* cells,
                      std::int64_t max_cells = 1 << 20);

/// What explain_svg draws and how much.
struct SvgOptions {
  /// Largest number of cells drawn for any one of input, indices and output.
  std::int64_t max_cells = 400;
  /// Framework output positions (C order) whose lookups are drawn with arrows (from the input
  /// cell and from each indices cell that gave a coordinate). Empty: every cell when the output
  /// has at most 6 cells, else 4 spread over the output (first, 1/3, 2/3, last). A scatter's
  /// picture reads them as positions in G (one per update; the same default, plus the first
  /// two positions that reach one output cell).
  std::vector<std::int64_t> cells;
};

/// The indices that a picture of shapes alone uses ("positions mode"): a C-contiguous tensor of
/// `indices_shape` and `indices_dtype` in which each element that indexes a dimension of size n
/// holds n-1, n-2, ..., 0, n-1, ... (counting the elements of that coordinate in C order), so
/// every index is in range for every framework. Errors: those of lower_op.
Status position_indices(std::string_view name, const Dims& input_shape, DType input_dtype,
                        const Dims& indices_shape, DType indices_dtype, const Attributes& attrs,
                        Tensor* indices);
/// position_indices for a scatter op, with its updates' shape (their dtype is the input's).
Status position_indices(std::string_view name, const Dims& input_shape, DType input_dtype,
                        const Dims& indices_shape, DType indices_dtype, const Dims& updates_shape,
                        const Attributes& attrs, Tensor* indices);

/// `multigather explain OP --svg FILE`: an SVG picture (UTF-8 text, no external resources,
/// byte-for-byte deterministic) of how the op moves data, drawn from the Lowering: the core
/// input view, the indices (actual and logical shape) and the core output as grids of cells
/// laid out the way numpy prints arrays (last dimension across, the one before down, higher
/// ones as blocks stacked with growing gaps); every output cell coloured like the input cell
/// it takes; chosen cells (SvgOptions::cells) linked by arrows to their input cell and to the
/// indices cells that gave each coordinate; broadcast dimensions and clamped, wrapped, negative
/// and filled lookups marked; the framework call, the lowered gather_multiaxis call and the
/// formula as captions.
///
/// `input` / `indices` are the framework's operands (host memory). Null data means shapes only:
/// a null input draws positions (each input cell labelled with its C-order position, as if the
/// input were np.arange), null indices are position_indices(). Non-null data draws values.
/// Every output cell carries data-output, data-input (the element offset in the framework
/// input's storage, -1 for a filled cell), data-indices and data-resolution attributes, so
/// that tests read the mapping the picture encodes.
/// Errors: those of lower_op and trace_lowering; InvalidArgument naming the tensor for a grid
/// of more than max_cells cells ("the output has 4096 cells; pictures are drawn up to 400
/// cells") and for a chosen cell outside the output.
Status explain_svg(std::string_view name, const TensorView& input, const TensorView& indices,
                   const Attributes& attrs, const SvgOptions& options, std::string* svg);

/// `multigather explain SCATTER_OP --svg FILE`: the picture of a scatter op (spec->kind ==
/// OpKind::kScatter), drawn from its Lowering and the same trace_lowering (the mapping "update
/// position o of G -> target"): grids of the core input (the destination), the core updates view
/// (broadcast to G), the output and the indices (actual and logical); every output cell that
/// updates reach coloured like the last update reaching it and labelled with how they combine
/// (reduction none: the winner, the last in row-major order of G; add/mul/min/max: the terms
/// in combine order, from the input cell unless include_input=false), cells no update reaches
/// labelled as kept from the input; cells reached more than once marked as duplicates; dropped
/// updates (index_mode=drop) hatched; negative, clamped and wrapped resolutions marked as for
/// gathers; chosen positions of G (SvgOptions::cells: C-order positions in G; default all when
/// G has at most 6, else 4 spread out plus the first duplicate pair) linked by arrows from the
/// update cell and the indices cells to the target; captions: the framework call, the lowered
/// scatter_multiaxis call (reduction, axes, index mode), the formula.
///
/// `updates` with null data draws positions ("u<offset>": its C-order position); input and
/// indices as for gathers. Every output cell carries data-output (framework output position),
/// data-input (the framework input element it starts from), data-updates (the positions in G
/// reaching it, in combine order), data-update-cells (their cells in the updates grid, the core
/// updates view) and data-combine (kept, none, add, mul, min or max); input and update cells carry
/// data-value (their label); the <g id="scatter"> element carries data-reduction,
/// data-include-input and data-dropped (the dropped positions of G). A partial write (has_scatter_base)
/// draws the core's leading part; the rest of the output is the input, as the caption says.
/// Errors: those of explain_svg, with "the updates" / "the scatter shape G" for size limits.
Status explain_svg(std::string_view name, const TensorView& input, const TensorView& indices,
                   const TensorView& updates, const Attributes& attrs, const SvgOptions& options,
                   std::string* svg);

}  // namespace multigather
