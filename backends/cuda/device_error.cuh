// Device side of the CUDA backend's error records (see DeviceErrorRecord in cuda_common.hpp).
#pragma once

#include "cuda_common.hpp"

namespace tsr::cuda {

// Records the first error of the device; later ones are dropped (the first is reported).
__device__ inline void report_device_error(DeviceErrorRecord* rec, int32_t code, int32_t op_id, int64_t value,
                                           int64_t bound, int32_t dim) {
  if (atomicCAS(&rec->code, 0, code) == 0) {
    rec->op_id = op_id;
    rec->value = value;
    rec->bound = bound;
    rec->dim = dim;
    __threadfence_system();
  }
}

__device__ inline void report_index_error(DeviceErrorRecord* rec, int32_t op_id, int64_t value, int64_t bound,
                                          int32_t dim) {
  report_device_error(rec, kDeviceErrorIndex, op_id, value, bound, dim);
}

// Wraps a negative index once (Python style); returns false when out of [0, size).
__device__ inline bool wrap_index(int64_t& i, int64_t size) {
  if (i < 0) i += size;
  return i >= 0 && i < size;
}

}  // namespace tsr::cuda
