// Tensors inside the core: ref-counted storage plus a strided view of it.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstring>

#include "allocator.hpp"
#include "dtype.hpp"
#include "tessera/api.h"

struct tsr_runtime_s;

namespace tsr::core {

// A block of device memory shared by every view of it.
struct Storage {
  std::atomic<int64_t> refs{1};
  void* data = nullptr;
  size_t nbytes = 0;
  DeviceAllocator* allocator = nullptr;  // frees data; nullptr = not owned
  tsr_device_t device{};

  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (allocator) allocator->deallocate(data);
      delete this;
    }
  }
};

}  // namespace tsr::core

struct tsr_tensor_s {
  std::atomic<int32_t> refs{1};
  int32_t ndim = 0;
  tsr_dtype_t dtype = TSR_F32;
  tsr_device_t device{};
  bool wrapped_number = false;  // a C++/Python scalar for type promotion
  bool contiguous = true;       // cached: row-major dense
  tsr_runtime_s* runtime = nullptr;
  tsr::core::Storage* storage = nullptr;
  int64_t offset = 0;  // elements
  int64_t numel = 1;
  int64_t sizes[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS];

  void* data() const {
    return static_cast<char*>(storage->data) +
           offset * static_cast<int64_t>(tsr::core::dtype_size(dtype));
  }
  void retain() { refs.fetch_add(1, std::memory_order_relaxed); }
  void release() {
    if (refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      if (storage) storage->release();
      delete this;
    }
  }
};

namespace tsr::core {

using Tensor = tsr_tensor_s;

// Recomputes numel and the contiguous flag from sizes/strides.
void refresh_layout(Tensor* t);
// Fills row-major strides for sizes; returns numel (or -1 on overflow).
int64_t contiguous_strides(int ndim, const int64_t* sizes, int64_t* strides);
// Validates a shape (ndim range, non-negative sizes, numel overflow); names `op` in errors.
tsr_status_t check_shape(const char* op, int ndim, const int64_t* sizes, int64_t* numel);
// New tensor sharing t's storage with a new geometry.
Tensor* make_view(const Tensor* t, int ndim, const int64_t* sizes, const int64_t* strides,
                  int64_t offset);
// Wraps a negative dim; error names op and the valid range.
tsr_status_t wrap_dim(const char* op, int64_t dim, int ndim, int* out);

}  // namespace tsr::core
