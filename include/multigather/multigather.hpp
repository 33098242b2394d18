// multigather/multigather.hpp: the whole public C++ API.
#pragma once

#include "multigather/dtype.hpp"
#include "multigather/gather.hpp"
#include "multigather/status.hpp"
#include "multigather/tensor.hpp"
