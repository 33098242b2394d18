/* The loops of mlp_limit.c (the physical limit of the random element gathers, docs/bench.md
 * cases 3, 4 and 7) as a shared library, so that bench/limit_fraction.py times them on the same
 * numpy arrays, in the same process, interleaved with multigather's calls:
 *   gcc -O3 -march=native -fopenmp -shared -fPIC bench/mlp_limit_ffi.c -o libmlp_limit.so
 * mlp_limit_run(k, loop, in, idx, out, d): case k (0: 3 elements_last_axis, 1: 4 elements_axis0,
 * 2: 7 flat_take), loop 0 plain, 1 prefetch (distance d), 2 AVX-512 gathers; returns 0, or -1
 * for a loop this CPU or compiler lacks. OpenMP threads: OMP_NUM_THREADS. */
#define main mlp_limit_main
#include "mlp_limit.c"
#undef main

int mlp_limit_cases(void) { return (int)(sizeof cases / sizeof cases[0]); }

int mlp_limit_run(int k, int loop, const float *in, const int64_t *idx, float *out, int64_t d) {
  if (k < 0 || k >= mlp_limit_cases()) return -1;
  const Case *c = &cases[k];
  D = d;
  switch (loop) {
    case 0: run_plain(c, in, idx, out); return 0;
    case 1: run_prefetch(c, in, idx, out); return 0;
#ifdef __AVX512F__
    case 2: run_gather(c, in, idx, out); return 0;
#endif
    default: return -1;
  }
}
