// _copy (any dtype to any dtype, strided): memcpy for dense same-dtype copies, kernels::CastOp
// otherwise.
#include <cstring>

#include "cpu_common.hpp"
#include "tessera/kernels/fill_ops.hpp"

namespace tsr::cpu {
namespace {

// Contiguous same-dtype copy: memcpy, split across threads for large buffers. copy_ and the
// dispatcher refuse partially overlapping tensors (core tensor/overlap.hpp), but the core's own
// copies are not checked: a copy onto itself is nothing to do, and overlapping ranges take one
// memmove, so that memcpy never sees overlapping ranges.
void parallel_memcpy(char* dst, const char* src, int64_t nbytes) {
  if (dst == src || nbytes <= 0) return;
  if (dst < src + nbytes && src < dst + nbytes) {
    std::memmove(dst, src, static_cast<size_t>(nbytes));
    return;
  }
  constexpr int64_t kGrain = int64_t(1) << 20;  // 1 MiB per thread at least
  parallel_for(
      0, nbytes, kGrain, [&](int64_t b, int64_t e) { std::memcpy(dst + b, src + b, static_cast<size_t>(e - b)); },
      /*align=*/4096);
}

void copy_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  if (it.numel == 0) return;
  const int32_t out_dt = c.dtype();
  const int32_t src_dt = it.noperands > 1 ? it.dtypes[1] : out_dt;
  if (out_dt == src_dt && it.contiguous) {
    parallel_memcpy(it.data[0], it.data[1], it.numel * int64_t(itemsize(out_dt)));
    return;
  }
  if (out_dt == TSR_F4_E2M1FN_X2 || src_dt == TSR_F4_E2M1FN_X2) {  // packed pairs: bytes only
    kernels::check_packed_copy(out_dt, src_dt);
    elementwise<uint8_t, uint8_t>(it, kernels::CastOp<uint8_t, uint8_t>{});
    return;
  }
  dispatch_castable(out_dt, "_copy", [&](auto otag) {
    using T = typename decltype(otag)::type;
    dispatch_castable(src_dt, "_copy", [&](auto stag) {
      using S = typename decltype(stag)::type;
      const kernels::CastOp<T, S> op;
      if constexpr (!std::is_same<T, S>::value && (is_reduced_float<T>::value || is_reduced_float<S>::value))
        elementwise_mv<kernels::Elem<T>, kernels::Elem<S>>(it, op);
      else
        elementwise<kernels::Elem<T>, kernels::Elem<S>>(it, op);
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(copy) { r.kernel("_copy", "cpu::copy", device_type, kMovableMask, TSR_KERNEL(copy_kernel)); }

}  // namespace tsr::cpu
