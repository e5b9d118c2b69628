// mm, bmm, _nn_linear. f32 through oneDNN's sgemm where it was built and loads (its JIT
// kernels use the CPU's widest vectors: on AVX-512 machines about twice OpenBLAS's speed, which
// picks an AVX2 kernel there), else OpenBLAS; f64 through OpenBLAS (cblas_dgemm); both on the
// operands' own layouts, with transpose flags: no copies. f16/bf16 through f32 buffers; integers
// and bool with exact loops (wrapping, as the dtype's arithmetic). On CPUs with avx512_bf16,
// bf16 runs on oneDNN's bf16 matmul instead (matmul_onednn.cpp, registered above these kernels),
// which declines to these on the problems it has no fast kernel for.
// oneDNN lives in a side library opened on the first f32 GEMM (onednn_lib.hpp); without it, or
// with TESSERA_CPU_ONEDNN=0 (for comparisons), f32 goes to OpenBLAS too.
#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu_common.hpp"
#include "onednn_lib.hpp"
#include "tessera/kernels/matmul_views.hpp"

namespace tsr::cpu {
namespace {

// One matrix operand: rows x cols with element strides (rs, cs).
struct Mat {
  const void* data;
  int64_t rows, cols, rs, cs;
};

// BLAS description of a row-major-callable operand: transpose flag and leading dimension.
// Returns false when neither layout fits (then the caller packs it).
bool blas_layout(const Mat& m, CBLAS_TRANSPOSE& trans, int64_t& ld) {
  const int64_t r = m.rows, c = m.cols;
  // Row-major: element (i, j) at i*ld + j.
  if ((m.cs == 1 || c == 1) && (m.rs >= std::max<int64_t>(1, c) || r == 1)) {
    trans = CblasNoTrans;
    ld = r == 1 ? std::max<int64_t>(1, c) : m.rs;
    return true;
  }
  // Column-major (the transpose is row-major): element (i, j) at j*ld + i.
  if ((m.rs == 1 || r == 1) && (m.cs >= std::max<int64_t>(1, r) || c == 1)) {
    trans = CblasTrans;
    ld = c == 1 ? std::max<int64_t>(1, r) : m.cs;
    return true;
  }
  return false;
}

// Packs a strided matrix into a row-major buffer of float/double.
template <class Acc, class T>
void pack(const Mat& m, Acc* dst) {
  const T* p = static_cast<const T*>(m.data);
  for (int64_t i = 0; i < m.rows; ++i)
    for (int64_t j = 0; j < m.cols; ++j) dst[i * m.cols + j] = static_cast<Acc>(p[i * m.rs + j * m.cs]);
}

// out = a @ b + beta * out.
template <class T>
void gemm_blas(const Mat& a, const Mat& b, T* out, int64_t m, int64_t n, int64_t k, T beta = T(0)) {
  CBLAS_TRANSPOSE ta, tb;
  int64_t lda, ldb;
  std::vector<T> abuf, bbuf;
  const T* ap = static_cast<const T*>(a.data);
  const T* bp = static_cast<const T*>(b.data);
  if (!blas_layout(a, ta, lda)) {
    abuf.resize(static_cast<size_t>(m * k));
    pack<T, T>(a, abuf.data());
    ap = abuf.data();
    ta = CblasNoTrans;
    lda = std::max<int64_t>(1, k);
  }
  if (!blas_layout(b, tb, ldb)) {
    bbuf.resize(static_cast<size_t>(k * n));
    pack<T, T>(b, bbuf.data());
    bp = bbuf.data();
    tb = CblasNoTrans;
    ldb = std::max<int64_t>(1, n);
  }
  const int64_t ldc = std::max<int64_t>(1, n);
  if constexpr (std::is_same<T, float>::value) {
    // Row-major, as cblas's CblasRowMajor; it refuses nothing our layouts produce, and on any
    // refusal OpenBLAS computes the product instead.
    if (const OneDnn* d = onednn())
      if (d->sgemm(ta == CblasTrans ? 'T' : 'N', tb == CblasTrans ? 'T' : 'N', m, n, k, 1.0f, ap, lda, bp, ldb, beta,
                   out, ldc) == 0)
        return;
    cblas_sgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0f, ap, int(lda), bp, int(ldb), beta, out, int(ldc));
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, int(m), int(n), int(k), 1.0, ap, int(lda), bp, int(ldb), beta, out, int(ldc));
  }
}

// out[m, n] (row-major, contiguous) = a @ b for one matrix pair.
template <class T>
void gemm_one(const Mat& a, const Mat& b, T* out, int64_t m, int64_t n, int64_t k, std::vector<float>* scratch) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if constexpr (std::is_same<T, bool>::value)
      std::memset(out, 0, static_cast<size_t>(m * n));
    else
      std::fill(out, out + m * n, T(0));
    return;
  }
  if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
    gemm_blas<T>(a, b, out, m, n, k);
  } else if constexpr (is_reduced_float<T>::value) {
    scratch->resize(static_cast<size_t>(m * k + k * n + m * n));
    float* af = scratch->data();
    float* bf = af + m * k;
    float* cf = bf + k * n;
    pack<float, T>(a, af);
    pack<float, T>(b, bf);
    Mat a2{af, m, k, k, 1}, b2{bf, k, n, n, 1};
    gemm_blas<float>(a2, b2, cf, m, n, k);
    for (int64_t i = 0; i < m * n; ++i) out[i] = T(cf[i]);
  } else {
    // Exact integer (or boolean) product, tiles of 256 output columns in wrapping accumulators.
    using W = std::conditional_t<std::is_same<T, bool>::value, uint8_t, T>;
    const W* ap = static_cast<const W*>(a.data);
    const W* bp = static_cast<const W*>(b.data);
    W* op = reinterpret_cast<W*>(out);
    constexpr int64_t kT = 256;
    parallel_for(0, m, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(1, n * k)), [&](int64_t i0, int64_t i1) {
      uint64_t acc[kT];
      for (int64_t i = i0; i < i1; ++i) {
        for (int64_t j0 = 0; j0 < n; j0 += kT) {
          const int64_t len = std::min(kT, n - j0);
          std::fill(acc, acc + len, uint64_t(0));
          for (int64_t kk = 0; kk < k; ++kk) {
            const W av = ap[i * a.rs + kk * a.cs];
            const uint64_t x = static_cast<uint64_t>(static_cast<int64_t>(av));
            const W* brow = bp + kk * b.rs + j0 * b.cs;
            if constexpr (std::is_same<T, bool>::value) {
              if (av)
                for (int64_t j = 0; j < len; ++j) acc[j] |= (brow[j * b.cs] != 0);
            } else {
              for (int64_t j = 0; j < len; ++j)
                acc[j] += x * static_cast<uint64_t>(static_cast<int64_t>(brow[j * b.cs]));
            }
          }
          for (int64_t j = 0; j < len; ++j) op[i * n + j0 + j] = static_cast<W>(acc[j]);
        }
      }
    });
  }
}

// Matrix bi of a batched operand view (kernels::MatView) of T elements.
template <class T>
Mat mat_of(const kernels::MatView& v, int64_t bi) {
  return Mat{static_cast<const char*>(v.data) + bi * v.bs * int64_t(sizeof(T)), v.rows, v.cols, v.rs, v.cs};
}

void mm_kernel(KernelCall& c) {
  const kernels::MatmulViews v = kernels::mm_views(c);
  const int64_t m = v.m, k = v.k, n = v.n;
  dispatch_all(c.dtype(), "mm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<float> scratch;
    gemm_one<T>(mat_of<T>(v.a, 0), mat_of<T>(v.b, 0), static_cast<T*>(v.out), m, n, k, &scratch);
  });
}

// bmm products of at most this many multiply-adds (an attention's per-head [T, d] @ [d, T]) are
// computed by small_gemm below rather than one BLAS call each. Measured at 1 thread on a 2-core
// AVX-512 Xeon, bmm of 1024 [11, 16] @ [16, 11] f32 (tessera_gpt_bench's attention): 350 us
// through one oneDNN sgemm per matrix (per-call setup and a malloc of packing buffers, 12,000
// posix_memalign calls per GPT step), 75-260 us through OpenBLAS (the larger with b transposed),
// 65-110 us through oneDNN's batched matmul primitive, 80-150 us here; the GPT step went from
// 29.5-31.9 to 27.9-28.1 ms at 1 thread and from 25.0-26.4 to 23.1-24.0 ms at 2.
constexpr int64_t kSmallGemmMacs = int64_t(1) << 14;

// out [m, n] (dense) = a @ b for small float/double matrices of any strides. b is first copied
// into a local [k, W-padded n] block (zeros past n), so that output rows are built in whole
// 64-byte vectors, four rows at a time (four independent FMA chains: one chain waits on the FMA
// latency), acc += a[i, kk] * b[kk, block], accumulating in T in the order of k as the BLAS
// kernels do. Rows go to a local [m, n] buffer with whole-vector stores (a row's padding lanes
// spill into the next row's first block, stored later) and then to out in one copy. Returns
// false, computing nothing, when the operands exceed the local buffers.
template <class T>
TSR_CPU_MULTIVERSION bool small_gemm(const Mat& a, const Mat& b, T* out, int64_t m, int64_t n, int64_t k) {
  constexpr int64_t W = 64 / int64_t(sizeof(T));
  typedef T V __attribute__((vector_size(64)));
  constexpr int64_t kBVectors = 256, kOut = 4096;  // 16 KiB of b, 16-32 KiB of output
  const int64_t nb = (n + W - 1) / W;
  if (k * nb > kBVectors || m * n + W > kOut) return false;
  V bbuf[kBVectors];
  alignas(64) T obuf[kOut];
  const T* ap = static_cast<const T*>(a.data);
  const T* bp = static_cast<const T*>(b.data);
  for (int64_t kk = 0; kk < k; ++kk) {
    T* dst = reinterpret_cast<T*>(&bbuf[kk * nb]);
    for (int64_t j = 0; j < n; ++j) dst[j] = bp[kk * b.rs + j * b.cs];
    for (int64_t j = n; j < nb * W; ++j) dst[j] = T(0);
  }
  auto a_at = [&](int64_t i, int64_t kk) { return ap[i * a.rs + kk * a.cs]; };
  // Blocks from the last (the one whose padding spills into the next row's first block) to the
  // first, rows upwards: every spilled lane is overwritten by a later store.
  for (int64_t jb = nb - 1; jb >= 0; --jb)
    for (int64_t i = 0; i < m; i += 4) {
      // The last group repeats row m - 1 where m is not a multiple of 4 (same values, same place).
      const int64_t r0 = i, r1 = std::min(i + 1, m - 1), r2 = std::min(i + 2, m - 1), r3 = std::min(i + 3, m - 1);
      V c0 = {}, c1 = {}, c2 = {}, c3 = {};
      for (int64_t kk = 0; kk < k; ++kk) {
        const V bv = bbuf[kk * nb + jb];
        c0 += a_at(r0, kk) * bv;
        c1 += a_at(r1, kk) * bv;
        c2 += a_at(r2, kk) * bv;
        c3 += a_at(r3, kk) * bv;
      }
      std::memcpy(obuf + r0 * n + jb * W, &c0, sizeof(V));
      std::memcpy(obuf + r1 * n + jb * W, &c1, sizeof(V));
      std::memcpy(obuf + r2 * n + jb * W, &c2, sizeof(V));
      std::memcpy(obuf + r3 * n + jb * W, &c3, sizeof(V));
    }
  std::memcpy(out, obuf, size_t(m * n) * sizeof(T));
  return true;
}

void bmm_kernel(KernelCall& c) {
  const kernels::MatmulViews v = kernels::bmm_views(c);
  const int64_t batch = v.batch, m = v.m, k = v.k, n = v.n;
  if (batch == 0) return;
  dispatch_all(c.dtype(), "bmm", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t flops = m * n * k;
    // Small matrices are split across threads by batch, about 2^18 multiply-adds per chunk.
    const int64_t batch_grain = std::max<int64_t>(1, (int64_t(1) << 18) / std::max<int64_t>(1, flops));
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      if (flops <= kSmallGemmMacs && m > 0 && n > 0 && k > 0) {
        parallel_for(0, batch, batch_grain, [&](int64_t b0, int64_t b1) {
          std::vector<float> scratch;
          for (int64_t bi = b0; bi < b1; ++bi) {
            const Mat a = mat_of<T>(v.a, bi), b = mat_of<T>(v.b, bi);
            T* out = static_cast<T*>(v.out) + bi * v.out_bs;
            if (!small_gemm<T>(a, b, out, m, n, k)) gemm_one<T>(a, b, out, m, n, k, &scratch);
          }
        });
        return;
      }
    }
    auto one = [&](int64_t bi, std::vector<float>* scratch) {
      T* out = static_cast<T*>(v.out) + bi * v.out_bs;
      gemm_one<T>(mat_of<T>(v.a, bi), mat_of<T>(v.b, bi), out, m, n, k, scratch);
    };
    // Small matrices: one GEMM per thread (BLAS runs single-threaded inside a parallel region).
    if (batch > 1 && flops < (int64_t(1) << 18)) {
      parallel_for(0, batch, batch_grain, [&](int64_t b0, int64_t b1) {
        std::vector<float> scratch;
        for (int64_t bi = b0; bi < b1; ++bi) one(bi, &scratch);
      });
    } else {
      std::vector<float> scratch;
      for (int64_t bi = 0; bi < batch; ++bi) one(bi, &scratch);
    }
  });
}

// _nn_linear(x [M, K], w [N, K], bias [N]) -> out [M, N] = x @ w^T + bias; dense operands (the
// core's kernel_op). The bias rows are written first and the GEMM accumulates onto them
// (beta = 1), so no second pass after the GEMM; f16/bf16 compute in f32 and round once. With
// oneDNN, f32 (and bf16 with avx512_bf16) take matmul_onednn.cpp's kernel instead, which adds
// the bias in the GEMM's epilogue and saves this write too.
// The bias rows are a plain write: split only from 256K elements, since waking the passive
// OpenMP team costs about 15 us (with the elementwise grain, a [128, 512] linear woke it for
// 256 KiB and took 0.59 ms at 2 threads against 0.52 for its GEMM alone).
constexpr int64_t kBiasFillGrain = int64_t(1) << 18;

template <class T, class Acc>
void linear_rows(const Mat& x, const Mat& wt, const T* bias, Acc* out, int64_t m, int64_t n, int64_t k) {
  parallel_for(0, m, std::max<int64_t>(1, kBiasFillGrain / std::max<int64_t>(1, n)), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < n; ++j) out[i * n + j] = static_cast<Acc>(bias[j]);
  });
  if (k > 0) gemm_blas<Acc>(x, wt, out, m, n, k, Acc(1));
}

void linear_kernel(KernelCall& c) {
  const kernels::MatmulViews v = kernels::linear_views(c);  // the rank checks; the views below assume dense
  const tsr_tensor_view_t& X = c.input(0);
  const tsr_tensor_view_t& W = c.input(1);
  const tsr_tensor_view_t& B = c.input(2);
  const tsr_tensor_view_t& O = c.output(0);
  const int64_t m = v.m, k = v.k, n = v.n;
  if (m == 0 || n == 0) return;
  dispatch_floating(c.dtype(), "_nn_linear", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* bias = static_cast<const T*>(B.data);
    // w^T [K, N]: element (kk, j) is w[j, kk], a column-major view of the dense weight.
    if constexpr (std::is_same<T, float>::value || std::is_same<T, double>::value) {
      linear_rows<T, T>({X.data, m, k, k, 1}, {W.data, k, n, 1, k}, bias, static_cast<T*>(O.data), m, n, k);
    } else {
      std::vector<float> buf(static_cast<size_t>(m * k + n * k + m * n));
      float* xf = buf.data();
      float* wf = xf + m * k;
      float* of = wf + n * k;
      pack<float, T>({X.data, m, k, k, 1}, xf);
      pack<float, T>({W.data, n, k, k, 1}, wf);
      linear_rows<T, float>({xf, m, k, k, 1}, {wf, k, n, 1, k}, bias, of, m, n, k);
      T* out = static_cast<T*>(O.data);
      for (int64_t i = 0; i < m * n; ++i) out[i] = T(of[i]);
    }
  });
}

}  // namespace

TSR_CPU_KERNELS(matmul) {
  r.kernel("mm", "cpu::mm", device_type, kAllMask, TSR_KERNEL(mm_kernel));
  r.kernel("bmm", "cpu::bmm", device_type, kAllMask, TSR_KERNEL(bmm_kernel));
  r.kernel("_nn_linear", "cpu::linear_bias", device_type, kFloatingMask, TSR_KERNEL(linear_kernel));
}

}  // namespace tsr::cpu
