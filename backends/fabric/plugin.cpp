// The fabric plugin: publishes the tessera.collectives table (abi/tessera/ext_collectives.h).
// This file is the ABI boundary: argument checks, groups and work handles, and exceptions
// turned into statuses; the engines do the communication (inprocess.cpp in this library,
// gloo/ in tessera_fabric_gloo.so, mpi/ in tessera_fabric_mpi.so and nccl/ in
// tessera_fabric_nccl.so, which gloo_proxy.cpp, mpi_proxy.cpp and nccl_proxy.cpp open on first
// use).
#include <algorithm>
#include <atomic>
#include <cstdio>

#include "group.hpp"
#include "tessera/plugin.hpp"
#include "tessera/tessera.hpp"

namespace fabric {

namespace {
const tsr_api_t* g_api = nullptr;
}  // namespace

const tsr_api_t* api() { return g_api; }

namespace {

// Top-level multi-process groups get store prefixes in creation order, which every process
// follows (all create their groups in the same order, as with torch.distributed).
std::atomic<uint64_t> g_groups{0};

void create_group(tsr_runtime_t* rt, const tsr_comm_group_options_t* o, const std::string& split_prefix,
                  tsr_comm_group_t** out, const MpiComm& mpi_comm = nullptr) {
  if (!rt || !o || !out) fail(TSR_INVALID_ARGUMENT, "group_create: runtime, options and out are required");
  if (o->struct_size < offsetof(tsr_comm_group_options_t, timeout_seconds) + sizeof(double))
    fail(TSR_INVALID_ARGUMENT, "group_create: options.struct_size " + std::to_string(o->struct_size) +
                                   " is too small (set it to sizeof(tsr_comm_group_options_t))");
  if (!o->devices || o->num_devices < 1)
    fail(TSR_INVALID_ARGUMENT,
         "group_create: a group needs at least one device (num_devices " + std::to_string(o->num_devices) + ")");
  const int32_t world = o->world_size == 0 ? o->num_devices : o->world_size;
  if (o->rank < 0 || o->rank + o->num_devices > world)
    fail(TSR_INVALID_ARGUMENT, "group_create: ranks " + std::to_string(o->rank) + ".." +
                                   std::to_string(o->rank + o->num_devices - 1) + " do not fit world_size " +
                                   std::to_string(world));
  if (!(o->timeout_seconds >= 0))
    fail(TSR_INVALID_ARGUMENT, "group_create: timeout_seconds must be >= 0 (0 = the default, 300 s)");
  auto g = std::unique_ptr<tsr_comm_group_s>(new tsr_comm_group_s);
  g->runtime = rt;
  g->world_size = world;
  g->rank = o->rank;
  g->timeout_seconds = o->timeout_seconds > 0 ? o->timeout_seconds : 300;
  for (int32_t i = 0; i < o->num_devices; ++i) {
    tsr_device_t d = o->devices[i];
    if (d.type < 0 || d.index < 0 || d.index >= g_api->device_count(rt, d.type))
      fail(TSR_INVALID_ARGUMENT,
           "group_create: member " + std::to_string(i) + " is " + device_str(rt, d) + ", which does not exist");
    for (const tsr_device_t& m : g->members)
      if (m.type == d.type && m.index == d.index)
        fail(TSR_INVALID_ARGUMENT, "group_create: " + device_str(rt, d) + " is listed twice");
    g->members.push_back(d);
  }
  const std::string engine = o->engine ? o->engine : "";
  const bool multi = world != o->num_devices || o->rendezvous;
  const std::string rv = o->rendezvous ? o->rendezvous : "";
  auto check_rendezvous = [&] {
    if (rv.rfind("file://", 0) != 0 && rv.rfind("tcp://", 0) != 0)
      fail(TSR_INVALID_ARGUMENT, "group_create: rendezvous '" + rv +
                                     "' is neither file:///shared/dir (one machine) nor tcp://host:port (rank 0 "
                                     "listens there)");
  };
  // GPU members (all cuda devices) take the nccl engine, in one process or across processes.
  size_t cuda_members = 0;
  for (const tsr_device_t& d : g->members) {
    const char* type = g_api->device_type_name(rt, d.type);
    if (type && std::string(type) == "cuda") ++cuda_members;
  }
  if (cuda_members != 0 && cuda_members != g->members.size())
    fail(TSR_INVALID_ARGUMENT, "group_create: the members mix device types (" + device_str(rt, g->members[0]) +
                                   " and " + device_str(rt, g->members.back()) +
                                   "): a group's members are all cpu devices or all cuda devices");
  if (engine == "ring") {  // peer copies and the devices' own kernels: one process, any device type
    if (multi)
      fail(TSR_UNIMPLEMENTED, "group_create: the ring engine connects the devices of one process (across "
                              "processes: nccl for cuda devices, gloo or mpi for cpu devices)");
    g->engine = make_ring_engine(g.get());
    *out = g.release();
    return;
  }
  if (cuda_members || engine == "nccl") {
    if (!cuda_members)
      fail(TSR_UNIMPLEMENTED, "group_create: engine 'nccl' communicates between cuda devices, and member 0 is " +
                                  device_str(rt, g->members[0]) + " (cpu groups: inprocess or gloo)");
    if (!engine.empty() && engine != "nccl")
      fail(TSR_UNIMPLEMENTED, "group_create: engine '" + engine + "' cannot communicate between cuda devices (" +
                                  device_str(rt, g->members[0]) + "): GPU groups use the nccl or ring engine");
    if (engine.empty() && !multi && !nccl_engine_available()) {
      // No NCCL on this machine: the GPUs of one process still reduce among themselves over peer copies.
      g->engine = make_ring_engine(g.get());
      *out = g.release();
      return;
    }
    if (multi) check_rendezvous();
    const std::string prefix = multi ? "g" + std::to_string(g_groups.fetch_add(1)) : "";
    g->engine = make_nccl_engine(g.get(), multi ? rv : "", prefix);
    *out = g.release();
    return;
  }
  if (engine == "mpi" || mpi_comm || (engine.empty() && multi && started_by_mpi_launcher())) {
    // MPI: asked for, a split of an MPI group, or the default across processes in a job an MPI
    // launcher started; its ranks are MPI's, so no rendezvous is needed (one is ignored).
    g->engine = make_mpi_engine(g.get(), mpi_comm);
    g->worker = std::make_unique<Worker>(g->engine.get());
  } else if (multi) {
    if (!engine.empty() && engine != "gloo")
      fail(TSR_UNIMPLEMENTED, "group_create: engine '" + engine +
                                  "' is not built into the fabric backend (across processes: gloo, mpi)");
    if (o->num_devices != 1)
      fail(TSR_UNIMPLEMENTED, "group_create: the gloo engine takes one device per process (" +
                                  std::to_string(o->num_devices) + " given)");
    check_rendezvous();
    const std::string prefix = split_prefix.empty() ? "g" + std::to_string(g_groups.fetch_add(1)) : split_prefix;
    g->engine = make_gloo_engine(g.get(), rv, prefix);
    g->worker = std::make_unique<Worker>(g->engine.get());
  } else {
    if (!engine.empty() && engine != "inprocess")
      fail(TSR_UNIMPLEMENTED, "group_create: engine '" + engine +
                                  "' is not built into the fabric backend for a group of one process (available: "
                                  "inprocess, ring)");
    g->engine = make_inprocess_engine(g.get());
  }
  *out = g.release();
}

tsr_status_t group_create(tsr_runtime_t* rt, const tsr_comm_group_options_t* o, tsr_comm_group_t** out) {
  return guarded("group_create", [&] { create_group(rt, o, "", out); });
}

tsr_status_t group_split(tsr_comm_group_t* parent, const int32_t* ranks, int32_t n, tsr_comm_group_t** out) {
  return guarded("group_split", [&] {
    if (!parent || !out || (n > 0 && !ranks)) fail(TSR_INVALID_ARGUMENT, "group_split: parent and out are required");
    if (n < 1) fail(TSR_INVALID_ARGUMENT, "group_split: a subgroup needs at least one rank");
    *out = nullptr;
    std::vector<tsr_device_t> members;
    for (int32_t i = 0; i < n; ++i) {
      if (ranks[i] < 0 || ranks[i] >= parent->world_size)
        fail(TSR_INVALID_ARGUMENT, "group_split: rank " + std::to_string(ranks[i]) + " is not in a group of " +
                                       std::to_string(parent->world_size));
      if (i > 0 && ranks[i] <= ranks[i - 1])
        fail(TSR_INVALID_ARGUMENT, "group_split: ranks must be ascending and distinct");
      int32_t local = ranks[i] - parent->rank;
      if (local >= 0 && local < static_cast<int32_t>(parent->members.size()))
        members.push_back(parent->members[static_cast<size_t>(local)]);
    }
    if (is_nccl_engine(parent->engine.get())) {  // ncclCommSplit: every process takes part, listed or not
      std::unique_ptr<tsr_comm_group_s> sub;
      if (!members.empty()) {
        sub.reset(new tsr_comm_group_s);
        sub->runtime = parent->runtime;
        sub->members = members;
        sub->world_size = n;
        sub->timeout_seconds = parent->timeout_seconds;
        for (int32_t i = n - 1; i >= 0; --i)  // the first listed rank of this process
          if (ranks[i] >= parent->rank && ranks[i] < parent->rank + static_cast<int32_t>(parent->members.size()))
            sub->rank = i;
      }
      std::unique_ptr<Engine> e = nccl_split(parent->engine.get(), sub.get(), ranks, n);
      if (sub) {
        sub->engine = std::move(e);
        *out = sub.release();
      }
      return;
    }
    tsr_comm_group_options_t o{};
    o.struct_size = sizeof(o);
    o.timeout_seconds = parent->timeout_seconds;
    std::string rendezvous;
    const std::string prefix = gloo_split_prefix(parent->engine.get(), &rendezvous);
    MpiComm mpi_comm;
    if (mpi_split(parent->engine.get(), ranks, n, &mpi_comm)) {  // MPI_Comm_split, on every process
      if (!mpi_comm) return;                                     // none of ours is listed
      for (int32_t i = 0; i < n; ++i)
        if (ranks[i] == parent->rank) o.rank = i;
      o.world_size = n;
    } else if (!prefix.empty()) {   // across processes: a new Gloo context among the listed ranks
      if (members.empty()) return;  // none of ours is listed (the prefix was still taken)
      for (int32_t i = 0; i < n; ++i)
        if (ranks[i] == parent->rank) o.rank = i;
      o.world_size = n;
      o.rendezvous = rendezvous.c_str();
    }
    if (members.empty()) return;  // none of ours is listed
    o.engine = parent->engine->name();  // a subgroup keeps its parent's engine
    o.devices = members.data();
    o.num_devices = static_cast<int32_t>(members.size());
    create_group(parent->runtime, &o, prefix, out, mpi_comm);
  });
}

void group_release(tsr_comm_group_t* g) {
  if (g) g->release();
}

tsr_status_t group_info(const tsr_comm_group_t* g, tsr_comm_group_info_t* out) {
  return guarded("group_info", [&] {
    if (!g || !out) fail(TSR_INVALID_ARGUMENT, "group_info: group and out are required");
    if (out->struct_size < offsetof(tsr_comm_group_info_t, timeout_seconds) + sizeof(double))
      fail(TSR_INVALID_ARGUMENT, "group_info: out->struct_size must be sizeof(tsr_comm_group_info_t)");
    out->world_size = g->world_size;
    out->rank = g->rank;
    out->num_local = static_cast<int32_t>(g->members.size());
    out->reserved = 0;
    out->engine = g->engine->name();
    out->timeout_seconds = g->timeout_seconds;
  });
}

// Issues one collective the way its engine completes (group.hpp, Engine::Mode). Without a work
// handle the call waits for the collective itself, except on stream engines, where the result
// is ordered on the members' streams as any kernel's is.
tsr_status_t collective(tsr_comm_group_t* g, const tsr_collective_args_t* a, tsr_comm_work_t** work) {
  if (work) *work = nullptr;
  auto state = std::make_shared<WorkState>();
  tsr_status_t st = guarded("collective", [&] {
    if (!g || !a) fail(TSR_INVALID_ARGUMENT, "collective: group and args are required");
    if (a->struct_size < offsetof(tsr_collective_args_t, outputs) + sizeof(a->outputs))
      fail(TSR_INVALID_ARGUMENT, "collective: args.struct_size " + std::to_string(a->struct_size) +
                                     " is too small (set it to sizeof(tsr_collective_args_t))");
    switch (g->engine->mode()) {
      case Engine::Mode::inline_:
        g->engine->run(*a);
        state->finish(TSR_OK, "");
        break;
      case Engine::Mode::worker:
        state = g->worker->enqueue(*a);
        break;
      case Engine::Mode::stream:
        state->completion = g->engine->run(*a);
        if (!state->completion) state->finish(TSR_OK, "");
        break;
    }
  });
  if (!work) {
    if (st || !g || g->engine->mode() == Engine::Mode::stream) return st;
    state->wait(-1);
    return state->code == TSR_OK ? nullptr : make_status(state->code, state->message);
  }
  if (st) {  // refused before it was issued: the work carries the refusal
    const tsr_code_t code = g_api->status_code(st);
    std::string message = g_api->status_message(st);
    g_api->status_free(st);
    state = std::make_shared<WorkState>();
    state->finish(code, std::move(message));
  }
  auto* w = new tsr_comm_work_s;
  w->group = g;
  if (g) g->retain();
  w->state = std::move(state);
  *work = w;
  return nullptr;
}

tsr_status_t work_wait(tsr_comm_work_t* w, double timeout_seconds) {
  if (!w) return make_status(TSR_INVALID_ARGUMENT, "work_wait: work is NULL");
  const double limit = timeout_seconds < 0 && w->group ? w->group->timeout_seconds : timeout_seconds;
  if (!w->state->wait(limit))
    return make_status(TSR_DEADLINE_EXCEEDED,
                       "work_wait: the collective did not complete within " + std::to_string(limit) + " s");
  std::lock_guard<std::mutex> lock(w->state->mu);
  return w->state->code == TSR_OK ? nullptr : make_status(w->state->code, w->state->message);
}

tsr_status_t work_query(tsr_comm_work_t* w, int32_t* done) {
  if (!w || !done) return make_status(TSR_INVALID_ARGUMENT, "work_query: work and done are required");
  *done = w->state->query() ? 1 : 0;
  return nullptr;
}

void work_release(tsr_comm_work_t* w) { delete w; }

const tsr_collectives_t kCollectives = {sizeof(tsr_collectives_t),
                                        0,
                                        group_create,
                                        group_split,
                                        group_release,
                                        group_info,
                                        collective,
                                        work_wait,
                                        work_query,
                                        work_release};

void init(tsr::Registrar& r) {
  g_api = r.api();
  tsr::set_api(g_api);  // the ring engine works through this plugin's copy of the SDK
  r.extension(TSR_COLLECTIVES_EXTENSION, &kCollectives);
}

}  // namespace
}  // namespace fabric

TSR_DEFINE_PLUGIN("fabric", TSR_FABRIC_VERSION,
                  "collectives over device groups (in-process, ring, Gloo, MPI and NCCL engines)", nullptr, fabric::init,
                  nullptr)
