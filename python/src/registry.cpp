// Bindings of the op registry (multigather/ops.hpp): every framework gather by name, with its
// attributes given as the same texts the CLI takes ("1", "0,2", "none", "clip", "nan").
//
//   registry_ops()                       -> [{name, family, equivalence_class, signature,
//                                             formula, source, input_name, indices_name,
//                                             attrs: [{name, type, default, choices, help}]}]
//   run_op(op, input, indices, attrs, out, input_dtype, out_dtype, framework)
//   lower_op_shape(op, input_shape, input_dtype, indices_shape, indices_dtype, attrs) -> shape
//   explain_op(op, input_shape, input_dtype, indices_shape, indices_dtype, attrs) -> str
#include "registry.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "arrays.hpp"
#include "multigather/ops.hpp"

namespace multigather::python {
namespace {

using AttrTexts = std::vector<std::pair<std::string, std::string>>;
using IntList = std::vector<std::int64_t>;

Attributes attributes_of(const AttrTexts& texts) {
  Attributes attrs;
  for (const auto& [name, text] : texts) attrs.set(name, text);
  return attrs;
}

DType dtype_named(std::string_view name, std::string_view what) {
  const std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) {
    throw nb::type_error((std::string(what) + " dtype " + std::string(name) +
                          " is not supported").c_str());
  }
  return *dtype;
}

nb::list registry_ops() {
  nb::list ops;
  for (const OpSpec& op : op_registry()) {
    nb::list attrs;
    for (const AttrSpec& a : op.attrs) {
      nb::dict attr;
      attr["name"] = a.name;
      attr["type"] = std::string(attr_type_name(a.type));
      attr["default"] = a.default_text;
      attr["choices"] = a.choices;
      attr["help"] = a.help;
      attrs.append(attr);
    }
    nb::dict entry;
    entry["name"] = op.name;
    entry["family"] = op.family;
    entry["equivalence_class"] = op.equivalence_class;
    entry["signature"] = op.signature;
    entry["formula"] = op.formula;
    entry["source"] = op.source;
    entry["input_name"] = op.input_name;
    entry["indices_name"] = op.indices_name;
    entry["attrs"] = attrs;
    ops.append(entry);
  }
  return ops;
}

// Copies `source` (C-contiguous) into the strided view `target` of the same shape: a
// gather_multiaxis call with no axes (the output is the input broadcast to its own shape).
Status copy_into(const TensorView& source, const MutableTensorView& target) {
  static const std::int64_t zero = 0;
  const Dims ones = Dims::filled(source.rank(), 1);
  const TensorView no_indices(&zero, DType::kInt64, ones, Dims::filled(source.rank(), 0));
  return gather_multiaxis_into(source, no_indices, {}, target);
}

nb::object run(std::string_view op, const InputArray& input_array,
               const InputArray& indices_array, const AttrTexts& texts,
               std::optional<OutputArray> out, std::optional<std::string_view> input_dtype,
               std::optional<std::string_view> out_dtype, std::string_view framework) {
  const TensorView input = view_of(input_array, "input", input_dtype);
  const TensorView indices = view_of(indices_array, "indices");
  Lowering lowering;
  raise_if_error(lower_op(op, input, indices, attributes_of(texts), &lowering));
  lowering.options.num_threads = get_num_threads();  // set_num_threads covers registry ops too
  if (out) {
    const MutableTensorView target = mutable_view_of(*out, "out", out_dtype);
    check_out(target, input, indices, lowering.output_shape);
    Status status;
    {
      nb::gil_scoped_release release;
      if (target.strides == contiguous_strides(target.shape)) {
        status = execute_lowering(lowering, target);
      } else {  // the registry writes C-contiguous buffers: go through one
        Tensor staging(input.dtype, lowering.output_shape);
        status = execute_lowering(lowering, staging.mutable_view());
        if (status.ok()) status = copy_into(staging.view(), target);
      }
    }
    raise_if_error(status);
    return nb::none();
  }
  Tensor result(input.dtype, lowering.output_shape);
  Status status;
  {
    nb::gil_scoped_release release;
    status = execute_lowering(lowering, result.mutable_view());
  }
  raise_if_error(status);
  return to_python(std::move(result), input_array.dtype(), framework);
}

nb::tuple lower_op_shape(std::string_view op, const IntList& input_shape,
                         std::string_view input_dtype, const IntList& indices_shape,
                         std::string_view indices_dtype, const AttrTexts& texts) {
  const TensorView input(nullptr, dtype_named(input_dtype, "input"),
                         Dims(std::span<const std::int64_t>(input_shape)));
  const TensorView indices(nullptr, dtype_named(indices_dtype, "indices"),
                           Dims(std::span<const std::int64_t>(indices_shape)));
  Lowering lowering;
  raise_if_error(lower_op(op, input, indices, attributes_of(texts), &lowering));
  nb::list shape;
  for (int d = 0; d < lowering.output_shape.size(); ++d) shape.append(lowering.output_shape[d]);
  return nb::tuple(shape);
}

std::string explain(std::string_view op, const IntList& input_shape, std::string_view input_dtype,
                    const IntList& indices_shape, std::string_view indices_dtype,
                    const AttrTexts& texts) {
  std::string text;
  raise_if_error(explain_op(op, Dims(std::span<const std::int64_t>(input_shape)),
                            dtype_named(input_dtype, "input"),
                            Dims(std::span<const std::int64_t>(indices_shape)),
                            dtype_named(indices_dtype, "indices"), attributes_of(texts), &text));
  return text;
}

}  // namespace

void bind_registry(nb::module_& m) {
  using namespace nb::literals;
  m.def("registry_ops", &registry_ops, "Every registry op with its attributes.");
  m.def("run_op", &run, "op"_a, "input"_a, "indices"_a, "attrs"_a, "out"_a = nb::none(),
        "input_dtype"_a = nb::none(), "out_dtype"_a = nb::none(), "framework"_a = "numpy",
        "Runs a registry op on arrays; returns an array of `framework`, or None with out=.");
  m.def("lower_op_shape", &lower_op_shape, "op"_a, "input_shape"_a, "input_dtype"_a,
        "indices_shape"_a, "indices_dtype"_a, "attrs"_a,
        "The framework output shape of a registry op call, from shapes and dtypes alone.");
  m.def("explain_op", &explain, "op"_a, "input_shape"_a, "input_dtype"_a, "indices_shape"_a,
        "indices_dtype"_a, "attrs"_a, "The text of `multigather explain OP`.");
}

}  // namespace multigather::python
