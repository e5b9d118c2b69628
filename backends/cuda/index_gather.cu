// index_select and gather on CUDA: pure data moves (by item size, so one instantiation serves
// every dtype of that size). Contracts as the CPU kernels (backends/cpu/index.cpp): index
// tensors arrive as int64 — contiguous [K] for index_select, any strides for gather — and may
// hold any value; an index in [-size, size) is wrapped once (Python style), anything else is
// reported through the device's error record (the next synchronizing call fails naming the op)
// and the output elements it would have produced are left unwritten.
#include "index_common.cuh"

namespace tsr::cuda {
namespace {

using idx::ErrorSink;
using idx::Geo;

// out [O, K, I] (contiguous) = self [O, S, I] (contiguous) at rows index[K].
template <class U>
__global__ void index_select_k(const U* __restrict__ self, const int64_t* __restrict__ index, U* __restrict__ out,
                               int64_t total, int64_t K, int64_t S, int64_t I, int32_t dim, ErrorSink err) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < total; r += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = r % I;
    const int64_t ok = r / I;
    const int64_t k = ok % K, o = ok / K;
    int64_t t = index[k];
    if (!wrap_index(t, S)) {
      err.report(index[k], S, dim);
      continue;
    }
    out[r] = self[(o * S + t) * I + i];
  }
}

void index_select_kernel(KernelCall& c) {
  const tsr_tensor_view_t& self = c.input(0);
  const tsr_tensor_view_t& index = c.input(1);
  const tsr_tensor_view_t& out = c.output(0);
  const int dim = static_cast<int>(c.arg_int(1));
  TSR_CHECK(dim >= 0 && dim < self.ndim, TSR_INTERNAL, "index_select: dim ", dim, " out of range for a ", self.ndim,
            "-d input on cuda");
  const int64_t K = idx::numel_of(index.sizes, index.ndim);
  const int64_t S = self.sizes[dim];
  const int64_t O = idx::prod_range(self.sizes, 0, dim), I = idx::prod_range(self.sizes, dim + 1, self.ndim);
  const int64_t total = O * K * I;
  if (total == 0) return;
  DeviceGuard guard(c.device().index);
  const ErrorSink err = idx::error_sink(c);
  idx::by_itemsize(itemsize(self.dtype), c.op_name(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    index_select_k<U><<<idx::blocks_for(total), kBlock, 0, stream_of(c)>>>(
        static_cast<const U*>(self.data), static_cast<const int64_t*>(index.data), static_cast<U*>(out.data), total, K,
        S, I, dim, err);
  });
  after_launch(c);
}

// gather: out[n] (contiguous, the index's shape) = self at n's coordinates with coordinate
// `dim` replaced by index[n]. g.st[0] = index strides, g.st[1] = self strides.
template <class U>
__global__ void gather_k(const U* __restrict__ self, const int64_t* __restrict__ index, U* __restrict__ out,
                         int64_t total, Geo g, int32_t dim, int64_t S, ErrorSink err) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    int64_t off[3], coords[TSR_MAX_DIMS];
    idx::geo_offsets(g, n, off, coords);
    const int64_t raw = index[off[0]];
    int64_t t = raw;
    if (!wrap_index(t, S)) {
      err.report(raw, S, dim);
      continue;
    }
    out[n] = self[off[1] + (t - coords[dim]) * g.st[1][dim]];
  }
}

void gather_kernel(KernelCall& c) {
  const tsr_tensor_view_t& self = c.input(0);
  const tsr_tensor_view_t& index = c.input(1);
  const tsr_tensor_view_t& out = c.output(0);
  const int dim = static_cast<int>(c.arg_int(1));
  const int nd = index.ndim;
  TSR_CHECK(nd == self.ndim && dim >= 0 && dim < nd && nd <= TSR_MAX_DIMS, TSR_INTERNAL, "gather: index rank ", nd,
            ", self rank ", self.ndim, ", dim ", dim, " on cuda");
  const int64_t total = idx::numel_of(index.sizes, nd);
  if (total == 0) return;
  Geo g;
  g.nd = nd;
  for (int d = 0; d < nd; ++d) {
    g.sizes[d] = index.sizes[d];
    g.st[0][d] = index.strides[d];
    g.st[1][d] = self.strides[d];
  }
  DeviceGuard guard(c.device().index);
  const ErrorSink err = idx::error_sink(c);
  idx::by_itemsize(itemsize(self.dtype), c.op_name(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    gather_k<U><<<idx::blocks_for(total), kBlock, 0, stream_of(c)>>>(
        static_cast<const U*>(self.data), static_cast<const int64_t*>(index.data), static_cast<U*>(out.data), total, g,
        dim, self.sizes[dim], err);
  });
  after_launch(c);
}

}  // namespace

TSR_CUDA_KERNELS(index_gather) {
  r.kernel("index_select", "cuda::index_select", device_type, kMovableMask, TSR_KERNEL(index_select_kernel));
  r.kernel("gather", "cuda::gather", device_type, kMovableMask, TSR_KERNEL(gather_kernel));
}

}  // namespace tsr::cuda
