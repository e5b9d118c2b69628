// mm, bmm and _nn_linear on CUDA. Floating dtypes through cuBLASLt (cublasLtMatmul, algorithm
// from the heuristic, cached per problem), falling back to cublasGemmStridedBatchedEx when Lt
// offers no algorithm; integer and bool dtypes through an exact kernel (matmul_kernels.cu).
//
// _nn_linear (x [M, K], w [N, K], bias [N]; the core's linear with a bias) is one GEMM with
// CUBLASLT_EPILOGUE_BIAS: the bias is added as the output tile is stored, saving the separate
// add's read and write of the whole output. Where Lt has no bias algorithm, the bias rows are
// written first and the GEMM accumulates onto them (beta = 1).
//
// Layouts: the core hands over operands whose matrices are row-major or column-major with any
// leading dimension and any batch stride (0 for a broadcast batch), and a dense output. A
// row-major product C = A B is computed as the column-major C^T = B^T A^T, so each operand
// maps to a transpose flag and a leading dimension without copies; a matrix neither layout fits
// (possible through other callers) is packed into a dense scratch copy on the device first.
//
// Precision (the runtime's switches, read per call, as PyTorch's):
//  - f32: CUBLAS_COMPUTE_32F, or CUBLAS_COMPUTE_32F_FAST_TF32 when MATMUL_ALLOW_TF32 is on.
//  - f16 / bf16: always f32 accumulation (CUBLAS_COMPUTE_32F); when the MATMUL_*_REDUCED_
//    REDUCTION switch is off, split-K reductions are limited to the compute type
//    (CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK; CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION
//    on the cuBLAS fallback).
//  - f64: CUBLAS_COMPUTE_64F.
// Everything is enqueued on the kernel's stream; the cuBLASLt workspace comes from the caching
// allocator (Scratch) and is sized to what the chosen algorithm needs, so capture into a CUDA
// graph works (no cudaMalloc, no synchronization).
#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <mutex>
#include <shared_mutex>
#include <unordered_map>

#include "cublas_handles.hpp"
#include "matmul_kernels.hpp"
#include "tessera/bytes_key.hpp"
#include "tessera/kernels/matmul_views.hpp"

namespace tsr::cuda {
namespace {

// The most workspace the heuristic may ask for (PyTorch's default on Hopper is 32 MiB).
constexpr size_t kMaxWorkspace = size_t(32) << 20;

// One logical row-major operand matrix [rows, cols] with element strides, per batch bstride.
using Operand = kernels::MatView;

// How the column-major GEMM reads an operand: op(stored) is the operand's transpose X^T.
struct ColLayout {
  cublasOperation_t op;
  int64_t rows, cols, ld;  // of the stored column-major matrix
};

// X^T ([cols, rows]) as op(stored column-major matrix); false when no flag/ld describes it.
bool layout_of_transpose(const Operand& x, ColLayout* out) {
  const int64_t R = x.rows, C = x.cols;
  // X row-major with row stride ld <=> X^T column-major with leading dimension ld: no transpose.
  if ((x.cs == 1 || C == 1) && (R == 1 || x.rs >= std::max<int64_t>(1, C))) {
    *out = {CUBLAS_OP_N, C, R, R == 1 ? std::max<int64_t>(1, C) : x.rs};
    return true;
  }
  // X column-major with leading dimension ld: X^T is its transpose.
  if ((x.rs == 1 || R == 1) && (C == 1 || x.cs >= std::max<int64_t>(1, R))) {
    *out = {CUBLAS_OP_T, R, C, C == 1 ? std::max<int64_t>(1, R) : x.cs};
    return true;
  }
  return false;
}

// Largest power of two (<= 256) dividing the address: cuBLASLt picks kernels by alignment.
uint32_t alignment_of(const void* p) {
  uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && (a % al) != 0) al >>= 1;
  return al;
}

struct GemmTypes {
  cudaDataType_t data;
  cudaDataType_t scale;
  cublasComputeType_t compute;
  bool restrict_reduction;  // split-K reductions only in the compute type
};

GemmTypes gemm_types(const KernelCall& c) {
  switch (c.dtype()) {
    case TSR_F32:
      return {CUDA_R_32F, CUDA_R_32F, allow_tf32_matmul(c) ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F, false};
    case TSR_F16:
      return {CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
              c.api()->precision_get(c.runtime(), TSR_PRECISION_MATMUL_F16_REDUCED_REDUCTION) == 0};
    case TSR_BF16:
      return {CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F,
              c.api()->precision_get(c.runtime(), TSR_PRECISION_MATMUL_BF16_REDUCED_REDUCTION) == 0};
    case TSR_F64:
      return {CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F, false};
    default:
      c.unsupported_dtype();
  }
}

// Everything the heuristic's answer depends on.
struct AlgoKey {
  int32_t device, data, compute, restrict_reduction;
  int32_t opa, opb;
  int64_t m, n, k, lda, ldb, ldc, sa, sb, sc, batch;
  uint32_t align_a, align_b, align_c, epilogue;
  bool operator==(const AlgoKey& o) const { return bytes_equal(*this, o); }
};
struct AlgoEntry {
  bool found;  // false: Lt has no algorithm, use the cuBLAS fallback
  cublasLtMatmulAlgo_t algo;
  size_t workspace;
};

class AlgoCache {
 public:
  bool find(const AlgoKey& k, AlgoEntry* e) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = map_.find(k);
    if (it == map_.end()) return false;
    *e = it->second;
    return true;
  }
  void put(const AlgoKey& k, const AlgoEntry& e) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (map_.size() >= 4096) map_.clear();  // bounded: shapes of a workload are few
    map_[k] = e;
  }

 private:
  std::shared_mutex mu_;
  std::unordered_map<AlgoKey, AlgoEntry, BytesHash<AlgoKey>> map_;
};
AlgoCache& algo_cache() {
  static AlgoCache* c = new AlgoCache();  // leaked: used until process exit
  return *c;
}

// RAII owners of the Lt descriptors (created per call: host-only and cheap).
struct LtDesc {
  cublasLtMatmulDesc_t d = nullptr;
  ~LtDesc() {
    if (d) cublasLtMatmulDescDestroy(d);
  }
};
struct LtLayout {
  cublasLtMatrixLayout_t l = nullptr;
  ~LtLayout() {
    if (l) cublasLtMatrixLayoutDestroy(l);
  }
};
struct LtPref {
  cublasLtMatmulPreference_t p = nullptr;
  ~LtPref() {
    if (p) cublasLtMatmulPreferenceDestroy(p);
  }
};

// One column-major strided-batched GEMM: D[n', m'] = op(A) op(B) (+ bias[row] when bias is set:
// a dense vector of m elements, 16-byte aligned, in the data type) with alpha 1, beta 0.
struct Gemm {
  GemmTypes t;
  cublasOperation_t opa, opb;
  int64_t m, n, k;  // column-major sizes: op(A) is m x k, op(B) k x n, D m x n
  const void* a;
  int64_t lda, sa, a_rows, a_cols;
  const void* b;
  int64_t ldb, sb, b_rows, b_cols;
  void* d;
  int64_t ldd, sd;
  int64_t batch;
  const void* bias = nullptr;
};

void make_layout(LtLayout& L, cudaDataType_t type, int64_t rows, int64_t cols, int64_t ld, int64_t batch,
                 int64_t stride, const char* op, int dev) {
  TSR_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&L.l, type, uint64_t(rows), uint64_t(cols), ld), op, dev);
  if (batch > 1) {
    const int32_t count = int32_t(batch);
    TSR_CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(L.l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
                     op, dev);
    TSR_CUBLAS_CHECK(
        cublasLtMatrixLayoutSetAttribute(L.l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)), op,
        dev);
  }
}

bool fits_int(int64_t v) { return v >= 0 && v <= int64_t(INT32_MAX); }

// cublasGemmStridedBatchedEx: for what Lt has no algorithm for.
void run_cublas(const KernelCall& c, const Gemm& g, cudaStream_t stream, int dev) {
  const char* op = c.op_name();
  if (!fits_int(g.m) || !fits_int(g.n) || !fits_int(g.k) || !fits_int(g.lda) || !fits_int(g.ldb) || !fits_int(g.ldd) ||
      !fits_int(g.batch))
    fail(TSR_INVALID_ARGUMENT, op, ": sizes [", g.n, ", ", g.k, "] x [", g.k, ", ", g.m, "] (batch ", g.batch,
         ") exceed cuBLAS's 32-bit range and cuBLASLt has no algorithm for them (", dtype_name(c.dtype()),
         ", cuda:", dev, ")");
  cublasHandle_t h = cublas_handle(dev);
  TSR_CUBLAS_CHECK(cublasSetStream(h, stream), op, dev);
  // A workspace of our own (from the caching allocator) so that graph capture never sees
  // cuBLAS allocate; set per call since the scratch block changes.
  Scratch ws(c, kMaxWorkspace);
  TSR_CUBLAS_CHECK(cublasSetWorkspace(h, ws.data(), ws.size()), op, dev);
  cublasMath_t math = CUBLAS_DEFAULT_MATH;
  if (g.t.restrict_reduction) math = cublasMath_t(math | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION);
  TSR_CUBLAS_CHECK(cublasSetMathMode(h, math), op, dev);
  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool f64 = g.t.scale == CUDA_R_64F;
  if (g.bias) {  // D's columns start as the bias; the GEMM accumulates onto them
    launch_pack_matrix(g.bias, g.d, 1, g.n, g.m, 0, 0, 1, int(itemsize(c.dtype())), stream);
    after_launch(c);
  }
  const void* beta =
      g.bias ? (f64 ? static_cast<const void*>(&one_d) : &one_f) : (f64 ? static_cast<const void*>(&zero_d) : &zero_f);
  TSR_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, g.opa, g.opb, int(g.m), int(g.n), int(g.k),
                                              f64 ? static_cast<const void*>(&one_d) : &one_f, g.a, g.t.data,
                                              int(g.lda), g.sa, g.b, g.t.data, int(g.ldb), g.sb, beta, g.d, g.t.data,
                                              int(g.ldd), g.sd, int(g.batch), g.t.compute, CUBLAS_GEMM_DEFAULT),
                   op, dev);
}

void run_gemm(const KernelCall& c, const Gemm& g, cudaStream_t stream, int dev) {
  const char* op = c.op_name();
  // Lt's batch count is 32-bit: split larger batches.
  if (g.batch > int64_t(INT32_MAX)) {
    for (int64_t b0 = 0; b0 < g.batch; b0 += INT32_MAX) {
      Gemm part = g;
      part.batch = std::min<int64_t>(INT32_MAX, g.batch - b0);
      part.a = static_cast<const char*>(g.a) + b0 * g.sa * int64_t(itemsize(c.dtype()));
      part.b = static_cast<const char*>(g.b) + b0 * g.sb * int64_t(itemsize(c.dtype()));
      part.d = static_cast<char*>(g.d) + b0 * g.sd * int64_t(itemsize(c.dtype()));
      run_gemm(c, part, stream, dev);
    }
    return;
  }
  AlgoKey key{};
  key.device = dev;
  key.data = int32_t(g.t.data);
  key.compute = int32_t(g.t.compute);
  key.restrict_reduction = g.t.restrict_reduction;
  key.opa = int32_t(g.opa);
  key.opb = int32_t(g.opb);
  key.m = g.m, key.n = g.n, key.k = g.k;
  key.lda = g.lda, key.ldb = g.ldb, key.ldc = g.ldd;
  key.batch = g.batch;
  key.sa = g.batch > 1 ? g.sa : 0, key.sb = g.batch > 1 ? g.sb : 0, key.sc = g.batch > 1 ? g.sd : 0;
  key.align_a = alignment_of(g.a), key.align_b = alignment_of(g.b), key.align_c = alignment_of(g.d);
  const cublasLtEpilogue_t epilogue = g.bias ? CUBLASLT_EPILOGUE_BIAS : CUBLASLT_EPILOGUE_DEFAULT;
  // The heuristic reads the bias pointer's alignment (cublasLt.h), so the cached answer depends
  // on it too.
  key.epilogue = uint32_t(epilogue) | (g.bias ? alignment_of(g.bias) << 16 : 0u);

  LtDesc desc;
  TSR_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc.d, g.t.compute, g.t.scale), op, dev);
  TSR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.d, CUBLASLT_MATMUL_DESC_TRANSA, &g.opa, sizeof(g.opa)), op, dev);
  TSR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.d, CUBLASLT_MATMUL_DESC_TRANSB, &g.opb, sizeof(g.opb)), op, dev);
  if (g.bias) {  // the bias data type defaults to D's
    TSR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.d, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)),
                     op, dev);
    TSR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc.d, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &g.bias, sizeof(g.bias)),
                     op, dev);
  }
  LtLayout la, lb, ld;
  make_layout(la, g.t.data, g.a_rows, g.a_cols, g.lda, g.batch, g.sa, op, dev);
  make_layout(lb, g.t.data, g.b_rows, g.b_cols, g.ldb, g.batch, g.sb, op, dev);
  make_layout(ld, g.t.data, g.m, g.n, g.ldd, g.batch, g.sd, op, dev);
  cublasLtHandle_t lt = cublaslt_handle(dev);

  AlgoEntry e{};
  if (!algo_cache().find(key, &e)) {
    LtPref pref;
    TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref.p), op, dev);
    const uint64_t max_ws = kMaxWorkspace;
    TSR_CUBLAS_CHECK(
        cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)),
        op, dev);
    const uint32_t aligns[3] = {key.align_a, key.align_b, key.align_c};
    TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                                          &aligns[0], sizeof(uint32_t)),
                     op, dev);
    TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                                          &aligns[1], sizeof(uint32_t)),
                     op, dev);
    TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                                          &aligns[2], sizeof(uint32_t)),
                     op, dev);
    TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                                          &aligns[2], sizeof(uint32_t)),
                     op, dev);
    if (g.t.restrict_reduction) {
      const uint32_t mask = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
      TSR_CUBLAS_CHECK(
          cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &mask, sizeof(mask)),
          op, dev);
    }
    cublasLtMatmulHeuristicResult_t res{};
    int count = 0;
    const cublasStatus_t st =
        cublasLtMatmulAlgoGetHeuristic(lt, desc.d, la.l, lb.l, ld.l, ld.l, pref.p, 1, &res, &count);
    if (st == CUBLAS_STATUS_SUCCESS && count > 0 && res.state == CUBLAS_STATUS_SUCCESS) {
      e = {true, res.algo, res.workspaceSize};
    } else if (st == CUBLAS_STATUS_SUCCESS || st == CUBLAS_STATUS_NOT_SUPPORTED) {
      e = {false, {}, 0};
    } else {
      throw_cublas_error(st, op, "cublasLtMatmulAlgoGetHeuristic", dev);
    }
    algo_cache().put(key, e);
  }
  if (!e.found) return run_cublas(c, g, stream, dev);

  const float one_f = 1.0f, zero_f = 0.0f;
  const double one_d = 1.0, zero_d = 0.0;
  const bool f64 = g.t.scale == CUDA_R_64F;
  std::optional<Scratch> ws;
  if (e.workspace) ws.emplace(c, e.workspace);
  const cublasStatus_t st = cublasLtMatmul(lt, desc.d, f64 ? static_cast<const void*>(&one_d) : &one_f, g.a, la.l, g.b,
                                           lb.l, f64 ? static_cast<const void*>(&zero_d) : &zero_f, g.d, ld.l, g.d,
                                           ld.l, &e.algo, ws ? ws->data() : nullptr, e.workspace, stream);
  if (st == CUBLAS_STATUS_NOT_SUPPORTED) return run_cublas(c, g, stream, dev);
  if (st != CUBLAS_STATUS_SUCCESS) throw_cublas_error(st, op, "cublasLtMatmul", dev);
}

// out [batch, m, n] (dense) = A [batch, m, k] @ B [batch, k, n] (+ bias [n], a dense vector, for
// batch 1) for one kernel call.
void matmul(KernelCall& c, Operand A, Operand B, void* out, int64_t out_bs, int64_t batch, int64_t m, int64_t n,
            int64_t k, const void* bias = nullptr) {
  if (batch == 0 || m == 0 || n == 0) return;
  const int dev = c.device().index;
  DeviceGuard guard(dev);
  const cudaStream_t stream = stream_of(c);
  const size_t es = itemsize(c.dtype());
  const tsr_tensor_view_t& O = c.output(0);
  // The core allocates a dense output (into_dense); everything below relies on it.
  const int32_t od = O.ndim;
  const bool dense =
      (n <= 1 || O.strides[od - 1] == 1) && (m <= 1 || O.strides[od - 2] == n) && (batch <= 1 || out_bs == m * n);
  if (!dense)
    fail(TSR_INTERNAL, c.op_name(), ": expected a dense output on cuda:", dev, ", got strides ", O.strides[0], ", ",
         O.strides[1]);
  if (bias && batch != 1) fail(TSR_INTERNAL, c.op_name(), ": a bias needs batch 1, got ", batch);
  if (k == 0) {  // empty reduction: zeros (all-zero bits in every dtype), or the bias rows
    if (bias) {
      launch_pack_matrix(bias, out, 1, m, n, 0, 0, 1, int(es), stream);
      after_launch(c);
    } else {
      TSR_CUDA_CHECK(cudaMemsetAsync(out, 0, size_t(batch * m * n) * es, stream), c.op_name(), dev);
    }
    return;
  }
  if (c.dtype() != TSR_F32 && c.dtype() != TSR_F64 && c.dtype() != TSR_F16 && c.dtype() != TSR_BF16) {
    if (bias) c.unsupported_dtype();  // _nn_linear is registered for floating dtypes only
    IntGemmArgs p{A.data, B.data, out, batch, m, n, k, A.bs, A.rs, A.cs, B.bs, B.rs, B.cs};
    launch_int_gemm(c.dtype(), p, stream);
    after_launch(c);
    return;
  }
  // Operands no transpose flag describes: a dense row-major copy.
  ColLayout la{}, lb{};
  std::unique_ptr<Scratch> pa, pb;
  auto pack = [&](Operand& x, std::unique_ptr<Scratch>& keep, ColLayout& l) {
    if (layout_of_transpose(x, &l)) return;
    keep.reset(new Scratch(c, size_t(batch * x.rows * x.cols) * es));
    launch_pack_matrix(x.data, keep->data(), batch, x.rows, x.cols, x.bs, x.rs, x.cs, int(es), stream);
    after_launch(c);
    x = {keep->data(), x.rows, x.cols, x.cols, 1, x.rows * x.cols};
    layout_of_transpose(x, &l);
  };
  pack(A, pa, la);
  pack(B, pb, lb);
  // C^T [n, m] = B^T [n, k] @ A^T [k, m] in column-major terms.
  Gemm g{};
  g.t = gemm_types(c);
  g.opa = lb.op, g.opb = la.op;
  g.m = n, g.n = m, g.k = k;
  g.a = B.data, g.lda = lb.ld, g.sa = B.bs, g.a_rows = lb.rows, g.a_cols = lb.cols;
  g.b = A.data, g.ldb = la.ld, g.sb = A.bs, g.b_rows = la.rows, g.b_cols = la.cols;
  g.d = out, g.ldd = std::max<int64_t>(1, n), g.sd = m * n;
  g.batch = batch;
  // The epilogue reads the bias with vector loads: a misaligned one (a view at an odd offset) is
  // copied into an aligned scratch block first (n elements, negligible beside the GEMM).
  std::unique_ptr<Scratch> aligned_bias;
  if (bias && alignment_of(bias) < 16) {
    aligned_bias.reset(new Scratch(c, size_t(n) * es));
    TSR_CUDA_CHECK(cudaMemcpyAsync(aligned_bias->data(), bias, size_t(n) * es, cudaMemcpyDeviceToDevice, stream),
                   c.op_name(), dev);
    bias = aligned_bias->data();
  }
  g.bias = bias;
  run_gemm(c, g, stream, dev);
}

void mm_kernel(KernelCall& c) {
  const kernels::MatmulViews v = kernels::mm_views(c);
  matmul(c, v.a, v.b, v.out, v.out_bs, v.batch, v.m, v.n, v.k);
}

void bmm_kernel(KernelCall& c) {
  const kernels::MatmulViews v = kernels::bmm_views(c);
  matmul(c, v.a, v.b, v.out, v.out_bs, v.batch, v.m, v.n, v.k);
}

// _nn_linear(x [M, K], w [N, K], bias [N]) -> [M, N] = x @ w^T + bias (kernels::linear_views).
void linear_kernel(KernelCall& c) {
  const kernels::MatmulViews v = kernels::linear_views(c);
  matmul(c, v.a, v.b, v.out, v.out_bs, v.batch, v.m, v.n, v.k, c.input(2).data);
}

}  // namespace

TSR_CUDA_KERNELS(matmul) {
  r.kernel("mm", "cuda::mm", device_type, kAllMask, TSR_KERNEL(mm_kernel));
  r.kernel("bmm", "cuda::bmm", device_type, kAllMask, TSR_KERNEL(bmm_kernel));
  if (r.has_op("_nn_linear"))  // a core older than the fused linear lacks the op
    r.kernel("_nn_linear", "cuda::linear_bias", device_type, kFloatingMask, TSR_KERNEL(linear_kernel));
}

}  // namespace tsr::cuda
