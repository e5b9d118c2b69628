// A plugin that overrides the core's float32 `neg` on the cpu device type (higher priority)
// with a kernel broken as BAD_KERNEL says, for `tessera certify`'s verdicts:
//   1 wrong result    computes x instead of -x (loads, runs, answers wrongly)
//   2 out of bounds   correct, then writes 64 floats past the end of its output
//   3 segfault        dereferences a null pointer
//   0 (none)          a correct kernel: the certificate is complete for neg
// Only ever run through `tessera certify` / `tessera check-plugin` (child processes).
#include <cstring>

#include "tessera/plugin.hpp"

#ifndef BAD_KERNEL
#define BAD_KERNEL 0
#endif
#ifndef BAD_NAME
#define BAD_NAME "badk"
#endif

namespace {

// out = -in elementwise over the iterator (operand 0 the output, 1 the input; byte strides).
void neg_f32(tsr::KernelCall& k) {
  const tsr_iter_t& it = k.iter();
  int64_t idx[TSR_MAX_DIMS] = {0};
  for (int64_t n = 0; n < it.numel; ++n) {
    int64_t off0 = 0, off1 = 0;
    for (int32_t d = 0; d < it.ndim; ++d) {
      off0 += idx[d] * it.strides[0][d];
      off1 += idx[d] * it.strides[1][d];
    }
    const float x = *reinterpret_cast<const float*>(it.data[1] + off1);
    *reinterpret_cast<float*>(it.data[0] + off0) = BAD_KERNEL == 1 ? x : -x;
    for (int32_t d = 0; d < it.ndim; ++d) {  // odometer, innermost dimension first
      if (++idx[d] < it.sizes[d]) break;
      idx[d] = 0;
    }
  }
#if BAD_KERNEL == 2
  // The overrun: 64 floats past the last element of the (dense) output.
  if (it.numel > 0) {
    const tsr_tensor_view_t& out = k.output(0);
    float* end = static_cast<float*>(out.data) + it.numel;
    for (int i = 0; i < 64; ++i) end[i] = 1.0f;
  }
#elif BAD_KERNEL == 3
  volatile float* volatile p = nullptr;
  *p = 1.0f;
#endif
}

void* init(tsr::Registrar& r) {
  int32_t cpu = 0;
  tsr::check(r.api(), r.api()->device_type_lookup(r.runtime(), "cpu", &cpu));
  r.kernel("neg", BAD_NAME "::neg_f32", cpu, TSR_DTYPE_BIT(TSR_F32), TSR_KERNEL(neg_f32), /*priority=*/100);
  return nullptr;
}

}  // namespace

TSR_DEFINE_PLUGIN(BAD_NAME, "0.1", "a deliberately broken neg kernel", nullptr, init, nullptr)
