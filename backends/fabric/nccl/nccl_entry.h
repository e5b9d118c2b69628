// The C boundary between the fabric plugin and its lazily loaded NCCL engine library
// (tessera_fabric_nccl.so): the plugin opens the library and looks these up (nccl_proxy.cpp).
// Statuses, never exceptions, cross it; both sides are built from this tree together. The
// plugin itself links neither NCCL nor the CUDA runtime: only this library does.
#pragma once

#include <stddef.h>
#include <stdint.h>

#include "tessera/ext_collectives.h"

#define TSR_FABRIC_NCCL_EXPORT __attribute__((visibility("default")))

struct tsr_comm_group_s;

extern "C" {
// Communicators for `group`'s members (all cuda devices of this process). One process
// (rendezvous NULL): ncclCommInitAll over the members' device indices. Across processes: rank 0
// makes the NCCL unique id and publishes it at `rendezvous` ("file:///dir" or
// "tcp://host:port") under key `prefix`; every process then initializes its members' ranks.
// Fails within the group's timeout (DEADLINE_EXCEEDED, UNAVAILABLE), never hangs. *out: the
// engine.
typedef tsr_status_t (*tsr_fabric_nccl_create_fn)(const tsr_api_t* api, tsr_comm_group_s* group,
                                                  const char* rendezvous, const char* prefix, void** out);
// The subgroup of `parent`'s ranks (ncclCommSplit, which every process of the parent calls with
// the same ranks). `group` is the new group when this process has members in it (its members
// and rank already set), else NULL, and *out is then NULL too.
typedef tsr_status_t (*tsr_fabric_nccl_split_fn)(void* parent, tsr_comm_group_s* group, const int32_t* ranks,
                                                 int32_t num_ranks, void** out);
// Enqueues one collective on the members' current streams. *completion: a handle to ask
// whether it has run (NULL when nothing needs asking: the streams are being captured into a
// CUDA graph, where completion is the graph's).
typedef tsr_status_t (*tsr_fabric_nccl_run_fn)(void* engine, const tsr_collective_args_t* args, void** completion);
// *done = 1 once the collective has run on every member's stream. A communication error fails
// (the group is then broken).
typedef tsr_status_t (*tsr_fabric_nccl_query_fn)(void* completion, int32_t* done);
// Waits up to timeout_seconds (< 0: for ever); *done as for query.
typedef tsr_status_t (*tsr_fabric_nccl_wait_fn)(void* completion, double timeout_seconds, int32_t* done);
typedef void (*tsr_fabric_nccl_release_fn)(void* completion);
typedef void (*tsr_fabric_nccl_destroy_fn)(void* engine);
}
