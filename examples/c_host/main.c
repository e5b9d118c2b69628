/* A C11 host for Tessera: dlopen()s libtessera.so, resolves ONLY `tsr_get_api`, and does
 * everything else through the returned function table: a runtime, tensors from host data,
 * the ops "add", "matmul" and "softmax" called boxed through op_find/op_call, results copied
 * back, checked and printed, and every object freed. Errors are reported with the status's
 * code and message.
 *
 *   tessera_c_host [path/to/libtessera.so]      (default: $TESSERA_CORE, then "libtessera.so")
 *
 * Build (needs only the ABI headers, no C++ and no link to the core):
 *   cc -std=c11 -I<prefix>/include main.c -ldl -o tessera_c_host
 */
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tessera/tessera.h"

static const tsr_api_t* api;

/* Reports a failed status (and frees it); returns 1 when st was an error. */
static int failed(tsr_status_t st, const char* what) {
  if (!st) return 0;
  fprintf(stderr, "c_host: %s failed: [code %d] %s\n", what, (int)api->status_code(st), api->status_message(st));
  api->status_free(st);
  return 1;
}

static tsr_value_t tensor_arg(tsr_tensor_t* t) {
  tsr_value_t v;
  memset(&v, 0, sizeof v);
  v.tag = TSR_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}

static tsr_value_t int_arg(int64_t i) {
  tsr_value_t v;
  memset(&v, 0, sizeof v);
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}

/* Looks up `name` and calls it with `args`, returning its single output in *out (a new reference). */
static int call1(tsr_runtime_t* rt, const char* name, const tsr_value_t* args, size_t nargs, tsr_tensor_t** out) {
  tsr_op_t* op = NULL;
  char what[128];
  snprintf(what, sizeof what, "op_find(\"%s\")", name);
  if (failed(api->op_find(rt, name, &op), what)) return 1;
  *out = NULL;
  snprintf(what, sizeof what, "op_call(\"%s\")", name);
  return failed(api->op_call(op, args, nargs, out, 1), what);
}

static void print_matrix(const char* label, const float* v, int64_t rows, int64_t cols) {
  int64_t i, j;
  printf("%s [%lld x %lld]:\n", label, (long long)rows, (long long)cols);
  for (i = 0; i < rows; ++i) {
    printf("  ");
    for (j = 0; j < cols; ++j) printf(" %9.4f", v[i * cols + j]);
    printf("\n");
  }
}

static int check_close(const char* label, const float* got, const float* want, int64_t n) {
  int64_t i;
  for (i = 0; i < n; ++i)
    if (fabsf(got[i] - want[i]) > 1e-5f * (1.0f + fabsf(want[i]))) {
      fprintf(stderr, "c_host: %s: element %lld is %g, expected %g\n", label, (long long)i, (double)got[i],
              (double)want[i]);
      return 1;
    }
  return 0;
}

/* Copies a 2-D f32 tensor back to `dst` after checking its shape. */
static int fetch(tsr_tensor_t* t, int64_t rows, int64_t cols, float* dst, const char* label) {
  const int64_t* sizes = api->tensor_sizes(t);
  if (api->tensor_ndim(t) != 2 || sizes[0] != rows || sizes[1] != cols || api->tensor_dtype(t) != TSR_F32) {
    fprintf(stderr, "c_host: %s has an unexpected shape or dtype\n", label);
    return 1;
  }
  return failed(api->tensor_copy_to_host(t, dst, (size_t)(rows * cols) * sizeof(float)), "tensor_copy_to_host");
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : getenv("TESSERA_CORE");
  void* lib;
  void* sym;
  tsr_get_api_fn_t get_api;
  tsr_runtime_options_t opts;
  tsr_runtime_t* rt = NULL;
  tsr_device_t cpu = {TSR_DEVICE_TYPE_CPU, 0};
  tsr_tensor_t *a = NULL, *b = NULL, *sum = NULL, *prod = NULL, *soft = NULL;
  int rc = 1;
  int64_t i, j, p;

  /* Host data: a [2,3], b [3,2]. */
  static const float a_data[6] = {1, 2, 3, 4, 5, 6};
  static const float b_data[6] = {0.5f, -1, 2, 0.25f, -3, 1};
  static const float bias_data[6] = {10, 20, 30, 40, 50, 60};
  const int64_t a_sizes[2] = {2, 3}, b_sizes[2] = {3, 2};
  float got[6], want[6];
  tsr_tensor_t* bias = NULL;

  if (!path) path = "libtessera.so";
  lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "c_host: cannot load %s: %s\n", path, dlerror());
    return 1;
  }
  /* ISO C has no conversion from void* to a function pointer; copy the bits (POSIX allows it). */
  sym = dlsym(lib, "tsr_get_api");
  if (!sym) {
    fprintf(stderr, "c_host: %s lacks tsr_get_api: %s\n", path, dlerror());
    dlclose(lib);
    return 1;
  }
  memcpy(&get_api, &sym, sizeof get_api);
  api = get_api(TSR_ABI_VERSION);
  if (!api) {
    fprintf(stderr, "c_host: the core at %s does not speak ABI %d.x\n", path, TSR_ABI_MAJOR);
    dlclose(lib);
    return 1;
  }
  printf("c_host: loaded %s (core %s, ABI %u.%u)\n", path, api->version_string(),
         (unsigned)TSR_ABI_VERSION_MAJOR(api->abi_version), (unsigned)TSR_ABI_VERSION_MINOR(api->abi_version));

  memset(&opts, 0, sizeof opts);
  opts.struct_size = TSR_STRUCT_SIZE(tsr_runtime_options_t);
  if (failed(api->runtime_create(&opts, &rt), "runtime_create")) goto out;
  printf("c_host: %zu plugin record(s), %zu ops\n", api->plugin_count(rt), api->op_count(rt));

  if (failed(api->tensor_from_host(rt, a_data, 2, a_sizes, TSR_F32, cpu, &a), "tensor_from_host(a)")) goto out;
  if (failed(api->tensor_from_host(rt, b_data, 2, b_sizes, TSR_F32, cpu, &b), "tensor_from_host(b)")) goto out;
  if (failed(api->tensor_from_host(rt, bias_data, 2, a_sizes, TSR_F32, cpu, &bias), "tensor_from_host(bias)")) goto out;

  /* add(a, bias): alpha is left out and takes its default (1). */
  {
    tsr_value_t args[2];
    args[0] = tensor_arg(a);
    args[1] = tensor_arg(bias);
    if (call1(rt, "add", args, 2, &sum)) goto out;
    if (fetch(sum, 2, 3, got, "add")) goto out;
    for (i = 0; i < 6; ++i) want[i] = a_data[i] + bias_data[i];
    print_matrix("add(a, bias)", got, 2, 3);
    if (check_close("add", got, want, 6)) goto out;
  }

  /* matmul(a, b): [2,3] @ [3,2]. */
  {
    tsr_value_t args[2];
    args[0] = tensor_arg(a);
    args[1] = tensor_arg(b);
    if (call1(rt, "matmul", args, 2, &prod)) goto out;
    if (fetch(prod, 2, 2, got, "matmul")) goto out;
    for (i = 0; i < 2; ++i)
      for (j = 0; j < 2; ++j) {
        float s = 0;
        for (p = 0; p < 3; ++p) s += a_data[i * 3 + p] * b_data[p * 2 + j];
        want[i * 2 + j] = s;
      }
    print_matrix("matmul(a, b)", got, 2, 2);
    if (check_close("matmul", got, want, 4)) goto out;
  }

  /* softmax(a, dim=1): dtype left out (None). */
  {
    tsr_value_t args[2];
    args[0] = tensor_arg(a);
    args[1] = int_arg(1);
    if (call1(rt, "softmax", args, 2, &soft)) goto out;
    if (fetch(soft, 2, 3, got, "softmax")) goto out;
    for (i = 0; i < 2; ++i) {
      double mx = a_data[i * 3], z = 0;
      for (j = 1; j < 3; ++j) mx = a_data[i * 3 + j] > mx ? a_data[i * 3 + j] : mx;
      for (j = 0; j < 3; ++j) z += exp(a_data[i * 3 + j] - mx);
      for (j = 0; j < 3; ++j) want[i * 3 + j] = (float)(exp(a_data[i * 3 + j] - mx) / z);
    }
    print_matrix("softmax(a, dim=1)", got, 2, 3);
    if (check_close("softmax", got, want, 6)) goto out;
  }

  /* An error on purpose: matmul of [2,3] and [2,3]. The status names the op and the shapes. */
  {
    tsr_value_t args[2];
    tsr_op_t* op = NULL;
    tsr_tensor_t* none = NULL;
    tsr_status_t st;
    args[0] = tensor_arg(a);
    args[1] = tensor_arg(a);
    if (failed(api->op_find(rt, "matmul", &op), "op_find(\"matmul\")")) goto out;
    st = api->op_call(op, args, 2, &none, 1);
    if (!st || none) {
      fprintf(stderr, "c_host: matmul of [2,3] and [2,3] should have failed\n");
      if (st) api->status_free(st);
      api->tensor_release(none);
      goto out;
    }
    printf("c_host: expected error: [code %d] %s\n", (int)api->status_code(st), api->status_message(st));
    api->status_free(st);
  }
  rc = 0;

out:
  api->tensor_release(soft);
  api->tensor_release(prod);
  api->tensor_release(sum);
  api->tensor_release(bias);
  api->tensor_release(b);
  api->tensor_release(a);
  if (rt) api->runtime_destroy(rt);
  /* No dlclose(lib): like the plugins it loads, the core stays mapped until process exit
   * (statuses, kernels and allocators may be referenced until then). */
  if (rc == 0) printf("c_host: all checks passed\n");
  return rc;
}
