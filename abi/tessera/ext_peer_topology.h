/* Tessera C ABI extension "tessera.peer_topology": for each ordered pair of devices of one
 * device type, whether one can access the other's memory directly (peer-to-peer) and over which
 * link (NVLink, PCIe), as `nvidia-smi topo -m` shows it.
 *
 * A backend whose devices can reach each other's memory publishes this table from its plugin
 * init under TSR_PEER_TOPOLOGY_EXTENSION_PREFIX + device type name
 * ("tessera.peer_topology.cuda"); hosts find it with
 * api->get_extension(runtime, "tessera.peer_topology.cuda") (NULL: the backend does not
 * describe its topology). `tessera info` prints the matrix for every device type that has the
 * table and at least 2 devices.
 *
 *   tsr_peer_link_t link;
 *   link.struct_size = sizeof(link);
 *   tsr_status_t st = table->query(runtime, 0, 1, &link);  // may device 1 access device 0?
 *
 * Querying allocates nothing and enables nothing: peer access itself is enabled by the backend
 * on demand (the cuda backend enables it on the first device-to-device copy between two GPUs,
 * which then goes GPU to GPU instead of through host memory).
 *
 * Ownership: the table is static storage of the plugin and lives as long as the runtime; `out`
 * is the caller's.
 * Errors: query returns INVALID_ARGUMENT, naming the device (e.g. "cuda:7"), for an index out
 * of range (index < 0 or >= the device type's device count), and for `out` NULL or with a
 * struct_size (not 0) smaller than sizeof(size_t); *out is then untouched. A backend may
 * return another status when its driver fails to answer.
 * Thread-safety: query may be called from any thread concurrently.
 * Versioning: fields are only appended, to the table and to tsr_peer_link_t; check struct_size
 * (TSR_PEER_TOPOLOGY_HAS, TSR_PEER_LINK_HAS) before using a field added later than the ones
 * below. tsr_peer_link_t is filled as the growable structs the core fills
 * (tessera/tessera.h): set out->struct_size to sizeof(tsr_peer_link_t) first (0 means the
 * backend's size); the backend writes no more than that and sets struct_size to what it wrote.
 * Since 1.6 (the table appeared while the ABI was 1.6; it grows by its own struct_size, see
 * abi/CHANGES.md).
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_EXT_PEER_TOPOLOGY_H
#define TESSERA_EXT_PEER_TOPOLOGY_H

#include <stddef.h>

#include "tessera/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_PEER_TOPOLOGY_EXTENSION_PREFIX "tessera.peer_topology."

/* tsr_peer_link_t.link: how the two devices are connected. */
typedef enum tsr_peer_link_kind_t {
  TSR_PEER_LINK_NONE = 0,        /* no peer access: copies between them go through the host */
  TSR_PEER_LINK_SAME_DEVICE = 1, /* src == dst */
  TSR_PEER_LINK_PCIE = 2,        /* peer access over PCIe */
  TSR_PEER_LINK_NVLINK = 3,      /* peer access over NVLink (direct, or through an NVSwitch) */
  TSR_PEER_LINK_UNKNOWN = 4      /* peer access possible, the link is not known (no NVML) */
} tsr_peer_link_kind_t;

typedef struct tsr_peer_link_t {
  size_t struct_size;       /* see Versioning above */
  int32_t can_access;       /* 1: dst can read and write src's memory directly (1 for src == dst) */
  int32_t link;             /* tsr_peer_link_kind_t */
  int32_t nvlink_count;     /* active NVLinks from src towards dst (through a switch: src's), else 0 */
  int32_t performance_rank; /* relative rank of the link, lower is better (cudaDevP2PAttrPerformanceRank);
                               0 for src == dst, -1 unknown or no access */
  int32_t native_atomics;   /* 1: atomics over the link are native (and for src == dst); 0 no or unknown */
  int32_t reserved;         /* 0 */
} tsr_peer_link_t;

typedef struct tsr_peer_topology_t {
  size_t struct_size; /* sizeof(tsr_peer_topology_t) as the plugin was built */
  uint32_t flags;     /* reserved, 0 */
  /* How device `dst_index` reaches the memory of device `src_index` (both of the table's device
   * type) into *out. */
  tsr_status_t (*query)(tsr_runtime_t* runtime, int32_t src_index, int32_t dst_index, tsr_peer_link_t* out);
} tsr_peer_topology_t;

#define TSR_PEER_TOPOLOGY_HAS(table, field) \
  ((table)->struct_size >= offsetof(tsr_peer_topology_t, field) + sizeof((table)->field))
#define TSR_PEER_LINK_HAS(link, field) ((link)->struct_size >= offsetof(tsr_peer_link_t, field) + sizeof((link)->field))

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_EXT_PEER_TOPOLOGY_H */
