/* The C API from C (C99, -pedantic, compiled against the INSTALLED header only).
 *
 * Every expected value is computed here by plain loops from the documented formulas (docs/spec.md
 * section 1 for gather_multiaxis; the frameworks' own definitions for numpy.take / onnx.Gather,
 * GatherElements, GatherND, torch.gather), never by multigather. Errors are checked by status
 * code and message text. Prints "N passed, M failed" and exits non-zero when anything failed. */
#include <multigather/multigather.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed = 0;
static int failed = 0;

static void check(int ok, const char* what, int line) {
  if (ok) {
    ++passed;
  } else {
    ++failed;
    printf("FAILED (line %d): %s\n", line, what);
  }
}
#define CHECK(cond) check((cond) != 0, #cond, __LINE__)

/* A call that must succeed: on failure prints the library's message. */
static void check_ok(mg_status s, const char* what, int line) {
  if (s == MG_OK) {
    ++passed;
  } else {
    ++failed;
    printf("FAILED (line %d): %s returned %s: %s\n", line, what, mg_status_name(s), mg_last_error());
  }
}
#define CHECK_OK(call) check_ok((call), #call, __LINE__)

/* A call that must fail with `code` and a message containing `text`. */
static void check_error(mg_status s, mg_status code, const char* text, const char* what, int line) {
  if (s == code && strstr(mg_last_error(), text) != NULL) {
    ++passed;
  } else {
    ++failed;
    printf("FAILED (line %d): %s returned %s (expected %s) with message \"%s\" (expected to contain \"%s\")\n",
           line, what, mg_status_name(s), mg_status_name(code), mg_last_error(), text);
  }
}
#define CHECK_ERROR(call, code, text) check_error((call), (code), (text), #call, __LINE__)

static mg_tensor tensor(const void* data, mg_dtype dtype, int32_t rank, const int64_t* shape,
                        const int64_t* strides) {
  mg_tensor t;
  t.data = data;
  t.dtype = dtype;
  t.rank = rank;
  t.shape = shape;
  t.strides = strides;
  return t;
}

static mg_tensor_mut tensor_mut(void* data, mg_dtype dtype, int32_t rank, const int64_t* shape,
                                const int64_t* strides) {
  mg_tensor_mut t;
  t.data = data;
  t.dtype = dtype;
  t.rank = rank;
  t.shape = shape;
  t.strides = strides;
  return t;
}

/* docs/spec.md section 1, resolve(v, n): -1 stands for "out of range" (error or fill). */
static int64_t resolve(int64_t v, int64_t n, mg_index_mode mode, int negative_indices) {
  if (mode == MG_INDEX_WRAP) return ((v % n) + n) % n;
  if (negative_indices && v < 0) v += n;
  if (mode == MG_INDEX_CLAMP) return v < 0 ? 0 : (v >= n ? n - 1 : v);
  return (v < 0 || v >= n) ? -1 : v;
}

static int same_i64(const int64_t* a, const int64_t* b, size_t n) {
  size_t i;
  for (i = 0; i < n; ++i) {
    if (a[i] != b[i]) return 0;
  }
  return 1;
}

/* ---- gather_multiaxis ------------------------------------------------------------------------ */

/* The seed's GatherElements example along axis 0: output[i][j] = input[indices[i][j]][j]. */
static void test_elements_axis0(void) {
  const int64_t input[4][3] = {{0, 1, 2}, {10, 11, 12}, {20, 21, 22}, {30, 31, 32}};
  const int64_t indices[2][3] = {{3, 1, 1}, {2, 0, 3}};
  const int64_t in_shape[2] = {4, 3}, idx_shape[2] = {2, 3}, out_shape[2] = {2, 3};
  const int64_t axes[1] = {0};
  const int64_t known[2][3] = {{30, 11, 12}, {20, 1, 32}}; /* README / examples/elements_axis0 */
  int64_t expected[2][3], output[2][3];
  int i, j;
  mg_tensor in = tensor(input, MG_DTYPE_INT64, 2, in_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT64, 2, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_INT64, 2, out_shape, NULL);
  for (i = 0; i < 2; ++i) {
    for (j = 0; j < 3; ++j) expected[i][j] = input[indices[i][j]][j];
  }
  memset(output, 0, sizeof output);
  CHECK_OK(mg_gather_multiaxis(&in, &idx, axes, 1, NULL, &out, NULL));
  CHECK(same_i64(&output[0][0], &expected[0][0], 6));
  CHECK(same_i64(&output[0][0], &known[0][0], 6));
  CHECK(strcmp(mg_last_error(), "") == 0);
}

/* Two coordinates in x-then-y order (axes {2, 1}) into a batch of [3,4] images:
 * output[b][p][0] = input[b][indices[b][p][1]][indices[b][p][0]]. */
static void test_points_xy(void) {
  float input[2][3][4];
  const int32_t indices[2][5][2] = {{{0, 0}, {3, 2}, {1, 1}, {2, 0}, {3, 1}},
                                    {{1, 2}, {0, 1}, {3, 0}, {2, 2}, {0, 0}}};
  const int64_t in_shape[3] = {2, 3, 4}, idx_shape[3] = {2, 5, 2}, out_shape[3] = {2, 5, 1};
  const int64_t axes[2] = {2, 1};
  float expected[2][5][1], output[2][5][1];
  int b, y, x, p, ok = 1;
  mg_tensor in = tensor(input, MG_DTYPE_FLOAT32, 3, in_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT32, 3, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_FLOAT32, 3, out_shape, NULL);
  int64_t inferred[MG_MAX_RANK];
  int32_t rank = -1;
  mg_attr attrs[1];
  for (b = 0; b < 2; ++b) {
    for (y = 0; y < 3; ++y) {
      for (x = 0; x < 4; ++x) input[b][y][x] = (float)(100 * b + 10 * y + x) + 0.5f;
    }
  }
  for (b = 0; b < 2; ++b) {
    for (p = 0; p < 5; ++p) expected[b][p][0] = input[b][indices[b][p][1]][indices[b][p][0]];
  }
  CHECK_OK(mg_gather_multiaxis(&in, &idx, axes, 2, NULL, &out, NULL));
  for (b = 0; b < 2; ++b) {
    for (p = 0; p < 5; ++p) ok &= output[b][p][0] == expected[b][p][0];
  }
  CHECK(ok);
  /* shape inference of the core op: [2,5,1] */
  attrs[0] = mg_attr_ints("axes", axes, 2);
  CHECK_OK(mg_infer_shape("gather_multiaxis", &in, &idx, attrs, 1, inferred, MG_MAX_RANK, &rank));
  CHECK(rank == 3 && same_i64(inferred, out_shape, 3));
}

/* Every index mode on a 1-D input, expected values by resolve() above. */
static void test_index_modes(void) {
  const double input[5] = {10, 11, 12, 13, 14};
  const int32_t indices[6] = {-1, 5, 7, -6, 2, 0};
  const int64_t in_shape[1] = {5}, idx_shape[1] = {6}, out_shape[1] = {6};
  const int64_t axes[1] = {0};
  const mg_index_mode modes[3] = {MG_INDEX_CLAMP, MG_INDEX_WRAP, MG_INDEX_FILL};
  double output[6];
  int m, neg, i;
  mg_tensor in = tensor(input, MG_DTYPE_FLOAT64, 1, in_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT32, 1, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_FLOAT64, 1, out_shape, NULL);
  for (m = 0; m < 3; ++m) {
    for (neg = 0; neg < 2; ++neg) {
      mg_gather_options options = MG_GATHER_OPTIONS_DEFAULT;
      int ok = 1;
      options.index_mode = modes[m];
      options.negative_indices = neg;
      options.fill_value.kind = MG_SCALAR_FLOAT;
      options.fill_value.f = -1.5;
      CHECK_OK(mg_gather_multiaxis(&in, &idx, axes, 1, &options, &out, NULL));
      for (i = 0; i < 6; ++i) {
        const int64_t r = resolve(indices[i], 5, modes[m], neg);
        const double want = r < 0 ? -1.5 : input[r];
        ok &= output[i] == want;
      }
      CHECK(ok);
    }
  }
  {
    /* NaN fill */
    mg_gather_options options = MG_GATHER_OPTIONS_DEFAULT;
    options.index_mode = MG_INDEX_FILL;
    options.fill_value.kind = MG_SCALAR_FLOAT;
    options.fill_value.f = NAN;
    CHECK_OK(mg_gather_multiaxis(&in, &idx, axes, 1, &options, &out, NULL));
    CHECK(output[0] == 14 && isnan(output[1]) && isnan(output[2]) && isnan(output[3]) &&
          output[4] == 12 && output[5] == 10);
  }
}

/* uint64 data with a uint64 fill value above INT64_MAX (MG_SCALAR_UINT stays exact). */
static void test_uint64_fill(void) {
  const uint64_t input[3] = {1, 2, 3};
  const uint8_t indices[4] = {2, 3, 0, 200};
  const int64_t in_shape[1] = {3}, idx_shape[1] = {4};
  const int64_t axes[1] = {0};
  uint64_t output[4];
  mg_gather_options options = MG_GATHER_OPTIONS_DEFAULT;
  mg_tensor in = tensor(input, MG_DTYPE_UINT64, 1, in_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_UINT8, 1, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_UINT64, 1, idx_shape, NULL);
  options.index_mode = MG_INDEX_FILL;
  options.fill_value.kind = MG_SCALAR_UINT;
  options.fill_value.u = UINT64_MAX;
  CHECK_OK(mg_gather_multiaxis(&in, &idx, axes, 1, &options, &out, NULL));
  CHECK(output[0] == 3 && output[1] == UINT64_MAX && output[2] == 1 && output[3] == UINT64_MAX);
  /* a fill value the dtype cannot hold */
  options.fill_value.kind = MG_SCALAR_INT;
  options.fill_value.i = -1;
  CHECK_ERROR(mg_gather_multiaxis(&in, &idx, axes, 1, &options, &out, NULL),
              MG_ERROR_INVALID_ARGUMENT, "fill_value");
}

/* Strided views: the input is a transposed view (strides {1, 4} over a [3][4] buffer), the
 * output a column-major view inside a larger buffer. output[i][j] = T[indices[i][j]][j] with
 * T[a][b] = buffer[b][a]. */
static void test_strided_views(void) {
  int16_t buffer[3][4];
  const int64_t indices[2][3] = {{3, 0, 1}, {-1, 2, 0}};
  const int64_t in_shape[2] = {4, 3}, in_strides[2] = {1, 4};
  const int64_t idx_shape[2] = {2, 3}, out_shape[2] = {2, 3}, out_strides[2] = {1, 5};
  const int64_t axes[1] = {0};
  int16_t out_buffer[20];
  int i, j, ok = 1;
  mg_tensor in = tensor(buffer, MG_DTYPE_INT16, 2, in_shape, in_strides);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT64, 2, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(out_buffer, MG_DTYPE_INT16, 2, out_shape, out_strides);
  for (i = 0; i < 3; ++i) {
    for (j = 0; j < 4; ++j) buffer[i][j] = (int16_t)(10 * i + j);
  }
  for (i = 0; i < 20; ++i) out_buffer[i] = -7;
  CHECK_OK(mg_gather_multiaxis(&in, &idx, axes, 1, NULL, &out, NULL));
  for (i = 0; i < 2; ++i) {
    for (j = 0; j < 3; ++j) {
      const int64_t a = resolve(indices[i][j], 4, MG_INDEX_ERROR, 1);
      ok &= out_buffer[i * 1 + j * 5] == buffer[j][a];
    }
  }
  /* elements outside the output view are untouched */
  ok &= out_buffer[2] == -7 && out_buffer[3] == -7 && out_buffer[4] == -7 && out_buffer[19] == -7;
  CHECK(ok);
}

/* num_threads through the context: a 1 MiB gather with 1 and 2 threads, same values. */
static void test_threads(void) {
  enum { R = 256, C = 1024, N = 300 };
  float* input = (float*)malloc(sizeof(float) * R * C);
  int64_t* indices = (int64_t*)malloc(sizeof(int64_t) * N);
  float* output = (float*)malloc(sizeof(float) * N * C);
  const int64_t in_shape[2] = {R, C}, idx_shape[2] = {N, 1}, out_shape[2] = {N, C};
  const int64_t axes[1] = {0};
  int threads, n, c, ok;
  mg_tensor in = tensor(input, MG_DTYPE_FLOAT32, 2, in_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT64, 2, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_FLOAT32, 2, out_shape, NULL);
  if (input == NULL || indices == NULL || output == NULL) {
    CHECK(!"out of memory");
    free(input);
    free(indices);
    free(output);
    return;
  }
  for (n = 0; n < R * C; ++n) input[n] = (float)n;
  for (n = 0; n < N; ++n) indices[n] = (n * 37) % R;
  for (threads = 0; threads <= 2; ++threads) {
    mg_context context = MG_CONTEXT_DEFAULT;
    context.num_threads = threads;
    context.device = MG_DEVICE_CPU;
    memset(output, 0, sizeof(float) * N * C);
    /* indices [N,1] against input [R,C] on axis 0: dim 1 broadcasts the indices, so
     * output[n][c] = input[indices[n]][c] (numpy.take(input, indices, axis=0)). */
    CHECK_OK(mg_gather_multiaxis(&in, &idx, axes, 1, NULL, &out, &context));
    ok = 1;
    for (n = 0; n < N; ++n) {
      for (c = 0; c < C; ++c) ok &= output[n * C + c] == input[indices[n] * C + c];
    }
    CHECK(ok);
  }
  {
    mg_context context = MG_CONTEXT_DEFAULT;
    context.num_threads = -1;
    CHECK_ERROR(mg_gather_multiaxis(&in, &idx, axes, 1, NULL, &out, &context),
                MG_ERROR_INVALID_ARGUMENT, "num_threads");
  }
  free(input);
  free(indices);
  free(output);
}

/* ---- registry ops ---------------------------------------------------------------------------- */

static void test_op_list(void) {
  size_t count = 0, i;
  int has_nd = 0, has_core = 0;
  const char* name = NULL;
  CHECK_OK(mg_op_count(&count));
  CHECK(count >= 29);
  for (i = 0; i < count; ++i) {
    if (mg_op_name(i, &name) != MG_OK || name == NULL) {
      CHECK(!"mg_op_name failed");
      continue;
    }
    has_nd |= strcmp(name, "onnx.GatherND") == 0;
    has_core |= strcmp(name, "gather_multiaxis") == 0;
  }
  CHECK(has_nd);
  CHECK(has_core);
  CHECK_ERROR(mg_op_name(count, &name), MG_ERROR_INVALID_ARGUMENT, "out of range");
  CHECK_ERROR(mg_op_count(NULL), MG_ERROR_INVALID_ARGUMENT, "count is NULL");
}

/* onnx.Gather (= numpy.take with an axis): output[i][j][k] = data[i][indices[j][k]], negatives
 * wrap once. */
static void test_onnx_gather(void) {
  int32_t data[3][4];
  const int64_t indices[2][2] = {{0, -1}, {2, 1}};
  const int64_t data_shape[2] = {3, 4}, idx_shape[2] = {2, 2}, out_shape[3] = {3, 2, 2};
  int32_t expected[3][2][2], output[3][2][2];
  int64_t inferred[MG_MAX_RANK];
  int32_t rank = -1;
  int i, j, k;
  mg_tensor x = tensor(data, MG_DTYPE_INT32, 2, data_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT64, 2, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_INT32, 3, out_shape, NULL);
  mg_attr attrs[1];
  attrs[0] = mg_attr_int("axis", 1);
  for (i = 0; i < 3; ++i) {
    for (j = 0; j < 4; ++j) data[i][j] = 100 * i + j;
  }
  for (i = 0; i < 3; ++i) {
    for (j = 0; j < 2; ++j) {
      for (k = 0; k < 2; ++k) expected[i][j][k] = data[i][resolve(indices[j][k], 4, MG_INDEX_ERROR, 1)];
    }
  }
  CHECK_OK(mg_infer_shape("onnx.Gather", &x, &idx, attrs, 1, inferred, MG_MAX_RANK, &rank));
  CHECK(rank == 3 && same_i64(inferred, out_shape, 3));
  CHECK_OK(mg_run_op("onnx.Gather", &x, &idx, attrs, 1, &out, NULL));
  CHECK(memcmp(output, expected, sizeof output) == 0);
  /* the same through a text attribute, as the CLI spells it */
  attrs[0] = mg_attr_text("axis", "1");
  memset(output, 0, sizeof output);
  CHECK_OK(mg_run_op("onnx.Gather", &x, &idx, attrs, 1, &out, NULL));
  CHECK(memcmp(output, expected, sizeof output) == 0);
}

/* onnx.GatherElements axis=1: output[i][j] = data[i][indices[i][j]]. */
static void test_onnx_gather_elements(void) {
  const float data[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const int32_t indices[2][2] = {{2, 0}, {-1, 1}};
  const int64_t data_shape[2] = {2, 3}, idx_shape[2] = {2, 2};
  float expected[2][2], output[2][2];
  int i, j;
  mg_tensor x = tensor(data, MG_DTYPE_FLOAT32, 2, data_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT32, 2, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_FLOAT32, 2, idx_shape, NULL);
  mg_attr attrs[1];
  attrs[0] = mg_attr_int("axis", 1);
  for (i = 0; i < 2; ++i) {
    for (j = 0; j < 2; ++j) expected[i][j] = data[i][resolve(indices[i][j], 3, MG_INDEX_ERROR, 1)];
  }
  CHECK_OK(mg_run_op("onnx.GatherElements", &x, &idx, attrs, 1, &out, NULL));
  CHECK(memcmp(output, expected, sizeof output) == 0);
}

/* onnx.GatherND. batch_dims 0, the seed's example: output[n][t] = data[indices[n][0]][indices[n][1]][t].
 * batch_dims 1 with indices [2,1,1]: output[b][0][t] = data[b][indices[b][0][0]][t]. */
static void test_onnx_gather_nd(void) {
  const int32_t data[2][2][2] = {{{0, 1}, {2, 3}}, {{4, 5}, {6, 7}}};
  const int64_t indices[2][2] = {{0, 1}, {1, 0}};
  const int64_t data_shape[3] = {2, 2, 2}, idx_shape[2] = {2, 2}, out_shape[2] = {2, 2};
  const int32_t known[2][2] = {{2, 3}, {4, 5}};
  int32_t expected[2][2], output[2][2];
  int n, t;
  mg_tensor x = tensor(data, MG_DTYPE_INT32, 3, data_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT64, 2, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_INT32, 2, out_shape, NULL);
  for (n = 0; n < 2; ++n) {
    for (t = 0; t < 2; ++t) expected[n][t] = data[indices[n][0]][indices[n][1]][t];
  }
  CHECK_OK(mg_run_op("onnx.GatherND", &x, &idx, NULL, 0, &out, NULL));
  CHECK(memcmp(output, expected, sizeof output) == 0);
  CHECK(memcmp(output, known, sizeof output) == 0);
  {
    const int64_t bidx[2][1][1] = {{{1}}, {{0}}};
    const int64_t bidx_shape[3] = {2, 1, 1}, bout_shape[3] = {2, 1, 2};
    int32_t bexpected[2][1][2], boutput[2][1][2];
    int b;
    mg_tensor bi = tensor(bidx, MG_DTYPE_INT64, 3, bidx_shape, NULL);
    mg_tensor_mut bo = tensor_mut(boutput, MG_DTYPE_INT32, 3, bout_shape, NULL);
    mg_attr attrs[1];
    attrs[0] = mg_attr_int("batch_dims", 1);
    for (b = 0; b < 2; ++b) {
      for (t = 0; t < 2; ++t) bexpected[b][0][t] = data[b][bidx[b][0][0]][t];
    }
    CHECK_OK(mg_run_op("onnx.GatherND", &x, &bi, attrs, 1, &bo, NULL));
    CHECK(memcmp(boutput, bexpected, sizeof boutput) == 0);
  }
}

/* numpy.take: axis=None flattens (output[j] = a.flat[indices[j]]); mode "wrap" is modulo,
 * mode "clip" clamps without wrapping negatives. */
static void test_numpy_take(void) {
  const int8_t a[2][3] = {{1, 2, 3}, {4, 5, 6}};
  const int64_t indices[4] = {-1, 7, 2, -8};
  const int64_t a_shape[2] = {2, 3}, idx_shape[1] = {4};
  int8_t output[4];
  int j, ok;
  mg_tensor x = tensor(a, MG_DTYPE_INT8, 2, a_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT64, 1, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_INT8, 1, idx_shape, NULL);
  mg_attr attrs[2];
  attrs[0] = mg_attr_none("axis");
  attrs[1] = mg_attr_string("mode", "wrap");
  CHECK_OK(mg_run_op("numpy.take", &x, &idx, attrs, 2, &out, NULL));
  ok = 1;
  for (j = 0; j < 4; ++j) ok &= output[j] == (&a[0][0])[resolve(indices[j], 6, MG_INDEX_WRAP, 1)];
  CHECK(ok);
  attrs[1] = mg_attr_string("mode", "clip");
  CHECK_OK(mg_run_op("numpy.take", &x, &idx, attrs, 2, &out, NULL));
  ok = 1;
  for (j = 0; j < 4; ++j) ok &= output[j] == (&a[0][0])[resolve(indices[j], 6, MG_INDEX_CLAMP, 0)];
  CHECK(ok);
  /* mode "raise": 7 is out of range for the flattened input of size 6 */
  attrs[1] = mg_attr_string("mode", "raise");
  CHECK_ERROR(mg_run_op("numpy.take", &x, &idx, attrs, 2, &out, NULL), MG_ERROR_OUT_OF_RANGE,
              "numpy.take: indices[1] = 7 is out of range");
  /* an enum value that is not a choice */
  attrs[1] = mg_attr_string("mode", "nearest");
  CHECK_ERROR(mg_run_op("numpy.take", &x, &idx, attrs, 2, &out, NULL), MG_ERROR_INVALID_ARGUMENT,
              "'nearest' is not one of");
}

/* torch.gather(input, dim=1, index): out[i][j] = input[i][index[i][j]]; negatives rejected. */
static void test_torch_gather(void) {
  const double input[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
  int64_t index[2][3] = {{3, 0, 0}, {1, 2, 3}};
  const int64_t in_shape[2] = {2, 4}, idx_shape[2] = {2, 3};
  double expected[2][3], output[2][3];
  int i, j;
  mg_tensor x = tensor(input, MG_DTYPE_FLOAT64, 2, in_shape, NULL);
  mg_tensor idx = tensor(index, MG_DTYPE_INT64, 2, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_FLOAT64, 2, idx_shape, NULL);
  mg_attr attrs[1];
  attrs[0] = mg_attr_int("dim", 1);
  for (i = 0; i < 2; ++i) {
    for (j = 0; j < 3; ++j) expected[i][j] = input[i][index[i][j]];
  }
  CHECK_OK(mg_run_op("torch.gather", &x, &idx, attrs, 1, &out, NULL));
  CHECK(memcmp(output, expected, sizeof output) == 0);
  index[0][1] = -1;
  CHECK_ERROR(mg_run_op("torch.gather", &x, &idx, attrs, 1, &out, NULL), MG_ERROR_OUT_OF_RANGE,
              "torch.gather: index[0,1] = -1 is out of range for dim 1 of size 4");
}

/* ---- shape inference and explain ------------------------------------------------------------- */

static void test_infer_shape(void) {
  /* docs/spec.md section 1's worked example: [4,2,1,2] x [1,3,2,2], axes [1] -> [4,3,2,2] */
  const int64_t in_shape[4] = {4, 2, 1, 2}, idx_shape[4] = {1, 3, 2, 2}, want[4] = {4, 3, 2, 2};
  const int64_t axes[1] = {1};
  int64_t shape[MG_MAX_RANK];
  int32_t rank = -1;
  mg_tensor in = tensor(NULL, MG_DTYPE_FLOAT32, 4, in_shape, NULL);
  mg_tensor idx = tensor(NULL, MG_DTYPE_INT64, 4, idx_shape, NULL);
  mg_attr attrs[2];
  attrs[0] = mg_attr_ints("axes", axes, 1);
  CHECK_OK(mg_infer_shape("gather_multiaxis", &in, &idx, attrs, 1, shape, MG_MAX_RANK, &rank));
  CHECK(rank == 4 && same_i64(shape, want, 4));
  CHECK_ERROR(mg_infer_shape("gather_multiaxis", &in, &idx, attrs, 1, shape, 3, &rank),
              MG_ERROR_INVALID_ARGUMENT, "room for 3");
  {
    /* docs/cli.md's tf.gather example: params [3,5], indices [3,2], axis 1, batch_dims 1 -> [3,2] */
    const int64_t p_shape[2] = {3, 5}, i_shape[2] = {3, 2};
    mg_tensor p = tensor(NULL, MG_DTYPE_FLOAT32, 2, p_shape, NULL);
    mg_tensor i = tensor(NULL, MG_DTYPE_INT64, 2, i_shape, NULL);
    attrs[0] = mg_attr_int("axis", 1);
    attrs[1] = mg_attr_int("batch_dims", 1);
    CHECK_OK(mg_infer_shape("tf.gather", &p, &i, attrs, 2, shape, MG_MAX_RANK, &rank));
    CHECK(rank == 2 && shape[0] == 3 && shape[1] == 2);
  }
  {
    /* onnx.GatherND: data [2,3,4], indices [5,2] -> [5,4] */
    const int64_t d_shape[3] = {2, 3, 4}, i_shape[2] = {5, 2};
    mg_tensor d = tensor(NULL, MG_DTYPE_UINT8, 3, d_shape, NULL);
    mg_tensor i = tensor(NULL, MG_DTYPE_INT64, 2, i_shape, NULL);
    CHECK_OK(mg_infer_shape("onnx.GatherND", &d, &i, NULL, 0, shape, MG_MAX_RANK, &rank));
    CHECK(rank == 2 && shape[0] == 5 && shape[1] == 4);
    /* ONNX's GatherND takes int64 indices only */
    i.dtype = MG_DTYPE_INT32;
    CHECK_ERROR(mg_infer_shape("onnx.GatherND", &d, &i, NULL, 0, shape, MG_MAX_RANK, &rank),
                MG_ERROR_TYPE, "onnx.GatherND accepts int64");
  }
  /* non-broadcastable shapes: dim 0 is 4 vs 3 */
  {
    const int64_t bad_idx[4] = {3, 3, 2, 2};
    mg_tensor i = tensor(NULL, MG_DTYPE_INT64, 4, bad_idx, NULL);
    attrs[0] = mg_attr_ints("axes", axes, 1);
    CHECK(mg_infer_shape("gather_multiaxis", &in, &i, attrs, 1, shape, MG_MAX_RANK, &rank) ==
          MG_ERROR_INVALID_ARGUMENT);
  }
}

static void test_explain(void) {
  const int64_t x_shape[2] = {3, 4}, i_shape[2] = {2, 2};
  mg_tensor x = tensor(NULL, MG_DTYPE_FLOAT32, 2, x_shape, NULL);
  mg_tensor i = tensor(NULL, MG_DTYPE_INT64, 2, i_shape, NULL);
  mg_attr attrs[1];
  size_t needed = 0, needed2 = 0;
  char small[16];
  char* text;
  attrs[0] = mg_attr_int("axis", 1);
  CHECK_OK(mg_explain("onnx.Gather", &x, &i, attrs, 1, NULL, 0, &needed));
  CHECK(needed > 100);
  text = (char*)malloc(needed);
  if (text == NULL) {
    CHECK(!"out of memory");
    return;
  }
  CHECK_OK(mg_explain("onnx.Gather", &x, &i, attrs, 1, text, needed, &needed2));
  CHECK(needed2 == needed && strlen(text) + 1 == needed);
  CHECK(strstr(text, "lowered call:") != NULL);
  CHECK(strstr(text, "onnx.Gather") != NULL);
  CHECK(strstr(text, "gather_multiaxis(") != NULL);
  CHECK_ERROR(mg_explain("onnx.Gather", &x, &i, attrs, 1, small, sizeof small, &needed2),
              MG_ERROR_INVALID_ARGUMENT, "buffer has 16");
  CHECK(strlen(small) == sizeof small - 1 && strncmp(small, text, sizeof small - 1) == 0);
  free(text);
}

/* ---- errors ---------------------------------------------------------------------------------- */

static void test_errors(void) {
  const int64_t input[4][3] = {{0, 1, 2}, {10, 11, 12}, {20, 21, 22}, {30, 31, 32}};
  const int64_t indices[2][3] = {{3, 1, 1}, {10, 0, 3}};
  const float float_indices[2][3] = {{0, 0, 0}, {0, 0, 0}};
  const int64_t in_shape[2] = {4, 3}, idx_shape[2] = {2, 3}, out_shape[2] = {2, 3};
  const int64_t axes[1] = {0};
  int64_t output[2][3];
  int64_t overlapping[4][3];
  mg_tensor in = tensor(input, MG_DTYPE_INT64, 2, in_shape, NULL);
  mg_tensor idx = tensor(indices, MG_DTYPE_INT64, 2, idx_shape, NULL);
  mg_tensor fidx = tensor(float_indices, MG_DTYPE_FLOAT32, 2, idx_shape, NULL);
  mg_tensor_mut out = tensor_mut(output, MG_DTYPE_INT64, 2, out_shape, NULL);
  mg_attr attrs[1];

  /* an out-of-range index (docs/cli.md's exit-code example) */
  CHECK_ERROR(mg_gather_multiaxis(&in, &idx, axes, 1, NULL, &out, NULL), MG_ERROR_OUT_OF_RANGE,
              "indices[1,0] = 10 is out of range for axis 0 of size 4 (valid range [-4, 4))");
  /* the same through a framework op, named in its terms */
  attrs[0] = mg_attr_int("axis", 0);
  CHECK_ERROR(mg_run_op("onnx.GatherElements", &in, &idx, attrs, 1, &out, NULL),
              MG_ERROR_OUT_OF_RANGE, "onnx.GatherElements: indices[1,0] = 10 is out of range");
  /* an unknown op */
  CHECK_ERROR(mg_run_op("onnx.Gatherr", &in, &idx, NULL, 0, &out, NULL), MG_ERROR_INVALID_ARGUMENT,
              "unknown op 'onnx.Gatherr'");
  {
    int64_t shape[MG_MAX_RANK];
    int32_t rank = 0;
    CHECK_ERROR(mg_infer_shape("no.such_op", &in, &idx, NULL, 0, shape, MG_MAX_RANK, &rank),
                MG_ERROR_INVALID_ARGUMENT, "unknown op 'no.such_op'");
  }
  /* a bad attribute type: axis given as a string */
  attrs[0] = mg_attr_string("axis", "1");
  CHECK_ERROR(mg_run_op("onnx.Gather", &in, &idx, attrs, 1, &out, NULL), MG_ERROR_TYPE,
              "attribute axis: expected int");
  attrs[0] = mg_attr_float("axis", 1.0);
  CHECK_ERROR(mg_run_op("onnx.Gather", &in, &idx, attrs, 1, &out, NULL), MG_ERROR_TYPE,
              "attribute axis: expected int");
  /* an unknown attribute, and bad text */
  attrs[0] = mg_attr_int("dim", 1);
  CHECK_ERROR(mg_run_op("onnx.Gather", &in, &idx, attrs, 1, &out, NULL), MG_ERROR_INVALID_ARGUMENT,
              "onnx.Gather has no attribute 'dim'");
  attrs[0] = mg_attr_text("axis", "x");
  CHECK_ERROR(mg_run_op("onnx.Gather", &in, &idx, attrs, 1, &out, NULL), MG_ERROR_INVALID_ARGUMENT,
              "is not an integer");
  /* float indices */
  CHECK_ERROR(mg_gather_multiaxis(&in, &fidx, axes, 1, NULL, &out, NULL), MG_ERROR_TYPE,
              "float32");
  /* an output that overlaps the input is rejected before any write */
  {
    const int64_t ok_indices[2][3] = {{3, 1, 1}, {2, 0, 3}};
    mg_tensor oidx = tensor(ok_indices, MG_DTYPE_INT64, 2, idx_shape, NULL);
    mg_tensor over_in = tensor(overlapping, MG_DTYPE_INT64, 2, in_shape, NULL);
    mg_tensor_mut over_out = tensor_mut(&overlapping[1][0], MG_DTYPE_INT64, 2, out_shape, NULL);
    memcpy(overlapping, input, sizeof overlapping);
    CHECK_ERROR(mg_gather_multiaxis(&over_in, &oidx, axes, 1, NULL, &over_out, NULL),
                MG_ERROR_INVALID_ARGUMENT, "overlap");
    CHECK(memcmp(overlapping, input, sizeof overlapping) == 0);
    attrs[0] = mg_attr_int("axis", 0);
    CHECK_ERROR(mg_run_op("onnx.GatherElements", &over_in, &oidx, attrs, 1, &over_out, NULL),
                MG_ERROR_INVALID_ARGUMENT, "overlap");
  }
  /* an output that writes one element twice (stride 0) */
  {
    const int64_t ok_indices[2][3] = {{3, 1, 1}, {2, 0, 3}};
    const int64_t zero_strides[2] = {0, 1};
    mg_tensor oidx = tensor(ok_indices, MG_DTYPE_INT64, 2, idx_shape, NULL);
    mg_tensor_mut self = tensor_mut(output, MG_DTYPE_INT64, 2, out_shape, zero_strides);
    CHECK(mg_gather_multiaxis(&in, &oidx, axes, 1, NULL, &self, NULL) == MG_ERROR_INVALID_ARGUMENT);
  }
  /* wrong output shape, wrong output width */
  {
    const int64_t ok_indices[2][3] = {{3, 1, 1}, {2, 0, 3}};
    const int64_t wrong_shape[2] = {3, 2};
    mg_tensor oidx = tensor(ok_indices, MG_DTYPE_INT64, 2, idx_shape, NULL);
    mg_tensor_mut wrong = tensor_mut(output, MG_DTYPE_INT64, 2, wrong_shape, NULL);
    mg_tensor_mut narrow = tensor_mut(output, MG_DTYPE_INT32, 2, out_shape, NULL);
    CHECK_ERROR(mg_gather_multiaxis(&in, &oidx, axes, 1, NULL, &wrong, NULL),
                MG_ERROR_INVALID_ARGUMENT, "[3,2]");
    CHECK(mg_gather_multiaxis(&in, &oidx, axes, 1, NULL, &narrow, NULL) != MG_OK);
  }
  /* C-level argument checks */
  CHECK_ERROR(mg_gather_multiaxis(NULL, &idx, axes, 1, NULL, &out, NULL), MG_ERROR_INVALID_ARGUMENT,
              "input is NULL");
  CHECK_ERROR(mg_gather_multiaxis(&in, &idx, NULL, 1, NULL, &out, NULL), MG_ERROR_INVALID_ARGUMENT,
              "axes is NULL");
  CHECK_ERROR(mg_run_op(NULL, &in, &idx, NULL, 0, &out, NULL), MG_ERROR_INVALID_ARGUMENT,
              "op is NULL");
  {
    mg_tensor bad = in;
    bad.dtype = (mg_dtype)42;
    CHECK_ERROR(mg_gather_multiaxis(&bad, &idx, axes, 1, NULL, &out, NULL), MG_ERROR_TYPE,
                "input dtype 42");
    bad = in;
    bad.rank = 17;
    CHECK_ERROR(mg_gather_multiaxis(&bad, &idx, axes, 1, NULL, &out, NULL),
                MG_ERROR_INVALID_ARGUMENT, "input rank 17");
  }
  {
    mg_gather_options options = MG_GATHER_OPTIONS_DEFAULT;
    options.index_mode = (mg_index_mode)9;
    CHECK_ERROR(mg_gather_multiaxis(&in, &idx, axes, 1, &options, &out, NULL),
                MG_ERROR_INVALID_ARGUMENT, "index_mode 9");
  }
  /* a success clears the message */
  CHECK_OK(mg_op_name(0, &(const char*){NULL}));
  CHECK(strcmp(mg_last_error(), "") == 0);
}

static void test_basics(void) {
  CHECK(mg_c_api_version() == MG_C_API_VERSION);
  CHECK(strcmp(mg_dtype_name(MG_DTYPE_FLOAT32), "float32") == 0);
  CHECK(strcmp(mg_dtype_name(MG_DTYPE_BFLOAT16), "bfloat16") == 0);
  CHECK(strcmp(mg_dtype_name((mg_dtype)99), "unsupported") == 0);
  CHECK(mg_dtype_size(MG_DTYPE_COMPLEX128) == 16 && mg_dtype_size(MG_DTYPE_BOOL) == 1 &&
        mg_dtype_size(MG_DTYPE_FLOAT16) == 2 && mg_dtype_size((mg_dtype)99) == 0);
  CHECK(strcmp(mg_status_name(MG_ERROR_OUT_OF_RANGE), "out of range") == 0);
  CHECK(strcmp(mg_status_name(MG_ERROR_CANCELLED), "cancelled") == 0);
  CHECK(strcmp(mg_last_error(), "") == 0);
}

/* scatter_multiaxis: rows of a [4,3] float input, indices {3, 1, 3} along axis 0, reduction add
 * (np.add.at(x, [3, 1, 3], u)), in place; then a bad index leaves the output unchanged; then
 * the registry form with attributes. */
static void test_scatter(void) {
  float x[4][3] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}, {3, 3, 3}};
  const float u[3][3] = {{1, 2, 3}, {10, 20, 30}, {100, 200, 300}};
  int64_t ix[3][1] = {{3}, {1}, {3}};
  const int64_t x_shape[2] = {4, 3}, ix_shape[2] = {3, 1}, u_shape[2] = {3, 3};
  const int64_t axes[1] = {0};
  const float want[4][3] = {{0, 0, 0}, {11, 21, 31}, {2, 2, 2}, {104, 205, 306}};
  mg_scatter_options o = MG_SCATTER_OPTIONS_DEFAULT;
  mg_tensor in = tensor(x, MG_DTYPE_FLOAT32, 2, x_shape, NULL);
  mg_tensor idx = tensor(ix, MG_DTYPE_INT64, 2, ix_shape, NULL);
  mg_tensor upd = tensor(u, MG_DTYPE_FLOAT32, 2, u_shape, NULL);
  mg_tensor_mut out = tensor_mut(x, MG_DTYPE_FLOAT32, 2, x_shape, NULL);
  mg_attr attrs[2];
  const int64_t axis0[1] = {0};
  o.reduction = MG_REDUCTION_ADD;
  CHECK_OK(mg_scatter_multiaxis(&in, &idx, &upd, axes, 1, &o, &out, NULL));
  CHECK(memcmp(x, want, sizeof x) == 0);
  ix[1][0] = 4;
  CHECK_ERROR(mg_scatter_multiaxis(&in, &idx, &upd, axes, 1, &o, &out, NULL), MG_ERROR_OUT_OF_RANGE,
              "indices[1,0] = 4 is out of range for axis 0 of size 4 (valid range [-4, 4))");
  CHECK(memcmp(x, want, sizeof x) == 0);
  ix[1][0] = 1;
  o.index_mode = MG_INDEX_FILL;
  CHECK_ERROR(mg_scatter_multiaxis(&in, &idx, &upd, axes, 1, &o, &out, NULL), MG_ERROR_INVALID_ARGUMENT,
              "index_mode fill has no meaning for a scatter (there is no output element to fill; drop skips out-of-range updates)");
  /* The registry form: reduction max, the last of the duplicates combine in order. */
  memset(attrs, 0, sizeof attrs);
  attrs[0].name = "axes";
  attrs[0].kind = MG_ATTR_INT_LIST;
  attrs[0].ints = axis0;
  attrs[0].count = 1;
  attrs[1].name = "reduction";
  attrs[1].kind = MG_ATTR_STRING;
  attrs[1].str = "max";
  CHECK_OK(mg_run_scatter_op("scatter_multiaxis", &in, &idx, &upd, attrs, 2, &out, NULL));
  CHECK(x[3][0] == 104 && x[3][1] == 205 && x[3][2] == 306 && x[1][0] == 11);
  CHECK_ERROR(mg_run_scatter_op("onnx.Gather", &in, &idx, &upd, NULL, 0, &out, NULL), MG_ERROR_INVALID_ARGUMENT,
              "onnx.Gather is a gather: it takes no updates");
}

int main(void) {
  test_basics();
  test_elements_axis0();
  test_points_xy();
  test_index_modes();
  test_uint64_fill();
  test_strided_views();
  test_threads();
  test_op_list();
  test_onnx_gather();
  test_onnx_gather_elements();
  test_onnx_gather_nd();
  test_numpy_take();
  test_torch_gather();
  test_infer_shape();
  test_explain();
  test_errors();
  test_scatter();
  printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
