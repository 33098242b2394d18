// multigather/multigather.hpp: the whole public C++ API.
#pragma once

#include "multigather/dtype.hpp"
#include "multigather/gather.hpp"
#include "multigather/interrupt.hpp"
#include "multigather/scatter.hpp"
#include "multigather/status.hpp"
#include "multigather/tensor.hpp"

// The framework ops: the registry (run_op / explain_op / op_registry) and one header per family.
#include "multigather/ops.hpp"
#include "multigather/frontends/coreml.hpp"
#include "multigather/frontends/dml.hpp"
#include "multigather/frontends/jax.hpp"
#include "multigather/frontends/mlir.hpp"
#include "multigather/frontends/numpy.hpp"
#include "multigather/frontends/onnx.hpp"
#include "multigather/frontends/stablehlo.hpp"
#include "multigather/frontends/tf.hpp"
#include "multigather/frontends/torch.hpp"
#include "multigather/frontends/tosa.hpp"
#include "multigather/frontends/webnn.hpp"
