// Per-thread, per-device cuBLAS / cuBLASLt / cuSOLVER handles with a reuse pool (see
// cublas_handles.hpp for why).
#include "cublas_handles.hpp"

#include <mutex>
#include <vector>

namespace tsr::cuda {
namespace {

// One kind of handle: create/destroy plus a pool of handles released by exited threads.
template <class H>
struct HandleKind {
  const char* name;
  H (*create)(int device);

  std::mutex mu;
  std::vector<std::vector<H>> free_by_device;  // leaked on purpose (see the header)

  H acquire(int device) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (size_t(device) < free_by_device.size() && !free_by_device[size_t(device)].empty()) {
        H h = free_by_device[size_t(device)].back();
        free_by_device[size_t(device)].pop_back();
        return h;
      }
    }
    return create(device);
  }
  void release(int device, H h) {
    std::lock_guard<std::mutex> lock(mu);
    if (free_by_device.size() <= size_t(device)) free_by_device.resize(size_t(device) + 1);
    free_by_device[size_t(device)].push_back(h);
  }
};

cublasLtHandle_t create_lt(int device) {
  cublasLtHandle_t h = nullptr;
  TSR_CUBLAS_CHECK(cublasLtCreate(&h), "cublasLt", device);
  return h;
}
cublasHandle_t create_cublas(int device) {
  cublasHandle_t h = nullptr;
  TSR_CUBLAS_CHECK(cublasCreate(&h), "cublas", device);
  return h;
}
cusolverDnHandle_t create_cusolver(int device) {
  cusolverDnHandle_t h = nullptr;
  TSR_CUSOLVER_CHECK(cusolverDnCreate(&h), "cusolver", device);
  return h;
}

cudnnHandle_t create_cudnn(int device) {
  cudnnHandle_t h = nullptr;
  TSR_CUDNN_CHECK(cudnnCreate(&h), "cudnn", device);
  return h;
}

template <class H>
HandleKind<H>& kind(H (*create)(int), const char* name) {
  // Function-local and heap-allocated: outlives every thread_local cache that returns to it.
  static HandleKind<H>* k = [&] {
    auto* p = new HandleKind<H>();
    p->name = name;
    p->create = create;
    return p;
  }();
  return *k;
}

// The calling thread's handles, indexed by device; returned to the pool at thread exit.
template <class H>
struct ThreadHandles {
  HandleKind<H>* owner = nullptr;
  std::vector<H> by_device;
  ~ThreadHandles() {
    if (!owner) return;
    for (size_t d = 0; d < by_device.size(); ++d)
      if (by_device[d]) owner->release(int(d), by_device[d]);
  }
  H get(HandleKind<H>& k, int device) {
    if (device < 0) fail(TSR_INTERNAL, k.name, ": bad device index ", device);
    owner = &k;
    if (by_device.size() <= size_t(device)) by_device.resize(size_t(device) + 1, nullptr);
    H& h = by_device[size_t(device)];
    if (!h) h = k.acquire(device);
    return h;
  }
};

}  // namespace

cublasLtHandle_t cublaslt_handle(int device) {
  thread_local ThreadHandles<cublasLtHandle_t> t;
  return t.get(kind<cublasLtHandle_t>(create_lt, "cublasLt"), device);
}

cublasHandle_t cublas_handle(int device) {
  thread_local ThreadHandles<cublasHandle_t> t;
  return t.get(kind<cublasHandle_t>(create_cublas, "cublas"), device);
}

cusolverDnHandle_t cusolver_handle(int device) {
  thread_local ThreadHandles<cusolverDnHandle_t> t;
  return t.get(kind<cusolverDnHandle_t>(create_cusolver, "cusolver"), device);
}

cudnnHandle_t cudnn_handle(int device) {
  thread_local ThreadHandles<cudnnHandle_t> t;
  return t.get(kind<cudnnHandle_t>(create_cudnn, "cudnn"), device);
}

void throw_cublas_error(cublasStatus_t st, const char* op, const char* what, int device) {
  tsr_code_t code = TSR_INTERNAL;
  if (st == CUBLAS_STATUS_ALLOC_FAILED)
    code = TSR_RESOURCE_EXHAUSTED;
  else if (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE)
    code = TSR_INVALID_ARGUMENT;
  fail(code, op, ": ", what, " failed on cuda:", device, ": ", cublasGetStatusName(st), " (", cublasGetStatusString(st),
       ")");
}

void throw_cusolver_error(cusolverStatus_t st, const char* op, const char* what, int device) {
  tsr_code_t code = TSR_INTERNAL;
  if (st == CUSOLVER_STATUS_ALLOC_FAILED)
    code = TSR_RESOURCE_EXHAUSTED;
  else if (st == CUSOLVER_STATUS_NOT_SUPPORTED || st == CUSOLVER_STATUS_INVALID_VALUE)
    code = TSR_INVALID_ARGUMENT;
  fail(code, op, ": ", what, " failed on cuda:", device, ": cusolver status ", int(st));
}

}  // namespace tsr::cuda

namespace tsr::cuda {
void throw_cudnn_error(cudnnStatus_t st, const char* op, const char* what, int device) {
  tsr_code_t code = TSR_INTERNAL;
  // cuDNN 9 status codes come in categories of 1000 (BAD_PARAM_*, NOT_SUPPORTED_*, ...). A
  // configuration cuDNN does not support is UNIMPLEMENTED so that a caller can fall back.
  if (st == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
      st == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
    code = TSR_RESOURCE_EXHAUSTED;
  else if (int(st) / 1000 == int(CUDNN_STATUS_NOT_SUPPORTED) / 1000)
    code = TSR_UNIMPLEMENTED;
  else if (int(st) / 1000 == int(CUDNN_STATUS_BAD_PARAM) / 1000)
    code = TSR_INVALID_ARGUMENT;
  fail(code, op, ": ", what, " failed on cuda:", device, ": ", cudnnGetErrorString(st));
}
}  // namespace tsr::cuda
