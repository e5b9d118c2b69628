/* Serves the GPT that `tessera train` trained, from C11 with no frontend code: dlopen()s
 * libtessera.so, resolves ONLY `tsr_get_api`, loads the saved model (model.tsm, written beside
 * the checkpoint) through the "tessera.model" extension and answers addition problems by greedy
 * decoding.
 *
 *   tessera_serve_gpt MODEL.tsm [PROBLEM ...]     e.g.  tessera_serve_gpt out/model.tsm 123+456=
 *   (the core: $TESSERA_CORE, else ../lib/libtessera.so beside this program, as installed and
 *   built, else "libtessera.so" on the loader's path)
 *
 * The model's input is token ids (int64 [B, T]; `tessera train` saves it with symbolic B and T,
 * so any prompt length runs); its output the logits [B, T, 12]. Tokens: '0'..'9' = 0..9,
 * '+' = 10, '=' = 11 (tools/train/addition_task.hpp). The model writes the d+1 digits of the sum
 * least significant first. A model of fixed length T works too: it is causal (the logits at
 * position i depend on tokens 0..i only), so the prompt is padded to T and the next token read
 * at the prompt's last position.
 *
 * Prints one line per problem: "123+456=579". Build (the ABI headers only, no C++, no link to
 * the core):  cc -std=c11 -I<prefix>/include serve_gpt.c -ldl -o tessera_serve_gpt
 */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tessera/ext_model.h"
#include "tessera/tessera.h"

enum { kPlus = 10, kEquals = 11, kVocab = 12, kMaxBlock = 64 };

static const tsr_api_t* api;
static const tsr_model_ext_t* ext;

/* Reports a failed status (and frees it); returns 1 when st was an error. */
static int failed(tsr_status_t st, const char* what) {
  if (!st) return 0;
  fprintf(stderr, "serve_gpt: %s failed: [code %d] %s\n", what, (int)api->status_code(st), api->status_message(st));
  api->status_free(st);
  return 1;
}

/* "123+456=" -> token ids; returns the count, or -1 for a character outside the vocabulary. */
static int encode(const char* text, int64_t* tokens, int64_t cap) {
  int64_t n = 0;
  for (; *text; ++text) {
    if (n == cap) return -1;
    if (*text >= '0' && *text <= '9')
      tokens[n++] = *text - '0';
    else if (*text == '+')
      tokens[n++] = kPlus;
    else if (*text == '=')
      tokens[n++] = kEquals;
    else
      return -1;
  }
  return (int)n;
}

/* Greedy decoding of `answer_len` tokens after the prompt; block: the model's fixed length, or
 * -1 when its length is symbolic. 0 on success. */
static int answer(tsr_runtime_t* rt, const tsr_model_t* model, int64_t block, int64_t* tokens, int64_t prompt_len,
                  int64_t answer_len) {
  tsr_device_t dev = ext->model_device(model);
  float logits[kMaxBlock * kVocab];
  int64_t k, v;
  for (k = 0; k < answer_len; ++k) {
    tsr_tensor_t *in = NULL, *out[1] = {NULL}, *host_out = NULL;
    const int64_t last = prompt_len + k - 1; /* the position that predicts the next token */
    const int64_t sizes[2] = {1, block > 0 ? block : prompt_len + k};
    int64_t best = 0;
    int err = failed(api->tensor_from_host(rt, tokens, 2, sizes, TSR_I64, dev, &in), "tensor_from_host");
    err = err || failed(ext->model_run(model, &in, 1, out, 1, NULL), "model_run");
    /* The logits may live on a GPU: bring them to the host as float32. */
    err = err || failed(api->tensor_to(out[0], TSR_F32, (tsr_device_t){TSR_DEVICE_TYPE_CPU, 0}, 0, &host_out),
                        "tensor_to(cpu)");
    err = err || failed(api->tensor_copy_to_host(host_out, logits, (size_t)(sizes[1] * kVocab) * sizeof(float)),
                        "tensor_copy_to_host");
    api->tensor_release(in);
    api->tensor_release(out[0]);
    api->tensor_release(host_out);
    if (err) return 1;
    for (v = 1; v < kVocab; ++v)
      if (logits[last * kVocab + v] > logits[last * kVocab + best]) best = v;
    tokens[prompt_len + k] = best;
  }
  return 0;
}

/* The core: $TESSERA_CORE, else <this program's dir>/../lib/libtessera.so, else the loader's search. */
static void* open_core(void) {
  const char* env = getenv("TESSERA_CORE");
  char path[PATH_MAX];
  ssize_t n;
  void* lib;
  if (env) return dlopen(env, RTLD_NOW | RTLD_LOCAL);
  n = readlink("/proc/self/exe", path, sizeof path - 32);
  if (n > 0) {
    char* slash;
    path[n] = '\0';
    slash = strrchr(path, '/');
    if (slash) {
      strcpy(slash, "/../lib/libtessera.so");
      lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
      if (lib) return lib;
    }
  }
  return dlopen("libtessera.so", RTLD_NOW | RTLD_LOCAL);
}

int main(int argc, char** argv) {
  void* lib;
  void* sym;
  tsr_get_api_fn_t get_api;
  tsr_runtime_t* rt = NULL;
  tsr_model_t* model = NULL;
  tsr_model_io_t in, out;
  int64_t block, digits;
  int i, rc = 1;
  const char* default_problem[] = {"123+456="};
  const char** problems = argc > 2 ? (const char**)(argv + 2) : default_problem;
  int nproblems = argc > 2 ? argc - 2 : 1;

  if (argc < 2 || !strcmp(argv[1], "--help")) {
    fprintf(stderr, "usage: tessera_serve_gpt MODEL.tsm [PROBLEM ...]   (e.g. 123+456=)\n");
    return 2;
  }
  lib = open_core();
  if (!lib) {
    fprintf(stderr, "serve_gpt: cannot load the core: %s\n", dlerror());
    return 1;
  }
  /* ISO C has no conversion from void* to a function pointer; copy the bits (POSIX allows it). */
  sym = dlsym(lib, "tsr_get_api");
  if (!sym) {
    fprintf(stderr, "serve_gpt: the core lacks tsr_get_api: %s\n", dlerror());
    dlclose(lib);
    return 1;
  }
  memcpy(&get_api, &sym, sizeof get_api);
  api = get_api(TSR_ABI_VERSION);
  if (!api) {
    fprintf(stderr, "serve_gpt: the core does not speak ABI %d.x\n", TSR_ABI_MAJOR);
    dlclose(lib);
    return 1;
  }
  if (failed(api->runtime_default(&rt), "runtime_default")) goto out;
  ext = (const tsr_model_ext_t*)api->get_extension(rt, TSR_MODEL_EXTENSION);
  if (!ext) {
    fprintf(stderr, "serve_gpt: the core has no %s extension (older than ABI 1.5)\n", TSR_MODEL_EXTENSION);
    goto out;
  }
  if (failed(ext->model_load(rt, argv[1], NULL, &model), "model_load")) goto out;

  /* The signature: tokens int64 [B, T] -> logits [B, T, 12]; a fixed T is 3 * digits + 2. */
  memset(&in, 0, sizeof in);
  in.struct_size = sizeof in;
  memset(&out, 0, sizeof out);
  out.struct_size = sizeof out;
  if (ext->model_num_inputs(model) != 1 || ext->model_num_outputs(model) != 1 ||
      failed(ext->model_input(model, 0, &in), "model_input") || failed(ext->model_output(model, 0, &out), "model_output"))
    goto out;
  block = in.ndim == 2 ? in.sizes[1] : 0; /* -1: symbolic */
  if (in.dtype != TSR_I64 || in.ndim != 2 || (in.sizes[0] != 1 && in.sizes[0] != -1) ||
      (block != -1 && (block < 5 || block > kMaxBlock || (block - 2) % 3 != 0)) || out.ndim != 3 ||
      out.sizes[2] != kVocab) {
    fprintf(stderr, "serve_gpt: %s is not an addition GPT of `tessera train` (input %s, output %s)\n", argv[1],
            in.name, out.name);
    goto out;
  }

  for (i = 0; i < nproblems; ++i) {
    int64_t tokens[kMaxBlock + 1];
    char text[2 * kMaxBlock];
    int64_t k;
    int n;
    size_t len;
    memset(tokens, 0, sizeof tokens);
    n = encode(problems[i], tokens, kMaxBlock / 2);
    /* d-digit operands: "ddd+ddd=", and a fixed-length model fixes d. */
    digits = n > 2 ? (n - 2) / 2 : 0;
    if (n < 4 || n != 2 * digits + 2 || tokens[digits] != kPlus || tokens[n - 1] != kEquals ||
        (block > 0 && block != 3 * digits + 2)) {
      fprintf(stderr, "serve_gpt: '%s' is not a problem of this model (equal-length zero-padded operands, e.g. %s)\n",
              problems[i], "123+045=");
      goto out;
    }
    if (answer(rt, model, block, tokens, n, digits + 1)) goto out;
    /* The model writes the sum least significant digit first: print it the usual way round. */
    len = strlen(problems[i]);
    memcpy(text, problems[i], len);
    for (k = 0; k <= digits; ++k) text[len + (size_t)k] = "0123456789+="[tokens[n + digits - k]];
    text[len + (size_t)digits + 1] = '\0';
    printf("%s\n", text);
  }
  rc = 0;
out:
  if (ext) ext->model_release(model);
  /* The default runtime belongs to the core; the library stays loaded until exit. */
  return rc;
}
