// Fused SGD and Adam/AdamW steps: one pass over param, state and grad, math in float (double
// for float64 params), results rounded once into the param's dtype. Iteration operands:
// outputs param[, state...] then the grad.
#include <cmath>

#include "cpu_common.hpp"
#include "tessera/kernels/optim_ops.hpp"

namespace tsr::cpu {
namespace {

// The dense loop, multiversioned, over local copies of the step (its float coefficients, which
// the compiler otherwise had to reload after every float store, as those might change them) and
// of the pointers: it vectorizes. Inside the lambda, on the caller's step, it compiled for
// baseline x86-64 and ran one element at a time (an AdamW step over a GPT's parameters took 1.3%
// of its training step).
template <int NOPS, class T, class F>
TSR_CPU_MULTIVERSION void dense_step(char* const* ptrs, int64_t n, const F& f) {
  const F step = f;
  T* p[NOPS];
  for (int k = 0; k < NOPS; ++k) p[k] = reinterpret_cast<T*>(ptrs[k]);
  for (int64_t i = 0; i < n; ++i) step(p, i);
}

// Runs f(ptrs, i) over every element: plain pointers when every operand is contiguous (the
// loop vectorizes), byte strides otherwise.
template <int NOPS, class T, class F>
void step_loop(const tsr_iter_t& it, const F& f) {
  parallel_for_each_element<NOPS>(it, [&](char* const* ptrs, const int64_t* strides, int64_t n) {
    bool dense = true;
    for (int k = 0; k < NOPS; ++k) dense = dense && strides[k] == int64_t(sizeof(T));
    if (dense) {
      dense_step<NOPS, T>(ptrs, n, f);
    } else {
      for (int64_t i = 0; i < n; ++i) {
        T* p[NOPS];
        for (int k = 0; k < NOPS; ++k) p[k] = reinterpret_cast<T*>(ptrs[k] + i * strides[k]);
        f(p, 0);
      }
    }
  });
}

// One fused step: Op (tessera/kernels/optim_ops.hpp) applied to every element.
template <class Op, class T>
void step_typed(KernelCall& c) {
  const Op op = Op::make(c);
  step_loop<Op::N, T>(c.iter(), [op](T* const* p, int64_t i) { op(p, i); });
}

// step_typed<Op, T> for the variant the call selects (tessera/kernels/optim_ops.hpp).
void sgd_step_kernel(KernelCall& c) {
  kernels::dispatch_sgd_step(
      c, [&c](auto op, auto t) { step_typed<typename decltype(op)::type, typename decltype(t)::type>(c); });
}
void adam_step_kernel(KernelCall& c) {
  kernels::dispatch_adam_step(
      c, [&c](auto op, auto t) { step_typed<typename decltype(op)::type, typename decltype(t)::type>(c); });
}

}  // namespace

TSR_CPU_KERNELS(optim) {
  r.kernel("sgd_step_", "cpu::sgd_step_", device_type, kFloatingMask, TSR_KERNEL(sgd_step_kernel));
  r.kernel("adam_step_", "cpu::adam_step_", device_type, kFloatingMask, TSR_KERNEL(adam_step_kernel));
}

}  // namespace tsr::cpu
