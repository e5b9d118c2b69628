// Device memory allocators inside the core: the interface the runtime uses per device, and the
// device-agnostic caching allocator that sits over a backend's raw allocator.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "tessera/api.h"

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
// Keys may be prefixed by a device type name, "cuda.limit_mb:1024", to apply to one type.
struct AllocConf {
  std::string allocator;  // "" = default
  size_t max_split_size = SIZE_MAX;
  size_t limit_bytes = 0;  // 0 = no cap
  double gc_threshold = 0.0;
  size_t roundup_bytes = 512;
};

// Parses `text` for device type `type_name`; a malformed entry is an INVALID_ARGUMENT status
// naming the key. Unknown keys are errors too (a typo must not silently do nothing).
tsr_status_t parse_alloc_conf(const std::string& text, const std::string& type_name,
                              AllocConf* out);

// One device's allocator as the runtime sees it. Thread-safe.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // nbytes may be 0 (returns a non-null unique pointer-sized dummy is NOT required: returns
  // nullptr with OK). On failure returns a status; *out untouched.
  virtual tsr_status_t allocate(size_t nbytes, void** out) = 0;
  // ptr came from allocate() of this allocator (nullptr is a no-op).
  virtual void deallocate(void* ptr) = 0;
  virtual void stats(tsr_memory_stats_t* out) = 0;
  // JSON: {"device": "...", "allocator": "...", "segments": [{"address":..,"size":..,
  //        "blocks":[{"address":..,"size":..,"requested":..,"state":"active|inactive"}]}]}
  virtual std::string snapshot_json() = 0;
  // Returns every wholly free cached segment to the raw allocator.
  virtual void empty_cache() = 0;
};

// The core's caching allocator over `raw` (borrowed; outlives this object) for `device`.
// Size classes: requests <= 1 MiB come from 2 MiB "small" segments, larger ones from
// "large" segments (requests < 10 MiB get 20 MiB segments, bigger get their own rounded to
// 2 MiB). Free blocks are kept per pool ordered by (size, address); a block is split when the
// remainder is worth keeping and merged with free neighbours on free. On raw OOM it frees the
// cache and retries once; then returns RESOURCE_EXHAUSTED with requested / allocated /
// reserved / limit numbers and the device in the message.
std::unique_ptr<DeviceAllocator> make_caching_allocator(const tsr_raw_allocator_t* raw,
                                                        tsr_device_t device,
                                                        std::string device_name,
                                                        const AllocConf& conf);

// Passes straight through to `raw` (for allocators that cache themselves, or "native"),
// still keeping stats.
std::unique_ptr<DeviceAllocator> make_passthrough_allocator(const tsr_raw_allocator_t* raw,
                                                            tsr_device_t device,
                                                            std::string device_name,
                                                            const AllocConf& conf);

}  // namespace tsr::core
