// Tessera SDK (vendor side): a device predicate on compute capability, for kernels that override
// another backend's generic kernels on some GPUs only (as sm100 overrides cuda's on 10.x).
//
//   static tsr::ComputeCapabilityGate gate;            // must outlive the plugin's kernels
//   gate.bind(r.api(), r.runtime(), /*major=*/10);     // in init
//   r.kernel("scaled_mm", "sm100::scaled_mm", cuda_type, mask, fn, /*priority=*/100,
//            tsr::ComputeCapabilityGate::predicate, &gate);
//
// The predicate reads the device's compute_major through the core (api->device_properties, i.e.
// the device type's own properties callback), so it works for any device type that reports
// one, including a test backend's fake devices, and needs no CUDA call of its own. The answer
// is cached per device index (a device's capability does not change while a runtime lives):
// after the first call the predicate is one relaxed atomic load, cheap enough for the dispatch
// path. Thread-safe; two threads racing on the first call both ask and store the same answer.
// A device whose properties cannot be read is treated as not matching (the generic kernel runs).
#pragma once

#include <atomic>
#include <cstdint>

#include "tessera/api.h"

namespace tsr {

class ComputeCapabilityGate {
 public:
  static constexpr int32_t kCachedDevices = 64;  // indices past this are asked every time

  ComputeCapabilityGate() = default;
  ComputeCapabilityGate(const ComputeCapabilityGate&) = delete;
  ComputeCapabilityGate& operator=(const ComputeCapabilityGate&) = delete;

  // Accept devices whose compute capability major is `major` (any minor). Call in init, before
  // the kernels are used; binding again (a new runtime) forgets the cached answers.
  void bind(const tsr_api_t* api, tsr_runtime_t* runtime, int32_t major) {
    api_ = api;
    runtime_ = runtime;
    major_ = major;
    for (auto& c : cache_) c.store(kUnknown, std::memory_order_relaxed);
  }
  int32_t major() const { return major_; }

  // Whether `device` has compute capability major_.x.
  bool accepts(tsr_device_t device) const {
    const bool cached = device.index >= 0 && device.index < kCachedDevices;
    if (cached) {
      const int8_t v = cache_[device.index].load(std::memory_order_relaxed);
      if (v != kUnknown) return v == kYes;
    }
    const bool yes = ask(device);
    if (cached) cache_[device.index].store(yes ? kYes : kNo, std::memory_order_relaxed);
    return yes;
  }

  // The tsr_device_predicate_fn_t to register, with the gate as the kernel's user_data.
  static int predicate(tsr_device_t device, void* user_data) {
    return user_data && static_cast<const ComputeCapabilityGate*>(user_data)->accepts(device) ? 1 : 0;
  }

 private:
  static constexpr int8_t kUnknown = 0, kYes = 1, kNo = 2;

  bool ask(tsr_device_t device) const {
    if (!api_ || !runtime_ || !TSR_HAS_FIELD(api_, tsr_api_t, device_properties) || !api_->device_properties) return false;
    tsr_device_properties_t p{};
    p.struct_size = TSR_STRUCT_SIZE(tsr_device_properties_t);
    if (tsr_status_t st = api_->device_properties(runtime_, device, &p)) {
      api_->status_free(st);
      return false;
    }
    return p.compute_major == major_;
  }

  const tsr_api_t* api_ = nullptr;
  tsr_runtime_t* runtime_ = nullptr;
  int32_t major_ = 0;
  mutable std::atomic<int8_t> cache_[kCachedDevices] = {};
};

}  // namespace tsr
