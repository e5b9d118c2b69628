/* Tessera C ABI extension "tessera.collectives": collective communication over a group of
 * devices, in one process or across processes.
 *
 * Published by the fabric backend (backends/fabric), which picks an engine per group: plain
 * memory reductions between the devices of one process whose memory the host can read
 * ("inprocess": virtual CPU devices, TESSERA_CPU_DEVICES=N), existing libraries across
 * processes and for GPUs (NCCL, Gloo, MPI) where the backend was built with them, and a ring
 * over device copies and the devices' own kernels ("ring": GPUs of one process without NCCL). Hosts find it
 * with api->get_extension(runtime, TSR_COLLECTIVES_EXTENSION); NULL: no fabric backend is loaded.
 *
 *   const tsr_collectives_t* c = api->get_extension(rt, TSR_COLLECTIVES_EXTENSION);
 *   tsr_device_t devs[2] = {{TSR_DEVICE_TYPE_CPU, 0}, {TSR_DEVICE_TYPE_CPU, 1}};
 *   tsr_comm_group_options_t o = {sizeof(o)};
 *   o.devices = devs; o.num_devices = 2;
 *   tsr_comm_group_t* g; c->group_create(rt, &o, &g);
 *   tsr_tensor_t* ts[2] = {t0, t1};                 one tensor per member, rank order
 *   tsr_collective_args_t a = {sizeof(a)};
 *   a.kind = TSR_COLLECTIVE_ALL_REDUCE; a.op = TSR_REDUCE_SUM; a.inputs = ts; a.num_tensors = 2;
 *   tsr_comm_work_t* w; c->collective(g, &a, &w); c->work_wait(w, -1); c->work_release(w);
 *   c->group_release(g);
 *
 * Members and ranks: a group has world_size members numbered 0..world_size-1. This process owns
 * num_devices consecutive ranks starting at its `rank` (one process: all of them, rank 0). Every
 * collective takes the tensors of this process's members, in rank order: num_tensors equals the
 * group's local member count, and tensor i lives on the device of local member i.
 *
 * Ownership: a group from group_create / group_split and a work handle from collective are the
 * caller's and released with group_release / work_release (a work handle may outlive its
 * group's release; the group is kept until the work is released). Tensors are borrowed for the
 * call and, until the work completes, must stay alive and must not be written by others. The
 * table is static storage of the backend.
 * Errors (status.h): INVALID_ARGUMENT for bad arguments and for tensors that do not match
 * across members (the message names both ranks, their dtypes and shapes) and for non-contiguous
 * tensors; UNIMPLEMENTED for a device type or engine the backend was not built for;
 * DEADLINE_EXCEEDED when a member does not arrive within the group's timeout (a crashed peer),
 * after which the group is unusable (mpi: MPI has no per-call timeout, so only work_wait gives
 * up after it, and a crashed rank usually ends the whole job); UNAVAILABLE when a rendezvous
 * fails. A failed call leaves output tensors unchanged when it fails before the exchange starts.
 * Ordering and threads: every member calls the same collectives in the same order. A group is
 * used by one thread at a time (as an NCCL communicator); different groups may be used
 * concurrently. Work completes in call order. How it completes depends on the engine (group_info
 * names it): on devices with streams (nccl, ring) a collective is enqueued on each member device's
 * current stream and the work completes when it has run there; across processes without
 * streams (gloo, mpi) it runs on the group's communication thread and completes while the
 * caller goes on (so communication overlaps computation: check with work_query / work_wait
 * before reading the outputs); in one process without streams (inprocess) it has completed when
 * `collective` returns. (Before the fabric backend of ABI 1.5, gloo completed before returning.)
 * Versioning: structs grow by appending and carry struct_size; check TSR_COLLECTIVES_HAS before
 * using a table entry added later than these. Since 1.4 (the table appeared while the ABI was
 * 1.4; it grows by its own struct_size, see abi/CHANGES.md).
 * Conventions (ownership, out parameters, errors, threads): tessera/tessera.h.
 */
#ifndef TESSERA_EXT_COLLECTIVES_H
#define TESSERA_EXT_COLLECTIVES_H

#include <stddef.h>

#include "tessera/api.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TSR_COLLECTIVES_EXTENSION "tessera.collectives"

typedef struct tsr_comm_group_s tsr_comm_group_t; /* opaque: a communicator */
typedef struct tsr_comm_work_s tsr_comm_work_t;   /* opaque: one issued collective */

/* How all_reduce, reduce and reduce_scatter combine. AVG is SUM divided by world_size (integer
 * dtypes: truncated toward zero); on bool, SUM, AVG and MAX are "or", MIN and PROD "and". */
typedef enum tsr_reduce_op_t {
  TSR_REDUCE_SUM = 0,
  TSR_REDUCE_AVG = 1,
  TSR_REDUCE_MAX = 2,
  TSR_REDUCE_MIN = 3,
  TSR_REDUCE_PROD = 4
} tsr_reduce_op_t;

/* What a collective does, with n = world_size and the tensors of local member i:
 *   ALL_REDUCE      inputs[i] := op over every member's inputs (in place; outputs unused)
 *   REDUCE          as ALL_REDUCE, but only the member `root` receives the result
 *   BROADCAST       inputs[i] := the input of member `root` (in place)
 *   ALL_GATHER      outputs[i] (n * k elements, dim 0 of size n * d0) := every member's input
 *                   (k elements) concatenated in rank order along dim 0
 *   REDUCE_SCATTER  outputs[i] (k elements) := op over every member's input (n * k elements)
 *                   of the k-element slice number (rank of i)
 *   ALL_TO_ALL      outputs[i] slice j (k elements) := slice (rank of i) of member j's input;
 *                   input and output have n * k elements
 *   SEND / RECV     point to point with member `root` as the peer (a SEND must meet the peer's
 *                   RECV in order); the input is sent, the output (same shape) received
 *   BARRIER         waits until every member has arrived; no tensors (num_tensors 0 allowed) */
typedef enum tsr_collective_kind_t {
  TSR_COLLECTIVE_ALL_REDUCE = 0,
  TSR_COLLECTIVE_REDUCE = 1,
  TSR_COLLECTIVE_BROADCAST = 2,
  TSR_COLLECTIVE_ALL_GATHER = 3,
  TSR_COLLECTIVE_REDUCE_SCATTER = 4,
  TSR_COLLECTIVE_ALL_TO_ALL = 5,
  TSR_COLLECTIVE_SEND = 6,
  TSR_COLLECTIVE_RECV = 7,
  TSR_COLLECTIVE_BARRIER = 8
} tsr_collective_kind_t;

typedef struct tsr_comm_group_options_t {
  size_t struct_size;         /* sizeof(tsr_comm_group_options_t) as the caller was built */
  const tsr_device_t* devices; /* this process's members, in rank order (borrowed for the call) */
  int32_t num_devices;         /* >= 1 */
  int32_t rank;                /* this process's first rank; 0 in one process */
  int32_t world_size;          /* members over all processes; 0 = num_devices (one process) */
  int32_t reserved;            /* 0 */
  /* Where the processes of a multi-process group meet: "file:///shared/path" or
   * "tcp://host:port" (rank 0 listens). NULL in one process. Borrowed for the call. */
  const char* rendezvous;
  /* The engine, or NULL to let the backend choose ("inprocess", "ring", "gloo", "mpi", "nccl"). */
  const char* engine;
  /* Seconds a member waits for the others before DEADLINE_EXCEEDED; 0 = 300. */
  double timeout_seconds;
} tsr_comm_group_options_t;

typedef struct tsr_comm_group_info_t {
  size_t struct_size;  /* set by the caller to sizeof(tsr_comm_group_info_t) */
  int32_t world_size;
  int32_t rank;        /* this process's first rank */
  int32_t num_local;   /* members in this process */
  int32_t reserved;
  const char* engine;  /* "inprocess", ...; static storage */
  double timeout_seconds;
} tsr_comm_group_info_t;

typedef struct tsr_collective_args_t {
  size_t struct_size;          /* sizeof(tsr_collective_args_t) as the caller was built */
  tsr_collective_kind_t kind;
  tsr_reduce_op_t op;          /* ALL_REDUCE, REDUCE, REDUCE_SCATTER */
  int32_t root;                /* REDUCE and BROADCAST: the root's rank; SEND/RECV: the peer */
  int32_t num_tensors;         /* the group's num_local (0 for BARRIER) */
  tsr_tensor_t* const* inputs;  /* num_tensors tensors (RECV: unused) */
  tsr_tensor_t* const* outputs; /* num_tensors tensors for ALL_GATHER, REDUCE_SCATTER,
                                   ALL_TO_ALL, RECV; else unused (NULL) */
} tsr_collective_args_t;

typedef struct tsr_collectives_t {
  size_t struct_size; /* sizeof(tsr_collectives_t) as the backend was built */
  uint32_t flags;     /* reserved, 0 */
  /* A new group (one reference in *out). In one process: the listed devices, ranks 0..n-1.
   * Across processes: every process calls it with the same world_size and rendezvous. */
  tsr_status_t (*group_create)(tsr_runtime_t* runtime, const tsr_comm_group_options_t* options,
                               tsr_comm_group_t** out);
  /* A subgroup of `parent`'s members `ranks` (ascending, borrowed), renumbered 0..n-1; like
   * torch.distributed.new_group, every member of the parent calls it with the same ranks. *out
   * is NULL in a process none of whose members is listed. */
  tsr_status_t (*group_split)(tsr_comm_group_t* parent, const int32_t* ranks, int32_t num_ranks,
                              tsr_comm_group_t** out);
  void (*group_release)(tsr_comm_group_t* group); /* NULL is a no-op */
  tsr_status_t (*group_info)(const tsr_comm_group_t* group, tsr_comm_group_info_t* out);
  /* Issues one collective; a work handle in *work. When work is NULL the call waits for
   * completion itself and returns the collective's status, except on stream engines (nccl),
   * where the result is ordered on the members' current streams like any kernel's and the
   * status covers the enqueueing only. A collective refused before it was issued (bad
   * arguments) still returns a work handle, which reports the refusal. */
  tsr_status_t (*collective)(tsr_comm_group_t* group, const tsr_collective_args_t* args,
                             tsr_comm_work_t** work);
  /* Waits up to timeout_seconds (< 0: the group's timeout) and returns the collective's status
   * (DEADLINE_EXCEEDED when it did not complete in time). May be called more than once. */
  tsr_status_t (*work_wait)(tsr_comm_work_t* work, double timeout_seconds);
  /* *done = 1 once the collective completed (successfully or not), without waiting. */
  tsr_status_t (*work_query)(tsr_comm_work_t* work, int32_t* done);
  void (*work_release)(tsr_comm_work_t* work); /* NULL is a no-op */
} tsr_collectives_t;

#define TSR_COLLECTIVES_HAS(table, field) \
  ((table)->struct_size >= offsetof(tsr_collectives_t, field) + sizeof((table)->field))

#ifdef __cplusplus
}
#endif

#endif /* TESSERA_EXT_COLLECTIVES_H */
