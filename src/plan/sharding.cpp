// A call's sharding factors and one device's piece of it (multigather/sharding.hpp).
#include "multigather/sharding.hpp"

#include <cstring>
#include <memory>
#include <string>

#include "core/index_resolve.hpp"
#include "core/index_value.hpp"
#include "core/odometer.hpp"
#include "core/text.hpp"
#include "plan/index_errors.hpp"
#include "plan/shard_plan.hpp"

namespace multigather {

std::string_view factor_role_name(FactorRole role) noexcept {
  switch (role) {
    case FactorRole::kBatch: return "batch";
    case FactorRole::kOperand: return "operand";
    case FactorRole::kIndex: return "index";
    case FactorRole::kLookup: return "lookup";
    case FactorRole::kGathered: return "gathered";
    case FactorRole::kCoordinate: return "coordinate";
    case FactorRole::kOther: return "other";
  }
  return "other";
}

std::string_view factor_strategy_name(FactorStrategy strategy) noexcept {
  switch (strategy) {
    case FactorStrategy::kSplit: return "split";
    case FactorStrategy::kSum: return "sum";
    case FactorStrategy::kPiece: return "piece";
    case FactorStrategy::kReplicate: return "replicate";
  }
  return "replicate";
}

bool updates_combine_as_sums(const Lowering& l) noexcept {
  const bool sums = l.reduction == Reduction::kAdd && !l.mean_by_count;
  if (l.spec != nullptr && l.spec->kind == OpKind::kSegment) return sums;
  return sums && l.include_input && l.owned_input == nullptr && !l.input_is_constant;
}

namespace {

/// ShardingFactor::call and ::gradient of a factor of `l` (the rules are listed there).
void set_strategies(const Lowering& l, bool scatter, bool segment, ShardingFactor* f) {
  using S = FactorStrategy;
  const auto both = [f](S call, S gradient) {
    f->call = call;
    f->gradient = gradient;
  };
  const bool sums = updates_combine_as_sums(l);
  switch (f->role) {
    case FactorRole::kBatch:
    case FactorRole::kOperand: return both(S::kSplit, S::kSplit);
    case FactorRole::kGathered: return segment ? both(S::kReplicate, S::kReplicate) : both(S::kPiece, S::kPiece);
    case FactorRole::kIndex:
    case FactorRole::kLookup:
      if (segment) return sums ? both(S::kSum, S::kSplit) : both(S::kReplicate, S::kReplicate);
      if (!scatter) return both(S::kSplit, S::kSum);
      if (sums) return both(S::kSum, f->updates >= 0 ? S::kSplit : S::kSum);
      return both(S::kReplicate, S::kReplicate);
    case FactorRole::kCoordinate:
    case FactorRole::kOther: return both(S::kReplicate, S::kReplicate);
  }
}

/// One framework tensor and the core view the lowering took of it.
struct Side {
  Dims shape;            // the framework tensor's shape
  Dims strides;          // its C-contiguous strides
  Dims core_shape;       // the core view's
  Dims core_strides;
  bool mapped = true;    // false: the view is of a copy (no framework dimension maps)
  std::vector<bool> used;

  /// The framework dimension that core dimension d takes whole (same size > 1, same stride).
  int dim_of(int d) const {
    if (!mapped || d < 0 || d >= core_shape.size() || core_shape[d] <= 1) return -1;
    for (int f = 0; f < shape.size(); ++f) {
      if (shape[f] == core_shape[d] && strides[f] == core_strides[d]) return f;
    }
    return -1;
  }
};

Side side_of(const Dims& shape, const TensorView& core, bool mapped) {
  Side s;
  s.shape = shape;
  s.strides = contiguous_strides(shape);
  s.core_shape = core.shape;
  s.core_strides = core.strides;
  s.mapped = mapped;
  s.used.assign(static_cast<std::size_t>(shape.size()), false);
  return s;
}

}  // namespace

Status sharding_factors(const Lowering& l, const TensorView& input, const TensorView& indices,
                        const TensorView* updates, std::vector<ShardingFactor>* factors) {
  factors->clear();
  if (!input.is_contiguous() || !indices.is_contiguous() || (updates != nullptr && !updates->is_contiguous())) {
    return InvalidArgument(l.op + ": sharding factors are read off C-contiguous operands");
  }
  const bool scatter = l.kind == OpKind::kScatter;
  const GatherShape& g = l.shape;
  const int r = l.input.rank();
  const int c = g.coordinate_size;
  const int k = g.axes.size();
  // The sides: 0 input, 1 indices, 2 updates, 3 output.
  Side sides[4];
  // A segment op's framework input (data) is its core's UPDATES, and its core input the
  // reduction's identity, which no framework tensor holds: the data's dimensions are read off
  // the updates' side, and reported as the input's below. Gathered rows (embedding_bag: the
  // updates are table rows picked by the ids, not a view of the input) map nothing of the data.
  const bool segment = l.spec != nullptr && l.spec->kind == OpKind::kSegment;
  // (A segment op's side 0 has no framework dimensions: no factor and no leftover takes one.)
  sides[0] = side_of(segment ? Dims{} : input.shape, l.input,
                     l.owned_input == nullptr && !l.input_is_constant && !segment);
  // Index values the lowering computed (with these operands' sizes) cannot be resolved
  // against a whole axis by a piece: such a call's gathered axes are never split.
  const bool own_values = l.owned_indices == nullptr && !l.indices_computed;
  sides[1] = side_of(indices.shape, l.indices, own_values);
  if (segment) {
    sides[2] = side_of(input.shape, l.updates,
                       l.owned_updates == nullptr && !l.updates_computed && l.gathered == nullptr);
  } else if (scatter && updates != nullptr) {
    sides[2] = side_of(updates->shape, l.updates, l.owned_updates == nullptr && !l.updates_computed);
  }
  TensorView core_output(nullptr, l.input.dtype, l.core_output_shape, l.core_output_strides);
  sides[3] = side_of(l.output_shape, core_output, !l.has_scatter_base);
  const bool has_updates = segment || (scatter && updates != nullptr);
  // A segment op's ids split across devices combine exactly only as partial sums into a
  // neutral start: an initial value (torch.segment_reduce's `initial`, the lowering's own
  // input element) would be counted once per device.
  const bool neutral_start = l.owned_input == nullptr;

  // A factor on the sides that carry it (core dimension d of each), kOther when one of them
  // does not take it whole from a framework dimension.
  auto add = [&](FactorRole role, std::int64_t size, int axis, std::initializer_list<int> on, int d,
                 int indices_dim) {
    if (size <= 1) return;
    ShardingFactor f;
    f.role = role;
    f.size = size;
    f.axis = axis;
    int* dims[4] = {&f.input, &f.indices, &f.updates, &f.output};
    bool whole = true;
    for (int s : on) {
      if (s == 2 && !has_updates) continue;
      if (s == 0 && segment) continue;  // the identity: no framework tensor
      const int core_d = s == 1 ? indices_dim : d;
      if (s == 2 && sides[2].core_shape[core_d] <= 1) continue;  // updates broadcast along it
      const int fd = sides[s].dim_of(core_d);
      if (fd < 0 || sides[s].used[static_cast<std::size_t>(fd)]) {
        whole = false;
        continue;
      }
      *dims[s] = fd;
      sides[s].used[static_cast<std::size_t>(fd)] = true;
    }
    if (!whole || (role == FactorRole::kGathered && !own_values)) f.role = FactorRole::kOther;
    if (segment && (role == FactorRole::kIndex || role == FactorRole::kLookup) && !neutral_start) {
      f.role = FactorRole::kOther;
    }
    factors->push_back(f);
  };
  // With c > 1 coordinates the last core indices dimension holds L[r-1] * c values: it maps to
  // a lookup dimension only when c == 1, to the coordinates when L[r-1] == 1.
  const bool folded = c > 1;
  for (int d = 0; d < r; ++d) {
    const std::int64_t in = l.input.shape[d], lookup = g.logical_indices_shape[d];
    const int idx_d = folded && d == r - 1 ? -1 : d;
    int axis = -1;
    for (int j = 0; j < k; ++j) {
      if (g.axes[j] == d) axis = j;
    }
    if (axis >= 0) {
      if (scatter) {
        add(FactorRole::kGathered, in, axis, {0, 3}, d, -1);
        add(FactorRole::kLookup, lookup, axis, {1, 2}, d, idx_d);
      } else {
        add(FactorRole::kGathered, in, axis, {0}, d, -1);
        add(FactorRole::kLookup, lookup, axis, {1, 3}, d, idx_d);
      }
    } else if (in > 1 && lookup > 1) {
      add(FactorRole::kBatch, in, -1, {0, 1, 2, 3}, d, idx_d);
    } else if (in > 1) {
      add(FactorRole::kOperand, in, -1, {0, 2, 3}, d, idx_d);
    } else if (lookup > 1) {
      add(FactorRole::kIndex, lookup, -1, scatter ? std::initializer_list<int>{1, 2} : std::initializer_list<int>{1, 3},
          d, idx_d);
    }
  }
  if (folded && g.logical_indices_shape[r - 1] == 1) {
    ShardingFactor f;
    f.role = FactorRole::kCoordinate;
    f.size = c;
    const int fd = sides[1].dim_of(r - 1);
    if (fd >= 0 && !sides[1].used[static_cast<std::size_t>(fd)]) {
      f.indices = fd;
      sides[1].used[static_cast<std::size_t>(fd)] = true;
      factors->push_back(f);
    }
  }
  // Every framework dimension of size > 1 that no factor took: its own, never split.
  for (int s = 0; s < 4; ++s) {
    if (s == 2 && !has_updates) continue;
    for (int fd = 0; fd < sides[s].shape.size(); ++fd) {
      if (sides[s].shape[fd] <= 1 || sides[s].used[static_cast<std::size_t>(fd)]) continue;
      ShardingFactor f;
      f.role = FactorRole::kOther;
      f.size = sides[s].shape[fd];
      int* dims[4] = {&f.input, &f.indices, &f.updates, &f.output};
      *dims[s] = fd;
      factors->push_back(f);
    }
  }
  for (ShardingFactor& f : *factors) set_strategies(l, scatter, segment, &f);
  if (segment) {  // the data's dimensions are the framework input's
    for (ShardingFactor& f : *factors) {
      f.input = f.updates;
      f.updates = -1;
    }
  }
  return Status::Ok();
}

namespace detail {

bool first_piece(std::span<const AxisShard> shards) noexcept {
  for (const AxisShard& s : shards) {
    if (s.offset != 0) return false;
  }
  return true;
}

namespace {

/// The shards of `local`'s axes checked against its piece: *whole (a shard not split holds the
/// whole axis) and *piece, the piece's size of each axis.
Status shard_sizes(const Lowering& local, std::span<const AxisShard> shards, std::vector<AxisShard>* whole,
                   std::vector<std::int64_t>* piece) {
  const GatherShape& g = local.shape;
  const int k = g.axes.size();
  if (static_cast<int>(shards.size()) != k) {
    return InvalidArgument(local.op + ": " + std::to_string(shards.size()) + " axis shards for a call with " +
                           std::to_string(k) + " axes (one per axis)");
  }
  piece->assign(static_cast<std::size_t>(k), 0);
  whole->assign(shards.begin(), shards.end());
  for (int j = 0; j < k; ++j) {
    const std::int64_t n = local.input.shape[static_cast<int>(g.axes[j])];
    AxisShard& s = (*whole)[static_cast<std::size_t>(j)];
    if (s.size < 0) s = AxisShard{n, 0};  // not split: this piece holds the whole axis
    if (s.offset < 0 || s.size < n || s.offset > s.size - n) {
      return InvalidArgument(local.op + ": the shard of axis " + std::to_string(g.axes[j]) + " holds [" +
                             std::to_string(s.offset) + ", " + std::to_string(s.offset + n) +
                             "), which does not fit an axis of size " + std::to_string(s.size));
    }
    (*piece)[static_cast<std::size_t>(j)] = n;
  }
  return Status::Ok();
}

}  // namespace

void as_piece(const Lowering& local, const TensorView& resolved, Lowering* out) {
  *out = local;
  out->indices = resolved;
  out->options.index_mode = local.kind == OpKind::kGather ? IndexMode::kFill : IndexMode::kDrop;
  out->options.negative_indices = false;
  out->options.fill_value = Scalar::from_int(0);
  out->index_errors = IndexErrorContext();
}

Status shard_piece_params(const Lowering& local, std::span<const AxisShard> shards, ShardPieceParams* p) {
  std::vector<AxisShard> whole;
  std::vector<std::int64_t> piece;
  MULTIGATHER_RETURN_IF_ERROR(shard_sizes(local, shards, &whole, &piece));
  const TensorView& ix = local.indices;
  p->indices = ix.data;
  p->dtype = ix.dtype;
  p->rank = ix.rank();
  for (int d = 0; d < p->rank; ++d) {
    p->shape[d] = ix.shape[d];
    p->strides[d] = ix.strides[d];
  }
  p->n = ix.numel();
  p->c = local.shape.coordinate_size;
  p->k = static_cast<int>(whole.size());
  for (int j = 0; j < p->k; ++j) {
    p->whole[j] = whole[static_cast<std::size_t>(j)].size;
    p->offset[j] = whole[static_cast<std::size_t>(j)].offset;
    p->piece[j] = piece[static_cast<std::size_t>(j)];
  }
  p->mode = local.options.index_mode;
  p->negative = local.options.negative_indices;
  p->gather_fill = local.kind == OpKind::kGather && p->mode == IndexMode::kFill;
  return Status::Ok();
}

Status shard_fill_params(const Lowering& local, const MutableTensorView& output, const std::uint8_t* out_of_range,
                         ShardFillParams* f) {
  const std::size_t es = element_size(output.dtype);
  MULTIGATHER_RETURN_IF_ERROR(encode_scalar(local.options.fill_value, output.dtype, f->value, "fill_value"));
  const Dims& shape = local.core_output_shape;
  f->output = output.data;
  f->rank = shape.size();
  f->n = 1;
  for (int d = 0; d < f->rank; ++d) {
    f->shape[d] = shape[d];
    f->strides[d] = local.core_output_strides[d];
    f->logical[d] = local.shape.logical_indices_shape[d];
    f->n *= shape[d];
  }
  f->out_of_range = out_of_range;
  f->element_bytes = static_cast<int>(es);
  return Status::Ok();
}

Status localize(const Lowering& local, std::span<const AxisShard> shards, Lowering* out, ShardFill* fill) {
  const GatherShape& g = local.shape;
  const int k = g.axes.size();
  std::vector<std::int64_t> piece;
  std::vector<AxisShard> whole;
  MULTIGATHER_RETURN_IF_ERROR(shard_sizes(local, shards, &whole, &piece));
  const IndexMode mode = local.options.index_mode;
  const bool negative = local.options.negative_indices;
  const TensorView& ix = local.indices;
  const int r = ix.rank();
  const int c = g.coordinate_size;
  auto resolved = std::make_shared<Tensor>(DType::kInt64, ix.shape);
  std::int64_t* dst = resolved->data_as<std::int64_t>();
  fill->out_of_range.clear();
  const bool gather_fill = local.kind == OpKind::kGather && mode == IndexMode::kFill;
  const auto es = static_cast<std::int64_t>(element_size(ix.dtype));
  const auto* src = static_cast<const std::byte*>(ix.data);
  std::vector<std::int64_t> pos(static_cast<std::size_t>(r), 0);
  std::int64_t offset = 0;
  const std::int64_t n = ix.numel();
  for (std::int64_t e = 0; e < n; ++e) {
    const int j = r == 0 ? 0 : static_cast<int>(pos[static_cast<std::size_t>(r - 1)] % c);
    if (j < k) {
      const __int128 raw = read_index_value(src + offset * es, ix.dtype);
      const AxisShard& s = whole[static_cast<std::size_t>(j)];
      const std::int64_t size = piece[static_cast<std::size_t>(j)];
      std::int64_t v = 0;
      if (resolve_index_value(raw, s.size, mode, negative, &v) == IndexResolution::kOutOfRange) {
        if (mode == IndexMode::kError || (s.size == 0 && mode != IndexMode::kFill && mode != IndexMode::kDrop)) {
          // The unsplit call's message: its sizes are the whole axes'.
          Lowering unsplit = local;
          for (int a = 0; a < k && a < static_cast<int>(unsplit.index_errors.sizes.size()); ++a) {
            unsplit.index_errors.sizes[static_cast<std::size_t>(a)] = whole[static_cast<std::size_t>(a)].size;
          }
          const Status core = OutOfRange(out_of_range_text(position_text(pos), raw, g.axes[j], s.size, mode, negative));
          return describe_out_of_range(unsplit, unsplit.index_errors.indices, core);
        }
        if (gather_fill) {
          if (fill->out_of_range.empty()) fill->out_of_range.assign(static_cast<std::size_t>(n / c), 0);
          fill->out_of_range[static_cast<std::size_t>(e / c)] = 1;
        }
        v = size;  // past the piece: filled with 0 / dropped
      } else {
        v -= s.offset;
        if (v < 0 || v >= size) v = size;
      }
      dst[e] = v;
    } else {
      dst[e] = 0;
    }
    detail::next_position(pos, ix.shape, ix.strides, &offset);
  }
  as_piece(local, resolved->view(), out);
  out->owned_indices = resolved;
  return Status::Ok();
}

Status write_fill(const Lowering& local, const ShardFill& fill, const MutableTensorView& output) {
  if (fill.out_of_range.empty()) return Status::Ok();
  const std::size_t es = element_size(output.dtype);
  std::byte value[16] = {};
  MULTIGATHER_RETURN_IF_ERROR(encode_scalar(local.options.fill_value, output.dtype, value, "fill_value"));
  const Dims& shape = local.core_output_shape;
  const Dims& L = local.shape.logical_indices_shape;
  const int r = shape.size();
  std::vector<std::int64_t> pos(static_cast<std::size_t>(r), 0);
  std::int64_t offset = 0;
  auto* base = static_cast<std::byte*>(output.data);
  for (std::int64_t e = 0, n = TensorView(nullptr, output.dtype, shape).numel(); e < n; ++e) {
    std::int64_t q = 0;  // the logical index position (C order over L), broadcast where L is 1
    for (int d = 0; d < r; ++d) q = q * L[d] + (L[d] == 1 ? 0 : pos[static_cast<std::size_t>(d)]);
    if (fill.out_of_range[static_cast<std::size_t>(q)]) std::memcpy(base + offset * static_cast<std::int64_t>(es), value, es);
    detail::next_position(pos, shape, local.core_output_strides, &offset);
  }
  return Status::Ok();
}

}  // namespace detail
}  // namespace multigather
