// The pictures of explain_svg (explain_svg.hpp): draw, a gather's (input, output and indices
// grids; arrows from the input and indices cells to the chosen output cells), and draw_scatter, a
// scatter's or a segment op's (input, updates, output and indices grids; arrows from the update
// cells to their targets, duplicates combined as the reduction does). Everything is drawn from
// the Lowering and the trace of its cells (trace_lowering).
#include <algorithm>
#include <string>
#include <vector>

#include "core/text.hpp"
#include "explain/explain_svg.hpp"
#include "explain/explain_text.hpp"
#include "frontends/recipes.hpp"

namespace multigather::detail::svg {

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

namespace {

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

}  // namespace

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
  const void* in_base = l.owned_input ? l.owned_input->data()
                        : segment || l.input_is_constant ? l.input.data : fw_input.data;
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
  const bool in_values = input_values || l.owned_input != nullptr || l.input_is_constant;  // a lowering's zeros are values
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

}  // namespace multigather::detail::svg
