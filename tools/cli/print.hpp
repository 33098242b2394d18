// tools/cli/print.hpp: a tensor as text, the way numpy's str() prints it.
#pragma once

#include <ostream>
#include <string>

#include "multigather/tensor.hpp"

namespace multigather::cli {

/// Writes `view` (any dtype, any strides) like numpy's `str(array)` with numpy's default print
/// options: elements right-aligned to a common width, rows wrapped at 75 columns, one blank line
/// between blocks, and, above 1000 elements, only the first and last 3 entries of each
/// dimension with "..." between them. Floats print the shortest decimal that identifies the
/// value in its own dtype (float16, bfloat16 and float8 through dtype.hpp's conversions), at
/// most 8 fractional digits, switching to scientific notation as numpy does (a magnitude at or
/// above 1e8, a nonzero one below 1e-4, or a max/min ratio above 1000). Complex values print
/// as `1.+2.j`, bools as True/False. A rank-0 view prints its one element; an empty view "[]".
/// No trailing newline.
std::string format_tensor(const TensorView& view);

/// Decodes one float8_e4m3fn element (1 sign, 4 exponent bits with bias 7, 3 mantissa bits;
/// no infinities, 0x7F/0xFF are NaN) and one float8_e5m2 element (the top byte of a float16).
double float8_e4m3fn_to_double(unsigned char bits) noexcept;
double float8_e5m2_to_double(unsigned char bits) noexcept;

}  // namespace multigather::cli
