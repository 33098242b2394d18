// multigather/index_error_context.hpp: IndexErrorContext, what a lowering records so that an index out
// of range is reported in the framework's own terms (Lowering::index_errors, lowering.hpp). A
// type alone: the sentence is built in src/core/index_messages.hpp.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "multigather/tensor.hpp"

namespace multigather {

/// Where a framework's index value sits, for error messages in the framework's own terms:
/// indices element at framework position p indexes input dimension `axes[p[coordinate_dim]]`
/// (or `axes[0]` when coordinate_dim < 0) whose size is `sizes[...]`.
struct IndexErrorContext {
  TensorView indices;              // the framework's indices (not the lowered view)
  std::string indices_name = "indices";
  int coordinate_dim = -1;         // -1: every element indexes labels[0]
  std::vector<std::string> labels; // "axis 1", "dim 0", "the flattened input"
  std::vector<std::int64_t> sizes;
  bool negatives_wrap = true;      // whether [-D, 0) is valid
  std::string rule;                // the framework's rule, appended: "torch.gather rejects ..."
  bool rule_on_negatives = false;  // append `rule` only for a negative value (a rule about them)
};

}  // namespace multigather
