// Pictures of a gather (multigather/lowering.hpp: trace_lowering, position_indices,
// explain_svg): `multigather explain OP --svg FILE` and multigather.explain(..., format="svg").
//
// Everything is drawn from the Lowering, the validated core call that execute runs: the grids
// are its input view, its indices view (actual and logical shape) and its core output; the links
// come from trace_lowering, the SPEC formula applied to those views (the tests check it against
// the kernel's own result). The SVG is plain text, written with fixed-precision numbers only,
// so the same call gives the same bytes everywhere (docs/gallery is compared byte for byte).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/index_resolve.hpp"
#include "core/odometer.hpp"
#include "core/index_value.hpp"
#include "explain/explain_text.hpp"
#include "frontends/recipes.hpp"
#include "plan/index_errors.hpp"

namespace multigather {
namespace {

// The one resolver's outcomes are explain's Resolution values, up to kWrapped.
static_assert(static_cast<int>(Resolution::kInRange) == static_cast<int>(detail::IndexResolution::kInRange));
static_assert(static_cast<int>(Resolution::kNegative) == static_cast<int>(detail::IndexResolution::kNegative));
static_assert(static_cast<int>(Resolution::kClamped) == static_cast<int>(detail::IndexResolution::kClamped));
static_assert(static_cast<int>(Resolution::kWrapped) == static_cast<int>(detail::IndexResolution::kWrapped));

using frontends::str;

std::string esc(std::string_view text) {
  std::string s;
  for (char ch : text) {
    switch (ch) {
      case '&': s += "&amp;"; break;
      case '<': s += "&lt;"; break;
      case '>': s += "&gt;"; break;
      case '"': s += "&quot;"; break;
      default: s += ch;
    }
  }
  return s;
}

Dims unravel(std::int64_t flat, const Dims& shape) {
  Dims pos = Dims::filled(shape.size(), 0);
  for (int d = shape.size() - 1; d >= 0; --d) {
    if (shape[d] > 0) {
      pos[d] = flat % shape[d];
      flat /= shape[d];
    }
  }
  return pos;
}

std::int64_t ravel(const Dims& pos, const Dims& shape) {
  std::int64_t flat = 0;
  for (int d = 0; d < shape.size(); ++d) flat = flat * shape[d] + pos[d];
  return flat;
}

std::int64_t dot(const Dims& pos, const Dims& strides) {
  std::int64_t off = 0;
  for (int d = 0; d < pos.size(); ++d) off += pos[d] * strides[d];
  return off;
}

std::int64_t saturate(__int128 v) {
  return v > INT64_MAX ? INT64_MAX : (v < INT64_MIN ? INT64_MIN : static_cast<std::int64_t>(v));
}

void write_index(std::byte* p, DType t, std::int64_t v) {
  detail::visit_index_type(t, [&]<class Index>() {
    const auto x = static_cast<Index>(v);
    std::memcpy(p, &x, sizeof x);
    return true;
  });
}

std::string float_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".";
  return s;
}

// One element at `p` as short text (numpy-like: "3", "2.5", "True", "1+2j").
std::string element_str(const std::byte* p, DType t) {
  __int128 iv = 0;
  if (detail::read_index(p, t, &iv)) return detail::index_text(iv);
  switch (t) {
    case DType::kBool: return *reinterpret_cast<const std::uint8_t*>(p) ? "True" : "False";
    case DType::kFloat16: { std::uint16_t b; std::memcpy(&b, p, 2); return float_str(half_to_float(b)); }
    case DType::kBFloat16: { std::uint16_t b; std::memcpy(&b, p, 2); return float_str(bfloat16_to_float(b)); }
    case DType::kFloat32: { float f; std::memcpy(&f, p, 4); return float_str(f); }
    case DType::kFloat64: { double f; std::memcpy(&f, p, 8); return float_str(f); }
    case DType::kComplex64: { float f[2]; std::memcpy(f, p, 8); return float_str(f[0]) + (f[1] < 0 ? "" : "+") + float_str(f[1]) + "j"; }
    case DType::kComplex128: { double f[2]; std::memcpy(f, p, 16); return float_str(f[0]) + (f[1] < 0 ? "" : "+") + float_str(f[1]) + "j"; }
    default: {
      char buf[8];
      std::snprintf(buf, sizeof buf, "0x%02x", static_cast<unsigned>(*reinterpret_cast<const std::uint8_t*>(p)));
      return buf;
    }
  }
}

// A light colour per input cell: hue steps of 137 degrees (near the golden angle), so
// neighbouring positions differ, in HSL(h, 65%, 80%) converted to #rrggbb.
std::string cell_colour(std::int64_t k) {
  const double h = static_cast<double>((k * 137) % 360) / 60.0, s = 0.65, l = 0.80;
  const double c = (1 - std::fabs(2 * l - 1)) * s, x = c * (1 - std::fabs(std::fmod(h, 2.0) - 1)), m = l - c / 2;
  double rgb[3] = {0, 0, 0};
  const int sector = static_cast<int>(h);
  const double table[6][3] = {{c, x, 0}, {x, c, 0}, {0, c, x}, {0, x, c}, {x, 0, c}, {c, 0, x}};
  for (int i = 0; i < 3; ++i) rgb[i] = table[sector % 6][i] + m;
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", static_cast<int>(std::lround(rgb[0] * 255)),
                static_cast<int>(std::lround(rgb[1] * 255)), static_cast<int>(std::lround(rgb[2] * 255)));
  return buf;
}

// Dark colours for the chosen lookups' arrows and badges.
const char* const kLinkColours[] = {"#c0392b", "#1f5fa8", "#1e8449", "#7d3c98", "#a04000",
                                    "#117a65", "#b7950b", "#34495e", "#cb4335", "#2874a6",
                                    "#6c3483", "#935116"};
constexpr int kLinkColourCount = 12;

struct Style {
  const char* stroke;
  const char* width;
  const char* dash;  // "" for solid
};
Style style_of(Resolution r) {
  switch (r) {
    case Resolution::kInRange: return {"#555555", "1", ""};
    case Resolution::kNegative: return {"#1f77b4", "2.5", "5,2"};
    case Resolution::kClamped: return {"#e67e00", "3", "7,3"};
    case Resolution::kWrapped: return {"#8e44ad", "3", "2,2"};
    case Resolution::kFilled: return {"#222222", "2", ""};
    case Resolution::kDropped: return {"#7f7f7f", "2.5", "1,2"};
  }
  return {"#555555", "1", ""};
}

std::string num(double v) {  // fixed precision: deterministic text
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

constexpr double kCharWidth = 6.7;  // 11px monospace advance (DejaVu Sans Mono: 0.602 em)
constexpr double kCellHeight = 22;

// Where the cells of one tensor go: numpy's print layout. The last dimension runs across, the
// one before it down; each higher dimension stacks blocks downwards with a gap that grows by
// 8 px per level (numpy's growing blank lines).
struct Grid {
  Dims shape;
  double x0 = 0, y0 = 0, cw = 30, ch = kCellHeight, width = 0, height = 0;
  std::vector<double> ystride;

  void layout(const Dims& s, double cell_width) {
    shape = s;
    cw = cell_width;
    const int r = s.size();
    ystride.assign(static_cast<std::size_t>(std::max(r, 1)), 0);
    width = (r >= 1 ? static_cast<double>(s[r - 1]) : 1) * cw;
    double h = (r >= 2 ? static_cast<double>(s[r - 2]) : 1) * ch;
    if (r >= 2) ystride[static_cast<std::size_t>(r - 2)] = ch;
    for (int d = r - 3; d >= 0; --d) {
      const double gap = 8.0 * (r - 2 - d);
      ystride[static_cast<std::size_t>(d)] = h + gap;
      h = s[d] == 0 ? 0 : static_cast<double>(s[d]) * (h + gap) - gap;
    }
    height = h;
    if (r >= 1 && s[r - 1] == 0) height = 0;
  }
  // Top-left corner of the cell at row-major position `flat`.
  std::pair<double, double> at(std::int64_t flat) const {
    const Dims p = unravel(flat, shape);
    const int r = shape.size();
    double x = x0, y = y0;
    if (r >= 1) x += static_cast<double>(p[r - 1]) * cw;
    for (int d = 0; d + 1 < r; ++d) y += static_cast<double>(p[d]) * ystride[static_cast<std::size_t>(d)];
    return {x, y};
  }
};

double text_width(const std::string& s) { return static_cast<double>(s.size()) * kCharWidth; }

struct Svg {
  std::ostringstream body;
  void text(double x, double y, const std::string& s, const std::string& extra = "") {
    body << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\"" << extra << ">" << esc(s) << "</text>\n";
  }
};

// "axis: d1; broadcast: d2 (1 -> 2)" for one operand of the core call.
std::string dims_note(const Lowering& l, bool input) {
  const GatherShape& s = l.shape;
  std::string axes, broadcast;
  for (int d = 0; d < s.output_shape.size(); ++d) {
    const auto u = static_cast<std::size_t>(d);
    if (s.is_axis[u]) axes += (axes.empty() ? "" : ",") + ("d" + str(d));
    const bool b = input ? s.input_broadcast[u] : s.indices_broadcast[u];
    if (b) broadcast += (broadcast.empty() ? "" : ", ") + ("d" + str(d) + " (1 -> " + str(s.output_shape[d]) + ")");
  }
  std::string note;
  if (input && !axes.empty()) note += "indexed: " + axes;
  if (!broadcast.empty()) note += (note.empty() ? "" : "; ") + std::string("broadcast: ") + broadcast;
  return note;
}

}  // namespace

std::string_view resolution_name(Resolution r) noexcept {
  switch (r) {
    case Resolution::kInRange: return "in-range";
    case Resolution::kNegative: return "negative";
    case Resolution::kClamped: return "clamped";
    case Resolution::kWrapped: return "wrapped";
    case Resolution::kFilled: return "filled";
    case Resolution::kDropped: return "dropped";
  }
  return "in-range";
}

Status trace_lowering(const Lowering& l, std::vector<CellTrace>* cells, std::int64_t max_cells) {
  const GatherShape& s = l.shape;
  const Dims& out_shape = s.output_shape;
  const Dims& in = l.input.shape;
  const Dims& L = s.logical_indices_shape;
  const int r = out_shape.size();
  const int k = static_cast<int>(s.axes.size());
  const int c = s.coordinate_size;
  cells->clear();
  if (s.output_numel > max_cells) {
    return InvalidArgument(l.op + ": the output has " + str(s.output_numel) +
                           " elements; traces are made up to " + str(max_cells));
  }
  if (s.output_numel == 0) return Status::Ok();
  if (k > 0 && l.indices.data == nullptr) {
    return InvalidArgument(l.op + ": the indices data is null: shapes alone do not say which input "
                           "element each output element takes (pass the indices, or use position_indices)");
  }
  if (k > 0 && l.device == Device::kCUDA) {
    return InvalidArgument(l.op + ": the indices are CUDA memory: traces read index values on the host");
  }
  const GatherOptions& o = l.options;
  if (o.index_mode == IndexMode::kError && k > 0) {
    MULTIGATHER_RETURN_IF_ERROR(detail::find_out_of_range(l, l.index_errors.indices));
  }
  const auto es = static_cast<std::int64_t>(element_size(l.indices.dtype));
  cells->reserve(static_cast<std::size_t>(s.output_numel));
  Dims pos = Dims::filled(r, 0);
  for (std::int64_t n = 0; n < s.output_numel; ++n) {
    CellTrace t;
    t.output = n;
    t.framework_output = dot(pos, l.core_output_strides);
    Dims i = Dims::filled(r, 0);
    for (int d = 0; d < r; ++d) {
      if (!s.is_axis[static_cast<std::size_t>(d)]) i[d] = in[d] == 1 ? 0 : pos[d];
    }
    bool filled = false;
    for (int j = 0; j < k; ++j) {
      const int d = static_cast<int>(s.axes[static_cast<std::size_t>(j)]);
      Dims q = Dims::filled(r, 0);
      for (int e = 0; e < r; ++e) q[e] = L[e] == 1 ? 0 : pos[e];
      q[r - 1] = q[r - 1] * c + j;
      __int128 v = 0;
      detail::read_index(static_cast<const std::byte*>(l.indices.data) + dot(q, l.indices.strides) * es,
                            l.indices.dtype, &v);
      t.indices.push_back(ravel(q, l.indices.shape));
      t.values.push_back(saturate(v));
      const std::int64_t size = in[d];
      std::int64_t position = 0;
      // The one resolver; its outcomes are explain's Resolution values (fill / drop: the mode's).
      const detail::IndexResolution how = detail::resolve_index_value(v, size, o.index_mode, o.negative_indices, &position);
      Resolution res = static_cast<Resolution>(how);
      if (how == detail::IndexResolution::kOutOfRange) {
        if (o.index_mode != IndexMode::kFill && o.index_mode != IndexMode::kDrop) {
          std::string p;
          for (int e = 0; e < r; ++e) p += (e ? "," : "") + str(q[e]);
          return OutOfRange(l.op + ": indices[" + p + "] = " + detail::index_text(v) +
                            " is out of range for axis " + str(d) + " of size " + str(size) +
                            " (the core call's indices view, index_mode=" +
                            std::string(index_mode_name(o.index_mode)) + ")");
        }
        res = o.index_mode == IndexMode::kFill ? Resolution::kFilled : Resolution::kDropped;
        filled = true;
      }
      t.resolutions.push_back(res);
      if (static_cast<int>(res) > static_cast<int>(t.resolution)) t.resolution = res;
      if (!filled) i[d] = position;
    }
    t.input = filled ? -1 : ravel(i, in);
    if (l.kind == OpKind::kScatter) {  // the target's place in the framework output
      t.framework_output = filled ? -1 : dot(i, l.core_output_strides);
    }
    cells->push_back(std::move(t));
    detail::next_position(pos, out_shape);
  }
  return Status::Ok();
}

namespace {

// position_indices of a gather (updates_shape null) or a scatter.
Status make_position_indices(std::string_view name, const Dims& input_shape, DType input_dtype,
                             const Dims& indices_shape, DType indices_dtype, const Dims* updates_shape,
                             const Attributes& attrs, Tensor* indices) {
  try {
    MULTIGATHER_RETURN_IF_ERROR(check_indices_dtype(indices_dtype));
    Tensor t(indices_dtype, indices_shape);
    if (t.nbytes() > 0) std::memset(t.data(), 0, t.nbytes());
    Lowering l;
    const TensorView in(nullptr, input_dtype, input_shape);
    MULTIGATHER_RETURN_IF_ERROR(updates_shape == nullptr
                                    ? lower_op(name, in, t.view(), attrs, &l)
                                    : lower_op(name, in, t.view(), TensorView(nullptr, input_dtype, *updates_shape), attrs, &l));
    auto* base = static_cast<std::byte*>(t.data());
    const auto es = static_cast<std::int64_t>(element_size(indices_dtype));
    const IndexErrorContext& ctx = l.index_errors;
    std::vector<std::int64_t> count(64, 0);
    const auto next = [&](std::size_t j, std::int64_t size) {
      if (j >= count.size()) count.resize(j + 1, 0);
      return size > 0 ? size - 1 - (count[j]++ % size) : 0;
    };
    if (!ctx.sizes.empty() && ctx.indices.data == t.data()) {
      // The framework's own view of its indices: element p indexes sizes[p[coordinate_dim]].
      const Dims& shape = t.shape();
      for (std::int64_t e = 0; e < t.numel(); ++e) {
        const Dims p = unravel(e, shape);
        const auto j = ctx.coordinate_dim < 0 ? std::size_t{0} : static_cast<std::size_t>(p[ctx.coordinate_dim]);
        if (j < ctx.sizes.size()) write_index(base + e * es, indices_dtype, next(j, ctx.sizes[j]));
      }
    } else if (!l.owned_indices && !l.shape.axes.empty() && l.indices.data != nullptr) {
      // Through the core view: element q gives coordinate q[-1] mod c of axis axes[j].
      const int c = l.shape.coordinate_size, r = l.indices.rank();
      for (std::int64_t e = 0; e < l.indices.numel(); ++e) {
        const Dims q = unravel(e, l.indices.shape);
        const auto j = static_cast<std::size_t>(q[r - 1] % c);
        const std::int64_t off = (static_cast<const std::byte*>(l.indices.data) - base) / es + dot(q, l.indices.strides);
        if (off < 0 || off >= t.numel()) continue;
        write_index(base + off * es, indices_dtype, next(j, l.input.shape[static_cast<int>(l.shape.axes[j])]));
      }
    }  // else (indices made by the lowering, e.g. StableHLO windows): zeros
    *indices = std::move(t);
    return Status::Ok();
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory while making the indices of a picture");
  }
}

}  // namespace

Status position_indices(std::string_view name, const Dims& input_shape, DType input_dtype,
                        const Dims& indices_shape, DType indices_dtype, const Attributes& attrs,
                        Tensor* indices) {
  return make_position_indices(name, input_shape, input_dtype, indices_shape, indices_dtype, nullptr, attrs, indices);
}

Status position_indices(std::string_view name, const Dims& input_shape, DType input_dtype,
                        const Dims& indices_shape, DType indices_dtype, const Dims& updates_shape,
                        const Attributes& attrs, Tensor* indices) {
  return make_position_indices(name, input_shape, input_dtype, indices_shape, indices_dtype, &updates_shape, attrs,
                               indices);
}

namespace {

Status check_cells(const std::string& what, std::int64_t n, std::int64_t max_cells) {
  if (n > max_cells) {
    return InvalidArgument("the " + what + " has " + str(n) + " cells; pictures are drawn up to " +
                           str(max_cells) + " cells (choose smaller shapes)");
  }
  return Status::Ok();
}

using Caption = std::pair<std::string, std::string>;  // (text, style)

constexpr double kMargin = 20, kGap = 70, kCaptionLine = 17, kTitleHeight = 34;

// The element offset of core view element `core` (C order in view.shape) in the storage that
// starts at `base` (a framework operand or a copy the lowering owns); -1 when base is null.
std::int64_t storage_offset(const TensorView& view, const void* base, std::int64_t core) {
  if (base == nullptr) return -1;
  const auto es = static_cast<std::int64_t>(element_size(view.dtype));
  return (static_cast<const std::byte*>(view.data) - static_cast<const std::byte*>(base)) / es +
         dot(unravel(core, view.shape), view.strides);
}

const std::byte* element_at(const TensorView& view, std::int64_t core) {
  return static_cast<const std::byte*>(view.data) +
         dot(unravel(core, view.shape), view.strides) * static_cast<std::int64_t>(element_size(view.dtype));
}

double cell_width(const std::vector<std::string>& labels, double extra = 0) {
  std::size_t m = 1;
  for (const auto& t : labels) m = std::max(m, t.size());
  return std::max(30.0, std::ceil(static_cast<double>(m) * kCharWidth + 12 + extra));
}

// The labels of the indices grids: the actual view's values, the logical cells' coordinates.
struct IndexLabels {
  std::vector<std::string> actual, logical;
};
IndexLabels index_labels(const Lowering& l) {
  const GatherShape& s = l.shape;
  const int k = static_cast<int>(s.axes.size()), c = s.coordinate_size;
  IndexLabels labels;
  const std::int64_t n_idx = l.indices.numel();
  labels.actual.resize(static_cast<std::size_t>(n_idx));
  for (std::int64_t e = 0; e < n_idx; ++e) {
    std::string& t = labels.actual[static_cast<std::size_t>(e)];
    if (k == 0) { t = "."; continue; }
    __int128 v = 0;
    detail::read_index(element_at(l.indices, e), l.indices.dtype, &v);
    t = detail::index_text(v);
  }
  const Dims& L = s.logical_indices_shape;
  std::int64_t n_log = 0;
  element_count(L, &n_log);
  labels.logical.resize(static_cast<std::size_t>(n_log));
  for (std::int64_t e = 0; e < n_log; ++e) {
    if (k == 0) { labels.logical[static_cast<std::size_t>(e)] = "."; continue; }
    const Dims q = unravel(e, L);
    std::string t = c > 1 ? "(" : "";
    for (int j = 0; j < c; ++j) {
      Dims a = q;
      a[a.size() - 1] = q[q.size() - 1] * c + j;
      t += (j ? "," : "") + labels.actual[static_cast<std::size_t>(ravel(a, l.indices.shape))];
    }
    labels.logical[static_cast<std::size_t>(e)] = t + (c > 1 ? ")" : "");
  }
  return labels;
}

struct Column {
  Grid* grid;
  std::string title, note;
};

// Where the grids start: below the captions and the grid titles.
double grids_top(const std::vector<Caption>& captions) {
  return kMargin + 6 + kCaptionLine * static_cast<double>(captions.size()) + 18;
}

// Places the columns left to right; returns the picture's width so far and the tallest grid.
std::pair<double, double> place_columns(std::vector<Column>& columns, double top, const std::vector<Caption>& captions) {
  double x = kMargin, grids_h = 0;
  for (Column& col : columns) {
    col.grid->x0 = x;
    col.grid->y0 = top + kTitleHeight;
    const double w = std::max({col.grid->width, text_width(col.title), text_width(col.note)});
    x += w + kGap;
    grids_h = std::max(grids_h, col.grid->height);
  }
  double width = x - kGap + kMargin;
  for (std::size_t i = 0; i < captions.size(); ++i) {  // the first is bold 13 px: about 1.2 times wider
    width = std::max(width, kMargin * 2 + text_width(captions[i].first) * (i == 0 ? 1.22 : 1.02));
  }
  return {width, grids_h};
}

// The parts of a picture, written in this order: cells, arrows, badges, legend.
struct Canvas {
  Svg out;
  std::ostringstream arrows, badges, legend;

  void titles(const std::vector<Column>& columns, double top) {
    for (const Column& col : columns) {
      out.text(col.grid->x0, top + 12, col.title, " font-weight=\"bold\"");
      if (!col.note.empty()) out.text(col.grid->x0, top + 26, col.note, " fill=\"#555555\"");
    }
  }
  void rect(const Grid& g, std::int64_t e, const std::string& fill, Resolution res, const std::string& attrs) {
    const auto [cx, cy] = g.at(e);
    const Style st = style_of(res);
    out.body << "<rect x=\"" << num(cx) << "\" y=\"" << num(cy) << "\" width=\"" << num(g.cw) << "\" height=\""
             << num(g.ch) << "\" fill=\"" << fill << "\" stroke=\"" << st.stroke << "\" stroke-width=\"" << st.width << "\"";
    if (*st.dash) out.body << " stroke-dasharray=\"" << st.dash << "\"";
    out.body << attrs << "/>\n";
  }
  void label(const Grid& g, std::int64_t e, const std::string& t, const std::string& extra = "") {
    const auto [cx, cy] = g.at(e);
    out.text(cx + g.cw / 2, cy + g.ch / 2 + 4, t, " text-anchor=\"middle\"" + extra);
  }
  void badge(const Grid& g, std::int64_t e, int number, const char* colour, int slot) {
    const auto [cx, cy] = g.at(e);
    const double bx = cx + 2 + 13 * slot, by = cy - 5;
    badges << "<circle cx=\"" << num(bx + 5) << "\" cy=\"" << num(by + 5) << "\" r=\"6.5\" fill=\"" << colour
           << "\"/><text x=\"" << num(bx + 5) << "\" y=\"" << num(by + 8.5) << "\" text-anchor=\"middle\" font-size=\"9\" fill=\"#ffffff\">"
           << number << "</text>\n";
  }
  // A solid arrow (the data) or a dashed one (an index), ending at (x2, y2).
  void link(const char* cls, std::int64_t output, double x1, double y1, double x2, double y2, const char* colour,
            bool dashed, std::size_t m) {
    arrows << "<line class=\"" << cls << "\" data-output=\"" << output << "\" x1=\"" << num(x1) << "\" y1=\"" << num(y1)
           << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2) << "\" stroke=\"" << colour << "\" stroke-width=\""
           << (dashed ? "1.2\" stroke-dasharray=\"4,3" : "1.6") << "\" marker-end=\"url(#arrow"
           << m % kLinkColourCount << ")\"/>\n";
  }
  // Dashed arrows from the indices cells that gave t's coordinates to (tx, ty), numbered badges
  // on those cells (`slots`: the badges each indices cell has so far).
  void index_links(const Grid& gidx, const CellTrace& t, std::int64_t output, double tx, double ty, const char* colour,
                   std::size_t m, std::vector<int>& slots) {
    for (std::size_t j = 0; j < t.indices.size(); ++j) {
      const auto [jx, jy] = gidx.at(t.indices[j]);
      link("index-link", output, jx + 4, jy + gidx.ch / 2 + 2.0 * static_cast<double>(j), tx, ty, colour, true, m);
      badge(gidx, t.indices[j], static_cast<int>(m) + 1, colour, slots[static_cast<std::size_t>(t.indices[j])]++ % 4);
    }
  }
  // One legend row: a sample cell per resolution (in range, negative, clamped, wrapped, then
  // `last`: filled for gathers, dropped for scatters), then `note`; returns the row's width.
  double resolution_legend(double y, Resolution last, const char* last_text, const std::string& note) {
    const std::pair<Resolution, const char*> kinds[] = {{Resolution::kInRange, "in range"},
                                                        {Resolution::kNegative, "negative index, + n"},
                                                        {Resolution::kClamped, "clamped"},
                                                        {Resolution::kWrapped, "wrapped (mod n)"},
                                                        {last, last_text}};
    double lx = kMargin;
    for (const auto& [r, text] : kinds) {
      const Style st = style_of(r);
      const char* fill = r == Resolution::kFilled ? "url(#filled)" : r == Resolution::kDropped ? "url(#dropped)" : "#ffffff";
      legend << "<rect x=\"" << num(lx) << "\" y=\"" << num(y - 12) << "\" width=\"26\" height=\"16\" fill=\"" << fill
             << "\" stroke=\"" << st.stroke << "\" stroke-width=\"" << st.width << "\""
             << (*st.dash ? std::string(" stroke-dasharray=\"") + st.dash + "\"" : "") << "/>\n";
      legend << "<text x=\"" << num(lx + 32) << "\" y=\"" << num(y) << "\">" << esc(text) << "</text>\n";
      lx += 32 + text_width(text) + 18;
    }
    legend << "<text x=\"" << num(lx) << "\" y=\"" << num(y) << "\" fill=\"#555555\">" << esc(note) << "</text>\n";
    return lx + text_width(note) + kMargin;
  }
  // The per-dimension table from y on; returns the y after it and widens `width`.
  double table(const Lowering& l, double y, double* width) {
    std::istringstream lines(detail::explain_dimension_table(l));
    for (std::string line; std::getline(lines, line);) {
      legend << "<text x=\"" << num(kMargin) << "\" y=\"" << num(y) << "\" xml:space=\"preserve\">" << esc(line) << "</text>\n";
      *width = std::max(*width, kMargin * 2 + text_width(line));
      y += 15;
    }
    return y;
  }
  std::string finish(const std::string& title, const std::vector<Caption>& captions, double width, double height,
                     const std::string& extra_defs) const {
    std::ostringstream svg;
    svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << num(std::ceil(width)) << "\" height=\""
        << num(std::ceil(height)) << "\" viewBox=\"0 0 " << num(std::ceil(width)) << " " << num(std::ceil(height))
        << "\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"11\">\n"
        << "<title>" << esc(title) << "</title>\n"
        << "<desc>" << esc(captions[0].first + "\n" + captions[1].first) << "</desc>\n<defs>\n"
        << "<pattern id=\"filled\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
           "<rect width=\"6\" height=\"6\" fill=\"#d5d5d5\"/><path d=\"M0,6 L6,0\" stroke=\"#8a8a8a\" stroke-width=\"1\"/></pattern>\n"
        << extra_defs;
    for (int m = 0; m < kLinkColourCount; ++m) {
      svg << "<marker id=\"arrow" << m << "\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
             "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"" << kLinkColours[m] << "\"/></marker>\n";
    }
    svg << "</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    double cy = kMargin + 8;
    for (const auto& cap : captions) {
      svg << "<text x=\"" << num(kMargin) << "\" y=\"" << num(cy) << "\"" << cap.second << ">" << esc(cap.first) << "</text>\n";
      cy += kCaptionLine;
    }
    svg << out.body.str() << arrows.str() << badges.str() << legend.str() << "</svg>\n";
    return svg.str();
  }
};

// The caption that says what the cells show.
std::string shown_caption(const Lowering& l, const OpSpec& op, bool input_values, bool indices_given) {
  return std::string(input_values ? "values: cells show the input's values" :
                                    "positions: input cells show their C-order position in " + op.input_name + " (as if it were np.arange)") +
         (indices_given ? "; indices as given" :
          l.owned_indices ? "; the framework's indices are all 0 and the lowering computed the indices drawn (shapes alone)" :
                          "; indices filled n-1, n-2, ..., 0, n-1, ... per coordinate (shapes alone)");
}

// "op(input [3,4] float32, indices [2] int64, ...; attrs)  ->  output [..]" (updates: scatters).
std::string call_caption(const Lowering& l, const OpSpec& op, const TensorView& fw_input, const TensorView& fw_indices,
                         const TensorView* fw_updates) {
  const auto with = [](const std::string& a) { return a.empty() ? std::string() : "; " + a; };
  return op.name + "(" + op.input_name + " " + to_string(fw_input.shape) + " " + std::string(dtype_name(fw_input.dtype)) +
         ", " + op.indices_name + " " + to_string(fw_indices.shape) + " " + std::string(dtype_name(fw_indices.dtype)) +
         (fw_updates != nullptr && op.kind != OpKind::kSegment ? ", " + op.updates_name + " " + to_string(fw_updates->shape)
                                                               : std::string()) +
         with(l.attributes.to_string()) + ")  ->  output " + to_string(l.output_shape);
}

std::string index_policy(const Lowering& l) {
  return "index_mode=" + std::string(index_mode_name(l.options.index_mode)) +
         ", negative_indices=" + (l.options.negative_indices ? "true" : "false");
}

// The chosen cells (framework output positions for a gather, positions of G for a scatter):
// checked against n, or the default (all for at most 6, else 4 spread out).
Status choose_cells(const std::vector<std::int64_t>& given, const Dims& shape, const std::string& what,
                    const std::string& where, std::vector<std::int64_t>* chosen) {
  std::int64_t n = 0;
  element_count(shape, &n);
  *chosen = given;
  for (std::int64_t cell : given) {
    if (cell < 0 || cell >= n) {
      return InvalidArgument("cells: " + what + " " + str(cell) + " is outside " + where + ", which has " + str(n) +
                             " cells (valid range [0, " + str(n) + "), C order of " + to_string(shape) + ")");
    }
  }
  if (chosen->empty()) {
    if (n <= 6) {
      for (std::int64_t e = 0; e < n; ++e) chosen->push_back(e);
    } else {
      for (std::int64_t e : {std::int64_t{0}, n / 3, 2 * n / 3, n - 1}) {
        if (std::find(chosen->begin(), chosen->end(), e) == chosen->end()) chosen->push_back(e);
      }
    }
  }
  return Status::Ok();
}

std::string draw(const Lowering& l, const TensorView& fw_input, const TensorView& fw_indices,
                 bool input_values, bool indices_given, const std::vector<CellTrace>& cells,
                 const std::vector<std::int64_t>& chosen_outputs) {
  static const OpSpec kNoSpec;
  const OpSpec& op = l.spec != nullptr ? *l.spec : kNoSpec;
  const GatherShape& s = l.shape;
  const int k = static_cast<int>(s.axes.size());
  const int c = s.coordinate_size;
  const std::int64_t n_in = l.input.numel(), n_idx = l.indices.numel();

  // Framework storage offsets of the core views' elements.
  // A segment op's core input is the reduction's identity (one element, broadcast), its
  // framework input the updates.
  const bool segment = op.kind == OpKind::kSegment;
  const void* in_base = l.owned_input ? l.owned_input->data() : segment ? l.input.data : fw_input.data;
  const auto input_offset = [&](std::int64_t core) { return storage_offset(l.input, in_base, core); };
  const void* idx_base = l.owned_indices ? nullptr : fw_indices.data;  // null: made by the lowering
  const auto indices_offset = [&](std::int64_t core) { return storage_offset(l.indices, idx_base, core); };

  // Labels.
  std::vector<std::string> in_label(static_cast<std::size_t>(n_in));
  for (std::int64_t e = 0; e < n_in; ++e) {
    in_label[static_cast<std::size_t>(e)] = input_values ? element_str(element_at(l.input, e), l.input.dtype) : str(input_offset(e));
  }
  const std::string fill_label = input_values ? l.options.fill_value.to_string() : "fill";
  std::vector<std::string> out_label;
  for (const CellTrace& t : cells) out_label.push_back(t.input < 0 ? fill_label : in_label[static_cast<std::size_t>(t.input)]);
  const IndexLabels il = index_labels(l);
  const std::vector<std::string>& idx_label = il.actual;
  const std::vector<std::string>& log_label = il.logical;
  const Dims& L = s.logical_indices_shape;
  const auto n_log = static_cast<std::int64_t>(log_label.size());

  // Captions.
  std::vector<Caption> captions;
  captions.push_back({call_caption(l, op, fw_input, fw_indices, nullptr), " font-weight=\"bold\" font-size=\"13\""});
  captions.push_back({"lowered: gather_multiaxis(input " + to_string(l.input.shape) + ", indices " +
                          to_string(l.indices.shape) + ", axes " + frontends::shape_str(l.axes) + ", " + index_policy(l) +
                          (l.options.index_mode == IndexMode::kFill ? ", fill_value=" + l.options.fill_value.to_string() : "") +
                          ")  ->  core output " + to_string(l.core_output_shape), ""});
  captions.push_back({"formula: " + op.formula, ""});
  captions.push_back({"lowered: " + detail::explain_formula(l), ""});
  captions.push_back({detail::explain_resolution(l), ""});
  for (const std::string& n : l.notes) captions.push_back({"note: " + n, ""});
  captions.push_back({shown_caption(l, op, input_values, indices_given), " fill=\"#555555\""});

  // Grids, left to right: input, output, indices (actual), indices (logical).
  Grid gin, gout, gidx, glog;
  gin.layout(l.input.shape, cell_width(in_label));
  gout.layout(s.output_shape, cell_width(out_label));
  gidx.layout(l.indices.shape, cell_width(idx_label));
  glog.layout(L, cell_width(log_label));
  std::vector<Column> columns = {
      {&gin, "input " + to_string(l.input.shape), dims_note(l, true)},
      {&gout, "output " + to_string(s.output_shape), l.core_output_shape == l.output_shape ? "" : "reshaped to " + to_string(l.output_shape)},
      {&gidx, "indices, actual " + to_string(l.indices.shape), k > 0 ? "c = " + str(c) + " coordinates per lookup" : "k = 0: values never read"},
      {&glog, "indices, logical " + to_string(L), dims_note(l, false)},
  };
  const double top = grids_top(captions);
  auto [width, grids_h] = place_columns(columns, top, captions);

  Canvas out;
  out.titles(columns, top);
  // Resolutions per indices cell (the highest of the lookups that read it).
  std::vector<Resolution> idx_res(static_cast<std::size_t>(n_idx), Resolution::kInRange);
  std::vector<char> in_read(static_cast<std::size_t>(n_in), 0);
  for (const CellTrace& t : cells) {
    if (t.input >= 0) in_read[static_cast<std::size_t>(t.input)] = 1;
    for (std::size_t j = 0; j < t.indices.size(); ++j) {
      Resolution& r = idx_res[static_cast<std::size_t>(t.indices[j])];
      if (static_cast<int>(t.resolutions[j]) > static_cast<int>(r)) r = t.resolutions[j];
    }
  }
  // Input cells: their own colour when some output cell takes them, white otherwise.
  for (std::int64_t e = 0; e < n_in; ++e) {
    out.rect(gin, e, in_read[static_cast<std::size_t>(e)] ? cell_colour(e) : "#ffffff", Resolution::kInRange,
             " id=\"in-" + str(e) + "\" class=\"input\" data-input=\"" + str(input_offset(e)) + "\"");
    out.label(gin, e, in_label[static_cast<std::size_t>(e)]);
  }
  // Output cells: the colour of the input cell they take.
  for (std::size_t n = 0; n < cells.size(); ++n) {
    const CellTrace& t = cells[n];
    std::string idx;
    for (std::size_t j = 0; j < t.indices.size(); ++j) idx += (j ? "," : "") + str(indices_offset(t.indices[j]));
    std::string res;
    for (std::size_t j = 0; j < t.resolutions.size(); ++j) res += (j ? "," : "") + std::string(resolution_name(t.resolutions[j]));
    out.rect(gout, t.output, t.input < 0 ? "url(#filled)" : cell_colour(t.input), t.resolution,
             " id=\"out-" + str(t.framework_output) + "\" class=\"output\" data-output=\"" + str(t.framework_output) +
                 "\" data-input=\"" + str(t.input < 0 ? -1 : input_offset(t.input)) + "\" data-indices=\"" + idx +
                 "\" data-resolution=\"" + (res.empty() ? "in-range" : res) + "\"");
    out.label(gout, t.output, out_label[n]);
  }
  for (std::int64_t e = 0; e < n_idx; ++e) {
    out.rect(gidx, e, k > 0 ? "#eef2f7" : "#f4f4f4", idx_res[static_cast<std::size_t>(e)],
             " id=\"idx-" + str(e) + "\" class=\"indices\" data-offset=\"" + str(indices_offset(e)) +
                 "\" data-value=\"" + (k > 0 ? idx_label[static_cast<std::size_t>(e)] : std::string()) + "\"");
    out.label(gidx, e, idx_label[static_cast<std::size_t>(e)]);
  }
  for (std::int64_t e = 0; e < n_log; ++e) {
    out.rect(glog, e, "#ffffff", Resolution::kInRange, " id=\"log-" + str(e) + "\" class=\"logical\"");
    out.label(glog, e, log_label[static_cast<std::size_t>(e)]);
  }

  // The chosen lookups: arrows from the input cell and from each indices cell that gave a
  // coordinate, numbered badges on the cells they link.
  std::vector<std::size_t> by_framework(cells.size());
  for (std::size_t n = 0; n < cells.size(); ++n) {
    const auto f = static_cast<std::size_t>(cells[n].framework_output);
    if (f < by_framework.size()) by_framework[f] = n;
  }
  std::vector<int> in_slots(static_cast<std::size_t>(n_in), 0), idx_slots(static_cast<std::size_t>(n_idx), 0);
  for (std::size_t m = 0; m < chosen_outputs.size(); ++m) {
    const CellTrace& t = cells[by_framework[static_cast<std::size_t>(chosen_outputs[m])]];
    const char* colour = kLinkColours[m % kLinkColourCount];
    const int number = static_cast<int>(m) + 1;
    const auto [ox, oy] = gout.at(t.output);
    out.badge(gout, t.output, number, colour, 0);
    if (t.input >= 0) {
      const auto [ix, iy] = gin.at(t.input);
      out.link("link", t.framework_output, ix + gin.cw - 4, iy + gin.ch / 2, ox + 2, oy + gout.ch / 2, colour, false, m);
      out.badge(gin, t.input, number, colour, in_slots[static_cast<std::size_t>(t.input)]++ % 4);
    }
    out.index_links(gidx, t, t.framework_output, ox + gout.cw - 2, oy + gout.ch / 2, colour, m, idx_slots);
  }

  // Legend and the per-dimension table below the grids.
  double y = top + kTitleHeight + grids_h + 30;
  width = std::max(width, out.resolution_legend(y, Resolution::kFilled, "filled (fill_value)",
                                                "output cells take their input cell's colour; arrows: solid from the input cell, dashed from the indices cells"));
  y = out.table(l, y + 26, &width);
  return out.finish(op.name + ": how the gather moves data", captions, width, y + kMargin - 6, "");
}

// The text of an output cell a scatter reaches: how its terms combine ("u3", "5+u1+u4",
// "max(5,u1)"); at most 4 terms written, the rest elided.
std::string combine_label(Reduction reduction, const std::vector<std::string>& terms) {
  if (terms.empty()) return "";
  if (reduction == Reduction::kNone) return terms.back();
  std::vector<std::string> shown = terms;
  if (shown.size() > 4) shown = {terms[0], terms[1], "...", terms.back()};
  const char* sep = reduction == Reduction::kAdd ? "+" : reduction == Reduction::kMul ? "*" : ",";
  std::string s;
  for (std::size_t i = 0; i < shown.size(); ++i) s += (i ? sep : "") + shown[i];
  if (reduction == Reduction::kMin || reduction == Reduction::kMax) s = std::string(reduction_name(reduction)) + "(" + s + ")";
  return s;
}

// The scatter formula for these shapes, from the gather's "output[o] = input[i(o)]".
std::string scatter_formula(const Lowering& l) {
  const std::string f = detail::explain_formula(l);
  const std::size_t at = f.find(" = input");
  if (at == std::string::npos) return f;
  const std::string target = "output" + f.substr(at + 8), update = "updates" + f.substr(6, at - 6);
  switch (l.reduction) {
    case Reduction::kNone: return target + " = " + update;
    case Reduction::kAdd: return target + " += " + update;
    case Reduction::kMul: return target + " *= " + update;
    default: return target + " = " + std::string(reduction_name(l.reduction)) + "(" + target + ", " + update + ")";
  }
}

std::string draw_scatter(const Lowering& l, const TensorView& fw_input, const TensorView& fw_indices,
                         const TensorView& fw_updates, bool input_values, bool indices_given, bool updates_given,
                         const std::vector<CellTrace>& cells, const std::vector<std::int64_t>& chosen) {
  static const OpSpec kNoSpec;
  const OpSpec& op = l.spec != nullptr ? *l.spec : kNoSpec;
  const GatherShape& s = l.shape;
  const Dims& G = s.output_shape;
  const int k = static_cast<int>(s.axes.size()), c = s.coordinate_size, r = G.size();
  const std::int64_t n_in = l.input.numel(), n_idx = l.indices.numel(), n_upd = l.updates.numel();

  // Storage offsets: the input's and the updates' in the framework operands (or in a C-order
  // copy the lowering made of them), the indices' as for gathers.
  // A segment op's core input is the reduction's identity (one element, broadcast), its
  // framework input the updates.
  const bool segment = op.kind == OpKind::kSegment;
  const void* in_base = l.owned_input ? l.owned_input->data() : segment ? l.input.data : fw_input.data;
  const auto input_offset = [&](std::int64_t core) { return storage_offset(l.input, in_base, core); };
  const void* idx_base = l.owned_indices ? nullptr : fw_indices.data;
  const auto indices_offset = [&](std::int64_t core) { return storage_offset(l.indices, idx_base, core); };
  const void* upd_base = l.owned_updates ? (l.owned_updates->numel() == fw_updates.numel() ? l.owned_updates->data() : nullptr)
                                         : fw_updates.data;
  const auto update_offset = [&](std::int64_t core) { return storage_offset(l.updates, upd_base, core); };
  // The updates cell of position o of G (size-1 dimensions broadcast).
  const auto update_cell = [&](std::int64_t o) {
    Dims p = unravel(o, G);
    for (int d = 0; d < r; ++d) if (l.updates.shape[d] == 1) p[d] = 0;
    return ravel(p, l.updates.shape);
  };

  // Labels: input values (or positions), updates values (or "u<position>").
  const bool in_values = input_values || l.owned_input != nullptr;  // a lowering's zeros are values
  std::vector<std::string> in_label(static_cast<std::size_t>(n_in)), upd_label(static_cast<std::size_t>(n_upd));
  for (std::int64_t e = 0; e < n_in; ++e) {
    in_label[static_cast<std::size_t>(e)] = in_values ? element_str(element_at(l.input, e), l.input.dtype) : str(input_offset(e));
  }
  for (std::int64_t e = 0; e < n_upd; ++e) {
    if (l.gathered != nullptr) {  // gathered rows (embedding_bag): the weight element each update reads
      const std::int64_t* rows = l.gathered->rows;
      const std::int64_t width = l.updates.rank() > 0 ? std::max<std::int64_t>(l.updates.shape[l.updates.rank() - 1], 1) : 1;
      upd_label[static_cast<std::size_t>(e)] =
          rows == nullptr ? "u" + str(e) : "w" + str(rows[e / width]) + "," + str(e % width);
      continue;
    }
    const std::int64_t off = update_offset(e);
    upd_label[static_cast<std::size_t>(e)] = updates_given || off < 0 ? element_str(element_at(l.updates, e), l.updates.dtype)
                                                                      : "u" + str(off);
  }
  // Per core input (= output) cell: the positions of G reaching it, in row-major (combine) order.
  std::vector<std::vector<std::int64_t>> reaching(static_cast<std::size_t>(n_in));
  std::vector<std::int64_t> dropped;
  std::vector<Resolution> upd_res(static_cast<std::size_t>(n_upd), Resolution::kInRange);
  std::vector<Resolution> idx_res(static_cast<std::size_t>(n_idx), Resolution::kInRange);
  const auto raise = [](Resolution& to, Resolution r2) { if (static_cast<int>(r2) > static_cast<int>(to)) to = r2; };
  for (const CellTrace& t : cells) {
    if (t.input >= 0) reaching[static_cast<std::size_t>(t.input)].push_back(t.output);
    else dropped.push_back(t.output);
    raise(upd_res[static_cast<std::size_t>(update_cell(t.output))], t.resolution);
    for (std::size_t j = 0; j < t.indices.size(); ++j) raise(idx_res[static_cast<std::size_t>(t.indices[j])], t.resolutions[j]);
  }
  std::vector<std::string> out_label(static_cast<std::size_t>(n_in));
  std::vector<char> winner(static_cast<std::size_t>(n_upd), 0);  // the update cell decides some output cell
  bool duplicates = false;
  for (std::int64_t e = 0; e < n_in; ++e) {
    const auto& u = reaching[static_cast<std::size_t>(e)];
    std::vector<std::string> terms;
    if (l.include_input && l.reduction != Reduction::kNone) terms.push_back(in_label[static_cast<std::size_t>(e)]);
    for (std::int64_t o : u) terms.push_back(upd_label[static_cast<std::size_t>(update_cell(o))]);
    out_label[static_cast<std::size_t>(e)] = u.empty() ? in_label[static_cast<std::size_t>(e)] : combine_label(l.reduction, terms);
    for (std::size_t i = 0; i < u.size(); ++i) {
      if (l.reduction != Reduction::kNone || i + 1 == u.size()) winner[static_cast<std::size_t>(update_cell(u[i]))] = 1;
    }
    duplicates = duplicates || u.size() > 1;
  }
  const IndexLabels il = index_labels(l);

  // Captions.
  std::vector<Caption> captions;
  captions.push_back({call_caption(l, op, fw_input, fw_indices, &fw_updates), " font-weight=\"bold\" font-size=\"13\""});
  captions.push_back({"lowered: scatter_multiaxis(input " + to_string(l.input.shape) + ", indices " + to_string(l.indices.shape) +
                          ", updates " + to_string(l.updates.shape) + ", axes " + frontends::shape_str(l.axes) +
                          ", reduction=" + std::string(reduction_name(l.reduction)) + ", " + index_policy(l) +
                          ", include_input=" + (l.include_input ? "true" : "false") + ")  ->  output " +
                          to_string(l.core_output_shape) + "; G = " + to_string(G) + " (" + str(s.output_numel) + " updates)", ""});
  captions.push_back({"formula: " + op.formula, ""});
  captions.push_back({"lowered: for every o of G in row-major order: " + scatter_formula(l), ""});
  captions.push_back({"reduction=" + std::string(reduction_name(l.reduction)) + ": " + detail::explain_duplicate_rule(l) +
                          "; cells no update reaches keep the input", ""});
  captions.push_back({detail::explain_resolution(l), ""});
  for (const std::string& n : l.notes) captions.push_back({"note: " + n, ""});
  std::string shown = shown_caption(l, op, in_values, indices_given);
  shown += updates_given ? "; updates as given"
                         : "; update cells show u + their C-order position in " + (segment ? op.input_name : op.updates_name);
  captions.push_back({shown, " fill=\"#555555\""});

  // Grids, left to right: input (the destination), updates, output, indices (actual, logical).
  Grid gin, gupd, gout, gidx, glog;
  gin.layout(l.input.shape, cell_width(in_label));
  gupd.layout(l.updates.shape, cell_width(upd_label));
  gout.layout(l.input.shape, cell_width(out_label, duplicates ? 14 : 0));
  gidx.layout(l.indices.shape, cell_width(il.actual));
  glog.layout(s.logical_indices_shape, cell_width(il.logical));
  std::string upd_note;
  for (int d = 0; d < r; ++d) {
    if (l.updates.shape[d] == 1 && G[d] != 1) upd_note += (upd_note.empty() ? "broadcast: " : ", ") + ("d" + str(d) + " (1 -> " + str(G[d]) + ")");
    if (l.updates.shape[d] > 1 && l.updates.strides[d] == 0) upd_note += (upd_note.empty() ? "broadcast: " : ", ") + ("d" + str(d) + " (stride 0)");
  }
  std::string out_note = l.has_scatter_base ? "the leading part of the output " + to_string(l.output_shape)
                         : l.core_output_shape == l.output_shape ? "" : "reshaped to " + to_string(l.output_shape);
  std::vector<Column> columns = {
      {&gin, "input " + to_string(l.input.shape) + (segment ? " (the reduction's identity)" : " (the destination)"), dims_note(l, true)},
      {&gupd, "updates " + to_string(l.updates.shape) + " -> G " + to_string(G), upd_note},
      {&gout, "output " + to_string(l.input.shape), out_note},
      {&gidx, "indices, actual " + to_string(l.indices.shape), k > 0 ? "c = " + str(c) + " coordinates per update" : "k = 0: values never read"},
      {&glog, "indices, logical " + to_string(s.logical_indices_shape), dims_note(l, false)},
  };
  const double top = grids_top(captions);
  auto [width, grids_h] = place_columns(columns, top, captions);

  Canvas out;
  out.titles(columns, top);
  for (std::int64_t e = 0; e < n_in; ++e) {
    out.rect(gin, e, "#ffffff", Resolution::kInRange,
             " id=\"in-" + str(e) + "\" class=\"input\" data-input=\"" + str(input_offset(e)) + "\" data-value=\"" +
                 esc(in_label[static_cast<std::size_t>(e)]) + "\"");
    out.label(gin, e, in_label[static_cast<std::size_t>(e)]);
  }
  // Update cells: their own colour when they decide an output cell; white when a later update
  // overwrites them everywhere (reduction none); hatched when dropped.
  std::vector<char> upd_dropped(static_cast<std::size_t>(n_upd), 0);
  for (std::int64_t o : dropped) upd_dropped[static_cast<std::size_t>(update_cell(o))] = 1;
  for (std::int64_t e = 0; e < n_upd; ++e) {
    const auto u = static_cast<std::size_t>(e);
    const char* status = winner[u] ? "applied" : upd_dropped[u] ? "dropped" : "overwritten";
    out.rect(gupd, e, winner[u] ? cell_colour(e) : upd_dropped[u] ? "url(#dropped)" : "#ffffff", upd_res[u],
             " id=\"upd-" + str(e) + "\" class=\"update\" data-offset=\"" + str(update_offset(e)) + "\" data-status=\"" +
                 status + "\" data-value=\"" + esc(upd_label[u]) + "\"");
    out.label(gupd, e, upd_label[u], winner[u] ? "" : " fill=\"#777777\"");
  }
  // Output cells: kept (white), or the colour of the last update reaching them; a red border
  // and "xN" where N > 1 updates reach one cell.
  for (std::int64_t e = 0; e < n_in; ++e) {
    const auto& u = reaching[static_cast<std::size_t>(e)];
    const std::int64_t f = dot(unravel(e, l.input.shape), l.core_output_strides);
    std::string gs, us;
    for (std::size_t i = 0; i < u.size(); ++i) {
      gs += (i ? "," : "") + str(u[i]);
      us += (i ? "," : "") + str(update_cell(u[i]));
    }
    const std::string combine = u.empty() ? "kept" : std::string(reduction_name(l.reduction));
    const std::string attrs = " id=\"out-" + str(f) + "\" class=\"output\" data-output=\"" + str(f) + "\" data-input=\"" +
                              str(input_offset(e)) + "\" data-updates=\"" + gs + "\" data-update-cells=\"" + us +
                              "\" data-combine=\"" + combine + "\"";
    if (u.size() > 1) {
      const auto [cx, cy] = gout.at(e);
      out.out.body << "<rect x=\"" << num(cx) << "\" y=\"" << num(cy) << "\" width=\"" << num(gout.cw) << "\" height=\""
                   << num(gout.ch) << "\" fill=\"" << cell_colour(update_cell(u.back())) << "\" stroke=\"#c0392b\" stroke-width=\"3\""
                   << attrs << "/>\n";
      out.out.text(cx + gout.cw - 2, cy + 9, "x" + str(static_cast<std::int64_t>(u.size())),
                   " text-anchor=\"end\" font-size=\"8\" fill=\"#c0392b\"");
    } else {
      out.rect(gout, e, u.empty() ? "#ffffff" : cell_colour(update_cell(u.back())), Resolution::kInRange, attrs);
    }
    out.label(gout, e, out_label[static_cast<std::size_t>(e)], u.empty() ? " fill=\"#777777\"" : "");
  }
  for (std::int64_t e = 0; e < n_idx; ++e) {
    out.rect(gidx, e, k > 0 ? "#eef2f7" : "#f4f4f4", idx_res[static_cast<std::size_t>(e)],
             " id=\"idx-" + str(e) + "\" class=\"indices\" data-offset=\"" + str(indices_offset(e)) +
                 "\" data-value=\"" + (k > 0 ? il.actual[static_cast<std::size_t>(e)] : std::string()) + "\"");
    out.label(gidx, e, il.actual[static_cast<std::size_t>(e)]);
  }
  for (std::int64_t e = 0; e < static_cast<std::int64_t>(il.logical.size()); ++e) {
    out.rect(glog, e, "#ffffff", Resolution::kInRange, " id=\"log-" + str(e) + "\" class=\"logical\"");
    out.label(glog, e, il.logical[static_cast<std::size_t>(e)]);
  }
  std::string dropped_list;
  for (std::size_t i = 0; i < dropped.size(); ++i) dropped_list += (i ? "," : "") + str(dropped[i]);
  out.out.body << "<g id=\"scatter\" data-reduction=\"" << reduction_name(l.reduction) << "\" data-include-input=\""
               << (l.include_input ? "true" : "false") << "\" data-dropped=\"" << dropped_list << "\"/>\n";

  // The chosen positions of G: a solid arrow from the update cell to its target, dashed ones
  // from the indices cells (to the update cell itself when the update is dropped).
  std::vector<int> upd_slots(static_cast<std::size_t>(n_upd), 0), idx_slots(static_cast<std::size_t>(n_idx), 0),
      out_slots(static_cast<std::size_t>(n_in), 0);
  for (std::size_t m = 0; m < chosen.size(); ++m) {
    const CellTrace& t = cells[static_cast<std::size_t>(chosen[m])];
    const char* colour = kLinkColours[m % kLinkColourCount];
    const int number = static_cast<int>(m) + 1;
    const std::int64_t uc = update_cell(t.output);
    const auto [ux, uy] = gupd.at(uc);
    out.badge(gupd, uc, number, colour, upd_slots[static_cast<std::size_t>(uc)]++ % 4);
    double tx = ux + gupd.cw - 2, ty = uy + gupd.ch / 2;  // where the index arrows end
    if (t.input >= 0) {
      const auto [ox, oy] = gout.at(t.input);
      out.link("link", t.output, ux + gupd.cw - 4, uy + gupd.ch / 2, ox + 2, oy + gout.ch / 2, colour, false, m);
      out.badge(gout, t.input, number, colour, out_slots[static_cast<std::size_t>(t.input)]++ % 4);
      tx = ox + gout.cw - 2;
      ty = oy + gout.ch / 2;
    }
    out.index_links(gidx, t, t.output, tx, ty, colour, m, idx_slots);
  }

  double y = top + kTitleHeight + grids_h + 30;
  width = std::max(width, out.resolution_legend(y, Resolution::kDropped, "dropped (out of range)",
                                                "arrows: solid from the update cell to its target, dashed from the indices cells"));
  y += 22;
  out.legend << "<rect x=\"" << num(kMargin) << "\" y=\"" << num(y - 12) << "\" width=\"26\" height=\"16\" fill=\"#ffffff\" "
             << "stroke=\"#c0392b\" stroke-width=\"3\"/>\n";
  const std::string note = "several updates reach the cell (xN): reduction=" + std::string(reduction_name(l.reduction)) +
                           (l.reduction == Reduction::kNone ? ", the last in row-major order of G wins" : ", combined in row-major order of G") +
                           "; output cells take the colour of the last update reaching them, grey text: kept from the input; "
                           "white updates: overwritten by a later one";
  out.legend << "<text x=\"" << num(kMargin + 32) << "\" y=\"" << num(y) << "\">" << esc(note) << "</text>\n";
  width = std::max(width, kMargin * 2 + 32 + text_width(note));
  y = out.table(l, y + 26, &width);
  const std::string dropped_pattern =
      "<pattern id=\"dropped\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
      "<rect width=\"6\" height=\"6\" fill=\"#f2f2f2\"/><path d=\"M0,0 L6,6\" stroke=\"#9a9a9a\" stroke-width=\"1\"/></pattern>\n";
  return out.finish(op.name + ": how the scatter moves data", captions, width, y + kMargin - 6, dropped_pattern);
}

// The buffers a picture of shapes alone draws from (never read for values).
Tensor zeros(DType dtype, const Dims& shape) {
  Tensor t(dtype, shape);
  if (t.nbytes() > 0) std::memset(t.data(), 0, t.nbytes());
  return t;
}

Status error_status(std::string_view name) {
  try {
    throw;
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory while drawing " + std::string(name));
  }
}

/// The picture of a lowered scatter (a scatter op, or a segment op whose data are the updates):
/// the size checks, the trace, the chosen positions of G (by default also the first two that
/// reach one cell, to show how duplicates combine), then draw_scatter.
Status draw_lowered_scatter(const Lowering& l, const TensorView& in, const TensorView& idx, const TensorView& upd,
                            bool input_values, bool indices_given, bool updates_given, const SvgOptions& options,
                            std::string* svg) {
  MULTIGATHER_RETURN_IF_ERROR(check_cells("scatter shape G", l.shape.output_numel, options.max_cells));
  MULTIGATHER_RETURN_IF_ERROR(check_cells("lowered input view", l.input.numel(), options.max_cells));
  MULTIGATHER_RETURN_IF_ERROR(check_cells("lowered indices view", l.indices.numel(), options.max_cells));
  MULTIGATHER_RETURN_IF_ERROR(check_cells("lowered updates view", l.updates.numel(), options.max_cells));
  std::vector<CellTrace> cells;
  MULTIGATHER_RETURN_IF_ERROR(trace_lowering(l, &cells, options.max_cells));
  std::vector<std::int64_t> chosen;
  MULTIGATHER_RETURN_IF_ERROR(choose_cells(options.cells, l.shape.output_shape, "position",
                                           "G (the scatter shape: one position per update)", &chosen));
  if (options.cells.empty() && static_cast<std::int64_t>(chosen.size()) < l.shape.output_numel) {
    // Show how duplicates combine: add the first two positions that reach one cell.
    std::vector<std::int64_t> first(static_cast<std::size_t>(l.input.numel()), -1);
    for (const CellTrace& t : cells) {
      if (t.input < 0) continue;
      std::int64_t& f = first[static_cast<std::size_t>(t.input)];
      if (f < 0) { f = t.output; continue; }
      for (std::int64_t o : {f, t.output}) {
        if (std::find(chosen.begin(), chosen.end(), o) == chosen.end()) chosen.push_back(o);
      }
      break;
    }
  }
  *svg = draw_scatter(l, in, idx, upd, input_values, indices_given, updates_given, cells, chosen);
  return Status::Ok();
}

// Gathered rows (embedding_bag): the core indices, each update row's bag, are shapes only in
// the lowering (the fused kernel reads the bags' starts); the picture traces them, so they are
// made here (bag_of_rows, into *storage) and the lowering's index views pointed at them.
void with_bag_ids(Lowering* l, Tensor* storage) {
  if (l->gathered == nullptr || l->indices.data != nullptr) return;
  const std::vector<std::int64_t> bag = bag_of_rows(*l->gathered);
  if (bag.empty()) return;
  *storage = Tensor(DType::kInt64, Dims{static_cast<std::int64_t>(bag.size())});
  std::copy(bag.begin(), bag.end(), storage->data_as<std::int64_t>());
  l->indices.data = storage->data();
  if (l->index_errors.indices.data == nullptr) l->index_errors.indices.data = storage->data();
}

}  // namespace

Status explain_svg(std::string_view name, const TensorView& input, const TensorView& indices,
                   const Attributes& attrs, const SvgOptions& options, std::string* svg) {
  try {
    const bool input_values = input.data != nullptr, indices_given = indices.data != nullptr;
    MULTIGATHER_RETURN_IF_ERROR(check_cells("input", input.numel(), options.max_cells));
    MULTIGATHER_RETURN_IF_ERROR(check_cells("indices", indices.numel(), options.max_cells));
    Tensor made_indices, made_input;
    TensorView idx = indices, in = input;
    if (!indices_given) {
      MULTIGATHER_RETURN_IF_ERROR(position_indices(name, input.shape, input.dtype, indices.shape, indices.dtype, attrs, &made_indices));
      idx = made_indices.view();
    }
    if (!input_values) {  // a real buffer, so that element offsets are addresses (never read)
      made_input = zeros(input.dtype, input.shape);
      in = made_input.view();
    }
    Lowering l;
    MULTIGATHER_RETURN_IF_ERROR(lower_op(name, in, idx, attrs, &l));
    if (l.kind == OpKind::kScatter) {  // a segment op: its data are the scattered updates
      Tensor bag_ids;
      with_bag_ids(&l, &bag_ids);
      return draw_lowered_scatter(l, in, idx, in, true, indices_given, input_values, options, svg);
    }
    MULTIGATHER_RETURN_IF_ERROR(check_cells("output", l.shape.output_numel, options.max_cells));
    MULTIGATHER_RETURN_IF_ERROR(check_cells("lowered input view", l.input.numel(), options.max_cells));
    MULTIGATHER_RETURN_IF_ERROR(check_cells("lowered indices view", l.indices.numel(), options.max_cells));
    std::vector<CellTrace> cells;
    MULTIGATHER_RETURN_IF_ERROR(trace_lowering(l, &cells, options.max_cells));
    std::vector<std::int64_t> chosen;
    MULTIGATHER_RETURN_IF_ERROR(choose_cells(options.cells, l.output_shape, "output cell", "the output", &chosen));
    *svg = draw(l, in, idx, input_values, indices_given, cells, chosen);
    return Status::Ok();
  } catch (...) {
    return error_status(name);
  }
}

Status explain_svg(std::string_view name, const TensorView& input, const TensorView& indices,
                   const TensorView& updates, const Attributes& attrs, const SvgOptions& options,
                   std::string* svg) {
  try {
    const bool input_values = input.data != nullptr, indices_given = indices.data != nullptr,
               updates_given = updates.data != nullptr;
    MULTIGATHER_RETURN_IF_ERROR(check_cells("input", input.numel(), options.max_cells));
    MULTIGATHER_RETURN_IF_ERROR(check_cells("indices", indices.numel(), options.max_cells));
    MULTIGATHER_RETURN_IF_ERROR(check_cells("updates", updates.numel(), options.max_cells));
    Tensor made_indices, made_input, made_updates;
    TensorView idx = indices, in = input, upd = updates;
    if (!indices_given) {
      MULTIGATHER_RETURN_IF_ERROR(position_indices(name, input.shape, input.dtype, indices.shape, indices.dtype,
                                                   updates.shape, attrs, &made_indices));
      idx = made_indices.view();
    }
    if (!input_values) {
      made_input = zeros(input.dtype, input.shape);
      in = made_input.view();
    }
    if (!updates_given) {
      made_updates = zeros(input.dtype, updates.shape);
      upd = made_updates.view();
    }
    Lowering l;
    MULTIGATHER_RETURN_IF_ERROR(lower_op(name, in, idx, upd, attrs, &l));
    return draw_lowered_scatter(l, in, idx, upd, input_values, indices_given, updates_given, options, svg);
  } catch (...) {
    return error_status(name);
  }
}

}  // namespace multigather
