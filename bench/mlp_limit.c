/* Provenance: a copy of the team's shared bench/mlp_limit.c (kept beside the repository, in
 * ../shared/bench/), taken on 2026-11-27, unchanged below this note. bench/limit_fraction.py
 * includes it (bench/mlp_limit_ffi.c) to time its loops in the same process as multigather.
 */
/* The physical limit of the random element gathers (BENCH.md cases 3, 4, 7): the same access
 * pattern as each case, done the cheapest way plain C can, with no bounds check:
 *   plain:    out[t] = in[base(t) + idx[t] * step]      (the op's minimal work: read idx, load, store)
 *   prefetch: the same with __builtin_prefetch of the element D lookups ahead (more loads in flight)
 *   gather:   AVX-512 vpgatherqd of 8 lookups at a time (where the CPU has AVX-512)
 * Median of 11 after 3 warm-ups, 1 and 2 OpenMP threads, output pre-touched.
 *   gcc -O3 -march=native -fopenmp ../shared/bench/mlp_limit.c -o /tmp/mlp_limit && /tmp/mlp_limit [D [huge]]
 */
#define _GNU_SOURCE
#include <immintrin.h>
#include <sys/mman.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 11
#define WARM 3
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + ts.tv_nsec * 1e-9; }
static int cmpd(const void *a, const void *b) { double x = *(const double *)a, y = *(const double *)b; return (x > y) - (x < y); }
static uint64_t rs = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) { uint64_t z = (rs += 0x9E3779B97F4A7C15ull); z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull; z = (z ^ (z >> 27)) * 0x94D049BB133111EBull; return z ^ (z >> 31); }
static int huge = 0; /* argv[2] = 1: ask for transparent huge pages (numpy does for large arrays) */
static void *xalloc(size_t n) {
  void *p; size_t a = huge ? (2u << 20) : 64;
  if (posix_memalign(&p, a, (n + a - 1) / a * a)) exit(1);
  if (huge) madvise(p, (n + a - 1) / a * a, MADV_HUGEPAGE);
  memset(p, 1, n); return p;
}

/* A case: T lookups; lookup t reads in[row_base(t) + idx[t] * step]; rows of R lookups share a base. */
typedef struct { const char *name; size_t in_n, T, R, step, base_per_row, col_inc; } Case;
/* case 3: x[4096,1024] idx[4096,256] axis 1: base = r*1024, step 1, the column is idx
   case 4: x[1024,4096] idx[256,4096] axis 0: lookup (r,j) reads x[idx*4096 + j]: base j (col_inc 1 per lookup within row), step 4096
   case 7: x[16M] idx[4M]: base 0, step 1 */
static Case cases[] = {
  {"3 elements_last_axis", 4096u * 1024, 4096u * 256, 256, 1, 1024, 0},
  {"4 elements_axis0", 1024u * 4096, 256u * 4096, 4096, 4096, 0, 1},
  {"7 flat_take", 16777216u, 4194304u, 4096u, 1, 0, 0},  /* rows of 4096 lookups: chunks for the threads */
};

static int64_t D = 24;

static void run_plain(const Case *c, const float *in, const int64_t *idx, float *out) {
#pragma omp parallel for schedule(static)
  for (size_t r = 0; r < c->T / c->R; r++) {
    const float *row = in + r * c->base_per_row;
    const int64_t *ir = idx + r * c->R;
    float *orow = out + r * c->R;
    for (size_t j = 0; j < c->R; j++) orow[j] = row[j * c->col_inc + (size_t)ir[j] * c->step];
  }
}
static void run_prefetch(const Case *c, const float *in, const int64_t *idx, float *out) {
#pragma omp parallel for schedule(static)
  for (size_t r = 0; r < c->T / c->R; r++) {
    const float *row = in + r * c->base_per_row;
    const int64_t *ir = idx + r * c->R;
    float *orow = out + r * c->R;
    size_t R = c->R, j = 0;
    for (; j + D < R; j++) {
      __builtin_prefetch(row + (j + D) * c->col_inc + (size_t)ir[j + D] * c->step);
      orow[j] = row[j * c->col_inc + (size_t)ir[j] * c->step];
    }
    for (; j < R; j++) orow[j] = row[j * c->col_inc + (size_t)ir[j] * c->step];
  }
}
#ifdef __AVX512F__
static void run_gather(const Case *c, const float *in, const int64_t *idx, float *out) {
  const __m512i step = _mm512_set1_epi64((long long)c->step);
  const __m512i lane = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
#pragma omp parallel for schedule(static)
  for (size_t r = 0; r < c->T / c->R; r++) {
    const float *row = in + r * c->base_per_row;
    const int64_t *ir = idx + r * c->R;
    float *orow = out + r * c->R;
    size_t j = 0;
    for (; j + 8 <= c->R; j += 8) {
      __m512i v = _mm512_loadu_si512(ir + j);
      __m512i off = _mm512_mullo_epi64(v, step);
      if (c->col_inc) off = _mm512_add_epi64(off, _mm512_add_epi64(_mm512_set1_epi64((long long)j), lane));
      _mm256_storeu_ps(orow + j, _mm512_i64gather_ps(off, row, 4));
    }
    for (; j < c->R; j++) orow[j] = row[j * c->col_inc + (size_t)ir[j] * c->step];
  }
}
#endif

typedef void (*Fn)(const Case *, const float *, const int64_t *, float *);
static double timeit(Fn f, const Case *c, const float *in, const int64_t *idx, float *out) {
  double t[REPS];
  for (int i = 0; i < WARM; i++) f(c, in, idx, out);
  for (int i = 0; i < REPS; i++) { double s = now(); f(c, in, idx, out); t[i] = now() - s; }
  qsort(t, REPS, sizeof t[0], cmpd);
  return t[REPS / 2];
}

int main(int argc, char **argv) {
  if (argc > 1) D = atoi(argv[1]);
  if (argc > 2) huge = atoi(argv[2]);
  printf("# mlp_limit: median of %d, prefetch distance %ld, huge pages %s\n", REPS, (long)D, huge ? "asked (madvise)" : "no");
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const Case *c = &cases[k];
    float *in = xalloc(c->in_n * 4), *out = xalloc(c->T * 4);
    int64_t *idx = xalloc(c->T * 8);
    for (size_t i = 0; i < c->in_n; i++) in[i] = (float)(rnd() >> 40);
    size_t n_axis = c->step == 1 ? (c->base_per_row ? c->base_per_row : c->in_n) : c->in_n / c->step;
    for (size_t i = 0; i < c->T; i++) idx[i] = (int64_t)(rnd() % n_axis);
    for (int th = 1; th <= 2; th++) {
      omp_set_num_threads(th);
      double p = timeit(run_plain, c, in, idx, out), q = timeit(run_prefetch, c, in, idx, out);
      printf("%-22s %dT  plain %.3f ms  prefetch %.3f ms", c->name, th, p * 1e3, q * 1e3);
#ifdef __AVX512F__
      double g = timeit(run_gather, c, in, idx, out);
      printf("  avx512-gather %.3f ms", g * 1e3);
      if (g < q) q = g;
#endif
      printf("  limit %.3f ms\n", (p < q ? p : q) * 1e3);
    }
    free(in); free(out); free(idx);
  }
  return 0;
}
