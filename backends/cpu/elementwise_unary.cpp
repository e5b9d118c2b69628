// neg, abs, relu, exp, log, sqrt, rsqrt, tanh, sigmoid, silu, gelu, and gelu's fused backward.
#include <cmath>
#include <cstring>

#include "cpu_common.hpp"
#include "cpu_math.hpp"
#include "unary_math.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using C = compute_t<T>;

void neg_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_numeric(c.dtype(), "neg", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value) {
      elementwise<T, T>(it, [](T a) { return wrap_sub(T(0), a); });
    } else if constexpr (is_reduced_float<T>::value) {
      elementwise<T, T>(it, [](T a) { return T::from_raw(static_cast<uint16_t>(a.x ^ 0x8000u)); });
    } else {
      elementwise<T, T>(it, [](T a) { return -a; });
    }
  });
}

void abs_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), "abs", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same<T, bool>::value) {
      elementwise<bool, uint8_t>(it, [](uint8_t a) { return a != 0; });
    } else if constexpr (std::is_integral<T>::value && std::is_unsigned<T>::value) {
      elementwise<T, T>(it, [](T a) { return a; });
    } else if constexpr (std::is_integral<T>::value) {
      elementwise<T, T>(it, [](T a) { return a < 0 ? wrap_sub(T(0), a) : a; });
    } else if constexpr (is_reduced_float<T>::value) {
      elementwise<T, T>(it, [](T a) { return T::from_raw(static_cast<uint16_t>(a.x & 0x7fffu)); });
    } else {
      elementwise<T, T>(it, [](T a) { return std::fabs(a); });
    }
  });
}

void relu_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_numeric(c.dtype(), "relu", [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral<T>::value && std::is_unsigned<T>::value) {
      elementwise<T, T>(it, [](T a) { return a; });
    } else {
      // NaN < 0 is false: NaN stays NaN.
      elementwise<T, T>(it, [](T a) { return C<T>(a) < C<T>(0) ? T(0) : a; });
    }
  });
}

// Float-only unary ops: out = F(C(x)) computed in the compute type.
template <class Fn>
void float_unary(KernelCall& c, Fn fn) {
  const tsr_iter_t& it = c.iter();
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    elementwise_mv<T, T>(it, [fn](T a) { return static_cast<T>(fn(C<T>(a))); });
  });
}

struct ExpFn {
  template <class X> X operator()(X x) const { return exp_c<X>(x); }
};
struct LogFn {
  template <class X> X operator()(X x) const { return log_c<X>(x); }
};
struct SqrtFn {
  template <class X> X operator()(X x) const { return std::sqrt(x); }
};
struct RsqrtFn {
  template <class X> X operator()(X x) const { return X(1) / std::sqrt(x); }
};
struct TanhFn {
  template <class X> X operator()(X x) const { return tanh_c<X>(x); }
};
struct SigmoidFn {
  template <class X> X operator()(X x) const { return sigmoid_c<X>(x); }
};
struct SiluFn {
  template <class X> X operator()(X x) const { return x * sigmoid_c<X>(x); }
};
struct GeluErfFn {
  template <class X> X operator()(X x) const { return gelu_erf_fast_c<X>(x); }
};
struct GeluTanhFn {
  template <class X> X operator()(X x) const { return gelu_tanh_fast_c<X>(x); }
};

void exp_kernel(KernelCall& c) { float_unary(c, ExpFn{}); }
void log_kernel(KernelCall& c) { float_unary(c, LogFn{}); }
void sqrt_kernel(KernelCall& c) { float_unary(c, SqrtFn{}); }
void rsqrt_kernel(KernelCall& c) { float_unary(c, RsqrtFn{}); }
void tanh_kernel(KernelCall& c) { float_unary(c, TanhFn{}); }
void sigmoid_kernel(KernelCall& c) { float_unary(c, SigmoidFn{}); }
void silu_kernel(KernelCall& c) { float_unary(c, SiluFn{}); }

void gelu_kernel(KernelCall& c) {
  const char* approx = c.arg_is_none(1) ? "none" : c.arg_str(1);
  if (std::strcmp(approx, "tanh") == 0) {
    float_unary(c, GeluTanhFn{});
  } else if (std::strcmp(approx, "none") == 0) {
    float_unary(c, GeluErfFn{});
  } else {
    fail(TSR_INVALID_ARGUMENT, "gelu: approximate must be 'none' or 'tanh', got '", approx, "'");
  }
}

// _gelu_backward(grad, self, approximate): grad * gelu'(self) in one pass (the autograd formula
// written with ops is nine passes over the tensor).
template <class Fn>
void float_grad(KernelCall& c, Fn fn) {
  const tsr_iter_t& it = c.iter();
  dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    elementwise_mv<T, T, T>(it, [fn](T g, T x) { return static_cast<T>(C<T>(g) * fn(C<T>(x))); });
  });
}
struct GeluErfGradFn {
  template <class X> X operator()(X x) const { return gelu_erf_grad_c<X>(x); }
};
struct GeluTanhGradFn {
  template <class X> X operator()(X x) const { return gelu_tanh_grad_c<X>(x); }
};

void gelu_backward_kernel(KernelCall& c) {
  const char* approx = c.arg_is_none(2) ? "none" : c.arg_str(2);
  if (std::strcmp(approx, "tanh") == 0) {
    float_grad(c, GeluTanhGradFn{});
  } else if (std::strcmp(approx, "none") == 0) {
    float_grad(c, GeluErfGradFn{});
  } else {
    fail(TSR_INVALID_ARGUMENT, "_gelu_backward: approximate must be 'none' or 'tanh', got '", approx, "'");
  }
}

}  // namespace

void register_unary_kernels(Registrar& r, int32_t dt) {
  r.kernel("neg", "cpu::neg", dt, kNumericMask, TSR_KERNEL(neg_kernel));
  r.kernel("abs", "cpu::abs", dt, kAllMask, TSR_KERNEL(abs_kernel));
  r.kernel("relu", "cpu::relu", dt, kNumericMask, TSR_KERNEL(relu_kernel));
  r.kernel("exp", "cpu::exp", dt, kFloatingMask, TSR_KERNEL(exp_kernel));
  r.kernel("log", "cpu::log", dt, kFloatingMask, TSR_KERNEL(log_kernel));
  r.kernel("sqrt", "cpu::sqrt", dt, kFloatingMask, TSR_KERNEL(sqrt_kernel));
  r.kernel("rsqrt", "cpu::rsqrt", dt, kFloatingMask, TSR_KERNEL(rsqrt_kernel));
  r.kernel("tanh", "cpu::tanh", dt, kFloatingMask, TSR_KERNEL(tanh_kernel));
  r.kernel("sigmoid", "cpu::sigmoid", dt, kFloatingMask, TSR_KERNEL(sigmoid_kernel));
  r.kernel("silu", "cpu::silu", dt, kFloatingMask, TSR_KERNEL(silu_kernel));
  r.kernel("gelu", "cpu::gelu", dt, kFloatingMask, TSR_KERNEL(gelu_kernel));
  r.kernel("_gelu_backward", "cpu::gelu_backward", dt, kFloatingMask, TSR_KERNEL(gelu_backward_kernel));
}

}  // namespace tsr::cpu
