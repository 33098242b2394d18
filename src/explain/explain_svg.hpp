// Internal: what the files of explain's pictures share (not installed). explain_svg.cpp holds
// the entry points (trace_lowering, position_indices, explain_svg); explain_svg_canvas.cpp the
// primitives declared here (C-order positions, element text, colours, the grid layout, the SVG
// canvas, the captions); explain_svg_draw.cpp the pictures themselves (draw, draw_scatter).
#pragma once

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "multigather/lowering.hpp"
#include "multigather/registry.hpp"

namespace multigather::detail::svg {

std::string esc(std::string_view text);

Dims unravel(std::int64_t flat, const Dims& shape);
std::int64_t ravel(const Dims& pos, const Dims& shape);
std::int64_t dot(const Dims& pos, const Dims& strides);

// One element at `p` as short text (numpy-like: "3", "2.5", "True", "1+2j").
std::string element_str(const std::byte* p, DType t);

// A light colour per input cell: hue steps of 137 degrees (near the golden angle), so
// neighbouring positions differ, in HSL(h, 65%, 80%) converted to #rrggbb.
std::string cell_colour(std::int64_t k);

// Dark colours for the chosen lookups' arrows and badges.
inline const char* const kLinkColours[] = {"#c0392b", "#1f5fa8", "#1e8449", "#7d3c98", "#a04000",
                                           "#117a65", "#b7950b", "#34495e", "#cb4335", "#2874a6",
                                           "#6c3483", "#935116"};
constexpr int kLinkColourCount = 12;

std::string num(double v);  // fixed precision: deterministic text

constexpr double kCharWidth = 6.7;  // 11px monospace advance (DejaVu Sans Mono: 0.602 em)
constexpr double kCellHeight = 22;

// Where the cells of one tensor go: numpy's print layout. The last dimension runs across, the
// one before it down; each higher dimension stacks blocks downwards with a gap that grows by
// 8 px per level (numpy's growing blank lines).
struct Grid {
  Dims shape;
  double x0 = 0, y0 = 0, cw = 30, ch = kCellHeight, width = 0, height = 0;
  std::vector<double> ystride;

  void layout(const Dims& s, double cell_width);
  // Top-left corner of the cell at row-major position `flat`.
  std::pair<double, double> at(std::int64_t flat) const;
};

double text_width(const std::string& s);

struct Svg {
  std::ostringstream body;
  void text(double x, double y, const std::string& s, const std::string& extra = "");
};

// "axis: d1; broadcast: d2 (1 -> 2)" for one operand of the core call.
std::string dims_note(const Lowering& l, bool input);

using Caption = std::pair<std::string, std::string>;  // (text, style)

constexpr double kMargin = 20, kGap = 70, kCaptionLine = 17, kTitleHeight = 34;

// The element offset of core view element `core` (C order in view.shape) in the storage that
// starts at `base` (a framework operand or a copy the lowering owns); -1 when base is null.
std::int64_t storage_offset(const TensorView& view, const void* base, std::int64_t core);

const std::byte* element_at(const TensorView& view, std::int64_t core);

double cell_width(const std::vector<std::string>& labels, double extra = 0);

// The labels of the indices grids: the actual view's values, the logical cells' coordinates.
struct IndexLabels {
  std::vector<std::string> actual, logical;
};
IndexLabels index_labels(const Lowering& l);

struct Column {
  Grid* grid;
  std::string title, note;
};

// Where the grids start: below the captions and the grid titles.
double grids_top(const std::vector<Caption>& captions);

// Places the columns left to right; returns the picture's width so far and the tallest grid.
std::pair<double, double> place_columns(std::vector<Column>& columns, double top, const std::vector<Caption>& captions);

// The parts of a picture, written in this order: cells, arrows, badges, legend.
struct Canvas {
  Svg out;
  std::ostringstream arrows, badges, legend;

  void titles(const std::vector<Column>& columns, double top);
  void rect(const Grid& g, std::int64_t e, const std::string& fill, Resolution res, const std::string& attrs);
  void label(const Grid& g, std::int64_t e, const std::string& t, const std::string& extra = "");
  void badge(const Grid& g, std::int64_t e, int number, const char* colour, int slot);
  // A solid arrow (the data) or a dashed one (an index), ending at (x2, y2).
  void link(const char* cls, std::int64_t output, double x1, double y1, double x2, double y2, const char* colour,
            bool dashed, std::size_t m);
  // Dashed arrows from the indices cells that gave t's coordinates to (tx, ty), numbered badges
  // on those cells (`slots`: the badges each indices cell has so far).
  void index_links(const Grid& gidx, const CellTrace& t, std::int64_t output, double tx, double ty, const char* colour,
                   std::size_t m, std::vector<int>& slots);
  // One legend row: a sample cell per resolution (in range, negative, clamped, wrapped, then
  // `last`: filled for gathers, dropped for scatters), then `note`; returns the row's width.
  double resolution_legend(double y, Resolution last, const char* last_text, const std::string& note);
  // The per-dimension table from y on; returns the y after it and widens `width`.
  double table(const Lowering& l, double y, double* width);
  std::string finish(const std::string& title, const std::vector<Caption>& captions, double width, double height,
                     const std::string& extra_defs) const;
};

// The caption that says what the cells show.
std::string shown_caption(const Lowering& l, const OpSpec& op, bool input_values, bool indices_given);

// "op(input [3,4] float32, indices [2] int64, ...; attrs)  ->  output [..]" (updates: scatters).
std::string call_caption(const Lowering& l, const OpSpec& op, const TensorView& fw_input, const TensorView& fw_indices,
                         const TensorView* fw_updates);

std::string index_policy(const Lowering& l);

// ---- The pictures (explain_svg_draw.cpp) ------------------------------------------------------

// A gather's picture: input, output and indices grids, arrows for the chosen output cells.
std::string draw(const Lowering& l, const TensorView& fw_input, const TensorView& fw_indices,
                 bool input_values, bool indices_given, const std::vector<CellTrace>& cells,
                 const std::vector<std::int64_t>& chosen_outputs);

// A scatter's picture (a scatter op, or a segment op whose data are the updates): input,
// updates, output and indices grids, arrows for the chosen positions of G.
std::string draw_scatter(const Lowering& l, const TensorView& fw_input, const TensorView& fw_indices,
                         const TensorView& fw_updates, bool input_values, bool indices_given, bool updates_given,
                         const std::vector<CellTrace>& cells, const std::vector<std::int64_t>& chosen);

}  // namespace multigather::detail::svg
