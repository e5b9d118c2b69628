// A deliberately wrong backend for the conformance suite's own tests: an arange kernel for
// float32 on the CPU device type, preferred over the CPU plugin's, whose fourth element is off
// by 0.5. `tessera conformance --plugin` must fail it (float32 only) and exit nonzero.
#include "tessera/plugin.hpp"

namespace {

void broken_arange(tsr::KernelCall& c) {
  const tsr_tensor_view_t& out = c.output(0);
  int64_t n = 1;
  for (int32_t d = 0; d < out.ndim; ++d) n *= out.sizes[d];
  const int64_t stride = out.ndim >= 1 ? out.strides[0] : 1;
  const double start = c.arg_double(0), step = c.arg_double(2);
  float* p = static_cast<float*>(out.data);
  for (int64_t i = 0; i < n; ++i)
    p[i * stride] = static_cast<float>(start + static_cast<double>(i) * step + (i == 3 ? 0.5 : 0.0));
}

void init(tsr::Registrar& r) {
  r.kernel("arange", "broken_arange::arange_f32", TSR_DEVICE_TYPE_CPU, TSR_DTYPE_BIT(TSR_F32),
           TSR_KERNEL(broken_arange), /*priority=*/100);
}

}  // namespace

TSR_DEFINE_PLUGIN("broken_arange", "0.0.1", "conformance test: a wrong arange kernel", nullptr, init, nullptr)
