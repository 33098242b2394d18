// Internal (not installed): what src/api asks about the engines (execute.cpp defines it;
// transforms.cpp asks it too, before a VJP on the CUDA engine).
#pragma once

#include "multigather/lowering.hpp"

namespace multigather::detail {

/// Ok when this build and machine can run `l` on the CUDA engine, else InvalidArgument naming
/// the op and why: no CUDA engine in the build ("... this build has no CUDA engine (build with
/// MULTIGATHER_CUDA=ON)"), or no usable device.
Status cuda_engine_available(const Lowering& l);

}  // namespace multigather::detail
