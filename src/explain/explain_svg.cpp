// Pictures of a gather (multigather/lowering.hpp: trace_lowering, position_indices,
// explain_svg): `multigather explain OP --svg FILE` and multigather.explain(..., format="svg").
//
// Everything is drawn from the Lowering, the validated core call that execute runs: the grids
// are its input view, its indices view (actual and logical shape) and its core output; the links
// come from trace_lowering, the SPEC formula applied to those views (the tests check it against
// the kernel's own result). The SVG is plain text, written with fixed-precision numbers only,
// so the same call gives the same bytes everywhere (docs/gallery is compared byte for byte).
//
// This file holds the entry points: the trace (which input element each output element takes),
// the position indices of a picture of shapes alone, and explain_svg's checks and choices before
// it draws. The primitives of the pictures are explain_svg_canvas.cpp, the pictures themselves
// explain_svg_draw.cpp (explain_svg.hpp).
#include <algorithm>
#include <cstring>

#include "api/engine.hpp"  // stepped_updates
#include "core/index_resolve.hpp"
#include "core/odometer.hpp"
#include "core/index_value.hpp"
#include "explain/explain_svg.hpp"
#include "frontends/recipes.hpp"
#include "plan/index_errors.hpp"

namespace multigather {
namespace {

// The one resolver's outcomes are explain's Resolution values, up to kWrapped.
static_assert(static_cast<int>(Resolution::kInRange) == static_cast<int>(detail::IndexResolution::kInRange));
static_assert(static_cast<int>(Resolution::kNegative) == static_cast<int>(detail::IndexResolution::kNegative));
static_assert(static_cast<int>(Resolution::kClamped) == static_cast<int>(detail::IndexResolution::kClamped));
static_assert(static_cast<int>(Resolution::kWrapped) == static_cast<int>(detail::IndexResolution::kWrapped));

using detail::svg::dot;
using detail::svg::draw;
using detail::svg::draw_scatter;
using detail::svg::ravel;
using detail::svg::unravel;
using frontends::str;

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
          return OutOfRange(l.op + ": " +
                            detail::out_of_range_text(p, v, d, size, o.index_mode, o.negative_indices) +
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
    return Status(StatusCode::kInvalidArgument,
                  "the " + what + " has " + str(n) + " cells; pictures are drawn up to " + str(max_cells) +
                      " cells (choose smaller shapes)",
                  StatusReason::kPictureTooLarge);
  }
  return Status::Ok();
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
  if (l.updates_step.kind == UpdatesStep::Kind::kNone || l.updates.data == nullptr) {
    *svg = draw_scatter(l, in, idx, upd, input_values, indices_given, updates_given, cells, chosen);
    return Status::Ok();
  }
  // The lowering's step on the updates (alpha, a negation): the picture labels the values the
  // engine scatters, as its output cells combine them.
  Lowering stepped = l;
  const ExecutionContext host;
  const detail::EngineOf cpu(Device::kCPU, host);
  detail::Temporary storage;
  MULTIGATHER_RETURN_IF_ERROR(detail::stepped_updates(l, l.updates, cpu.get(), nullptr, &storage, &stepped.updates));
  stepped.updates_step = UpdatesStep();
  *svg = draw_scatter(stepped, in, idx, upd, input_values, indices_given, updates_given, cells, chosen);
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
