/* Tessera C ABI extension "tessera.model": trace code into a graph, print and parse its text,
 * optimize it, save and load it with its weights as one file, and run it (docs/graphs.md).
 *
 * Published by the core itself, on every runtime. A C host serves a model with one dlsym:
 *
 *   const tsr_api_t* api = tsr_get_api(TSR_ABI_VERSION);      (dlsym(core, "tsr_get_api"))
 *   api->runtime_default(&rt);
 *   const tsr_model_ext_t* m = api->get_extension(rt, TSR_MODEL_EXTENSION);
 *   tsr_model_t* model;  m->model_load(rt, "gpt.tsm", NULL, &model);
 *   tsr_tensor_t* out[1] = {NULL};  m->model_run(model, inputs, 1, out, 1, NULL);
 *   ...  api->tensor_release(out[0]);  m->model_release(model);
 *
 * Tracing: between trace_begin and trace_end, the calling thread's op calls (op_call) and tensor
 * entries (tensor_view, tensor_reshape, ..., tensor_to, tensor_copy_) are recorded, each at the
 * level the caller made it (what an op runs inside is not); ops run normally meanwhile, with
 * autograd recording off. Declare the inputs (trace_input) and the named weights (trace_param)
 * first; any other tensor the traced code reads becomes a const of the graph. Control flow runs
 * once and is unrolled (as torch.jit.trace): a branch on tensor values is frozen as traced.
 *
 * Ownership: a tsr_model_t is owned by whoever received it (trace_end, model_parse,
 * model_load) and freed with model_release; it holds one reference to each of its weights.
 * Strings returned through char** are freed with api->string_free. Strings in tsr_model_io_t
 * live as long as the model. Everything passed in is borrowed for the call.
 * Errors: a tsr_status_t naming the entry (INVALID_ARGUMENT for bad input, with line:column for
 * text; FAILED_PRECONDITION for an unbound weight or a thread that is not tracing; NOT_FOUND for
 * an unknown weight name); on error no output is written and the model is unchanged.
 * Thread-safety: tracing belongs to the calling thread. model_run may be called from many
 * threads at once on one model; model_bind and model_optimize must not run concurrently with
 * anything else on that model.
 * Versioning: fields are only appended; check struct_size (TSR_MODEL_HAS) before using a later
 * one. NULL from get_extension: a core older than the table. Since ABI 1.5.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_EXT_MODEL_H
#define TESSERA_EXT_MODEL_H

#include <stddef.h>

#include "tessera/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_MODEL_EXTENSION "tessera.model"

/* A graph with its weights. Opaque. */
typedef struct tsr_model_s tsr_model_t;

/* One input or output of a model (model_input, model_output). */
typedef struct tsr_model_io_t {
  size_t struct_size;
  const char* name;                      /* the value's name, without '%' */
  int32_t dtype;                         /* tsr_dtype_t; UNDEFINED for an output of unknown type */
  int32_t ndim;                          /* -1 for an output of unknown type */
  int64_t sizes[TSR_MAX_DIMS];           /* -1 where the dim is symbolic */
  const char* symbols[TSR_MAX_DIMS];     /* the symbol ("B"; an output's may be an expression,
                                          * "4*B"), or NULL for a fixed size */
} tsr_model_io_t;

/* What one model_run did. */
typedef struct tsr_model_run_stats_t {
  size_t struct_size;
  int64_t nodes;       /* nodes run */
  int64_t peak_bytes;  /* bytes of the tensors the nodes created, the most alive at once */
  int64_t total_bytes; /* the same summed over the run: what holding every one to the end takes */
} tsr_model_run_stats_t;

typedef struct tsr_model_ext_t {
  size_t struct_size; /* sizeof(tsr_model_ext_t) as the core was built */
  uint32_t flags;     /* reserved, 0 */

  /* ---- tracing (the calling thread) ---- */
  /* Starts recording this thread's calls into a new graph of `runtime`. FAILED_PRECONDITION when
   * the thread already traces. */
  tsr_status_t (*trace_begin)(tsr_runtime_t* runtime);
  /* Declares `t` as the next input, called `name` (a letter or '_', then letters, digits, '_',
   * '.'). dim_symbols: NULL, or ndim entries, each NULL (a fixed size) or a symbol naming a dim
   * the caller will vary (batch: "B"). The graph's device is the first input's. */
  tsr_status_t (*trace_input)(tsr_tensor_t* t, const char* name, const char* const* dim_symbols);
  /* Declares `t` as a named weight (a module's parameter or buffer); the graph keeps a reference
   * and saves it under `name`. Weights the traced code never reads are dropped at trace_end. */
  tsr_status_t (*trace_param)(tsr_tensor_t* t, const char* name);
  /* Ends the trace; outputs: the traced code's results, in order; names: NULL or n entries, each
   * NULL (keep the generated name) or the output's name. The trace ends even on error. */
  tsr_status_t (*trace_end)(tsr_tensor_t* const* outputs, size_t n, const char* const* names, tsr_model_t** out);
  /* Ends the trace and discards it (no-op when the thread is not tracing). */
  void (*trace_abort)(void);
  /* Merges traces of the same code made at different sizes of the inputs' symbolic dims into one
   * model whose ints that follow those sizes (view(x, [B*T, 64]), arange(T)) are expressions of the
   * symbols, evaluated per run: k symbols need 2^k + 1 traces at distinct sizes (the SDK's trace
   * makes them: the example sizes, each symbol one smaller, all two smaller). Takes ownership of
   * traces[0..n) (released, also on error). INVALID_ARGUMENT naming the node and argument when the
   * traces differ in their ops, or an int is not a multilinear function of the symbols. */
  tsr_status_t (*model_generalize)(tsr_model_t* const* traces, size_t n, tsr_model_t** out);

  /* ---- text ---- */
  /* The model's graph as text (docs/graphs.md) into *text (free with api->string_free). */
  tsr_status_t (*model_print)(const tsr_model_t* model, char** text);
  /* A new model from text; its params and stored consts start unbound (model_bind). */
  tsr_status_t (*model_parse)(tsr_runtime_t* runtime, const char* text, tsr_model_t** out);
  /* Gives the param or stored const `name` its tensor (a new reference; the old one is released):
   * it must have the declared dtype and shape and be on the model's device. */
  tsr_status_t (*model_bind)(tsr_model_t* model, const char* name, tsr_tensor_t* weight);

  /* ---- passes ---- */
  /* Runs passes ("dce", "cse", "fold", comma-separated, or "all"); report: NULL or a description
   * of what each did (free with api->string_free). Results of runs never change. */
  tsr_status_t (*model_optimize)(tsr_model_t* model, const char* passes, char** report);

  /* ---- files ---- */
  /* Saves the graph and its weights as one safetensors file (every weight bound). */
  tsr_status_t (*model_save)(const tsr_model_t* model, const char* path);
  /* Loads a model file, validating the graph, every weight's dtype and shape and the file's
   * tensors; device: NULL (where it was traced) or where to load the weights and run. Unknown
   * ops name the plugin the model needs. */
  tsr_status_t (*model_load)(tsr_runtime_t* runtime, const char* path, const tsr_device_t* device, tsr_model_t** out);

  /* ---- signature ---- */
  size_t (*model_num_inputs)(const tsr_model_t* model);
  size_t (*model_num_outputs)(const tsr_model_t* model);
  /* Input or output number `index` into *out (set out->struct_size first); OUT_OF_RANGE past the
   * end. */
  tsr_status_t (*model_input)(const tsr_model_t* model, size_t index, tsr_model_io_t* out);
  tsr_status_t (*model_output)(const tsr_model_t* model, size_t index, tsr_model_io_t* out);

  /* ---- running ---- */
  /* Runs the model: inputs match its inputs (dtype, rank, fixed dims, one size per symbol, the
   * model's device); outputs: model_num_outputs slots, set to new references on success, left
   * as they were on error. stats: NULL, or filled (set struct_size first). Autograd is off. */
  tsr_status_t (*model_run)(const tsr_model_t* model, tsr_tensor_t* const* inputs, size_t ninputs,
                            tsr_tensor_t** outputs, size_t noutputs, tsr_model_run_stats_t* stats);
  /* The model's device (where its weights are). */
  tsr_device_t (*model_device)(const tsr_model_t* model);
  /* Frees the model (NULL is a no-op). */
  void (*model_release)(tsr_model_t* model);
} tsr_model_ext_t;

#define TSR_MODEL_HAS(table, field) \
  ((table)->struct_size >= offsetof(tsr_model_ext_t, field) + sizeof((table)->field))

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_EXT_MODEL_H */
