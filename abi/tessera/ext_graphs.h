/* Tessera C ABI extension "tessera.graphs": capture a sequence of ops into a device graph
 * (a CUDA graph on the cuda backend) and replay it with one launch.
 *
 * A backend whose device can record and replay work publishes this table from its plugin init
 * under TSR_GRAPHS_EXTENSION_PREFIX + device type name ("tessera.graphs.cuda"); hosts find it
 * with api->get_extension(runtime, "tessera.graphs.cuda").
 *
 * Capture: capture_begin(stream) puts `stream` (not NULL: the default stream cannot capture)
 * into capture mode. Ops then called on that stream by the capturing thread (make it the
 * current stream) are recorded, not run. Tensors allocated during capture come from a private
 * memory pool (api->memory_pool_*): `pool` 0 makes a new pool, or pass graph_pool() of another
 * graph to share its memory (graphs that are replayed in capture order may share). Their
 * addresses are baked into the graph: keep every tensor that the captured ops read or write
 * alive, and refill the captured inputs in place (copy_) before each replay.
 * While any stream of the device is capturing, synchronizing calls on the device
 * (device/stream/event synchronize, copies to host, tensor_copy_to_host) fail with
 * FAILED_PRECONDITION naming the capture, instead of invalidating it; so does an op that needs
 * the host to see device data (nonzero, masked_select, ...). capture_end ends the capture and
 * returns the graph; an error during capture (a refused call, a kernel failure) is reported by
 * capture_end and no graph is made.
 *
 * Ownership: a graph is released once with graph_release (after its last replay has been
 * enqueued; the backend keeps it alive until that work finishes). Released graphs give their
 * pool claim back. Thread-safety: different graphs may be used from different threads; one
 * graph is replayed from one thread at a time. Versioning: fields are only appended; check
 * struct_size (TSR_GRAPHS_HAS) before using a later field. Since 1.2 (the table appeared with
 * ABI 1.2; it grows by its own struct_size, see abi/CHANGES.md).
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_EXT_GRAPHS_H
#define TESSERA_EXT_GRAPHS_H

#include <stddef.h>

#include "tessera/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_GRAPHS_EXTENSION_PREFIX "tessera.graphs."

typedef struct tsr_graph_s tsr_graph_t; /* opaque, owned by the backend */

typedef struct tsr_graphs_t {
  size_t struct_size; /* sizeof(tsr_graphs_t) as the plugin was built */
  uint32_t flags;     /* reserved, 0 */
  tsr_status_t (*capture_begin)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream, uint64_t pool);
  tsr_status_t (*capture_end)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream, tsr_graph_t** out);
  /* 1 while `stream` is capturing. */
  int32_t (*is_capturing)(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream);
  /* Enqueues one replay of the whole graph on `stream` (NULL: the default stream). */
  tsr_status_t (*graph_replay)(tsr_graph_t* graph, tsr_stream_t* stream);
  /* The private pool the graph's tensors came from (to share it with a later capture). */
  uint64_t (*graph_pool)(const tsr_graph_t* graph);
  /* Number of device operations (kernels, copies, memsets) captured, for diagnostics. */
  int64_t (*graph_node_count)(const tsr_graph_t* graph);
  void (*graph_release)(tsr_graph_t* graph); /* NULL is a no-op */
} tsr_graphs_t;

#define TSR_GRAPHS_HAS(table, field) ((table)->struct_size >= offsetof(tsr_graphs_t, field) + sizeof((table)->field))

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_EXT_GRAPHS_H */
