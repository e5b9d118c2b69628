// "tessera.pinned_host": page-locked host memory with a caching allocator, as PyTorch's
// CachingHostAllocator. Blocks are cudaHostAlloc'ed (portable: every device sees them as pinned)
// in power-of-two sizes and kept after free. A host-to-device copy from a block is asynchronous
// and reads the block later, so the copy callback records an event on its stream for the block
// (pinned_record_use); a freed block is handed out again only once all its events completed.
// Device-to-host copies complete before the copy returns, so they need no event.
//
// Process-wide and never torn down (the plugin is not dlclosed; pinned memory dies with the
// process). Thread-safe: one mutex guards the cache.
#include <map>
#include <vector>

#include "device_internal.hpp"
#include "tessera/ext_pinned_host.h"

namespace tsr::cuda {
namespace {

struct Block {
  char* ptr = nullptr;
  size_t size = 0;
  bool in_use = false;
  std::vector<std::pair<int, cudaEvent_t>> events;  // (device, event) of copies using it
};

constexpr size_t kMinBlock = 512;

size_t round_up(size_t n) {
  size_t s = kMinBlock;
  while (s < n) {
    if (s > (SIZE_MAX >> 1)) return 0;  // overflow: caller reports
    s <<= 1;
  }
  return s;
}

class PinnedCache {
 public:
  void* alloc(size_t nbytes) {
    const size_t size = round_up(nbytes);
    if (size == 0) fail(TSR_RESOURCE_EXHAUSTED, "pinned host memory: ", nbytes, " bytes is too large");
    {
      std::lock_guard<std::mutex> lock(mu_);
      process_pending_locked();
      auto it = free_.find(size);
      if (it != free_.end()) {
        Block* b = it->second;
        free_.erase(it);
        b->in_use = true;
        return b->ptr;
      }
    }
    void* p = nullptr;
    RelaxedCaptureMode relaxed;  // a DataLoader thread may allocate while another thread captures
    cudaError_t err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    if (err == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      release_free_blocks();  // give cached page-locked memory back and try once more
      err = cudaHostAlloc(&p, size, cudaHostAllocPortable);
    }
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      fail(err == cudaErrorMemoryAllocation ? TSR_RESOURCE_EXHAUSTED : TSR_INTERNAL,
           "pinned host memory: cudaHostAlloc of ", size, " bytes failed: ", cudaGetErrorString(err));
    }
    auto* b = new Block();
    b->ptr = static_cast<char*>(p);
    b->size = size;
    b->in_use = true;
    std::lock_guard<std::mutex> lock(mu_);
    blocks_[reinterpret_cast<uintptr_t>(p)] = b;
    return p;
  }

  void free(void* p) {
    if (!p) return;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = blocks_.find(reinterpret_cast<uintptr_t>(p));
    if (it == blocks_.end() || !it->second->in_use) return;  // not ours / double free: ignore
    Block* b = it->second;
    b->in_use = false;
    if (b->events.empty())
      free_.emplace(b->size, b);
    else
      pending_.push_back(b);
  }

  bool record_use(const void* ptr, int device, cudaStream_t stream) {
    std::lock_guard<std::mutex> lock(mu_);
    Block* b = find_locked(ptr);
    if (!b || !b->in_use) return false;
    cudaEvent_t e = take_event_locked(device);
    const cudaError_t err = cudaEventRecord(e, stream);
    if (err != cudaSuccess) {
      (void)cudaGetLastError();
      (void)cudaEventDestroy(e);
      // Without the event the block could be reused under a pending copy: wait instead.
      (void)cudaStreamSynchronize(stream);
      (void)cudaGetLastError();
      return false;
    }
    b->events.emplace_back(device, e);
    return true;
  }

  bool contains(const void* ptr) {
    std::lock_guard<std::mutex> lock(mu_);
    return find_locked(ptr) != nullptr;
  }

 private:
  Block* find_locked(const void* ptr) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(ptr);
    auto it = blocks_.upper_bound(a);
    if (it == blocks_.begin()) return nullptr;
    --it;
    Block* b = it->second;
    return a < it->first + b->size ? b : nullptr;
  }

  cudaEvent_t take_event_locked(int device) {
    if (static_cast<size_t>(device) >= event_pool_.size()) event_pool_.resize(static_cast<size_t>(device) + 1);
    auto& pool = event_pool_[static_cast<size_t>(device)];
    if (!pool.empty()) {
      cudaEvent_t e = pool.back();
      pool.pop_back();
      return e;
    }
    DeviceGuard guard(device);  // an event belongs to the device current at creation
    cudaEvent_t e = nullptr;
    TSR_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "pinned host memory", device);
    return e;
  }

  // Moves freed blocks whose copies have all completed to the free lists.
  void process_pending_locked() {
    for (size_t i = 0; i < pending_.size();) {
      Block* b = pending_[i];
      auto& ev = b->events;
      for (size_t j = 0; j < ev.size();) {
        const cudaError_t q = cudaEventQuery(ev[j].second);
        if (q == cudaErrorNotReady) {
          (void)cudaGetLastError();
          ++j;
          continue;
        }
        if (q != cudaSuccess) (void)cudaGetLastError();  // a failed copy no longer reads the block
        if (static_cast<size_t>(ev[j].first) >= event_pool_.size())
          event_pool_.resize(static_cast<size_t>(ev[j].first) + 1);
        event_pool_[static_cast<size_t>(ev[j].first)].push_back(ev[j].second);
        ev[j] = ev.back();
        ev.pop_back();
      }
      if (ev.empty()) {
        free_.emplace(b->size, b);
        pending_[i] = pending_.back();
        pending_.pop_back();
      } else {
        ++i;
      }
    }
  }

  void release_free_blocks() {
    std::vector<Block*> drop;
    {
      std::lock_guard<std::mutex> lock(mu_);
      process_pending_locked();
      for (auto& f : free_) {
        drop.push_back(f.second);
        blocks_.erase(reinterpret_cast<uintptr_t>(f.second->ptr));
      }
      free_.clear();
    }
    for (Block* b : drop) {
      (void)cudaFreeHost(b->ptr);
      delete b;
    }
    (void)cudaGetLastError();
  }

  std::mutex mu_;
  std::map<uintptr_t, Block*> blocks_;                // every block, by address
  std::multimap<size_t, Block*> free_;                // reusable now, by size
  std::vector<Block*> pending_;                       // freed, copies still in flight
  std::vector<std::vector<cudaEvent_t>> event_pool_;  // per device
};

PinnedCache& cache() {
  static PinnedCache* c = new PinnedCache();  // leaked on purpose
  return *c;
}

tsr_status_t pinned_alloc(tsr_runtime_t*, size_t nbytes, void** out) {
  return guarded("pinned host alloc", [&] { *out = cache().alloc(nbytes); });
}

void pinned_free(tsr_runtime_t*, void* ptr) {
  try {
    cache().free(ptr);
  } catch (...) {
  }
}

void pinned_deleter(void*, void* data) { pinned_free(nullptr, data); }

tsr_status_t pinned_tensor_empty(tsr_runtime_t* runtime, int32_t ndim, const int64_t* sizes, tsr_dtype_t dtype,
                                 tsr_tensor_t** out) {
  return guarded("pinned host tensor_empty", [&] {
    const tsr_api_t* api = core_api();
    if (!TSR_HAS_FIELD(api, tsr_api_t, tensor_from_blob) || !api->tensor_from_blob)
      fail(TSR_UNIMPLEMENTED, "pinned host tensor_empty: the core lacks tensor_from_blob (ABI 1.2)");
    if (ndim < 0 || ndim > TSR_MAX_DIMS)
      fail(TSR_INVALID_ARGUMENT, "pinned host tensor_empty: rank ", ndim, " out of range");
    const size_t item = itemsize(dtype);
    if (item == 0) fail(TSR_INVALID_ARGUMENT, "pinned host tensor_empty: invalid dtype ", static_cast<int>(dtype));
    size_t nbytes = item;
    for (int32_t d = 0; d < ndim; ++d) {
      if (sizes[d] < 0) fail(TSR_INVALID_ARGUMENT, "pinned host tensor_empty: negative size ", sizes[d], " in dim ", d);
      if (sizes[d] != 0 && nbytes > SIZE_MAX / static_cast<size_t>(sizes[d]))
        fail(TSR_INVALID_ARGUMENT, "pinned host tensor_empty: size overflows");
      nbytes *= static_cast<size_t>(sizes[d]);
    }
    void* p = cache().alloc(nbytes);
    tsr_status_t st = api->tensor_from_blob(runtime, p, ndim, sizes, nullptr, dtype,
                                            tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}, &pinned_deleter, nullptr, out);
    if (st) {
      cache().free(p);  // on error the deleter is not called: the memory is still ours
      check(api, st);
    }
  });
}

const tsr_pinned_host_t kPinnedHost = {sizeof(tsr_pinned_host_t), 0u, &pinned_alloc, &pinned_free,
                                       &pinned_tensor_empty};

}  // namespace

bool pinned_record_use(const void* ptr, int device, cudaStream_t stream) {
  // A capture bakes the copy into the graph; its replays read the block whenever they run, so
  // no event can describe the use: the caller keeps such a tensor alive while the graph lives.
  if (stream_is_capturing(device, stream)) return false;
  return cache().record_use(ptr, device, stream);
}

bool pinned_contains(const void* ptr) { return cache().contains(ptr); }

void register_pinned_host(Registrar& r) { r.extension(TSR_PINNED_HOST_EXTENSION, &kPinnedHost); }

}  // namespace tsr::cuda
