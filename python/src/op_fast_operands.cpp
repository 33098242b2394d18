// python/src/op_fast_operands.cpp: the door's operands (op_fast.cpp: run_op_fast; what the
// files share: op_fast.hpp). Torch tensors: torch's API looked up on the first tensor seen,
// multigather._torch_fast's hooks loaded for the running torch, a tensor's view through the
// hooks, torch._C._to_dlpack or its members, and a result handed to torch in a DLPack capsule.
// Then the readers of every operand, in turn (read_operand: numpy's C API, torch, lists and
// scalars, DLPack / the buffer protocol) and the check that a call's operands share a device.

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <Python.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <string>
#include <string_view>

#include "arrays.hpp"
#include "multigather/output_memory.hpp"
#include "numpy_fast.hpp"
#include "op_fast.hpp"
#include "torch_hooks.h"

namespace multigather::python {

// ---- torch tensors -----------------------------------------------------------------------------

TorchApi torch_api;

const MgTorchHooks* torch_hooks = nullptr;
std::string torch_fast_state = "torch not seen yet";

namespace {

/// Loads the hooks of multigather._torch_fast for the imported `torch` module (not under
/// MULTIGATHER_TORCH_FAST=0: the DLPack route, which the tests run that way too).
void load_torch_hooks(PyObject* torch) {
#if defined(MULTIGATHER_TORCH_FAST_VERSION)
  if (const char* env = std::getenv("MULTIGATHER_TORCH_FAST"); env != nullptr && std::strcmp(env, "0") == 0) {
    torch_fast_state = "off: MULTIGATHER_TORCH_FAST=0";
    return;
  }
  nb::object version = nb::steal(PyObject_GetAttrString(torch, "__version__"));
  const char* running = version.is_valid() && PyUnicode_Check(version.ptr())
                            ? PyUnicode_AsUTF8(version.ptr()) : nullptr;
  if (running == nullptr) {
    PyErr_Clear();
    torch_fast_state = "off: torch.__version__ unreadable";
    return;
  }
  if (std::strcmp(running, MULTIGATHER_TORCH_FAST_VERSION) != 0) {
    torch_fast_state = std::string("off: built for torch ") + MULTIGATHER_TORCH_FAST_VERSION +
                       ", running torch " + running;
    return;
  }
  nb::object module = nb::steal(PyImport_ImportModule("multigather._torch_fast"));
  nb::object capsule = module.is_valid() ? nb::steal(PyObject_GetAttrString(module.ptr(), "hooks")) : nb::object();
  const auto* hooks = capsule.is_valid()
      ? static_cast<const MgTorchHooks*>(PyCapsule_GetPointer(capsule.ptr(), "multigather._torch_fast.hooks"))
      : nullptr;
  if (hooks == nullptr) {
    std::string why = "off: multigather._torch_fast did not load";
    if (PyErr_Occurred()) {
      nb::python_error error;  // takes the error
      why += std::string(" (") + error.what() + ")";
    }
    torch_fast_state = why;
    return;
  }
  if (hooks->abi != MG_TORCH_HOOKS_ABI || std::strcmp(hooks->torch_version, running) != 0) {
    torch_fast_state = "off: multigather._torch_fast is from another build";
    return;
  }
  torch_hooks = hooks;
  torch_fast_state = std::string("on (torch ") + running + ")";
#else
  (void)torch;
  torch_fast_state = "off: built without torch (no multigather._torch_fast)";
#endif
}

bool init_torch(PyTypeObject* type) {
  PyObject* torch = PyImport_GetModule(nb::str("torch").ptr());  // only if already imported
  if (torch == nullptr) {
    PyErr_Clear();
    return false;
  }
  nb::object module = nb::steal(torch);
  try {
    // Another library's class named Tensor: not torch's (asked again on its next call).
    nb::object tensor = module.attr("Tensor");
    if (tensor.ptr() != reinterpret_cast<PyObject*>(type)) return false;
    torch_api.from_numpy = nb::object(module.attr("from_numpy")).release().ptr();
    // The tensor's data, shape, strides, dtype and device in one C call (no Python-level
    // __dlpack__ checks; the fast path makes its own below).
    nb::object c_module = module.attr("_C");
    if (nb::hasattr(c_module, "_to_dlpack")) {
      torch_api.to_dlpack = nb::object(c_module.attr("_to_dlpack")).release().ptr();
    }
    if (nb::hasattr(c_module, "_from_dlpack")) {
      torch_api.from_dlpack = nb::object(c_module.attr("_from_dlpack")).release().ptr();
    }
    // Without both mode queries the DLPack route never takes a torch tensor.
    if (nb::hasattr(c_module, "_is_torch_function_mode_enabled") &&
        nb::hasattr(c_module, "_len_torch_dispatch_stack")) {
      torch_api.function_mode_enabled =
          nb::object(c_module.attr("_is_torch_function_mode_enabled")).release().ptr();
      torch_api.dispatch_stack_len = nb::object(c_module.attr("_len_torch_dispatch_stack")).release().ptr();
    }
    torch_api.strided = nb::object(module.attr("strided")).release().ptr();
    const std::pair<const char*, DType> names[] = {
        {"bool", DType::kBool},         {"int8", DType::kInt8},       {"int16", DType::kInt16},
        {"int32", DType::kInt32},       {"int64", DType::kInt64},     {"uint8", DType::kUInt8},
        {"uint16", DType::kUInt16},     {"uint32", DType::kUInt32},   {"uint64", DType::kUInt64},
        {"float16", DType::kFloat16},   {"float32", DType::kFloat32}, {"float64", DType::kFloat64},
        {"complex64", DType::kComplex64}, {"complex128", DType::kComplex128}};
    for (const auto& [name, dtype] : names) {
      if (!nb::hasattr(module, name)) continue;  // older torch: no uint16..uint64
      torch_api.dtypes.push_back({nb::object(module.attr(name)).release().ptr(), dtype});
    }
  } catch (const nb::python_error&) {
    PyErr_Clear();
    return false;
  }
  TorchApi& api = torch_api;
  api.data_ptr.init(type, "data_ptr", true);
  api.shape.init(type, "shape", false);
  api.stride.init(type, "stride", true);
  api.dtype.init(type, "dtype", false);
  api.layout.init(type, "layout", false);
  api.is_cpu.init(type, "is_cpu", false);
  api.requires_grad.init(type, "requires_grad", false);
  api.is_neg.init(type, "is_neg", true);
  api.is_conj.init(type, "is_conj", true);
  api.is_inference.init(type, "is_inference", true);
  api.tensor_type = type;
  load_torch_hooks(module.ptr());
  return true;
}

}  // namespace

bool torch_modes_inactive() {
  if (torch_api.function_mode_enabled == nullptr) return false;
  nb::object enabled = nb::steal(PyObject_CallNoArgs(torch_api.function_mode_enabled));
  nb::object depth = nb::steal(PyObject_CallNoArgs(torch_api.dispatch_stack_len));
  if (!enabled.is_valid() || !depth.is_valid()) {
    PyErr_Clear();
    return false;
  }
  return enabled.ptr() == Py_False && PyLong_Check(depth.ptr()) && PyLong_AsLong(depth.ptr()) == 0;
}

static_assert(MG_TORCH_HOOKS_MAX_RANK == kMaxRank);

namespace {

/// A view of a torch tensor through the hooks (see MgTorchHooks::read).
bool torch_view_by_hooks(PyObject* t, TensorView* view) {
  MgTorchTensor info;
  if (torch_hooks->read(t, &info) != 1 || info.dtype < 0 || info.dtype >= kDTypeCount) return false;
  view->data = info.data;
  view->dtype = static_cast<DType>(info.dtype);
  view->shape = Dims();
  view->strides = Dims();
  for (int d = 0; d < info.ndim; ++d) {
    view->shape.push_back(info.shape[d]);
    view->strides.push_back(info.strides[d]);
  }
  return true;
}

}  // namespace

bool is_torch_tensor(PyObject* object) {
  PyTypeObject* type = Py_TYPE(object);
  if (type == torch_api.tensor_type) return true;
  if (torch_api.tensor_type != nullptr || std::strcmp(type->tp_name, "Tensor") != 0) return false;
  return init_torch(type);
}

namespace {

/// A subclass of torch.Tensor (DTensor, FakeTensor, a wrapper subclass): no reader takes it as
/// is; the caller's torch op does (the dispatcher reaches the subclass's own dispatch).
bool is_torch_subclass(PyObject* object) {
  if (torch_api.tensor_type != nullptr) return PyObject_TypeCheck(object, torch_api.tensor_type) != 0;
  // No torch.Tensor seen yet: a base class named Tensor that init_torch finds to be torch's own
  // (TensorFlow's EagerTensor derives from tf.Tensor, also named Tensor).
  for (PyTypeObject* t = Py_TYPE(object)->tp_base; t != nullptr; t = t->tp_base) {
    if (std::strcmp(t->tp_name, "Tensor") == 0 && init_torch(t)) return true;
  }
  return false;
}

}  // namespace

bool member_is(PyObject* object, const TorchMember& m, PyObject* expected) {
  PyObject* v = m.get(object);
  if (v == nullptr) {
    PyErr_Clear();
    return false;
  }
  const bool same = v == expected;
  Py_DECREF(v);
  return same;
}

namespace {

/// int64 values of a tuple (torch.Size, stride()) into `dims`.
bool dims_of_tuple(PyObject* tuple, Dims* dims) {
  if (tuple == nullptr || !PyTuple_Check(tuple)) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(tuple);
  if (n > kMaxRank) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const long long v = PyLong_AsLongLong(PyTuple_GET_ITEM(tuple, i));
    if (v == -1 && PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    dims->push_back(v);
  }
  return true;
}

bool torch_view_by_members(PyObject* t, TensorView* view, bool writable);

/// torch_view through torch._C._to_dlpack: one call for data, shape, strides, dtype and device
/// (it fails for layouts without storage: sparse, mkldnn), then the negative and conjugate bits
/// (which DLPack does not carry) and, for `out`, requires_grad. 1: read; 0: not taken; -1: the
/// capsule is not the expected one (the member path decides).
int torch_view_by_dlpack(PyObject* t, TensorView* view, bool writable, int* cuda_device = nullptr) {
  const TorchApi& api = torch_api;
  PyObject* capsule = PyObject_CallOneArg(api.to_dlpack, t);
  if (capsule == nullptr) {
    PyErr_Clear();
    return 0;  // not a tensor the fast path reads
  }
  nb::object keep = nb::steal(capsule);  // its destructor calls the deleter
  auto* managed = static_cast<DLManagedTensorC*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed == nullptr) {
    PyErr_Clear();
    return -1;
  }
  const DLTensorC& dl = managed->dl_tensor;
  // kDLCPU = 1; kDLCUDA = 2 only where the caller takes device memory (`cuda_device`: its id).
  const bool cuda = cuda_device != nullptr && dl.device_type == 2;
  if ((dl.device_type != 1 && !cuda) || dl.ndim < 0 || dl.ndim > kMaxRank) return 0;
  if (cuda_device != nullptr) *cuda_device = cuda ? dl.device_id : -1;
  const std::optional<DType> dtype = dtype_from_dlpack(nb::dlpack::dtype{dl.code, dl.bits, dl.lanes});
  if (!dtype) return 0;
  view->dtype = *dtype;
  view->shape = Dims();
  view->strides = Dims();
  for (int d = 0; d < dl.ndim; ++d) view->shape.push_back(dl.shape[d]);
  if (dl.strides != nullptr) {
    for (int d = 0; d < dl.ndim; ++d) view->strides.push_back(dl.strides[d]);
  } else {
    view->strides = contiguous_strides(view->shape);
  }
  view->data = static_cast<const char*>(dl.data) + dl.byte_offset;
  if (!member_is(t, api.is_neg, Py_False)) return 0;
  if ((view->dtype == DType::kComplex64 || view->dtype == DType::kComplex128) &&
      !member_is(t, api.is_conj, Py_False)) {
    return 0;
  }
  // A tensor that requires grad takes the general path, which refuses it in grad mode (the
  // result would silently lack a grad_fn) and reads it detached otherwise.
  if (!member_is(t, api.requires_grad, Py_False)) return 0;
  (void)writable;  // out and inputs alike
  return 1;
}

}  // namespace

bool torch_view(PyObject* t, TensorView* view, bool writable) {  // see op_fast.hpp
  if (torch_hooks != nullptr) return torch_view_by_hooks(t, view);
  if (torch_api.to_dlpack != nullptr) {
    const int read = torch_view_by_dlpack(t, view, writable);
    if (read >= 0) return read == 1;
  }
  return torch_view_by_members(t, view, writable);
}

#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
bool torch_cuda_view(PyObject* t, TensorView* view, int* cuda_device) {  // see op_fast.hpp
  int device = -1;
  if (torch_api.to_dlpack == nullptr || torch_view_by_dlpack(t, view, true, &device) != 1 || device < 0) return false;
  *cuda_device = device;
  return true;
}
#endif

namespace {

bool torch_view_by_members(PyObject* t, TensorView* view, bool writable) {
  const TorchApi& api = torch_api;
  if (!member_is(t, api.is_cpu, Py_True) || !member_is(t, api.layout, api.strided)) return false;
  if (!member_is(t, api.requires_grad, Py_False)) return false;  // see torch_view_by_dlpack
  (void)writable;
  PyObject* dtype = api.dtype.get(t);
  if (dtype == nullptr) {
    PyErr_Clear();
    return false;
  }
  Py_DECREF(dtype);  // torch's dtype objects live as long as the torch module (held above)
  bool found = false;
  for (const auto& entry : api.dtypes) {
    if (entry.dtype == dtype) {
      view->dtype = entry.type;
      found = true;
      break;
    }
  }
  if (!found) return false;
  if (!member_is(t, api.is_neg, Py_False)) return false;
  if ((view->dtype == DType::kComplex64 || view->dtype == DType::kComplex128) &&
      !member_is(t, api.is_conj, Py_False)) {
    return false;
  }
  nb::object strides = nb::steal(api.stride.get(t));
  nb::object shape = nb::steal(api.shape.get(t));
  nb::object data = nb::steal(api.data_ptr.get(t));
  view->shape = Dims();
  view->strides = Dims();
  if (!data.is_valid() || !dims_of_tuple(shape.ptr(), &view->shape) ||
      !dims_of_tuple(strides.ptr(), &view->strides) || view->shape.size() != view->strides.size()) {
    PyErr_Clear();
    return false;
  }
  view->data = PyLong_AsVoidPtr(data.ptr());
  if (view->data == nullptr && PyErr_Occurred()) {
    PyErr_Clear();
    return false;
  }
  if (view->data == nullptr && view->numel() == 0) view->data = empty_tensor_data();  // TensorView
  return true;
}

}  // namespace

void delete_torch_result(DLManagedTensorC* managed) {
  free_output_memory(managed->dl_tensor.data);
  delete reinterpret_cast<TorchResult*>(managed);
}

namespace {

void dltensor_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;  // torch took it
  auto* managed = static_cast<DLManagedTensorC*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed == nullptr) {
    PyErr_Clear();
    return;
  }
  managed->deleter(managed);
}

}  // namespace

TorchResult* new_torch_result(DType dtype, const Dims& shape) {
  std::int64_t numel = 0;
  if (!element_count(shape, &numel)) {
    memory_error(dtype, shape);
    return nullptr;
  }
  auto* r = new (std::nothrow) TorchResult();
  if (r == nullptr) {
    PyErr_NoMemory();
    return nullptr;
  }
  try {
    r->managed.dl_tensor.data =
        allocate_output_memory(static_cast<std::size_t>(numel) * element_size(dtype));
  } catch (const std::bad_alloc&) {
    delete r;
    memory_error(dtype, shape);
    return nullptr;
  }
  const nb::dlpack::dtype dl = dlpack_from_dtype(dtype);
  DLTensorC& t = r->managed.dl_tensor;
  t.device_type = 1;  // kDLCPU
  t.device_id = 0;
  t.ndim = shape.size();
  t.code = dl.code;
  t.bits = dl.bits;
  t.lanes = dl.lanes;
  const Dims strides = contiguous_strides(shape);
  for (int d = 0; d < shape.size(); ++d) {
    r->shape[d] = shape[d];
    r->strides[d] = strides[d];
  }
  t.shape = r->shape;
  t.strides = r->strides;
  t.byte_offset = 0;
  r->managed.manager_ctx = r;
  r->managed.deleter = delete_torch_result;
  return r;
}

PyObject* torch_tensor_of(TorchResult* r) {
  PyObject* capsule = PyCapsule_New(&r->managed, "dltensor", dltensor_capsule_destructor);
  if (capsule == nullptr) {
    delete_torch_result(&r->managed);
    return nullptr;
  }
  PyObject* tensor = PyObject_CallOneArg(torch_api.from_dlpack, capsule);
  Py_DECREF(capsule);  // frees the result unless torch took it
  return tensor;
}

// ---- operands: the readers ---------------------------------------------------------------------

const char* framework_name_of(PyObject* object) {
  nb::object module = nb::steal(PyObject_GetAttrString(reinterpret_cast<PyObject*>(Py_TYPE(object)), "__module__"));
  if (!module.is_valid() || !PyUnicode_Check(module.ptr())) {
    PyErr_Clear();
    return "numpy";
  }
  const char* text = PyUnicode_AsUTF8(module.ptr());
  if (text == nullptr) {
    PyErr_Clear();
    return "numpy";
  }
  std::string_view root = text;
  root = root.substr(0, root.find('.'));
  for (const char* name : {"jax", "cupy", "tensorflow", "torch"}) {
    if (root == name) return name;
  }
  return root == "jaxlib" ? "jax" : "numpy";
}

namespace {

/// The DLPack / buffer-protocol reader (nanobind's ndarray import: jax, cupy, tensorflow, CUDA
/// and normalized torch tensors, memoryview, numpy subclasses), host or CUDA memory. Raises the
/// precise message (view_of's) for an array it cannot read.
bool dlpack_view(PyObject* object, const char* name, Operand* op) {
  InputArray array;
  if (!nb::try_cast(nb::handle(object), array)) {
    PyErr_Clear();
    return false;
  }
  op->framework = Framework::kOther;
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
  if (is_cuda_memory(array.device_type())) {
    op->view = device_view_of(array, name);
    op->device = Device::kCUDA;
    op->device_id = array.device_id();
    op->array = std::move(array);
    return true;
  }
#endif
  op->view = view_of(array, name);  // host memory, or its message
  op->array = std::move(array);
  return true;
}

}  // namespace

bool read_operand(PyObject* object, const char* name, bool normalized, Operand* op) {
  if (ndarray_view(object, &op->view)) return true;
  if (is_torch_tensor(object)) {
    op->framework = Framework::kTorch;
    op->framework_name = "torch";
    if (torch_view(object, &op->view, false)) {
      op->torch_by_dlpack = torch_hooks == nullptr;
      return true;
    }
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
    int cuda_device = -1;
    if (torch_api.to_dlpack != nullptr &&
        torch_view_by_dlpack(object, &op->view, false, &cuda_device) == 1 && cuda_device >= 0) {
      op->device = Device::kCUDA;
      op->device_id = cuda_device;
      op->torch_by_dlpack = true;
      return true;
    }
#endif
    if (!normalized) return false;
    op->torch_by_dlpack = true;
  } else if (is_torch_subclass(object)) {
    return false;
  } else if (PyObject* array = ndarray_from_sequence(object)) {
    op->keep = nb::steal(array);
    return ndarray_view(array, &op->view);
  }
  if (normalized) return dlpack_view(object, name, op);
  try {
    return dlpack_view(object, name, op);
  } catch (const std::exception&) {
    PyErr_Clear();
    return false;  // the Python fallback words it
  }
}

namespace {

std::string device_text(const Operand& op) {
  return op.device == Device::kCUDA ? "cuda:" + std::to_string(op.device_id) : std::string("the host");
}

}  // namespace

void check_same_device(const Operand& input, const Operand& other, const char* name) {
  if (other.device == input.device && other.device_id == input.device_id) return;
  throw nb::value_error((std::string(name) + " is on " + device_text(other) + " but input is on " +
                         device_text(input) + " (every array of a call must be on one CUDA device, "
                         "or all in host memory: input decides)").c_str());
}

}  // namespace multigather::python
