// The CUDA reduction engine of the reduce family: reduces the first `nr` dims of a strided input
// into an output (the layout of tsr_iter_t reductions, byte strides, dims fastest first). Used
// by reduce.cu (sum, mean, amax, amin, argmax) and reduce_rows.cu (_prod_rows, _extreme_rows).
//
// A reducer R is a small trivially copyable struct with
//   using T = element type (bool as uint8_t); using acc_t = accumulator (POD);
//   __device__ acc_t init() const;
//   __device__ void step(acc_t& a, T x, int64_t k) const;    k: linear index over reduced dims
//   __device__ acc_t combine(acc_t a, acc_t b) const;        associative (and commutative, or
//                                                            order-aware through k)
//   __device__ void finish(int64_t o, char* out, acc_t a, int64_t count) const;
//                                                            o: linear output index
//
// Strategies (chosen per call):
//  - "outer": the reduced dims are strided but the first kept dim is contiguous in the input
//    (sum over dim 0 of a row-major matrix): 32 consecutive outputs per block along x, 8 threads
//    along y splitting the reduced range, so every warp reads 32 consecutive elements.
//  - "inner": a group of G threads per output (G = 1 for tiny blocks, a warp for short ones, the
//    whole 256-thread block for long ones); contiguous reduced ranges are read with 16-byte
//    vector loads.
//  - When there are too few outputs to fill the GPU, every output's reduced range is split into
//    `nsplit` chunks whose partial accumulators go to scratch memory and are combined, in chunk
//    order, by a second kernel (deterministic: the result does not depend on timing).
#pragma once

#include <algorithm>
#include <memory>

#include "reduce_common.cuh"

namespace tsr::cuda::red {

struct ReduceParams {
  int32_t ndim = 0, nr = 0;
  int64_t sizes[TSR_MAX_DIMS] = {};
  int64_t os[TSR_MAX_DIMS] = {};  // output byte strides (0 at reduced dims)
  int64_t is[TSR_MAX_DIMS] = {};  // input byte strides
  char* out = nullptr;
  const char* in = nullptr;
  int64_t nout = 0, blk = 0, nsplit = 1, chunk = 0;
};

// Params of a tsr_iter_t reduction (operand 0 the output, operand 1 the input).
inline ReduceParams params_of_iter(const tsr_iter_t& it) {
  ReduceParams p;
  p.ndim = it.ndim;
  p.nr = std::min(it.nreduce, it.ndim);
  for (int d = 0; d < it.ndim; ++d) {
    p.sizes[d] = it.sizes[d];
    p.os[d] = it.strides[0][d];
    p.is[d] = it.strides[1][d];
  }
  p.out = it.data[0];
  p.in = it.data[1];
  return p;
}

// Params of a row reduction over a contiguous [rows, n] input into `rows` outputs of out_size
// bytes each.
inline ReduceParams params_of_rows(const void* in, void* out, int64_t rows, int64_t n, size_t in_size,
                                   size_t out_size) {
  ReduceParams p;
  p.ndim = 2;
  p.nr = 1;
  p.sizes[0] = n;
  p.sizes[1] = rows;
  p.is[0] = int64_t(in_size);
  p.is[1] = n * int64_t(in_size);
  p.os[0] = 0;
  p.os[1] = int64_t(out_size);
  p.in = static_cast<const char*>(in);
  p.out = static_cast<char*>(out);
  return p;
}

__device__ __forceinline__ void kept_offsets(const ReduceParams& p, int64_t o, int64_t& oo, int64_t& io) {
  oo = 0;
  io = 0;
  for (int d = p.nr; d < p.ndim; ++d) {
    const int64_t i = o % p.sizes[d];
    o /= p.sizes[d];
    oo += i * p.os[d];
    io += i * p.is[d];
  }
}

__device__ __forceinline__ int64_t red_offset(const ReduceParams& p, int64_t k) {
  if (p.nr == 1) return k * p.is[0];
  int64_t off = 0;
  for (int d = 0; d < p.nr; ++d) {
    const int64_t i = k % p.sizes[d];
    k /= p.sizes[d];
    off += i * p.is[d];
  }
  return off;
}

template <class T>
__device__ __forceinline__ T load_elem(const char* p) {
  return *reinterpret_cast<const T*>(p);
}

// Elements [k0, k1) of a contiguous run starting at `base` (element 0), by thread t of G: a
// scalar prologue up to 16-byte alignment, 16-byte vector loads, a scalar tail.
template <class R, int G>
__device__ __forceinline__ void contig_range(const R& r, const typename R::T* base, int64_t k0, int64_t k1, int t,
                                             typename R::acc_t& acc) {
  using T = typename R::T;
  constexpr int VEC = 16 / int(sizeof(T));
  const T* p = base + k0;
  const int64_t n = k1 - k0;
  if (n <= 0) return;
  const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
  int64_t pro = int64_t(((16 - (addr & 15)) & 15) / sizeof(T));
  if (addr % sizeof(T) != 0) pro = n;  // not element-aligned (cannot happen for real tensors)
  if (pro > n) pro = n;
  for (int64_t i = t; i < pro; i += G) r.step(acc, p[i], k0 + i);
  const int64_t nv = (n - pro) / VEC;
  const uint4* pv = reinterpret_cast<const uint4*>(p + pro);
  for (int64_t v = t; v < nv; v += G) {
    const uint4 raw = __ldg(pv + v);
    T e[VEC];
    memcpy(e, &raw, 16);
    const int64_t kb = k0 + pro + v * VEC;
#pragma unroll
    for (int j = 0; j < VEC; ++j) r.step(acc, e[j], kb + j);
  }
  for (int64_t i = pro + nv * VEC + t; i < n; i += G) r.step(acc, p[i], k0 + i);
}

template <int G>
__device__ __forceinline__ void group_sync() {
  if constexpr (G == 32)
    __syncwarp();
  else if constexpr (G > 32)
    __syncthreads();
}

template <class R, int G>
__global__ void __launch_bounds__(256)
    reduce_inner_kernel(const ReduceParams p, const R r, typename R::acc_t* partial, bool contig) {
  using T = typename R::T;
  using acc_t = typename R::acc_t;
  constexpr int GPB = 256 / G;  // groups per block
  __shared__ acc_t smem[G > 1 ? 256 : 1];
  const int gi = threadIdx.x / G, t = threadIdx.x % G;
  const int64_t ngroups = p.nout * p.nsplit;
  const int64_t nbatches = (ngroups + GPB - 1) / GPB;
  for (int64_t b = blockIdx.x; b < nbatches; b += gridDim.x) {
    const int64_t g = b * GPB + gi;
    const bool valid = g < ngroups;
    acc_t acc = r.init();
    int64_t o = 0, s = 0, oo = 0, io = 0;
    if (valid) {
      o = g % p.nout;
      s = g / p.nout;
      kept_offsets(p, o, oo, io);
      const int64_t k0 = s * p.chunk;
      const int64_t k1 = k0 + p.chunk < p.blk ? k0 + p.chunk : p.blk;
      const char* base = p.in + io;
      if (contig) {
        contig_range<R, G>(r, reinterpret_cast<const T*>(base), k0, k1, t, acc);
      } else {
        for (int64_t k = k0 + t; k < k1; k += G) r.step(acc, load_elem<T>(base + red_offset(p, k)), k);
      }
    }
    if constexpr (G > 1) {
      smem[threadIdx.x] = acc;
      group_sync<G>();
#pragma unroll
      for (int w = G / 2; w > 0; w >>= 1) {
        if (t < w) smem[threadIdx.x] = r.combine(smem[threadIdx.x], smem[threadIdx.x + w]);
        group_sync<G>();
      }
      acc = smem[gi * G];
    }
    if (valid && t == 0) {
      if (p.nsplit == 1)
        r.finish(o, p.out + oo, acc, p.blk);
      else
        partial[s * p.nout + o] = acc;
    }
    group_sync<G>();  // smem is rewritten by the next batch
  }
}

template <class R>
__global__ void __launch_bounds__(256)
    reduce_outer_kernel(const ReduceParams p, const R r, typename R::acc_t* partial) {
  using T = typename R::T;
  using acc_t = typename R::acc_t;
  __shared__ acc_t smem[8][32];
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int64_t o = int64_t(blockIdx.x) * 32 + tx;
  const int64_t s = blockIdx.y;
  const bool valid = o < p.nout;
  acc_t acc = r.init();
  int64_t oo = 0, io = 0;
  if (valid) {
    kept_offsets(p, o, oo, io);
    const int64_t k0 = s * p.chunk;
    const int64_t k1 = k0 + p.chunk < p.blk ? k0 + p.chunk : p.blk;
    const char* base = p.in + io;
    for (int64_t k = k0 + ty; k < k1; k += 8) r.step(acc, load_elem<T>(base + red_offset(p, k)), k);
  }
  smem[ty][tx] = acc;
  __syncthreads();
#pragma unroll
  for (int w = 4; w > 0; w >>= 1) {
    if (ty < w) smem[ty][tx] = r.combine(smem[ty][tx], smem[ty + w][tx]);
    __syncthreads();
  }
  if (valid && ty == 0) {
    if (p.nsplit == 1)
      r.finish(o, p.out + oo, smem[0][tx], p.blk);
    else
      partial[s * p.nout + o] = smem[0][tx];
  }
}

template <class R>
__global__ void reduce_finalize_kernel(const ReduceParams p, const R r, const typename R::acc_t* partial) {
  using acc_t = typename R::acc_t;
  for (int64_t o = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; o < p.nout; o += int64_t(gridDim.x) * blockDim.x) {
    acc_t acc = partial[o];
    for (int64_t s = 1; s < p.nsplit; ++s) acc = r.combine(acc, partial[s * p.nout + o]);
    int64_t oo, io;
    kept_offsets(p, o, oo, io);
    r.finish(o, p.out + oo, acc, p.blk);
  }
}

// Enough threads in flight to fill a large GPU (132 SMs x 2048 threads is ~2^18).
constexpr int64_t kTargetThreads = int64_t(1) << 18;
// Fewest reduced elements per thread worth a split.
constexpr int64_t kMinPerThread = 32;

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int64_t pick_split(int64_t threads_now, int64_t blk, int64_t threads_per_output) {
  if (threads_now >= kTargetThreads || blk <= 0) return 1;
  int64_t ns = ceil_div(kTargetThreads, std::max<int64_t>(1, threads_now));
  ns = std::min(ns, ceil_div(blk, threads_per_output * kMinPerThread));
  return std::max<int64_t>(1, std::min<int64_t>(ns, 65535));
}

// Runs reducer r over p on c's stream (c's device current). p.out/p.in/strides/sizes filled.
template <class R>
void run_reduce(const KernelCall& c, ReduceParams p, const R& r) {
  using T = typename R::T;
  using acc_t = typename R::acc_t;
  p.nout = 1;
  for (int d = p.nr; d < p.ndim; ++d) p.nout *= p.sizes[d];
  p.blk = 1;
  for (int d = 0; d < p.nr; ++d) p.blk *= p.sizes[d];
  if (p.nout == 0) return;
  const cudaStream_t stream = stream_of(c);
  const int64_t esz = int64_t(sizeof(T));
  const bool outer =
      p.nr >= 1 && p.nr < p.ndim && p.blk > 1 && p.sizes[p.nr] > 1 && p.is[0] != esz && p.is[p.nr] == esz;
  int G = 0;
  if (outer) {
    p.nsplit = pick_split(ceil_div(p.nout, 32) * 256, p.blk, 8);
  } else {
    G = p.blk <= 16 ? 1 : p.blk <= 2048 ? 32 : 256;
    p.nsplit = G == 1 ? 1 : pick_split(p.nout * G, p.blk, G);
  }
  p.chunk = std::max<int64_t>(1, ceil_div(p.blk, p.nsplit));
  p.nsplit = std::max<int64_t>(1, ceil_div(p.blk, p.chunk));  // no empty chunks
  std::unique_ptr<Scratch> scratch;
  acc_t* partial = nullptr;
  if (p.nsplit > 1) {
    scratch = std::make_unique<Scratch>(c, size_t(p.nsplit * p.nout) * sizeof(acc_t));
    partial = static_cast<acc_t*>(scratch->data());
  }
  if (outer) {
    const dim3 grid(static_cast<unsigned>(ceil_div(p.nout, 32)), static_cast<unsigned>(p.nsplit));
    TSR_CHECK(int64_t(grid.x) == ceil_div(p.nout, 32), TSR_INVALID_ARGUMENT, c.op_name(), ": too many outputs (",
              p.nout, ") on cuda");
    reduce_outer_kernel<R><<<grid, dim3(32, 8), 0, stream>>>(p, r, partial);
  } else {
    const bool contig = p.nr == 1 && p.is[0] == esz;
    const int64_t groups = p.nout * p.nsplit;
    const unsigned grid = static_cast<unsigned>(std::min<int64_t>(ceil_div(groups, 256 / G), int64_t(1) << 20));
    if (G == 1)
      reduce_inner_kernel<R, 1><<<grid, 256, 0, stream>>>(p, r, partial, false);
    else if (G == 32)
      reduce_inner_kernel<R, 32><<<grid, 256, 0, stream>>>(p, r, partial, contig);
    else
      reduce_inner_kernel<R, 256><<<grid, 256, 0, stream>>>(p, r, partial, contig);
  }
  after_launch(c);
  if (p.nsplit > 1) {
    reduce_finalize_kernel<R><<<grid_for(p.nout), kBlock, 0, stream>>>(p, r, partial);
    after_launch(c);
  }
}

}  // namespace tsr::cuda::red
