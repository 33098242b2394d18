// The C ABI between the extension _multigather (op_fast.cpp, built without PyTorch) and the
// optional module _torch_fast (python/torch_fast/torch_fast.cpp, built against the headers and
// libraries of one PyTorch version): how the per-call fast path reads torch tensors and makes
// torch results without DLPack capsules and without Python-level checks.
//
// _torch_fast exports a PyCapsule named "multigather._torch_fast.hooks" holding a
// `const MgTorchHooks*`. _multigather loads it only when the running torch.__version__ is the
// version the module was built against (its C++ ABI is PyTorch's, which changes between
// versions); otherwise the fast path reads tensors through torch._C._to_dlpack as before.
#ifndef MULTIGATHER_PYTHON_TORCH_HOOKS_H_
#define MULTIGATHER_PYTHON_TORCH_HOOKS_H_

#include <Python.h>

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_TORCH_HOOKS_ABI 2
#define MG_TORCH_HOOKS_MAX_RANK 16 /* multigather::kMaxRank */

/* A CPU tensor's data, dtype (multigather::DType's value), sizes and strides (in elements). */
typedef struct MgTorchTensor {
  void* data;
  int32_t dtype;
  int32_t ndim;
  int64_t shape[MG_TORCH_HOOKS_MAX_RANK];
  int64_t strides[MG_TORCH_HOOKS_MAX_RANK];
} MgTorchTensor;

typedef struct MgTorchHooks {
  uint32_t abi;              /* MG_TORCH_HOOKS_ABI */
  const char* torch_version; /* torch.__version__ at build time */
  /* 1 and `*out` filled when `t` (whose type is exactly torch.Tensor) may be read by the fast
   * path in this call: no torch function mode and no dispatch mode active; a dense strided CPU
   * tensor without functorch, Python, functionalization, negative or conjugate dispatch keys;
   * not requiring grad while grad mode is on; a dtype multigather holds; rank <= 16. 0 for
   * anything else (the caller takes the routes that handle it). Never sets a Python error. */
  int (*read)(PyObject* t, MgTorchTensor* out);
  /* A new torch.Tensor (CPU, contiguous, `ndim` sizes `shape`, dtype a multigather::DType
   * value) owning `data`: `release(data)` runs when its storage dies, on any thread. Null with a
   * Python error set on failure, after calling `release(data)`. */
  PyObject* (*wrap)(void* data, void (*release)(void*), int32_t dtype, int32_t ndim,
                    const int64_t* shape);
  /* After writing into `t` (a tensor `read` took): bumps its version counter, as PyTorch's
   * out= and in-place ops do, so that autograd raises if a tensor it saved was overwritten
   * (inference tensors have no counter). Never sets a Python error. */
  void (*written)(PyObject* t);
} MgTorchHooks;

#ifdef __cplusplus
}
#endif

#endif  // MULTIGATHER_PYTHON_TORCH_HOOKS_H_
