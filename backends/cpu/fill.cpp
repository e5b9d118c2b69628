// _fill (kernels::ConstantOp, a plain loop for dense outputs) and arange (kernels::ArangeOp, the
// per-element formula the CUDA backend uses).
#include "cpu_common.hpp"
#include "tessera/kernels/fill_ops.hpp"

namespace tsr::cpu {
namespace {

void fill_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  if (it.numel == 0) return;
  dispatch_castable(c.dtype(), "_fill", [&](auto tag) {
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

TSR_CPU_KERNELS(fill) {
  r.kernel("_fill", "cpu::fill", device_type, kCastableMask, TSR_KERNEL(fill_kernel));
  r.kernel("arange", "cpu::arange", device_type, kNumericMask, TSR_KERNEL(arange_kernel));
}

}  // namespace tsr::cpu
