// Tessera SDK (vendor side, CUDA plugins only: needs the CUDA toolkit's cublasLt.h): scaled_mm
// (torch._scaled_mm) through cuBLASLt, written once for every CUDA plugin that registers it (the
// generic cuda backend, and sm100's override on compute capability 10.x). Host code.
//
//   tsr::cublaslt::scaled_mm<Scratch>(call, handle, stream, allow_block_scaled);
//
// Modes (the plan comes from tessera/kernels/quant_checks.hpp, the rules the core checked):
//   tensorwise  fp8 operands, float32 scale_a / scale_b of one element (SCALE_SCALAR_32F);
//   rowwise     float32 scale_a [M, 1], scale_b [1, N]                (SCALE_OUTER_VEC_32F);
//   MXFP8       fp8 operands, float8_e8m0fnu block scales, 1 per 32 along K (SCALE_VEC32_UE8M0);
//   NVFP4       float4_e2m1fn_x2 operands, float8_e4m3fn block scales, 1 per 16 (SCALE_VEC16_UE4M3).
// The block-scaled modes need Blackwell's block-scaled MMAs: with allow_block_scaled false they
// are an UNIMPLEMENTED error saying so (the generic kernel; sm100 overrides it on 10.x). A problem
// cuBLASLt has no algorithm for is UNIMPLEMENTED too, which declines it to the next kernel.
//
// out = cast_out(scale_result * (scale_a (x) scale_b . (self @ mat2)) + bias): scale_result (an
// optional float32 scalar on the device) is cuBLASLt's alpha in device pointer mode, so the bias,
// added by the CUBLASLT_EPILOGUE_BIAS epilogue, is not scaled by it.
//
// Layout (PyTorch's CUDA rule, what cuBLASLt's fp8 kernels take): self row-major, mat2
// column-major (mat2 = w.t() of a row-major [N, K] w), any leading dimension; scales contiguous;
// anything else is an INVALID_ARGUMENT error naming the strides. Row-major D = A B is computed as
// the column-major D^T = B^T A^T: cuBLASLt's "A" is mat2 (TRANSA = T, scaled by scale_b), its "B"
// is self (scaled by scale_a): the "TN" layout fp8 GEMMs require.
//
// The algorithm is cublasLtMatmulAlgoGetHeuristic's first answer for the exact problem (pointer
// alignments included), never an architecture table; none is an UNIMPLEMENTED error naming the
// problem. Scratch (the plugin's stream-ordered device memory: Scratch(call, nbytes), data())
// holds the workspace; everything is enqueued on `stream` (graph capture works).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>

#include "tessera/kernels/quant_checks.hpp"
#include "tessera/plugin.hpp"

namespace tsr::cublaslt {

// cuBLASLt has no status-to-text function of its own (cublasGetStatusName is libcublas's, which
// a cuBLASLt-only library does not link).
inline const char* status_name(cublasStatus_t st) {
  switch (st) {
    case CUBLAS_STATUS_SUCCESS:
      return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED:
      return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED:
      return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE:
      return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH:
      return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR:
      return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED:
      return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR:
      return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED:
      return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR:
      return "CUBLAS_STATUS_LICENSE_ERROR";
    default:
      return "cuBLAS status";
  }
}

// Throws tsr::Error "OP: WHAT failed on cuda:DEV: STATUS (n)".
[[noreturn]] inline void throw_status(cublasStatus_t st, const char* op, const char* what, int dev) {
  fail(st == CUBLAS_STATUS_ALLOC_FAILED ? TSR_RESOURCE_EXHAUSTED
       : (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE) ? TSR_INVALID_ARGUMENT
                                                                                  : TSR_INTERNAL,
       op, ": ", what, " failed on cuda:", dev, ": ", status_name(st), " (", int(st), ")");
}
#define TSR_CUBLASLT_CHECK(expr, op, dev)                                                      \
  do {                                                                                         \
    const cublasStatus_t tsr_lt_st_ = (expr);                                                  \
    if (tsr_lt_st_ != CUBLAS_STATUS_SUCCESS) ::tsr::cublaslt::throw_status(tsr_lt_st_, (op), #expr, (dev)); \
  } while (0)

namespace detail {

struct Desc {
  cublasLtMatmulDesc_t d = nullptr;
  ~Desc() {
    if (d) cublasLtMatmulDescDestroy(d);
  }
};
struct Layout {
  cublasLtMatrixLayout_t l = nullptr;
  ~Layout() {
    if (l) cublasLtMatrixLayoutDestroy(l);
  }
};
struct Pref {
  cublasLtMatmulPreference_t p = nullptr;
  ~Pref() {
    if (p) cublasLtMatmulPreferenceDestroy(p);
  }
};

// A tensor argument read through the API (robust to how optional arguments map to views).
struct Arg {
  bool present = false;
  void* data = nullptr;
  tsr_dtype_t dtype = TSR_DTYPE_UNDEFINED;
  int32_t ndim = 0;
  const int64_t* sizes = nullptr;
  const int64_t* strides = nullptr;
  int64_t numel = 0;
  bool contiguous = false;
  kernels::QTensor q() const { return present ? kernels::QTensor(dtype, ndim, sizes) : kernels::QTensor(); }
};
inline Arg arg_of(const KernelCall& c, size_t i) {
  Arg a;
  tsr_tensor_t* t = c.arg_is_none(i) ? nullptr : c.arg_tensor(i);
  if (!t) return a;
  const tsr_api_t* api = c.api();
  a.present = true;
  a.data = api->tensor_data(t);
  a.dtype = api->tensor_dtype(t);
  a.ndim = api->tensor_ndim(t);
  a.sizes = api->tensor_sizes(t);
  a.strides = api->tensor_strides(t);
  a.numel = api->tensor_numel(t);
  a.contiguous = api->tensor_is_contiguous(t) != 0;
  return a;
}

inline cudaDataType_t data_type(const char* op, tsr_dtype_t t, const char* role) {
  switch (t) {
    case TSR_F8_E4M3FN:
      return CUDA_R_8F_E4M3;
    case TSR_F8_E5M2:
      return CUDA_R_8F_E5M2;
    case TSR_F4_E2M1FN_X2:
      return CUDA_R_4F_E2M1;
    case TSR_BF16:
      return CUDA_R_16BF;
    case TSR_F16:
      return CUDA_R_16F;
    case TSR_F32:
      return CUDA_R_32F;
    default:
      fail(TSR_INVALID_ARGUMENT, op, ": ", role, " of dtype ", dtype_name(t), " is not supported on cuda");
  }
}

template <class T>
void set_desc(const Desc& d, cublasLtMatmulDescAttributes_t attr, const T& v, const char* op, int dev) {
  TSR_CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(d.d, attr, &v, sizeof(v)), op, dev);
}
inline void set_pref(const Pref& p, cublasLtMatmulPreferenceAttributes_t attr, uint32_t v, const char* op, int dev) {
  TSR_CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(p.p, attr, &v, sizeof(v)), op, dev);
}

inline uint32_t alignment_of(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && (a % al) != 0) al >>= 1;
  return al;
}

inline void cuda_check(cudaError_t e, const char* op, const char* what, int dev) {
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    fail(TSR_INTERNAL, op, ": ", what, " failed on cuda:", dev, ": ", cudaGetErrorString(e));
  }
}

constexpr size_t kMaxWorkspace = size_t(32) << 20;

}  // namespace detail

template <class Scratch>
void scaled_mm(KernelCall& c, cublasLtHandle_t handle, cudaStream_t stream, bool allow_block_scaled) {
  using namespace detail;
  using kernels::ScaleMode;
  const char* op = c.op_name();
  const int dev = c.device().index;
  const Arg a = arg_of(c, 0), b = arg_of(c, 1), sa = arg_of(c, 2), sb = arg_of(c, 3);
  const Arg bias = arg_of(c, 4), sres = arg_of(c, 5);
  const bool fast_accum = !c.arg_is_none(7) && c.arg_bool(7);
  const tsr_tensor_view_t& out = c.output(0);
  TSR_CHECK(a.present && b.present && sa.present && sb.present, TSR_INTERNAL, op,
            ": self, mat2, scale_a and scale_b are required");
  // The plan from the rules the core has already checked the call with.
  kernels::ScaledMmPlan plan;
  const std::string err =
      kernels::check_scaled_mm(a.q(), b.q(), sa.q(), sb.q(), bias.q(), sres.q(), c.arg_dtype(6), &plan);
  if (!err.empty()) fail(TSR_INTERNAL, op, ": ", err);
  const ScaleMode mode = plan.mode;
  const bool block = mode == ScaleMode::MXFP8 || mode == ScaleMode::NVFP4;
  TSR_CHECK(allow_block_scaled || !block, TSR_UNIMPLEMENTED, op, ": ", kernels::scale_mode_name(mode),
            " scaled_mm on cuda:", dev,
            " needs cuBLASLt's block-scaled kernels of compute capability 10.x, through the sm100 plugin (the "
            "generic kernel has the tensorwise and rowwise fp8 modes; sm100 declines problems cuBLASLt has no "
            "algorithm for)");
  const int64_t M = plan.M, N = plan.N, K = plan.K;
  const int64_t pack = mode == ScaleMode::NVFP4 ? 2 : 1;  // fp4 tensors hold two values per element
  const tsr_dtype_t out_dtype = static_cast<tsr_dtype_t>(out.dtype);
  TSR_CHECK(out.ndim == 2 && out.sizes[0] == M && out.sizes[1] == N && (N == 1 || out.strides[1] == 1) &&
                (M == 1 || out.strides[0] == N),
            TSR_INTERNAL, op, ": expected a dense [", M, ", ", N, "] output");
  // What cuBLASLt reads: dense scale vectors or byte arrays, PyTorch's operand layout.
  TSR_CHECK(sa.contiguous && sb.contiguous, TSR_INVALID_ARGUMENT, op,
            ": scale_a and scale_b must be contiguous on cuda (call .contiguous() first)");
  TSR_CHECK(a.strides[1] == 1 && a.strides[0] >= a.sizes[1], TSR_INVALID_ARGUMENT, op,
            ": self must be row-major (strides [ld, 1]), got strides [", a.strides[0], ", ", a.strides[1], "]");
  TSR_CHECK(b.strides[0] == 1 && b.strides[1] >= b.sizes[0], TSR_INVALID_ARGUMENT, op,
            ": mat2 must be column-major (the .t() of a row-major [N, K] tensor: strides [1, ld]), got strides [",
            b.strides[0], ", ", b.strides[1], "]");
  TSR_CHECK(!bias.present || bias.strides[0] == 1 || N == 1, TSR_INVALID_ARGUMENT, op,
            ": bias must be a dense [N] = [", N, "] vector");
  if (M == 0 || N == 0) return;

  if (K == 0) {  // an empty sum: cuBLASLt takes no K of 0; the output is the bias, or zeros
    TSR_CHECK(!bias.present, TSR_UNIMPLEMENTED, op, ": K = 0 with a bias is not implemented on cuda");
    cuda_check(cudaMemsetAsync(out.data, 0, size_t(M * N) * itemsize(out_dtype), stream), op, "cudaMemsetAsync", dev);
    return;
  }
  const cudaDataType_t ta = data_type(op, b.dtype, "mat2"), tb = data_type(op, a.dtype, "self");
  const cudaDataType_t td = data_type(op, out_dtype, "the output");
  const bool out_fp8 = kernels::is_fp8_operand(out_dtype);
  const cudaDataType_t tc = out_fp8 ? CUDA_R_16BF : td;  // fp8 D takes a 16-bit C; never read (beta = 0)

  Desc desc;
  TSR_CUBLASLT_CHECK(cublasLtMatmulDescCreate(&desc.d, CUBLAS_COMPUTE_32F, CUDA_R_32F), op, dev);
  set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, op, dev);
  set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, op, dev);
  // cuBLASLt's A is mat2 (scaled by scale_b), its B is self (scaled by scale_a).
  set_desc(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(sb.data), op, dev);
  set_desc(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(sa.data), op, dev);
  if (mode != ScaleMode::Tensorwise) {
    const int32_t m = mode == ScaleMode::Rowwise ? CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
                      : mode == ScaleMode::MXFP8 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0
                                                 : CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    set_desc(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, m, op, dev);
    set_desc(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, m, op, dev);
  }
  if (fast_accum && !block) set_desc(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, int8_t(1), op, dev);
  if (bias.present) {
    set_desc(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS, op, dev);
    set_desc(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias.data), op, dev);
    set_desc(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(data_type(op, bias.dtype, "bias")), op, dev);
  }
  if (sres.present) set_desc(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE, op, dev);

  // Lt layouts in elements (an fp4 element is one value; the leading dimension counts values).
  Layout la, lb, lc, ld;
  TSR_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&la.l, ta, uint64_t(K), uint64_t(N), b.strides[1] * pack), op, dev);
  TSR_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&lb.l, tb, uint64_t(K), uint64_t(M), a.strides[0] * pack), op, dev);
  TSR_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&lc.l, tc, uint64_t(N), uint64_t(M), N), op, dev);
  TSR_CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(&ld.l, td, uint64_t(N), uint64_t(M), N), op, dev);

  Pref pref;
  TSR_CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref.p), op, dev);
  const uint64_t ws_cap = kMaxWorkspace;
  TSR_CUBLASLT_CHECK(
      cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_cap, sizeof(ws_cap)),
      op, dev);
  const uint32_t al_d = alignment_of(out.data);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, alignment_of(b.data), op, dev);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, alignment_of(a.data), op, dev);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, al_d, op, dev);
  set_pref(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, al_d, op, dev);

  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  const cublasStatus_t hs =
      cublasLtMatmulAlgoGetHeuristic(handle, desc.d, la.l, lb.l, lc.l, ld.l, pref.p, 1, &heur, &found);
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0)
    fail(TSR_UNIMPLEMENTED, op, ": cuBLASLt has no algorithm for ", kernels::scale_mode_name(mode), " ",
         dtype_name(a.dtype), " x ", dtype_name(b.dtype), " -> ", dtype_name(out_dtype), " [", M, ", ", K, "] x [", K,
         ", ", N, "]", bias.present ? " with bias" : "", " on cuda:", dev, " (", status_name(hs), ")");

  // Workspace, plus 16 bytes for the device-side beta (0) that pointer mode DEVICE needs.
  const size_t ws = (heur.workspaceSize + 255) / 256 * 256;
  Scratch scratch(c, ws + (sres.present ? 16 : 0));
  const float one = 1.0f, zero = 0.0f;
  const void* alpha = &one;
  const void* beta = &zero;
  if (sres.present) {
    float* dbeta = reinterpret_cast<float*>(static_cast<char*>(scratch.data()) + ws);
    cuda_check(cudaMemsetAsync(dbeta, 0, sizeof(float), stream), op, "cudaMemsetAsync", dev);
    alpha = sres.data;
    beta = dbeta;
  }
  TSR_CUBLASLT_CHECK(cublasLtMatmul(handle, desc.d, alpha, b.data, la.l, a.data, lb.l, beta, out.data, lc.l, out.data,
                                    ld.l, &heur.algo, heur.workspaceSize ? scratch.data() : nullptr,
                                    heur.workspaceSize, stream),
                     op, dev);
}

}  // namespace tsr::cublaslt
