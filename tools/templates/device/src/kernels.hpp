// @NAME@: the kernel files' registration functions (one per file, called from device.cpp).
#pragma once

#include <cstdint>

#include "tessera/plugin.hpp"

namespace @NAME@ {

// The dtypes this backend computes in. Conformance checks only the dtypes a device registers
// kernels for; add a bit here (and the matching case in each kernel) to grow coverage.
constexpr uint32_t kFloatMask = TSR_DTYPE_BIT(TSR_F32) | TSR_DTYPE_BIT(TSR_F64);

void register_memory_kernels(tsr::Registrar& r, int32_t device_type);       // _copy, _fill
void register_elementwise_kernels(tsr::Registrar& r, int32_t device_type);  // add ... where (arithmetic, unary math, comparisons)
void register_reduce_kernels(tsr::Registrar& r, int32_t device_type);       // sum, mean, amax
void register_matmul_kernels(tsr::Registrar& r, int32_t device_type);       // mm

}  // namespace @NAME@
