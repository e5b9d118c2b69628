// Raw allocators of the cuda device type:
//  - "cuda" (registered first, so it is the default): cudaMalloc / cudaFree under the core's
//    caching allocator, which does the caching, splitting, stream-ordered reuse, stats and the
//    memory fraction cap. cudaFree synchronizes the device; the caching allocator calls it only
//    from empty_cache and its out-of-memory retry.
//  - "cuda_async" (TESSERA_ALLOC_CONF "cuda.allocator:cuda_async"): cudaMallocAsync /
//    cudaFreeAsync on the device's default memory pool, ordered on the tensor's stream; the
//    driver pool caches by itself (TSR_ALLOCATOR_CACHES_ITSELF), so the core only counts.
// Out of memory is RESOURCE_EXHAUSTED with the device's free and total memory in the message;
// the (non-sticky) CUDA error is cleared so that the next kernel launch check does not see it.
#include <cinttypes>
#include <cstdio>
#include <cstdint>
#include <utility>

#include "device_internal.hpp"

namespace tsr::cuda {
namespace {

std::string bytes_text(uint64_t n) {
  char buf[64];
  if (n >= (uint64_t(1) << 30))
    std::snprintf(buf, sizeof(buf), "%" PRIu64 " bytes (%.2f GiB)", n, double(n) / double(uint64_t(1) << 30));
  else
    std::snprintf(buf, sizeof(buf), "%" PRIu64 " bytes (%.2f MiB)", n, double(n) / double(uint64_t(1) << 20));
  return buf;
}

[[noreturn]] void out_of_memory(int dev, size_t nbytes, const char* call) {
  (void)cudaGetLastError();
  size_t free_b = 0, total_b = 0;
  std::string mem;
  if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess)
    mem = "; the device has " + bytes_text(free_b) + " free of " + bytes_text(total_b);
  else
    (void)cudaGetLastError();
  fail(TSR_RESOURCE_EXHAUSTED, "cuda:", dev, ": ", call, " of ", bytes_text(nbytes), " failed: out of memory", mem);
}

// cudaFree is not allowed while a stream of the device captures a graph (it synchronizes); a
// free that arrives then is deferred until the next allocator call outside a capture.
std::mutex g_deferred_mu;
std::vector<std::pair<int, void*>>* g_deferred = nullptr;  // leaked (see device_internal.hpp)

void free_deferred() {
  std::vector<std::pair<int, void*>> todo;
  {
    std::lock_guard<std::mutex> lock(g_deferred_mu);
    if (!g_deferred || g_deferred->empty()) return;
    std::vector<std::pair<int, void*>> keep;
    for (auto& e : *g_deferred) (device_is_capturing(e.first) ? keep : todo).push_back(e);
    g_deferred->swap(keep);
  }
  for (auto& e : todo) {
    try {
      DeviceGuard guard(e.first);
      (void)cudaFree(e.second);
    } catch (...) {
    }
  }
}

tsr_status_t cuda_alloc(void*, tsr_device_t device, size_t nbytes, void** out) {
  return guarded("cuda allocator", [&] {
    const int dev = device.index;
    check_device_index(dev, "cuda allocator");
    free_deferred();
    DeviceGuard guard(dev);
    void* p = nullptr;
    cudaError_t err;
    if (device_is_capturing(dev)) {
      RelaxedCaptureMode relaxed;  // a pool growing during a capture (see device_internal.hpp)
      err = cudaMalloc(&p, nbytes);
    } else {
      err = cudaMalloc(&p, nbytes);
    }
    if (err == cudaErrorMemoryAllocation) out_of_memory(dev, nbytes, "cudaMalloc");
    if (err != cudaSuccess) throw_cuda_error(err, "cuda allocator", "cudaMalloc", dev);
    *out = p;
  });
}

void cuda_free(void*, tsr_device_t device, void* ptr, size_t) {
  if (!ptr) return;
  try {
    const int dev = device.index;
    check_device_index(dev, "cuda allocator");
    if (device_is_capturing(dev)) {
      std::lock_guard<std::mutex> lock(g_deferred_mu);
      if (!g_deferred) g_deferred = new std::vector<std::pair<int, void*>>();
      g_deferred->emplace_back(dev, ptr);
      return;
    }
    DeviceGuard guard(dev);
    if (cudaFree(ptr) != cudaSuccess) (void)cudaGetLastError();  // nothing to report to (void)
  } catch (...) {
  }
}

// ---- cuda_async ------------------------------------------------------------------------------

std::mutex g_pool_mu;
std::vector<bool>* g_pool_ready = nullptr;  // per device: release threshold set

// The default pool trims itself back to 0 bytes at every synchronization unless told to keep
// memory: keep everything (as PyTorch's cudaMallocAsync backend does); empty_cache is then the
// caller's business (cudaMemPoolTrimTo is not reachable through a raw allocator).
void prepare_pool(int dev) {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (!g_pool_ready) g_pool_ready = new std::vector<bool>(static_cast<size_t>(device_count()), false);
  if ((*g_pool_ready)[static_cast<size_t>(dev)]) return;
  cudaMemPool_t pool = nullptr;
  TSR_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev), "cuda_async allocator", dev);
  uint64_t threshold = UINT64_MAX;
  TSR_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold), "cuda_async allocator",
                 dev);
  (*g_pool_ready)[static_cast<size_t>(dev)] = true;
}

tsr_status_t async_alloc_on(tsr_device_t device, size_t nbytes, cudaStream_t s, bool wait, void** out) {
  return guarded("cuda_async allocator", [&] {
    const int dev = device.index;
    check_device_index(dev, "cuda_async allocator");
    DeviceGuard guard(dev);
    prepare_pool(dev);
    void* p = nullptr;
    const cudaError_t err = cudaMallocAsync(&p, nbytes, s);
    if (err == cudaErrorMemoryAllocation) out_of_memory(dev, nbytes, "cudaMallocAsync");
    if (err != cudaSuccess) throw_cuda_error(err, "cuda_async allocator", "cudaMallocAsync", dev);
    if (wait) {
      const cudaError_t e = cudaStreamSynchronize(s);
      if (e != cudaSuccess) {
        (void)cudaFreeAsync(p, s);
        throw_cuda_error(e, "cuda_async allocator", "cudaStreamSynchronize", dev);
      }
    }
    *out = p;
  });
}

tsr_status_t cuda_async_alloc_async(void*, tsr_device_t device, size_t nbytes, tsr_stream_t* stream, void** out) {
  return async_alloc_on(device, nbytes, as_cuda(stream), false, out);
}

void cuda_async_free_async(void*, tsr_device_t device, void* ptr, size_t, tsr_stream_t* stream) {
  if (!ptr) return;
  try {
    DeviceGuard guard(device.index);
    if (cudaFreeAsync(ptr, as_cuda(stream)) != cudaSuccess) (void)cudaGetLastError();
  } catch (...) {
  }
}

// Without a stream (a core that does not call the stream-ordered entry points): allocate on the
// legacy stream and wait, so that work on any (non-blocking) stream may use the memory; free
// after the device is idle.
tsr_status_t cuda_async_alloc(void*, tsr_device_t device, size_t nbytes, void** out) {
  return async_alloc_on(device, nbytes, nullptr, true, out);
}

void cuda_async_free(void*, tsr_device_t device, void* ptr, size_t) {
  if (!ptr) return;
  try {
    DeviceGuard guard(device.index);
    if (!device_is_capturing(device.index)) (void)cudaDeviceSynchronize();
    if (cudaFreeAsync(ptr, nullptr) != cudaSuccess) (void)cudaGetLastError();
  } catch (...) {
  }
}

}  // namespace

void register_allocators(Registrar& r, int32_t type) {
  tsr_raw_allocator_t a{};
  a.struct_size = TSR_STRUCT_SIZE(tsr_raw_allocator_t);
  a.name = "cuda";
  a.device_type = type;
  a.flags = 0;
  a.alloc = &cuda_alloc;
  a.free = &cuda_free;
  r.allocator(a);

  tsr_raw_allocator_t b{};
  b.struct_size = TSR_STRUCT_SIZE(tsr_raw_allocator_t);
  b.name = "cuda_async";
  b.device_type = type;
  b.flags = TSR_ALLOCATOR_CACHES_ITSELF;
  b.alloc = &cuda_async_alloc;
  b.free = &cuda_async_free;
  b.alloc_async = &cuda_async_alloc_async;
  b.free_async = &cuda_async_free_async;
  r.allocator(b);
}

}  // namespace tsr::cuda
