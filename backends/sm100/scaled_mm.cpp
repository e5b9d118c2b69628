// scaled_mm on compute capability 10.x through cuBLASLt, every scaling mode of
// torch._scaled_mm, including the two the generic cuda kernel (backends/cuda/scaled_mm.cpp)
// does not have, because they need Blackwell's block-scaled tensor-core MMAs:
//   tensorwise  fp8 operands, f32 scale_a/scale_b of one element (CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
//   rowwise     fp8 operands, f32 scale_a [M,1], scale_b [1,N]      (..._OUTER_VEC_32F);
//   MXFP8       fp8 operands, float8_e8m0fnu scales, one per 32 along K (..._VEC32_UE8M0);
//   NVFP4       float4_e2m1fn_x2 operands ([M,K/2], [K/2,N]), float8_e4m3fn scales, one per 16
//               along K (..._VEC16_UE4M3).
// Block scales are in cuBLASLt's swizzled layout: the [rows, K/block] scale matrix is padded to
// multiples of 128 rows and 4 columns and stored as 128x4 tiles of 512 bytes (row tile major,
// then column tile; inside a tile, (r, c) is at (r % 32) * 16 + (r / 32) * 4 + c), one such
// tensor per operand, rows = M for scale_a and N for scale_b.
//
// out = cast_out(scale_result * (scale_a (x) scale_b . (self @ mat2)) + bias). scale_result (an
// f32 scalar on the device) is cuBLASLt's alpha in device pointer mode, so the bias, added by the
// epilogue, is not scaled by it.
//
// Why sm100 has the tensorwise and rowwise modes too: the dispatcher calls the single best
// kernel for (op, device, dtype) and has no "decline, try the next" path, so this override takes
// every scaled_mm call on a 10.x device and must do every mode. The algorithm is always
// cublasLtMatmulAlgoGetHeuristic's first answer for the exact problem (no architecture table);
// no algorithm is an UNIMPLEMENTED error naming the mode and the shapes (the generic kernel has
// the same behaviour: it too has only cuBLASLt).
//
// Layout (PyTorch's CUDA rule): self row-major, mat2 column-major (mat2 = w.t() of a row-major
// [N, K] w), any leading dimension; the output dense row-major. Row-major D = A B is computed as
// the column-major D^T = B^T A^T, i.e. cuBLASLt's "A" is mat2 (TRANSA = T) and "B" is self.
#include <cublasLt.h>

#include <mutex>
#include <string>
#include <unordered_map>

#include "block_scale.hpp"
#include "sm100_common.hpp"

namespace tsr::sm100 {
namespace {

constexpr size_t kMaxWorkspace = size_t(32) << 20;

// cuBLASLt has no status-to-text function of its own (cublasGetStatusName is libcublas's, which
// this library does not link).
const char* lt_status_name(cublasStatus_t st) {
  switch (st) {
    case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
    case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
    case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
    case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
    case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
    case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
    case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
    case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
    case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
    case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
    default: return "cuBLAS status";
  }
}

[[noreturn]] void throw_lt(cublasStatus_t st, const char* op, const char* what, int dev) {
  fail(st == CUBLAS_STATUS_ALLOC_FAILED ? TSR_RESOURCE_EXHAUSTED
       : (st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE) ? TSR_INVALID_ARGUMENT
                                                                                  : TSR_INTERNAL,
       op, ": ", what, " failed on cuda:", dev, ": ", lt_status_name(st), " (", int(st), ")");
}
#define LT_CHECK(expr, op, dev)                                            \
  do {                                                                     \
    const cublasStatus_t lt_st_ = (expr);                                  \
    if (lt_st_ != CUBLAS_STATUS_SUCCESS) throw_lt(lt_st_, (op), #expr, (dev)); \
  } while (0)

// The calling thread's cuBLASLt handle for `dev` (created on first use, kept until exit: tearing
// handles down in static destructors races with the CUDA context's teardown).
cublasLtHandle_t lt_handle(int dev) {
  thread_local std::unordered_map<int, cublasLtHandle_t> handles;
  auto it = handles.find(dev);
  if (it != handles.end()) return it->second;
  cublasLtHandle_t h = nullptr;
  LT_CHECK(cublasLtCreate(&h), "scaled_mm", dev);
  handles.emplace(dev, h);
  return h;
}

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

template <class T>
void set_desc(const Desc& d, cublasLtMatmulDescAttributes_t attr, const T& v, const char* op, int dev) {
  LT_CHECK(cublasLtMatmulDescSetAttribute(d.d, attr, &v, sizeof(v)), op, dev);
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
    const int64_t need_a = swizzled_numel(M, K / block), need_b = swizzled_numel(N, K / block);
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
    TSR_SM100_CUDA_CHECK(cudaMemsetAsync(out.data, 0, size_t(M * N) * itemsize(out_dtype), stream), op, dev);
    return;
  }
  const cudaDataType_t ta = lt_type(c, b.dtype, "mat2"), tb = lt_type(c, a.dtype, "self");
  const cudaDataType_t td = lt_type(c, out_dtype, "the output");
  const bool out_fp8 = is_fp8(out_dtype);
  const cudaDataType_t tc = out_fp8 ? CUDA_R_16BF : td;  // fp8 D takes a 16-bit C; never read (beta = 0)

  Desc desc;
  LT_CHECK(cublasLtMatmulDescCreate(&desc.d, CUBLAS_COMPUTE_32F, CUDA_R_32F), op, dev);
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
  LT_CHECK(cublasLtMatrixLayoutCreate(&la.l, ta, uint64_t(K), uint64_t(N), b.strides[1] * pack), op, dev);
  LT_CHECK(cublasLtMatrixLayoutCreate(&lb.l, tb, uint64_t(K), uint64_t(M), a.strides[0] * pack), op, dev);
  LT_CHECK(cublasLtMatrixLayoutCreate(&lc.l, tc, uint64_t(N), uint64_t(M), N), op, dev);
  LT_CHECK(cublasLtMatrixLayoutCreate(&ld.l, td, uint64_t(N), uint64_t(M), N), op, dev);

  Pref pref;
  LT_CHECK(cublasLtMatmulPreferenceCreate(&pref.p), op, dev);
  const uint64_t ws_cap = kMaxWorkspace;
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_cap, sizeof(ws_cap)),
           op, dev);
  const uint32_t al_a = alignment_of(b.data), al_b = alignment_of(a.data), al_d = alignment_of(out.data);
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &al_a, sizeof(al_a)),
           op, dev);
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &al_b, sizeof(al_b)),
           op, dev);
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &al_d, sizeof(al_d)),
           op, dev);
  LT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref.p, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &al_d, sizeof(al_d)),
           op, dev);

  cublasLtHandle_t h = lt_handle(dev);
  cublasLtMatmulHeuristicResult_t heur{};
  int found = 0;
  const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(h, desc.d, la.l, lb.l, lc.l, ld.l, pref.p, 1, &heur, &found);
  if (hs != CUBLAS_STATUS_SUCCESS || found == 0)
    fail(TSR_UNIMPLEMENTED, op, ": cuBLASLt has no algorithm for ", mode_name(mode), " ", dtype_name(a.dtype), " x ",
         dtype_name(b.dtype), " -> ", dtype_name(out_dtype), " [", M, ", ", K, "] x [", K, ", ", N, "]",
         bias.present ? " with bias" : "", " on cuda:", dev, " (", lt_status_name(hs), ")");

  // Workspace, plus 16 bytes for the device-side beta (0) that pointer mode DEVICE needs.
  const size_t ws = (heur.workspaceSize + 255) / 256 * 256;
  Scratch scratch(c, ws + (sres.present ? 16 : 0));
  const float one = 1.0f, zero = 0.0f;
  const void* alpha = &one;
  const void* beta = &zero;
  if (sres.present) {
    float* dbeta = reinterpret_cast<float*>(static_cast<char*>(scratch.data()) + ws);
    TSR_SM100_CUDA_CHECK(cudaMemsetAsync(dbeta, 0, sizeof(float), stream), op, dev);
    alpha = sres.data;
    beta = dbeta;
  }
  LT_CHECK(cublasLtMatmul(h, desc.d, alpha, b.data, la.l, a.data, lb.l, beta, out.data, lc.l, out.data, ld.l, &heur.algo,
                          heur.workspaceSize ? scratch.data() : nullptr, heur.workspaceSize, stream),
           op, dev);
}

}  // namespace

void register_scaled_mm(Registrar& r, const Context& ctx) {
  // Every dispatch dtype (mask 0): the kernel decides by the operand and scale dtypes.
  register_override(r, ctx, "scaled_mm", "sm100::scaled_mm_cublaslt", 0, TSR_KERNEL(scaled_mm_kernel));
}

}  // namespace tsr::sm100
