// Internal: the CPU engine. Runs a normalized GatherPlan.
#pragma once

#include "plan/plan.hpp"

namespace multigather::detail {

/// Executes `plan` on the CPU. Returns false when some index was out of range under
/// IndexMode::kError (or when a lookup hit an empty axis in clamp/wrap mode); the caller then
/// asks the reference kernel for the exact message. Never reads or writes out of bounds: an
/// out-of-range index is never dereferenced.
bool run_cpu(const GatherPlan& plan) noexcept;

}  // namespace multigather::detail
