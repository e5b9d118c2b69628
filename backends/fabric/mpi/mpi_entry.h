// The C boundary between the fabric plugin and its lazily loaded MPI engine library
// (tessera_fabric_mpi.so): the plugin dlopens the library and looks these up (mpi_proxy.cpp).
// Statuses, never exceptions, cross it; both sides are built from this tree together. MPI
// handles cross it as opaque pointers, so the plugin never includes mpi.h.
#pragma once

#include <stddef.h>

#include "tessera/ext_collectives.h"

#define TSR_FABRIC_MPI_EXPORT __attribute__((visibility("default")))

struct tsr_comm_group_s;

extern "C" {
// An MPI engine for `group` (one cpu device per process), on a duplicate of `comm` (a
// communicator from tsr_fabric_mpi_split), or of MPI_COMM_WORLD when `comm` is NULL: MPI is
// initialized first if nobody has. The group's rank and world size must be this process's rank
// and the size of that communicator. *out: the engine. Collective over the communicator.
typedef tsr_status_t (*tsr_fabric_mpi_create_fn)(const tsr_api_t* api, tsr_comm_group_s* group, void* comm, void** out);
typedef tsr_status_t (*tsr_fabric_mpi_run_fn)(void* engine, const tsr_collective_args_t* args);
// group_split: the communicator of the parent's members `ranks` (ascending), made by every
// process of the parent (collective over the parent). *comm is NULL where this process is not
// listed; else free it with tsr_fabric_mpi_comm_free once an engine has been created on it.
typedef tsr_status_t (*tsr_fabric_mpi_split_fn)(void* engine, const int32_t* ranks, int32_t num_ranks, void** comm);
typedef void (*tsr_fabric_mpi_comm_free_fn)(void* comm);
typedef void (*tsr_fabric_mpi_destroy_fn)(void* engine);
}
