// Tessera SDK: rand/randn over the Philox stream of tessera/philox.h, one Philox block at a
// time, shared by the CPU and CUDA backends (a seed gives the same numbers on both: rand bit
// for bit, randn up to the libm differences in log/sin/cos, a few ulp).
// Elements are numbered in row-major order of the dense output; block j (of offset + j) writes
// elements [4j, 4j + 4) (rand f64: [2j, 2j + 2)) that are < n.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessera/dtype.hpp"
#include "tessera/philox.h"

namespace tsr::kernels {

// The largest T below 1 (f16/bf16 round float uniforms near 1 up to 1.0, and rand promises
// [0, 1)): computed once on the host and passed to the block function.
template <class T>
inline float rand_below_one() {
  float c = 1.0f - 1.0f / 16777216.0f;
  while (static_cast<float>(static_cast<T>(c)) >= 1.0f) c = 2.0f * c - 1.0f;
  return static_cast<float>(static_cast<T>(c));
}

// Blocks needed for n elements.
template <class T, bool NORMAL>
TSR_HOST_DEVICE inline int64_t random_blocks(int64_t n) {
  return (!NORMAL && std::is_same<T, double>::value) ? (n + 1) / 2 : (n + 3) / 4;
}

// Writes the elements of block j of rand (NORMAL = false) or randn into out[0..n).
template <class T, bool NORMAL>
TSR_HOST_DEVICE inline void random_block(T* out, int64_t n, uint64_t seed, uint64_t offset, int64_t j,
                                         float below_one) {
  const tsr_philox4x32_t r = tsr_philox_block(seed, offset + static_cast<uint64_t>(j));
  if constexpr (!NORMAL && std::is_same<T, double>::value) {
    (void)below_one;
    const int64_t i = 2 * j;
    out[i] = tsr_philox_uniform_f64(r.v[0], r.v[1]);
    if (i + 1 < n) out[i + 1] = tsr_philox_uniform_f64(r.v[2], r.v[3]);
  } else {
    const int64_t i = 4 * j;
    const int64_t cnt = n - i < 4 ? n - i : 4;
    if constexpr (!NORMAL) {
      for (int64_t l = 0; l < cnt; ++l) {
        const T v = static_cast<T>(tsr_philox_uniform_f32(r.v[l]));
        out[i + l] = static_cast<float>(v) < 1.0f ? v : static_cast<T>(below_one);
      }
    } else if constexpr (std::is_same<T, double>::value) {
      (void)below_one;
      double z[4];
      tsr_philox_normal4_f64(r, z);
      for (int64_t l = 0; l < cnt; ++l) out[i + l] = z[l];
    } else {
      (void)below_one;
      float z[4];
      tsr_philox_normal4_f32(r, z);
      for (int64_t l = 0; l < cnt; ++l) out[i + l] = static_cast<T>(z[l]);
    }
  }
}

}  // namespace tsr::kernels
