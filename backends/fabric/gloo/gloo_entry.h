// The C boundary between the fabric plugin and its lazily loaded Gloo engine library
// (tessera_fabric_gloo.so): the plugin dlopens the library and looks these up (gloo_proxy.cpp).
// Statuses, never exceptions, cross it; both sides are built from this tree together.
#pragma once

#include <stddef.h>

#include "tessera/ext_collectives.h"

#define TSR_FABRIC_GLOO_EXPORT __attribute__((visibility("default")))

struct tsr_comm_group_s;

extern "C" {
// A Gloo context for `group` (one cpu device per process; rank and world size from the group),
// the processes meeting at `rendezvous` ("file:///dir" or "tcp://host:port") under `prefix`.
// *out: the engine.
typedef tsr_status_t (*tsr_fabric_gloo_create_fn)(const tsr_api_t* api, tsr_comm_group_s* group,
                                                  const char* rendezvous, const char* prefix, void** out);
typedef tsr_status_t (*tsr_fabric_gloo_run_fn)(void* engine, const tsr_collective_args_t* args);
// The next subgroup's store prefix (every member of the parent calls it once per split) and
// the rendezvous URL.
typedef void (*tsr_fabric_gloo_split_prefix_fn)(void* engine, char* prefix, size_t prefix_len, char* rendezvous,
                                                size_t rendezvous_len);
typedef void (*tsr_fabric_gloo_destroy_fn)(void* engine);
}
