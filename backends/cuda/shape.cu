// flip, tril, triu on CUDA: pure data movement by element size (1, 2, 4 or 8 bytes), as the CPU
// backend does; the output is dense (row-major), the input any strided view. One thread per
// output element; the input offset is computed from the output index (int32 when it fits).
#include "elementwise.cuh"
#include "tessera/kernels/item_size.hpp"

namespace tsr::cuda {
namespace {

template <class index_t>
struct ShapeArgs {
  int32_t ndim;
  index_t sizes[TSR_MAX_DIMS];
  index_t in_strides[TSR_MAX_DIMS];  // elements
};

// MODE 0: flip (dims in `mask` reversed); 1: tril; 2: triu (diagonal k).
template <int MODE, class W, class index_t>
__global__ void __launch_bounds__(kBlock)
    shape_kernel(W* dst, const W* src, ShapeArgs<index_t> a, index_t n, int64_t mask, int64_t k) {
  const index_t nthreads = index_t(gridDim.x) * index_t(blockDim.x);
  for (index_t i = index_t(blockIdx.x) * index_t(blockDim.x) + index_t(threadIdx.x); i < n; i += nthreads) {
    index_t rem = i, off = 0;
    int64_t row = 0, col = 0;
    for (int d = a.ndim - 1; d >= 0; --d) {
      const index_t sz = a.sizes[d];
      index_t idx = rem % sz;
      rem /= sz;
      if (MODE == 0 && ((mask >> d) & 1)) idx = sz - 1 - idx;
      if (d == a.ndim - 1) col = idx;
      if (d == a.ndim - 2) row = idx;
      off += idx * a.in_strides[d];
    }
    if constexpr (MODE == 0) {
      dst[i] = src[off];
    } else {
      const bool keep = MODE == 1 ? (col - row <= k) : (col - row >= k);
      dst[i] = keep ? src[off] : W(0);
    }
  }
}

template <int MODE>
void shape_op(KernelCall& c) {
  const tsr_tensor_view_t& in = c.input(0);
  const tsr_tensor_view_t& out = c.output(0);
  const int64_t arg = c.arg_int(1);  // flip: dim mask; tril/triu: diagonal
  int64_t n = 1, extent = 0;
  for (int32_t d = 0; d < out.ndim; ++d) {
    n *= out.sizes[d];
    extent += (out.sizes[d] - 1) * (in.strides[d] < 0 ? -in.strides[d] : in.strides[d]);
  }
  if (n == 0) return;
  DeviceGuard guard(c.device().index);
  kernels::by_element_size(out.dtype, c.op_name(), [&](auto word) {
    using W = decltype(word);
    auto launch = [&](auto index_tag) {
      using index_t = decltype(index_tag);
      ShapeArgs<index_t> a;
      a.ndim = out.ndim;
      for (int32_t d = 0; d < out.ndim; ++d) {
        a.sizes[d] = index_t(out.sizes[d]);
        a.in_strides[d] = index_t(in.strides[d]);
      }
      shape_kernel<MODE, W, index_t><<<grid_for(n, kBlock, 4), kBlock, 0, stream_of(c)>>>(
          static_cast<W*>(out.data), static_cast<const W*>(in.data), a, index_t(n), MODE == 0 ? arg : 0,
          MODE == 0 ? 0 : arg);
    };
    if (n < (int64_t(1) << 30) && extent < (int64_t(1) << 30))
      launch(int32_t{});
    else
      launch(int64_t{});
    after_launch(c);
  });
}

}  // namespace

TSR_CUDA_KERNELS(shape) {
  r.kernel("flip", "cuda::flip", device_type, 0, TSR_KERNEL(shape_op<0>));
  r.kernel("tril", "cuda::tril", device_type, 0, TSR_KERNEL(shape_op<1>));
  r.kernel("triu", "cuda::triu", device_type, 0, TSR_KERNEL(shape_op<2>));
}

}  // namespace tsr::cuda
