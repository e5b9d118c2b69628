// @NAME@: the device type, its raw allocator and the plugin entry point.
//
// This backend's "device memory" is host memory, so copies are memcpy and kernels are plain
// loops. A real accelerator replaces three things: the allocator (device malloc/free), the copy
// callback (host<->device and device<->device transfers) and the kernels' loops; the
// registration below stays the same.
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "kernels.hpp"
#include "tessera/plugin.hpp"

#ifndef @NAME_UPPER@_VERSION
#define @NAME_UPPER@_VERSION "0.1.0"
#endif

namespace {

constexpr int32_t kDeviceCount = 1;
const tsr_api_t* g_api = nullptr;  // for statuses created outside a kernel call

// Mandatory: the core moves bytes between this device and the host (tensor.to(), item(), printing)
// only through this callback. One side is a @NAME@ device, the other @NAME@, cpu or host memory.
tsr_status_t device_copy(void*, tsr_device_t, void* dst, tsr_device_t, const void* src, size_t nbytes,
                         tsr_stream_t*) {
  if (nbytes) std::memmove(dst, src, nbytes);
  return nullptr;
}

void device_describe(void*, tsr_device_t d, char* buf, size_t len) {
  std::snprintf(buf, len, "@NAME@:%d (host memory)", d.index);
}

// Mandatory: without a raw allocator every op on the device fails (nothing can be allocated).
// The core's caching allocator sits above this one, so it is called rarely and may be slow.
// Contract: at least 64-byte alignment; out of memory is a RESOURCE_EXHAUSTED status, never abort.
tsr_status_t device_alloc(void*, tsr_device_t, size_t nbytes, void** out) {
  *out = std::aligned_alloc(64, (nbytes + 63) / 64 * 64);
  if (!*out)
    return g_api->status_create(TSR_RESOURCE_EXHAUSTED, "@NAME@: out of memory allocating a block");
  return nullptr;
}

void device_free(void*, tsr_device_t, void* p, size_t) { std::free(p); }

void plugin_init(tsr::Registrar& r) {
  g_api = r.api();
  tsr_device_type_def_t dt{};
  dt.name = "@NAME@";
  dt.device_count = kDeviceCount;
  dt.copy = device_copy;
  dt.describe = device_describe;  // synchronize and streams are optional: this device is synchronous
  const int32_t type = r.device_type(dt);

  tsr_raw_allocator_t al{};
  al.name = "@NAME@_malloc";  // selectable as TESSERA_ALLOC_CONF=allocator:@NAME@_malloc
  al.device_type = type;
  al.alloc = device_alloc;
  al.free = device_free;
  r.allocator(al);

  @NAME@::register_memory_kernels(r, type);
  @NAME@::register_elementwise_kernels(r, type);
  @NAME@::register_reduce_kernels(r, type);
  @NAME@::register_matmul_kernels(r, type);
}

}  // namespace

// The plugin's only exported symbol. The name must equal the manifest's "name".
TSR_DEFINE_PLUGIN("@NAME@", @NAME_UPPER@_VERSION, "@NAME@ device backend (host memory)", nullptr, plugin_init,
                  nullptr)
