// Tessera SDK: collectives over a group of devices, the C++ face of the tessera.collectives
// extension (abi/tessera/ext_collectives.h) that the fabric backend publishes.
//
//   tsr::distributed::DeviceGroup g({tsr::Device::cpu(0), tsr::Device::cpu(1)});
//   g.all_reduce({grad0, grad1}, tsr::distributed::ReduceOp::Avg).wait();
//
//   auto pg = tsr::distributed::init_process_group();   // process_group.hpp: one device per process
//   pg.all_reduce({grad}).wait();
//
// One tensor per member of this process, in rank order, on that member's device, contiguous.
// Errors are tsr::Error (the fabric backend's status: mismatched dtypes or shapes name both
// ranks). A Work is the handle of an issued collective: wait() rethrows its failure; the
// tensors must stay alive and untouched until then. A group is used by one thread at a time.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/ext_collectives.h"
#include "tessera/tessera.hpp"

namespace tsr::distributed {

enum class ReduceOp : int {
  Sum = TSR_REDUCE_SUM,
  Avg = TSR_REDUCE_AVG,
  Max = TSR_REDUCE_MAX,
  Min = TSR_REDUCE_MIN,
  Prod = TSR_REDUCE_PROD
};

namespace detail {
inline const tsr_collectives_t* collectives(tsr_runtime_t* rt) {
  auto* c = static_cast<const tsr_collectives_t*>(api()->get_extension(rt, TSR_COLLECTIVES_EXTENSION));
  if (!c)
    throw Error(TSR_UNIMPLEMENTED,
                "collectives: no backend publishes " TSR_COLLECTIVES_EXTENSION
                " (the fabric backend is not loaded; `tessera info` lists the plugins)");
  return c;
}
}  // namespace detail

// An issued collective. Move-only. It holds references to its tensors until it completes, and
// destroying it waits for completion (ignoring the outcome): across processes a collective runs
// on the group's communication thread (abi/tessera/ext_collectives.h), so a discarded Work must
// not let the tensors go while they are in use. Call wait() to see the outcome.
class Work {
 public:
  Work() = default;
  Work(const tsr_collectives_t* c, tsr_comm_work_t* w, std::vector<Tensor> keep = {})
      : c_(c), w_(w), keep_(std::move(keep)) {}
  Work(Work&& o) noexcept : c_(o.c_), w_(std::exchange(o.w_, nullptr)), keep_(std::move(o.keep_)) {}
  Work& operator=(Work&& o) noexcept {
    std::swap(c_, o.c_);
    std::swap(w_, o.w_);
    std::swap(keep_, o.keep_);
    return *this;
  }
  Work(const Work&) = delete;
  Work& operator=(const Work&) = delete;
  ~Work() {
    if (!w_) return;
    if (tsr_status_t st = c_->work_wait(w_, -1)) api()->status_free(st);
    c_->work_release(w_);
  }
  // Waits (timeout_s < 0: the group's timeout) and throws the collective's failure, if any.
  void wait(double timeout_s = -1) const {
    if (w_) check(c_->work_wait(w_, timeout_s));
  }
  bool done() const {
    int32_t d = 1;
    if (w_) check(c_->work_query(w_, &d));
    return d != 0;
  }

 private:
  const tsr_collectives_t* c_ = nullptr;
  tsr_comm_work_t* w_ = nullptr;
  std::vector<Tensor> keep_;  // the collective's tensors, alive while it may still use them
};

// A group over devices of this process (ranks 0..n-1 in the order given), or, with join(), this
// process's one device in a group across processes.
class DeviceGroup {
 public:
  // This process is `rank` of `world_size`, its member on `device`; the processes meet at
  // `rendezvous` ("file:///shared/dir"). Blocks until every rank has joined (or the timeout).
  static DeviceGroup join(Device device, int rank, int world_size, const std::string& rendezvous,
                          double timeout_s = 0, const char* engine = nullptr) {
    tsr_runtime_t* rt = runtime();
    const tsr_collectives_t* c = detail::collectives(rt);
    tsr_comm_group_options_t o{};
    o.struct_size = sizeof(o);
    o.devices = &device.d;
    o.num_devices = 1;
    o.rank = rank;
    o.world_size = world_size;
    o.rendezvous = rendezvous.c_str();
    o.engine = engine;
    o.timeout_seconds = timeout_s;
    tsr_comm_group_t* g = nullptr;
    check(c->group_create(rt, &o, &g));
    return DeviceGroup(rt, c, g);
  }

  explicit DeviceGroup(const std::vector<Device>& devices, double timeout_s = 0, const char* engine = nullptr)
      : rt_(runtime()), c_(detail::collectives(rt_)) {
    std::vector<tsr_device_t> ds;
    for (const Device& d : devices) ds.push_back(d.d);
    tsr_comm_group_options_t o{};
    o.struct_size = sizeof(o);
    o.devices = ds.data();
    o.num_devices = static_cast<int32_t>(ds.size());
    o.engine = engine;
    o.timeout_seconds = timeout_s;
    check(c_->group_create(rt_, &o, &g_));
  }
  DeviceGroup(DeviceGroup&& o) noexcept : rt_(o.rt_), c_(o.c_), g_(std::exchange(o.g_, nullptr)) {}
  DeviceGroup& operator=(DeviceGroup&& o) noexcept {
    std::swap(rt_, o.rt_);
    std::swap(c_, o.c_);
    std::swap(g_, o.g_);
    return *this;
  }
  DeviceGroup(const DeviceGroup&) = delete;
  DeviceGroup& operator=(const DeviceGroup&) = delete;
  ~DeviceGroup() {
    if (g_) c_->group_release(g_);
  }

  tsr_comm_group_info_t info() const {
    tsr_comm_group_info_t i{};
    i.struct_size = sizeof(i);
    check(c_->group_info(g_, &i));
    return i;
  }
  int size() const { return info().world_size; }

  // In place: every tensor becomes op over all of them.
  Work all_reduce(const std::vector<Tensor>& ts, ReduceOp op = ReduceOp::Sum) const {
    return issue(TSR_COLLECTIVE_ALL_REDUCE, op, 0, ts, {});
  }
  // In place on the root only.
  Work reduce(const std::vector<Tensor>& ts, int root, ReduceOp op = ReduceOp::Sum) const {
    return issue(TSR_COLLECTIVE_REDUCE, op, root, ts, {});
  }
  Work broadcast(const std::vector<Tensor>& ts, int root) const {
    return issue(TSR_COLLECTIVE_BROADCAST, ReduceOp::Sum, root, ts, {});
  }
  // outs[i] (world_size x the input's elements) := the inputs concatenated in rank order.
  Work all_gather(const std::vector<Tensor>& in, const std::vector<Tensor>& outs) const {
    return issue(TSR_COLLECTIVE_ALL_GATHER, ReduceOp::Sum, 0, in, outs);
  }
  // outs[i] := op over the inputs' slice number i (inputs have world_size x outs' elements).
  Work reduce_scatter(const std::vector<Tensor>& in, const std::vector<Tensor>& outs,
                      ReduceOp op = ReduceOp::Sum) const {
    return issue(TSR_COLLECTIVE_REDUCE_SCATTER, op, 0, in, outs);
  }
  // outs[i] slice j := inputs[j] slice i.
  Work all_to_all(const std::vector<Tensor>& in, const std::vector<Tensor>& outs) const {
    return issue(TSR_COLLECTIVE_ALL_TO_ALL, ReduceOp::Sum, 0, in, outs);
  }
  Work barrier() const { return issue(TSR_COLLECTIVE_BARRIER, ReduceOp::Sum, 0, {}, {}); }
  // Point to point across processes: the k-th send to `peer` meets peer's k-th recv from here.
  Work send(const Tensor& t, int peer) const { return issue(TSR_COLLECTIVE_SEND, ReduceOp::Sum, peer, {t}, {}); }
  Work recv(const Tensor& t, int peer) const { return issue(TSR_COLLECTIVE_RECV, ReduceOp::Sum, peer, {t}, {t}); }
  int rank() const { return info().rank; }
  // A subgroup of these ranks (ascending), renumbered 0..n-1.
  DeviceGroup split(const std::vector<int32_t>& ranks) const {
    tsr_comm_group_t* sub = nullptr;
    check(c_->group_split(g_, ranks.data(), static_cast<int32_t>(ranks.size()), &sub));
    return DeviceGroup(rt_, c_, sub);
  }

 private:
  DeviceGroup(tsr_runtime_t* rt, const tsr_collectives_t* c, tsr_comm_group_t* g) : rt_(rt), c_(c), g_(g) {}

  Work issue(tsr_collective_kind_t kind, ReduceOp op, int root, const std::vector<Tensor>& in,
             const std::vector<Tensor>& outs) const {
    std::vector<tsr_tensor_t*> ih, oh;
    for (const Tensor& t : in) ih.push_back(t.get());
    for (const Tensor& t : outs) oh.push_back(t.get());
    tsr_collective_args_t a{};
    a.struct_size = sizeof(a);
    a.kind = kind;
    a.op = static_cast<tsr_reduce_op_t>(op);
    a.root = root;
    a.num_tensors = kind == TSR_COLLECTIVE_BARRIER ? 0 : static_cast<int32_t>(ih.size());
    a.inputs = ih.data();
    a.outputs = oh.empty() ? nullptr : oh.data();
    tsr_comm_work_t* w = nullptr;
    check(c_->collective(g_, &a, &w));
    std::vector<Tensor> keep(in);
    keep.insert(keep.end(), outs.begin(), outs.end());
    return Work(c_, w, std::move(keep));
  }

  tsr_runtime_t* rt_ = nullptr;
  const tsr_collectives_t* c_ = nullptr;
  tsr_comm_group_t* g_ = nullptr;
};

}  // namespace tsr::distributed
