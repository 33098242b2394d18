// The door: every call from Python into the C++ pipeline. run_op_fast(handle, input, indices,
// out, *attrs) for a gather op, run_op_fast(handle, input, indices, updates, out, *attrs) for a
// scatter op, called by multigather.run (run_door, below: the op's name and keyword attributes)
// and by every framework wrapper (multigather.numpy.take, onnx.gather_nd, torch.gather, ...).
//
//   readers (operand -> view) -> the op's cached Lowering -> execute -> a result of the input's
//   framework (or out)
//
//  - the op is looked up once (op_handle: its registry index) and the attributes come
//    positionally in the op's declaration order, as plain Python values (no dict, no kwargs);
//  - readers, in turn: numpy ndarrays through the NumPy C API (numpy_fast.cpp; ml_dtypes'
//    bfloat16 and float8 too), Python lists and scalars through np.asarray's C function, torch
//    tensors through multigather._torch_fast's hooks (their at::Tensor; torch_hooks.h) when it
//    was built for the running torch, else through torch._C._to_dlpack (one C call; the negative
//    and conjugate bits read besides; CUDA tensors too in a CUDA build), and DLPack / the buffer
//    protocol for every other array (jax, cupy, tensorflow, memoryview; host or CUDA memory). A
//    torch operand is taken only in the calls that autograd and PyTorch's tracing need not see
//    (no torch function or dispatch mode, no grad needed);
//  - the Lowering of a call is kept, per op, for the next call with the same shapes, strides,
//    dtypes, device and attributes (lower_op is a pure function of those: only the data pointers
//    change, at the same offsets from the operands), so a repeated call goes straight to
//    execute;
//  - the result is a numpy array, in numpy's memory when small, in allocate_output_memory's
//    reused blocks when large; for a torch input, a torch tensor on output memory (made by the
//    hooks, else handed over through a DLPack capsule to torch._C._from_dlpack); for other
//    frameworks their from_dlpack; on a CUDA device, memory of the framework's allocator on its
//    current stream (cuda_arrays.cpp).
// NotImplemented means one thing: no reader takes an operand as is (a torch tensor that needs
// autograd, a negative or conjugate view, a JAX tracer, an object that is no array, an `out`
// whose write checks are Python's, ...). The caller then normalizes the operands
// (_interop.call_door) and calls again with the kNormalized bit, or runs JAX tracers through
// the XLA FFI. Every error of a call (an attribute, lower_op, execute: an index out of range,
// an overlapping out=) is raised here, once, in one wording; the kernel never runs twice.

#include <algorithm>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/string_view.h>
#include <nanobind/stl/vector.h>

#include <Python.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "cuda_arrays.hpp"
#include "multigather/output_memory.hpp"
#include "numpy_fast.hpp"
#include "op_bindings.hpp"
#include "torch_hooks.h"

namespace multigather::python {
namespace {

namespace nb = nanobind;

// ---- torch tensors -----------------------------------------------------------------------------

/// A torch.Tensor attribute or no-argument method, read through its C descriptor (looked up
/// once on the type: no attribute lookup, no bound method per call); through
/// PyObject_GetAttr / CallMethod when torch defines it in Python instead.
struct TorchMember {
  PyObject* name = nullptr;
  PyObject* descr = nullptr;  // a getset or method descriptor of torch.Tensor, or null
  bool method = false;

  void init(PyTypeObject* type, const char* text, bool is_method) {
    name = PyUnicode_InternFromString(text);
    method = is_method;
    PyObject* d = PyObject_GetAttr(reinterpret_cast<PyObject*>(type), name);
    if (d == nullptr) {
      PyErr_Clear();
      return;
    }
    const bool c_level = is_method ? Py_TYPE(d) == &PyMethodDescr_Type : Py_TYPE(d) == &PyGetSetDescr_Type;
    if (c_level) {
      descr = d;  // kept for the life of the process
    } else {
      Py_DECREF(d);
    }
  }

  /// A new reference, or null with a Python error set.
  PyObject* get(PyObject* object) const {
    if (descr != nullptr) {
      if (method) return PyObject_Vectorcall(descr, &object, 1, nullptr);
      return Py_TYPE(descr)->tp_descr_get(descr, object, reinterpret_cast<PyObject*>(Py_TYPE(object)));
    }
    return method ? PyObject_CallMethodNoArgs(object, name) : PyObject_GetAttr(object, name);
  }
};

/// DLPack's C structs (https://dmlc.github.io/dlpack/latest/c_api.html; ABI-stable): what
/// torch._C._to_dlpack hands back in a capsule named "dltensor".
struct DLTensorC {
  void* data;
  std::int32_t device_type;  // kDLCPU = 1
  std::int32_t device_id;
  std::int32_t ndim;
  std::uint8_t code, bits;
  std::uint16_t lanes;
  std::int64_t* shape;
  std::int64_t* strides;  // null: C-contiguous
  std::uint64_t byte_offset;
};
struct DLManagedTensorC {
  DLTensorC dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorC*);
};

/// What the fast path needs of torch, looked up the first time a torch.Tensor is seen (torch is
/// never imported here).
struct TorchApi {
  PyTypeObject* tensor_type = nullptr;  // null: not seen yet
  PyObject* to_dlpack = nullptr;        // torch._C._to_dlpack, or null
  PyObject* from_dlpack = nullptr;      // torch._C._from_dlpack, or null
  PyObject* from_numpy = nullptr;
  PyObject* strided = nullptr;
  // torch._C._is_torch_function_mode_enabled / _len_torch_dispatch_stack (the DLPack route's
  // mode checks; the hooks make their own), or null.
  PyObject* function_mode_enabled = nullptr;
  PyObject* dispatch_stack_len = nullptr;
  struct DtypeEntry {
    PyObject* dtype;
    DType type;
  };
  std::vector<DtypeEntry> dtypes;
  TorchMember data_ptr, shape, stride, dtype, layout, is_cpu, requires_grad, is_neg, is_conj, is_inference;
};

TorchApi torch_api;

/// multigather._torch_fast's hooks (torch_hooks.h) when it was built and the running torch is
/// the version it was built for; null otherwise (the DLPack route). torch_fast_state says which.
const MgTorchHooks* torch_hooks = nullptr;
std::string torch_fast_state = "torch not seen yet";

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

/// The DLPack route's check that no torch function mode and no dispatch mode is active (a mode
/// must see the call: the wrappers then take the torch.library op); run_op_fast asks it once
/// per call. The hooks check this themselves.
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

bool is_torch_tensor(PyObject* object) {
  PyTypeObject* type = Py_TYPE(object);
  if (type == torch_api.tensor_type) return true;
  if (torch_api.tensor_type != nullptr || std::strcmp(type->tp_name, "Tensor") != 0) return false;
  return init_torch(type);
}

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

/// Whether member `m` of `object` is `expected` (a singleton: True, False).
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

/// A view of a CPU torch tensor of strided layout, no negative or conjugate bit (what the
/// general path reads after resolve_neg / resolve_conj) and a dtype multigather has (numpy's,
/// when read through its members), not requiring grad (the general path refuses such an input
/// in grad mode and cannot export such an `out`; with the hooks, an operand that requires grad
/// is read when grad mode is off, as the general path reads it detached). False, no Python
/// error set, for anything else: the wrappers then ask torch_op_needed whether the
/// torch.library op must take the call. No torch function or dispatch mode may be active: the
/// hooks check it in `read`, the DLPack route in run_op_fast (torch_modes_inactive, once per
/// call).
bool torch_view(PyObject* t, TensorView* view, bool writable);
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

bool torch_view(PyObject* t, TensorView* view, bool writable) {  // see above
  if (torch_hooks != nullptr) return torch_view_by_hooks(t, view);
  if (torch_api.to_dlpack != nullptr) {
    const int read = torch_view_by_dlpack(t, view, writable);
    if (read >= 0) return read == 1;
  }
  return torch_view_by_members(t, view, writable);
}

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

/// A result for torch: output memory handed to torch._C._from_dlpack in a DLPack capsule (no
/// numpy array in between; torch calls the deleter when the tensor's storage dies, on any
/// thread: free_output_memory is thread-safe).
struct TorchResult {
  DLManagedTensorC managed;  // first: the deleter casts back
  std::int64_t shape[kMaxRank];
  std::int64_t strides[kMaxRank];
};

void delete_torch_result(DLManagedTensorC* managed) {
  free_output_memory(managed->dl_tensor.data);
  delete reinterpret_cast<TorchResult*>(managed);
}

void dltensor_capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "used_dltensor")) return;  // torch took it
  auto* managed = static_cast<DLManagedTensorC*>(PyCapsule_GetPointer(capsule, "dltensor"));
  if (managed == nullptr) {
    PyErr_Clear();
    return;
  }
  managed->deleter(managed);
}

/// New output memory of `shape` as a TorchResult; null (MemoryError set) when memory runs out.
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

/// The torch tensor of a written TorchResult (consumed either way).
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

enum class Framework : std::uint8_t { kNumpy, kTorch, kOther };

/// One operand of a call, as a view, and what its result or its device needs.
struct Operand {
  TensorView view;
  Framework framework = Framework::kNumpy;
  const char* framework_name = "numpy";  // the input's: "torch", or for kOther (door_call)
                                         // framework_name_of's "jax", "cupy", ... (to_python)
  nb::object keep;                       // a converted list
  std::optional<InputArray> array;       // read through DLPack / the buffer protocol
  Device device = Device::kCPU;
  int device_id = -1;                    // CUDA: the device
  bool torch_by_dlpack = false;          // a torch tensor read without the hooks: modes to check
};

/// The framework of an array type, by the module that defines it (what to_python hands a result
/// to): "jax", "cupy", "tensorflow", "torch", else "numpy" (memoryview, buffer objects).
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

/// Reads one operand. The readers, in turn: numpy's C API (exact ndarrays), torch tensors (the
/// hooks, else torch's DLPack capsule with the negative, conjugate and requires_grad checks;
/// CUDA tensors too in a CUDA build), Python lists and scalars (np.asarray), and DLPack / the
/// buffer protocol for every other array. False, no error set, when no reader takes `object`:
/// the caller answers NotImplemented and Python normalizes it (a torch tensor that requires grad
/// or has its negative or conjugate bit set, a torch function mode, a JAX tracer, an object that
/// is not an array, ...). `normalized`: the Python fallback already normalized `object`
/// (_interop.to_core), so a torch tensor may take the DLPack reader and a reader's error is
/// raised (nb exceptions); without it, a reader's error is cleared and the call not taken.
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

std::string device_text(const Operand& op) {
  return op.device == Device::kCUDA ? "cuda:" + std::to_string(op.device_id) : std::string("the host");
}

/// Every operand on the input's device; ValueError naming the operand otherwise.
void check_same_device(const Operand& input, const Operand& other, const char* name) {
  if (other.device == input.device && other.device_id == input.device_id) return;
  throw nb::value_error((std::string(name) + " is on " + device_text(other) + " but input is on " +
                         device_text(input) + " (every array of a call must be on one CUDA device, "
                         "or all in host memory: input decides)").c_str());
}

// ---- attributes --------------------------------------------------------------------------------

/// The sentinel for "attribute not given" (multigather._registry.run passes it for attributes
/// the caller left out: the op's default applies, which for an optional attribute is not None).
PyObject* default_attr = nullptr;

/// The attribute values of a call as words (the cache key): a tag per attribute and its value.
struct AttrKey {
  static constexpr int kCapacity = 96;
  std::array<std::int64_t, kCapacity> words;
  int size = 0;
  bool add(std::int64_t w) {
    if (size == kCapacity) return false;
    words[static_cast<std::size_t>(size++)] = w;
    return true;
  }
  bool operator==(const AttrKey& other) const {
    return size == other.size &&
           std::memcmp(words.data(), other.words.data(), sizeof(std::int64_t) * static_cast<std::size_t>(size)) == 0;
  }
};

enum AttrTag : std::int64_t { kTagDefault, kTagNone, kTagBool, kTagInt, kTagFloat, kTagEnum, kTagList };

/// Encodes one attribute value as the general path's typed AttrArg would hold it (op_bindings'
/// arg_of): bool, int (within int64), float, str (one of the spec's choices), None, a list or
/// tuple of ints. False for any other value (the general path takes the call).
bool encode_attr(const AttrSpec& spec, PyObject* value, AttrKey* key) {
  if (value == default_attr) return key->add(kTagDefault);
  if (value == Py_None) return key->add(kTagNone);
  if (spec.type == AttrType::kTensor) return false;  // an array: read as an operand (door_call)
  if (PyBool_Check(value)) return key->add(kTagBool) && key->add(value == Py_True ? 1 : 0);
  if (PyLong_CheckExact(value)) {
    int overflow = 0;
    const long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
    if (overflow != 0) return false;
    return key->add(kTagInt) && key->add(v);
  }
  if (PyFloat_CheckExact(value)) {
    const double f = PyFloat_AS_DOUBLE(value);
    std::int64_t bits = 0;
    std::memcpy(&bits, &f, sizeof bits);
    return key->add(kTagFloat) && key->add(bits);
  }
  if (PyUnicode_CheckExact(value)) {
    Py_ssize_t n = 0;
    const char* text = PyUnicode_AsUTF8AndSize(value, &n);
    if (text == nullptr) {
      PyErr_Clear();
      return false;
    }
    const std::string_view s(text, static_cast<std::size_t>(n));
    for (std::size_t j = 0; j < spec.choices.size(); ++j) {
      if (spec.choices[j] == s) return key->add(kTagEnum) && key->add(static_cast<std::int64_t>(j));
    }
    return false;
  }
  const bool list = PyList_CheckExact(value);
  if (list || PyTuple_CheckExact(value)) {
    const Py_ssize_t n = list ? PyList_GET_SIZE(value) : PyTuple_GET_SIZE(value);
    if (!key->add(kTagList) || !key->add(n)) return false;
    for (Py_ssize_t i = 0; i < n; ++i) {
      PyObject* item = list ? PyList_GET_ITEM(value, i) : PyTuple_GET_ITEM(value, i);
      if (!PyLong_CheckExact(item)) return false;
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(item, &overflow);
      if (overflow != 0 || !key->add(v)) return false;
    }
    return true;
  }
  return false;
}

/// The Attributes of an encoded call (only on a cache miss).
Attributes attributes_of_key(const OpSpec& op, const AttrKey& key) {
  Attributes attrs;
  int w = 0;
  auto next = [&] { return key.words[static_cast<std::size_t>(w++)]; };
  for (const AttrSpec& spec : op.attrs) {
    switch (next()) {
      case kTagDefault: break;
      case kTagNone: attrs.set_none(spec.name); break;
      case kTagBool: attrs.set_bool(spec.name, next() != 0); break;
      case kTagInt: attrs.set_int(spec.name, next()); break;
      case kTagFloat: {
        const std::int64_t bits = next();
        double f = 0;
        std::memcpy(&f, &bits, sizeof f);
        attrs.set_float(spec.name, f);
        break;
      }
      case kTagEnum: attrs.set_string(spec.name, spec.choices[static_cast<std::size_t>(next())]); break;
      case kTagList: {
        std::vector<std::int64_t> values(static_cast<std::size_t>(next()));
        for (auto& v : values) v = next();
        attrs.set_ints(spec.name, std::move(values));
        break;
      }
    }
  }
  return attrs;
}

// ---- the lowering cache ------------------------------------------------------------------------

struct CacheEntry {
  std::uint64_t generation = 0;  // bumped when the slot gets another key
  bool valid = false;
  Device device = Device::kCPU;
  DType input_dtype = DType::kFloat32, indices_dtype = DType::kFloat32, updates_dtype = DType::kFloat32;
  Dims input_shape, input_strides, indices_shape, indices_strides;
  Dims updates_shape, updates_strides;  // scatter ops
  AttrKey attrs;
  std::unique_ptr<Lowering> lowering;  // null while a call uses it
  LoweringAnchors anchors;  // where the lowered views sit in the operands
};

struct FastOp {
  const OpSpec* spec = nullptr;
  static constexpr int kEntries = 4;
  std::array<CacheEntry, kEntries> entries;
  int next = 0;
};

std::vector<std::unique_ptr<FastOp>> fast_ops;  // by registry index, made on first use

bool same_key(const CacheEntry& e, const TensorView& input, const TensorView& indices,
              const TensorView* updates, const AttrKey& attrs, Device device) {
  return e.valid && e.device == device && e.input_dtype == input.dtype && e.indices_dtype == indices.dtype &&
         e.input_shape == input.shape && e.input_strides == input.strides &&
         e.indices_shape == indices.shape && e.indices_strides == indices.strides &&
         (updates == nullptr || (e.updates_dtype == updates->dtype && e.updates_shape == updates->shape &&
                                 e.updates_strides == updates->strides)) &&
         e.attrs == attrs;
}

/// A Lowering in use by one call: taken from its cache slot (or new), put back after the call
/// when the slot still holds the same key.
struct LoweringLease {
  std::unique_ptr<Lowering> lowering;
  CacheEntry* entry = nullptr;
  std::uint64_t generation = 0;
  ~LoweringLease() {
    if (entry != nullptr && entry->generation == generation && entry->valid && !entry->lowering) {
      entry->lowering = std::move(lowering);
    }
  }
};

/// The Lowering of this call (`updates`: a scatter op's, else null) on `device`: a cached one
/// with its data pointers moved to these operands, or a new one (cached when its views are
/// offsets into the operands and it made no copies). `converted`: the call's attributes when
/// they are not keyed by `attrs` (never cached). lower_op's error otherwise, raised by the
/// caller: the one wording of every bad call.
Status lowering_for(FastOp& op, const TensorView& input, const TensorView& indices,
                    const TensorView* updates, const AttrKey& attrs, const Attributes* converted,
                    Device device, LoweringLease* lease) {
  const bool cacheable_operands = converted == nullptr && input.data != nullptr && indices.data != nullptr &&
                                  input.numel() > 0 && indices.numel() > 0 &&
                                  (updates == nullptr || (updates->data != nullptr && updates->numel() > 0));
  if (cacheable_operands) {
    for (CacheEntry& e : op.entries) {
      if (!e.lowering || !same_key(e, input, indices, updates, attrs, device)) continue;
      lease->lowering = std::move(e.lowering);
      lease->entry = &e;
      lease->generation = e.generation;
      move_lowering(lease->lowering.get(), e.anchors, input.data, indices.data,
                    updates != nullptr ? updates->data : nullptr);
      return Status::Ok();
    }
  }
  auto lowering = std::make_unique<Lowering>();
  const Attributes attributes = converted != nullptr ? *converted : attributes_of_key(*op.spec, attrs);
  const Status status =
      updates == nullptr
          ? lower_op(op.spec->name, input, indices, attributes, lowering.get(), device)
          : lower_op(op.spec->name, input, indices, *updates, attributes, lowering.get(), device);
  if (!status.ok()) return status;
  lease->lowering = std::move(lowering);
  // Kept only when it is a function of the keyed facts alone (lowering_anchors: no copies, no
  // partial-write base, views inside the operands).
  LoweringAnchors anchors;
  if (!cacheable_operands || !lowering_anchors(*lease->lowering, input, indices, updates, &anchors)) {
    return Status::Ok();
  }
  CacheEntry& e = op.entries[static_cast<std::size_t>(op.next)];
  op.next = (op.next + 1) % FastOp::kEntries;
  ++e.generation;
  e.valid = true;
  e.device = device;
  e.input_dtype = input.dtype;
  e.indices_dtype = indices.dtype;
  e.input_shape = input.shape;
  e.input_strides = input.strides;
  e.indices_shape = indices.shape;
  e.indices_strides = indices.strides;
  if (updates != nullptr) {
    e.updates_dtype = updates->dtype;
    e.updates_shape = updates->shape;
    e.updates_strides = updates->strides;
  }
  e.attrs = attrs;
  e.lowering.reset();
  e.anchors = anchors;
  lease->entry = &e;
  lease->generation = e.generation;
  return Status::Ok();
}

// ---- the entry point ---------------------------------------------------------------------------

PyObject* not_implemented() { Py_RETURN_NOTIMPLEMENTED; }

/// The bytes a call moves, which decide whether it releases the GIL: its output's, or for a
/// scatter the larger of that and its lookups' (G, l.shape.output_numel): a scatter into a small
/// output can combine any number of updates (broadcast indices and updates: stride 0).
std::int64_t work_bytes(const Lowering& l) {
  std::int64_t n = 0;
  if (!element_count(l.output_shape, &n)) return INT64_MAX;
  if (l.kind == OpKind::kScatter) n = std::max(n, l.shape.output_numel);
  return n > INT64_MAX / 16 ? INT64_MAX : n * static_cast<std::int64_t>(element_size(l.input.dtype));
}

/// Runs `l` into `target`: the caller's out= (left unchanged by a bad index), or, with
/// `output_is_new`, a result just allocated for this call.
Status run_into(const Lowering& l, const MutableTensorView& target, bool output_is_new = true) {
  ExecutionContext context;
  context.device = Device::kCPU;
  context.num_threads = get_num_threads();
  context.output_name = "out";
  context.output_is_new = output_is_new;
  const PythonInterruptible interruptible;
  if (work_bytes(l) >= kReleaseGilBytes) {
    nb::gil_scoped_release release;
    return execute(l, target, context);
  }
  return execute(l, target, context);
}

void release_output_memory(void* data) { free_output_memory(data); }

/// A call that failed in execute: its error raised here, as the general path would raise it (the
/// same Lowering, the same execute, the same Status), so the kernel never runs twice.
PyObject* failed(const Status& status) {
  set_python_error(status);
  return nullptr;
}

/// The result of `l` as a torch tensor made by the hooks around new output memory; the memory
/// is freed when the tensor's storage dies.
PyObject* run_into_torch_result(const Lowering& l) {
  std::int64_t numel = 0;
  if (!element_count(l.output_shape, &numel)) return memory_error(l.input.dtype, l.output_shape);
  void* data = nullptr;
  try {
    data = allocate_output_memory(static_cast<std::size_t>(numel) * element_size(l.input.dtype));
  } catch (const std::bad_alloc&) {
    return memory_error(l.input.dtype, l.output_shape);
  }
  if (const Status s = run_into(l, MutableTensorView(data, l.input.dtype, l.output_shape)); !s.ok()) {
    free_output_memory(data);
    return failed(s);
  }
  std::int64_t shape[MG_TORCH_HOOKS_MAX_RANK];
  for (int d = 0; d < l.output_shape.size(); ++d) shape[d] = l.output_shape[d];
  return torch_hooks->wrap(data, &release_output_memory, static_cast<std::int32_t>(l.input.dtype),
                           l.output_shape.size(), shape);
}

/// The handle bit of a call whose operands the Python fallback normalized (_interop.to_core):
/// every reader may take them, and a reader's error is raised (see read_operand).
constexpr long kNormalized = 1L << 20;

/// A C++ exception of the door as the Python exception it stands for (null, to return).
PyObject* python_error_of(const std::exception& e) {
  if (const auto* b = dynamic_cast<const nb::builtin_exception*>(&e)) {
    PyObject* type = PyExc_RuntimeError;
    switch (b->type()) {
      case nb::exception_type::index_error: type = PyExc_IndexError; break;
      case nb::exception_type::key_error: type = PyExc_KeyError; break;
      case nb::exception_type::value_error: type = PyExc_ValueError; break;
      case nb::exception_type::type_error: type = PyExc_TypeError; break;
      case nb::exception_type::buffer_error: type = PyExc_BufferError; break;
      case nb::exception_type::attribute_error: type = PyExc_AttributeError; break;
      default: break;
    }
    PyErr_SetString(type, e.what());
  } else if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr) {
    PyErr_NoMemory();
  } else if (!PyErr_Occurred()) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
/// A lowered call on a CUDA device: on the framework's current stream, into `out` (a CUDA
/// array) or into device memory of the input's framework.
PyObject* run_on_cuda(const Lowering& l, const Operand& input, PyObject* out) {
  ExecutionContext context;
  context.device = Device::kCUDA;
  context.num_threads = get_num_threads();
  context.output_name = "out";
  context.stream = current_stream(input.framework_name, input.device_id);
  auto finish = [&] {
    if (!knows_consumer_stream(input.framework_name)) finish_for_unknown_consumer(context.stream, input.device_id);
  };
  if (out != Py_None) {
    OutputArray array;
    if (!nb::try_cast(nb::handle(out), array)) throw nb::type_error("out must be a writable CUDA array");
    const MutableTensorView target = device_mutable_view_of(array, "out");
    check_out(target, l.input.dtype, l.output_shape);
    Status status;
    {
      const PythonInterruptible interruptible;
      nb::gil_scoped_release release;
      status = execute(l, target, context);
    }
    raise_if_error(status);
    finish();
    return nb::borrow(out).release().ptr();
  }
  DeviceResult result = allocate_device_result(input.framework_name, context.stream, input.device_id,
                                               l.input.dtype, l.output_shape);
  Status status;
  {
    const PythonInterruptible interruptible;
    nb::gil_scoped_release release;
    status = execute(l, result.view, context);
  }
  raise_if_error(status);
  finish();
  const nb::dlpack::dtype dtype = input.array ? input.array->dtype() : dlpack_from_dtype(l.input.dtype);
  return device_array(std::move(result), dtype, input.device_id, input.framework_name).release().ptr();
}
#endif

/// A lowered call on the host into a new array of a framework the fast results do not make
/// (jax, tensorflow, array-API objects, numpy without NumPy's headers): execute_alloc, then the
/// framework's from_dlpack.
PyObject* run_into_framework_result(const Lowering& l, const Operand& input) {
  ExecutionContext context;
  context.device = Device::kCPU;
  context.num_threads = get_num_threads();
  context.output_name = "out";
  Tensor result;
  Status status;
  {
    const PythonInterruptible interruptible;
    nb::gil_scoped_release release;
    MutableTensorView view;
    status = execute_alloc(l, context, &view, &result);
  }
  if (!status.ok()) return failed(status);
  const nb::dlpack::dtype dtype = input.array ? input.array->dtype() : dlpack_from_dtype(l.input.dtype);
  return to_python(std::move(result), dtype, input.framework_name).release().ptr();
}

/// The door's call once the handle and arity are checked: see run_op_fast. Throws nb exceptions
/// (python_error_of turns them into Python's).
PyObject* door_call(FastOp& op, PyObject* const* args, Py_ssize_t first_attr, bool normalized) {
  const OpSpec& spec = *op.spec;
  const bool scatter = spec.kind == OpKind::kScatter;
  Operand input, indices, updates;
  if (!read_operand(args[1], "input", normalized, &input) ||
      !read_operand(args[2], "indices", normalized, &indices) ||
      (scatter && !read_operand(args[3], "updates", normalized, &updates))) {
    return not_implemented();  // no reader for an operand: Python normalizes it
  }
  // The result's framework (only the input's counts).
  if (input.framework == Framework::kOther) input.framework_name = framework_name_of(args[1]);
  check_same_device(input, indices, "indices");
  if (scatter) check_same_device(input, updates, "updates");
  // The DLPack route's mode check, once per call (the hooks check in `read`).
  if ((input.torch_by_dlpack || indices.torch_by_dlpack || updates.torch_by_dlpack) && !normalized &&
      !torch_modes_inactive()) {
    return not_implemented();
  }

  // Attributes: the cache key, or (a value of another Python type) the general conversion, whose
  // TypeError names the attribute; such a call is not cached.
  AttrKey key;
  bool keyed = true;
  for (std::size_t j = 0; j < spec.attrs.size() && keyed; ++j) {
    keyed = encode_attr(spec.attrs[j], args[first_attr + static_cast<Py_ssize_t>(j)], &key);
  }
  std::optional<Attributes> converted;
  // A tensor attribute's array (embedding_bag's offsets), read as an operand; made only when
  // one is given (libstdc++'s deque allocates as it is constructed).
  std::optional<std::deque<Operand>> tensor_attrs;
  if (!keyed) {
    converted.emplace();
    for (std::size_t j = 0; j < spec.attrs.size(); ++j) {
      PyObject* value = args[first_attr + static_cast<Py_ssize_t>(j)];
      if (value == default_attr) continue;
      const std::string& name = spec.attrs[j].name;
      if (spec.attrs[j].type == AttrType::kTensor && value != Py_None) {
        if (!tensor_attrs) tensor_attrs.emplace();
        Operand& t = tensor_attrs->emplace_back();
        if (!read_operand(value, name.c_str(), normalized, &t)) return not_implemented();
        check_same_device(input, t, name.c_str());
        converted->set_tensor(name, t.view);
      } else {
        converted->set_arg(name, attr_arg_of(name, nb::handle(value)));
      }
    }
  }

  LoweringLease lease;
  if (const Status s = lowering_for(op, input.view, indices.view, scatter ? &updates.view : nullptr,
                                    key, converted ? &*converted : nullptr, input.device, &lease);
      !s.ok()) {
    return failed(s);
  }
  const Lowering& l = *lease.lowering;
  PyObject* out = args[first_attr - 1];
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
  if (input.device == Device::kCUDA) {
    if (out != Py_None && !normalized) return not_implemented();  // out's checks: Python's
    return run_on_cuda(l, input, out);
  }
#endif

  if (out != Py_None) {
    MutableTensorView target;
    bool viewed = ndarray_mutable_view(out, &target);
    // A torch `out` through the hooks, which bump its version counter after the write (the
    // Python fallback does that itself: _interop.mark_written). An inference tensor only where
    // torch allows writing it: the fallback checks.
    const bool torch_out = !viewed && torch_hooks != nullptr && is_torch_tensor(out) &&
                           member_is(out, torch_api.is_inference, Py_False);
    if (torch_out) {
      TensorView v;
      viewed = torch_view(out, &v, true);
      target = MutableTensorView(const_cast<void*>(v.data), v.dtype, v.shape, v.strides);
    }
    if (!viewed) {
      if (!normalized) return not_implemented();  // out's checks (writable, autograd): Python's
      OutputArray array;
      if (!nb::try_cast(nb::handle(out), array)) throw nb::type_error("out must be a writable array");
      target = mutable_view_of(array, "out");
    }
    check_out(target, l.input.dtype, l.output_shape);
    if (const Status s = run_into(l, target, /*output_is_new=*/false); !s.ok()) return failed(s);
    if (torch_out && !normalized) torch_hooks->written(out);  // normalized: call_door bumps it
    return nb::borrow(out).release().ptr();
  }

  if (input.framework == Framework::kTorch && torch_hooks != nullptr) return run_into_torch_result(l);
  if (input.framework == Framework::kTorch && torch_api.from_dlpack != nullptr) {
    TorchResult* r = new_torch_result(l.input.dtype, l.output_shape);
    if (r == nullptr) return nullptr;  // MemoryError
    const MutableTensorView target(r->managed.dl_tensor.data, l.input.dtype, l.output_shape);
    if (const Status s = run_into(l, target); !s.ok()) {
      delete_torch_result(&r->managed);
      return failed(s);
    }
    return torch_tensor_of(r);
  }
  PyObject* descr = nullptr;
  if (input.framework == Framework::kNumpy && numpy_fast_ready()) {
    // The input's own dtype object (ml_dtypes' bfloat16 stays bfloat16), else numpy's.
    descr = input.keep.ptr() == nullptr ? ndarray_descr(args[1]) : numpy_descr_of(l.input.dtype);
  }
  if (descr == nullptr) return run_into_framework_result(l, input);
  void* data = nullptr;
  nb::object result = nb::steal(new_output_ndarray(descr, l.input.dtype, l.output_shape, &data));  // steals descr
  if (!result.is_valid()) return nullptr;  // MemoryError
  const MutableTensorView target(data, l.input.dtype, l.output_shape);
  if (const Status s = run_into(l, target); !s.ok()) return failed(s);
  return result.release().ptr();
}

/// run_op_fast(handle, input, indices, out, *attrs) for a gather op, run_op_fast(handle, input,
/// indices, updates, out, *attrs) for a scatter op: see the file comment.
PyObject* run_op_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs) {
  if (nargs < 4) {
    PyErr_SetString(PyExc_TypeError, "run_op_fast(handle, input, indices[, updates], out, *attrs)");
    return nullptr;
  }
  long handle = PyLong_AsLong(args[0]);
  if (handle == -1 && PyErr_Occurred()) return nullptr;
  const bool normalized = handle >= 0 && (handle & kNormalized) != 0;
  if (normalized) handle &= ~kNormalized;
  if (handle < 0 || static_cast<std::size_t>(handle) >= fast_ops.size() || !fast_ops[static_cast<std::size_t>(handle)]) {
    PyErr_SetString(PyExc_ValueError, "run_op_fast: not a handle from op_handle");
    return nullptr;
  }
  FastOp& op = *fast_ops[static_cast<std::size_t>(handle)];
  const OpSpec& spec = *op.spec;
  const bool scatter = spec.kind == OpKind::kScatter;
  const Py_ssize_t first_attr = scatter ? 5 : 4;  // after handle, input, indices[, updates], out
  if (nargs - first_attr != static_cast<Py_ssize_t>(spec.attrs.size())) {
    PyErr_Format(PyExc_TypeError, "run_op_fast: %s takes %s and %d attributes, %d arguments given",
                 spec.name.c_str(), scatter ? "(input, indices, updates, out)" : "(input, indices, out)",
                 static_cast<int>(spec.attrs.size()), static_cast<int>(nargs - 1));
    return nullptr;
  }
  // Every error of the call as the row says (retype_argument_error: WebNN's TypeError).
  try {
    PyObject* result = door_call(op, args, first_attr, normalized);
    if (result == nullptr) retype_argument_error(&spec);
    return result;
  } catch (nb::python_error& e) {
    e.restore();
  } catch (const std::exception& e) {
    python_error_of(e);
  }
  retype_argument_error(&spec);
  return nullptr;
}

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
  m.def("output_memory_stats", &memory_stats,
        "The cache of freed output blocks: cached_bytes, cached_blocks, limit_bytes, reused, "
        "mapped (multigather/output_memory.hpp).");
  m.def("set_output_memory_cache_limit", [](std::size_t bytes) { set_output_memory_cache_limit(bytes); },
        "bytes"_a, "Bounds the cache of freed output blocks (0: off).");
}

}  // namespace multigather::python
