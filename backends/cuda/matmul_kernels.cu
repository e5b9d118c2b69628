// Device kernels of mm/bmm that are not cuBLAS calls: packing a strided matrix into a dense
// one (operands cuBLAS cannot address with a transpose flag and a leading dimension), and the
// exact integer/bool product (cuBLAS has no wrapping integer GEMM).
#include "matmul_kernels.hpp"

#include "cuda_common.hpp"

namespace tsr::cuda {
namespace {

template <class E>
__global__ void pack_kernel(const E* __restrict__ src, E* __restrict__ dst, int64_t total, int64_t rows, int64_t cols,
                            int64_t bs, int64_t rs, int64_t cs) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t c = i % cols;
    const int64_t t = i / cols;
    const int64_t r = t % rows;
    const int64_t b = t / rows;
    dst[i] = src[b * bs + r * rs + c * cs];
  }
}

// One thread per output element; accumulates in 64-bit unsigned (wraps exactly like the
// dtype's arithmetic after truncation), as the CPU kernel.
template <class W, bool kBool>
__global__ void int_gemm_kernel(IntGemmArgs p) {
  const W* a = static_cast<const W*>(p.a);
  const W* b = static_cast<const W*>(p.b);
  W* out = static_cast<W*>(p.out);
  const int64_t total = p.batch * p.m * p.n;
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = i % p.n;
    const int64_t t = i / p.n;
    const int64_t r = t % p.m;
    const int64_t bi = t / p.m;
    const W* ar = a + bi * p.a_bs + r * p.a_rs;
    const W* bc = b + bi * p.b_bs + j * p.b_cs;
    uint64_t acc = 0;
    for (int64_t kk = 0; kk < p.k; ++kk) {
      const W av = ar[kk * p.a_cs];
      const W bv = bc[kk * p.b_rs];
      if constexpr (kBool) {
        acc |= uint64_t(av != 0 && bv != 0);
      } else {
        acc += uint64_t(int64_t(av)) * uint64_t(int64_t(bv));
      }
    }
    out[i] = static_cast<W>(acc);
  }
}

template <class W, bool kBool = false>
void int_gemm(const IntGemmArgs& p, cudaStream_t s) {
  const int64_t total = p.batch * p.m * p.n;
  int_gemm_kernel<W, kBool><<<grid_for(total), kBlock, 0, s>>>(p);
}

}  // namespace

void launch_pack_matrix(const void* src, void* dst, int64_t batch, int64_t rows, int64_t cols, int64_t bs, int64_t rs,
                        int64_t cs, int elem_size, cudaStream_t stream) {
  const int64_t total = batch * rows * cols;
  if (total == 0) return;
  const unsigned g = grid_for(total);
  switch (elem_size) {
    case 1:
      pack_kernel<<<g, kBlock, 0, stream>>>(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(dst), total, rows,
                                            cols, bs, rs, cs);
      break;
    case 2:
      pack_kernel<<<g, kBlock, 0, stream>>>(static_cast<const uint16_t*>(src), static_cast<uint16_t*>(dst), total, rows,
                                            cols, bs, rs, cs);
      break;
    case 4:
      pack_kernel<<<g, kBlock, 0, stream>>>(static_cast<const uint32_t*>(src), static_cast<uint32_t*>(dst), total, rows,
                                            cols, bs, rs, cs);
      break;
    case 8:
      pack_kernel<<<g, kBlock, 0, stream>>>(static_cast<const uint64_t*>(src), static_cast<uint64_t*>(dst), total, rows,
                                            cols, bs, rs, cs);
      break;
    default:
      fail(TSR_INTERNAL, "pack_matrix: unsupported element size ", elem_size);
  }
}

void launch_int_gemm(tsr_dtype_t dtype, const IntGemmArgs& p, cudaStream_t s) {
  if (p.batch * p.m * p.n == 0) return;
  switch (dtype) {
    case TSR_BOOL:
      return int_gemm<uint8_t, true>(p, s);
    case TSR_U8:
      return int_gemm<uint8_t>(p, s);
    case TSR_I8:
      return int_gemm<int8_t>(p, s);
    case TSR_I16:
      return int_gemm<int16_t>(p, s);
    case TSR_I32:
      return int_gemm<int32_t>(p, s);
    case TSR_I64:
      return int_gemm<int64_t>(p, s);
    default:
      fail(TSR_INTERNAL, "int_gemm: unsupported dtype ", dtype_name(dtype));
  }
}

}  // namespace tsr::cuda
