// The registry from Python (op_bindings.hpp): its rows, shapes-only lowerings, explain, and the
// typed attributes of a call. Calls themselves run through the door (op_fast.cpp).
#include "op_bindings.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "cuda_arrays.hpp"
#include "multigather/sharding.hpp"
#include "multigather/transforms.hpp"

namespace multigather::python {
namespace {

using IntList = std::vector<std::int64_t>;

/// A registry row's form, as Python names it: "gather", "scatter" (takes updates) or "segment"
/// (called as a gather, lowered onto a scatter).
const char* kind_name(OpKind kind) {
  return kind == OpKind::kScatter ? "scatter" : kind == OpKind::kSegment ? "segment" : "gather";
}

DType dtype_named(std::string_view name, std::string_view what) {
  const std::optional<DType> dtype = parse_dtype(name);
  if (!dtype) {
    throw nb::type_error((std::string(what) + " dtype " + std::string(name) +
                          " is not supported").c_str());
  }
  return *dtype;
}

std::string python_type_name(nb::handle value) {
  return nb::cast<std::string>(nb::str(value.type().attr("__name__")));
}

// A numpy bool scalar (np.True_): not a Python bool and without __index__.
bool is_numpy_bool(nb::handle value) {
  if (PyLong_Check(value.ptr()) || !PyObject_HasAttrString(value.ptr(), "dtype") ||
      !PyObject_HasAttrString(value.ptr(), "item")) {
    return false;
  }
  nb::object dtype = value.attr("dtype");
  nb::object shape = value.attr("shape");
  return PyObject_HasAttrString(dtype.ptr(), "kind") &&
         nb::cast<std::string>(dtype.attr("kind")) == "b" && PyTuple_Check(shape.ptr()) &&
         PyTuple_GET_SIZE(shape.ptr()) == 0;
}

// A list-like value (an ndarray of rank >= 1 has __index__ too, which fails).
bool is_sequence(nb::handle value) {
  if (!PyObject_HasAttrString(value.ptr(), "__iter__")) return false;
  if (!PyObject_HasAttrString(value.ptr(), "ndim")) return true;
  return nb::cast<int>(value.attr("ndim")) != 0;
}

}  // namespace

AttrArg attr_arg_of(const std::string& name, nb::handle value) {
  AttrArg a;
  PyObject* o = value.ptr();
  if (value.is_none()) {
    a.kind = AttrArg::Kind::kNone;
  } else if (PyBool_Check(o) || is_numpy_bool(value)) {
    a.kind = AttrArg::Kind::kBool;
    a.b = PyObject_IsTrue(o) == 1;
  } else if (PyUnicode_Check(o)) {
    a.kind = AttrArg::Kind::kString;
    a.text = nb::cast<std::string>(value);
  } else if (PyFloat_Check(o)) {
    a.kind = AttrArg::Kind::kScalar;
    a.scalar = Scalar::from_float(PyFloat_AsDouble(o));
  } else if (PyLong_Check(o) || (PyIndex_Check(o) && !is_sequence(value))) {
    const Scalar s = scalar_of(value, "attribute " + name + " =");  // exact, int64 or uint64
    if (s.kind == Scalar::Kind::kInt) {
      a.kind = AttrArg::Kind::kInt;
      a.i = s.i;
    } else {
      a.kind = AttrArg::Kind::kScalar;
      a.scalar = s;
    }
  } else if (PyObject_HasAttrString(o, "__iter__")) {
    a.kind = AttrArg::Kind::kIntList;
    std::size_t j = 0;
    for (nb::handle item : value) {
      if (PyBool_Check(item.ptr()) || !PyIndex_Check(item.ptr())) {
        throw nb::type_error(("attribute " + name + "[" + std::to_string(j) +
                              "] must be an int, not " + python_type_name(item)).c_str());
      }
      nb::object index = nb::steal(PyNumber_Index(item.ptr()));
      if (!index.is_valid()) throw nb::python_error();
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(index.ptr(), &overflow);
      if (overflow != 0) {
        throw nb::value_error(("attribute " + name + "[" + std::to_string(j) + "] = " +
                               nb::cast<std::string>(nb::str(index)) +
                               " is outside the int64 range [-2^63, 2^63)").c_str());
      }
      a.list.push_back(static_cast<std::int64_t>(v));
      ++j;
    }
  } else if (PyObject_HasAttrString(o, "__float__")) {
    a.kind = AttrArg::Kind::kScalar;
    a.scalar = scalar_of(value);
  } else {
    throw nb::type_error(("attribute " + name + " must be an int, float, bool, str, None or a "
                          "list of ints, not " + python_type_name(value)).c_str());
  }
  return a;
}

namespace {

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
    entry["kind"] = kind_name(op.kind);
    entry["updates_name"] = op.updates_name;
    entry["attrs"] = attrs;
    entry["rules"] = op.rules;
    entry["index_rule"] = index_rule_text(op);
    entry["index_mode"] = std::string(index_mode_name(op.index_rule.mode));
    entry["negative_indices"] = op.index_rule.negative_indices;
    entry["index_attribute"] = op.index_rule.attribute;
    entry["argument_error"] = std::string(op.argument_error == ArgumentError::kTypeError ? "ArgumentTypeError" : "ValueError");
    if (op.torch_op) {
      entry["torch_op"] = torch_op_name(op);
    } else {
      entry["torch_op"] = nb::none();
    }
    ops.append(entry);
  }
  return ops;
}

// lower_op on shapes and dtypes alone (null data).
Lowering lower_shapes(std::string_view op, const IntList& input_shape, std::string_view input_dtype,
                      const IntList& indices_shape, std::string_view indices_dtype, nb::handle attrs,
                      const std::optional<IntList>& updates_shape) {
  const TensorView input(nullptr, dtype_named(input_dtype, "input"),
                         Dims(std::span<const std::int64_t>(input_shape)));
  const TensorView indices(nullptr, dtype_named(indices_dtype, "indices"),
                           Dims(std::span<const std::int64_t>(indices_shape)));
  Lowering lowering;
  if (updates_shape) {
    const TensorView updates(nullptr, input.dtype, Dims(std::span<const std::int64_t>(*updates_shape)));
    raise_if_error(lower_op(op, input, indices, updates, attributes_of(attrs), &lowering));
  } else {
    raise_if_error(lower_op(op, input, indices, attributes_of(attrs), &lowering));
  }
  return lowering;
}

nb::tuple shape_tuple(const Dims& dims) {
  nb::list shape;
  for (int d = 0; d < dims.size(); ++d) shape.append(dims[d]);
  return nb::tuple(shape);
}

nb::tuple lower_op_shape(std::string_view op, const IntList& input_shape,
                         std::string_view input_dtype, const IntList& indices_shape,
                         std::string_view indices_dtype, nb::handle attrs,
                         std::optional<IntList> updates_shape) {
  return shape_tuple(lower_shapes(op, input_shape, input_dtype, indices_shape, indices_dtype, attrs,
                                  updates_shape).output_shape);
}

// What a framework's transformation needs to know of a call before running it (multigather.jax:
// abstract evaluation and which gradients exist).
nb::dict lower_op_info(std::string_view op, const IntList& input_shape, std::string_view input_dtype,
                       const IntList& indices_shape, std::string_view indices_dtype, nb::handle attrs,
                       std::optional<IntList> updates_shape) {
  const Lowering l = lower_shapes(op, input_shape, input_dtype, indices_shape, indices_dtype, attrs, updates_shape);
  nb::dict info;
  info["output_shape"] = shape_tuple(l.output_shape);
  info["kind"] = kind_name(l.spec->kind);
  info["reduction"] = l.mean_by_count ? std::string("mean") : std::string(reduction_name(l.reduction));
  info["include_input"] = l.include_input;
  info["copies_input"] = l.owned_input != nullptr;
  info["copies_updates"] = l.owned_updates != nullptr || l.updates_computed;
  return info;
}

// A view of the Lowering as a dict: shape, strides and offset (elements) into its operand.
nb::dict view_dict(const TensorView& view, const void* base) {
  nb::dict d;
  d["shape"] = shape_tuple(view.shape);
  d["strides"] = shape_tuple(view.strides);
  const std::int64_t item = static_cast<std::int64_t>(element_size(view.dtype));
  d["offset"] = base == nullptr || view.data == nullptr
                    ? std::int64_t{0}
                    : static_cast<std::int64_t>(static_cast<const char*>(view.data) -
                                                static_cast<const char*>(base)) / item;
  return d;
}

// Zero-filled host memory for a shapes-only lowering that needs addresses (calloc: the pages
// are not touched, so a large operand costs nothing); zeros are in-range index values.
std::int64_t numel_of(const IntList& shape) {
  return saturating_numel(Dims(std::span<const std::int64_t>(shape)));
}

struct ZeroOperand {
  void* data = nullptr;
  ZeroOperand(DType dtype, const IntList& shape) {
    data = std::calloc(static_cast<std::size_t>(std::max<std::int64_t>(numel_of(shape), 1)), element_size(dtype));
    if (data == nullptr) throw std::bad_alloc();
  }
  ~ZeroOperand() { std::free(data); }
  ZeroOperand(const ZeroOperand&) = delete;
  ZeroOperand& operator=(const ZeroOperand&) = delete;
};

// The Lowering of a call as data, for a rewrite that emits it in another IR (multigather.onnx's
// model rewrite): the core views as strided views of the framework's operands, the core
// call's attributes, the core output's place in the framework output, and what the lowering
// computes beyond views (then a rewrite of views alone cannot express it). Views come from a
// lowering of zero-filled operands of these shapes, lowered only when the shapes-only lowering
// reads no index values and no operand is empty.
nb::dict lowering_views(std::string_view op, const IntList& input_shape, std::string_view input_dtype,
                        const IntList& indices_shape, std::string_view indices_dtype, nb::handle attrs,
                        std::optional<IntList> updates_shape, const std::vector<std::string>& tolerate) {
  const Lowering shapes_only =
      lower_shapes(op, input_shape, input_dtype, indices_shape, indices_dtype, attrs, updates_shape);
  nb::dict info;
  info["kind"] = kind_name(shapes_only.spec->kind);
  info["output_shape"] = shape_tuple(shapes_only.output_shape);
  nb::list beyond;  // what the lowering does that is not a view
  if (shapes_only.reads_index_values) beyond.append("reads index values");
  if (shapes_only.indices_computed) beyond.append("computes its indices");
  if (shapes_only.updates_computed || shapes_only.owned_updates) beyond.append("computes its updates");
  if (shapes_only.owned_input) beyond.append("copies its input");
  if (shapes_only.owned_indices) beyond.append("copies its indices");
  if (shapes_only.gathered) beyond.append("gathers its updates");
  if (shapes_only.mean_by_count) beyond.append("divides by a count (mean)");
  if (shapes_only.updates_step.kind != UpdatesStep::Kind::kNone) beyond.append("scales its updates");
  // (a gather's wide_accumulator is its gradient's: the forward is views and a copy)
  if (shapes_only.wide_accumulator && shapes_only.spec->kind == OpKind::kScatter) beyond.append("accumulates in float32");
  if (shapes_only.spec->kind == OpKind::kSegment) beyond.append("is a segment op");
  if (numel_of(input_shape) == 0 || numel_of(indices_shape) == 0 ||
      (updates_shape && numel_of(*updates_shape) == 0)) {
    beyond.append("has an empty operand");
  }
  info["beyond_views"] = beyond;
  for (const nb::handle reason : beyond) {
    if (std::find(tolerate.begin(), tolerate.end(), nb::cast<std::string>(reason)) == tolerate.end()) return info;
  }

  const DType in_dtype = dtype_named(input_dtype, "input");
  const DType ix_dtype = dtype_named(indices_dtype, "indices");
  ZeroOperand input_data(in_dtype, input_shape), indices_data(ix_dtype, indices_shape);
  ZeroOperand updates_data(in_dtype, updates_shape ? *updates_shape : IntList{});
  const TensorView input(input_data.data, in_dtype, Dims(std::span<const std::int64_t>(input_shape)));
  const TensorView indices(indices_data.data, ix_dtype, Dims(std::span<const std::int64_t>(indices_shape)));
  Lowering l;
  if (updates_shape) {
    const TensorView updates(updates_data.data, in_dtype, Dims(std::span<const std::int64_t>(*updates_shape)));
    raise_if_error(lower_op(op, input, indices, updates, attributes_of(attrs), &l));
    info["updates"] = view_dict(l.updates, updates_data.data);
  } else {
    raise_if_error(lower_op(op, input, indices, attributes_of(attrs), &l));
  }
  info["input_is_constant"] = l.input_is_constant;
  info["input"] = view_dict(l.input, l.input_is_constant ? nullptr : input_data.data);
  info["indices"] = view_dict(l.indices, indices_data.data);
  info["core_output_shape"] = shape_tuple(l.core_output_shape);
  info["core_output_strides"] = shape_tuple(l.core_output_strides);
  nb::list axes;
  for (std::int64_t a : l.axes) axes.append(a);
  info["axes"] = nb::tuple(axes);
  info["index_mode"] = std::string(index_mode_name(l.options.index_mode));
  info["negative_indices"] = l.options.negative_indices;
  info["fill_value"] = l.options.fill_value.to_string();
  info["reduction"] = std::string(reduction_name(l.reduction));
  info["include_input"] = l.include_input;
  info["has_scatter_base"] = l.has_scatter_base;
  if (l.has_scatter_base) info["scatter_base"] = view_dict(l.scatter_base, input_data.data);
  return info;
}

// The factors of a call for a partitioner (multigather/sharding.hpp), from shapes alone.
nb::dict sharding_factors_info(std::string_view op, const IntList& input_shape, std::string_view input_dtype,
                               const IntList& indices_shape, std::string_view indices_dtype, nb::handle attrs,
                               std::optional<IntList> updates_shape) {
  const Lowering l = lower_shapes(op, input_shape, input_dtype, indices_shape, indices_dtype, attrs, updates_shape);
  const TensorView input(nullptr, l.input.dtype, Dims(std::span<const std::int64_t>(input_shape)));
  const TensorView indices(nullptr, l.indices.dtype, Dims(std::span<const std::int64_t>(indices_shape)));
  const TensorView updates(nullptr, l.input.dtype,
                           updates_shape ? Dims(std::span<const std::int64_t>(*updates_shape)) : Dims());
  std::vector<ShardingFactor> factors;
  raise_if_error(sharding_factors(l, input, indices, updates_shape ? &updates : nullptr, &factors));
  nb::list list;
  for (const ShardingFactor& f : factors) {
    nb::dict d;
    d["role"] = std::string(factor_role_name(f.role));
    d["size"] = f.size;
    d["axis"] = f.axis;
    d["input"] = f.input;
    d["indices"] = f.indices;
    d["updates"] = f.updates;
    d["output"] = f.output;
    d["call"] = std::string(factor_strategy_name(f.call));
    d["gradient"] = std::string(factor_strategy_name(f.gradient));
    list.append(d);
  }
  nb::dict info;
  info["factors"] = list;
  info["kind"] = kind_name(l.spec->kind);
  info["reduction"] = l.mean_by_count ? std::string("mean") : std::string(reduction_name(l.reduction));
  info["include_input"] = l.include_input;
  info["updates_sum"] = updates_combine_as_sums(l);
  info["index_mode"] = std::string(index_mode_name(l.options.index_mode));
  info["reads_index_values"] = l.reads_index_values;
  info["negative_indices"] = l.options.negative_indices;
  info["output_shape"] = shape_tuple(l.output_shape);
  nb::list axes;
  for (int j = 0; j < l.shape.axes.size(); ++j) axes.append(l.shape.axes[j]);
  info["axes"] = nb::tuple(axes);
  return info;
}

std::string explain(std::string_view op, const IntList& input_shape, std::string_view input_dtype,
                    const IntList& indices_shape, std::string_view indices_dtype, nb::handle attrs,
                    std::optional<IntList> updates_shape) {
  std::string text;
  if (updates_shape) {
    raise_if_error(explain_op(op, Dims(std::span<const std::int64_t>(input_shape)),
                              dtype_named(input_dtype, "input"),
                              Dims(std::span<const std::int64_t>(indices_shape)),
                              dtype_named(indices_dtype, "indices"),
                              Dims(std::span<const std::int64_t>(*updates_shape)), attributes_of(attrs), &text));
    return text;
  }
  raise_if_error(explain_op(op, Dims(std::span<const std::int64_t>(input_shape)),
                            dtype_named(input_dtype, "input"),
                            Dims(std::span<const std::int64_t>(indices_shape)),
                            dtype_named(indices_dtype, "indices"), attributes_of(attrs), &text));
  return text;
}

// explain(..., format="svg"): arrays (host memory) give values, None gives positions.
std::string explain_svg_text(std::string_view op, const IntList& input_shape, std::string_view input_dtype,
                             const IntList& indices_shape, std::string_view indices_dtype, nb::handle attrs,
                             std::optional<InputArray> input_array, std::optional<InputArray> indices_array,
                             const IntList& cells, std::int64_t max_cells,
                             const std::optional<IntList>& updates_shape, std::optional<InputArray> updates_array) {
  TensorView input(nullptr, dtype_named(input_dtype, "input"), Dims(std::span<const std::int64_t>(input_shape)));
  TensorView indices(nullptr, dtype_named(indices_dtype, "indices"), Dims(std::span<const std::int64_t>(indices_shape)));
  if (input_array) input = view_of(*input_array, "input");
  if (indices_array) indices = view_of(*indices_array, "indices");
  const bool scatter = updates_shape.has_value() || updates_array.has_value();
  TensorView updates(nullptr, input.dtype, updates_shape ? Dims(std::span<const std::int64_t>(*updates_shape)) : Dims());
  if (updates_array) updates = view_of(*updates_array, "updates");
  if (max_cells < 1) {
    throw nb::value_error(("max_cells: " + std::to_string(max_cells) + " is not a positive number of cells").c_str());
  }
  SvgOptions options;
  options.max_cells = max_cells;
  options.cells = cells;
  std::string svg;
  Status status = scatter ? explain_svg(op, input, indices, updates, attributes_of(attrs), options, &svg)
                          : explain_svg(op, input, indices, attributes_of(attrs), options, &svg);
  if (status.reason() == StatusReason::kPictureTooLarge) {  // the picture's own limit: name the argument
    status = Status(status.code(), "format='svg': " + status.message(), status.reason());
  }
  raise_if_error(status);
  return svg;
}

// vjp_into: the gradient of a registry op for its input (multigather::execute_vjp, unbatched),
// written into grad_input; `tensor_attrs` maps tensor attributes (embedding_bag's offsets and
// per_sample_weights) to arrays. Host arrays run on the CPU engine; when grad_input is CUDA memory
// (a build with the CUDA engine), every array must be on its device, and the call runs on the CUDA
// engine on torch's current stream there (torch's ops run on that stream too: no
// synchronization but the engine's own).
void vjp_into(std::string_view op, const InputArray& input, const InputArray& indices, const InputArray& grad_output,
              const OutputArray& grad_input, nb::handle attrs, const nb::dict& tensor_attrs) {
  ExecutionContext context;
  context.device = Device::kCPU;
  context.num_threads = get_num_threads();
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
  const bool on_device = is_cuda_memory(grad_input.device_type());
  if (on_device) {
    context.device = Device::kCUDA;
    context.stream = current_stream("torch", grad_input.device_id());
  }
#else
  const bool on_device = false;  // view_of refuses CUDA arrays by name
#endif
  const auto in_view = [&](const InputArray& array, std::string_view name) {
    return on_device ? device_view_of(array, name) : view_of(array, name);
  };
  const MutableTensorView out =
      on_device ? device_mutable_view_of(grad_input, "grad_input") : mutable_view_of(grad_input, "grad_input");
  Attributes a = attributes_of(attrs);
  std::vector<InputArray> keep;  // the tensor attributes' arrays, alive for the call
  keep.reserve(tensor_attrs.size());
  for (const auto& [key, value] : tensor_attrs) {
    const std::string name = nb::cast<std::string>(key);
    keep.push_back(nb::cast<InputArray>(value));
    a.set_tensor(name, in_view(keep.back(), name));
  }
  const TensorView in = in_view(input, "input"), idx = in_view(indices, "indices");
  const TensorView grad = in_view(grad_output, "grad_output");
  Status status;
  {
    nb::gil_scoped_release release;
    status = execute_vjp(op, in, idx, nullptr, a, 0, grad, out, nullptr, context);
  }
  raise_if_error(status);
}

/// A bound function of registry op `op` (its first parameter) with the call's invalid-argument
/// errors raised as the op's row says (retype_argument_error: WebNN's TypeError).
template <auto F, typename R, typename... A>
R with_row_errors(std::string_view op, A... args) {
  try {
    return F(op, std::forward<A>(args)...);
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const nb::builtin_exception& e) {
    if (e.type() != nb::exception_type::value_error) throw;
    PyErr_SetString(PyExc_ValueError, e.what());
  }
  retype_argument_error(find_op(op));
  throw nb::python_error();
}

template <auto F, typename R, typename... A>
constexpr auto row_errors(R (*)(std::string_view, A...)) {
  return &with_row_errors<F, R, A...>;
}

}  // namespace

Attributes attributes_of(nb::handle attrs) {
  Attributes result;
  if (attrs.is_none()) return result;
  if (!PyDict_Check(attrs.ptr())) throw nb::type_error("attrs must be a dict");
  PyObject* key = nullptr;
  PyObject* value = nullptr;
  Py_ssize_t pos = 0;
  while (PyDict_Next(attrs.ptr(), &pos, &key, &value)) {
    if (!PyUnicode_Check(key)) throw nb::type_error("attribute names must be strings");
    std::string name = nb::cast<std::string>(nb::handle(key));
    AttrArg arg = attr_arg_of(name, nb::handle(value));
    result.set_arg(std::move(name), std::move(arg));
  }
  return result;
}

void bind_ops(nb::module_& m) {
  using namespace nb::literals;
  m.def("registry_ops", &registry_ops, "Every registry op with its attributes.");
  m.def("lower_op_shape", row_errors<&lower_op_shape>(&lower_op_shape), "op"_a, "input_shape"_a, "input_dtype"_a,
        "indices_shape"_a, "indices_dtype"_a, "attrs"_a, "updates_shape"_a = nb::none(),
        "The framework output shape of a registry op call, from shapes and dtypes alone.");
  m.def("lower_op_info", row_errors<&lower_op_info>(&lower_op_info), "op"_a, "input_shape"_a, "input_dtype"_a,
        "indices_shape"_a, "indices_dtype"_a, "attrs"_a, "updates_shape"_a = nb::none(),
        "The lowering of a registry op call from shapes and dtypes alone, as a dict: output_shape, "
        "kind ('gather' | 'scatter'), reduction, include_input, copies_input, copies_updates.");
  m.def("sharding_factors", row_errors<&sharding_factors_info>(&sharding_factors_info), "op"_a, "input_shape"_a, "input_dtype"_a,
        "indices_shape"_a, "indices_dtype"_a, "attrs"_a, "updates_shape"_a = nb::none(),
        "The sharding factors of a registry op call from shapes alone (multigather/sharding.hpp), "
        "as a dict: factors (a list of {role, size, axis, input, indices, updates, output, call, "
        "gradient}: the framework dimension of each tensor, -1 where absent; how the call and its "
        "VJP may keep the factor split: 'split', 'sum', 'piece' or 'replicate'), kind, reduction, "
        "updates_sum (the devices' updates combine as partial sums), "
        "include_input, index_mode, negative_indices, output_shape, axes.");
  m.def("lowering_views", row_errors<&lowering_views>(&lowering_views), "op"_a, "input_shape"_a, "input_dtype"_a,
        "indices_shape"_a, "indices_dtype"_a, "attrs"_a, "updates_shape"_a = nb::none(),
        "tolerate"_a = std::vector<std::string>{},
        "The lowering of a call as data, for a rewrite into another IR (multigather.onnx."
        "lower_model): kind, output_shape, beyond_views (what the lowering computes that views "
        "cannot say; when it holds a reason not in `tolerate`, nothing else), and else the core views input / indices / "
        "updates / scatter_base ({shape, strides, offset}: elements of the framework operand), "
        "input_is_constant, core_output_shape and core_output_strides (inside the framework "
        "output), axes, index_mode, negative_indices, fill_value (text), reduction, include_input, "
        "has_scatter_base.");
  m.def("vjp_into", row_errors<&vjp_into>(&vjp_into), "op"_a, "input"_a, "indices"_a, "grad_output"_a, "grad_input"_a, "attrs"_a,
        "tensor_attrs"_a = nb::dict(),
        "The gradient of registry op `op` for its input (multigather::execute_vjp, unbatched, host "
        "arrays), written into grad_input (C-contiguous, input's shape and dtype); tensor_attrs: "
        "tensor attributes by name (embedding_bag's offsets, per_sample_weights).");
  m.def("explain_op", row_errors<&explain>(&explain), "op"_a, "input_shape"_a, "input_dtype"_a, "indices_shape"_a,
        "indices_dtype"_a, "attrs"_a, "updates_shape"_a = nb::none(),
        "The text of `multigather explain OP`.");
  m.def("explain_svg", row_errors<&explain_svg_text>(&explain_svg_text), "op"_a, "input_shape"_a, "input_dtype"_a, "indices_shape"_a,
        "indices_dtype"_a, "attrs"_a, "input"_a = nb::none(), "indices"_a = nb::none(),
        "cells"_a = IntList{}, "max_cells"_a = 400, "updates_shape"_a = nb::none(), "updates"_a = nb::none(),
        "The SVG picture of `multigather explain OP --svg` (multigather::explain_svg): arrays "
        "(host memory) show their values, None shows positions. A scatter op takes updates_shape "
        "or updates.");
}

}  // namespace multigather::python
