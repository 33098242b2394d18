// python/src/arrays.hpp: arrays from any framework (DLPack or the buffer protocol, through
// nanobind's ndarray) as multigather views, and results handed back as arrays.
//
// Nothing here copies data: a view keeps the caller's pointer, shape and strides (in elements,
// as DLPack gives them; negative and zero strides included).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <optional>
#include <string_view>

#include "multigather/multigather.hpp"

namespace multigather::python {

namespace nb = nanobind;

/// Any array, read-only ones included (jax arrays, numpy broadcast views).
using InputArray = nb::ndarray<nb::ro>;
/// A writable array (the `out=` argument).
using OutputArray = nb::ndarray<>;

/// True for DLPack device types the CUDA backend reads (kDLCUDA, kDLCUDAManaged).
bool is_cuda_memory(int device_type) noexcept;

/// view_of / mutable_view_of for arrays in CUDA memory (the CUDA backend's operands; the data
/// pointer is a device pointer). ValueError for an array on any other device.
TensorView device_view_of(const InputArray& array, std::string_view name,
                          std::optional<std::string_view> dtype_name = std::nullopt);
MutableTensorView device_mutable_view_of(const OutputArray& array, std::string_view name,
                                         std::optional<std::string_view> dtype_name = std::nullopt);

/// A Python fill value (bool, int of any size within 64 bits, float, numpy scalar) as a Scalar.
/// ValueError outside the 64-bit range ("<what> 18446744073709551616 is outside the 64-bit
/// integer range"), TypeError for another type.
Scalar scalar_of(nb::handle value, std::string_view what = "fill_value");

/// The num_threads option of every call from Python: 0 (the default) lets the engine choose
/// (about one thread per 256 KiB of work, busy cores left alone), n > 0 uses at most n threads.
/// ValueError for n < 0.
void set_num_threads(int threads);
int get_num_threads() noexcept;

/// Sets the Python exception of a failed Status: IndexError (kOutOfRange), ValueError
/// (kInvalidArgument), TypeError (kTypeError), MemoryError (an allocation failure),
/// KeyboardInterrupt (kCancelled; the signal handler's own, when one is set), RuntimeError
/// (anything else). The message is the core's. False, nothing set, for an ok status.
bool set_python_error(const Status& status) noexcept;
/// set_python_error, then throws nb::python_error (for nanobind-bound functions).
void raise_if_error(const Status& status);

/// Adds ArgumentTypeError to `m` (re-exported as multigather.ArgumentTypeError): the exception
/// of an invalid argument (shape, rank, axis, attribute) of a registry op whose row says its
/// framework throws TypeError for those (OpSpec::argument_error, e.g. WebNN's builders). A
/// subclass of TypeError and of ValueError, so that `except ValueError` still catches it.
void bind_argument_type_error(nb::module_& m);
/// For a call of registry op `spec` (null: none) whose row raises its invalid arguments as
/// TypeError: the pending Python error, when it is exactly a ValueError (an InvalidArgument
/// status, or a ValueError of the call's operands and attributes), becomes an ArgumentTypeError
/// with the same message. Anything else pending, or nothing, stays as it is.
void retype_argument_error(const OpSpec* spec) noexcept;

/// Sets MemoryError in numpy's words (unable_to_allocate: "Unable to allocate 4.00 EiB for an
/// array with shape (...) and data type float32") for an output of `dtype` and `shape`; returns
/// null, for a C function to return.
PyObject* memory_error(DType dtype, const Dims& shape);

/// The interrupt check of every call from Python (multigather/interrupt.hpp): on the
/// interpreter's main thread, takes the GIL and runs the signal handlers (PyErr_CheckSignals);
/// true when one raised (Ctrl-C: KeyboardInterrupt, which stays set, and raise_if_error raises
/// it once the call returns kCancelled). On other threads false: Python runs signal handlers on
/// its main thread only.
bool python_interrupt_check(void* context) noexcept;

/// An InterruptScope asking python_interrupt_check, for one call from Python (with or without
/// the GIL held).
struct PythonInterruptible {
  InterruptScope scope{&python_interrupt_check, nullptr};
};

/// The DType of a DLPack dtype; nullopt when multigather has no such type (lanes != 1 included).
std::optional<DType> dtype_from_dlpack(nb::dlpack::dtype dtype) noexcept;

/// The DLPack dtype of a DType (what a result carries when the input gave none).
nb::dlpack::dtype dlpack_from_dtype(DType dtype) noexcept;

/// A strided view of `array` (named `name` in messages). `dtype_name`, when given, overrides
/// the array's own dtype and must have its element width: numpy arrays of ml_dtypes types
/// (bfloat16, float8) travel as same-width unsigned views tagged with their real name.
/// Errors: ValueError for an array outside host memory, TypeError for an unsupported dtype.
TensorView view_of(const InputArray& array, std::string_view name,
                   std::optional<std::string_view> dtype_name = std::nullopt);

/// A writable view of the caller's `out` array (`dtype_name` as in view_of).
MutableTensorView mutable_view_of(const OutputArray& array, std::string_view name,
                                  std::optional<std::string_view> dtype_name = std::nullopt);

/// Checks the caller's `out` view against a call, in Python's terms: the input's dtype
/// (TypeError: numpy's `out=` rule, stricter than the core's same-width rule) and `shape`
/// (ValueError). Overlap and every other output rule are the core's (execute).
void check_out(const MutableTensorView& out, DType input_dtype, const Dims& shape);

/// `array.cast()`: the framework's own array, built by its from_dlpack. Where that call fails,
/// its Python exception propagates (nanobind's cast() alone reports only std::bad_cast).
template <class Array>
nb::object exported(Array array) {
  try {
    return array.cast();
  } catch (const nb::cast_error&) {
    if (PyErr_Occurred()) throw nb::python_error();
    throw;
  }
}

/// Hands `tensor` to Python without a copy, as an array of `framework` ("numpy", "torch",
/// "jax", "tensorflow", "cupy"; anything else gives an object with __dlpack__). nanobind calls
/// that framework's from_dlpack. `dtype` is the DLPack dtype the result carries (the input's, so
/// that bfloat16 stays bfloat16).
nb::object to_python(Tensor&& tensor, nb::dlpack::dtype dtype, std::string_view framework);

}  // namespace multigather::python
