// python/src/op_fast_bindings.cpp: the door's functions in the module (op_fast.cpp: run_op_fast;
// what the files share: op_fast.hpp): multigather.run (run_door: the op's name and keyword
// attributes placed in the op's declaration order for run_op_fast, else the Python fallback),
// set_run_fallback, op_handle and the FastOp of each handle, the output memory's statistics,
// and bind_op_fast, which adds them, run_op_fast and default_attr to the module.

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "arrays.hpp"
#include "multigather/output_memory.hpp"
#include "numpy_fast.hpp"
#include "op_fast.hpp"

namespace multigather::python {
namespace {

namespace nb = nanobind;

PyMethodDef run_op_fast_def = {
    "run_op_fast", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&run_op_fast)),
    METH_FASTCALL,
    "run_op_fast(handle, input, indices[, updates], out, *attrs): the door. Registry op `handle` "
    "(op_handle; a scatter op takes updates; | normalized_handle_bit: operands normalized by "
    "_interop.call_door) on any array, the attributes positionally in the op's declaration order "
    "(default_attr: not given); the result (of the input's framework), `out`, or NotImplemented "
    "when no reader takes an operand as is. Raises every error of the call."};

// ---- the door: multigather.run -----------------------------------------------------------------

/// multigather._registry.run_general_call: the fallback of multigather.run (set at import by
/// set_run_fallback), for every call run_op_fast does not take.
PyObject* run_fallback = nullptr;

/// The handle (a Python int) of each op name seen by `run`, keyed by the name's str object; the
/// keys are kept alive (a reference each), so an address never names another op. Bounded.
struct DoorEntry {
  PyObject* name = nullptr;    // strong reference
  PyObject* handle = nullptr;  // strong reference (an int)
  const FastOp* op = nullptr;
};
std::vector<DoorEntry> door_ops;

int op_handle_of_spec(const OpSpec* spec);

const DoorEntry* door_entry(PyObject* name) {
  for (const DoorEntry& e : door_ops) {
    if (e.name == name) return &e;
  }
  if (!PyUnicode_CheckExact(name)) return nullptr;
  Py_ssize_t size = 0;
  const char* text = PyUnicode_AsUTF8AndSize(name, &size);
  if (text == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  const OpSpec* spec = find_op(std::string_view(text, static_cast<std::size_t>(size)));
  if (spec == nullptr) return nullptr;  // the general path words the unknown op
  if (door_ops.size() >= 64) {          // many distinct str objects: start over
    for (DoorEntry& e : door_ops) {
      Py_DECREF(e.name);
      Py_DECREF(e.handle);
    }
    door_ops.clear();
  }
  const int handle = op_handle_of_spec(spec);
  PyObject* handle_object = PyLong_FromLong(handle);
  if (handle_object == nullptr) {
    PyErr_Clear();
    return nullptr;
  }
  Py_INCREF(name);
  door_ops.push_back({name, handle_object, fast_ops[static_cast<std::size_t>(handle)].get()});
  return &door_ops.back();
}

/// multigather.run(op, input, indices, *, updates=None, out=None, **attrs): registry op `op`
/// through run_op_fast, its attributes placed in the op's declaration order; an unknown op or
/// attribute, updates given to a gather (or not to a scatter), and every call the readers do not
/// take as is (run_op_fast's NotImplemented) go to the fallback (_registry.run_general_call),
/// with the same arguments: the registry's message, or the operands normalized.
PyObject* run_door(PyObject*, PyObject* const* args, Py_ssize_t nargs, PyObject* kwnames) {
  if (run_fallback == nullptr) {
    PyErr_SetString(PyExc_RuntimeError, "multigather.run: the package did not finish importing");
    return nullptr;
  }
  auto general = [&] { return PyObject_Vectorcall(run_fallback, args, static_cast<std::size_t>(nargs), kwnames); };
  if (nargs != 3) return general();  // its TypeError
  const DoorEntry* entry = door_entry(args[0]);
  if (entry == nullptr) return general();
  const OpSpec& spec = *entry->op->spec;
  const bool scatter = spec.kind == OpKind::kScatter;
  constexpr std::size_t kMaxAttrs = 24;
  if (spec.attrs.size() > kMaxAttrs) return general();
  PyObject* updates = nullptr;
  PyObject* out = Py_None;
  std::array<PyObject*, kMaxAttrs> values;
  values.fill(default_attr);
  const Py_ssize_t nkw = kwnames == nullptr ? 0 : PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < nkw; ++i) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, i);
    PyObject* value = args[nargs + i];
    if (PyUnicode_CompareWithASCIIString(key, "updates") == 0) {
      updates = value == Py_None ? nullptr : value;
      continue;
    }
    if (PyUnicode_CompareWithASCIIString(key, "out") == 0) {
      out = value;
      continue;
    }
    std::size_t j = 0;
    while (j < spec.attrs.size() && PyUnicode_CompareWithASCIIString(key, spec.attrs[j].name.c_str()) != 0) ++j;
    if (j == spec.attrs.size()) return general();  // not an attribute of the op: its ValueError
    values[j] = value;
  }
  if (scatter != (updates != nullptr)) return general();  // a scatter needs updates, a gather takes none
  std::array<PyObject*, 5 + kMaxAttrs> argv;
  std::size_t n = 0;
  argv[n++] = entry->handle;
  argv[n++] = args[1];
  argv[n++] = args[2];
  if (scatter) argv[n++] = updates;
  argv[n++] = out;
  for (std::size_t j = 0; j < spec.attrs.size(); ++j) argv[n++] = values[j];
  PyObject* result = run_op_fast(nullptr, argv.data(), static_cast<Py_ssize_t>(n));
  if (result != Py_NotImplemented) return result;  // the result, or the error raised
  Py_DECREF(result);
  return general();
}

PyMethodDef run_door_def = {
    "run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&run_door)),
    METH_FASTCALL | METH_KEYWORDS,
    "run(op, input, indices, *, updates=None, out=None, **attrs)\n--\n\n"
    "Runs registry op ``op`` (\"gather_multiaxis\", \"onnx.GatherND\", \"torch.gather\",\n"
    "\"numpy.take\", \"tf.gather\", \"jax.numpy.take\", \"stablehlo.gather\", \"webnn.gather\", ...; see\n"
    "``ops()``) with the framework's attribute names, e.g.\n"
    "``run(\"onnx.Gather\", data, indices, axis=1)``. Attribute values: ints, lists of ints, bools,\n"
    "floats, enum strings; None means the default (or \"none\" where the framework allows it, as\n"
    "numpy.take's axis).\n"
    "\n"
    "A scatter op (\"scatter_multiaxis\", ...) takes ``updates`` and returns a new array of\n"
    "input's shape, or writes ``out``, which may be ``input`` itself (in place).\n"
    "\n"
    "Returns an array of input's framework (or ``out``, a writable array of the output shape).\n"
    "Raises IndexError for out-of-range indices (the position in the caller's indices),\n"
    "ValueError for an unknown op or attribute and for shapes and attributes the op's rules\n"
    "reject (and for a scatter op without updates; integer attributes outside int64 name the\n"
    "attribute), TypeError for dtypes, MemoryError for an output that cannot be allocated,\n"
    "KeyboardInterrupt for Ctrl-C during the call. A call that raises leaves ``out`` unchanged\n"
    "(CPU); torch conjugate and negative views as ``out`` receive the true values.\n"
    "\n"
    "\n"
    "Source: docs/spec.md (the operator), docs/quick_reference.md (every op, its attributes and\n"
    "the framework document it follows).\n"};

PyObject* set_run_fallback(PyObject*, PyObject* function) {
  Py_XDECREF(run_fallback);
  Py_INCREF(function);
  run_fallback = function;
  Py_RETURN_NONE;
}

PyMethodDef set_run_fallback_def = {
    "set_run_fallback", reinterpret_cast<PyCFunction>(&set_run_fallback), METH_O,
    "set_run_fallback(function): the general path of run (multigather._registry.run_general_call)."};

/// op_handle(name, attr_names): the handle of registry op `name` for run_op_fast; ValueError
/// unless `attr_names` are the op's attributes in declaration order (the wrappers' contract).
int op_handle(std::string_view name, const std::vector<std::string>& attr_names) {
  const OpSpec* spec = find_op(name);
  if (spec == nullptr) throw nb::value_error(unknown_op_message(name).c_str());
  std::string declared;
  bool same = attr_names.size() == spec->attrs.size();
  for (std::size_t j = 0; j < spec->attrs.size(); ++j) {
    declared += (j ? ", " : "") + spec->attrs[j].name;
    if (same && attr_names[j] != spec->attrs[j].name) same = false;
  }
  if (!same) {
    throw nb::value_error((std::string(name) + "'s attributes are (" + declared +
                           "), in this order").c_str());
  }
  return op_handle_of_spec(spec);
}

/// The handle of registry row `spec`: its index, its FastOp made on first use.
int op_handle_of_spec(const OpSpec* spec) {
  const std::vector<OpSpec>& registry = op_registry();
  const auto index = static_cast<std::size_t>(spec - registry.data());
  if (fast_ops.size() < registry.size()) fast_ops.resize(registry.size());
  if (!fast_ops[index]) {
    fast_ops[index] = std::make_unique<FastOp>();
    fast_ops[index]->spec = spec;
  }
  return static_cast<int>(index);
}

nb::dict memory_stats() {
  const OutputMemoryStats s = output_memory_stats();
  nb::dict d;
  d["cached_bytes"] = s.cached_bytes;
  d["cached_blocks"] = s.cached_blocks;
  d["limit_bytes"] = s.limit_bytes;
  d["reused"] = s.reused;
  d["mapped"] = s.mapped;
  return d;
}

}  // namespace

void bind_op_fast(nb::module_& m) {
  using namespace nb::literals;
  default_attr = PyObject_CallNoArgs(reinterpret_cast<PyObject*>(&PyBaseObject_Type));
  m.attr("default_attr") = nb::borrow(default_attr);
  m.def("op_handle", &op_handle, "name"_a, "attr_names"_a,
        "The run_op_fast handle of registry op `name`; ValueError unless attr_names are its "
        "attributes in declaration order.");
  add_fastcall_function(m, &run_op_fast_def);
  add_fastcall_function(m, &run_door_def);
  add_fastcall_function(m, &set_run_fallback_def);
  m.attr("normalized_handle_bit") = kNormalized;
  m.def("torch_fast_state", [] { return torch_fast_state; },
        "Whether torch tensors take multigather._torch_fast's hooks in the fast path: 'on (torch "
        "V)', or 'off: <why>' (not built, another torch version, ...), or 'torch not seen yet'.");
  m.def("load_torch_fast", [](nb::handle tensor) {
          is_torch_tensor(tensor.ptr());  // the first torch.Tensor seen loads the hooks
          return torch_fast_state;
        }, "tensor"_a,
        "Sees torch through `tensor` as the fast path's first torch.Tensor does (loads "
        "multigather._torch_fast's hooks when it is one; nothing otherwise); then torch_fast_state(). "
        "For callers whose first torch call does not reach the fast path (every operand requires grad).");
  m.def("output_memory_stats", &memory_stats,
        "The cache of freed output blocks: cached_bytes, cached_blocks, limit_bytes, reused, "
        "mapped (multigather/output_memory.hpp).");
  m.def("set_output_memory_cache_limit", [](std::size_t bytes) { set_output_memory_cache_limit(bytes); },
        "bytes"_a, "Bounds the cache of freed output blocks (0: off).");
}

}  // namespace multigather::python
