// _copy (any dtype to any dtype, strided), _fill, arange.
#include <cstring>

#include "cpu_common.hpp"
#include "tessera/kernels/fill_ops.hpp"

namespace tsr::cpu {
namespace {

// Contiguous same-dtype copy: memcpy, split across threads for large buffers.
void parallel_memcpy(char* dst, const char* src, int64_t nbytes) {
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
  dispatch_all(out_dt, "_copy", [&](auto otag) {
    using T = typename decltype(otag)::type;
    dispatch_all(src_dt, "_copy", [&](auto stag) {
      using S = typename decltype(stag)::type;
      const kernels::CastOp<T, S> op;
      if constexpr (!std::is_same<T, S>::value && (is_reduced_float<T>::value || is_reduced_float<S>::value))
        elementwise_mv<kernels::Elem<T>, kernels::Elem<S>>(it, op);
      else
        elementwise<kernels::Elem<T>, kernels::Elem<S>>(it, op);
    });
  });
}

void fill_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  if (it.numel == 0) return;
  dispatch_all(c.dtype(), "_fill", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using TO = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;
    const TO v = static_cast<TO>(c.arg_scalar<T>(1));
    if (it.contiguous) {
      TO* p = reinterpret_cast<TO*>(it.data[0]);
      parallel_for(
          0, it.numel, kParallelGrain,
          [&](int64_t b, int64_t e) {
            for (int64_t i = b; i < e; ++i) p[i] = v;
          },
          64);
    } else {
      elementwise<TO>(it, kernels::ConstantOp<TO>{v});
    }
  });
}

void arange_kernel(KernelCall& c) {
  const tsr_tensor_view_t& out = c.output(0);
  const int64_t n = view_numel(out);
  if (n == 0) return;
  const int64_t stride = out.ndim >= 1 ? out.strides[0] : 1;
  dispatch_numeric(c.dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(out.data);
    const kernels::ArangeOp<T> op = kernels::make_arange_op<T>(c);
    parallel_for(0, n, kParallelGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i * stride] = op(i);
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(copy_fill_arange) {
  r.kernel("_copy", "cpu::copy", device_type, kAllMask, TSR_KERNEL(copy_kernel));
  r.kernel("_fill", "cpu::fill", device_type, kAllMask, TSR_KERNEL(fill_kernel));
  r.kernel("arange", "cpu::arange", device_type, kNumericMask, TSR_KERNEL(arange_kernel));
}

}  // namespace tsr::cpu
