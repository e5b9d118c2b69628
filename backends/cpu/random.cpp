// rand, randn: Philox4x32-10 with the mapping of sdk/tessera/philox.h (identical on every
// backend), one block at a time by tessera/kernels/random_ops.hpp.
#include "cpu_common.hpp"
#include "tessera/kernels/random_ops.hpp"

namespace tsr::cpu {
namespace {

constexpr int64_t kBlockGrain = 4096;

// Blocks are independent: split across threads by blocks (kernels::random_block writes one).
template <class T, bool NORMAL>
void random_fill(T* out, int64_t n, uint64_t seed, uint64_t offset) {
  const float below_one = is_reduced_float<T>::value ? kernels::rand_below_one<T>() : 1.0f;
  parallel_for(0, kernels::random_blocks<T, NORMAL>(n), kBlockGrain, [&](int64_t b, int64_t e) {
    for (int64_t j = b; j < e; ++j) kernels::random_block<T, NORMAL>(out, n, seed, offset, j, below_one);
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
    random_fill<T, NORMAL>(p, n, seed, offset);
  });
}

void rand_kernel(KernelCall& c) { random_kernel<false>(c); }
void randn_kernel(KernelCall& c) { random_kernel<true>(c); }

}  // namespace

TSR_CPU_KERNELS(random) {
  r.kernel("rand", "cpu::rand", device_type, kFloatingMask, TSR_KERNEL(rand_kernel));
  r.kernel("randn", "cpu::randn", device_type, kFloatingMask, TSR_KERNEL(randn_kernel));
}

}  // namespace tsr::cpu
