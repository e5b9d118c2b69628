// Row kernels of the reduce family's internal ops on CUDA (see core/ops/reduce/reduce_rows.cpp: every
// operand is contiguous, the op works along the last dim): _prod_rows and _extreme_rows through
// the reduction engine (reduce_engine.cuh), _gather_rows and _scatter_add_rows elementwise.
// Semantics as backends/cpu/reduce_rows.cpp:
//  - prod: floating products in double, integer products wrap; an empty row gives 1;
//  - extreme (max/min with index): the first extreme, or the first NaN;
//  - gather / scatter_add: the core checks indices only for CPU tensors, so these kernels check
//    them on the device (report_index_error: the next synchronizing call fails naming the op)
//    and skip the element. scatter_add uses atomics (16- and 8-bit types through a 32-bit
//    compare-and-swap), so floating sums may differ from the CPU in the last bits.
#include "device_error.cuh"
#include "reduce_engine.cuh"
#include "tessera/kernels/item_size.hpp"
#include "tessera/kernels/row_geometry.hpp"

namespace tsr::cuda {
namespace {

using red::C;
using red::Elem;

using kernels::Rows;
using kernels::rows_of;

template <class T_>
struct ProdR {
  using T = T_;
  using acc_t = std::conditional_t<is_float_type<T>::value, double, unsigned long long>;
  __device__ acc_t init() const { return acc_t(1); }
  __device__ void step(acc_t& a, T x, int64_t) const {
    if constexpr (is_float_type<T>::value)
      a *= double(C<T>(x));
    else
      a *= static_cast<unsigned long long>(static_cast<long long>(x));
  }
  __device__ acc_t combine(acc_t a, acc_t b) const { return a * b; }
  __device__ void finish(int64_t, char* out, acc_t a, int64_t) const {
    if constexpr (is_float_type<T>::value)
      *reinterpret_cast<T*>(out) = static_cast<T>(static_cast<C<T>>(a));
    else
      *reinterpret_cast<T*>(out) = static_cast<T>(a);  // wraps modulo 2^bits
  }
};

template <class CT>
struct ValIdx {
  CT v;
  int64_t i;
};

// The first NaN, else the first maximum (minimum): order-independent through the indices.
template <class T_, bool MAX>
struct ExtremeR {
  using T = T_;
  using CT = C<T>;
  using acc_t = ValIdx<CT>;
  T* y;
  int64_t* ix;
  __device__ acc_t init() const { return {MAX ? red::lowest_or_neg_inf<CT>() : red::highest_or_inf<CT>(), INT64_MAX}; }
  __device__ void step(acc_t& a, T x, int64_t k) const { a = combine(a, acc_t{CT(x), k}); }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    const bool an = red::is_nan(a.v), bn = red::is_nan(b.v);
    if (an || bn) {
      if (an && bn) return a.i <= b.i ? a : b;
      return an ? a : b;
    }
    if (MAX ? a.v > b.v : a.v < b.v) return a;
    if (MAX ? b.v > a.v : b.v < a.v) return b;
    return a.i <= b.i ? a : b;
  }
  __device__ void finish(int64_t o, char*, acc_t a, int64_t) const {
    y[o] = static_cast<T>(a.v);
    ix[o] = a.i == INT64_MAX ? 0 : a.i;
  }
};

void prod_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const Rows r = rows_of(in);
  DeviceGuard guard(c.device().index);
  dispatch_numeric(c.dtype(), "prod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    red::run_reduce(c, red::params_of_rows(in.data, c.output(0).data, r.rows, r.n, sizeof(T), sizeof(T)), ProdR<T>{});
  });
}

void extreme_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const bool is_max = c.arg_bool(1);
  const Rows r = rows_of(in);
  DeviceGuard guard(c.device().index);
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    T* y = static_cast<T*>(c.output(0).data);
    int64_t* ix = static_cast<int64_t*>(c.output(1).data);
    const red::ReduceParams p = red::params_of_rows(in.data, y, r.rows, r.n, sizeof(T), sizeof(T));
    if (is_max)
      red::run_reduce(c, p, ExtremeR<T, true>{y, ix});
    else
      red::run_reduce(c, p, ExtremeR<T, false>{y, ix});
  });
}

// ---- gather / scatter_add ----------------------------------------------------------------------

template <class U>
__global__ void gather_rows_kernel_impl(const U* __restrict__ x, const int64_t* __restrict__ idx, U* __restrict__ y,
                                        int64_t total, int64_t ni, int64_t n, DeviceErrorRecord* rec, int32_t op_id) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / ni;
    const int64_t k = idx[i];
    if (k < 0 || k >= n) {
      report_index_error(rec, op_id, k, n, -1);
      y[i] = U(0);
    } else {
      y[i] = x[row * n + k];
    }
  }
}

template <class U>
void gather_typed(const KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const tsr_tensor_view_t& index = c.input(1);
  const Rows ri = rows_of(index);
  const int64_t n = rows_of(in).n;
  const int64_t total = ri.rows * ri.n;
  if (total == 0) return;
  gather_rows_kernel_impl<U><<<grid_for(total), kBlock, 0, stream_of(c)>>>(
      static_cast<const U*>(in.data), static_cast<const int64_t*>(index.data), static_cast<U*>(c.output(0).data), total,
      ri.n, n, red::error_record_of(c), error_op_id(c.op_name()));
  after_launch(c);
}

void gather_rows_kernel(KernelCall& c) {
  DeviceGuard guard(c.device().index);
  if (!kernels::with_uint_of_size<unsigned long long>(itemsize(c.dtype()),
                                                      [&](auto w) { gather_typed<typename decltype(w)::type>(c); }))
    c.unsupported_dtype();
}

template <class T>
__device__ __forceinline__ T add_elem(T a, T b) {
  if constexpr (std::is_same<T, bool>::value)
    return a || b;
  else
    return static_cast<T>(C<T>(a) + C<T>(b));
}

// a += v for 1- and 2-byte types: compare-and-swap on the aligned 32-bit word holding *a.
template <class T>
__device__ __forceinline__ void atomic_add_small(T* a, T v) {
  static_assert(sizeof(T) == 1 || sizeof(T) == 2, "atomic_add_small: 1- or 2-byte types");
  const uintptr_t addr = reinterpret_cast<uintptr_t>(a);
  unsigned int* word = reinterpret_cast<unsigned int*>(addr & ~uintptr_t(3));
  const unsigned shift = unsigned(addr & 3) * 8;
  const unsigned mask = (sizeof(T) == 1 ? 0xffu : 0xffffu) << shift;
  unsigned old = *word, assumed;
  do {
    assumed = old;
    const unsigned bits = (assumed & mask) >> shift;
    T cur;
    if constexpr (sizeof(T) == 1) {
      const uint8_t b = static_cast<uint8_t>(bits);
      memcpy(&cur, &b, 1);
    } else {
      const uint16_t b = static_cast<uint16_t>(bits);
      memcpy(&cur, &b, 2);
    }
    const T nv = add_elem<T>(cur, v);
    unsigned nb;
    if constexpr (sizeof(T) == 1) {
      uint8_t b;
      memcpy(&b, &nv, 1);
      nb = b;
    } else {
      uint16_t b;
      memcpy(&b, &nv, 2);
      nb = b;
    }
    old = atomicCAS(word, assumed, (assumed & ~mask) | (nb << shift));
  } while (assumed != old);
}

template <class T>
__device__ __forceinline__ void atomic_add_elem(T* a, T v) {
  if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value || std::is_same<T, int32_t>::value) {
    atomicAdd(a, v);
  } else if constexpr (std::is_same<T, int64_t>::value) {
    atomicAdd(reinterpret_cast<unsigned long long*>(a), static_cast<unsigned long long>(v));  // wraps
  } else {
    atomic_add_small<T>(a, v);
  }
}

template <class T>
__global__ void scatter_add_rows_kernel_impl(const T* __restrict__ src, const int64_t* __restrict__ idx, T* y,
                                             int64_t total, int64_t ns, int64_t no, DeviceErrorRecord* rec,
                                             int32_t op_id) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t row = i / ns;
    const int64_t k = idx[i];
    if (k < 0 || k >= no) {
      report_index_error(rec, op_id, k, no, -1);
      continue;
    }
    atomic_add_elem<T>(y + row * no + k, src[i]);
  }
}

void scatter_add_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& src = c.input(0);
  const tsr_tensor_view_t& index = c.input(1);
  const Rows rs = rows_of(src);
  const Rows ro = rows_of(c.output(0));
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* y = static_cast<T*>(c.output(0).data);
    const int64_t out_total = ro.rows * ro.n;
    if (out_total == 0) return;
    TSR_CUDA_CHECK(cudaMemsetAsync(y, 0, size_t(out_total) * sizeof(T), stream), c.op_name(), c.device().index);
    const int64_t total = rs.rows * rs.n;
    if (total == 0) return;
    scatter_add_rows_kernel_impl<T><<<grid_for(total), kBlock, 0, stream>>>(
        static_cast<const T*>(src.data), static_cast<const int64_t*>(index.data), y, total, rs.n, ro.n,
        red::error_record_of(c), error_op_id(c.op_name()));
    after_launch(c);
  });
}

}  // namespace

TSR_CUDA_KERNELS(reduce_rows) {
  r.kernel("_extreme_rows", "cuda::extreme_rows", device_type, kAllMask, TSR_KERNEL(extreme_rows_kernel));
  r.kernel("_prod_rows", "cuda::prod_rows", device_type, kNumericMask, TSR_KERNEL(prod_rows_kernel));
  r.kernel("_gather_rows", "cuda::gather_rows", device_type, kAllMask, TSR_KERNEL(gather_rows_kernel));
  r.kernel("_scatter_add_rows", "cuda::scatter_add_rows", device_type, kAllMask, TSR_KERNEL(scatter_add_rows_kernel));
}

}  // namespace tsr::cuda
