/* Tessera C ABI: operators. An op has a schema in PyTorch's notation, takes boxed values
 * (tsr_value_t) and is looked up once by name (op_find), then called without string lookups
 * (op_call). Plugins define new ops with a schema and a meta function (tsr_op_def_t); kernels
 * that compute them are in kernel.h.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_OP_H
#define TESSERA_OP_H

#include "tessera/tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tsr_api_t;

/* Operator, looked up once by name; owned by the runtime. Opaque. Since 1.0. */
typedef struct tsr_op_s tsr_op_t;

/* Boxed op argument kinds. Since 1.0 (TSR_VALUE_TENSOR_LIST too). */
typedef enum tsr_value_tag_t {
  TSR_VALUE_NONE = 0,
  TSR_VALUE_TENSOR = 1,
  TSR_VALUE_INT = 2,
  TSR_VALUE_DOUBLE = 3,
  TSR_VALUE_BOOL = 4,
  TSR_VALUE_INT_LIST = 5,
  TSR_VALUE_DTYPE = 6,
  TSR_VALUE_STRING = 7,
  TSR_VALUE_DEVICE = 8,
  TSR_VALUE_TENSOR_LIST = 9 /* "Tensor[]" in a schema: u.tensors */
} tsr_value_tag_t;

/* A boxed argument. Borrowed: the caller keeps tensors, lists and strings alive for the call.
 * Since 1.0. */
typedef struct tsr_value_t {
  int32_t tag; /* tsr_value_tag_t */
  int32_t reserved;
  union {
    tsr_tensor_t* tensor;
    int64_t i;
    double d;
    int32_t b;
    struct {
      const int64_t* data;
      int64_t len;
    } ints;
    int32_t dtype; /* tsr_dtype_t */
    const char* str;
    tsr_device_t device;
    struct {
      tsr_tensor_t* const* data; /* no NULL entries */
      int64_t len;
    } tensors;
  } u;
} tsr_value_t;

/* One registered kernel, for introspection (op_kernel_info). Strings are borrowed, valid as
 * long as the runtime. Since 1.0. */
typedef struct tsr_kernel_info_t {
  size_t struct_size;
  const char* kernel_name;
  const char* plugin_name;
  int32_t device_type;
  int32_t priority;
  uint32_t dtype_mask;
  int32_t has_predicate;
} tsr_kernel_info_t;

/* ---- What a plugin registers (register_op, plugin.h) ------------------------------------ */

/* Output description filled by a meta function. Since 1.0. */
typedef struct tsr_tensor_spec_t {
  int32_t dtype;
  int32_t ndim;
  tsr_device_t device;
  int64_t sizes[TSR_MAX_DIMS];
} tsr_tensor_spec_t;

/* A meta (shape/dtype inference) call: validate args, fill outputs[0..noutputs) and set
 * *dispatch_dtype. Return a status naming the op and the offending shapes on bad input
 * (INVALID_ARGUMENT; status.h). Everything is borrowed for the duration of the call.
 * Since 1.0. */
typedef struct tsr_meta_call_t {
  size_t struct_size;
  const struct tsr_api_t* api;
  tsr_runtime_t* runtime;
  const char* op_name;
  const tsr_value_t* args;
  size_t nargs;
  tsr_tensor_spec_t* outputs;
  size_t noutputs;
  int32_t* dispatch_dtype;
  void* user_data;
} tsr_meta_call_t;

/* Since 1.0. */
typedef tsr_status_t (*tsr_meta_fn_t)(const tsr_meta_call_t* call);

/* A backward (gradient) call of a plugin op, made by the autograd engine when a gradient
 * reaches the op's results. The formula is written with ops (api->op_call), like the core's own,
 * so it runs on every device and is itself recorded under create_graph (double backward).
 * Everything is borrowed for the duration of the call. Since 1.4. */
typedef struct tsr_backward_call_t {
  size_t struct_size;
  const struct tsr_api_t* api;
  tsr_runtime_t* runtime;
  const char* op_name;
  /* The forward call's arguments after defaults, tensors included (saved at record time). */
  const tsr_value_t* args;
  size_t nargs;
  /* The forward results (saved at record time). */
  tsr_tensor_t* const* outputs;
  size_t noutputs;
  /* grad_outputs[i]: the gradient of result i, or NULL when none reached it (read as zero). */
  tsr_tensor_t* const* grad_outputs;
  /* needs_input_grad[j] != 0: argument j is a tensor whose gradient is wanted. */
  const int32_t* needs_input_grad;
  /* grad_inputs[j] (NULL on entry): set a new tensor (the engine takes the reference) for each
   * argument that needs it; leaving it NULL means a zero gradient. A gradient of a broadcast
   * shape or another floating dtype is summed and cast to the input by the engine. */
  tsr_tensor_t** grad_inputs;
  void* user_data; /* the op definition's user_data */
} tsr_backward_call_t;

/* Returns NULL, or a status naming the op (the backward pass fails with it). Since 1.4. */
typedef tsr_status_t (*tsr_backward_fn_t)(const tsr_backward_call_t* call);

/* A new operator. The schema uses PyTorch's notation, e.g.
 *   "example::gemm_bias_act(Tensor a, Tensor b, Tensor? bias=None, str act='none') -> Tensor"
 * Argument types: Tensor, Tensor?, Tensor[], int, int?, float, float?, bool, int[], int[]?,
 * str, ScalarType?, Device?, Scalar, Scalar?. The core fills defaults, checks kinds and
 * devices, runs `meta`, allocates outputs (or checks out= tensors) and dispatches to a kernel.
 * The schema is copied; meta, backward and user_data must stay valid until the plugin's
 * shutdown. Since 1.0. */
typedef struct tsr_op_def_t {
  size_t struct_size;
  const char* schema;
  tsr_meta_fn_t meta;
  void* user_data;
  /* --- Since 1.4 (optional): the op's gradient. NULL: reaching the op in a backward pass
   * fails with "the derivative for '<op>' is not implemented". The engine saves the op's
   * tensor arguments and results when it records a call. */
  tsr_backward_fn_t backward;
} tsr_op_def_t;

/* ---- Entries of tsr_api_t (api.h) ------------------------------------------------------- */

/* op_find: the op called `name` into *out (borrowed, lives as long as the runtime; keep it
 * instead of looking it up per call). NOT_FOUND naming it when there is none. Since 1.0. */
typedef tsr_status_t (*tsr_op_find_fn_t)(tsr_runtime_t* runtime, const char* name, tsr_op_t** out);
/* op_call: calls an op. args: in schema order (missing trailing args take defaults), borrowed
 * for the call. outs[i]: NULL on entry to allocate a new output (the caller then owns the
 * reference), or an existing tensor to write into (out=; it must already have the right shape,
 * dtype and device, and keeps the caller's reference). On error, outs that were NULL stay NULL
 * and out= tensors are not written. Errors: INVALID_ARGUMENT (argument count or kinds, devices,
 * what the meta function rejects), UNIMPLEMENTED (no kernel for the device and dtype), and
 * whatever the kernel returns. Lock-free: no global lock and no string lookup on this path.
 * Since 1.0. */
typedef tsr_status_t (*tsr_op_call_fn_t)(tsr_op_t* op, const tsr_value_t* args, size_t nargs, tsr_tensor_t** outs,
                                         size_t nouts);
/* op_name: the op's qualified name ("add", "example::gemm_bias_act"); borrowed. Since 1.0. */
typedef const char* (*tsr_op_name_fn_t)(const tsr_op_t* op);
/* op_schema: the op's schema text; borrowed. Since 1.0. */
typedef const char* (*tsr_op_schema_fn_t)(const tsr_op_t* op);
/* op_num_outputs: the number of outputs the schema returns. Since 1.0. */
typedef size_t (*tsr_op_num_outputs_fn_t)(const tsr_op_t* op);
/* op_count: the number of ops defined in the runtime. Since 1.0. */
typedef size_t (*tsr_op_count_fn_t)(tsr_runtime_t* runtime);
/* op_at: op number `index` (0..op_count-1; borrowed), NULL past the end. Since 1.0. */
typedef tsr_op_t* (*tsr_op_at_fn_t)(tsr_runtime_t* runtime, size_t index);
/* op_kernel_count: the number of kernels registered for the op, on every device type.
 * Since 1.0. */
typedef size_t (*tsr_op_kernel_count_fn_t)(const tsr_op_t* op);
/* op_kernel_info: kernel number `index` of the op into *out. The core fills every field it
 * knows and sets struct_size (it does not read the caller's). OUT_OF_RANGE past
 * op_kernel_count. Since 1.0. */
typedef tsr_status_t (*tsr_op_kernel_info_fn_t)(const tsr_op_t* op, size_t index, tsr_kernel_info_t* out);

/* Where an op comes from, for tools (`tessera ops --where`). Strings are borrowed, valid as long
 * as the runtime; any of them may be NULL where the core does not know. Since 1.3. */
typedef struct tsr_op_source_t {
  size_t struct_size;
  const char* plugin;      /* the plugin that defined the op; NULL for the core's own ops */
  const char* file;        /* the core's record declaring the op, relative to the source root */
  int32_t line;            /* its line in `file`; 0 when unknown */
  int32_t composite;       /* 1: written with other ops, whose recording gives its gradient */
  const char* formula;     /* the backward formula as the record names it; NULL when none */
} tsr_op_source_t;

/* op_source: where the op comes from, into *out. The core fills every field it knows and sets
 * struct_size (it does not read the caller's); INVALID_ARGUMENT for a NULL op or out. Thread-safe.
 * Since 1.3. */
typedef tsr_status_t (*tsr_op_source_fn_t)(const tsr_op_t* op, tsr_op_source_t* out);

/* The type of a schema argument, as the core parsed it ("Tensor?" is TSR_ARG_TENSOR with
 * optional = 1; "int[2]" is TSR_ARG_INT_LIST). Values are fixed forever. Since 1.4. */
typedef enum tsr_arg_kind_t {
  TSR_ARG_TENSOR = 0,      /* Tensor */
  TSR_ARG_INT = 1,         /* int */
  TSR_ARG_FLOAT = 2,       /* float */
  TSR_ARG_BOOL = 3,        /* bool */
  TSR_ARG_INT_LIST = 4,    /* int[], int[N] (a single int is accepted and repeated) */
  TSR_ARG_STRING = 5,      /* str */
  TSR_ARG_DTYPE = 6,       /* ScalarType */
  TSR_ARG_DEVICE = 7,      /* Device */
  TSR_ARG_SCALAR = 8,      /* Scalar: int, float or bool, kept as given */
  TSR_ARG_TENSOR_LIST = 9  /* Tensor[] */
} tsr_arg_kind_t;

/* One argument of an op's schema, so that bindings and tools call ops by keyword without
 * parsing schema text. Strings and the default value are borrowed, valid as long as the
 * runtime. Since 1.4. */
typedef struct tsr_op_arg_t {
  size_t struct_size;
  const char* name;          /* the schema's name: "self", "dim", "keepdim" */
  int32_t kind;              /* tsr_arg_kind_t */
  int32_t optional;          /* 1: "T?", None (TSR_VALUE_NONE) is accepted */
  int32_t is_mutable;        /* 1: "Tensor(a!)", written in place */
  int32_t has_default;       /* 1: may be left out; default_value is what the core passes */
  tsr_value_t default_value; /* NONE, INT, DOUBLE, BOOL, STRING or INT_LIST; borrowed */
} tsr_op_arg_t;

/* op_num_args: the number of arguments in the op's schema. Never fails; op must be valid.
 * Thread-safe. Since 1.4. */
typedef size_t (*tsr_op_num_args_fn_t)(const tsr_op_t* op);
/* op_arg: argument number `index` of the op's schema into *out. The core fills every field it
 * knows and sets struct_size (it does not read the caller's). INVALID_ARGUMENT for a NULL op or
 * out, OUT_OF_RANGE past op_num_args. Thread-safe. Since 1.4. */
typedef tsr_status_t (*tsr_op_arg_fn_t)(const tsr_op_t* op, size_t index, tsr_op_arg_t* out);

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_OP_H */
