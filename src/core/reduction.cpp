// Names of the scatter reductions (multigather/options.hpp).
#include "multigather/options.hpp"

namespace multigather {

std::string_view reduction_name(Reduction reduction) noexcept {
  switch (reduction) {
    case Reduction::kNone: return "none";
    case Reduction::kAdd: return "add";
    case Reduction::kMul: return "mul";
    case Reduction::kMin: return "min";
    case Reduction::kMax: return "max";
  }
  return "unknown";
}

bool parse_reduction(std::string_view name, Reduction* reduction) noexcept {
  for (Reduction r : {Reduction::kNone, Reduction::kAdd, Reduction::kMul, Reduction::kMin,
                      Reduction::kMax}) {
    if (reduction_name(r) == name) {
      *reduction = r;
      return true;
    }
  }
  return false;
}

}  // namespace multigather
