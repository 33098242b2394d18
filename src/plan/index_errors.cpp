// The out-of-range message of a framework op (index_errors.hpp).
#include "plan/index_errors.hpp"
#include "core/index_messages.hpp"

#include <string>

namespace multigather::detail {

Status find_out_of_range(const Lowering& l, const TensorView& v) {
  return framework_out_of_range(l.op, l.index_errors, v);
}

Status describe_out_of_range(const Lowering& l, const TensorView& indices, const Status& core) {
  const IndexErrorContext& c = l.index_errors;
  if (c.labels.empty() && c.rule.empty()) return core;
  Status s = find_out_of_range(l, indices);
  if (!s.ok()) return s;
  return OutOfRange(l.op + ": " + core.message() + (c.rule.empty() ? "" : "; " + c.rule));
}

}  // namespace multigather::detail
