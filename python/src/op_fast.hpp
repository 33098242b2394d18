// python/src/op_fast.hpp: internal (not installed): what the door's three files share.
//
//   op_fast_operands.cpp: the operands: torch tensors in (through multigather._torch_fast's
//     hooks, torch._C._to_dlpack or their members) and out (a DLPack capsule for
//     torch._C._from_dlpack), and the readers of every operand (read_operand);
//   op_fast.cpp: the call: the attributes as a cache key, the lowering cache, door_call and
//     run_op_fast, and the result's export (numpy, torch, CUDA, other frameworks);
//   op_fast_bindings.cpp: multigather.run (run_door), op_handle, set_run_fallback and the
//     module's other door functions (bind_op_fast).
#pragma once

#include <nanobind/nanobind.h>

#include <Python.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "arrays.hpp"
#include "multigather/lowering_cache.hpp"
#include "torch_hooks.h"

namespace multigather::python {

// ---- torch tensors (op_fast_operands.cpp) ------------------------------------------------------

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

extern TorchApi torch_api;  // filled by the first torch.Tensor seen (is_torch_tensor)

/// multigather._torch_fast's hooks (torch_hooks.h) when it was built and the running torch is
/// the version it was built for; null otherwise (the DLPack route). torch_fast_state says which.
extern const MgTorchHooks* torch_hooks;
extern std::string torch_fast_state;

/// The DLPack route's check that no torch function mode and no dispatch mode is active (a mode
/// must see the call: the wrappers then take the torch.library op); run_op_fast asks it once
/// per call. The hooks check this themselves.
bool torch_modes_inactive();

/// Whether `object` is a torch.Tensor (exactly: a subclass is not); the first one seen loads
/// torch_api (torch is never imported here).
bool is_torch_tensor(PyObject* object);

/// Whether member `m` of `object` is `expected` (a singleton: True, False).
bool member_is(PyObject* object, const TorchMember& m, PyObject* expected);

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

#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
/// A strided torch tensor in CUDA memory, read through torch._C._to_dlpack (data, dtype, shape,
/// strides in elements) with its device id; false, no Python error set, for anything else (a
/// host tensor, negative or conjugate bits, requires_grad): as torch_view, for a CUDA `out`.
bool torch_cuda_view(PyObject* t, TensorView* view, int* cuda_device);
#endif

/// A result for torch: output memory handed to torch._C._from_dlpack in a DLPack capsule (no
/// numpy array in between; torch calls the deleter when the tensor's storage dies, on any
/// thread: free_output_memory is thread-safe).
struct TorchResult {
  DLManagedTensorC managed;  // first: the deleter casts back
  std::int64_t shape[kMaxRank];
  std::int64_t strides[kMaxRank];
};

/// Frees a TorchResult (its DLPack deleter).
void delete_torch_result(DLManagedTensorC* managed);

/// New output memory of `shape` as a TorchResult; null (MemoryError set) when memory runs out.
TorchResult* new_torch_result(DType dtype, const Dims& shape);

/// The torch tensor of a written TorchResult (consumed either way).
PyObject* torch_tensor_of(TorchResult* r);

// ---- operands: the readers (op_fast_operands.cpp) ----------------------------------------------

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
const char* framework_name_of(PyObject* object);

/// Reads one operand. The readers, in turn: numpy's C API (exact ndarrays), torch tensors (the
/// hooks, else torch's DLPack capsule with the negative, conjugate and requires_grad checks;
/// CUDA tensors too in a CUDA build), Python lists and scalars (np.asarray), and DLPack / the
/// buffer protocol for every other array. False, no error set, when no reader takes `object`:
/// the caller answers NotImplemented and Python normalizes it (a torch tensor that requires grad
/// or has its negative or conjugate bit set, a torch function mode, a JAX tracer, an object that
/// is not an array, ...). `normalized`: the Python fallback already normalized `object`
/// (_interop.to_core), so a torch tensor may take the DLPack reader and a reader's error is
/// raised (nb exceptions); without it, a reader's error is cleared and the call not taken.
bool read_operand(PyObject* object, const char* name, bool normalized, Operand* op);

/// Every operand on the input's device; ValueError naming the operand otherwise.
void check_same_device(const Operand& input, const Operand& other, const char* name);

// ---- the call (op_fast.cpp) --------------------------------------------------------------------

/// The sentinel for "attribute not given" (multigather._registry.run passes it for attributes
/// the caller left out: the op's default applies, which for an optional attribute is not None).
extern PyObject* default_attr;

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

/// A registry op as the door calls it: its row, and the lowerings of its recent calls (keyed
/// by the device, the operands' layouts and the AttrKey; used under the GIL).
struct FastOp {
  const OpSpec* spec = nullptr;
  LoweringCache cache;
  LoweringKey key;  // the call's key, made anew by each call (its capacity stays)
};

/// The FastOp of each registry op, by registry index, made on first use (op_handle_of_spec).
extern std::vector<std::unique_ptr<FastOp>> fast_ops;

/// The handle bit of a call whose operands the Python fallback normalized (_interop.to_core):
/// every reader may take them, and a reader's error is raised (see read_operand).
inline constexpr long kNormalized = 1L << 20;

/// run_op_fast(handle, input, indices, out, *attrs) for a gather op, run_op_fast(handle, input,
/// indices, updates, out, *attrs) for a scatter op: see op_fast.cpp's file comment.
PyObject* run_op_fast(PyObject*, PyObject* const* args, Py_ssize_t nargs);

}  // namespace multigather::python
