// Internal: what the segment family's files share (not installed). segment.cpp holds the
// machinery declared here (identities, the reducer, the block scatter into the identity, the id
// scans) and the family's rows (append_segment_ops); segment_jax_tf.cpp and segment_torch.cpp
// hold the lowerings those rows name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/index_value.hpp"
#include "core/odometer.hpp"
#include "frontends/recipes.hpp"

namespace multigather::frontends {

/// What an output element no update reaches holds, and what the reduction starts from.
enum class Identity : std::uint8_t { kZero, kOne, kLowest, kHighest, kNegInf, kPosInf, kNaN, kCount };

/// How one segment op reduces.
struct Reducer {
  Reduction reduction = Reduction::kAdd;
  Identity identity = Identity::kZero;  // the core input's value
  bool include_input = true;            // false: the first update assigns (TF's sorted max: empty = 0)
  bool mean = false;                    // divide by the count (mean), or its square root (sqrt_n)
  bool sqrt_n = false;
};

/// begin_scatter for a segment op. On CUDA operands its core scatter runs on the CUDA engine,
/// which fills the output with the identity (a host element) before the combine; the steps that
/// read index values on the host refuse them (host_values_only).
Status begin_segment(const char* op, const TensorView& data, const TensorView& ids, Lowering* out);

/// A lowering step that reads `what` on the host: an error on CUDA operands, which the host must
/// not read (`instead`: how to avoid the step).
Status host_values_only(const Lowering& l, const std::string& what, const char* instead);

Status check_reducer(const TensorView& data, const Reducer& r, Lowering* out);

/// The core input: ONE element broadcast to `shape` (strides 0): the reduction's identity in
/// static storage, or `initial` (torch.segment_reduce's) in a one-element tensor the lowering owns.
Status identity_view(const TensorView& data, const std::vector<std::int64_t>& shape, const Reducer& r,
                     const std::optional<Scalar>& initial, Lowering* out, TensorView* identity);

/// After the gather recipe ran on (identity, ids): `data` (of `framework_shape` after
/// broadcasting) becomes the core updates, and the reducer's flags are set.
Status finish_segments(const TensorView& identity, const TensorView& data, const TensorView& ids,
                       const char* ids_name, const std::vector<std::int64_t>& framework_shape, const Reducer& r, Lowering* out);

/// The block scatter of `data` (I.shape ++ F after broadcasting, F = `trailing`) into the
/// identity view I.shape[:axis] ++ [S] ++ F along segment_ids I (its first `axis` dimensions are
/// batch dimensions: data's leading ones).
Status lower_segments(const TensorView& data, const TensorView& ids, std::int64_t num_segments,
                      const std::vector<std::int64_t>& trailing, const Reducer& r, Lowering* out,
                      int axis = 0, const std::optional<Scalar>& initial = std::nullopt,
                      const char* ids_name = "segment_ids");

/// The first segment id, in C order, for which `bad(v)` holds: true and its position / value.
template <class Bad>
bool find_id(const TensorView& ids, Bad&& bad, std::string* position, __int128* value) {
  if (ids.data == nullptr) return false;
  std::int64_t pos[kMaxRank] = {};
  std::int64_t offset = 0;
  const std::int64_t n = ids.numel();
  const auto es = static_cast<std::int64_t>(element_size(ids.dtype));
  for (std::int64_t i = 0; i < n; ++i) {
    const __int128 v = detail::read_index_value(static_cast<const std::byte*>(ids.data) + offset * es, ids.dtype);
    if (bad(v, i)) {
      *position = detail::position_text(std::span<const std::int64_t>(pos, static_cast<std::size_t>(ids.rank())));
      *value = v;
      return true;
    }
    detail::next_position(pos, ids.shape, ids.strides, &offset);
  }
  return false;
}

/// The output size `largest id + 1`, or InvalidArgument when it does not fit in int64 (a uint64
/// id of 2**63 or more, int64's maximum).
Status rows_after(const std::string& op, __int128 largest, std::int64_t* rows);

/// The largest of `floor` and the ids' values (read from host memory).
__int128 largest_id(const TensorView& ids, __int128 floor);

std::vector<std::int64_t> dims_from(const TensorView& v, int from);

// ---- The lowerings the rows name -------------------------------------------------------------

// segment_jax_tf.cpp (instantiated there for the reductions the rows name).
template <Reduction R>
Status jax_segment(const TensorView& data, const TensorView& ids, const AttributeValues& a, Lowering* out);

enum class TfReduce : std::uint8_t { kSum, kProd, kMax, kMin, kMean, kSqrtN };

template <TfReduce K>
Status tf_unsorted(const TensorView& data, const TensorView& ids, const AttributeValues& a, Lowering* out);
template <TfReduce K>
Status tf_sorted(const TensorView& data, const TensorView& ids, const AttributeValues& a, Lowering* out);

// segment_torch.cpp.
Status torch_segment_reduce(const TensorView& data, const TensorView& bounds, const AttributeValues& a, Lowering* out);
Status ts_scatter(const TensorView& src, const TensorView& index, const AttributeValues& a, Lowering* out);
Status ts_segment_coo(const TensorView& src, const TensorView& index, const AttributeValues& a, Lowering* out);
Status ts_segment_csr(const TensorView& src, const TensorView& indptr, const AttributeValues& a, Lowering* out);
Status torch_embedding_bag(const TensorView& weight, const TensorView& input, const AttributeValues& a, Lowering* out);

}  // namespace multigather::frontends
