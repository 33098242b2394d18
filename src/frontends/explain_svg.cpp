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

#include "frontends/lowering.hpp"

namespace multigather {
namespace {

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

std::string int128_str(__int128 v) {
  if (v >= INT64_MIN && v <= INT64_MAX) return str(static_cast<std::int64_t>(v));
  return std::to_string(static_cast<unsigned long long>(v));
}

void write_index(std::byte* p, DType t, std::int64_t v) {
  switch (t) {
    case DType::kInt8: { auto x = static_cast<std::int8_t>(v); std::memcpy(p, &x, 1); break; }
    case DType::kUInt8: { auto x = static_cast<std::uint8_t>(v); std::memcpy(p, &x, 1); break; }
    case DType::kInt16: { auto x = static_cast<std::int16_t>(v); std::memcpy(p, &x, 2); break; }
    case DType::kUInt16: { auto x = static_cast<std::uint16_t>(v); std::memcpy(p, &x, 2); break; }
    case DType::kInt32: { auto x = static_cast<std::int32_t>(v); std::memcpy(p, &x, 4); break; }
    case DType::kUInt32: { auto x = static_cast<std::uint32_t>(v); std::memcpy(p, &x, 4); break; }
    case DType::kInt64: { std::memcpy(p, &v, 8); break; }
    case DType::kUInt64: { auto x = static_cast<std::uint64_t>(v); std::memcpy(p, &x, 8); break; }
    default: break;
  }
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
  if (frontends::read_index(p, t, &iv)) return int128_str(iv);
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
    MULTIGATHER_RETURN_IF_ERROR(frontends::find_out_of_range(l, l.index_errors.indices));
  }
  const bool is_signed = !is_unsigned_integer(l.indices.dtype);
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
      frontends::read_index(static_cast<const std::byte*>(l.indices.data) + dot(q, l.indices.strides) * es,
                            l.indices.dtype, &v);
      t.indices.push_back(ravel(q, l.indices.shape));
      t.values.push_back(saturate(v));
      const std::int64_t size = in[d];
      const __int128 original = v;
      Resolution res = Resolution::kInRange;
      if (o.index_mode != IndexMode::kWrap && o.negative_indices && is_signed && v < 0) {
        v += size;
        res = Resolution::kNegative;
      }
      const bool inside = v >= 0 && v < size;
      if (!inside) {
        if (o.index_mode == IndexMode::kFill) {
          res = Resolution::kFilled;
          filled = true;
        } else if (o.index_mode == IndexMode::kError || size == 0) {
          std::string p;
          for (int e = 0; e < r; ++e) p += (e ? "," : "") + str(q[e]);
          return OutOfRange(l.op + ": indices[" + p + "] = " + int128_str(original) +
                            " is out of range for axis " + str(d) + " of size " + str(size) +
                            " (the core call's indices view, index_mode=" +
                            std::string(index_mode_name(o.index_mode)) + ")");
        } else if (o.index_mode == IndexMode::kClamp) {
          v = v < 0 ? 0 : size - 1;
          res = Resolution::kClamped;
        } else {  // wrap
          v = ((v % size) + size) % size;
          res = Resolution::kWrapped;
        }
      }
      t.resolutions.push_back(res);
      if (static_cast<int>(res) > static_cast<int>(t.resolution)) t.resolution = res;
      if (!filled) i[d] = static_cast<std::int64_t>(v);
    }
    t.input = filled ? -1 : ravel(i, in);
    cells->push_back(std::move(t));
    for (int d = r - 1; d >= 0; --d) {
      if (++pos[d] < out_shape[d]) break;
      pos[d] = 0;
    }
  }
  return Status::Ok();
}

Status position_indices(std::string_view name, const Dims& input_shape, DType input_dtype,
                        const Dims& indices_shape, DType indices_dtype, const Attributes& attrs,
                        Tensor* indices) {
  try {
    MULTIGATHER_RETURN_IF_ERROR(check_indices_dtype(indices_dtype));
    Tensor t(indices_dtype, indices_shape);
    if (t.nbytes() > 0) std::memset(t.data(), 0, t.nbytes());
    Lowering l;
    MULTIGATHER_RETURN_IF_ERROR(lower_op(name, TensorView(nullptr, input_dtype, input_shape), t.view(), attrs, &l));
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

namespace {

Status check_cells(const std::string& what, std::int64_t n, std::int64_t max_cells) {
  if (n > max_cells) {
    return InvalidArgument("the " + what + " has " + str(n) + " cells; pictures are drawn up to " +
                           str(max_cells) + " cells (choose smaller shapes)");
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
  const auto in_es = static_cast<std::int64_t>(element_size(l.input.dtype));
  const auto idx_es = static_cast<std::int64_t>(element_size(l.indices.dtype));

  // Framework storage offsets of the core views' elements.
  const std::byte* in_base = static_cast<const std::byte*>(l.owned_input ? l.owned_input->data() : fw_input.data);
  const auto input_offset = [&](std::int64_t core) {
    return (static_cast<const std::byte*>(l.input.data) - in_base) / in_es + dot(unravel(core, l.input.shape), l.input.strides);
  };
  const std::byte* idx_base = static_cast<const std::byte*>(l.owned_indices ? nullptr : fw_indices.data);
  const auto indices_offset = [&](std::int64_t core) -> std::int64_t {
    if (idx_base == nullptr) return -1;  // made by the lowering
    return (static_cast<const std::byte*>(l.indices.data) - idx_base) / idx_es + dot(unravel(core, l.indices.shape), l.indices.strides);
  };
  const auto input_element = [&](std::int64_t core) {
    return static_cast<const std::byte*>(l.input.data) + dot(unravel(core, l.input.shape), l.input.strides) * in_es;
  };
  const auto index_value = [&](std::int64_t core) {
    __int128 v = 0;
    frontends::read_index(static_cast<const std::byte*>(l.indices.data) + dot(unravel(core, l.indices.shape), l.indices.strides) * idx_es,
                          l.indices.dtype, &v);
    return int128_str(v);
  };

  // Labels.
  std::vector<std::string> in_label(static_cast<std::size_t>(n_in));
  for (std::int64_t e = 0; e < n_in; ++e) {
    in_label[static_cast<std::size_t>(e)] = input_values ? element_str(input_element(e), l.input.dtype) : str(input_offset(e));
  }
  const std::string fill_label = input_values ? l.options.fill_value.to_string() : "fill";
  std::vector<std::string> out_label;
  for (const CellTrace& t : cells) out_label.push_back(t.input < 0 ? fill_label : in_label[static_cast<std::size_t>(t.input)]);
  std::vector<std::string> idx_label(static_cast<std::size_t>(n_idx));
  for (std::int64_t e = 0; e < n_idx; ++e) idx_label[static_cast<std::size_t>(e)] = k > 0 ? index_value(e) : ".";
  const Dims& L = s.logical_indices_shape;
  std::int64_t n_log = 0;
  element_count(L, &n_log);
  std::vector<std::string> log_label(static_cast<std::size_t>(n_log));
  for (std::int64_t e = 0; e < n_log; ++e) {
    if (k == 0) { log_label[static_cast<std::size_t>(e)] = "."; continue; }
    const Dims q = unravel(e, L);
    std::string t = c > 1 ? "(" : "";
    for (int j = 0; j < c; ++j) {
      Dims a = q;
      a[a.size() - 1] = q[q.size() - 1] * c + j;
      t += (j ? "," : "") + idx_label[static_cast<std::size_t>(ravel(a, l.indices.shape))];
    }
    log_label[static_cast<std::size_t>(e)] = t + (c > 1 ? ")" : "");
  }
  const auto cell_width = [](const std::vector<std::string>& labels) {
    std::size_t m = 1;
    for (const auto& t : labels) m = std::max(m, t.size());
    return std::max(30.0, std::ceil(static_cast<double>(m) * kCharWidth + 12));
  };

  // Captions.
  const auto with = [](const std::string& a) { return a.empty() ? std::string() : "; " + a; };
  std::vector<std::pair<std::string, std::string>> captions;  // (text, style)
  captions.push_back({op.name + "(" + op.input_name + " " + to_string(fw_input.shape) + " " +
                          std::string(dtype_name(fw_input.dtype)) + ", " + op.indices_name + " " +
                          to_string(fw_indices.shape) + " " + std::string(dtype_name(fw_indices.dtype)) +
                          with(l.attributes.to_string()) + ")  ->  output " + to_string(l.output_shape),
                      " font-weight=\"bold\" font-size=\"13\""});
  captions.push_back({"lowered: gather_multiaxis(input " + to_string(l.input.shape) + ", indices " +
                          to_string(l.indices.shape) + ", axes " + frontends::shape_str(l.axes) +
                          ", index_mode=" + std::string(index_mode_name(l.options.index_mode)) +
                          ", negative_indices=" + (l.options.negative_indices ? "true" : "false") +
                          (l.options.index_mode == IndexMode::kFill ? ", fill_value=" + l.options.fill_value.to_string() : "") +
                          ")  ->  core output " + to_string(l.core_output_shape), ""});
  captions.push_back({"formula: " + op.formula, ""});
  captions.push_back({"lowered: " + frontends::explain_formula(l), ""});
  captions.push_back({frontends::explain_resolution(l), ""});
  for (const std::string& n : l.notes) captions.push_back({"note: " + n, ""});
  captions.push_back({std::string(input_values ? "values: cells show the input's values" :
                                                 "positions: input cells show their C-order position in " + op.input_name + " (as if it were np.arange)") +
                          (indices_given ? "; indices as given" :
                           l.owned_indices ? "; the framework's indices are all 0 and the lowering computed the indices drawn (shapes alone)" :
                                           "; indices filled n-1, n-2, ..., 0, n-1, ... per coordinate (shapes alone)"),
                      " fill=\"#555555\""});

  // Grids, left to right: input, output, indices (actual), indices (logical).
  Grid gin, gout, gidx, glog;
  gin.layout(l.input.shape, cell_width(in_label));
  gout.layout(s.output_shape, cell_width(out_label));
  gidx.layout(l.indices.shape, cell_width(idx_label));
  glog.layout(L, cell_width(log_label));
  struct Column { Grid* grid; std::string title, note; };
  std::vector<Column> columns = {
      {&gin, "input " + to_string(l.input.shape), dims_note(l, true)},
      {&gout, "output " + to_string(s.output_shape), l.core_output_shape == l.output_shape ? "" : "reshaped to " + to_string(l.output_shape)},
      {&gidx, "indices, actual " + to_string(l.indices.shape), k > 0 ? "c = " + str(c) + " coordinates per lookup" : "k = 0: values never read"},
      {&glog, "indices, logical " + to_string(L), dims_note(l, false)},
  };
  const double margin = 20, gap = 70, caption_line = 17;
  double top = margin + 6 + caption_line * static_cast<double>(captions.size()) + 18;
  const double title_h = 34;
  double x = margin, grids_h = 0;
  for (Column& col : columns) {
    col.grid->x0 = x;
    col.grid->y0 = top + title_h;
    const double w = std::max({col.grid->width, text_width(col.title), text_width(col.note)});
    x += w + gap;
    grids_h = std::max(grids_h, col.grid->height);
  }
  double width = x - gap + margin;
  for (std::size_t i = 0; i < captions.size(); ++i) {  // the first is bold 13 px: about 1.2 times wider
    width = std::max(width, margin * 2 + text_width(captions[i].first) * (i == 0 ? 1.22 : 1.02));
  }

  Svg out;
  // Grid titles.
  for (const Column& col : columns) {
    out.text(col.grid->x0, top + 12, col.title, " font-weight=\"bold\"");
    if (!col.note.empty()) out.text(col.grid->x0, top + 26, col.note, " fill=\"#555555\"");
  }
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
  const auto rect = [&](const Grid& g, std::int64_t e, const std::string& fill, Resolution res,
                        const std::string& attrs) {
    const auto [cx, cy] = g.at(e);
    const Style st = style_of(res);
    out.body << "<rect x=\"" << num(cx) << "\" y=\"" << num(cy) << "\" width=\"" << num(g.cw) << "\" height=\""
             << num(g.ch) << "\" fill=\"" << fill << "\" stroke=\"" << st.stroke << "\" stroke-width=\"" << st.width << "\"";
    if (*st.dash) out.body << " stroke-dasharray=\"" << st.dash << "\"";
    out.body << attrs << "/>\n";
  };
  const auto label = [&](const Grid& g, std::int64_t e, const std::string& t) {
    const auto [cx, cy] = g.at(e);
    out.text(cx + g.cw / 2, cy + g.ch / 2 + 4, t, " text-anchor=\"middle\"");
  };
  // Input cells: their own colour when some output cell takes them, white otherwise.
  for (std::int64_t e = 0; e < n_in; ++e) {
    rect(gin, e, in_read[static_cast<std::size_t>(e)] ? cell_colour(e) : "#ffffff", Resolution::kInRange,
         " id=\"in-" + str(e) + "\" class=\"input\" data-input=\"" + str(input_offset(e)) + "\"");
    label(gin, e, in_label[static_cast<std::size_t>(e)]);
  }
  // Output cells: the colour of the input cell they take.
  for (std::size_t n = 0; n < cells.size(); ++n) {
    const CellTrace& t = cells[n];
    std::string idx;
    for (std::size_t j = 0; j < t.indices.size(); ++j) idx += (j ? "," : "") + str(indices_offset(t.indices[j]));
    std::string res;
    for (std::size_t j = 0; j < t.resolutions.size(); ++j) res += (j ? "," : "") + std::string(resolution_name(t.resolutions[j]));
    rect(gout, t.output, t.input < 0 ? "url(#filled)" : cell_colour(t.input), t.resolution,
         " id=\"out-" + str(t.framework_output) + "\" class=\"output\" data-output=\"" + str(t.framework_output) +
             "\" data-input=\"" + str(t.input < 0 ? -1 : input_offset(t.input)) + "\" data-indices=\"" + idx +
             "\" data-resolution=\"" + (res.empty() ? "in-range" : res) + "\"");
    label(gout, t.output, out_label[n]);
  }
  for (std::int64_t e = 0; e < n_idx; ++e) {
    rect(gidx, e, k > 0 ? "#eef2f7" : "#f4f4f4", idx_res[static_cast<std::size_t>(e)],
         " id=\"idx-" + str(e) + "\" class=\"indices\" data-offset=\"" + str(indices_offset(e)) +
             "\" data-value=\"" + (k > 0 ? idx_label[static_cast<std::size_t>(e)] : std::string()) + "\"");
    label(gidx, e, idx_label[static_cast<std::size_t>(e)]);
  }
  for (std::int64_t e = 0; e < n_log; ++e) {
    rect(glog, e, "#ffffff", Resolution::kInRange, " id=\"log-" + str(e) + "\" class=\"logical\"");
    label(glog, e, log_label[static_cast<std::size_t>(e)]);
  }

  // The chosen lookups: arrows from the input cell and from each indices cell that gave a
  // coordinate, numbered badges on the cells they link.
  std::vector<std::size_t> by_framework(cells.size());
  for (std::size_t n = 0; n < cells.size(); ++n) {
    const auto f = static_cast<std::size_t>(cells[n].framework_output);
    if (f < by_framework.size()) by_framework[f] = n;
  }
  std::ostringstream arrows, badges;
  const auto badge = [&](const Grid& g, std::int64_t e, int number, const char* colour, int slot) {
    const auto [cx, cy] = g.at(e);
    const double bx = cx + 2 + 13 * slot, by = cy - 5;
    badges << "<circle cx=\"" << num(bx + 5) << "\" cy=\"" << num(by + 5) << "\" r=\"6.5\" fill=\"" << colour
           << "\"/><text x=\"" << num(bx + 5) << "\" y=\"" << num(by + 8.5) << "\" text-anchor=\"middle\" font-size=\"9\" fill=\"#ffffff\">"
           << number << "</text>\n";
  };
  std::vector<int> in_slots(static_cast<std::size_t>(n_in), 0), idx_slots(static_cast<std::size_t>(n_idx), 0);
  for (std::size_t m = 0; m < chosen_outputs.size(); ++m) {
    const CellTrace& t = cells[by_framework[static_cast<std::size_t>(chosen_outputs[m])]];
    const char* colour = kLinkColours[m % kLinkColourCount];
    const std::string marker = " marker-end=\"url(#arrow" + str(static_cast<std::int64_t>(m % kLinkColourCount)) + ")\"";
    const int number = static_cast<int>(m) + 1;
    const auto [ox, oy] = gout.at(t.output);
    badge(gout, t.output, number, colour, 0);
    if (t.input >= 0) {
      const auto [ix, iy] = gin.at(t.input);
      arrows << "<line class=\"link\" data-output=\"" << t.framework_output << "\" x1=\"" << num(ix + gin.cw - 4) << "\" y1=\""
             << num(iy + gin.ch / 2) << "\" x2=\"" << num(ox + 2) << "\" y2=\"" << num(oy + gout.ch / 2)
             << "\" stroke=\"" << colour << "\" stroke-width=\"1.6\"" << marker << "/>\n";
      badge(gin, t.input, number, colour, in_slots[static_cast<std::size_t>(t.input)]++ % 4);
    }
    for (std::size_t j = 0; j < t.indices.size(); ++j) {
      const auto [jx, jy] = gidx.at(t.indices[j]);
      arrows << "<line class=\"index-link\" data-output=\"" << t.framework_output << "\" x1=\"" << num(jx + 4) << "\" y1=\""
             << num(jy + gidx.ch / 2 + 2.0 * static_cast<double>(j)) << "\" x2=\"" << num(ox + gout.cw - 2) << "\" y2=\""
             << num(oy + gout.ch / 2) << "\" stroke=\"" << colour << "\" stroke-width=\"1.2\" stroke-dasharray=\"4,3\""
             << marker << "/>\n";
      badge(gidx, t.indices[j], number, colour, idx_slots[static_cast<std::size_t>(t.indices[j])]++ % 4);
    }
  }

  // Legend and the per-dimension table below the grids.
  double y = top + title_h + grids_h + 30;
  std::ostringstream legend;
  const struct { Resolution r; const char* text; } kinds[] = {
      {Resolution::kInRange, "in range"},
      {Resolution::kNegative, "negative index, + n"},
      {Resolution::kClamped, "clamped"},
      {Resolution::kWrapped, "wrapped (mod n)"},
      {Resolution::kFilled, "filled (fill_value)"},
  };
  double lx = margin;
  for (const auto& kind : kinds) {
    const Style st = style_of(kind.r);
    legend << "<rect x=\"" << num(lx) << "\" y=\"" << num(y - 12) << "\" width=\"26\" height=\"16\" fill=\""
           << (kind.r == Resolution::kFilled ? "url(#filled)" : "#ffffff") << "\" stroke=\"" << st.stroke
           << "\" stroke-width=\"" << st.width << "\"" << (*st.dash ? std::string(" stroke-dasharray=\"") + st.dash + "\"" : "") << "/>\n";
    legend << "<text x=\"" << num(lx + 32) << "\" y=\"" << num(y) << "\">" << esc(kind.text) << "</text>\n";
    lx += 32 + text_width(kind.text) + 18;
  }
  legend << "<text x=\"" << num(lx) << "\" y=\"" << num(y) << "\" fill=\"#555555\">"
         << esc("output cells take their input cell's colour; arrows: solid from the input cell, dashed from the indices cells") << "</text>\n";
  width = std::max(width, lx + text_width("output cells take their input cell's colour; arrows: solid from the input cell, dashed from the indices cells") + margin);
  y += 26;
  const std::string table = frontends::explain_dimension_table(l);
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    legend << "<text x=\"" << num(margin) << "\" y=\"" << num(y) << "\" xml:space=\"preserve\">" << esc(line) << "</text>\n";
    width = std::max(width, margin * 2 + text_width(line));
    y += 15;
  }
  const double height = y + margin - 6;

  std::ostringstream svg;
  svg << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << num(std::ceil(width)) << "\" height=\""
      << num(std::ceil(height)) << "\" viewBox=\"0 0 " << num(std::ceil(width)) << " " << num(std::ceil(height))
      << "\" font-family=\"DejaVu Sans Mono, monospace\" font-size=\"11\">\n"
      << "<title>" << esc(op.name) << ": how the gather moves data</title>\n"
      << "<desc>" << esc(captions[0].first + "\n" + captions[1].first) << "</desc>\n<defs>\n"
      << "<pattern id=\"filled\" patternUnits=\"userSpaceOnUse\" width=\"6\" height=\"6\">"
         "<rect width=\"6\" height=\"6\" fill=\"#d5d5d5\"/><path d=\"M0,6 L6,0\" stroke=\"#8a8a8a\" stroke-width=\"1\"/></pattern>\n";
  for (int m = 0; m < kLinkColourCount; ++m) {
    svg << "<marker id=\"arrow" << m << "\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" "
           "orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"" << kLinkColours[m] << "\"/></marker>\n";
  }
  svg << "</defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  double cy = margin + 8;
  for (const auto& cap : captions) {
    svg << "<text x=\"" << num(margin) << "\" y=\"" << num(cy) << "\"" << cap.second << ">" << esc(cap.first) << "</text>\n";
    cy += caption_line;
  }
  svg << out.body.str() << arrows.str() << badges.str() << legend.str() << "</svg>\n";
  return svg.str();
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
      made_input = Tensor(input.dtype, input.shape);
      if (made_input.nbytes() > 0) std::memset(made_input.data(), 0, made_input.nbytes());
      in = made_input.view();
    }
    Lowering l;
    MULTIGATHER_RETURN_IF_ERROR(lower_op(name, in, idx, attrs, &l));
    MULTIGATHER_RETURN_IF_ERROR(check_cells("output", l.shape.output_numel, options.max_cells));
    MULTIGATHER_RETURN_IF_ERROR(check_cells("lowered input view", l.input.numel(), options.max_cells));
    MULTIGATHER_RETURN_IF_ERROR(check_cells("lowered indices view", l.indices.numel(), options.max_cells));
    std::vector<CellTrace> cells;
    MULTIGATHER_RETURN_IF_ERROR(trace_lowering(l, &cells, options.max_cells));
    const std::int64_t n = l.shape.output_numel;
    std::vector<std::int64_t> chosen = options.cells;
    for (std::int64_t cell : chosen) {
      if (cell < 0 || cell >= n) {
        return InvalidArgument("cells: output cell " + str(cell) + " is outside the output, which has " + str(n) +
                               " cells (valid range [0, " + str(n) + "), C order of " + to_string(l.output_shape) + ")");
      }
    }
    if (chosen.empty()) {
      if (n <= 6) {
        for (std::int64_t e = 0; e < n; ++e) chosen.push_back(e);
      } else {
        for (std::int64_t e : {std::int64_t{0}, n / 3, 2 * n / 3, n - 1}) {
          if (std::find(chosen.begin(), chosen.end(), e) == chosen.end()) chosen.push_back(e);
        }
      }
    }
    *svg = draw(l, in, idx, input_values, indices_given, cells, chosen);
    return Status::Ok();
  } catch (const Error& e) {
    return Status(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return Status(StatusCode::kInternal, "out of memory while drawing " + std::string(name));
  }
}

}  // namespace multigather
