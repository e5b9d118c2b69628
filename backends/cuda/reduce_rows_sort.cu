// _sort_rows and _mode_rows on CUDA (contiguous rows, along the last dim; see
// core/ops/reduce/reduce_rows.cpp), with CUB's segmented stable sort over order-preserving unsigned
// keys:
//  - floats: the sign-magnitude bits flipped into an unsigned order, -0.0 keyed as +0.0 (they
//    compare equal, so a stable sort keeps their input order), every NaN keyed above +inf (NaN
//    sorts as the largest value, NaNs in input order); signed integers: the sign bit flipped;
//    bool as uint8;
//  - descending: the complemented key sorted ascending, so ties still keep their input order
//    (the CPU sorts stably in both directions; `stable` is accepted and always honored).
// mode: the row's most frequent value (the smallest among equally frequent ones; NaNs never
// equal each other) and the index of its last occurrence, scanning the sorted row as the CPU.
#include <algorithm>
#include <functional>

#include <cub/device/device_segmented_sort.cuh>

#include "reduce_common.cuh"
#include "tessera/kernels/row_geometry.hpp"

namespace tsr::cuda {
namespace {

using red::C;
using red::Elem;

template <size_t N>
struct UnsignedOf;
template <>
struct UnsignedOf<1> {
  using type = uint8_t;
};
template <>
struct UnsignedOf<2> {
  using type = uint16_t;
};
template <>
struct UnsignedOf<4> {
  using type = uint32_t;
};
template <>
struct UnsignedOf<8> {
  using type = unsigned long long;
};
template <class T>
using Key = typename UnsignedOf<sizeof(T)>::type;

template <class T>
__device__ __forceinline__ Key<T> sort_key(T x) {
  using K = Key<T>;
  constexpr K sign = K(K(1) << (8 * sizeof(T) - 1));
  if constexpr (is_float_type<T>::value) {
    const C<T> v = C<T>(x);
    if (v != v) return K(~K(0));
    if (v == C<T>(0)) return sign;  // -0.0 as +0.0
    K bits;
    memcpy(&bits, &x, sizeof(T));
    return (bits & sign) ? K(~bits) : K(bits | sign);
  } else if constexpr (std::is_signed<T>::value) {
    K bits;
    memcpy(&bits, &x, sizeof(T));
    return K(bits ^ sign);
  } else {
    K bits;
    memcpy(&bits, &x, sizeof(T));
    return bits;
  }
}

template <class T>
__global__ void make_keys_kernel(const T* __restrict__ x, Key<T>* __restrict__ keys, int64_t* __restrict__ vals,
                                 int64_t* __restrict__ offsets, int64_t total, int64_t rows, int64_t n,
                                 bool descending) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const Key<T> k = sort_key<T>(x[i]);
    keys[i] = descending ? Key<T>(~k) : k;
    vals[i] = i % n;
  }
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r <= rows; r += int64_t(gridDim.x) * blockDim.x)
    offsets[r] = r * n;
}

template <class T>
__global__ void gather_sorted_kernel(const T* __restrict__ x, const int64_t* __restrict__ ix, T* __restrict__ y,
                                     int64_t total, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = x[(i / n) * n + ix[i]];
}

// One thread per row over the sorted keys (ascending).
template <class T>
__global__ void mode_scan_kernel(const T* __restrict__ x, const Key<T>* __restrict__ keys,
                                 const int64_t* __restrict__ order, T* __restrict__ y, int64_t* __restrict__ ix,
                                 int64_t rows, int64_t n) {
  constexpr bool kFloat = is_float_type<T>::value;
  for (int64_t r = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const Key<T>* kr = keys + r * n;
    const int64_t* orr = order + r * n;
    int64_t best = 0, best_count = 0, count = 0;
    for (int64_t j = 0; j < n; ++j) {
      const Key<T> k = kr[j];
      const bool nan = kFloat && k == Key<T>(~Key<T>(0));
      count = (j > 0 && !nan && k == kr[j - 1]) ? count + 1 : 1;
      if (count > best_count) {
        best_count = count;
        best = orr[j];
      }
    }
    y[r] = x[r * n + best];
    ix[r] = best;
  }
}

using kernels::Rows;
using kernels::rows_of;

size_t align_up(size_t n) { return (n + 255) / 256 * 256; }

// Sorts the rows of x by key; the within-row source indices land in `order` (total int64), the
// sorted keys in `keys_out` when given (else in scratch). Everything on c's stream.
template <class T>
void sort_rows_by_key(const KernelCall& c, const T* x, int64_t rows, int64_t n, bool descending, int64_t* order,
                      const std::function<void(const Key<T>*)>& then) {
  using K = Key<T>;
  const cudaStream_t stream = stream_of(c);
  const int64_t total = rows * n;
  size_t temp_bytes = 0;
  TSR_CUDA_CHECK((cub::DeviceSegmentedSort::StableSortPairs(
                     nullptr, temp_bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
                     static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr), total, rows,
                     static_cast<const int64_t*>(nullptr), static_cast<const int64_t*>(nullptr), stream)),
                 c.op_name(), c.device().index);
  const size_t keys_bytes = align_up(size_t(total) * sizeof(K));
  const size_t vals_bytes = align_up(size_t(total) * sizeof(int64_t));
  const size_t offs_bytes = align_up(size_t(rows + 1) * sizeof(int64_t));
  Scratch scratch(c, 2 * keys_bytes + vals_bytes + offs_bytes + align_up(temp_bytes));
  char* base = static_cast<char*>(scratch.data());
  K* keys_in = reinterpret_cast<K*>(base);
  K* keys_out = reinterpret_cast<K*>(base + keys_bytes);
  int64_t* vals_in = reinterpret_cast<int64_t*>(base + 2 * keys_bytes);
  int64_t* offsets = reinterpret_cast<int64_t*>(base + 2 * keys_bytes + vals_bytes);
  void* temp = base + 2 * keys_bytes + vals_bytes + offs_bytes;
  make_keys_kernel<T><<<grid_for(std::max(total, rows + 1)), kBlock, 0, stream>>>(x, keys_in, vals_in, offsets, total,
                                                                                  rows, n, descending);
  after_launch(c);
  TSR_CUDA_CHECK((cub::DeviceSegmentedSort::StableSortPairs(temp, temp_bytes, keys_in, keys_out, vals_in, order, total,
                                                            rows, static_cast<const int64_t*>(offsets),
                                                            static_cast<const int64_t*>(offsets) + 1, stream)),
                 c.op_name(), c.device().index);
  after_launch(c);
  then(keys_out);
}

void sort_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const bool descending = c.arg_bool(1);
  const Rows r = rows_of(in);
  if (r.rows == 0 || r.n == 0) return;
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  dispatch_all(c.dtype(), "sort", [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    int64_t* ix = static_cast<int64_t*>(c.output(1).data);
    const int64_t total = r.rows * r.n;
    sort_rows_by_key<T>(c, x, r.rows, r.n, descending, ix, [&](const Key<T>*) {
      gather_sorted_kernel<T><<<grid_for(total), kBlock, 0, stream>>>(x, ix, y, total, r.n);
      after_launch(c);
    });
  });
}

void mode_rows_kernel(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const Rows r = rows_of(in);
  if (r.rows == 0 || r.n == 0) return;
  DeviceGuard guard(c.device().index);
  const cudaStream_t stream = stream_of(c);
  dispatch_all(c.dtype(), "mode", [&](auto tag) {
    using T = Elem<typename decltype(tag)::type>;
    const T* x = static_cast<const T*>(in.data);
    T* y = static_cast<T*>(c.output(0).data);
    int64_t* ix = static_cast<int64_t*>(c.output(1).data);
    Scratch order(c, size_t(r.rows * r.n) * sizeof(int64_t));
    int64_t* ord = static_cast<int64_t*>(order.data());
    sort_rows_by_key<T>(c, x, r.rows, r.n, false, ord, [&](const Key<T>* keys) {
      mode_scan_kernel<T><<<grid_for(r.rows, 128), 128, 0, stream>>>(x, keys, ord, y, ix, r.rows, r.n);
      after_launch(c);
    });
  });
}

}  // namespace

TSR_CUDA_KERNELS(reduce_rows_sort) {
  r.kernel("_sort_rows", "cuda::sort_rows", device_type, kAllMask, TSR_KERNEL(sort_rows_kernel));
  r.kernel("_mode_rows", "cuda::mode_rows", device_type, kAllMask, TSR_KERNEL(mode_rows_kernel));
}

}  // namespace tsr::cuda
