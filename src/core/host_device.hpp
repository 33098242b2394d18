// Internal: the two annotations that let the kernel body compile for host and device alike.
#pragma once

#if defined(__CUDACC__)
/// A function the kernel and the host (tests) both call.
#define MULTIGATHER_HOST_DEVICE __host__ __device__
#else
#define MULTIGATHER_HOST_DEVICE
#endif

#if defined(__CUDA_ARCH__)
/// Unrolls the next loop in device code (it indexes a register array, which must not go to
/// local memory); nothing on the host, where only the tests run this code.
#define MULTIGATHER_UNROLL _Pragma("unroll")
#else
#define MULTIGATHER_UNROLL
#endif
