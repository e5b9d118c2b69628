// The "cuda" device type: copies, device/stream/event
// callbacks of kernel.h 1.2, properties and descriptions; registration of everything the
// runtime side offers (allocators, pinned host memory, graphs). Kernels are registered by
// their own files (TSR_CUDA_KERNELS).
//
// Streams are cudaStream_t created non-blocking (they never synchronize with the legacy default
// stream, as PyTorch's pool streams); events are created without timing unless TSR_EVENT_TIMING
// asks for it (timing events are slower to record). Every call that waits for the device
// (synchronize, stream/event synchronize, copies into host memory) reports errors of earlier
// asynchronous work naming the last op launched, turns a pending device-side index error into
// a status, and is refused while a stream of the device captures a CUDA graph.
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "device_internal.hpp"

namespace tsr::cuda {
namespace {

RuntimeState* rs(void* self) { return static_cast<RuntimeState*>(self); }

int cuda_index(void* self, tsr_device_t d, const char* what) {
  if (d.type != rs(self)->type) fail(TSR_INVALID_ARGUMENT, what, ": device type ", d.type, " is not cuda");
  check_device_index(d.index, what);
  return d.index;
}

const char* direction(bool to_cuda, bool from_cuda) {
  if (to_cuda && from_cuda) return "device to device";
  return to_cuda ? "host to device" : "device to host";
}

// ---- peer access -------------------------------------------------------------------------------

// Lets `dst` read and write `src`'s memory directly (NVLink or PCIe peer-to-peer) when the two
// GPUs can, enabled on the first copy between them and kept for the process (as PyTorch does):
// cudaMemcpyPeerAsync then moves the bytes GPU to GPU instead of staging them through host
// memory. Pairs that cannot are remembered too, and their copies take CUDA's staged path.
// Not while `stream` captures a CUDA graph (enabling is not a stream operation, and a capture
// in global mode would be invalidated by it): the attempt waits for a copy outside capture.
// Thread-safe: one attempt per ordered pair.
void enable_peer_access(int dst, int src, cudaStream_t stream) {
  constexpr int kMax = 64;
  if (dst == src || dst < 0 || src < 0 || dst >= kMax || src >= kMax) return;
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone) {
    (void)cudaGetLastError();
    return;
  }
  static std::once_flag once[kMax][kMax];
  std::call_once(once[dst][src], [dst, src] {
    int can = 0;
    if (cudaDeviceCanAccessPeer(&can, dst, src) != cudaSuccess || !can) {
      (void)cudaGetLastError();
      return;
    }
    DeviceGuard guard(dst);
    const cudaError_t err = cudaDeviceEnablePeerAccess(src, 0);
    if (err != cudaSuccess) (void)cudaGetLastError();  // already enabled, or refused: staged copies still work
  });
}

// ---- copies ------------------------------------------------------------------------------------

// One side is a cuda device; the other is cuda, cpu or plain host memory. The stream is the
// current stream of the cuda side (of the destination for device-to-device copies, as the core
// picks it).
//  - device to device: asynchronous (peer copy between two GPUs, direct where they have peer
//    access, which the first copy between them enables).
//  - host to device: asynchronous. From pageable memory CUDA stages the source before the call
//    returns, so the caller may reuse it at once; from pinned memory of our allocator the copy
//    reads it later, so the block is marked in use until the copy has finished.
//  - device to host: complete when copy returns (the host reads the result right after; CPU
//    work is synchronous), whether the destination is pinned or pageable.
tsr_status_t cuda_copy(void* self, tsr_device_t dst_device, void* dst, tsr_device_t src_device, const void* src,
                       size_t nbytes, tsr_stream_t* stream) {
  return guarded("cuda copy", [&] {
    if (nbytes == 0 || dst == src) return;
    const int32_t type = rs(self)->type;
    const bool to_cuda = dst_device.type == type;
    const bool from_cuda = src_device.type == type;
    if (!to_cuda && !from_cuda) fail(TSR_INVALID_ARGUMENT, "cuda copy: neither side is a cuda device");
    if (to_cuda) check_device_index(dst_device.index, "cuda copy");
    if (from_cuda) check_device_index(src_device.index, "cuda copy");
    const int dev = to_cuda ? dst_device.index : src_device.index;  // the core's stream owner
    const cudaStream_t s = as_cuda(stream);
    const std::string what = str_cat("copy (", direction(to_cuda, from_cuda), ", ", nbytes, " bytes)");
    if (!to_cuda) refuse_if_capturing(dev, what.c_str());
    DeviceGuard guard(dev);
    cudaError_t err;
    if (to_cuda && from_cuda && dst_device.index != src_device.index) {
      enable_peer_access(dst_device.index, src_device.index, s);
      err = cudaMemcpyPeerAsync(dst, dst_device.index, src, src_device.index, nbytes, s);
    } else {
      err = cudaMemcpyAsync(
          dst, src, nbytes,
          to_cuda ? (from_cuda ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice) : cudaMemcpyDeviceToHost, s);
    }
    if (err != cudaSuccess) throw_cuda_error_on(s, err, what.c_str(), "cudaMemcpyAsync", dev);
    if (to_cuda && !from_cuda) {
      (void)pinned_record_use(src, dev, s);
    } else if (!to_cuda) {
      check_sync(dev, cudaStreamSynchronize(s), what.c_str(), "cudaStreamSynchronize");
    }
  });
}

tsr_status_t cuda_synchronize(void* self, tsr_device_t device) {
  return guarded("cuda synchronize", [&] {
    const int dev = cuda_index(self, device, "synchronize");
    refuse_if_capturing(dev, "synchronize");
    DeviceGuard guard(dev);
    check_sync(dev, cudaDeviceSynchronize(), "synchronize", "cudaDeviceSynchronize");
    graphs_process_deferred();
  });
}

void cuda_describe(void* self, tsr_device_t device, char* buf, size_t len) {
  if (!buf || len == 0) return;
  try {
    const int dev = cuda_index(self, device, "describe");
    const cudaDeviceProp& p = device_prop(dev);
    const double gib = static_cast<double>(p.totalGlobalMem) / double(1ull << 30);
    std::snprintf(buf, len, "cuda:%d (%s, sm_%d%d, %.0f GiB)", dev, p.name, p.major, p.minor, gib);
  } catch (const std::exception& e) {
    std::snprintf(buf, len, "cuda:%d (properties unavailable: %s)", device.index, e.what());
  }
}

tsr_status_t cuda_properties(void* self, tsr_device_t device, tsr_device_properties_t* out) {
  return guarded("cuda device_properties", [&] {
    const int dev = cuda_index(self, device, "device_properties");
    const cudaDeviceProp& p = device_prop(dev);
    const size_t size = out->struct_size ? out->struct_size : sizeof(tsr_device_properties_t);
    tsr_device_properties_t r{};
    r.struct_size = size;
    std::snprintf(r.name, sizeof(r.name), "%s", p.name);
    r.compute_major = p.major;
    r.compute_minor = p.minor;
    r.total_memory_bytes = static_cast<int64_t>(p.totalGlobalMem);
    r.multiprocessor_count = p.multiProcessorCount;
    r.max_threads_per_block = p.maxThreadsPerBlock;
    r.warp_size = p.warpSize;
    r.async_engines = p.asyncEngineCount;
    r.l2_cache_bytes = p.l2CacheSize;
    r.memory_bus_width_bits = p.memoryBusWidth;
    r.integrated = p.integrated;
    r.pci_bus_id = p.pciBusID;
    r.pci_device_id = p.pciDeviceID;
    r.pci_domain_id = p.pciDomainID;
    // A caller built against an older (smaller) struct gets its prefix only.
    std::memcpy(out, &r, size < sizeof(r) ? size : sizeof(r));
  });
}

// ---- streams --------------------------------------------------------------------------------------

tsr_status_t cuda_stream_create(void* self, tsr_device_t device, int32_t priority, tsr_stream_t** out) {
  return guarded("cuda stream_create", [&] {
    const int dev = cuda_index(self, device, "stream_create");
    DeviceGuard guard(dev);
    int least = 0, greatest = 0;  // CUDA: lower number = higher priority; greatest <= 0 <= least
    TSR_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest), "stream_create", dev);
    int p = priority;
    if (p < greatest) p = greatest;
    if (p > least) p = least;
    cudaStream_t s = nullptr;
    TSR_CUDA_CHECK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, p), "stream_create", dev);
    *out = reinterpret_cast<tsr_stream_t*>(s);
  });
}

tsr_status_t cuda_stream_destroy(void* self, tsr_device_t device, tsr_stream_t* stream) {
  return guarded("cuda stream_destroy", [&] {
    const int dev = cuda_index(self, device, "stream_destroy");
    if (!stream) return;  // the default stream is not ours to destroy
    if (stream_is_capturing(dev, as_cuda(stream)))
      fail(TSR_FAILED_PRECONDITION, "cuda:", dev,
           " stream_destroy: the stream is capturing a CUDA graph (end the capture first)");
    DeviceGuard guard(dev);
    // Work already enqueued still completes (CUDA releases the stream afterwards).
    TSR_CUDA_CHECK(cudaStreamDestroy(as_cuda(stream)), "stream_destroy", dev);
  });
}

tsr_status_t cuda_stream_synchronize(void* self, tsr_device_t device, tsr_stream_t* stream) {
  return guarded("cuda stream_synchronize", [&] {
    const int dev = cuda_index(self, device, "stream_synchronize");
    refuse_if_capturing(dev, "stream_synchronize");
    DeviceGuard guard(dev);
    check_sync(dev, cudaStreamSynchronize(as_cuda(stream)), "stream_synchronize", "cudaStreamSynchronize");
  });
}

// cudaErrorNotReady is an answer, not a failure; clear it so that the next launch check does not
// mistake it for a launch error. A pending device-side error record is left for the next
// synchronizing call: the caching allocator polls events while allocating, and an index error
// must not surface as the failure of an unrelated allocation.
void query_result(int dev, cudaError_t err, int32_t* done, const char* what, const char* call) {
  if (err == cudaErrorNotReady) {
    (void)cudaGetLastError();
    *done = 0;
    return;
  }
  if (err != cudaSuccess) check_sync(dev, err, what, call);  // throws, naming the last op
  *done = 1;
}

tsr_status_t cuda_stream_query(void* self, tsr_device_t device, tsr_stream_t* stream, int32_t* done) {
  return guarded("cuda stream_query", [&] {
    const int dev = cuda_index(self, device, "stream_query");
    // Querying a capturing stream would invalidate its capture.
    if (stream_is_capturing(dev, as_cuda(stream)))
      fail(TSR_FAILED_PRECONDITION, "cuda:", dev, " stream_query: the stream is capturing a CUDA graph");
    DeviceGuard guard(dev);
    query_result(dev, cudaStreamQuery(as_cuda(stream)), done, "stream_query", "cudaStreamQuery");
  });
}

tsr_status_t cuda_stream_wait_event(void* self, tsr_device_t device, tsr_stream_t* stream, tsr_event_t* event) {
  return guarded("cuda stream_wait_event", [&] {
    const int dev = cuda_index(self, device, "stream_wait_event");
    if (!event) fail(TSR_INVALID_ARGUMENT, "cuda:", dev, " stream_wait_event: event is NULL");
    DeviceGuard guard(dev);
    const cudaError_t err = cudaStreamWaitEvent(as_cuda(stream), as_cuda(event), 0);
    if (err != cudaSuccess) throw_cuda_error_on(as_cuda(stream), err, "stream_wait_event", "cudaStreamWaitEvent", dev);
  });
}

// ---- events -----------------------------------------------------------------------------------------

tsr_status_t cuda_event_create(void* self, tsr_device_t device, uint32_t flags, tsr_event_t** out) {
  return guarded("cuda event_create", [&] {
    const int dev = cuda_index(self, device, "event_create");
    DeviceGuard guard(dev);
    cudaEvent_t e = nullptr;
    const unsigned cflags = (flags & TSR_EVENT_TIMING) ? cudaEventDefault : cudaEventDisableTiming;
    TSR_CUDA_CHECK(cudaEventCreateWithFlags(&e, cflags), "event_create", dev);
    *out = reinterpret_cast<tsr_event_t*>(e);
  });
}

tsr_status_t cuda_event_destroy(void* self, tsr_device_t device, tsr_event_t* event) {
  return guarded("cuda event_destroy", [&] {
    const int dev = cuda_index(self, device, "event_destroy");
    if (!event) return;
    DeviceGuard guard(dev);
    TSR_CUDA_CHECK(cudaEventDestroy(as_cuda(event)), "event_destroy", dev);
  });
}

tsr_status_t cuda_event_record(void* self, tsr_device_t device, tsr_event_t* event, tsr_stream_t* stream) {
  return guarded("cuda event_record", [&] {
    const int dev = cuda_index(self, device, "event_record");
    if (!event) fail(TSR_INVALID_ARGUMENT, "cuda:", dev, " event_record: event is NULL");
    DeviceGuard guard(dev);
    const cudaError_t err = cudaEventRecord(as_cuda(event), as_cuda(stream));
    if (err != cudaSuccess) throw_cuda_error_on(as_cuda(stream), err, "event_record", "cudaEventRecord", dev);
  });
}

tsr_status_t cuda_event_synchronize(void* self, tsr_device_t device, tsr_event_t* event) {
  return guarded("cuda event_synchronize", [&] {
    const int dev = cuda_index(self, device, "event_synchronize");
    if (!event) fail(TSR_INVALID_ARGUMENT, "cuda:", dev, " event_synchronize: event is NULL");
    refuse_if_capturing(dev, "event_synchronize");
    DeviceGuard guard(dev);
    check_sync(dev, cudaEventSynchronize(as_cuda(event)), "event_synchronize", "cudaEventSynchronize");
  });
}

tsr_status_t cuda_event_query(void* self, tsr_device_t device, tsr_event_t* event, int32_t* done) {
  return guarded("cuda event_query", [&] {
    const int dev = cuda_index(self, device, "event_query");
    if (!event) fail(TSR_INVALID_ARGUMENT, "cuda:", dev, " event_query: event is NULL");
    DeviceGuard guard(dev);
    query_result(dev, cudaEventQuery(as_cuda(event)), done, "event_query", "cudaEventQuery");
  });
}

tsr_status_t cuda_event_elapsed_ms(void* self, tsr_device_t device, tsr_event_t* start, tsr_event_t* end, float* ms) {
  return guarded("cuda event_elapsed_ms", [&] {
    const int dev = cuda_index(self, device, "event_elapsed_ms");
    if (!start || !end) fail(TSR_INVALID_ARGUMENT, "cuda:", dev, " event_elapsed_ms: event is NULL");
    DeviceGuard guard(dev);
    float v = 0.0f;
    const cudaError_t err = cudaEventElapsedTime(&v, as_cuda(start), as_cuda(end));
    if (err == cudaErrorNotReady) {
      (void)cudaGetLastError();
      fail(TSR_FAILED_PRECONDITION, "cuda:", dev,
           " event_elapsed_ms: the events have not completed yet (synchronize the end event first)");
    }
    if (err == cudaErrorInvalidResourceHandle) {
      (void)cudaGetLastError();
      fail(TSR_INVALID_ARGUMENT, "cuda:", dev,
           " event_elapsed_ms: both events must be created with TSR_EVENT_TIMING and recorded (",
           cudaGetErrorString(err), ")");
    }
    if (err != cudaSuccess) throw_cuda_error(err, "event_elapsed_ms", "cudaEventElapsedTime", dev);
    *ms = v;
  });
}

}  // namespace

// ---- plugin hooks -----------------------------------------------------------------------------------

int32_t register_device(Registrar& r, void* state_ptr) {
  auto* state = static_cast<RuntimeState*>(state_ptr);
  set_core_api(r.api());
  state->api = r.api();
  state->runtime = r.runtime();
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    (void)cudaGetLastError();
    throw_cuda_error(err, "cuda init", "cudaGetDeviceCount", 0);
  }
  init_devices(count);
  // A second runtime sees the device count of the first (CUDA_VISIBLE_DEVICES is read once).
  count = device_count();

  tsr_device_type_def_t def{};
  def.struct_size = TSR_STRUCT_SIZE(tsr_device_type_def_t);
  def.name = "cuda";
  def.device_count = count;
  def.self = state;
  def.copy = &cuda_copy;
  def.synchronize = &cuda_synchronize;
  def.describe = &cuda_describe;
  def.properties = &cuda_properties;
  def.stream_create = &cuda_stream_create;
  def.stream_destroy = &cuda_stream_destroy;
  def.stream_synchronize = &cuda_stream_synchronize;
  def.stream_query = &cuda_stream_query;
  def.stream_wait_event = &cuda_stream_wait_event;
  def.event_create = &cuda_event_create;
  def.event_destroy = &cuda_event_destroy;
  def.event_record = &cuda_event_record;
  def.event_synchronize = &cuda_event_synchronize;
  def.event_query = &cuda_event_query;
  def.event_elapsed_ms = &cuda_event_elapsed_ms;
  state->type = r.device_type(def);

  register_allocators(r, state->type);
  register_pinned_host(r);
  register_graphs(r);
  register_peer_topology(r);
  return state->type;
}

void shutdown(const tsr_api_t*, void* state) {
  // Only the per-runtime state: the process-wide device state, error records and pinned cache
  // stay (see device_internal.hpp). Safe when init never ran (state NULL) or no device exists.
  delete static_cast<RuntimeState*>(state);
}

}  // namespace tsr::cuda
