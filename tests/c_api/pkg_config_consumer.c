/* A C99 program built the way a user of the installed library builds one, with nothing but
 *
 *     cc -std=c99 pkg_config_consumer.c $(pkg-config --cflags --libs multigather)
 *
 * (tests/c_api/pkg_config_test.cmake, CTest `c_api_pkg_config`): the README's first example,
 * GatherElements along axis 0, through mg_gather_multiaxis. Prints the output and exits non-zero
 * when it is not the known result or the linked library's C ABI is not the header's. */
#include <multigather/multigather.h>

#include <stdio.h>

int main(void) {
  const int64_t input[4][3] = {{0, 1, 2}, {10, 11, 12}, {20, 21, 22}, {30, 31, 32}};
  const int64_t indices[2][3] = {{3, 1, 1}, {2, 0, 3}};
  const int64_t known[2][3] = {{30, 11, 12}, {20, 1, 32}}; /* README / examples/elements_axis0 */
  const int64_t in_shape[2] = {4, 3}, idx_shape[2] = {2, 3}, out_shape[2] = {2, 3};
  const int64_t axes[1] = {0};
  int64_t output[2][3] = {{0, 0, 0}, {0, 0, 0}};
  mg_tensor in = {input, MG_DTYPE_INT64, 2, in_shape, NULL}; /* NULL strides: C order */
  mg_tensor idx = {indices, MG_DTYPE_INT64, 2, idx_shape, NULL};
  mg_tensor_mut out = {output, MG_DTYPE_INT64, 2, out_shape, NULL};
  mg_status s;
  int i, j, mismatches = 0;

  if (mg_c_api_version() != MG_C_API_VERSION) {
    printf("C API version %d linked, %d in the header\n", mg_c_api_version(), MG_C_API_VERSION);
    return 1;
  }
  s = mg_gather_multiaxis(&in, &idx, axes, 1, NULL, &out, NULL);
  if (s != MG_OK) {
    printf("mg_gather_multiaxis: %s: %s\n", mg_status_name(s), mg_last_error());
    return 1;
  }
  for (i = 0; i < 2; ++i) {
    for (j = 0; j < 3; ++j) mismatches += output[i][j] != known[i][j];
  }
  printf("multigather %d.%d.%d: [[%lld %lld %lld] [%lld %lld %lld]]\n", MG_VERSION_MAJOR,
         MG_VERSION_MINOR, MG_VERSION_PATCH, (long long)output[0][0], (long long)output[0][1],
         (long long)output[0][2], (long long)output[1][0], (long long)output[1][1],
         (long long)output[1][2]);
  if (mismatches != 0) {
    printf("%d elements differ from [[30 11 12] [20 1 32]]\n", mismatches);
    return 1;
  }
  return 0;
}
