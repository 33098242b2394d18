// multigather/ops.hpp: the framework ops (docs/spec.md section 2) through the one pipeline.
//
//   attributes.hpp  typed attribute values and THE text parser (AttrSpec, Attributes)
//   registry.hpp    the op registry: one OpSpec row per framework gather
//   lowering.hpp    lower_op -> Lowering (validated core call + framework output shape), explain
//   execute.hpp     execute(Lowering, output, ExecutionContext): CPU or CUDA, one-shot or into
#pragma once

#include "multigather/attributes.hpp"
#include "multigather/execute.hpp"
#include "multigather/lowering.hpp"
#include "multigather/registry.hpp"
#include "multigather/transforms.hpp"
