// scaled_mm on CUDA (generic, any GPU cuBLASLt has fp8 kernels for: compute capability 8.9,
// 9.0 and later): fp8 operands with torch._scaled_mm's tensorwise and rowwise scaling, through
// cuBLASLt:
//   tensorwise  float8_e4m3fn / float8_e5m2 operands, float32 scale_a and scale_b of one element
//               (cuBLASLt's A/B_SCALE_POINTER, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
//   rowwise     float32 scale_a [M, 1] and scale_b [1, N] (CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F).
// The block-scaled modes (MXFP8: float8_e8m0fnu scales; NVFP4: float4_e2m1fn_x2 operands) need
// Blackwell's block-scaled MMAs: the sm100 plugin overrides this kernel on compute capability
// 10.x with one that has them (backends/sm100/scaled_mm.cpp); here they are an UNIMPLEMENTED
// error that says so.
//
// out = cast_out(scale_result * (scale_a (x) scale_b . (self @ mat2)) + bias): scale_result (an
// optional float32 scalar on the device) is cuBLASLt's alpha in device pointer mode, so the
// bias, added by the CUBLASLT_EPILOGUE_BIAS epilogue, is not scaled by it. out_dtype: bfloat16,
// float16, float32, or an fp8 dtype (tensorwise).
//
// Layout (PyTorch's CUDA rule, what cuBLASLt's fp8 kernels take): self row-major, mat2
// column-major (mat2 = w.t() of a row-major [N, K] w), any leading dimension; anything else is
// an INVALID_ARGUMENT error naming the strides. Row-major D = A B is computed as the
// column-major D^T = B^T A^T: cuBLASLt's "A" is mat2 (TRANSA = T, scaled by scale_b), its "B"
// is self (scaled by scale_a): the "TN" layout fp8 GEMMs require.
//
// The algorithm is cublasLtMatmulAlgoGetHeuristic's first answer for the exact problem (pointer
// alignments included); none is an UNIMPLEMENTED error naming the problem. The workspace comes
// from the caching allocator (Scratch), sized to what the algorithm asks; everything is enqueued
// on the kernel's stream (graph capture works).
#include <string>

#include "cublas_handles.hpp"

namespace tsr::cuda {
namespace {

constexpr size_t kMaxWorkspace = size_t(32) << 20;

struct Desc {
  cublasLtMatmulDesc_t d = nullptr;
  ~Desc() { if (d) cublasLtMatmulDescDestroy(d); }
};
struct Layout {
  cublasLtMatrixLayout_t l = nullptr;
  ~Layout() { if (l) cublasLtMatrixLayoutDestroy(l); }
};
struct Pref {
  cublasLtMatmulPreference_t p = nullptr;
  ~Pref() { if (p) cublasLtMatmulPreferenceDestroy(p); }
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
};
Arg arg_of(const KernelCall& c, size_t i) {
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

enum class Mode { Tensorwise, Rowwise, Mxfp8, Nvfp4 };
const char* mode_name(Mode m) {
  switch (m) {
    case Mode::Tensorwise: return "tensorwise";
    case Mode::Rowwise: return "rowwise";
    case Mode::Mxfp8: return "MXFP8";
    default: return "NVFP4";
  }
}

bool is_fp8(tsr_dtype_t t) { return t == TSR_F8_E4M3FN || t == TSR_F8_E5M2; }

cudaDataType_t lt_type(const KernelCall& c, tsr_dtype_t t, const char* role) {
  switch (t) {
    case TSR_F8_E4M3FN: return CUDA_R_8F_E4M3;
    case TSR_F8_E5M2: return CUDA_R_8F_E5M2;
    case TSR_F4_E2M1FN_X2: return CUDA_R_4F_E2M1;
    case TSR_BF16: return CUDA_R_16BF;
    case TSR_F16: return CUDA_R_16F;
    case TSR_F32: return CUDA_R_32F;
    default: fail(TSR_INVALID_ARGUMENT, c.op_name(), ": ", role, " of dtype ", dtype_name(t), " is not supported on cuda");
  }
}

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

template <class T>
void set_desc(const Desc& d, cublasLtMatmulDescAttributes_t attr, const T& v, const char* op, int dev) {
  TSR_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d.d, attr, &v, sizeof(v)), op, dev);
}

uint32_t alignment_of(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && (a % al) != 0) al >>= 1;
  return al;
}

void scaled_mm_kernel(KernelCall& c) {
  const char* op = c.op_name();
  const int dev = c.device().index;
  const Arg a = arg_of(c, 0), b = arg_of(c, 1), sa = arg_of(c, 2), sb = arg_of(c, 3);
  const Arg bias = arg_of(c, 4), sres = arg_of(c, 5);
  const bool fast_accum = !c.arg_is_none(7) && c.arg_bool(7);
  const tsr_tensor_view_t& out = c.output(0);
  TSR_CHECK(a.present && b.present && sa.present && sb.present, TSR_INVALID_ARGUMENT, op,
            ": self, mat2, scale_a and scale_b are required");
  TSR_CHECK(a.ndim == 2 && b.ndim == 2 && out.ndim == 2, TSR_INVALID_ARGUMENT, op, ": expected 2-D self and mat2, got ",
            a.ndim, "-D and ", b.ndim, "-D");

  // The mode, from the operand and scale dtypes.
  const bool fp4 = a.dtype == TSR_F4_E2M1FN_X2;
  TSR_CHECK(a.dtype == b.dtype || (is_fp8(a.dtype) && is_fp8(b.dtype)), TSR_INVALID_ARGUMENT, op,
            ": self and mat2 must both be fp8 or both float4_e2m1fn_x2, got ", dtype_name(a.dtype), " and ",
            dtype_name(b.dtype));
  TSR_CHECK(fp4 || is_fp8(a.dtype), TSR_INVALID_ARGUMENT, op, ": operands must be float8_e4m3fn, float8_e5m2 or "
            "float4_e2m1fn_x2, got ", dtype_name(a.dtype));
  const int64_t M = a.sizes[0], N = b.sizes[1];
  const int64_t pack = fp4 ? 2 : 1;  // fp4 tensors hold two values per element
  const int64_t K = a.sizes[1] * pack;
  TSR_CHECK(b.sizes[0] * pack == K, TSR_INVALID_ARGUMENT, op, ": self [", a.sizes[0], ", ", a.sizes[1],
            "] and mat2 [", b.sizes[0], ", ", b.sizes[1], "] cannot be multiplied");
  TSR_CHECK(out.sizes[0] == M && out.sizes[1] == N && (N == 1 || out.strides[1] == 1) && (M == 1 || out.strides[0] == N),
            TSR_INTERNAL, op, ": expected a dense [", M, ", ", N, "] output");
  TSR_CHECK(!fp4 && sa.dtype != TSR_F8_E8M0FNU && sb.dtype != TSR_F8_E8M0FNU, TSR_UNIMPLEMENTED, op, ": ",
            fp4 ? "NVFP4" : "MXFP8", " (block-scaled) scaled_mm needs a compute capability 10.x GPU (the sm100 plugin); "
            "cuda:", dev, " has only the tensorwise and rowwise fp8 modes");
  Mode mode;
  if (fp4) {
    TSR_CHECK(sa.dtype == TSR_F8_E4M3FN && sb.dtype == TSR_F8_E4M3FN, TSR_INVALID_ARGUMENT, op,
              ": NVFP4 needs float8_e4m3fn block scales, got ", dtype_name(sa.dtype), " and ", dtype_name(sb.dtype));
    mode = Mode::Nvfp4;
  } else if (sa.dtype == TSR_F8_E8M0FNU || sb.dtype == TSR_F8_E8M0FNU) {
    TSR_CHECK(sa.dtype == TSR_F8_E8M0FNU && sb.dtype == TSR_F8_E8M0FNU, TSR_INVALID_ARGUMENT, op,
              ": MXFP8 needs float8_e8m0fnu scales for both operands, got ", dtype_name(sa.dtype), " and ",
              dtype_name(sb.dtype));
    mode = Mode::Mxfp8;
  } else {
    TSR_CHECK(sa.dtype == TSR_F32 && sb.dtype == TSR_F32, TSR_INVALID_ARGUMENT, op,
              ": fp8 operands need float32 scales (tensorwise or rowwise) or float8_e8m0fnu ones (MXFP8), got ",
              dtype_name(sa.dtype), " and ", dtype_name(sb.dtype));
    if (sa.numel == 1 && sb.numel == 1)
      mode = Mode::Tensorwise;
    else if (sa.numel == M && sb.numel == N)
      mode = Mode::Rowwise;
    else
      fail(TSR_INVALID_ARGUMENT, op, ": float32 scales must have one element each (tensorwise) or be [M, 1] and [1, N] "
           "(rowwise), here M=", M, " N=", N, "; got ", sa.numel, " and ", sb.numel, " elements");
  }
  if (mode == Mode::Mxfp8 || mode == Mode::Nvfp4) {
    const int64_t block = mode == Mode::Mxfp8 ? 32 : 16;
    TSR_CHECK(K % block == 0, TSR_INVALID_ARGUMENT, op, ": ", mode_name(mode), " needs K a multiple of ", block,
              ", got ", K);
    const int64_t need_a = round_up(M, 128) * round_up(K / block, 4), need_b = round_up(N, 128) * round_up(K / block, 4);
    TSR_CHECK(sa.numel == need_a && sb.numel == need_b, TSR_INVALID_ARGUMENT, op, ": ", mode_name(mode),
              " scales in the swizzled 128x4 layout need ", need_a, " (scale_a) and ", need_b,
              " (scale_b) elements for M=", M, " N=", N, " K=", K, "; got ", sa.numel, " and ", sb.numel);
  }
  // cuBLASLt reads scales as dense vectors or byte arrays.
  TSR_CHECK(sa.contiguous && sb.contiguous, TSR_INVALID_ARGUMENT, op,
            ": scale_a and scale_b must be contiguous on cuda (call .contiguous() first)");
  // PyTorch's CUDA layout rule.
  TSR_CHECK(a.strides[1] == 1 && a.strides[0] >= a.sizes[1], TSR_INVALID_ARGUMENT, op,
            ": self must be row-major (strides [ld, 1]), got strides [", a.strides[0], ", ", a.strides[1], "]");
  TSR_CHECK(b.strides[0] == 1 && b.strides[1] >= b.sizes[0], TSR_INVALID_ARGUMENT, op,
            ": mat2 must be column-major (the .t() of a row-major [N, K] tensor: strides [1, ld]), got strides [",
            b.strides[0], ", ", b.strides[1], "]");
  if (bias.present)
    TSR_CHECK(bias.ndim == 1 && bias.sizes[0] == N && bias.strides[0] == 1, TSR_INVALID_ARGUMENT, op,
              ": bias must be a dense [N] = [", N, "] vector");
  if (sres.present)
    TSR_CHECK(sres.numel == 1 && sres.dtype == TSR_F32, TSR_INVALID_ARGUMENT, op,
              ": scale_result must be a float32 scalar");
  const tsr_dtype_t out_dtype = static_cast<tsr_dtype_t>(out.dtype);
  if (M == 0 || N == 0) return;

  DeviceGuard guard(dev);
  const cudaStream_t stream = stream_of(c);
  if (K == 0) {  // an empty sum: cuBLASLt takes no K of 0; the output is the bias, or zeros
    TSR_CHECK(!bias.present, TSR_UNIMPLEMENTED, op, ": K = 0 with a bias is not implemented on cuda");
    TSR_CUDA_CHECK(cudaMemsetAsync(out.data, 0, size_t(M * N) * itemsize(out_dtype), stream), op, dev);
    return;
  }
  const cudaDataType_t ta = lt_type(c, b.dtype, "mat2"), tb = lt_type(c, a.dtype, "self");
  const cudaDataType_t td = lt_type(c, out_dtype, "the output");
  const bool out_fp8 = is_fp8(out_dtype);
  const cudaDataType_t tc = out_fp8 ? CUDA_R_16BF : td;  // fp8 D takes a 16-bit C; never read (beta = 0)

  Desc desc;
  TSR_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc.d, CUBLAS_COMPUTE_32F, CUDA_R_32F), op, dev);
  set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSA, CUBLAS_OP_T, op, dev);
  set_desc(desc, CUBLASLT_MATMUL_DESC_TRANSB, CUBLAS_OP_N, op, dev);
  // cuBLASLt's A is mat2 (scaled by scale_b), its B is self (scaled by scale_a).
  set_desc(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, static_cast<const void*>(sb.data), op, dev);
  set_desc(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, static_cast<const void*>(sa.data), op, dev);
  if (mode != Mode::Tensorwise) {
    const int32_t m = mode == Mode::Rowwise ? CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F
                      : mode == Mode::Mxfp8 ? CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0
                                            : CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    set_desc(desc, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, m, op, dev);
    set_desc(desc, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, m, op, dev);
  }
  if (fast_accum && (mode == Mode::Tensorwise || mode == Mode::Rowwise))
    set_desc(desc, CUBLASLT_MATMUL_DESC_FAST_ACCUM, int8_t(1), op, dev);
  if (bias.present) {
    set_desc(desc, CUBLASLT_MATMUL_DESC_EPILOGUE, CUBLASLT_EPILOGUE_BIAS, op, dev);
    set_desc(desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(bias.data), op, dev);
    set_desc(desc, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, int32_t(lt_type(c, bias.dtype, "bias")), op, dev);
  }
  if (sres.present) set_desc(desc, CUBLASLT_MATMUL_DESC_POINTER_MODE, CUBLASLT_POINTER_MODE_DEVICE, op, dev);

  // Lt layouts in elements (an fp4 element is one value; the leading dimension counts values).
  Layout la, lb, lc, ld;
  TSR_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&la.l, ta, uint64_t(K), uint64_t(N), b.strides[1] * pack), op, dev);
  TSR_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lb.l, tb, uint64_t(K), uint64_t(M), a.strides[0] * pack), op, dev);
  TSR_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&lc.l, tc, uint64_t(N), uint64_t(M), N), op, dev);
  TSR_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&ld.l, td, uint64_t(N), uint64_t(M), N), op, dev);

  Pref pref;
  TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref.p), op, dev);
  const uint64_t ws_cap = kMaxWorkspace;
  TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_cap, sizeof(ws_cap)),
           op, dev);
  const uint32_t al_a = alignment_of(b.data), al_b = alignment_of(a.data), al_d = alignment_of(out.data);
  TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a)),
           op, dev);
  TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b)),
           op, dev);
  TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_d, sizeof(al_d)),
           op, dev);
  TSR_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof(al_d)),
           op, dev);

  cublasLtHandle_t h = cublaslt_handle(dev);
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(h, desc.d, la.l, lb.l, lc.l, ld.l, pref.p, 1, &heur, &found);
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0)
    fail(TSR_UNIMPLEMENTED, op, ": cuBLASLt has no algorithm for ", mode_name(mode), " ", dtype_name(a.dtype), " x ",
         dtype_name(b.dtype), " -> ", dtype_name(out_dtype), " [", M, ", ", K, "] x [", K, ", ", N, "]",
         bias.present ? " with bias" : "", " on cuda:", dev, " (", cublasGetStatusName(hs), ")");

  // Workspace, plus 16 bytes for the device-side beta (0) that pointer mode DEVICE needs.
  const size_t ws = (heur.workspaceSize + 255) / 256 * 256;
  Scratch scratch(c, ws + (sres.present ? 16 : 0));
  const float one = 1.0f, zero = 0.0f;
  const void* alpha = &one;
  const void* beta = &zero;
  if (sres.present) {
    float* dbeta = reinterpret_cast<float*>(static_cast<char*>(scratch.data()) + ws);
    TSR_CUDA_CHECK(cudaMemsetAsync(dbeta, 0, sizeof(float), stream), op, dev);
    alpha = sres.data;
    beta = dbeta;
  }
  TSR_CUBLAS_CHECK(cublasLtMatmul(h, desc.d, alpha, b.data, la.l, a.data, lb.l, beta, out.data, lc.l, out.data, ld.l, &heur.algo,
                          heur.workspaceSize ? scratch.data() : nullptr, heur.workspaceSize, stream),
           op, dev);
}

}  // namespace

TSR_CUDA_KERNELS(scaled_mm) {
  // Every dispatch dtype (mask 0): the kernel decides by the operand and scale dtypes. A core
  // without the op (older than the low-precision ops) gets no kernel.
  if (r.has_op("scaled_mm")) r.kernel("scaled_mm", "cuda::scaled_mm_cublaslt", device_type, 0, TSR_KERNEL(scaled_mm_kernel));
}

}  // namespace tsr::cuda
