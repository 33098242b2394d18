// `multigather run/explain gather_multiaxis`: the core operator's flags, call and explanation.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "multigather/gather.hpp"
#include "op.hpp"

namespace multigather::cli {
namespace {

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string s;
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? std::string(sep) : "") + parts[i];
  return s;
}

class GatherMultiaxisOp final : public CliOp {
 public:
  std::string_view name() const override { return "gather_multiaxis"; }
  std::string_view summary() const override {
    return "output[o] = input[i], i[axes[j]] = indices[q..., q_last*c + j], other dims broadcast "
           "(the core operator; attributes axes, index_mode, negative_indices, fill_value)";
  }

  void add_flags(CLI::App& command) override {
    command.add_option("--axes", axes_,
                       "Input dimensions the coordinates address, in coordinate order, e.g. "
                       "--axes=2,1 (negative counts from the back; empty: --axes=)")
        ->required()
        ->expected(0, 1)  // "--axes=" (no value) is the empty list
        ->type_name("LIST");
    command.add_option("--index-mode", index_mode_,
                       "Out-of-range indices: error (default), clamp, wrap, fill")
        ->type_name("MODE");
    command.add_option("--negative-indices", negative_indices_,
                       "v < 0 means v + n before index_mode applies (default true)")
        ->type_name("BOOL");
    command.add_option("--fill-value", fill_value_,
                       "Value of out-of-range elements under --index-mode=fill (default 0)")
        ->type_name("V");
  }

  Status run(const TensorView& input, const TensorView& indices, Tensor* output) const override {
    std::vector<std::int64_t> axes;
    GatherOptions options;
    MULTIGATHER_RETURN_IF_ERROR(parse(&axes, &options));
    GatherShape shape;
    MULTIGATHER_RETURN_IF_ERROR(infer_shape(input.shape, indices.shape, axes, &shape));
    Tensor out(input.dtype, shape.output_shape);
    MULTIGATHER_RETURN_IF_ERROR(gather_multiaxis_into(input, indices, axes, out.mutable_view(), options));
    *output = std::move(out);
    return Status::Ok();
  }

  Status explain(const Dims& input_shape, const Dims& indices_shape,
                 std::ostream& out) const override {
    std::vector<std::int64_t> axes;
    GatherOptions options;
    MULTIGATHER_RETURN_IF_ERROR(parse(&axes, &options));
    GatherShape s;
    MULTIGATHER_RETURN_IF_ERROR(infer_shape(input_shape, indices_shape, axes, &s));
    const int r = input_shape.size();
    const int k = static_cast<int>(axes.size());
    const Dims& L = s.logical_indices_shape;

    out << "gather_multiaxis\n";
    out << "  input shape            " << to_string(input_shape) << "\n";
    out << "  indices shape          " << to_string(indices_shape) << "\n";
    out << "  axes                   " << to_string(s.axes) << "  (k = " << k
        << ", coordinate size c = " << s.coordinate_size << ")\n";
    out << "  logical indices shape  " << to_string(L) << "  (indices shape, last size / c)\n";
    out << "  output shape           " << to_string(s.output_shape) << "  ("
        << s.output_numel << " elements)\n";

    if (r > 0) {
      out << "\n  dim  input  indices  output  how\n";
      for (int d = 0; d < r; ++d) {
        const auto u = static_cast<std::size_t>(d);
        std::string how;
        if (s.is_axis[u]) {
          const auto j = std::find(s.axes.begin(), s.axes.end(), d) - s.axes.begin();
          how = "axis (axes[" + std::to_string(j) + "]): size from indices; coordinate " +
                std::to_string(j) + " indexes input size " + std::to_string(input_shape[d]);
        } else if (s.input_broadcast[u]) {
          how = "input broadcast (1 -> " + std::to_string(s.output_shape[d]) + ")";
        } else if (s.indices_broadcast[u]) {
          how = "indices broadcast (1 -> " + std::to_string(s.output_shape[d]) + ")";
        } else {
          how = "equal";
        }
        out << "  " << std::setw(3) << d << "  " << std::setw(5) << input_shape[d] << "  "
            << std::setw(7) << L[d] << "  " << std::setw(6) << s.output_shape[d] << "  " << how
            << "\n";
      }
    }

    out << "\n  " << formula(input_shape, s) << "\n";
    out << "  " << resolution(k, options) << "\n";
    return Status::Ok();
  }

 private:
  Status parse(std::vector<std::int64_t>* axes, GatherOptions* options) const {
    MULTIGATHER_RETURN_IF_ERROR(parse_int_list(axes_, "--axes", axes));
    if (!parse_index_mode(index_mode_, &options->index_mode)) {
      return InvalidArgument("--index-mode: '" + index_mode_ +
                             "' is not an index mode (expected error, clamp, wrap or fill)");
    }
    MULTIGATHER_RETURN_IF_ERROR(
        parse_bool_flag(negative_indices_, "--negative-indices", &options->negative_indices));
    if (!Scalar::parse(fill_value_, &options->fill_value)) {
      return InvalidArgument("--fill-value: '" + fill_value_ +
                             "' is not a number (expected an integer, a float, nan, inf, true "
                             "or false)");
    }
    return Status::Ok();
  }

  /// The SPEC formula written out for these shapes, e.g.
  /// "output[o0,o1,o2,o3] = input[o0, indices[0,o1,o2,o3], 0, o3]".
  static std::string formula(const Dims& input_shape, const GatherShape& s) {
    const int r = input_shape.size();
    if (r == 0) return "output[] = input[]  (rank 0: a copy of the scalar)";
    const int c = s.coordinate_size;
    const Dims& L = s.logical_indices_shape;
    const auto o = [](int d) { return "o" + std::to_string(d); };
    std::vector<std::string> outs, ins;
    for (int d = 0; d < r; ++d) outs.push_back(o(d));
    for (int d = 0; d < r; ++d) {
      const auto u = static_cast<std::size_t>(d);
      if (!s.is_axis[u]) {
        ins.push_back(input_shape[d] == 1 ? "0" : o(d));
        continue;
      }
      const auto j = std::find(s.axes.begin(), s.axes.end(), d) - s.axes.begin();
      std::vector<std::string> q;
      for (int e = 0; e < r; ++e) {
        const std::string qe = L[e] == 1 ? "0" : o(e);
        if (e < r - 1 || c == 1) {
          q.push_back(qe);
        } else if (qe == "0") {
          q.push_back(std::to_string(j));
        } else {
          q.push_back(std::to_string(c) + "*" + qe + (j ? "+" + std::to_string(j) : ""));
        }
      }
      ins.push_back("indices[" + join(q, ",") + "]");
    }
    std::string f = "output[" + join(outs, ",") + "] = input[" + join(ins, ", ") + "]";
    if (s.axes.empty()) f += "  (k = 0: indices values are never read)";
    return f;
  }

  /// How an index value v for an axis of size n becomes a position.
  static std::string resolution(int k, const GatherOptions& options) {
    if (k == 0) return "no index values are read (index_mode does not apply)";
    const std::string mode(index_mode_name(options.index_mode));
    std::string neg = options.negative_indices && options.index_mode != IndexMode::kWrap
                          ? "v < 0 becomes v + n (signed index dtypes), then "
                          : "";
    std::string rule;
    switch (options.index_mode) {
      case IndexMode::kError: rule = "v outside [0, n) is an error (exit code 4)"; break;
      case IndexMode::kClamp: rule = "v is clamped to [0, n-1]"; break;
      case IndexMode::kWrap: rule = "v becomes v mod n (floor modulo)"; break;
      case IndexMode::kFill:
        rule = "v outside [0, n) makes the element fill_value = " + options.fill_value.to_string();
        break;
    }
    return "each index v for an axis of size n (index_mode=" + mode + "): " + neg + rule;
  }

  std::string axes_;
  std::string index_mode_ = "error";
  std::string negative_indices_ = "true";
  std::string fill_value_ = "0";
};

}  // namespace

std::unique_ptr<CliOp> make_gather_multiaxis_cli_op() { return std::make_unique<GatherMultiaxisOp>(); }

}  // namespace multigather::cli
