// @NAME@: reductions for float32 and float64: sum, mean, amax.
//
// call.iter has operands (out, in); its first iter.nreduce dims are the reduced ones. The core
// never calls a reduction with an empty reduced extent (it fills the identity or reports the
// error itself), and nreduce may be 0 (each output then reduces one element).
#include <cmath>

#include "kernels.hpp"
#include "tessera/iter.hpp"

namespace @NAME@ {
namespace {

// Sums one output's block in double (float32 sums of millions of elements must not drift).
template <class T>
double block_sum(const tsr::ReduceBlock& block) {
  double acc = 0;
  block.for_each_run([&](const char* p, int64_t n, int64_t stride) {
    for (int64_t i = 0; i < n; ++i) acc += *reinterpret_cast<const T*>(p + i * stride);
  });
  return acc;
}

void sum_kernel(tsr::KernelCall& c) {
  tsr::dispatch_mask<kFloatMask>(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    tsr::for_each_reduction(c.iter(), [](char* out, const tsr::ReduceBlock& block) {
      *reinterpret_cast<T*>(out) = static_cast<T>(block_sum<T>(block));
    });
  });
}

void mean_kernel(tsr::KernelCall& c) {
  tsr::dispatch_mask<kFloatMask>(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    tsr::for_each_reduction(c.iter(), [](char* out, const tsr::ReduceBlock& block) {
      *reinterpret_cast<T*>(out) = static_cast<T>(block_sum<T>(block) / static_cast<double>(block.numel));
    });
  });
}

// The maximum; a NaN anywhere in the block makes the result NaN.
void amax_kernel(tsr::KernelCall& c) {
  tsr::dispatch_mask<kFloatMask>(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    tsr::for_each_reduction(c.iter(), [](char* out, const tsr::ReduceBlock& block) {
      T best = -INFINITY;
      block.for_each_run([&](const char* p, int64_t n, int64_t stride) {
        for (int64_t i = 0; i < n; ++i) {
          const T v = *reinterpret_cast<const T*>(p + i * stride);
          if (v > best || std::isnan(v)) best = v;
          if (std::isnan(best)) return;
        }
      });
      *reinterpret_cast<T*>(out) = best;
    });
  });
}

}  // namespace

void register_reduce_kernels(tsr::Registrar& r, int32_t type) {
  r.kernel("sum", "@NAME@::sum", type, kFloatMask, TSR_KERNEL(sum_kernel));
  r.kernel("mean", "@NAME@::mean", type, kFloatMask, TSR_KERNEL(mean_kernel));
  r.kernel("amax", "@NAME@::amax", type, kFloatMask, TSR_KERNEL(amax_kernel));
}

}  // namespace @NAME@
