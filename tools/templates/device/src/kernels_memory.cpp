// @NAME@: _copy and _fill, the two kernels the core itself calls on every device.
//
//   _copy  tensor.contiguous(), clone(), copy_(), dtype conversions (to(dtype)), and the
//          casts the core inserts before elementwise kernels (inputs are cast to the compute
//          dtype first), so it converts ANY dtype to ANY dtype.
//   _fill  zeros/ones/full/*_like, and the zero gradients autograd creates.
// Both are elementwise: call.iter holds the strided iteration (operands: out, then src).
#include <cstring>
#include <type_traits>

#include "kernels.hpp"
#include "tessera/iter.hpp"

namespace @NAME@ {
namespace {

// bool elements are stored as one byte holding 0 or 1.
template <class T>
using Stored = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;

void copy_kernel(tsr::KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  const int32_t out_dt = c.dtype();          // the dispatch dtype is the OUTPUT's dtype
  const int32_t src_dt = it.dtypes[1];       // the source keeps its own dtype
  if (out_dt == src_dt && it.contiguous) {  // dense same-dtype copy (may be onto itself)
    std::memmove(it.data[0], it.data[1], static_cast<size_t>(it.numel) * tsr::itemsize(out_dt));
    return;
  }
  tsr::dispatch_all(out_dt, c.op_name(), [&](auto out_tag) {
    using O = typename decltype(out_tag)::type;
    tsr::dispatch_all(src_dt, c.op_name(), [&](auto src_tag) {
      using S = typename decltype(src_tag)::type;
      tsr::elementwise_serial<Stored<O>, Stored<S>>(
          it, [](Stored<S> v) { return static_cast<Stored<O>>(tsr::convert<O>(static_cast<S>(v))); });
    });
  });
}

void fill_kernel(tsr::KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  tsr::dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const Stored<T> v = static_cast<Stored<T>>(c.arg_scalar<T>(1));  // args[1]: the value
    tsr::elementwise_serial<Stored<T>>(it, [v]() { return v; });
  });
}

}  // namespace

void register_memory_kernels(tsr::Registrar& r, int32_t device_type) {
  r.kernel("_copy", "@NAME@::copy", device_type, tsr::kAllMask, TSR_KERNEL(copy_kernel));
  r.kernel("_fill", "@NAME@::fill", device_type, tsr::kAllMask, TSR_KERNEL(fill_kernel));
}

}  // namespace @NAME@
