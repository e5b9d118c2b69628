// C++ wrappers over the ABI 1.2 device, allocator, precision, from_blob and graph-capture
// entries (header-only; see abi/tessera/api.h and abi/tessera/ext_graphs.h).
//
//   tsr::DeviceProperties p = tsr::get_device_properties("cuda:0");
//   { tsr::DeviceGuard g("cuda:1"); ... }          // current device index for the scope
//   tsr::set_allow_tf32_matmul(true);
//   tsr::set_memory_fraction(0.5, "cuda:0");
//   tsr::Tensor t = tsr::from_blob(ptr, {2, 3}, TSR_F32, "cpu", [](void* p) { free(p); });
//   tsr::Graph g("cuda:0");                        // throws without "tessera.graphs.cuda"
//   { tsr::GraphCapture cap(g, stream); step(); }  // capture on `stream` (made current)
//   g.replay(stream);
//
// Everything acts on the current runtime (tsr::runtime()). Errors throw tsr::Error.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/ext_graphs.h"
#include "tessera/stream.hpp"
#include "tessera/tessera.hpp"

namespace tsr {

// ---- devices -----------------------------------------------------------------------------------

struct DeviceProperties {
  std::string name;
  int32_t compute_major = 0, compute_minor = 0;
  int64_t total_memory = 0;  // bytes; 0 = unknown / host memory
  int32_t multiprocessor_count = 0;
  int32_t max_threads_per_block = 0;
  int32_t warp_size = 0;
  int32_t async_engines = 0;
  int64_t l2_cache_bytes = 0;
  bool integrated = false;
  tsr_device_properties_t raw{};  // everything the core reported
};

inline DeviceProperties get_device_properties(Device device) {
  DeviceProperties p;
  p.raw.struct_size = sizeof(p.raw);
  check(api()->device_properties(runtime(), device.d, &p.raw));
  p.name = p.raw.name;
  p.compute_major = p.raw.compute_major;
  p.compute_minor = p.raw.compute_minor;
  p.total_memory = p.raw.total_memory_bytes;
  p.multiprocessor_count = p.raw.multiprocessor_count;
  p.max_threads_per_block = p.raw.max_threads_per_block;
  p.warp_size = p.raw.warp_size;
  p.async_engines = p.raw.async_engines;
  p.l2_cache_bytes = p.raw.l2_cache_bytes;
  p.integrated = p.raw.integrated != 0;
  return p;
}

// The calling thread's current device of a type ("cuda" = "cuda:<this>"), default 0.
inline Device current_device(int32_t type) {
  int32_t index = 0;
  check(api()->device_get_current(runtime(), type, &index));
  return Device(tsr_device_t{type, index});
}
inline void set_current_device(Device device) { check(api()->device_set_current(runtime(), device.d)); }

// Makes `device` the current device of its type for the guard's scope (c10::DeviceGuard).
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device) : rt_(runtime()), prev_(device.d) {
    check(api()->device_get_current(rt_, device.d.type, &prev_.index));
    check(api()->device_set_current(rt_, device.d));
  }
  ~DeviceGuard() {
    tsr_status_t st = api()->device_set_current(rt_, prev_);
    if (st) api()->status_free(st);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  tsr_runtime_t* rt_;
  tsr_device_t prev_;
};

// ---- allocator ---------------------------------------------------------------------------------

// Caps the caching allocator of `device` at fraction (0, 1] of its total memory.
inline void set_memory_fraction(double fraction, Device device) {
  check(api()->memory_set_fraction(runtime(), device.d, fraction));
}

// ---- precision (PyTorch: torch.backends.cuda.matmul.allow_tf32 and friends) --------------------

inline void set_precision(tsr_precision_setting_t s, bool enabled) {
  check(api()->precision_set(runtime(), s, enabled ? 1 : 0));
}
inline bool precision(tsr_precision_setting_t s) { return api()->precision_get(runtime(), s) != 0; }
inline void set_allow_tf32_matmul(bool on) { set_precision(TSR_PRECISION_MATMUL_ALLOW_TF32, on); }
inline bool allow_tf32_matmul() { return precision(TSR_PRECISION_MATMUL_ALLOW_TF32); }
inline void set_allow_tf32_conv(bool on) { set_precision(TSR_PRECISION_CONV_ALLOW_TF32, on); }
inline bool allow_tf32_conv() { return precision(TSR_PRECISION_CONV_ALLOW_TF32); }
inline void set_allow_fp16_reduced_precision_reduction(bool on) {
  set_precision(TSR_PRECISION_MATMUL_F16_REDUCED_REDUCTION, on);
}
inline bool allow_fp16_reduced_precision_reduction() { return precision(TSR_PRECISION_MATMUL_F16_REDUCED_REDUCTION); }
inline void set_allow_bf16_reduced_precision_reduction(bool on) {
  set_precision(TSR_PRECISION_MATMUL_BF16_REDUCED_REDUCTION, on);
}
inline bool allow_bf16_reduced_precision_reduction() { return precision(TSR_PRECISION_MATMUL_BF16_REDUCED_REDUCTION); }

// ---- tensors over foreign memory ---------------------------------------------------------------

namespace detail {
inline void from_blob_thunk(void* ctx, void* data) {
  auto* f = static_cast<std::function<void(void*)>*>(ctx);
  try {
    (*f)(data);
  } catch (...) {  // a deleter runs inside a release: nowhere to report
  }
  delete f;
}
}  // namespace detail

// A tensor over `data` (first element, on `device`), contiguous unless strides (in elements)
// are given. `deleter(data)` runs once when the last view is released; without one, the memory
// must outlive every view. If this throws, the deleter is not called.
inline Tensor from_blob(void* data, const std::vector<int64_t>& sizes, tsr_dtype_t dtype, Device device,
                        std::function<void(void*)> deleter = {}, const std::vector<int64_t>& strides = {}) {
  if (!strides.empty() && strides.size() != sizes.size())
    throw Error(TSR_INVALID_ARGUMENT, "from_blob: " + std::to_string(strides.size()) + " strides for " +
                                          std::to_string(sizes.size()) + " dimensions");
  std::function<void(void*)>* ctx = deleter ? new std::function<void(void*)>(std::move(deleter)) : nullptr;
  tsr_tensor_t* t = nullptr;
  tsr_status_t st = api()->tensor_from_blob(runtime(), data, static_cast<int32_t>(sizes.size()), sizes.data(),
                                            strides.empty() ? nullptr : strides.data(), dtype, device.d,
                                            ctx ? &detail::from_blob_thunk : nullptr, ctx, &t);
  if (st) {
    delete ctx;
    check(st);
  }
  return Tensor::adopt(t);
}

// ---- graph capture (extension "tessera.graphs.<device type>") ----------------------------------

// One captured graph. Construction throws tsr::Error(UNIMPLEMENTED) when the device's backend
// publishes no graph extension. Move-only; releases the graph on destruction.
class Graph {
 public:
  explicit Graph(Device device) : rt_(runtime()), dev_(device) {
    const char* type = api()->device_type_name(rt_, dev_.d.type);
    const std::string name = std::string(TSR_GRAPHS_EXTENSION_PREFIX) + (type ? type : "?");
    ext_ = static_cast<const tsr_graphs_t*>(api()->get_extension(rt_, name.c_str()));
    if (!ext_)
      throw Error(TSR_UNIMPLEMENTED, "tsr::Graph: graph capture needs the extension '" + name +
                                         "', which no loaded plugin provides for " + dev_.str(rt_));
  }
  Graph(Graph&& o) noexcept : rt_(o.rt_), dev_(o.dev_), ext_(o.ext_), g_(o.g_) { o.g_ = nullptr; }
  Graph& operator=(Graph&& o) noexcept {
    if (this != &o) {
      reset();
      rt_ = o.rt_;
      dev_ = o.dev_;
      ext_ = o.ext_;
      g_ = o.g_;
      o.g_ = nullptr;
    }
    return *this;
  }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph() { reset(); }

  // Starts capturing `s` (not the default stream). pool: 0 = a new private memory pool, or
  // another graph's pool() to share its memory. Make `s` current on this thread (GraphCapture
  // does) so that ops are recorded on it.
  void capture_begin(const Stream& s, uint64_t pool = 0) {
    reset();
    check(ext_->capture_begin(rt_, dev_.d, s.get(), pool));
  }
  // Ends the capture of `s`; errors during capture are reported here (and no graph is made).
  void capture_end(const Stream& s) {
    tsr_graph_t* g = nullptr;
    check(ext_->capture_end(rt_, dev_.d, s.get(), &g));
    g_ = g;
  }
  bool is_capturing(const Stream& s) const { return ext_->is_capturing(rt_, dev_.d, s.get()) != 0; }
  void replay(const Stream& s) const { check(ext_->graph_replay(need(), s.get())); }
  void replay() const { check(ext_->graph_replay(need(), nullptr)); }
  uint64_t pool() const { return ext_->graph_pool(need()); }
  int64_t node_count() const { return ext_->graph_node_count(need()); }
  bool captured() const { return g_ != nullptr; }
  tsr_graph_t* get() const { return g_; }

 private:
  tsr_graph_t* need() const {
    if (!g_) throw Error(TSR_FAILED_PRECONDITION, "tsr::Graph: nothing has been captured");
    return g_;
  }
  void reset() {
    if (g_) ext_->graph_release(g_);
    g_ = nullptr;
  }
  tsr_runtime_t* rt_;
  Device dev_;
  const tsr_graphs_t* ext_ = nullptr;
  tsr_graph_t* g_ = nullptr;
};

// Captures into `g` for the scope: begins the capture, makes `s` current, and on end() (or
// destruction) ends it. Call end() to see capture errors; the destructor swallows them.
class GraphCapture {
 public:
  GraphCapture(Graph& g, const Stream& s, uint64_t pool = 0) : g_(g), s_(s) {
    g_.capture_begin(s_, pool);
    guard_ = new StreamGuard(s_);
  }
  void end() {
    if (!guard_) return;
    delete guard_;
    guard_ = nullptr;
    g_.capture_end(s_);
  }
  ~GraphCapture() {
    try {
      end();
    } catch (...) {
    }
  }
  GraphCapture(const GraphCapture&) = delete;
  GraphCapture& operator=(const GraphCapture&) = delete;

 private:
  Graph& g_;
  const Stream& s_;
  StreamGuard* guard_ = nullptr;
};

}  // namespace tsr
