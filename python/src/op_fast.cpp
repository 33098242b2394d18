// The door: every call from Python into the C++ pipeline. run_op_fast(handle, input, indices,
// out, *attrs) for a gather op, run_op_fast(handle, input, indices, updates, out, *attrs) for a
// scatter op, called by multigather.run (run_door, op_fast_bindings.cpp: the op's name and keyword
// attributes) and by every framework wrapper (multigather.numpy.take, onnx.gather_nd,
// torch.gather, ...).
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
//
// The door's files (op_fast.hpp: what they share): op_fast_operands.cpp, the readers and torch
// tensors in and out; this file, the attributes' cache key, the lowering cache, the call
// (door_call, run_op_fast) and the result's export; op_fast_bindings.cpp, multigather.run and
// the module's door functions.

#include <algorithm>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <Python.h>

#include <array>
#include <cstdint>
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
#include "op_fast.hpp"
#include "torch_hooks.h"

namespace multigather::python {

// ---- attributes --------------------------------------------------------------------------------

PyObject* default_attr = nullptr;

namespace {

namespace nb = nanobind;

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

}  // namespace

// ---- the lowering cache ------------------------------------------------------------------------

std::vector<std::unique_ptr<FastOp>> fast_ops;

namespace {

/// The Lowering of this call (`updates`: a scatter op's, else null) on `device`: a kept one
/// moved to these operands, or lower_op's (kept when its views are offsets into the operands
/// and it made no copies). `converted`: the call's attributes when they are not keyed by
/// `attrs` (never kept). lower_op's error otherwise, raised by the caller: the one wording of
/// every bad call.
Status lowering_for(FastOp& op, const TensorView& input, const TensorView& indices,
                    const TensorView* updates, const AttrKey& attrs, const Attributes* converted,
                    Device device, LoweringCache::Lease* lease) {
  const bool cacheable_operands = converted == nullptr && input.data != nullptr && indices.data != nullptr &&
                                  input.numel() > 0 && indices.numel() > 0 &&
                                  (updates == nullptr || (updates->data != nullptr && updates->numel() > 0));
  LoweringKey& key = op.key;  // under the GIL, which the call holds until its lease is out
  key.clear();
  if (cacheable_operands) {
    key.add(device);
    key.add_view(input);
    key.add_view(indices);
    if (updates != nullptr) key.add_view(*updates);
    key.add_words(attrs.words.data(), static_cast<std::size_t>(attrs.size));
    if (op.cache.find(key, input.data, indices.data, updates != nullptr ? updates->data : nullptr, lease)) {
      return Status::Ok();
    }
  }
  Lowering lowering;
  const Attributes attributes = converted != nullptr ? *converted : attributes_of_key(*op.spec, attrs);
  const Status status = updates == nullptr
                            ? lower_op(op.spec->name, input, indices, attributes, &lowering, device)
                            : lower_op(op.spec->name, input, indices, *updates, attributes, &lowering, device);
  if (!status.ok()) return status;
  *lease = op.cache.keep(key, std::move(lowering), input, indices, updates);
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
/// array; `out_view`, when given, is out already read) or into device memory of the input's
/// framework.
PyObject* run_on_cuda(const Lowering& l, const Operand& input, PyObject* out,
                      const MutableTensorView* out_view = nullptr) {
  ExecutionContext context;
  context.device = Device::kCUDA;
  context.num_threads = get_num_threads();
  context.output_name = "out";
  context.stream = current_stream(input.framework_name, input.device_id);
  auto finish = [&] {
    if (!knows_consumer_stream(input.framework_name)) finish_for_unknown_consumer(context.stream, input.device_id);
  };
  if (out != Py_None) {
    MutableTensorView target;
    if (out_view != nullptr) {
      target = *out_view;
    } else {
      OutputArray array;
      if (!nb::try_cast(nb::handle(out), array)) throw nb::type_error("out must be a writable CUDA array");
      target = device_mutable_view_of(array, "out");
    }
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

  LoweringCache::Lease lease;
  if (const Status s = lowering_for(op, input.view, indices.view, scatter ? &updates.view : nullptr,
                                    key, converted ? &*converted : nullptr, input.device, &lease);
      !s.ok()) {
    return failed(s);
  }
  const Lowering& l = *lease.get();
  PyObject* out = args[first_attr - 1];
#if defined(MULTIGATHER_PYTHON_HAS_CUDA)
  if (input.device == Device::kCUDA) {
    if (out == Py_None || normalized) return run_on_cuda(l, input, out);
    // A torch CUDA `out` on input's device, through the hooks (which bump its version counter
    // after the write) and the DLPack read, which declines requires_grad and the negative and
    // conjugate bits; an inference tensor only where torch allows writing it. Anything else:
    // out's checks and messages are Python's (call_door).
    TensorView v;
    int out_device = -1;
    if (torch_hooks == nullptr || !is_torch_tensor(out) || !member_is(out, torch_api.is_inference, Py_False) ||
        !torch_cuda_view(out, &v, &out_device) || out_device != input.device_id || !torch_modes_inactive()) {
      return not_implemented();
    }
    const MutableTensorView target(const_cast<void*>(v.data), v.dtype, v.shape, v.strides);
    PyObject* result = run_on_cuda(l, input, out, &target);
    torch_hooks->written(out);
    return result;
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

}  // namespace

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

}  // namespace multigather::python
