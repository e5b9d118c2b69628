// Device memory allocators inside the core: the interface the runtime uses per device, and the
// device-agnostic caching allocator that sits over a backend's raw allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/api.h"
#include "tessera/kernel.h"

namespace tsr::core {

// Parsed TESSERA_ALLOC_CONF, e.g. "allocator:caching,max_split_size_mb:64,limit_mb:512".
//   allocator:NAME               use the raw allocator registered under NAME for the device
//                                type ("caching" or unset: the core's caching allocator over the
//                                backend's default raw allocator; "native": no caching at all)
//   max_split_size_mb:N          blocks larger than this are never split (default: unlimited)
//   limit_mb:N                   cap on reserved bytes per device (OOM status beyond it)
//   garbage_collection_threshold:F  (0..1) when reserved exceeds F*limit, free cached
//                                unused segments before asking the raw allocator for more
//   roundup_bytes:N              allocation sizes are rounded up to a multiple of N (>= 64)
//   per_process_memory_fraction:F  (0 < F <= 1) cap on reserved bytes per device at F times
//                                the device's total memory (device_properties); ignored with
//                                a warning for devices that report no total memory
//   guard_bytes:N                debugging: N canary bytes (a multiple of 64) before and after
//                                every allocation, checked after every kernel that reads or
//                                writes the memory (a kernel that writes outside its tensors
//                                fails with DATA_LOSS naming the op, the kernel and the tensor)
//                                and when the memory is freed; 0 (default) = off
// Keys may be prefixed by a device type name, "cuda.limit_mb:1024", to apply to one type.
struct AllocConf {
  std::string allocator;  // "" = default
  size_t max_split_size = SIZE_MAX;
  size_t limit_bytes = 0;  // 0 = no cap
  double gc_threshold = 0.0;
  size_t roundup_bytes = 512;
  double memory_fraction = 0.0;  // 0 = not set
  size_t guard_bytes = 0;        // 0 = no guard mode
};

// Parses `text` for device type `type_name`; a malformed entry is an INVALID_ARGUMENT status
// naming the key. Unknown keys are errors too (a typo must not silently do nothing).
tsr_status_t parse_alloc_conf(const std::string& text, const std::string& type_name, AllocConf* out);
// The device type names of the "TYPE.key:value" entries of `text` (syntax already checked).
std::vector<std::string> alloc_conf_device_prefixes(const std::string& text);

// One device's allocator as the runtime sees it. Thread-safe.
//
// Streams: every allocation is made for a stream of the device (the calling thread's current
// stream, NULL = the default stream). The caching allocator reuses a freed block only for
// requests on the same stream, unless record_stream() marked it as used on other streams: then
// it becomes reusable once the work enqueued on those streams before the free has finished.
// Devices without streams always pass NULL.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // Set once by the runtime before any allocation (plugins/registrar.cpp), for plain host
  // memory that no debugging mode watches (the CPU device without guard_bytes): tensors of at
  // most TensorBlock::kInlineBytes then keep their data in their own block and never reach
  // allocate() (runtime/runtime.cpp new_tensor_trusted).
  bool small_tensors_inline = false;
  // nbytes may be 0 (returns nullptr with OK). On failure returns a status; *out untouched.
  virtual tsr_status_t allocate(size_t nbytes, tsr_stream_t* stream, void** out) = 0;
  tsr_status_t allocate(size_t nbytes, void** out) { return allocate(nbytes, nullptr, out); }
  // ptr came from allocate() of this allocator (nullptr is a no-op).
  virtual void deallocate(void* ptr) = 0;
  // The block at ptr (from allocate()) is also used by work on `stream` (PyTorch's
  // record_stream). No-op for the allocation's own stream and for devices without streams.
  virtual tsr_status_t record_stream(void* ptr, tsr_stream_t* stream) {
    (void)ptr;
    (void)stream;
    return nullptr;
  }
  // Caps reserved bytes at `bytes` (memory_set_fraction); `why` is quoted in OOM messages.
  virtual void set_limit(size_t bytes, const std::string& why) = 0;
  virtual void stats(tsr_memory_stats_t* out) = 0;
  // JSON: {"device": "...", "allocator": "...", ..., "segments": [{"address":..,"size":..,
  //        "stream":..,"private_pool":..,"blocks":[{"address":..,"size":..,"requested":..,
  //        "state":"active|inactive|pending_free"}]}]}
  virtual std::string snapshot_json() = 0;
  // Returns every wholly free cached segment to the raw allocator (after waiting for the
  // pending events of blocks freed with record_stream).
  virtual void empty_cache() = 0;
  // Guard mode (guard_bytes): what happened to the canaries around the allocation at ptr
  // (from allocate()), "" when they are intact or this allocator keeps none. Damaged
  // canaries are rewritten, so one overrun is reported once.
  virtual std::string guard_damage(const void* ptr) {
    (void)ptr;
    return {};
  }
  // Private memory pools (api.h memory_pool_*); only the caching allocator has them.
  virtual tsr_status_t pool_create(uint64_t* id) {
    (void)id;
    return no_pools();
  }
  virtual tsr_status_t pool_begin(uint64_t id, tsr_stream_t* stream) {
    (void)id;
    (void)stream;
    return no_pools();
  }
  virtual tsr_status_t pool_end(uint64_t id, tsr_stream_t* stream) {
    (void)id;
    (void)stream;
    return no_pools();
  }
  virtual tsr_status_t pool_release(uint64_t id) {
    (void)id;
    return no_pools();
  }

 protected:
  static tsr_status_t no_pools();
};

// The core's caching allocator over `raw` (borrowed; outlives this object) for `device`.
// Size classes: requests <= 1 MiB come from 2 MiB "small" segments, larger ones from
// "large" segments (requests < 10 MiB get 20 MiB segments, bigger get their own rounded to
// 2 MiB). Free blocks are kept per pool ordered by (size, address); a block is split when the
// remainder is worth keeping and merged with free neighbours on free. On raw OOM it frees the
// cache and retries once; then returns RESOURCE_EXHAUSTED with requested / allocated /
// reserved / limit numbers and the device in the message.
// `dev` (borrowed, may be null) is the device type, whose event callbacks implement
// record_stream; without stream callbacks record_stream is a no-op.
std::unique_ptr<DeviceAllocator> make_caching_allocator(const tsr_raw_allocator_t* raw, tsr_device_t device,
                                                        std::string device_name, const AllocConf& conf,
                                                        const tsr_device_type_def_t* dev = nullptr);

// Passes straight through to `raw` (for allocators that cache themselves, or "native"),
// still keeping stats. Uses the raw allocator's alloc_async/free_async when it has them (with
// the allocation's stream; record_stream then makes that stream wait for the other streams'
// work before free_async).
std::unique_ptr<DeviceAllocator> make_passthrough_allocator(const tsr_raw_allocator_t* raw, tsr_device_t device,
                                                            std::string device_name, const AllocConf& conf,
                                                            const tsr_device_type_def_t* dev = nullptr);

// Guard mode: wraps `inner` so that every allocation has conf.guard_bytes canary bytes on each
// side, written and read through `copy` (host <-> device, synchronous: the device type's copy
// followed by whatever the runtime does to finish a host copy). Costs two copies per
// allocation and per check: a debugging mode, for `tessera certify`.
using GuardCopyFn = std::function<tsr_status_t(bool to_device, void* device_ptr, void* host, size_t nbytes)>;
std::unique_ptr<DeviceAllocator> make_guard_allocator(std::unique_ptr<DeviceAllocator> inner, std::string device_name,
                                                      size_t guard_bytes, GuardCopyFn copy);

// True when the device type implements every stream and event callback (ABI 1.2).
bool device_has_streams(const tsr_device_type_def_t* def);

}  // namespace tsr::core
