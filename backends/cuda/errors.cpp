// The CUDA backend's error handling: CUDA errors to tsr::Error, the last op launched per device
// (named when an asynchronous failure surfaces), device-side error records in mapped pinned
// memory, and the registry of streams capturing CUDA graphs (synchronizing calls are refused
// while one captures). See cuda_common.hpp and device_internal.hpp for the contracts.
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <memory>
#include <thread>
#include <unordered_map>

#include "device_internal.hpp"

#ifndef TSR_CUDA_ARCHITECTURES
#define TSR_CUDA_ARCHITECTURES "?"
#endif

namespace tsr::cuda {
namespace {

struct Capture {
  cudaStream_t stream;
  std::thread::id thread;  // the thread that began it: its refused calls fail the capture
  std::string failure;     // first refusal / launch failure, "" when none
};

struct DeviceState {
  std::atomic<int32_t> last_op{-1};
  std::once_flag record_once;
  std::atomic<DeviceErrorRecord*> record_host{nullptr};
  DeviceErrorRecord* record_device = nullptr;
  std::once_flag prop_once;
  cudaDeviceProp prop{};
  std::atomic<int> ncapturing{0};
  std::mutex capture_mu;
  std::vector<Capture> captures;
};

std::atomic<const tsr_api_t*> g_api{nullptr};
std::atomic<int> g_count{0};
std::once_flag g_devices_once;
DeviceState* g_devices = nullptr;  // leaked on purpose (see device_internal.hpp)

DeviceState& state(int device) {
  check_device_index(device, "cuda");
  return g_devices[device];
}

// ---- op names interned for error messages ---------------------------------------------------

std::mutex g_names_mu;
std::unordered_map<std::string, int32_t>* g_name_ids = nullptr;  // leaked, like g_devices
std::vector<const char*>* g_names = nullptr;

int32_t intern(const char* name, const char** interned) {
  std::lock_guard<std::mutex> lock(g_names_mu);
  if (!g_name_ids) {
    g_name_ids = new std::unordered_map<std::string, int32_t>();
    g_names = new std::vector<const char*>();
  }
  auto it = g_name_ids->find(name);
  if (it == g_name_ids->end()) {
    const size_t n = std::strlen(name);
    char* copy = new char[n + 1];
    std::memcpy(copy, name, n + 1);
    g_names->push_back(copy);
    it = g_name_ids->emplace(copy, static_cast<int32_t>(g_names->size() - 1)).first;
  }
  *interned = (*g_names)[static_cast<size_t>(it->second)];
  return it->second;
}

std::string device_name(int device) { return "cuda:" + std::to_string(device); }

std::string async_error_message(int device, cudaError_t err) {
  const std::string op = device >= 0 && device < g_count.load() ? last_op(device) : std::string();
  std::string msg = device_name(device) + ": an earlier asynchronous operation failed: " + cudaGetErrorString(err) +
                    " (" + cudaGetErrorName(err) + ")";
  msg += op.empty() ? std::string(" (no op launched by tessera yet)") : " (last op launched: '" + op + "')";
  msg += "; the CUDA context is unusable now, restart the process";
  return msg;
}

bool is_capture_error(cudaError_t err) {
  switch (err) {
    case cudaErrorStreamCaptureUnsupported:
    case cudaErrorStreamCaptureInvalidated:
    case cudaErrorStreamCaptureMerge:
    case cudaErrorStreamCaptureUnmatched:
    case cudaErrorStreamCaptureUnjoined:
    case cudaErrorStreamCaptureIsolation:
    case cudaErrorStreamCaptureImplicit:
    case cudaErrorCapturedEvent:
    case cudaErrorStreamCaptureWrongThread:
      return true;
    default:
      return false;
  }
}

}  // namespace

// ---- process-wide state -----------------------------------------------------------------------

const tsr_api_t* core_api() { return g_api.load(std::memory_order_acquire); }
void set_core_api(const tsr_api_t* api) { g_api.store(api, std::memory_order_release); }

int device_count() { return g_count.load(std::memory_order_acquire); }

void init_devices(int count) {
  std::call_once(g_devices_once, [count] {
    g_devices = new DeviceState[count > 0 ? count : 1];
    g_count.store(count, std::memory_order_release);
  });
}

void check_device_index(int device, const char* what) {
  const int n = device_count();
  if (device < 0 || device >= n)
    fail(TSR_INVALID_ARGUMENT, what, ": cuda device index ", device, " is out of range (", n,
         n == 1 ? " device)" : " devices)");
}

const cudaDeviceProp& device_prop(int device) {
  DeviceState& d = state(device);
  std::call_once(d.prop_once, [&] {  // a throw leaves the flag unset: the next call retries
    TSR_CUDA_CHECK(cudaGetDeviceProperties(&d.prop, device), "cuda", device);
  });
  return d.prop;
}

// ---- errors -------------------------------------------------------------------------------------

bool is_async_error(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorNvlinkUncorrectable:
    case cudaErrorContained:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorPriorLaunchFailure:
      return true;
    default:
      return false;
  }
}

void throw_cuda_error(cudaError_t err, const char* op, const char* what, int device) {
  if (is_async_error(err)) fail(TSR_INTERNAL, async_error_message(device, err));
  tsr_code_t code = TSR_INTERNAL;
  std::string msg = str_cat(op ? op : "cuda", ": ", what ? what : "CUDA call", " failed on ", device_name(device), ": ",
                            cudaGetErrorString(err), " (", cudaGetErrorName(err), ")");
  if (err == cudaErrorMemoryAllocation) {
    code = TSR_RESOURCE_EXHAUSTED;
    (void)cudaGetLastError();  // not sticky: clear it so the next launch check does not see it
  } else if (is_capture_error(err)) {
    code = TSR_FAILED_PRECONDITION;
    msg += " (the call is not allowed while a CUDA graph is being captured)";
  } else if (err == cudaErrorNoKernelImageForDevice) {
    msg += str_cat(" (the plugin was built for CUDA architectures ", TSR_CUDA_ARCHITECTURES,
                   "; rebuild with TESSERA_CUDA_ARCHITECTURES including this GPU)");
  } else if (err == cudaErrorInvalidValue || err == cudaErrorInvalidConfiguration || err == cudaErrorInvalidDevice ||
             err == cudaErrorInvalidResourceHandle) {
    code = TSR_INVALID_ARGUMENT;
  }
  fail(code, msg);
}

DeviceGuard::DeviceGuard(int device) : device_(device) {
  int cur = -1;
  cudaError_t e = cudaGetDevice(&cur);
  if (e != cudaSuccess) throw_cuda_error(e, "cuda", "cudaGetDevice", device);
  if (cur != device) {
    e = cudaSetDevice(device);
    if (e != cudaSuccess) throw_cuda_error(e, "cuda", "cudaSetDevice", device);
  }
  prev_ = cur;
}

DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0 && prev_ != device_) (void)cudaSetDevice(prev_);
}

int32_t error_op_id(const char* op_name) {
  if (!op_name) op_name = "?";
  // The core hands the same pointer for an op on every call: a small per-thread cache keyed by
  // the pointer (checked against the interned text, so a reused address cannot lie) keeps the
  // global lock off the launch path.
  struct Entry {
    const char* key = nullptr;
    const char* interned = nullptr;
    int32_t id = -1;
  };
  thread_local Entry cache[16];
  Entry& e = cache[(reinterpret_cast<uintptr_t>(op_name) >> 3) & 15];
  if (e.key == op_name && std::strcmp(op_name, e.interned) == 0) return e.id;
  const char* interned = nullptr;
  const int32_t id = intern(op_name, &interned);
  e.key = op_name;
  e.interned = interned;
  e.id = id;
  return id;
}

std::string op_name_of_id(int32_t id) {
  std::lock_guard<std::mutex> lock(g_names_mu);
  if (!g_names || id < 0 || static_cast<size_t>(id) >= g_names->size()) return "?";
  return (*g_names)[static_cast<size_t>(id)];
}

std::string last_op(int device) {
  const int32_t id = state(device).last_op.load(std::memory_order_relaxed);
  return id < 0 ? std::string() : op_name_of_id(id);
}

void set_last_op(int device, const char* op_name) {
  state(device).last_op.store(error_op_id(op_name), std::memory_order_relaxed);
}

void after_launch(const KernelCall& c) {
  const int device = c.device().index;
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::string msg;
    tsr_code_t code = TSR_INTERNAL;
    if (is_async_error(err)) {
      msg = async_error_message(device, err);
    } else {
      msg = str_cat(c.op_name(), ": kernel launch failed on ", device_name(device), ": ", cudaGetErrorString(err), " (",
                    cudaGetErrorName(err), ")");
      if (err == cudaErrorNoKernelImageForDevice)
        msg += str_cat(" (the plugin was built for CUDA architectures ", TSR_CUDA_ARCHITECTURES, ")");
      if (err == cudaErrorMemoryAllocation) code = TSR_RESOURCE_EXHAUSTED;
      if (is_capture_error(err)) code = TSR_FAILED_PRECONDITION;
    }
    capture_failed(device, stream_of(c), msg);
    fail(code, msg);
  }
  set_last_op(device, c.op_name());
}

DeviceErrorRecord* device_error_record(int device) {
  DeviceState& d = state(device);
  std::call_once(d.record_once, [&] {
    DeviceGuard guard(device);
    RelaxedCaptureMode relaxed;  // the first kernel needing it may run inside a capture
    void* host = nullptr;
    // Portable: every device's context sees it as pinned; mapped: kernels write it directly,
    // so a kernel that finds a bad index records it without a trap that would kill the context.
    TSR_CUDA_CHECK(cudaHostAlloc(&host, sizeof(DeviceErrorRecord), cudaHostAllocMapped | cudaHostAllocPortable), "cuda",
                   device);
    std::memset(host, 0, sizeof(DeviceErrorRecord));
    void* dev = nullptr;
    const cudaError_t e = cudaHostGetDevicePointer(&dev, host, 0);
    if (e != cudaSuccess) {
      (void)cudaFreeHost(host);
      throw_cuda_error(e, "cuda", "cudaHostGetDevicePointer", device);
    }
    d.record_device = static_cast<DeviceErrorRecord*>(dev);
    d.record_host.store(static_cast<DeviceErrorRecord*>(host), std::memory_order_release);
  });
  return d.record_device;
}

void check_sync(int device, cudaError_t err, const char* what, const char* cuda_call) {
  if (err != cudaSuccess) {
    if (is_async_error(err)) fail(TSR_INTERNAL, async_error_message(device, err));
    throw_cuda_error(err, what, cuda_call, device);
  }
  DeviceErrorRecord* rec = state(device).record_host.load(std::memory_order_acquire);
  if (!rec) return;
  // Written by kernels through the mapped pointer; the work is complete here, so plain volatile
  // reads see it. The code is cleared last so that a concurrent writer's record survives intact.
  volatile DeviceErrorRecord* v = rec;
  const int32_t code = v->code;
  if (code == 0) return;
  const int32_t op_id = v->op_id;
  const int64_t value = v->value;
  const int64_t bound = v->bound;
  const int32_t dim = v->dim;
  __atomic_store_n(&rec->code, 0, __ATOMIC_SEQ_CST);
  const std::string op = op_name_of_id(op_id);
  const std::string where = " (" + device_name(device) + ")";
  if (code == kDeviceErrorZeroDivisor)
    fail(TSR_INVALID_ARGUMENT, op, ": ZeroDivisionError (integer division by zero)", where);
  if (code == kDeviceErrorIndex) {
    if (op.rfind("cross_entropy", 0) == 0 || op.rfind("nll_loss", 0) == 0)
      fail(TSR_INVALID_ARGUMENT, op, ": target ", value, " is out of bounds for ", bound, " classes", where);
    if (dim >= 0)
      fail(TSR_OUT_OF_RANGE, op, ": index ", value, " is out of bounds for dimension ", dim, " with size ", bound,
           where);
    fail(TSR_OUT_OF_RANGE, op, ": index ", value, " is out of bounds for size ", bound, where);
  }
  fail(TSR_INTERNAL, op, ": device-side check failed (code ", code, ", value ", value, ", bound ", bound, ", dim ", dim,
       ")", where);
}

// ---- captures -----------------------------------------------------------------------------------

void capture_started(int device, cudaStream_t stream) {
  DeviceState& d = state(device);
  std::lock_guard<std::mutex> lock(d.capture_mu);
  d.captures.push_back(Capture{stream, std::this_thread::get_id(), std::string()});
  d.ncapturing.fetch_add(1, std::memory_order_acq_rel);
}

std::string capture_finished(int device, cudaStream_t stream) {
  DeviceState& d = state(device);
  std::lock_guard<std::mutex> lock(d.capture_mu);
  for (auto it = d.captures.begin(); it != d.captures.end(); ++it) {
    if (it->stream != stream) continue;
    std::string failure = std::move(it->failure);
    d.captures.erase(it);
    d.ncapturing.fetch_sub(1, std::memory_order_acq_rel);
    return failure;
  }
  return std::string();
}

bool device_is_capturing(int device) { return state(device).ncapturing.load(std::memory_order_acquire) > 0; }

bool stream_is_capturing(int device, cudaStream_t stream) {
  DeviceState& d = state(device);
  if (d.ncapturing.load(std::memory_order_acquire) == 0) return false;
  std::lock_guard<std::mutex> lock(d.capture_mu);
  for (const Capture& c : d.captures)
    if (c.stream == stream) return true;
  return false;
}

void refuse_if_capturing(int device, const char* what) {
  DeviceState& d = state(device);
  if (d.ncapturing.load(std::memory_order_acquire) == 0) return;
  std::string msg;
  {
    std::lock_guard<std::mutex> lock(d.capture_mu);
    if (d.captures.empty()) return;
    char addr[32];
    std::snprintf(addr, sizeof(addr), "%p", static_cast<void*>(d.captures.front().stream));
    msg = str_cat(device_name(device), " ", what, ": not allowed while stream ", addr, " is capturing a CUDA graph");
    const std::thread::id self = std::this_thread::get_id();
    for (Capture& c : d.captures)
      if (c.thread == self && c.failure.empty()) c.failure = msg;
  }
  fail(TSR_FAILED_PRECONDITION, msg);
}

void capture_failed(int device, cudaStream_t stream, const std::string& message) {
  if (device < 0 || device >= device_count()) return;
  DeviceState& d = g_devices[device];
  if (d.ncapturing.load(std::memory_order_acquire) == 0) return;
  std::lock_guard<std::mutex> lock(d.capture_mu);
  for (Capture& c : d.captures)
    if (c.stream == stream && c.failure.empty()) c.failure = message;
}

void throw_cuda_error_on(cudaStream_t stream, cudaError_t err, const char* op, const char* what, int device) {
  try {
    throw_cuda_error(err, op, what, device);
  } catch (const Error& e) {
    capture_failed(device, stream, e.what());
    throw;
  }
}

void refuse_during_capture(const KernelCall& c, const char* what) {
  const std::string w = str_cat(c.op_name(), " (", what ? what : "reads device data on the host", ")");
  refuse_if_capturing(c.device().index, w.c_str());
}

void sync_for_host(const KernelCall& c) {
  const int device = c.device().index;
  refuse_if_capturing(device, c.op_name());
  DeviceGuard guard(device);
  check_sync(device, cudaStreamSynchronize(stream_of(c)), c.op_name(), "cudaStreamSynchronize");
}

}  // namespace tsr::cuda
