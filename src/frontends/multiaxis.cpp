// The operator itself as a registry entry: gather_multiaxis(input, indices, axes, options).
#include "frontends/recipes.hpp"

namespace multigather::frontends {

void append_core_ops(std::vector<OpSpec>* ops) {
  ops->push_back(
      {"gather_multiaxis", "core", "multiaxis", "gather_multiaxis(input, indices, axes, index_mode, negative_indices, fill_value)",
       "output[o] = input[i], i[d] = o[d] (d not in axes, broadcast), i[axes[j]] = indices[q.., q_last*c + j]",
       "docs/spec.md section 1", "input", "indices",
       {{"axes", AttrType::kIntList, "", {}, "input dimensions addressed by each coordinate, in order"},
        {"index_mode", AttrType::kEnum, "error", {"error", "clamp", "wrap", "fill"}, "out-of-range policy"},
        {"negative_indices", AttrType::kBool, "true", {}, "v < 0 becomes v + n first"},
        {"fill_value", AttrType::kScalar, "0", {}, "value of out-of-range elements when index_mode=fill"}},
       [](const TensorView& x, const TensorView& i, const AttributeValues& a, Lowering* o) {
         // The identity lowering: the core's own checks and messages, no op prefix.
         o->input = x;
         o->indices = i;
         o->axes = a.get_ints("axes");
         IndexMode mode = IndexMode::kError;
         parse_index_mode(a.get_enum("index_mode"), &mode);
         set_policy(o, mode, a.get_bool("negative_indices"));
         o->options.fill_value = *a.get_scalar("fill_value");
         MULTIGATHER_RETURN_IF_ERROR(finish_core_shaped(o));
         return check_indices_dtype(i.dtype);
       }});

  OpSpec scatter{
      "scatter_multiaxis", "core", "scatter",
      "scatter_multiaxis(input, indices, updates, axes, reduction, index_mode, negative_indices, include_input)",
      "output = input; for o in G (row-major): output[i(o)] = combine(output[i(o)], updates[o]), "
      "i(o) = the position gather_multiaxis reads for o",
      "docs/spec.md section 4", "input", "indices",
      {{"axes", AttrType::kIntList, "", {}, "input dimensions addressed by each coordinate, in order"},
       {"reduction", AttrType::kEnum, "none", {"none", "add", "mul", "min", "max"},
        "how updates reaching one element combine (none: the last in row-major order wins)"},
       {"index_mode", AttrType::kEnum, "error", {"error", "clamp", "wrap", "drop"}, "out-of-range policy (drop: skip the update)"},
       {"negative_indices", AttrType::kBool, "true", {}, "v < 0 becomes v + n first"},
       {"include_input", AttrType::kBool, "true", {}, "add/mul/min/max start from input (false: from the first update)"}},
      nullptr};
  scatter.kind = OpKind::kScatter;
  scatter.lower_scatter = [](const TensorView& x, const TensorView& i, const TensorView& u,
                             const AttributeValues& a, Lowering* o) {
    // The identity lowering: the core's own checks and messages, no op prefix.
    o->input = x;
    o->indices = i;
    o->updates = u;
    o->axes = a.get_ints("axes");
    IndexMode mode = IndexMode::kError;
    parse_index_mode(a.get_enum("index_mode"), &mode);
    set_policy(o, mode, a.get_bool("negative_indices"));
    parse_reduction(a.get_enum("reduction"), &o->reduction);
    o->include_input = a.get_bool("include_input");
    MULTIGATHER_RETURN_IF_ERROR(finish_scatter(o));
    return check_indices_dtype(i.dtype);
  };
  ops->push_back(std::move(scatter));
}

}  // namespace multigather::frontends
