// Internal: the pieces of `multigather explain`'s text (explain.cpp) that the pictures
// (explain_svg_draw.cpp, explain_svg_canvas.cpp) draw too, built from a Lowering of shapes and dtypes.
#pragma once

#include <string>

#include "multigather/lowering.hpp"

namespace multigather::detail {

/// explain's formula for these shapes ("output[o0,o1] = input[o0, indices[o0,o1]]") and its
/// index-resolution sentence.
std::string explain_formula(const Lowering& l);
std::string explain_resolution(const Lowering& l);
/// explain's per-dimension table ("  dim  input  indices  output  how\n..."), empty for rank 0.
std::string explain_dimension_table(const Lowering& l);
/// A scatter's duplicate rule ("updates reaching one element: the LAST in row-major order of G
/// wins", or how they combine), shared by explain's text and the pictures.
std::string explain_duplicate_rule(const Lowering& l);

}  // namespace multigather::detail
