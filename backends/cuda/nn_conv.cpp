// conv2d forward and backward through cuDNN 9 (legacy convolution API: descriptors,
// cudnnGet*Algorithm_v7 heuristics cached per problem, cudnnConvolutionForward /
// BackwardData / BackwardFilter on the kernel's stream, workspace from the caching allocator).
//
// The core runs conv2d as a primitive over _nn_im2col + batched GEMM and has no op a backend can
// give a direct convolution kernel for. The kernels here are for three internal kernel ops the
// core can add beside _nn_im2col (as _nn_max_pool2d already is), trying them first and falling
// back to im2col on UNIMPLEMENTED (no kernel for the device, or a configuration cuDNN does not
// support). Inputs are dense NCHW (batched), outputs dense, no bias (the caller adds it):
//
//   _nn_conv2d(Tensor input, Tensor weight, int[] stride, int[] padding, int[] dilation,
//              int groups) -> Tensor                                    [N, Cout, OH, OW]
//   _nn_conv2d_backward_input(Tensor grad_output, Tensor weight, int[] input_hw, int[] stride,
//              int[] padding, int[] dilation, int groups) -> Tensor     [N, Cin, H, W]
//   _nn_conv2d_backward_weight(Tensor grad_output, Tensor input, int[] kernel_hw, int[] stride,
//              int[] padding, int[] dilation, int groups) -> Tensor     [Cout, Cin/groups, kh, kw]
//
// Kernels are registered only for those of the three ops the runtime defines, so this file is
// inert until the core adds them. Precision: f32 uses TF32 tensor cores only when the runtime's
// CONV_ALLOW_TF32 switch is on (CUDNN_FMA_MATH otherwise); f16/bf16 compute in f32 on tensor
// cores; f64 in f64.
#include <cstring>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <unordered_map>

#include "cublas_handles.hpp"
#include "tessera/bytes_key.hpp"

// The legacy convolution API is deprecated in cuDNN 9 but complete and stable; the graph API
// would need a frontend this backend does not carry.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace tsr::cuda {
namespace {

constexpr uint32_t kConvMask =
    TSR_DTYPE_BIT(TSR_F32) | TSR_DTYPE_BIT(TSR_F64) | TSR_DTYPE_BIT(TSR_F16) | TSR_DTYPE_BIT(TSR_BF16);
// Upper bound for an algorithm's workspace (larger ones are skipped).
constexpr size_t kMaxWorkspace = size_t(1) << 30;

enum class Dir : int32_t { Forward = 0, BackwardData = 1, BackwardFilter = 2 };

// One convolution problem: x [N, C, H, W] * w [K, C/G, R, S] -> y [N, K, P, Q].
struct Problem {
  int32_t device, dtype, dir, math;
  int32_t n, c, h, w, k, r, s, p, q, groups;
  int32_t pad_h, pad_w, stride_h, stride_w, dil_h, dil_w;
  bool operator==(const Problem& o) const { return bytes_equal(*this, o); }
};
struct Choice {
  int32_t algo;
  cudnnMathType_t math;
  size_t workspace;
};

class ChoiceCache {
 public:
  bool find(const Problem& k, Choice* c) {
    std::shared_lock<std::shared_mutex> lock(mu_);
    auto it = map_.find(k);
    if (it == map_.end()) return false;
    *c = it->second;
    return true;
  }
  void put(const Problem& k, const Choice& c) {
    std::unique_lock<std::shared_mutex> lock(mu_);
    if (map_.size() >= 4096) map_.clear();
    map_[k] = c;
  }

 private:
  std::shared_mutex mu_;
  std::unordered_map<Problem, Choice, BytesHash<Problem>> map_;
};
ChoiceCache& choices() {
  static ChoiceCache* c = new ChoiceCache();  // leaked: used until exit
  return *c;
}

cudnnDataType_t data_type(const KernelCall& c) {
  switch (c.dtype()) {
    case TSR_F32:
      return CUDNN_DATA_FLOAT;
    case TSR_F64:
      return CUDNN_DATA_DOUBLE;
    case TSR_F16:
      return CUDNN_DATA_HALF;
    case TSR_BF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      c.unsupported_dtype();
  }
}

// RAII descriptors.
struct TensorDesc {
  cudnnTensorDescriptor_t d = nullptr;
  ~TensorDesc() {
    if (d) cudnnDestroyTensorDescriptor(d);
  }
};
struct FilterDesc {
  cudnnFilterDescriptor_t d = nullptr;
  ~FilterDesc() {
    if (d) cudnnDestroyFilterDescriptor(d);
  }
};
struct ConvDesc {
  cudnnConvolutionDescriptor_t d = nullptr;
  ~ConvDesc() {
    if (d) cudnnDestroyConvolutionDescriptor(d);
  }
};

int32_t to_int(const KernelCall& c, int64_t v, const char* what) {
  if (v < 0 || v > int64_t(INT32_MAX))
    fail(TSR_UNIMPLEMENTED, c.op_name(), ": ", what, " ", v, " exceeds cuDNN's 32-bit descriptors");
  return int32_t(v);
}

// Everything one cuDNN call needs, built from the kernel call.
struct Conv {
  KernelCall& c;
  int dev;
  Problem pb{};
  cudnnDataType_t dt;
  cudnnMathType_t math;
  TensorDesc x, y;
  FilterDesc w;
  ConvDesc conv;

  // x_sizes [N, C, H, W], w_sizes [K, C/G, R, S], y_sizes [N, K, P, Q]; geometry args at `geo`
  // (stride, padding, dilation, groups).
  Conv(KernelCall& call, Dir dir, const int64_t* xs, const int64_t* ws, const int64_t* ys, size_t geo)
      : c(call), dev(call.device().index), dt(data_type(call)) {
    const IntList stride = c.arg_ints(geo), padding = c.arg_ints(geo + 1), dilation = c.arg_ints(geo + 2);
    const int64_t groups = c.arg_int(geo + 3);
    if (stride.size() != 2 || padding.size() != 2 || dilation.size() != 2 || groups <= 0)
      fail(TSR_INVALID_ARGUMENT, c.op_name(), ": expected 2 strides, paddings and dilations and groups > 0");
    // 32-bit element offsets inside cuDNN's legacy kernels.
    for (const int64_t* t : {xs, ws, ys})
      if (t[0] * t[1] * t[2] * t[3] > int64_t(INT32_MAX))
        fail(TSR_UNIMPLEMENTED, c.op_name(), ": tensors over 2^31 elements are not supported by cuDNN's legacy API");
    pb.device = dev;
    pb.dtype = int32_t(c.dtype());
    pb.dir = int32_t(dir);
    pb.n = to_int(c, xs[0], "batch");
    pb.c = to_int(c, xs[1], "channels");
    pb.h = to_int(c, xs[2], "height");
    pb.w = to_int(c, xs[3], "width");
    pb.k = to_int(c, ws[0], "output channels");
    pb.r = to_int(c, ws[2], "kernel height");
    pb.s = to_int(c, ws[3], "kernel width");
    pb.p = to_int(c, ys[2], "output height");
    pb.q = to_int(c, ys[3], "output width");
    pb.groups = to_int(c, groups, "groups");
    pb.stride_h = to_int(c, stride[0], "stride"), pb.stride_w = to_int(c, stride[1], "stride");
    pb.pad_h = to_int(c, padding[0], "padding"), pb.pad_w = to_int(c, padding[1], "padding");
    pb.dil_h = to_int(c, dilation[0], "dilation"), pb.dil_w = to_int(c, dilation[1], "dilation");
    if (c.dtype() == TSR_F64)
      math = CUDNN_DEFAULT_MATH;
    else if (c.dtype() == TSR_F32)
      math = allow_tf32_conv(c) ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH;
    else
      math = CUDNN_TENSOR_OP_MATH;
    pb.math = int32_t(math);

    const char* op = c.op_name();
    TSR_CUDNN_CHECK(cudnnCreateTensorDescriptor(&x.d), op, dev);
    TSR_CUDNN_CHECK(cudnnSetTensor4dDescriptor(x.d, CUDNN_TENSOR_NCHW, dt, pb.n, pb.c, pb.h, pb.w), op, dev);
    TSR_CUDNN_CHECK(cudnnCreateTensorDescriptor(&y.d), op, dev);
    TSR_CUDNN_CHECK(cudnnSetTensor4dDescriptor(y.d, CUDNN_TENSOR_NCHW, dt, pb.n, pb.k, pb.p, pb.q), op, dev);
    TSR_CUDNN_CHECK(cudnnCreateFilterDescriptor(&w.d), op, dev);
    TSR_CUDNN_CHECK(cudnnSetFilter4dDescriptor(w.d, dt, CUDNN_TENSOR_NCHW, pb.k, pb.c / pb.groups, pb.r, pb.s), op,
                    dev);
    TSR_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv.d), op, dev);
    const cudnnDataType_t compute = c.dtype() == TSR_F64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
    TSR_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(conv.d, pb.pad_h, pb.pad_w, pb.stride_h, pb.stride_w, pb.dil_h,
                                                    pb.dil_w, CUDNN_CROSS_CORRELATION, compute),
                    op, dev);
    TSR_CUDNN_CHECK(cudnnSetConvolutionGroupCount(conv.d, pb.groups), op, dev);
    TSR_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.d, math), op, dev);
  }

  // An algorithm result is usable when it succeeded, fits the workspace bound and respects the
  // TF32 switch (FMA-only math for f32 with TF32 off).
  template <class Perf>
  bool usable(const Perf& p) const {
    if (p.status != CUDNN_STATUS_SUCCESS || p.memory > kMaxWorkspace) return false;
    if (math == CUDNN_FMA_MATH && p.mathType != CUDNN_FMA_MATH) return false;
    return true;
  }
  template <class Perf>
  Choice pick(const Perf* perf, int count) {
    for (int i = 0; i < count; ++i)
      if (usable(perf[i])) return {int32_t(perf[i].algo), perf[i].mathType, perf[i].memory};
    fail(TSR_UNIMPLEMENTED, c.op_name(), ": cuDNN offers no algorithm for input [", pb.n, ", ", pb.c, ", ", pb.h, ", ",
         pb.w, "], weight [", pb.k, ", ", pb.c / pb.groups, ", ", pb.r, ", ", pb.s, "], groups ", pb.groups, " (",
         dtype_name(c.dtype()), ")");
  }

  Choice choose(cudnnHandle_t h) {
    Choice ch{};
    if (choices().find(pb, &ch)) return ch;
    const char* op = c.op_name();
    int returned = 0;
    switch (Dir(pb.dir)) {
      case Dir::Forward: {
        cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        TSR_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(h, x.d, w.d, conv.d, y.d,
                                                               CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, perf),
                        op, dev);
        ch = pick(perf, returned);
        break;
      }
      case Dir::BackwardData: {
        cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
        TSR_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                            h, w.d, y.d, conv.d, x.d, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &returned, perf),
                        op, dev);
        ch = pick(perf, returned);
        break;
      }
      case Dir::BackwardFilter: {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
        TSR_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                            h, x.d, y.d, conv.d, w.d, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &returned, perf),
                        op, dev);
        ch = pick(perf, returned);
        break;
      }
    }
    // The workspace of the chosen algorithm with the math type it will run with.
    TSR_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.d, ch.math), op, dev);
    size_t ws = 0;
    switch (Dir(pb.dir)) {
      case Dir::Forward:
        TSR_CUDNN_CHECK(
            cudnnGetConvolutionForwardWorkspaceSize(h, x.d, w.d, conv.d, y.d, cudnnConvolutionFwdAlgo_t(ch.algo), &ws),
            op, dev);
        break;
      case Dir::BackwardData:
        TSR_CUDNN_CHECK(cudnnGetConvolutionBackwardDataWorkspaceSize(h, w.d, y.d, conv.d, x.d,
                                                                     cudnnConvolutionBwdDataAlgo_t(ch.algo), &ws),
                        op, dev);
        break;
      case Dir::BackwardFilter:
        TSR_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterWorkspaceSize(h, x.d, y.d, conv.d, w.d,
                                                                       cudnnConvolutionBwdFilterAlgo_t(ch.algo), &ws),
                        op, dev);
        break;
    }
    ch.workspace = std::max(ch.workspace, ws);
    choices().put(pb, ch);
    return ch;
  }

  // Runs the convolution: out = conv(a, b) per direction (forward: x, w -> y; backward data:
  // dy, w -> dx; backward filter: x, dy -> dw).
  void run(const void* a, const void* b, void* out) {
    const char* op = c.op_name();
    DeviceGuard guard(dev);
    cudnnHandle_t h = cudnn_handle(dev);
    TSR_CUDNN_CHECK(cudnnSetStream(h, stream_of(c)), op, dev);
    const Choice ch = choose(h);
    TSR_CUDNN_CHECK(cudnnSetConvolutionMathType(conv.d, ch.math), op, dev);
    std::optional<Scratch> ws;
    if (ch.workspace) ws.emplace(c, ch.workspace);
    void* wsp = ws ? ws->data() : nullptr;
    const float one_f = 1, zero_f = 0;
    const double one_d = 1, zero_d = 0;
    const bool f64 = c.dtype() == TSR_F64;
    const void* one = f64 ? static_cast<const void*>(&one_d) : &one_f;
    const void* zero = f64 ? static_cast<const void*>(&zero_d) : &zero_f;
    switch (Dir(pb.dir)) {
      case Dir::Forward:
        TSR_CUDNN_CHECK(cudnnConvolutionForward(h, one, x.d, a, w.d, b, conv.d, cudnnConvolutionFwdAlgo_t(ch.algo), wsp,
                                                ch.workspace, zero, y.d, out),
                        op, dev);
        break;
      case Dir::BackwardData:
        TSR_CUDNN_CHECK(
            cudnnConvolutionBackwardData(h, one, w.d, b, y.d, a, conv.d, cudnnConvolutionBwdDataAlgo_t(ch.algo), wsp,
                                         ch.workspace, zero, x.d, out),
            op, dev);
        break;
      case Dir::BackwardFilter:
        TSR_CUDNN_CHECK(
            cudnnConvolutionBackwardFilter(h, one, x.d, a, y.d, b, conv.d, cudnnConvolutionBwdFilterAlgo_t(ch.algo),
                                           wsp, ch.workspace, zero, w.d, out),
            op, dev);
        break;
    }
  }
};

void check_4d(const KernelCall& c, const tsr_tensor_view_t& v, const char* what) {
  if (v.ndim != 4) fail(TSR_INVALID_ARGUMENT, c.op_name(), ": expected a 4-D ", what, ", got ", v.ndim, "-D");
}

bool empty(const tsr_tensor_view_t& v) {
  for (int32_t d = 0; d < v.ndim; ++d)
    if (v.sizes[d] == 0) return true;
  return false;
}

// Zero-filled output for an empty reduction (no channels or no batch in a weight gradient).
void zero_output(KernelCall& c, const tsr_tensor_view_t& o) {
  size_t n = itemsize(c.dtype());
  for (int32_t d = 0; d < o.ndim; ++d) n *= size_t(o.sizes[d]);
  if (n == 0) return;
  DeviceGuard guard(c.device().index);
  TSR_CUDA_CHECK(cudaMemsetAsync(o.data, 0, n, stream_of(c)), c.op_name(), c.device().index);
}

// _nn_conv2d(input, weight, stride, padding, dilation, groups)
void conv_forward_kernel(KernelCall& c) {
  const tsr_tensor_view_t& X = c.input(0);
  const tsr_tensor_view_t& W = c.input(1);
  const tsr_tensor_view_t& Y = c.output(0);
  check_4d(c, X, "input");
  check_4d(c, W, "weight");
  check_4d(c, Y, "output");
  if (empty(Y)) return;
  if (empty(X) || empty(W)) return zero_output(c, Y);  // Cin = 0: sums over nothing
  Conv conv(c, Dir::Forward, X.sizes, W.sizes, Y.sizes, 2);
  conv.run(X.data, W.data, Y.data);
}

// _nn_conv2d_backward_input(grad_output, weight, input_hw, stride, padding, dilation, groups)
void conv_backward_input_kernel(KernelCall& c) {
  const tsr_tensor_view_t& G = c.input(0);
  const tsr_tensor_view_t& W = c.input(1);
  const tsr_tensor_view_t& DX = c.output(0);
  check_4d(c, G, "grad_output");
  check_4d(c, W, "weight");
  check_4d(c, DX, "grad_input");
  if (empty(DX)) return;
  if (empty(G) || empty(W)) return zero_output(c, DX);
  Conv conv(c, Dir::BackwardData, DX.sizes, W.sizes, G.sizes, 3);
  conv.run(G.data, W.data, DX.data);
}

// _nn_conv2d_backward_weight(grad_output, input, kernel_hw, stride, padding, dilation, groups)
void conv_backward_weight_kernel(KernelCall& c) {
  const tsr_tensor_view_t& G = c.input(0);
  const tsr_tensor_view_t& X = c.input(1);
  const tsr_tensor_view_t& DW = c.output(0);
  check_4d(c, G, "grad_output");
  check_4d(c, X, "input");
  check_4d(c, DW, "grad_weight");
  if (empty(DW)) return;
  if (empty(G) || empty(X)) return zero_output(c, DW);
  Conv conv(c, Dir::BackwardFilter, X.sizes, DW.sizes, G.sizes, 3);
  conv.run(X.data, G.data, DW.data);
}

}  // namespace

TSR_CUDA_KERNELS(nn_conv) {
  // Only for the internal ops the core defines (see the top of this file).
  if (r.has_op("_nn_conv2d"))
    r.kernel("_nn_conv2d", "cuda::cudnn_conv2d", device_type, kConvMask, TSR_KERNEL(conv_forward_kernel));
  if (r.has_op("_nn_conv2d_backward_input"))
    r.kernel("_nn_conv2d_backward_input", "cuda::cudnn_conv2d_backward_input", device_type, kConvMask,
             TSR_KERNEL(conv_backward_input_kernel));
  if (r.has_op("_nn_conv2d_backward_weight"))
    r.kernel("_nn_conv2d_backward_weight", "cuda::cudnn_conv2d_backward_weight", device_type, kConvMask,
             TSR_KERNEL(conv_backward_weight_kernel));
}

}  // namespace tsr::cuda
