// rand, randn: Philox4x32-10 with the mapping of sdk/tessera/philox.h (identical on every
// backend). Blocks are independent, so the output is split across threads by blocks.
#include <algorithm>

#include "cpu_common.hpp"
#include "tessera/philox.h"

namespace tsr::cpu {
namespace {

constexpr int64_t kBlockGrain = 4096;

// A float32 uniform in [0, 1) rounded to T (f16/bf16 round values near 1 up to 1.0): rand
// promises [0, 1), so those become T's largest value below 1.
template <class T>
T uniform_in(float u) {
  static const float below_one = [] {
    float c = 1.0f - 1.0f / 16777216.0f;
    while (static_cast<float>(static_cast<T>(c)) >= 1.0f) c = 2.0f * c - 1.0f;
    return static_cast<float>(static_cast<T>(c));
  }();
  T v = static_cast<T>(u);
  return static_cast<float>(v) < 1.0f ? v : static_cast<T>(below_one);
}

template <class T>
void rand_fill(T* out, int64_t n, uint64_t seed, uint64_t offset) {
  if constexpr (std::is_same<T, double>::value) {
    const int64_t nblocks = (n + 1) / 2;
    parallel_for(0, nblocks, kBlockGrain, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        const tsr_philox4x32_t r = tsr_philox_block(seed, offset + static_cast<uint64_t>(j));
        const int64_t i = 2 * j;
        out[i] = tsr_philox_uniform_f64(r.v[0], r.v[1]);
        if (i + 1 < n) out[i + 1] = tsr_philox_uniform_f64(r.v[2], r.v[3]);
      }
    });
  } else {
    const int64_t nblocks = (n + 3) / 4;
    parallel_for(0, nblocks, kBlockGrain, [&](int64_t b, int64_t e) {
      for (int64_t j = b; j < e; ++j) {
        const tsr_philox4x32_t r = tsr_philox_block(seed, offset + static_cast<uint64_t>(j));
        const int64_t i = 4 * j;
        const int64_t cnt = std::min<int64_t>(4, n - i);
        for (int64_t l = 0; l < cnt; ++l) out[i + l] = uniform_in<T>(tsr_philox_uniform_f32(r.v[l]));
      }
    });
  }
}

template <class T>
void randn_fill(T* out, int64_t n, uint64_t seed, uint64_t offset) {
  const int64_t nblocks = (n + 3) / 4;
  parallel_for(0, nblocks, kBlockGrain, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) {
      const tsr_philox4x32_t r = tsr_philox_block(seed, offset + static_cast<uint64_t>(j));
      const int64_t i = 4 * j;
      const int64_t cnt = std::min<int64_t>(4, n - i);
      if constexpr (std::is_same<T, double>::value) {
        double z[4];
        tsr_philox_normal4_f64(r, z);
        for (int64_t l = 0; l < cnt; ++l) out[i + l] = z[l];
      } else {
        float z[4];
        tsr_philox_normal4_f32(r, z);
        for (int64_t l = 0; l < cnt; ++l) out[i + l] = static_cast<T>(z[l]);
      }
    }
  });
}

template <bool NORMAL>
void random_kernel(KernelCall& c) {
  const tsr_tensor_view_t& out = c.output(0);
  const int64_t n = view_numel(out);
  if (n == 0) return;
  const uint64_t seed = static_cast<uint64_t>(c.arg_int(3));
  const uint64_t offset = static_cast<uint64_t>(c.arg_int(4));
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(out.data);
    if (NORMAL) randn_fill<T>(p, n, seed, offset);
    else rand_fill<T>(p, n, seed, offset);
  });
}

void rand_kernel(KernelCall& c) { random_kernel<false>(c); }
void randn_kernel(KernelCall& c) { random_kernel<true>(c); }

}  // namespace

void register_random_kernels(Registrar& r, int32_t dt) {
  r.kernel("rand", "cpu::rand", dt, kFloatingMask, TSR_KERNEL(rand_kernel));
  r.kernel("randn", "cpu::randn", dt, kFloatingMask, TSR_KERNEL(randn_kernel));
}

}  // namespace tsr::cpu
