// quantize_mxfp8 and quantize_nvfp4 for compute capability 10.x: the hand-written sm_100a
// kernels of the plugin. Both are one pass of streaming memory traffic (read the input once,
// write 1 or 0.5 byte per value plus the scales), so what matters is moving bytes in the widest
// transactions: on sm_100 a thread loads 32 bytes with ONE instruction (ld.global.nc.v8, the
// 256-bit vector load Blackwell added; two 128-bit loads elsewhere), and NVFP4 packs pairs with
// the hardware cvt.rn.satfinite.e2m1x2.f32. Under compute_80 PTX (the build without a 10.x GPU
// or TESSERA_RELEASE) those paths are compiled out (__CUDA_ARCH__ guards) and the portable code
// compiles in their place, so the file builds everywhere; the kernels are only registered for
// 10.x devices (the plugin's predicate).
//
// Semantics: the recipes of the CPU reference kernels (branch lowp-ops: backends/cpu/quant.cpp
// over sdk/tessera/kernels/quant_ops.hpp), the same float32 arithmetic in the same order, with
// amax NaN-sticky (a NaN in a block, or in the tensor for the global scale, propagates):
//  - quantize_mxfp8(x [.., K], K % 32 == 0) -> (data float8_e4m3fn, x's shape; scale
//    float8_e8m0fnu): per block of 32 along the last dim, scale s = the smallest power of two
//    with amax/s <= 448 (2^-127 for an all-zero block, NaN (0xff) for a block with NaN or inf,
//    whose data is then NaN), data = e4m3_sat(x / s) (exact: a power-of-two division).
//  - quantize_nvfp4(x [.., K], global_scale? f32 scalar, K % 16 == 0) -> (data
//    float4_e2m1fn_x2 [.., K/2], scale float8_e4m3fn, global_scale f32 scalar): g = global_scale
//    or, when None, 448 * 6 / amax(x) (1 when amax is 0); per block of 16: scale =
//    e4m3_sat(amax_block / 6 * g), data = e2m1(x * g / float(scale)) (0 where the scale is 0).
//  - Scales are written in cuBLASLt's swizzled 128x4 layout (what scaled_mm takes), rows = the
//    product of the leading dims, padded with zeros to 128 rows and 4 scale columns.
// Inputs: float32, bfloat16, float16 or float64 (rounded to float32 first, as the reference),
// last dim contiguous with a uniform row stride (the 256-bit
// path also needs 32-byte aligned rows; otherwise element loads are used).
#include <cuda_runtime.h>

#include "tessera/kernels/block_scale_layout.hpp"
#include "tessera/kernels/quant_ops.hpp"
#include "sm100_common.hpp"
#include "tessera/dtype.hpp"  // the low-precision types and TSR_HOST_DEVICE

namespace tsr::sm100 {
namespace {

constexpr int kThreads = 256;

// 32 bytes from global memory (read-only path) into w[8].
__device__ __forceinline__ void load32(const void* p, uint32_t (&w)[8]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
  asm volatile("ld.global.nc.v8.b32 {%0,%1,%2,%3,%4,%5,%6,%7}, [%8];"
               : "=r"(w[0]), "=r"(w[1]), "=r"(w[2]), "=r"(w[3]), "=r"(w[4]), "=r"(w[5]), "=r"(w[6]), "=r"(w[7])
               : "l"(p));
#else
  const uint4 a = __ldg(static_cast<const uint4*>(p)), b = __ldg(static_cast<const uint4*>(p) + 1);
  w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
#endif
}

// EPT = 32 bytes of T: the values one thread converts.
template <class T>
struct Chunk {
  static constexpr int kEpt = 32 / int(sizeof(T));
  float v[kEpt];
  template <bool kVec>
  __device__ __forceinline__ void load(const T* p) {
    if constexpr (kVec) {
      uint32_t w[8];
      load32(p, w);
      const T* t = reinterpret_cast<const T*>(w);
#pragma unroll
      for (int i = 0; i < kEpt; ++i) v[i] = static_cast<float>(t[i]);
    } else {
#pragma unroll
      for (int i = 0; i < kEpt; ++i) v[i] = static_cast<float>(p[i]);
    }
  }
  // |x| bits max over values [from, from + n): the NaN-sticky amax (tessera/kernels/quant_ops.hpp).
  __device__ __forceinline__ uint32_t amax_bits(int from, int n) const {
    uint32_t m = 0;
    for (int i = 0; i < n; ++i) m = max(m, kernels::abs_bits(v[from + i]));
    return m;
  }
};

// Combine amax bits over the `lanes` consecutive lanes that share a scale block.
__device__ __forceinline__ uint32_t group_max(uint32_t m, int lanes) {
  for (int o = 1; o < lanes; o <<= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
  return m;
}

// Stores N bytes (4, 8 or 16: the thread's aligned part of a row) with one vector store.
template <int N>
__device__ __forceinline__ void store_bytes(uint8_t* out, const uint8_t (&q)[N]) {
  if constexpr (N == 16)
    *reinterpret_cast<uint4*>(out) = *reinterpret_cast<const uint4*>(q);
  else if constexpr (N == 8)
    *reinterpret_cast<uint2*>(out) = *reinterpret_cast<const uint2*>(q);
  else if constexpr (N == 4)
    *reinterpret_cast<uint32_t*>(out) = *reinterpret_cast<const uint32_t*>(q);
  else
    for (int i = 0; i < N; ++i) out[i] = q[i];
}

// ---- MXFP8 --------------------------------------------------------------------------------

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads) mxfp8_kernel(const T* __restrict__ x, int64_t row_stride, int64_t rows,
                                                         int64_t K, uint8_t* __restrict__ data,
                                                         uint8_t* __restrict__ scale, int64_t scale_cols) {
  using C = Chunk<T>;
  constexpr int kLanes = 32 / C::kEpt;  // lanes per block of 32 values
  const int64_t chunks_per_row = K / C::kEpt;
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  const bool live = i < rows * chunks_per_row;
  const int64_t r = live ? i / chunks_per_row : 0, col = live ? (i % chunks_per_row) * C::kEpt : 0;
  C ch;
  uint32_t m = 0;
  if (live) {
    ch.template load<kVec>(x + r * row_stride + col);
    m = ch.amax_bits(0, C::kEpt);
  }
  m = group_max(m, kLanes);  // every lane takes part (dead lanes with 0)
  if (!live) return;
  // The reference's arithmetic (quant_ops.hpp): scale bits from amax, data = e4m3_sat(x / scale)
  // with the decoded scale (an exact power-of-two division; NaN for the NaN scale).
  const uint8_t sbits = kernels::mx_scale_bits(kernels::from_abs_bits(m));
  if (col % 32 == 0) scale[kernels::swizzled_scale_offset(r, col / 32, scale_cols)] = sbits;
  const float s = detail::e8m0fnu_bits_to_f32(sbits);
  uint8_t q[C::kEpt];
#pragma unroll
  for (int k = 0; k < C::kEpt; ++k) q[k] = f32_to_e4m3fn_sat_bits(ch.v[k] / s);
  store_bytes(data + r * K + col, q);
}

// ---- NVFP4 --------------------------------------------------------------------------------

// The NaN-sticky amax of the whole input, as |x| bits, into *amax_bits (atomicMax: see abs_bits).
template <class T>
__global__ void __launch_bounds__(kThreads) amax_kernel(const T* __restrict__ x, int64_t row_stride, int64_t rows,
                                                        int64_t K, unsigned int* amax_bits) {
  uint32_t m = 0;
  const int64_t n = rows * K;
  for (int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x; i < n; i += int64_t(gridDim.x) * kThreads)
    m = max(m, kernels::abs_bits(static_cast<float>(x[(i / K) * row_stride + i % K])));
  for (int o = 16; o > 0; o >>= 1) m = max(m, __shfl_xor_sync(0xffffffffu, m, o));
  if ((threadIdx.x & 31) == 0) atomicMax(amax_bits, m);
}

// g from the computed amax (global == nullptr) or the given scalar; written to g_out.
__global__ void global_scale_kernel(const unsigned int* amax_bits, const float* global, float* g_out) {
  if (global) {
    *g_out = *global;
  } else {
    *g_out = kernels::nvfp4_global_scale(__uint_as_float(*amax_bits));
  }
}

__device__ __forceinline__ uint8_t e2m1x2(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000
  unsigned short b;
  asm("{ .reg .b8 t; cvt.rn.satfinite.e2m1x2.f32 t, %1, %2; cvt.u16.u8 %0, t; }" : "=h"(b) : "f"(hi), "f"(lo));
  return uint8_t(b);
#else
  return Float4_e2m1fn_x2::pack(lo, hi).bits();
#endif
}

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads) nvfp4_kernel(const T* __restrict__ x, int64_t row_stride, int64_t rows,
                                                         int64_t K, const float* __restrict__ g_ptr,
                                                         uint8_t* __restrict__ data, uint8_t* __restrict__ scale,
                                                         int64_t scale_cols) {
  using C = Chunk<T>;
  constexpr int kEpt = C::kEpt;
  constexpr int kLanes = kEpt >= 16 ? 1 : 16 / kEpt;  // lanes per block of 16 values
  constexpr int kBlocks = kEpt >= 16 ? kEpt / 16 : 1;  // blocks of 16 per lane
  const int64_t chunks_per_row = K / kEpt;
  const int64_t i = int64_t(blockIdx.x) * kThreads + threadIdx.x;
  const bool live = i < rows * chunks_per_row;
  const int64_t r = live ? i / chunks_per_row : 0, col = live ? (i % chunks_per_row) * kEpt : 0;
  const float g = *g_ptr;
  C ch;
  if (live)
    ch.template load<kVec>(x + r * row_stride + col);
  else
    for (int k = 0; k < kEpt; ++k) ch.v[k] = 0.f;  // dead lanes still take part in the shuffles
  uint8_t q[kEpt / 2];
#pragma unroll
  for (int blk = 0; blk < kBlocks; ++blk) {
    constexpr int kPer = kEpt >= 16 ? 16 : kEpt;
    uint32_t mb = ch.amax_bits(blk * kPer, kPer);
    if constexpr (kLanes > 1) mb = group_max(mb, kLanes);
    const float m = kernels::from_abs_bits(mb);
    const uint8_t sbits = kernels::nvfp4_block_scale_bits(m, g);
    const float s = detail::e4m3fn_bits_to_f32(sbits);
    const int64_t c0 = col + blk * kPer;
    if (live && c0 % 16 == 0) scale[kernels::swizzled_scale_offset(r, c0 / 16, scale_cols)] = sbits;
#pragma unroll
    for (int k = 0; k < kPer; k += 2) {
      const float lo = s != 0.f ? ch.v[blk * kPer + k] * g / s : 0.f;
      const float hi = s != 0.f ? ch.v[blk * kPer + k + 1] * g / s : 0.f;
      q[(blk * kPer + k) / 2] = e2m1x2(lo, hi);
    }
  }
  if (!live) return;
  store_bytes(data + r * (K / 2) + col / 2, q);
}

// ---- host side ----------------------------------------------------------------------------

struct Input {
  const void* data;
  tsr_dtype_t dtype;
  int64_t rows, K, row_stride;
  bool vec;  // 32-byte aligned rows: the 256-bit path
};

Input input_of(const KernelCall& c, int64_t block) {
  const tsr_tensor_view_t& x = c.input(0);
  const char* op = c.op_name();
  TSR_CHECK(x.dtype == TSR_F32 || x.dtype == TSR_BF16 || x.dtype == TSR_F16 || x.dtype == TSR_F64, TSR_INVALID_ARGUMENT,
            op, ": input must be float32, bfloat16, float16 or float64, got ", dtype_name(x.dtype));
  TSR_CHECK(x.ndim >= 1, TSR_INVALID_ARGUMENT, op, ": input must have at least one dimension");
  Input in{x.data, static_cast<tsr_dtype_t>(x.dtype), 1, x.sizes[x.ndim - 1], 0, false};
  TSR_CHECK(in.K % block == 0, TSR_INVALID_ARGUMENT, op, ": the last dimension (", in.K, ") must be a multiple of ",
            block);
  for (int32_t d = 0; d + 1 < x.ndim; ++d) in.rows *= x.sizes[d];
  // Rows must be evenly spaced: a contiguous tensor, or a 2-D one with a row stride.
  TSR_CHECK(in.K <= 1 || x.strides[x.ndim - 1] == 1, TSR_UNIMPLEMENTED, op,
            ": the last dimension must be contiguous on cuda (call .contiguous() first)");
  in.row_stride = x.ndim >= 2 ? x.strides[x.ndim - 2] : in.K;
  for (int32_t d = x.ndim - 2; d > 0; --d)
    TSR_CHECK(x.sizes[d] == 1 || x.strides[d - 1] == x.strides[d] * x.sizes[d], TSR_UNIMPLEMENTED, op,
              ": leading dimensions must be contiguous on cuda (call .contiguous() first)");
  const size_t es = x.dtype == TSR_F64 ? 8 : x.dtype == TSR_F32 ? 4 : 2;
  in.vec = reinterpret_cast<uintptr_t>(x.data) % 32 == 0 && (size_t(in.row_stride) * es) % 32 == 0;
  return in;
}

unsigned blocks_for(int64_t n) { return unsigned((n + kThreads - 1) / kThreads); }

template <class T>
void launch_mxfp8(const Input& in, uint8_t* data, uint8_t* scale, int64_t scale_cols, cudaStream_t s) {
  const int64_t n = in.rows * (in.K / Chunk<T>::kEpt);
  const T* x = static_cast<const T*>(in.data);
  if (in.vec)
    mxfp8_kernel<T, true><<<blocks_for(n), kThreads, 0, s>>>(x, in.row_stride, in.rows, in.K, data, scale, scale_cols);
  else
    mxfp8_kernel<T, false><<<blocks_for(n), kThreads, 0, s>>>(x, in.row_stride, in.rows, in.K, data, scale, scale_cols);
}

void quantize_mxfp8_kernel(KernelCall& c) {
  const char* op = c.op_name();
  const int dev = c.device().index;
  const Input in = input_of(c, 32);
  const tsr_tensor_view_t &data = c.output(0), &scale = c.output(1);
  const int64_t scale_cols = in.K / 32, need = kernels::scale_padded_rows(in.rows) * kernels::scale_padded_cols(in.K / 32);
  TSR_CHECK(numel_of(scale) == need, TSR_INTERNAL, op, ": the scale output has ", numel_of(scale),
            " elements, the swizzled layout needs ", need);
  if (in.rows == 0 || in.K == 0) return;
  DeviceGuard guard(dev);
  const cudaStream_t s = stream_of(c);
  uint8_t* sp = static_cast<uint8_t*>(scale.data);
  TSR_SM100_CUDA_CHECK(cudaMemsetAsync(sp, 0, size_t(need), s), op, dev);  // the padding
  uint8_t* dp = static_cast<uint8_t*>(data.data);
  switch (in.dtype) {
    case TSR_F64: launch_mxfp8<double>(in, dp, sp, scale_cols, s); break;
    case TSR_F32: launch_mxfp8<float>(in, dp, sp, scale_cols, s); break;
    case TSR_BF16: launch_mxfp8<BFloat16>(in, dp, sp, scale_cols, s); break;
    default: launch_mxfp8<Half>(in, dp, sp, scale_cols, s); break;
  }
  TSR_SM100_CUDA_CHECK(cudaGetLastError(), op, dev);  // launch errors
}

template <class T>
void launch_amax(const Input& in, unsigned int* amax_bits, cudaStream_t s) {
  const int64_t blocks = (in.rows * in.K + kThreads - 1) / kThreads;
  const unsigned grid = unsigned(blocks < 1024 ? blocks : 1024);  // grid-stride beyond
  amax_kernel<T><<<grid, kThreads, 0, s>>>(static_cast<const T*>(in.data), in.row_stride, in.rows, in.K, amax_bits);
}

template <class T>
void launch_nvfp4(const Input& in, const float* g, uint8_t* data, uint8_t* scale, int64_t scale_cols, cudaStream_t s) {
  const T* x = static_cast<const T*>(in.data);
  const int64_t n = in.rows * (in.K / Chunk<T>::kEpt);
  if (in.vec)
    nvfp4_kernel<T, true><<<blocks_for(n), kThreads, 0, s>>>(x, in.row_stride, in.rows, in.K, g, data, scale, scale_cols);
  else
    nvfp4_kernel<T, false><<<blocks_for(n), kThreads, 0, s>>>(x, in.row_stride, in.rows, in.K, g, data, scale,
                                                              scale_cols);
}

void quantize_nvfp4_kernel(KernelCall& c) {
  const char* op = c.op_name();
  const int dev = c.device().index;
  const Input in = input_of(c, 16);
  const tsr_tensor_view_t &data = c.output(0), &scale = c.output(1), &gout = c.output(2);
  const int64_t scale_cols = in.K / 16, need = kernels::scale_padded_rows(in.rows) * kernels::scale_padded_cols(in.K / 16);
  TSR_CHECK(numel_of(scale) == need, TSR_INTERNAL, op, ": the scale output has ", numel_of(scale),
            " elements, the swizzled layout needs ", need);
  TSR_CHECK(gout.dtype == TSR_F32 && numel_of(gout) == 1, TSR_INTERNAL, op, ": expected a float32 scalar global_scale output");
  const float* given = nullptr;
  if (!c.arg_is_none(1)) {
    tsr_tensor_t* gt = c.arg_tensor(1);
    TSR_CHECK(c.api()->tensor_dtype(gt) == TSR_F32 && c.api()->tensor_numel(gt) == 1, TSR_INVALID_ARGUMENT, op,
              ": global_scale must be a float32 scalar");
    given = static_cast<const float*>(c.api()->tensor_data(gt));
  }
  DeviceGuard guard(dev);
  const cudaStream_t s = stream_of(c);
  Scratch amax(c, given ? 0 : sizeof(unsigned int));
  unsigned int* amax_bits = static_cast<unsigned int*>(amax.data());
  if (amax_bits) TSR_SM100_CUDA_CHECK(cudaMemsetAsync(amax_bits, 0, sizeof(unsigned int), s), op, dev);
  float* g = static_cast<float*>(gout.data);
  uint8_t* sp = static_cast<uint8_t*>(scale.data);
  if (need > 0) TSR_SM100_CUDA_CHECK(cudaMemsetAsync(sp, 0, size_t(need), s), op, dev);
  const bool work = in.rows > 0 && in.K > 0;
  if (work && amax_bits) {  // pass 1: the tensor's amax, for the default global scale
    switch (in.dtype) {
      case TSR_F64: launch_amax<double>(in, amax_bits, s); break;
      case TSR_F32: launch_amax<float>(in, amax_bits, s); break;
      case TSR_BF16: launch_amax<BFloat16>(in, amax_bits, s); break;
      default: launch_amax<Half>(in, amax_bits, s); break;
    }
  }
  global_scale_kernel<<<1, 1, 0, s>>>(amax_bits, given, g);  // g into the global_scale output
  if (work) {  // pass 2: block scales and packed data
    uint8_t* dp = static_cast<uint8_t*>(data.data);
    switch (in.dtype) {
      case TSR_F64: launch_nvfp4<double>(in, g, dp, sp, scale_cols, s); break;
      case TSR_F32: launch_nvfp4<float>(in, g, dp, sp, scale_cols, s); break;
      case TSR_BF16: launch_nvfp4<BFloat16>(in, g, dp, sp, scale_cols, s); break;
      default: launch_nvfp4<Half>(in, g, dp, sp, scale_cols, s); break;
    }
  }
  TSR_SM100_CUDA_CHECK(cudaGetLastError(), op, dev);  // launch errors
}

}  // namespace

void register_quantize(Registrar& r, const Context& ctx) {
  // Every dispatch dtype (mask 0): the kernel checks the input (float32, bfloat16, float16).
  const uint32_t mask = 0;
  register_override(r, ctx, "quantize_mxfp8", "sm100::quantize_mxfp8_v8", mask, TSR_KERNEL(quantize_mxfp8_kernel));
  register_override(r, ctx, "quantize_nvfp4", "sm100::quantize_nvfp4_v8", mask, TSR_KERNEL(quantize_nvfp4_kernel));
}

}  // namespace tsr::sm100
