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
#include <torch/csrc/autograd/python_variable.h>

#include <ATen/PythonTorchFunctionTLS.h>
#include <ATen/ops/empty.h>  // at::empty: python_variable.h stopped bringing it in torch 2.11
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>

#include <array>
#include <cstdint>
#include <optional>

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
    -1, nullptr, nullptr, nullptr, nullptr, nullptr};

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
