// tessera_cuda_bench: the CUDA backend against the CUDA libraries called directly, in one run on
// one GPU, printed as a markdown table (the last thing printed).
//
//   row                      Tessera                          baseline (same run)          target
//   add f32 bandwidth        tsr::add, 64 Mi elements         cudaMemcpyAsync D2D, same    >= 90%
//                                                             bytes moved
//   softmax f32 bandwidth    tsr::softmax [16384, 4096] dim 1 cudaMemcpyAsync D2D, same    >= 90%
//   GEMM bf16 8192^3         tsr::mm                          best of cublasLtMatmul and   >= 95%
//   GEMM f32/TF32 8192^3     tsr::mm (MATMUL_ALLOW_TF32 on)   cublasGemmEx, same settings  >= 95%
//   scaled_mm fp8 8192^3     tsr scaled_mm, e4m3 tensorwise   cublasLtMatmul fp8, same     >= 95%
//                            scales, bf16 out                 problem and scales
//   fp8 vs bf16 GEMM         the same scaled_mm               tsr::mm bf16 (same run)      (speedup)
//   MXFP8 / NVFP4 vs fp8     scaled_mm block-scaled (sm_100   scaled_mm fp8 tensorwise     (speedup)
//   (compute capability 10.x only; other GPUs print a SKIP row)
//   linear+bias bf16         tsr linear (cuBLASLt bias        mm then add (the unfused     >= 100%
//                            epilogue)                        composite), same run
//   launch cost              tsr::add of 256 floats, host     -                            <= 4 us
//                            time per call (dispatch, output
//                            allocation, kernel launch)
//   alloc+free 1 MiB         tensor_empty + tensor_release    -                            <= 200 ns
//   GPT train step           CUDA graph replay of one step    the same step run eagerly    (speedup)
//
// Bandwidth counts bytes read + written (add: 3 x 4 B per element, softmax: 2 x 4 B, memcpy of S
// bytes: 2 S); ratio = Tessera's bandwidth / memcpy's. GEMM ratio = baseline time / Tessera time.
// Each GPU timing is the median of --reps timed runs (CUDA events on the stream the work runs on)
// after warm-up. The GPT step is `tessera train`'s default model (tools/train) on a batch of its
// addition task: forward, loss, zero_grad, backward, AdamW step (gradient clipping reads the norm
// on the host and cannot be captured, so both sides leave it out; the captured AdamW step replays
// the bias corrections of the step it was captured at, which changes values, not time).
//
// Without a GPU (or without the cuda plugin) it prints "no CUDA device: <reason>" and exits 0.
//
//   tessera_cuda_bench [--reps N] [--quick]
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "addition_task.hpp"
#include "gpt.hpp"
#include "tessera/ext_graphs.h"
#include "tessera/optim.hpp"
#include "tessera/tessera.hpp"

namespace {

using Clock = std::chrono::steady_clock;

int g_reps = 10;
bool g_quick = false;

struct Row {
  std::string name, tessera, baseline, ratio, target, status;
};
std::vector<Row> g_rows;

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
void blas_ok(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cublasGetStatusString(s));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Milliseconds of fn() on `stream`, median of g_reps runs after `warmup` runs.
double time_ms(cudaStream_t stream, const std::function<void()>& fn, int warmup = 2, int inner = 1) {
  for (int i = 0; i < warmup; ++i) fn();
  cuda_ok(cudaStreamSynchronize(stream), "warm-up");
  cudaEvent_t a, b;
  cuda_ok(cudaEventCreate(&a), "cudaEventCreate");
  cuda_ok(cudaEventCreate(&b), "cudaEventCreate");
  std::vector<double> ms;
  for (int r = 0; r < g_reps; ++r) {
    cuda_ok(cudaEventRecord(a, stream), "cudaEventRecord");
    for (int i = 0; i < inner; ++i) fn();
    cuda_ok(cudaEventRecord(b, stream), "cudaEventRecord");
    cuda_ok(cudaEventSynchronize(b), "cudaEventSynchronize");
    float t = 0;
    cuda_ok(cudaEventElapsedTime(&t, a, b), "cudaEventElapsedTime");
    ms.push_back(double(t) / inner);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return median(ms);
}

struct Ctx {
  tsr_runtime_t* rt;
  tsr::Device dev;
  cudaStream_t stream;  // the calling thread's current stream of dev (what Tessera enqueues on)
};

void sync(const Ctx& c) { tsr::check(tsr::api()->device_synchronize(c.rt, c.dev.d)); }

// Memcpy D2D of `bytes` bytes, in ms (the bandwidth baseline).
double memcpy_ms(const Ctx& c, size_t bytes) {
  void *src = nullptr, *dst = nullptr;
  cuda_ok(cudaMalloc(&src, bytes), "cudaMalloc");
  cuda_ok(cudaMalloc(&dst, bytes), "cudaMalloc");
  cuda_ok(cudaMemsetAsync(src, 1, bytes, c.stream), "cudaMemset");
  double ms = time_ms(c.stream,
                      [&] { cuda_ok(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c.stream), "memcpy"); });
  cudaFree(src);
  cudaFree(dst);
  return ms;
}

void bandwidth_row(const Ctx& c, const std::string& name, double bytes_moved, double t_ms, double copy_ms) {
  const double bw = bytes_moved / (t_ms * 1e-3) / 1e9;
  const double bw_copy = bytes_moved / (copy_ms * 1e-3) / 1e9;
  const double r = bw / bw_copy;
  (void)c;
  g_rows.push_back({name, fmt("%.0f GB/s", bw), fmt("%.0f GB/s", bw_copy), fmt("%.1f%%", 100 * r), ">= 90%",
                    r >= 0.9 ? "ok" : "BELOW"});
}

void bench_add(const Ctx& c) {
  const int64_t n = g_quick ? (int64_t(1) << 24) : (int64_t(1) << 26);
  tsr::Tensor a = tsr::randn({n}).to(c.dev), b = tsr::randn({n}).to(c.dev);
  tsr::Tensor out = tsr::empty({n}, TSR_F32, c.dev);
  static const tsr::Op add_op("add");
  // out= keeps allocation out of the measurement (the kernel's bandwidth is the question).
  const double t = time_ms(c.stream, [&] { tsr::call_out(add_op, out, {a, b}); });
  const double bytes = 3.0 * 4.0 * double(n);
  bandwidth_row(c, "add f32 (" + std::to_string(n >> 20) + " Mi elements)", bytes, t, memcpy_ms(c, size_t(bytes / 2)));
}

void bench_softmax(const Ctx& c) {
  const int64_t rows = g_quick ? 4096 : 16384, cols = 4096;
  tsr::Tensor x = tsr::randn({rows, cols}).to(c.dev);
  tsr::Tensor out = tsr::empty({rows, cols}, TSR_F32, c.dev);
  static const tsr::Op op("softmax");
  const double t = time_ms(c.stream, [&] { tsr::call_out(op, out, {x, int64_t(1)}); });
  const double bytes = 2.0 * 4.0 * double(rows * cols);
  bandwidth_row(c, "softmax f32 [" + std::to_string(rows) + ", " + std::to_string(cols) + "] dim 1", bytes, t,
                memcpy_ms(c, size_t(bytes / 2)));
}

// Direct cuBLASLt and cublasGemmEx on raw buffers: the GEMM baseline (column-major N,N; the
// same work as Tessera's row-major product).
double direct_gemm_ms(const Ctx& c, cudaDataType_t dt, cublasComputeType_t compute, int64_t n, const void* a,
                      const void* b, void* d) {
  cublasLtHandle_t lt;
  blas_ok(cublasLtCreate(&lt), "cublasLtCreate");
  const size_t ws_bytes = size_t(32) << 20;
  void* ws = nullptr;
  cuda_ok(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  cublasLtMatmulDesc_t desc;
  blas_ok(cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F), "desc");
  cublasLtMatrixLayout_t la, lb, ld;
  blas_ok(cublasLtMatrixLayoutCreate(&la, dt, uint64_t(n), uint64_t(n), n), "layout");
  blas_ok(cublasLtMatrixLayoutCreate(&lb, dt, uint64_t(n), uint64_t(n), n), "layout");
  blas_ok(cublasLtMatrixLayoutCreate(&ld, dt, uint64_t(n), uint64_t(n), n), "layout");
  cublasLtMatmulPreference_t pref;
  blas_ok(cublasLtMatmulPreferenceCreate(&pref), "pref");
  const uint64_t max_ws = ws_bytes;
  blas_ok(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)),
          "pref attr");
  cublasLtMatmulHeuristicResult_t res{};
  int count = 0;
  blas_ok(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &res, &count), "heuristic");
  if (count == 0) throw std::runtime_error("cublasLt heuristic found no algorithm");
  const float one = 1, zero = 0;
  const double t_lt = time_ms(c.stream, [&] {
    blas_ok(
        cublasLtMatmul(lt, desc, &one, a, la, b, lb, &zero, d, ld, d, ld, &res.algo, ws, res.workspaceSize, c.stream),
        "cublasLtMatmul");
  });
  cublasHandle_t h;
  blas_ok(cublasCreate(&h), "cublasCreate");
  blas_ok(cublasSetStream(h, c.stream), "cublasSetStream");
  blas_ok(cublasSetWorkspace(h, ws, ws_bytes), "cublasSetWorkspace");
  const double t_ex = time_ms(c.stream, [&] {
    blas_ok(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, int(n), int(n), int(n), &one, a, dt, int(n), b, dt, int(n), &zero,
                         d, dt, int(n), compute, CUBLAS_GEMM_DEFAULT),
            "cublasGemmEx");
  });
  cublasDestroy(h);
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  cudaFree(ws);
  return std::min(t_lt, t_ex);
}

void bench_gemm(const Ctx& c, tsr_dtype_t dt) {
  const int64_t n = g_quick ? 4096 : 8192;
  auto* api = tsr::api();
  // ABI 1.2 precision switches; a core without them leaves f32 GEMMs in full f32.
  const bool prec = TSR_HAS_FIELD(api, tsr_api_t, precision_set) && api->precision_get && api->precision_set;
  if (dt == TSR_F32 && !prec) throw std::runtime_error("the core has no precision switches: TF32 cannot be enabled");
  const int32_t prev_tf32 = prec ? api->precision_get(c.rt, TSR_PRECISION_MATMUL_ALLOW_TF32) : 0;
  if (dt == TSR_F32) tsr::check(api->precision_set(c.rt, TSR_PRECISION_MATMUL_ALLOW_TF32, 1));
  tsr::Tensor a = tsr::randn({n, n}).to(c.dev, dt), b = tsr::randn({n, n}).to(c.dev, dt);
  tsr::Tensor out = tsr::empty({n, n}, dt, c.dev);
  static const tsr::Op mm("mm");
  const double t = time_ms(c.stream, [&] { tsr::call_out(mm, out, {a, b}); });
  const double t_base = direct_gemm_ms(c, dt == TSR_BF16 ? CUDA_R_16BF : CUDA_R_32F,
                                       dt == TSR_BF16 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32, n,
                                       a.data_ptr(), b.data_ptr(), out.data_ptr());
  if (dt == TSR_F32) tsr::check(api->precision_set(c.rt, TSR_PRECISION_MATMUL_ALLOW_TF32, prev_tf32));
  const double flops = 2.0 * double(n) * double(n) * double(n);
  const double r = t_base / t;
  g_rows.push_back({std::string("GEMM ") + (dt == TSR_BF16 ? "bf16" : "f32/TF32") + " " + std::to_string(n) + "^3",
                    fmt("%.0f TFLOP/s", flops / (t * 1e-3) / 1e12), fmt("%.0f TFLOP/s", flops / (t_base * 1e-3) / 1e12),
                    fmt("%.1f%%", 100 * r), ">= 95%", r >= 0.95 ? "ok" : "BELOW"});
}

// ---- low-precision GEMM (issue 15) ---------------------------------------------------------

// Whether the core has `name` (the low-precision ops arrive with their own branch).
bool have_op(const Ctx& c, const char* name) {
  tsr_op_t* op = nullptr;
  if (tsr_status_t st = tsr::api()->op_find(c.rt, name, &op)) {
    tsr::api()->status_free(st);
    return false;
  }
  return op != nullptr;
}

void skip_row(const std::string& name, const std::string& why) { g_rows.push_back({name, "-", "-", "-", "-", "SKIP: " + why}); }

// Direct cuBLASLt fp8 GEMM, D[n, n] bf16 = (sa * sb) A B with the layout scaled_mm uses: row-major
// self = column-major "B" (N), column-major mat2 = "A" transposed (T); per-tensor scales.
double direct_fp8_gemm_ms(const Ctx& c, int64_t n, const void* self, const void* mat2, void* d, const void* sa,
                          const void* sb) {
  cublasLtHandle_t lt;
  blas_ok(cublasLtCreate(&lt), "cublasLtCreate");
  const size_t ws_bytes = size_t(32) << 20;
  void* ws = nullptr;
  cuda_ok(cudaMalloc(&ws, ws_bytes), "cudaMalloc");
  cublasLtMatmulDesc_t desc;
  blas_ok(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "desc");
  const cublasOperation_t t = CUBLAS_OP_T, nn = CUBLAS_OP_N;
  blas_ok(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &t, sizeof(t)), "transa");
  blas_ok(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof(nn)), "transb");
  blas_ok(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sb, sizeof(sb)), "a scale");
  blas_ok(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sa, sizeof(sa)), "b scale");
  cublasLtMatrixLayout_t la, lb, ld;
  blas_ok(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, uint64_t(n), uint64_t(n), n), "layout");
  blas_ok(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, uint64_t(n), uint64_t(n), n), "layout");
  blas_ok(cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, uint64_t(n), uint64_t(n), n), "layout");
  cublasLtMatmulPreference_t pref;
  blas_ok(cublasLtMatmulPreferenceCreate(&pref), "pref");
  const uint64_t max_ws = ws_bytes;
  blas_ok(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &max_ws, sizeof(max_ws)),
          "pref attr");
  cublasLtMatmulHeuristicResult_t res{};
  int count = 0;
  blas_ok(cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, ld, ld, pref, 1, &res, &count), "heuristic");
  if (count == 0) throw std::runtime_error("cublasLt heuristic found no fp8 algorithm");
  const float one = 1, zero = 0;
  const double ms = time_ms(c.stream, [&] {
    blas_ok(cublasLtMatmul(lt, desc, &one, mat2, la, self, lb, &zero, d, ld, d, ld, &res.algo, ws, res.workspaceSize,
                           c.stream),
            "cublasLtMatmul fp8");
  });
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la);
  cublasLtMatrixLayoutDestroy(lb);
  cublasLtMatrixLayoutDestroy(ld);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  cudaFree(ws);
  return ms;
}

// scaled_mm fp8 e4m3 tensorwise -> bf16, n^3: vs cuBLASLt called directly, and vs bf16 mm.
// Returns Tessera's time (for the block-scaled rows), 0 when skipped.
double bench_scaled_mm_fp8(const Ctx& c) {
  const int64_t n = g_quick ? 4096 : 8192;
  const std::string name = "scaled_mm fp8 e4m3 tensorwise " + std::to_string(n) + "^3 -> bf16";
  if (!have_op(c, "scaled_mm")) {
    skip_row(name, "this core has no scaled_mm op");
    return 0;
  }
  static const tsr::Op scaled_mm("scaled_mm"), mm("mm");
  tsr::Tensor a = tsr::randn({n, n}).to(c.dev, TSR_F8_E4M3FN);
  tsr::Tensor b = tsr::randn({n, n}).to(c.dev, TSR_F8_E4M3FN).t();  // column-major mat2
  tsr::Tensor sa = tsr::full(std::vector<int64_t>{}, 0.5, TSR_F32, c.dev), sb = tsr::full(std::vector<int64_t>{}, 2.0, TSR_F32, c.dev);
  tsr::Tensor out = tsr::empty({n, n}, TSR_BF16, c.dev);
  const double t = time_ms(c.stream, [&] {
    tsr::call_out(scaled_mm, out, {a, b, sa, sb, tsr::none, tsr::none, TSR_BF16, false});
  });
  const double t_lt = direct_fp8_gemm_ms(c, n, a.data_ptr(), b.data_ptr(), out.data_ptr(), sa.data_ptr(), sb.data_ptr());
  const double flops = 2.0 * double(n) * double(n) * double(n);
  const double r = t_lt / t;
  g_rows.push_back({name, fmt("%.0f TFLOP/s", flops / (t * 1e-3) / 1e12),
                    fmt("%.0f TFLOP/s (cublasLtMatmul)", flops / (t_lt * 1e-3) / 1e12), fmt("%.1f%%", 100 * r), ">= 95%",
                    r >= 0.95 ? "ok" : "BELOW"});
  tsr::Tensor x = tsr::randn({n, n}).to(c.dev, TSR_BF16), y = tsr::randn({n, n}).to(c.dev, TSR_BF16);
  tsr::Tensor o16 = tsr::empty({n, n}, TSR_BF16, c.dev);
  const double t16 = time_ms(c.stream, [&] { tsr::call_out(mm, o16, {x, y}); });
  g_rows.push_back({"scaled_mm fp8 vs mm bf16 " + std::to_string(n) + "^3", fmt("%.0f TFLOP/s", flops / (t * 1e-3) / 1e12),
                    fmt("%.0f TFLOP/s (mm bf16)", flops / (t16 * 1e-3) / 1e12), fmt("%.2fx", t16 / t), "(speedup)",
                    "info"});
  return t;
}

// MXFP8 and NVFP4 scaled_mm vs fp8 tensorwise, compute capability 10.x only (the sm100 plugin).
// Operands come from quantize_mxfp8 / quantize_nvfp4 of random bf16 data ([N, K] quantized,
// then .t(): column-major mat2 with its scales for rows = N, as scaled_mm takes them).
void bench_block_scaled(const Ctx& c, double t_fp8) {
  const int64_t n = g_quick ? 4096 : 8192;
  cudaDeviceProp prop{};
  cuda_ok(cudaGetDeviceProperties(&prop, c.dev.d.index), "cudaGetDeviceProperties");
  for (const char* mode : {"MXFP8", "NVFP4"}) {
    const bool mx = std::strcmp(mode, "MXFP8") == 0;
    const std::string name = std::string("scaled_mm ") + mode + " " + std::to_string(n) + "^3 -> bf16 vs fp8";
    if (prop.major != 10) {
      skip_row(name, "needs compute capability 10.x (this GPU is " + std::to_string(prop.major) + "." +
                         std::to_string(prop.minor) + ")");
      continue;
    }
    const char* qop = mx ? "quantize_mxfp8" : "quantize_nvfp4";
    if (!have_op(c, "scaled_mm") || !have_op(c, qop) || t_fp8 <= 0) {
      skip_row(name, std::string("this core lacks scaled_mm or ") + qop + " (or the fp8 row failed)");
      continue;
    }
    static const tsr::Op scaled_mm("scaled_mm");
    const tsr::Op quant(qop);
    tsr::Tensor x = tsr::randn({n, n}).to(c.dev, TSR_BF16), w = tsr::randn({n, n}).to(c.dev, TSR_BF16);
    std::vector<tsr::Tensor> qa = tsr::call_multi(quant, {x}), qb = tsr::call_multi(quant, {w});
    tsr::Tensor out = tsr::empty({n, n}, TSR_BF16, c.dev);
    const double t = time_ms(c.stream, [&] {
      tsr::call_out(scaled_mm, out, {qa[0], qb[0].t(), qa[1], qb[1], tsr::none, tsr::none, TSR_BF16, false});
    });
    const double flops = 2.0 * double(n) * double(n) * double(n);
    g_rows.push_back({name, fmt("%.0f TFLOP/s", flops / (t * 1e-3) / 1e12),
                      fmt("%.0f TFLOP/s (fp8 tensorwise)", flops / (t_fp8 * 1e-3) / 1e12), fmt("%.2fx", t_fp8 / t),
                      "(speedup)", "info"});
  }
}

// linear with a bias, bf16 [16384, 1024] x [4096, 1024]^T: one GEMM with cuBLASLt's bias
// epilogue vs the same product through mm then a broadcast add (what the composite did).
void bench_linear(const Ctx& c) {
  const int64_t M = g_quick ? 4096 : 16384, K = 1024, N = 4096;
  tsr::Tensor x = tsr::randn({M, K}).to(c.dev, TSR_BF16), w = tsr::randn({N, K}).to(c.dev, TSR_BF16);
  tsr::Tensor b = tsr::randn({N}).to(c.dev, TSR_BF16);
  static const tsr::Op linear("linear");
  const double t = time_ms(c.stream, [&] { (void)tsr::call(linear, {x, w, b}); });
  const double t_base = time_ms(c.stream, [&] { (void)(tsr::matmul(x, w.t()) + b); });
  const double flops = 2.0 * double(M) * double(N) * double(K);
  const double r = t_base / t;
  g_rows.push_back(
      {"linear+bias bf16 " + std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N) + " (bias epilogue)",
       fmt("%.0f TFLOP/s", flops / (t * 1e-3) / 1e12), fmt("%.0f TFLOP/s (mm + add)", flops / (t_base * 1e-3) / 1e12),
       fmt("%.1f%%", 100 * r), ">= 100%", r >= 1.0 ? "ok" : "BELOW"});
}

void bench_launch(const Ctx& c) {
  tsr::Tensor a = tsr::randn({256}).to(c.dev), b = tsr::randn({256}).to(c.dev);
  const int n = g_quick ? 2000 : 20000;
  for (int i = 0; i < 200; ++i) (void)tsr::add(a, b);
  sync(c);
  // Host time per call, without waiting for the GPU: what one op costs the launching thread.
  std::vector<double> us;
  for (int r = 0; r < 5; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) (void)tsr::add(a, b);
    auto t1 = Clock::now();
    sync(c);
    us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / n);
  }
  const double v = median(us);
  g_rows.push_back({"launch cost: add of 256 floats (dispatch + alloc + launch, host)", fmt("%.2f us", v), "-", "-",
                    "<= 4 us", v <= 4.0 ? "ok" : "ABOVE"});
}

void bench_alloc(const Ctx& c) {
  auto* api = tsr::api();
  const int64_t sizes[1] = {int64_t(1) << 18};  // 1 MiB of f32
  const int n = g_quick ? 20000 : 200000;
  for (int i = 0; i < 1000; ++i) {
    tsr_tensor_t* t = nullptr;
    tsr::check(api->tensor_empty(c.rt, 1, sizes, TSR_F32, c.dev.d, &t));
    api->tensor_release(t);
  }
  std::vector<double> ns;
  for (int r = 0; r < 5; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) {
      tsr_tensor_t* t = nullptr;
      tsr_status_t st = api->tensor_empty(c.rt, 1, sizes, TSR_F32, c.dev.d, &t);
      if (st) tsr::check(st);
      api->tensor_release(t);
    }
    auto t1 = Clock::now();
    ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
  }
  const double v = median(ns);
  g_rows.push_back({"caching allocator: empty + release of 1 MiB", fmt("%.0f ns", v), "-", "-", "<= 200 ns",
                    v <= 200 ? "ok" : "ABOVE"});
}

// `tessera train`'s default GPT on its addition task, on the GPU.
struct GptStep {
  std::shared_ptr<tessera_train::GPT> model;
  std::unique_ptr<tsr::optim::AdamW> opt;
  tsr::Tensor x, y;

  explicit GptStep(const Ctx& c) {
    tessera_train::AdditionOptions ao;
    ao.digits = 3;
    ao.train_size = 1024;
    tessera_train::AdditionTask task(ao);
    tessera_train::GPTConfig gc;
    gc.vocab_size = task.vocab_size();
    gc.block_size = task.block_size();
    gc.n_layer = 2;
    gc.n_head = 4;
    gc.n_embd = 64;
    tsr::manual_seed(1);
    model = std::make_shared<tessera_train::GPT>(gc);
    model->train();
    model->to(c.dev);
    std::vector<tsr::Tensor> decay, no_decay;
    for (const tsr::Tensor& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
    tsr::optim::AdamWOptions o;
    o.lr = 3e-3;
    o.weight_decay = 0.01;
    o.betas = {0.9, 0.99};
    opt = std::make_unique<tsr::optim::AdamW>(
        std::vector<tsr::optim::ParamGroup>{tsr::optim::ParamGroup(decay),
                                            tsr::optim::ParamGroup(no_decay, {{"weight_decay", 0.0}})},
        o);
    tessera_train::Batch b = task.batch(0, 256, c.dev);
    x = b.x;
    y = b.y;
  }
  void step() {
    tsr::Tensor loss = model->loss(model->forward(x), y);
    opt->zero_grad();
    loss.backward();
    opt->step();
  }
};

void bench_graph(Ctx c) {
  auto* api = tsr::api();
  const auto* graphs = static_cast<const tsr_graphs_t*>(api->get_extension(c.rt, "tessera.graphs.cuda"));
  GptStep s(c);
  // Eager, on the default stream.
  for (int i = 0; i < 3; ++i) s.step();
  sync(c);
  const int steps = g_quick ? 5 : 20;
  std::vector<double> eager;
  for (int r = 0; r < 3; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < steps; ++i) s.step();
    sync(c);
    eager.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / steps);
  }
  const double t_eager = median(eager);
  std::string graph_cell = "-", ratio = "-", status = "no graphs extension";
  if (graphs) {
    tsr_stream_t* side = nullptr;
    tsr::check(api->stream_create(c.rt, c.dev.d, 0, &side));
    tsr_stream_t* prev = nullptr;
    tsr::check(api->stream_get_current(c.rt, c.dev.d, &prev));
    tsr::check(api->stream_set_current(c.rt, c.dev.d, side));
    tsr_graph_t* g = nullptr;
    std::string err;
    try {
      // Warm up on the capture stream (as PyTorch does before capturing), then capture one step.
      for (int i = 0; i < 3; ++i) s.step();
      tsr::check(api->stream_synchronize(c.rt, c.dev.d, side));
      tsr::check(graphs->capture_begin(c.rt, c.dev.d, side, 0));
      try {
        s.step();
      } catch (const std::exception& e) {
        err = e.what();
      }
      tsr_status_t st = graphs->capture_end(c.rt, c.dev.d, side, &g);
      if (st) {
        if (err.empty()) err = api->status_message(st);
        api->status_free(st);
        g = nullptr;
      }
      if (g) {
        for (int i = 0; i < 3; ++i) tsr::check(graphs->graph_replay(g, side));
        tsr::check(api->stream_synchronize(c.rt, c.dev.d, side));
        std::vector<double> replay;
        for (int r = 0; r < 3; ++r) {
          auto t0 = Clock::now();
          for (int i = 0; i < steps; ++i) tsr::check(graphs->graph_replay(g, side));
          tsr::check(api->stream_synchronize(c.rt, c.dev.d, side));
          replay.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count() / steps);
        }
        const double t_graph = median(replay);
        graph_cell = fmt("%.3f ms/step", t_graph) + " (" + std::to_string(graphs->graph_node_count(g)) + " nodes)";
        ratio = fmt("%.2fx", t_eager / t_graph);
        status = t_graph <= t_eager ? "ok" : "SLOWER";
        graphs->graph_release(g);
      }
    } catch (const std::exception& e) {
      if (err.empty()) err = e.what();
    }
    if (!g && !err.empty()) status = "capture failed: " + err.substr(0, 160);
    tsr::check(api->stream_set_current(c.rt, c.dev.d, prev));
    tsr::check(api->stream_synchronize(c.rt, c.dev.d, side));
    tsr::check(api->stream_destroy(c.rt, c.dev.d, side));
  }
  g_rows.push_back({"GPT train step (tessera train default, batch 256): CUDA graph vs eager", graph_cell,
                    fmt("%.3f ms/step eager", t_eager), ratio, "faster than eager", status});
}

void print_table() {
  std::printf("\n| measurement | Tessera | baseline | ratio | target | status |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const Row& r : g_rows)
    std::printf("| %s | %s | %s | %s | %s | %s |\n", r.name.c_str(), r.tessera.c_str(), r.baseline.c_str(),
                r.ratio.c_str(), r.target.c_str(), r.status.c_str());
  std::fflush(stdout);
}

// Why there is no usable CUDA device ("" when there is one).
std::string no_device_reason(tsr_runtime_t* rt) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) return std::string("cudaGetDeviceCount: ") + cudaGetErrorString(e);
  if (n == 0) return "cudaGetDeviceCount returned 0 devices";
  auto* api = tsr::api();
  int32_t type = -1;
  if (tsr_status_t st = api->device_type_lookup(rt, "cuda", &type)) {
    std::string why = std::string("the runtime has no \"cuda\" device type (") + api->status_message(st) + ")";
    api->status_free(st);
    for (size_t i = 0; i < api->plugin_count(rt); ++i) {
      tsr_plugin_record_t rec{};
      rec.struct_size = sizeof(rec);
      if (api->plugin_record(rt, i, &rec) == nullptr && rec.name && std::strcmp(rec.name, "cuda") == 0 && !rec.loaded)
        why += std::string("; plugin cuda refused: ") + (rec.reason ? rec.reason : "");
    }
    return why;
  }
  if (api->device_count(rt, type) == 0) return "the cuda device type has 0 devices";
  return "";
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      g_reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--quick"))
      g_quick = true;
    else {
      std::fprintf(stderr, "usage: tessera_cuda_bench [--reps N] [--quick]\n");
      return 2;
    }
  }
  try {
    tsr_runtime_t* rt = tsr::runtime();
    const std::string why = no_device_reason(rt);
    if (!why.empty()) {
      std::printf("no CUDA device: %s\n", why.c_str());
      return 0;
    }
    Ctx c{rt, tsr::Device("cuda:0"), nullptr};
    tsr_stream_t* s = nullptr;
    tsr::check(tsr::api()->stream_get_current(rt, c.dev.d, &s));
    c.stream = reinterpret_cast<cudaStream_t>(s);
    cudaDeviceProp prop{};
    cuda_ok(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("tessera_cuda_bench on %s (sm_%d%d, %d SMs, %.0f GiB)%s\n", prop.name, prop.major, prop.minor,
                prop.multiProcessorCount, double(prop.totalGlobalMem) / double(1u << 30), g_quick ? " --quick" : "");
    double t_fp8 = 0;  // the fp8 scaled_mm time, the block-scaled rows' baseline
    // Each measurement on its own: a failure is a row, not the end of the run.
    const std::vector<std::pair<const char*, std::function<void()>>> benches = {
        {"add", [&] { bench_add(c); }},
        {"softmax", [&] { bench_softmax(c); }},
        {"GEMM bf16", [&] { bench_gemm(c, TSR_BF16); }},
        {"GEMM f32/TF32", [&] { bench_gemm(c, TSR_F32); }},
        {"scaled_mm fp8", [&] { t_fp8 = bench_scaled_mm_fp8(c); }},
        {"scaled_mm block-scaled", [&] { bench_block_scaled(c, t_fp8); }},
        {"linear+bias", [&] { bench_linear(c); }},
        {"launch cost", [&] { bench_launch(c); }},
        {"alloc+free", [&] { bench_alloc(c); }},
        {"GPT graph vs eager", [&] { bench_graph(c); }},
    };
    for (const auto& [name, fn] : benches) {
      try {
        fn();
      } catch (const std::exception& e) {
        std::string msg = e.what();
        std::fprintf(stderr, "%s: %s\n", name, msg.c_str());
        g_rows.push_back({name, "-", "-", "-", "-", "ERROR: " + msg.substr(0, 200)});
        tsr_status_t st = tsr::api()->device_synchronize(rt, c.dev.d);  // surface (and clear) async errors
        if (st) tsr::api()->status_free(st);
      }
    }
    print_table();
  } catch (const std::exception& e) {
    print_table();
    std::fprintf(stderr, "tessera_cuda_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
