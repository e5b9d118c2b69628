// Internal to the CPU backend: registration entry points of each kernel file, and small helpers.
// Includes only abi/ and sdk/ headers.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessera/dtype.hpp"
#include "tessera/iter.hpp"
#include "tessera/plugin.hpp"

namespace tsr::cpu {

// device.cpp: parses TESSERA_CPU_DEVICES, registers the "cpu" device type and the raw
// allocator; returns the device type id.
int32_t register_device(Registrar& r);

void register_binary_kernels(Registrar& r, int32_t device_type);           // elementwise_binary.cpp
void register_unary_kernels(Registrar& r, int32_t device_type);            // elementwise_unary.cpp
void register_compare_where_clamp_kernels(Registrar& r, int32_t device_type);  // compare_where_clamp.cpp
void register_copy_fill_arange_kernels(Registrar& r, int32_t device_type); // copy_fill_arange.cpp
void register_reduce_kernels(Registrar& r, int32_t device_type);           // reduce.cpp
void register_softmax_kernels(Registrar& r, int32_t device_type);          // softmax.cpp
void register_matmul_kernels(Registrar& r, int32_t device_type);           // matmul.cpp
void register_random_kernels(Registrar& r, int32_t device_type);           // random.cpp

// Unsigned type wide enough that arithmetic on it wraps (no promotion to int, no UB).
template <class T>
using wrap_t = std::conditional_t<(sizeof(T) <= 4), uint32_t, uint64_t>;

template <class T>
inline T wrap_add(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) + static_cast<wrap_t<T>>(b)); }
template <class T>
inline T wrap_sub(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) - static_cast<wrap_t<T>>(b)); }
template <class T>
inline T wrap_mul(T a, T b) { return static_cast<T>(static_cast<wrap_t<T>>(a) * static_cast<wrap_t<T>>(b)); }

// Total elements of a view.
inline int64_t view_numel(const tsr_tensor_view_t& v) {
  int64_t n = 1;
  for (int32_t d = 0; d < v.ndim; ++d) n *= v.sizes[d];
  return n;
}

}  // namespace tsr::cpu
