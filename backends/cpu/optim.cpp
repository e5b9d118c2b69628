// Fused SGD and Adam/AdamW steps: one pass over param, state and grad, math in float (double
// for float64 params), results rounded once into the param's dtype. Iteration operands:
// outputs param[, state...] then the grad.
#include <cmath>

#include "cpu_common.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using acc_t = std::conditional_t<std::is_same<T, double>::value, double, float>;

// Runs f(i, ptr...) over every element: plain pointers when every operand is contiguous (the
// loop vectorizes), byte strides otherwise.
template <int NOPS, class T, class F>
void step_loop(const tsr_iter_t& it, const F& f) {
  parallel_for_each_element<NOPS>(it, [&](char* const* ptrs, const int64_t* strides, int64_t n) {
    bool dense = true;
    for (int k = 0; k < NOPS; ++k) dense = dense && strides[k] == int64_t(sizeof(T));
    if (dense) {
      T* p[NOPS];
      for (int k = 0; k < NOPS; ++k) p[k] = reinterpret_cast<T*>(ptrs[k]);
      for (int64_t i = 0; i < n; ++i) f(p, i);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        T* p[NOPS];
        for (int k = 0; k < NOPS; ++k) p[k] = reinterpret_cast<T*>(ptrs[k] + i * strides[k]);
        f(p, 0);
      }
    }
  });
}

template <class T, bool MOMENTUM>
void sgd_typed(KernelCall& c) {
  using C = acc_t<T>;
  const C lr = C(c.arg_double(3)), mom = C(c.arg_double(4)), damp = C(c.arg_double(5)), wd = C(c.arg_double(6));
  const bool nesterov = c.arg_bool(7), maximize = c.arg_bool(8), first = c.arg_bool(9);
  constexpr int N = MOMENTUM ? 3 : 2;
  step_loop<N, T>(c.iter(), [=](T* const* p, int64_t i) {
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
  });
}

void sgd_step_kernel(KernelCall& c) {
  const bool momentum = c.num_outputs() == 2;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (momentum) sgd_typed<T, true>(c);
    else sgd_typed<T, false>(c);
  });
}

template <class T, bool AMSGRAD>
void adam_typed(KernelCall& c) {
  using C = acc_t<T>;
  const int64_t step = c.arg_int(5);
  const double lr = c.arg_double(6), b1 = c.arg_double(7), b2 = c.arg_double(8);
  const C eps = C(c.arg_double(9)), wd = C(c.arg_double(10));
  const bool decoupled = c.arg_bool(12), maximize = c.arg_bool(13);
  // Bias corrections in double, once per call (as torch computes them on the host).
  const C step_size = C(lr / (1 - std::pow(b1, double(step))));
  const C bc2_sqrt = C(std::sqrt(1 - std::pow(b2, double(step))));
  const C lrc = C(lr), one_m_b1 = C(1 - b1), b2c = C(b2), one_m_b2 = C(1 - b2);
  constexpr int N = AMSGRAD ? 5 : 4;
  step_loop<N, T>(c.iter(), [=](T* const* p, int64_t i) {
    C param = C(p[0][i]);
    C g = C(p[N - 1][i]);
    if (maximize) g = -g;
    if (wd != 0) {
      if (decoupled) param *= 1 - lrc * wd;
      else g += wd * param;
    }
    C m = C(p[1][i]);
    m += one_m_b1 * (g - m);
    C v = b2c * C(p[2][i]) + one_m_b2 * g * g;
    p[1][i] = T(m);
    p[2][i] = T(v);
    C vhat = v;
    if constexpr (AMSGRAD) {
      vhat = std::max(C(p[3][i]), v);
      p[3][i] = T(vhat);
    }
    const C denom = std::sqrt(vhat) / bc2_sqrt + eps;
    p[0][i] = T(param - step_size * m / denom);
  });
}

void adam_step_kernel(KernelCall& c) {
  const bool amsgrad = c.num_outputs() == 4;
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (amsgrad) adam_typed<T, true>(c);
    else adam_typed<T, false>(c);
  });
}

}  // namespace

TSR_CPU_KERNELS(optim) {
  r.kernel("sgd_step_", "cpu::sgd_step_", device_type, kFloatingMask, TSR_KERNEL(sgd_step_kernel));
  r.kernel("adam_step_", "cpu::adam_step_", device_type, kFloatingMask, TSR_KERNEL(adam_step_kernel));
}

}  // namespace tsr::cpu
