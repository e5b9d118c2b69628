/* Tessera C ABI: kernels, what a backend registers to compute an op on its device type, and
 * what a kernel receives when it is called (tensor views, the canonical iteration).
 * This header also includes what it used to declare before the ABI headers were arranged by
 * concept (device types: device.h, raw allocators: memory.h, ops: op.h), so that existing
 * includes keep working.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_KERNEL_H
#define TESSERA_KERNEL_H

#include "tessera/device.h"
#include "tessera/memory.h"
#include "tessera/op.h"
#include "tessera/stream.h"

#ifdef __cplusplus
extern "C" {
#endif

struct tsr_api_t;

/* Borrowed description of a tensor for kernels: strides are in ELEMENTS, data already includes
 * the storage offset. Valid for the duration of the kernel call. Since 1.0. */
typedef struct tsr_tensor_view_t {
  void* data;
  int32_t dtype; /* tsr_dtype_t */
  int32_t ndim;
  tsr_device_t device;
  const int64_t* sizes;
  const int64_t* strides;
} tsr_tensor_view_t;

/* Canonical iteration for elementwise and reduction kernels (as ATen's TensorIterator).
 * Operands: outputs first, then inputs. Dims are ordered FASTEST FIRST (sizes[0] is the
 * innermost loop) and already coalesced; strides are in BYTES, per operand.
 * For reductions, the first `nreduce` dims are reduced: the output's strides there are 0.
 * `contiguous` is 1 when every operand is dense, in the same order, with its dtype's element
 * size as the innermost stride: then the kernel may treat each operand as a flat array of numel.
 * Since 1.0. */
typedef struct tsr_iter_t {
  size_t struct_size;
  int32_t ndim;
  int32_t noperands;
  int32_t noutputs;
  int32_t nreduce;
  int32_t contiguous;
  int32_t reserved;
  int64_t numel;
  int64_t sizes[TSR_MAX_DIMS];
  int64_t strides[TSR_ITER_MAX_OPERANDS][TSR_MAX_DIMS];
  char* data[TSR_ITER_MAX_OPERANDS];
  int32_t dtypes[TSR_ITER_MAX_OPERANDS];
} tsr_iter_t;

/* What a kernel receives. The core has already validated arguments, promoted dtypes,
 * broadcast shapes and allocated outputs: kernels compute and nothing else.
 *  - args/nargs: the op's boxed arguments in schema order, defaults filled in. Tensor
 *    arguments appear here as handles; their views are in `inputs` (same order, tensors only).
 *    An op whose kernel takes a Tensor[] argument (cat, see docs/kernel-contracts.md) gets one
 *    view per tensor of the list in `inputs`, in list order, however long the list: `ninputs`
 *    has no fixed bound (since 1.6; a meaning, no layout change).
 *  - outputs: views of the output tensors (already allocated, correct shape and dtype).
 *  - iter: for elementwise and reduction ops, the canonical iteration over outputs+inputs
 *    (then prefer it over the views); NULL for other ops.
 *  - dtype: the dtype the kernel was selected for.
 *  - stream: the calling thread's current stream of `device` (the backend's own handle, NULL
 *    for the default stream): a kernel of an asynchronous device enqueues its work there and
 *    returns; errors found later are reported by the next synchronizing call.
 * Everything is borrowed for the duration of the call. Kernels may run concurrently on
 * several threads and must be re-entrant. Which status to return: status.h (UNIMPLEMENTED to
 * decline an input; INTERNAL for what the meta function should have excluded). A kernel that
 * declines must not have written anything: since 1.6 the dispatcher then calls the next kernel
 * for the same op, device and dtype in priority order (tsr_kernel_def_t), and only when none is
 * left does the caller see UNIMPLEMENTED (so that a composite can fall back). Since 1.0. */
typedef struct tsr_kernel_call_t {
  size_t struct_size;
  const struct tsr_api_t* api;
  tsr_runtime_t* runtime;
  const char* op_name;
  tsr_device_t device;
  tsr_stream_t* stream;
  int32_t dtype;
  int32_t reserved;
  const tsr_value_t* args;
  size_t nargs;
  const tsr_tensor_view_t* inputs;
  size_t ninputs;
  const tsr_tensor_view_t* outputs;
  size_t noutputs;
  const tsr_iter_t* iter;
  void* user_data;
} tsr_kernel_call_t;

/* Since 1.0. */
typedef tsr_status_t (*tsr_kernel_fn_t)(const tsr_kernel_call_t* call);

/* Optional predicate: return nonzero when the kernel can run on `device` (for example, only on
 * compute capability 10.x). Called on the dispatch path; must be cheap and thread-safe.
 * Since 1.0. */
typedef int (*tsr_device_predicate_fn_t)(tsr_device_t device, void* user_data);

/* ---- What a backend registers (register_kernel, plugin.h) ------------------------------- */

/* A kernel registration. The core copies the struct (its first struct_size bytes) and the
 * strings; fn, predicate and user_data must stay valid until the plugin's shutdown. Among
 * kernels for the same op and device type whose dtype_mask contains the dispatch dtype (0 =
 * every dtype) and whose predicate accepts the device, the highest priority wins; ties go to
 * the latest registered. If it declines the call (UNIMPLEMENTED), the next one in that order
 * runs (since 1.6): an override can take only the inputs it does better. Since 1.0. */
typedef struct tsr_kernel_def_t {
  size_t struct_size;
  const char* op_name;     /* e.g. "add" */
  const char* kernel_name; /* for diagnostics, e.g. "cpu::add" */
  int32_t device_type;
  int32_t priority;
  uint32_t dtype_mask; /* OR of TSR_DTYPE_BIT(); 0 accepts every dtype */
  uint32_t reserved;
  tsr_device_predicate_fn_t predicate; /* optional */
  tsr_kernel_fn_t fn;
  void* user_data;
} tsr_kernel_def_t;

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_KERNEL_H */
