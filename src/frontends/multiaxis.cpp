// The operator itself as a registry entry: gather_multiaxis(input, indices, axes, options).
#include "frontends/recipes.hpp"

namespace multigather::frontends {

void append_core_ops(std::vector<OpSpec>* ops) {
  ops->push_back(
      {"gather_multiaxis", "core", "multiaxis", "gather_multiaxis(input, indices, axes, index_mode='error', negative_indices=True, fill_value=0)",
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
  ops->back().torch_op = true;

  OpSpec scatter{
      "scatter_multiaxis", "core", "scatter",
      "scatter_multiaxis(input, indices, updates, axes, reduction='none', index_mode='error', negative_indices=True, include_input=True)",
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
  scatter.torch_op = true;
  ops->push_back(std::move(scatter));
  // The core operators: the index_mode and negative_indices attributes are the policy.
  const IndexRule by_attributes{IndexMode::kError, true, "index_mode, negative_indices"};
  state_facts(ops, {
      {"gather_multiaxis", by_attributes,
       "docs/spec.md section 1: input of any dtype; indices integer with indices.rank == input.rank; axes: k "
       "distinct dims in [-r, r); the coordinates are folded into the last dimension of indices, whose size must "
       "be a multiple of c = max(k, 1), and the logical indices shape L is indices.shape with its last entry "
       "divided by c. A dim d not in axes broadcasts input.shape[d] and L[d] (equal, or one of them 1); a dim in "
       "axes has output size L[d]. fill_value (index_mode fill) must be representable in the input's dtype"},
      {"scatter_multiaxis", by_attributes,
       "docs/spec.md section 4: the gather's rules on input, indices and axes; updates of the input's dtype, "
       "each dimension the gather output's size or 1 (broadcast). reduction none (the last update in row-major "
       "order wins), add, mul, min, max (float min / max propagate NaN; complex: StableHLO's lexicographic "
       "order, a tie or a NaN in the deciding comparison taking the update); include_input false: a reached "
       "element starts from its first update. "
       "index_mode drop skips an out-of-range update"},
  });
}

}  // namespace multigather::frontends
