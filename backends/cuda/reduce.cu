// sum, mean, amax, amin, argmax on CUDA over the core's reduction iteration (the first nreduce
// dims reduced; see reduce_engine.cuh for the launch strategies). Semantics as the CPU backend
// (backends/cpu/reduce.cpp):
//  - sum/mean of f16/bf16/f32/f64 accumulate in double (the CPU accumulates blocks in double);
//    integer sums wrap in 64 bits; mean divides the double total by the count;
//  - amax/amin propagate NaN; bool is max = any, min = all;
//  - argmax returns the index of the first maximum, or of the first NaN when there is one.
#include "reduce_engine.cuh"

namespace tsr::cuda {
namespace {

using red::C;
using red::Elem;

template <class T_, bool MEAN>
struct SumR {
  using T = T_;
  using acc_t = std::conditional_t<is_float_type<T>::value, double, unsigned long long>;
  __device__ acc_t init() const { return acc_t(0); }
  __device__ void step(acc_t& a, T x, int64_t) const {
    if constexpr (is_float_type<T>::value)
      a += double(C<T>(x));
    else
      a += static_cast<unsigned long long>(static_cast<long long>(x));
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return a + b; }
  __device__ void finish(int64_t, char* out, acc_t a, int64_t count) const {
    T v;
    if constexpr (MEAN)
      v = static_cast<T>(static_cast<C<T>>(double(a) / double(count)));
    else if constexpr (is_float_type<T>::value)
      v = static_cast<T>(static_cast<C<T>>(a));
    else
      v = static_cast<T>(a);  // wraps modulo 2^bits
    *reinterpret_cast<T*>(out) = v;
  }
};

template <class T_, bool MAX>
struct MaxMinR {
  using T = T_;
  using acc_t = C<T>;
  __device__ acc_t init() const { return MAX ? red::lowest_or_neg_inf<acc_t>() : red::highest_or_inf<acc_t>(); }
  __device__ void step(acc_t& a, T x, int64_t) const { a = combine(a, acc_t(x)); }
  __device__ acc_t combine(acc_t a, acc_t b) const { return MAX ? red::max_nan(a, b) : red::min_nan(a, b); }
  __device__ void finish(int64_t, char* out, acc_t a, int64_t) const { *reinterpret_cast<T*>(out) = static_cast<T>(a); }
};

template <class CT>
struct ValIdx {
  CT v;
  int64_t i;
};

// The first NaN, else the first maximum: every candidate carries its index, so combining in any
// order gives the CPU's sequential answer.
template <class T_>
struct ArgMaxR {
  using T = T_;
  using CT = C<T>;
  using acc_t = ValIdx<CT>;
  __device__ acc_t init() const { return {red::lowest_or_neg_inf<CT>(), INT64_MAX}; }
  __device__ void step(acc_t& a, T x, int64_t k) const { a = combine(a, acc_t{CT(x), k}); }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    const bool an = red::is_nan(a.v), bn = red::is_nan(b.v);
    if (an || bn) {
      if (an && bn) return a.i <= b.i ? a : b;
      return an ? a : b;
    }
    if (a.v > b.v) return a;
    if (b.v > a.v) return b;
    return a.i <= b.i ? a : b;
  }
  __device__ void finish(int64_t, char* out, acc_t a, int64_t) const {
    *reinterpret_cast<int64_t*>(out) = a.i == INT64_MAX ? 0 : a.i;
  }
};

void sum_kernel(KernelCall& c) {
  DeviceGuard guard(c.device().index);
  const red::ReduceParams p = red::params_of_iter(c.iter());
  dispatch_numeric(c.dtype(), "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    red::run_reduce(c, p, SumR<T, false>{});
  });
}

void mean_kernel(KernelCall& c) {
  DeviceGuard guard(c.device().index);
  const red::ReduceParams p = red::params_of_iter(c.iter());
  dispatch_floating(c.dtype(), "mean", [&](auto tag) {
    using T = typename decltype(tag)::type;
    red::run_reduce(c, p, SumR<T, true>{});
  });
}

template <bool MAX>
void amax_amin_kernel(KernelCall& c) {
  DeviceGuard guard(c.device().index);
  const red::ReduceParams p = red::params_of_iter(c.iter());
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    red::run_reduce(c, p, MaxMinR<T, MAX>{});
  });
}

void argmax_kernel(KernelCall& c) {
  DeviceGuard guard(c.device().index);
  const red::ReduceParams p = red::params_of_iter(c.iter());
  dispatch_all(c.dtype(), "argmax", [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    red::run_reduce(c, p, ArgMaxR<T>{});
  });
}

}  // namespace

TSR_CUDA_KERNELS(reduce) {
  r.kernel("sum", "cuda::sum", device_type, kNumericMask, TSR_KERNEL(sum_kernel));
  r.kernel("mean", "cuda::mean", device_type, kFloatingMask, TSR_KERNEL(mean_kernel));
  r.kernel("amax", "cuda::amax", device_type, kAllMask, TSR_KERNEL(amax_amin_kernel<true>));
  r.kernel("amin", "cuda::amin", device_type, kAllMask, TSR_KERNEL(amax_amin_kernel<false>));
  r.kernel("argmax", "cuda::argmax", device_type, kAllMask, TSR_KERNEL(argmax_kernel));
}

}  // namespace tsr::cuda
