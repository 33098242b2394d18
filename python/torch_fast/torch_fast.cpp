// multigather._torch_fast: torch tensors in and out of the per-call fast path (op_fast.cpp)
// through PyTorch's own C++ objects, for multigather.torch.gather & co. on tiny inputs.
//
// Built against one PyTorch version's headers and libraries (python/CMakeLists.txt, when the
// building interpreter imports torch); _multigather loads it only when the running torch is that
// version (torch_hooks.h). It holds no engine: `read` gives the fast path a tensor's data,
// dtype, sizes and strides straight from its at::Tensor (no DLPack capsule, no Python calls),
// after the checks that decide whether autograd or PyTorch's tracing must see the call (the
// torch.library route, multigather.torch_ops); `wrap` makes the result tensor around the output
// memory the engine wrote.
//
// Why: a DLPack round trip (torch._C._to_dlpack per operand, _from_dlpack for the result) and
// the Python-level checks were almost half of a tiny call, which took nearly twice as long as
// torch.gather (measured: bench/README.md, "Measurements behind the CPU engine's choices").
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/ops/empty.h>  // at::empty: python_variable.h stopped bringing it in torch 2.11
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "multigather/dtype.hpp"
#include "multigather/tensor.hpp"
#include "torch_dtype.h"
#include "torch_hooks.h"

#ifndef MULTIGATHER_TORCH_VERSION
#error "MULTIGATHER_TORCH_VERSION (torch.__version__ of the headers) must be defined"
#endif

namespace {

using multigather::DType;
using multigather::python::dtype_of;

// dtype_of inverted, by DType value (filled once at import; Undefined: no torch dtype).
std::array<c10::ScalarType, multigather::kDTypeCount> scalar_types;

void init_scalar_types() {
  scalar_types.fill(c10::ScalarType::Undefined);
  for (int s = 0; s < static_cast<int>(c10::ScalarType::NumOptions); ++s) {
    const auto t = static_cast<c10::ScalarType>(s);
    if (const std::optional<DType> d = dtype_of(t)) scalar_types[static_cast<std::size_t>(*d)] = t;
  }
}

std::optional<c10::ScalarType> scalar_type_of(std::int32_t dtype) {
  if (dtype < 0 || dtype >= multigather::kDTypeCount) return std::nullopt;
  const c10::ScalarType t = scalar_types[static_cast<std::size_t>(dtype)];
  if (t == c10::ScalarType::Undefined) return std::nullopt;
  return t;
}

// The dispatch key sets of a plain dense CPU tensor, and of one made in inference mode (no
// autograd keys). A tensor with any other set (functorch's batched or grad wrappers, a Python
// or functionalization key, a negative or conjugate view, sparse, mkldnn, meta, CUDA, ...) is
// left to the routes that handle it.
c10::DispatchKeySet plain_keys, inference_keys;

int read(PyObject* object, MgTorchTensor* out) {
  if (!THPVariable_CheckExact(object)) return 0;
  if (at::impl::torch_function_mode_enabled() || c10::impl::TorchDispatchModeTLS::stack_len() > 0) {
    return 0;  // a mode must see the call: the torch.library op
  }
  const at::Tensor& t = THPVariable_Unpack(object);
  if (!t.defined()) return 0;
  const c10::DispatchKeySet keys = t.key_set();
  if (keys != plain_keys && keys != inference_keys) return 0;
  if (t.requires_grad() && c10::GradMode::is_enabled()) return 0;  // autograd must see it
  const std::optional<DType> dtype = dtype_of(t.scalar_type());
  const std::int64_t ndim = t.dim();
  if (!dtype || ndim > MG_TORCH_HOOKS_MAX_RANK) return 0;
  const c10::IntArrayRef sizes = t.sizes(), strides = t.strides();
  for (std::int64_t d = 0; d < ndim; ++d) {
    out->shape[d] = sizes[d];
    out->strides[d] = strides[d];
  }
  out->ndim = static_cast<std::int32_t>(ndim);
  out->dtype = static_cast<std::int32_t>(*dtype);
  // An empty tensor's null data_ptr: data with no element (multigather::TensorView).
  out->data = t.numel() == 0 ? multigather::empty_tensor_data() : const_cast<void*>(t.const_data_ptr());
  return 1;
}

PyObject* wrap(void* data, void (*release)(void*), std::int32_t dtype, std::int32_t ndim,
               const std::int64_t* shape) {
  const std::optional<c10::ScalarType> type = scalar_type_of(dtype);
  if (!type || ndim < 0 || ndim > MG_TORCH_HOOKS_MAX_RANK) {
    release(data);
    PyErr_SetString(PyExc_SystemError, "multigather._torch_fast.wrap: bad dtype or rank");
    return nullptr;
  }
  bool owned = false;  // by the storage: its DataPtr calls release(data) when it dies
  try {
    const c10::IntArrayRef sizes(shape, static_cast<std::size_t>(ndim));
    const std::size_t bytes = static_cast<std::size_t>(c10::multiply_integers(sizes)) *
                              c10::elementSize(*type);
    c10::DataPtr data_ptr(data, data, release, c10::Device(c10::DeviceType::CPU));
    owned = true;
    c10::Storage storage(c10::Storage::use_byte_size_t(), bytes, std::move(data_ptr),
                         /*allocator=*/nullptr, /*resizable=*/false);
    // As at::empty does (empty_generic): the TensorImpl adds the autograd keys, or makes an
    // inference tensor inside inference mode.
    at::Tensor result = at::detail::make_tensor<c10::TensorImpl>(
        std::move(storage), c10::DispatchKeySet(c10::DispatchKey::CPU),
        c10::scalarTypeToTypeMeta(*type));
    result.unsafeGetTensorImpl()->set_sizes_contiguous(sizes);
    return THPVariable_Wrap(std::move(result));
  } catch (const std::exception& e) {
    if (!owned) release(data);
    PyErr_SetString(PyExc_MemoryError, e.what());
    return nullptr;
  }
}

void written(PyObject* object) {
  const at::Tensor& t = THPVariable_Unpack(object);
  if (!t.is_inference()) t.unsafeGetTensorImpl()->bump_version();
}

const MgTorchHooks hooks = {MG_TORCH_HOOKS_ABI, MULTIGATHER_TORCH_VERSION, &read, &wrap, &written};

// ---- call_op: torch.ops.multigather.<op> for a call that only autograd must see ---------------

// The registered operators found so far (one entry per operator, under the GIL): the name object
// a caller passes first (a constant of its code, the same object every call; kept alive here),
// its text for a caller that passes another object.
struct Known {
  PyObject* name;
  std::string text;
  c10::OperatorHandle handle;
};
std::vector<Known> operators;

std::optional<c10::OperatorHandle> operator_named(PyObject* name) {
  for (const Known& k : operators) {
    if (k.name == name) return k.handle;
  }
  const char* text = PyUnicode_AsUTF8(name);
  if (text == nullptr) {
    PyErr_Clear();
    return std::nullopt;
  }
  for (const Known& k : operators) {
    if (k.text == text) return k.handle;
  }
  std::optional<c10::OperatorHandle> handle = c10::Dispatcher::singleton().findSchema({text, ""});
  if (!handle) return std::nullopt;  // not registered (yet: multigather.torch_ops not imported)
  Py_INCREF(name);
  operators.push_back({name, text, *handle});
  return handle;
}

// An exact Python int that fits int64 into *out (false, no Python error left, otherwise).
bool int_of(PyObject* object, std::int64_t* out) {
  if (!PyLong_CheckExact(object)) return false;
  const long long v = PyLong_AsLongLong(object);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  *out = static_cast<std::int64_t>(v);
  return true;
}

// `object` as an argument of schema type `type` into *out; false for a value this road does not
// convert (the caller then takes torch.ops' own road, which converts or raises). A tensor must be
// exactly torch.Tensor with a plain CPU tensor's dispatch keys; *grad is set when one requires
// grad.
bool argument_of(PyObject* object, const c10::TypePtr& type, c10::IValue* out, bool* grad) {
  switch (type->kind()) {
    case c10::TypeKind::TensorType: {
      if (!THPVariable_CheckExact(object)) return false;
      const at::Tensor& t = THPVariable_Unpack(object);
      if (!t.defined() || t.key_set() != plain_keys) return false;
      *grad = *grad || t.requires_grad();
      *out = t;
      return true;
    }
    case c10::TypeKind::OptionalType:
      if (object == Py_None) {
        *out = c10::IValue();
        return true;
      }
      return argument_of(object, type->castRaw<c10::OptionalType>()->getElementType(), out, grad);
    case c10::TypeKind::IntType:
    case c10::TypeKind::SymIntType: {
      std::int64_t v = 0;
      if (!int_of(object, &v)) return false;
      *out = v;
      return true;
    }
    case c10::TypeKind::NumberType: {  // Scalar: as torch's argument parser reads a bool, an int, a float
      std::int64_t v = 0;
      if (PyBool_Check(object)) {
        *out = c10::Scalar(object == Py_True);
      } else if (int_of(object, &v)) {
        *out = c10::Scalar(v);
      } else if (PyFloat_CheckExact(object)) {
        *out = c10::Scalar(PyFloat_AS_DOUBLE(object));
      } else {
        return false;
      }
      return true;
    }
    case c10::TypeKind::FloatType:
      if (!PyFloat_CheckExact(object)) return false;
      *out = PyFloat_AS_DOUBLE(object);
      return true;
    case c10::TypeKind::BoolType:
      if (!PyBool_Check(object)) return false;
      *out = object == Py_True;
      return true;
    case c10::TypeKind::StringType: {
      if (!PyUnicode_CheckExact(object)) return false;
      const char* text = PyUnicode_AsUTF8(object);
      if (text == nullptr) {
        PyErr_Clear();
        return false;
      }
      *out = std::string(text);
      return true;
    }
    case c10::TypeKind::ListType: {
      const c10::TypeKind element = type->castRaw<c10::ListType>()->getElementType()->kind();
      if (element != c10::TypeKind::IntType && element != c10::TypeKind::SymIntType) return false;
      if (!PyList_CheckExact(object) && !PyTuple_CheckExact(object)) return false;
      std::vector<std::int64_t> values;
      const Py_ssize_t n = PySequence_Fast_GET_SIZE(object);
      values.reserve(static_cast<std::size_t>(n));
      for (Py_ssize_t k = 0; k < n; ++k) {
        std::int64_t v = 0;
        if (!int_of(PySequence_Fast_GET_ITEM(object, k), &v)) return false;
        values.push_back(v);
      }
      *out = std::move(values);
      return true;
    }
    default:
      return false;
  }
}

// Releases the GIL for the operator's call, as torch.ops does (restored on any exit).
struct WithoutGil {
  PyThreadState* state = PyEval_SaveThread();
  ~WithoutGil() { PyEval_RestoreThread(state); }
};

// call_op(name, args, kwargs): torch.ops.multigather.<name>(*args, **kwargs) through the
// dispatcher, for the one case that multigather.torch's fast path leaves to the torch op
// because autograd must see it: plain CPU tensors, one requiring grad in grad mode, no torch
// function or dispatch mode. The same operator, kernels, autograd node and errors as the
// torch.ops call (its Python exception types: IndexError, ValueError, ...), without that door's
// Python frames and schema matching. NotImplemented for every other call (the caller then takes
// torch.ops' road).
PyObject* call_op(PyObject*, PyObject* const* argv, Py_ssize_t argc) {
  HANDLE_TH_ERRORS
  if (argc != 3 || !PyUnicode_Check(argv[0]) || !PyTuple_Check(argv[1]) ||
      (argv[2] != Py_None && !PyDict_Check(argv[2]))) {
    PyErr_SetString(PyExc_TypeError, "call_op(name: str, args: tuple, kwargs: dict | None)");
    return nullptr;
  }
  if (!c10::GradMode::is_enabled() || at::impl::torch_function_mode_enabled() ||
      c10::impl::TorchDispatchModeTLS::stack_len() > 0) {
    Py_RETURN_NOTIMPLEMENTED;
  }
  const std::optional<c10::OperatorHandle> handle = operator_named(argv[0]);
  if (!handle) Py_RETURN_NOTIMPLEMENTED;
  const std::vector<c10::Argument>& schema = handle->schema().arguments();
  PyObject* args = argv[1];
  PyObject* kwargs = argv[2] == Py_None ? nullptr : argv[2];
  const Py_ssize_t positional = PyTuple_GET_SIZE(args);
  if (positional > static_cast<Py_ssize_t>(schema.size())) Py_RETURN_NOTIMPLEMENTED;
  torch::jit::Stack stack;
  stack.reserve(schema.size());
  bool grad = false;
  Py_ssize_t keywords = 0;
  for (std::size_t k = 0; k < schema.size(); ++k) {
    const c10::Argument& a = schema[k];
    PyObject* object = nullptr;
    if (static_cast<Py_ssize_t>(k) < positional) {
      object = PyTuple_GET_ITEM(args, static_cast<Py_ssize_t>(k));
    } else if (kwargs != nullptr && (object = PyDict_GetItemString(kwargs, a.name().c_str())) != nullptr) {
      ++keywords;
    }
    if (object == nullptr) {
      if (!a.default_value()) Py_RETURN_NOTIMPLEMENTED;
      stack.push_back(*a.default_value());
    } else {
      c10::IValue value;
      if (!argument_of(object, a.real_type(), &value, &grad)) Py_RETURN_NOTIMPLEMENTED;
      stack.push_back(std::move(value));
    }
  }
  if (!grad || (kwargs != nullptr && keywords != PyDict_Size(kwargs))) Py_RETURN_NOTIMPLEMENTED;
  {
    const WithoutGil released;
    handle->callBoxed(stack);
  }
  if (stack.size() == 1) return THPVariable_Wrap(std::move(stack[0]).toTensor());
  PyObject* results = PyTuple_New(static_cast<Py_ssize_t>(stack.size()));
  if (results == nullptr) return nullptr;
  for (std::size_t k = 0; k < stack.size(); ++k) {
    PyObject* item = THPVariable_Wrap(std::move(stack[k]).toTensor());
    if (item == nullptr) {
      Py_DECREF(results);
      return nullptr;
    }
    PyTuple_SET_ITEM(results, static_cast<Py_ssize_t>(k), item);
  }
  return results;
  END_HANDLE_TH_ERRORS
}

PyMethodDef methods[] = {
    {"call_op", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(&call_op)), METH_FASTCALL,
     "call_op(name, args, kwargs): torch.ops.<name>(*args, **kwargs) through the dispatcher when the call's "
     "tensors are plain CPU tensors, one requiring grad in grad mode, and no torch function or dispatch mode is "
     "active; NotImplemented otherwise."},
    {nullptr, nullptr, 0, nullptr}};

bool init_key_sets() {
  try {
    const at::Tensor plain = at::empty({1}, at::TensorOptions().dtype(at::kFloat));
    plain_keys = plain.key_set();
    c10::InferenceMode guard;
    inference_keys = at::empty({1}, at::TensorOptions().dtype(at::kFloat)).key_set();
    return true;
  } catch (const std::exception& e) {
    PyErr_SetString(PyExc_ImportError, e.what());
    return false;
  }
}

PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_torch_fast",
    "torch tensors in and out of multigather's per-call fast path through PyTorch's C++ objects "
    "(python/src/torch_hooks.h); built for one torch version (torch_version).",
    -1, methods, nullptr, nullptr, nullptr, nullptr};

}  // namespace

PyMODINIT_FUNC PyInit__torch_fast() {
  if (!init_key_sets()) return nullptr;
  init_scalar_types();
  PyObject* module = PyModule_Create(&module_def);
  if (module == nullptr) return nullptr;
  PyObject* capsule = PyCapsule_New(const_cast<MgTorchHooks*>(&hooks),
                                    "multigather._torch_fast.hooks", nullptr);
  const bool added = capsule != nullptr && PyModule_AddObjectRef(module, "hooks", capsule) == 0 &&
                     PyModule_AddStringConstant(module, "torch_version", MULTIGATHER_TORCH_VERSION) == 0;
  Py_XDECREF(capsule);
  if (!added) {
    Py_DECREF(module);
    return nullptr;
  }
  return module;
}
