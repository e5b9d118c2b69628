/* Tessera C ABI: umbrella header. Start here.
 *
 * The ABI is C11 and lives in these headers, one per concept. Each declares its types and,
 * for every entry of the function table tsr_api_t (api.h) that belongs to it, a documented
 * function type (tsr_<entry>_fn_t) tagged with the ABI minor it appeared in ("Since 1.1.").
 *
 *   version.h          versions, export macros, what is a MINOR vs a MAJOR change, limits
 *   status.h           tsr_status_t, the canonical codes and which code to use when
 *   runtime.h          the runtime, options, logging, random state, precision switches
 *   device.h           devices, device properties, the device type a backend registers
 *   tensor.h           dtypes, tensors: creation, inspection, views, copies, foreign memory,
 *                      DLPack import and export
 *   dlpack.h           the DLPack 1.0 exchange structs (the standard's layouts, as C11)
 *   stream.h           streams and events, the current stream, record_stream
 *   memory.h           allocator statistics and controls, memory pools, raw allocators
 *   op.h               ops, boxed values, schemas and their arguments as data, meta functions
 *   kernel.h           kernels: what a backend registers and what a kernel receives
 *   autograd.h         gradients, hooks, backward, grad and inference modes
 *   io.h               safetensors files
 *   plugin.h           the plugin contract, the loader's records, registration
 *   api.h              tsr_api_t, the table (append-only, in the order entries were added),
 *                      and tsr_get_api, the core's only exported symbol
 *   ext_graphs.h       extension "tessera.graphs.<device>": capture and replay device graphs
 *   ext_pinned_host.h  extension "tessera.pinned_host": page-locked host memory
 *   types.h            compatibility: includes what it used to declare
 * Every ABI change is recorded in abi/CHANGES.md.
 *
 * Conventions of every header (written once, here):
 *  - Errors. A fallible entry returns tsr_status_t: NULL is success; a non-NULL status
 *    belongs to whoever receives it, who frees it once with status_free. The codes and when
 *    to use which: status.h. A NULL required pointer is INVALID_ARGUMENT; running out of host
 *    memory is RESOURCE_EXHAUSTED; a C++ exception caught inside the core is INTERNAL. Entries
 *    that cannot fail return plain values and need valid arguments (a NULL tensor there is
 *    undefined behaviour), unless their documentation says what NULL gives.
 *  - Out parameters (`out`, `*_out`, and results named in the documentation) are written on
 *    success only: on error they hold nothing the caller must release.
 *  - References. tsr_tensor_t is reference-counted. A tensor returned through tsr_tensor_t**
 *    is a NEW REFERENCE the caller owns and drops with tensor_release; a tensor passed as an
 *    argument is BORROWED for the call (the core takes its own reference if it keeps it).
 *  - Borrowed results. Pointers returned by getters (names, sizes, records, the op handles of
 *    op_find) are owned by the object they came from and valid while it lives (the tensor,
 *    the open file, the runtime); the caller never frees them. A string the caller must free
 *    says so and goes to string_free (memory.h).
 *  - Other handles have one owner and one end: a runtime (runtime_destroy; the default
 *    runtime is never destroyed), a stream (stream_destroy), an event (event_destroy), a file
 *    (safetensors_close), a status (status_free). Streams, events and files go before their
 *    runtime.
 *  - Arguments are read during the call; the core copies what it keeps (registered structs,
 *    names and schemas). Extension tables and tsr_plugin_t are static storage of the plugin.
 *  - Growable structs start with `size_t struct_size`. A writer sets struct_size =
 *    sizeof(the struct as it was built); a reader checks TSR_HAS_FIELD (version.h) before
 *    reading a field added after its own minor. For a struct the core fills in
 *    (plugin_record, memory_stats, device_properties), set struct_size to sizeof(the struct)
 *    first (0 means the core's size): the core writes no more than that and sets struct_size
 *    to what it wrote.
 *  - Threads. Every entry is thread-safe unless its documentation says otherwise. A tensor
 *    may be read by many threads at once and written by one at a time (as in PyTorch). The
 *    current device, the current stream, grad mode and inference mode are per thread.
 *  - Versions. An entry tagged "Since 1.N" exists in cores of minor N and later: code built
 *    against a later minor checks TSR_HAS_FIELD(api, tsr_api_t, entry) before calling an
 *    entry newer than the core it runs on (api->abi_version says which).
 */
#ifndef TESSERA_TESSERA_H
#define TESSERA_TESSERA_H
#include "tessera/version.h"
#include "tessera/status.h"
#include "tessera/runtime.h"
#include "tessera/device.h"
#include "tessera/tensor.h"
#include "tessera/stream.h"
#include "tessera/memory.h"
#include "tessera/op.h"
#include "tessera/kernel.h"
#include "tessera/autograd.h"
#include "tessera/io.h"
#include "tessera/plugin.h"
#include "tessera/api.h"
#include "tessera/types.h"
#endif
