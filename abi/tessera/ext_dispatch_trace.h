/* Tessera C ABI extension "tessera.dispatch_trace": watch the dispatcher look kernels up.
 *
 * Published by the core itself, on every runtime:
 *
 *   const tsr_dispatch_trace_t* t = api->get_extension(runtime, TSR_DISPATCH_TRACE_EXTENSION);
 *   t->set_observer(runtime, my_observer, my_state);   ... run ops ...
 *   t->set_observer(runtime, NULL, NULL);
 *
 * The observer is called once per kernel lookup: every primitive op the dispatcher launches,
 * including the copies and fills the core issues itself and those inside composite ops and
 * backward formulas, with the device and the dtype the kernel is chosen for, and whether one
 * exists (has_kernel 0: the call then fails with TSR_UNIMPLEMENTED). Views and composites
 * themselves launch nothing. Tools use it to compute which kernels an op reaches
 * (`tessera kernels --reach`): run the op where every kernel exists and collect the lookups.
 *
 * Ownership: the table is static storage of the core; op_name is valid only during the call;
 * user_data is the caller's and never touched by the core.
 * Errors: set_observer returns FAILED_PRECONDITION when another observer is installed (remove it
 * first) and INVALID_ARGUMENT for a NULL runtime.
 * Thread-safety: set_observer may be called from any thread; the observer runs on whichever
 * thread dispatches (concurrently if several do) and must not call ops itself. Costs one atomic
 * load per kernel launch while no observer is installed.
 * Versioning: fields are only appended; check struct_size (TSR_DISPATCH_TRACE_HAS) before using
 * a later one. NULL from get_extension: a core older than the table.
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_EXT_DISPATCH_TRACE_H
#define TESSERA_EXT_DISPATCH_TRACE_H

#include <stddef.h>

#include "tessera/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_DISPATCH_TRACE_EXTENSION "tessera.dispatch_trace"

/* One kernel lookup: op (its registry name, e.g. "mul" or "_copy"), the device and dtype the
 * kernel is chosen for, has_kernel 1 when one was found. */
typedef void (*tsr_dispatch_observer_fn_t)(void* user_data, const char* op_name, tsr_device_t device, int32_t dtype,
                                           int32_t has_kernel);

typedef struct tsr_dispatch_trace_t {
  size_t struct_size; /* sizeof(tsr_dispatch_trace_t) as the core was built */
  uint32_t flags;     /* reserved, 0 */
  /* Installs fn (with user_data) as the runtime's observer; fn NULL removes the current one. */
  tsr_status_t (*set_observer)(tsr_runtime_t* runtime, tsr_dispatch_observer_fn_t fn, void* user_data);
} tsr_dispatch_trace_t;

#define TSR_DISPATCH_TRACE_HAS(table, field) \
  ((table)->struct_size >= offsetof(tsr_dispatch_trace_t, field) + sizeof((table)->field))

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_EXT_DISPATCH_TRACE_H */
