// Internal: the out-of-range sentence in a framework's own terms, built in one place from the
// IndexErrorContext a lowering recorded (the framework's indices, their name and labels, the
// rule). The core's own sentence (no framework) is core/index_value.hpp's. Callers: the
// lowerings that check indices up front (frontends/recipes.hpp check_indices_now) and, through
// plan/index_errors.hpp, every engine and the pictures.
#pragma once

#include <string_view>

#include "multigather/index_error_context.hpp"
#include "multigather/status.hpp"

namespace multigather::detail {

/// The first framework index (C order) of `indices` (host memory laid out like
/// context.indices) outside its range by `context`, as OutOfRange in the framework's words
/// ("torch.gather: index[0,1] = -1 is out of range for dim 1 of size 4 (valid range [0, 4));
/// ..."); Ok when every value is in range or the context is empty (no labels) or there is no
/// data.
Status framework_out_of_range(std::string_view op, const IndexErrorContext& context, const TensorView& indices);

}  // namespace multigather::detail
