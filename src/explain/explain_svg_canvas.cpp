// The primitives of explain's pictures (explain_svg.hpp): C-order positions, element text,
// colours, the grid layout (numpy's print layout), the SVG canvas with its cells, arrows, badges
// and legend, and the captions. The SVG is plain text, written with fixed-precision numbers only,
// so the same call gives the same bytes everywhere (docs/gallery is compared byte for byte).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "core/index_value.hpp"
#include "core/text.hpp"
#include "explain/explain_svg.hpp"
#include "explain/explain_text.hpp"

namespace multigather::detail::svg {

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

namespace {

std::string float_str(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  std::string s = buf;
  if (s.find_first_of(".en") == std::string::npos) s += ".";
  return s;
}

}  // namespace

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

namespace {

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

}  // namespace

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

void Grid::layout(const Dims& s, double cell_width) {
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

std::pair<double, double> Grid::at(std::int64_t flat) const {
  const Dims p = unravel(flat, shape);
  const int r = shape.size();
  double x = x0, y = y0;
  if (r >= 1) x += static_cast<double>(p[r - 1]) * cw;
  for (int d = 0; d + 1 < r; ++d) y += static_cast<double>(p[d]) * ystride[static_cast<std::size_t>(d)];
  return {x, y};
}

double text_width(const std::string& s) { return static_cast<double>(s.size()) * kCharWidth; }

void Svg::text(double x, double y, const std::string& s, const std::string& extra) {
  body << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\"" << extra << ">" << esc(s) << "</text>\n";
}

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

double cell_width(const std::vector<std::string>& labels, double extra) {
  std::size_t m = 1;
  for (const auto& t : labels) m = std::max(m, t.size());
  return std::max(30.0, std::ceil(static_cast<double>(m) * kCharWidth + 12 + extra));
}

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

double grids_top(const std::vector<Caption>& captions) {
  return kMargin + 6 + kCaptionLine * static_cast<double>(captions.size()) + 18;
}

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

void Canvas::titles(const std::vector<Column>& columns, double top) {
  for (const Column& col : columns) {
    out.text(col.grid->x0, top + 12, col.title, " font-weight=\"bold\"");
    if (!col.note.empty()) out.text(col.grid->x0, top + 26, col.note, " fill=\"#555555\"");
  }
}

void Canvas::rect(const Grid& g, std::int64_t e, const std::string& fill, Resolution res, const std::string& attrs) {
  const auto [cx, cy] = g.at(e);
  const Style st = style_of(res);
  out.body << "<rect x=\"" << num(cx) << "\" y=\"" << num(cy) << "\" width=\"" << num(g.cw) << "\" height=\""
           << num(g.ch) << "\" fill=\"" << fill << "\" stroke=\"" << st.stroke << "\" stroke-width=\"" << st.width << "\"";
  if (*st.dash) out.body << " stroke-dasharray=\"" << st.dash << "\"";
  out.body << attrs << "/>\n";
}

void Canvas::label(const Grid& g, std::int64_t e, const std::string& t, const std::string& extra) {
  const auto [cx, cy] = g.at(e);
  out.text(cx + g.cw / 2, cy + g.ch / 2 + 4, t, " text-anchor=\"middle\"" + extra);
}

void Canvas::badge(const Grid& g, std::int64_t e, int number, const char* colour, int slot) {
  const auto [cx, cy] = g.at(e);
  const double bx = cx + 2 + 13 * slot, by = cy - 5;
  badges << "<circle cx=\"" << num(bx + 5) << "\" cy=\"" << num(by + 5) << "\" r=\"6.5\" fill=\"" << colour
         << "\"/><text x=\"" << num(bx + 5) << "\" y=\"" << num(by + 8.5) << "\" text-anchor=\"middle\" font-size=\"9\" fill=\"#ffffff\">"
         << number << "</text>\n";
}

void Canvas::link(const char* cls, std::int64_t output, double x1, double y1, double x2, double y2, const char* colour,
                  bool dashed, std::size_t m) {
  arrows << "<line class=\"" << cls << "\" data-output=\"" << output << "\" x1=\"" << num(x1) << "\" y1=\"" << num(y1)
         << "\" x2=\"" << num(x2) << "\" y2=\"" << num(y2) << "\" stroke=\"" << colour << "\" stroke-width=\""
         << (dashed ? "1.2\" stroke-dasharray=\"4,3" : "1.6") << "\" marker-end=\"url(#arrow"
         << m % kLinkColourCount << ")\"/>\n";
}

void Canvas::index_links(const Grid& gidx, const CellTrace& t, std::int64_t output, double tx, double ty, const char* colour,
                         std::size_t m, std::vector<int>& slots) {
  for (std::size_t j = 0; j < t.indices.size(); ++j) {
    const auto [jx, jy] = gidx.at(t.indices[j]);
    link("index-link", output, jx + 4, jy + gidx.ch / 2 + 2.0 * static_cast<double>(j), tx, ty, colour, true, m);
    badge(gidx, t.indices[j], static_cast<int>(m) + 1, colour, slots[static_cast<std::size_t>(t.indices[j])]++ % 4);
  }
}

double Canvas::resolution_legend(double y, Resolution last, const char* last_text, const std::string& note) {
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

double Canvas::table(const Lowering& l, double y, double* width) {
  std::istringstream lines(detail::explain_dimension_table(l));
  for (std::string line; std::getline(lines, line);) {
    legend << "<text x=\"" << num(kMargin) << "\" y=\"" << num(y) << "\" xml:space=\"preserve\">" << esc(line) << "</text>\n";
    *width = std::max(*width, kMargin * 2 + text_width(line));
    y += 15;
  }
  return y;
}

std::string Canvas::finish(const std::string& title, const std::vector<Caption>& captions, double width, double height,
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

std::string shown_caption(const Lowering& l, const OpSpec& op, bool input_values, bool indices_given) {
  return std::string(input_values ? "values: cells show the input's values" :
                                    "positions: input cells show their C-order position in " + op.input_name + " (as if it were np.arange)") +
         (indices_given ? "; indices as given" :
          l.owned_indices ? "; the framework's indices are all 0 and the lowering computed the indices drawn (shapes alone)" :
                          "; indices filled n-1, n-2, ..., 0, n-1, ... per coordinate (shapes alone)");
}

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

}  // namespace multigather::detail::svg
