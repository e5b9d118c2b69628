// Tessera SDK: the per-element updates of the fused optimizer steps (sgd_step_, adam_step_),
// shared by the CPU and CUDA backends. Math in float (double for float64 params), results
// rounded once into the param's dtype. Operands (pointers to the element's storage, or base
// pointers indexed by i): param[, state...], grad last.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "tessera/kernels/math.hpp"
#include "tessera/plugin.hpp"

namespace tsr::kernels {

template <class T>
using optim_acc_t = std::conditional_t<std::is_same<T, double>::value, double, float>;

// SGD: operands param[, momentum_buffer], grad (args: 3 lr, 4 momentum, 5 dampening,
// 6 weight_decay, 7 nesterov, 8 maximize, 9 first step).
template <class T, bool MOMENTUM>
struct SgdStepOp {
  using C = optim_acc_t<T>;
  static constexpr int N = MOMENTUM ? 3 : 2;
  C lr, mom, damp, wd;
  bool nesterov, maximize, first;

  static SgdStepOp make(const KernelCall& c) {
    return SgdStepOp{C(c.arg_double(3)), C(c.arg_double(4)), C(c.arg_double(5)), C(c.arg_double(6)),
                     c.arg_bool(7),      c.arg_bool(8),      c.arg_bool(9)};
  }
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE void operator()(T* const* p, int64_t i) const {
    C param = C(p[0][i]);
    C g = C(p[N - 1][i]);
    if (maximize) g = -g;
    if (wd != 0) g += wd * param;
    if constexpr (MOMENTUM) {
      C buf = first ? g : mom * C(p[1][i]) + (1 - damp) * g;
      p[1][i] = T(buf);
      g = nesterov ? g + mom * buf : buf;
    }
    p[0][i] = T(param - lr * g);
  }
};

// Adam/AdamW: operands param, exp_avg, exp_avg_sq[, max_exp_avg_sq], grad (args: 5 step, 6 lr,
// 7 beta1, 8 beta2, 9 eps, 10 weight_decay, 12 decoupled (AdamW), 13 maximize). The bias
// corrections are computed in double once per call (as torch computes them on the host).
template <class T, bool AMSGRAD>
struct AdamStepOp {
  using C = optim_acc_t<T>;
  static constexpr int N = AMSGRAD ? 5 : 4;
  C eps, wd, step_size, bc2_sqrt, lrc, one_m_b1, b2c, one_m_b2;
  bool decoupled, maximize;

  static AdamStepOp make(const KernelCall& c) {
    const int64_t step = c.arg_int(5);
    const double lr = c.arg_double(6), b1 = c.arg_double(7), b2 = c.arg_double(8);
    AdamStepOp op;
    op.eps = C(c.arg_double(9));
    op.wd = C(c.arg_double(10));
    op.decoupled = c.arg_bool(12);
    op.maximize = c.arg_bool(13);
    op.step_size = C(lr / (1 - std::pow(b1, double(step))));
    op.bc2_sqrt = C(std::sqrt(1 - std::pow(b2, double(step))));
    op.lrc = C(lr);
    op.one_m_b1 = C(1 - b1);
    op.b2c = C(b2);
    op.one_m_b2 = C(1 - b2);
    return op;
  }
  TSR_HOST_DEVICE TSR_ALWAYS_INLINE void operator()(T* const* p, int64_t i) const {
    C param = C(p[0][i]);
    C g = C(p[N - 1][i]);
    if (maximize) g = -g;
    if (wd != 0) {
      if (decoupled)
        param *= 1 - lrc * wd;
      else
        g += wd * param;
    }
    C m = C(p[1][i]);
    m += one_m_b1 * (g - m);
    C v = b2c * C(p[2][i]) + one_m_b2 * g * g;
    p[1][i] = T(m);
    p[2][i] = T(v);
    C vhat = v;
    if constexpr (AMSGRAD) {
      const C prev = C(p[3][i]);
      vhat = prev < v ? v : prev;  // std::max(prev, v)
      p[3][i] = T(vhat);
    }
    const C denom = libm::sqrt(vhat) / bc2_sqrt + eps;
    p[0][i] = T(param - step_size * m / denom);
  }
};

// The step variant a call asks for, as both backends select it: sgd_step_ keeps a momentum
// buffer when it has two outputs (param, buffer); adam_step_ keeps AMSGrad's running maximum when
// it has four (param, exp_avg, exp_avg_sq, max_exp_avg_sq). Calls run(TypeTag<Op>{}, TypeTag<T>{})
// with T the param's floating type and Op the step for it.
template <class Run>
void dispatch_sgd_step(const KernelCall& c, const Run& run) {
  const bool momentum = c.num_outputs() == 2;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (momentum)
      run(TypeTag<SgdStepOp<T, true>>{}, tag);
    else
      run(TypeTag<SgdStepOp<T, false>>{}, tag);
  });
}

template <class Run>
void dispatch_adam_step(const KernelCall& c, const Run& run) {
  const bool amsgrad = c.num_outputs() == 4;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (amsgrad)
      run(TypeTag<AdamStepOp<T, true>>{}, tag);
    else
      run(TypeTag<AdamStepOp<T, false>>{}, tag);
  });
}

}  // namespace tsr::kernels
