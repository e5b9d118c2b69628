// conv2d forward and backward through oneDNN (the Debian package libdnnl-dev, 2.x C++ API), in
// the side library tessera_cpu_onednn.so: the kernel bodies of the core's three internal
// convolution ops on the cpu device type,
//
//   _nn_conv2d(input [N, C, H, W], weight [K, C/G, R, S], stride, padding, dilation, groups)
//   _nn_conv2d_bias(input, weight, bias [K], stride, padding, dilation, groups)   (bias fused)
//   _nn_conv2d_backward_input(grad [N, K, P, Q], weight, input_hw, stride, padding, dilation, groups)
//   _nn_conv2d_backward_weight(grad [N, K, P, Q], input [N, C, H, W], kernel_hw, stride, ...)
//
// (contract in backends/cuda/nn_conv.cpp: dense NCHW inputs, dense outputs, no bias: conv2d adds
// it), exported as C functions (onednn_entry.h). The plugin registers the kernels
// (../conv_onednn.cpp) and opens this library on the first call. A problem oneDNN has no
// primitive for is declined (UNIMPLEMENTED, nothing written) and the core's conv2d runs it as
// im2col + GEMM.
//
// Each call describes its tensors in their plain user layouts (nchw, oihw / goihw for groups);
// the convolution primitive is created with format_tag::any, so oneDNN picks its blocked layouts
// (nChw16c on AVX-512), and reorders convert the inputs to them and the output back. Primitives
// and reorders are created once per problem (shapes, geometry, dtype, direction and the OpenMP
// thread count, which oneDNN's JIT kernels partition their work by) and kept in a bounded LRU
// cache (plan_cache.hpp); tensor data, weights included, is never cached. Scratchpads are
// user-managed (onednn_engine.hpp): one scratch block per call from the core's caching allocator
// (tsr::Scratch) holds the primitives' scratchpad and the reordered tensors.
//
// Dtypes: f32, and bf16 on CPUs with AVX-512 (oneDNN's bf16 convolutions; natively with
// avx512_bf16).
//
// Algorithm (winograd_suits): f32 3x3 convolutions of stride 1, no dilation or groups, at least
// 64 channels in and out and outputs of at least 14x14 run oneDNN's Winograd F(4x4, 3x3)
// (jit_wino_4x3, AVX-512) where it implements them; everything else runs convolution_direct.
// Measured with oneDNN 2.6 on a 2-core AVX-512 Xeon at 2 threads, reorders included
// (direct -> Winograd, ms): 8x64x56x56 -> 64 forward 4.8 -> 2.9, backward-data 5.4 -> 3.0,
// backward-weights 5.1 -> 3.0; 1x64x56x56 0.94 -> 0.66; 8x256x14x14 5.1 -> 3.7. It loses below
// those bounds: 8x512x7x7 5.1 -> 6.8 (a 7x7 output is two 4x4 tiles per side, 30% padding,
// with transforms per tile), 32x32x16x16 ties forward and loses backward-weights 0.57 -> 0.83.
// Exactness against float64 (the tests' bound is the direct sum's): on 8x64x56x56 the largest
// error was 1.2-1.6x that of oneDNN's brgemm direct kernel for centred, post-ReLU-like and
// offset (|x| * 100 + 50) inputs, and 2.5-3.5x that of its blocked direct kernel: rounding of
// the same order, not the loss of digits Winograd is known for at larger tiles (F(6x6, 3x3))
// or in f16. PyTorch's cuDNN path picks Winograd kernels by heuristic in the same way.
// TESSERA_CPU_WINOGRAD=0 keeps every problem on convolution_direct (comparisons).
//
// Layouts: with format_tag::any, oneDNN 2.6 picks blocked nChw16c activations for a training
// forward on AVX-512 and brgemm on nhwc for an inference forward, whose reorders from and to
// nchw cost 1.6 ms against 0.7 ms each at 1 thread on 8x64x56x56 (total 12.5 against 10.5 ms).
// The forward is therefore described as forward_training, as the backward's hint is, so both
// directions share layouts; asking for plain nchw activations (no reorders) selects a GEMM
// kernel twice as slow.
//
// Threads: the Debian oneDNN uses the OpenMP runtime (libgomp), the same one as the plugin, so
// it runs with omp_get_max_threads() of the calling thread, as every other cpu kernel does.
#include <dnnl.hpp>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <unordered_map>

#include "cpu_common.hpp"
#include "onednn_engine.hpp"
#include "onednn_entry.h"
#include "plan_cache.hpp"
#include "tessera/scratch.hpp"

namespace tsr::cpu {
namespace {

using dnnl::memory;
using tag = dnnl::memory::format_tag;

enum class Dir : int32_t { Forward = 0, BackwardData = 1, BackwardWeights = 2 };

// One convolution problem: x [N, C, H, W] * w [K, C/G, R, S] -> y [N, K, P, Q].
struct Problem {
  int64_t dir, dtype, threads;
  int64_t n, c, h, w, k, r, s, p, q, groups;
  int64_t stride_h, stride_w, pad_h, pad_w, dil_h, dil_w;
  int64_t bias;  // Forward only: 1 when the bias is added by the primitive (_nn_conv2d_bias)
};

memory::data_type data_type(int64_t dtype) {
  switch (dtype) {
    case TSR_F32:
      return memory::data_type::f32;
    case TSR_BF16:
      return memory::data_type::bf16;
    default:
      return memory::data_type::undef;
  }
}

// Roles of the three tensors of a call, in the order of the kernel's (input 0, input 1, output):
//   Forward:         src (x),       weights (w), dst (y)
//   BackwardData:    diff_dst (g),  weights (w), diff_src (dx)
//   BackwardWeights: diff_dst (g),  src (x),     diff_weights (dw)
constexpr int kArgs[3][3] = {{DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST},
                             {DNNL_ARG_DIFF_DST, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_SRC},
                             {DNNL_ARG_DIFF_DST, DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS}};

constexpr size_t kAlign = 64;
size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// The primitive of one problem, with its reorders between the user's plain layouts and the
// primitive's. Immutable once built; oneDNN primitives may execute concurrently.
struct Plan {
  dnnl::primitive conv;
  memory::desc conv_scratch;
  memory::desc user[3], prim[3];
  memory::desc bias;  // [K] in the dtype of the call, when the forward adds the bias
  bool reorder_needed[3] = {false, false, false};
  dnnl::reorder reorder[3];
  memory::desc reorder_scratch[3];
  size_t offset[3] = {0, 0, 0};  // in the call's scratch block, of the reordered tensors
  size_t scratch_offset = 0, scratch_bytes = 0, total_bytes = 0;
};

// Whether Winograd is tried first for `pb` (see the header comment for the measurements).
bool winograd_suits(const Problem& pb) {
  static const bool allowed = [] {
    const char* e = std::getenv("TESSERA_CPU_WINOGRAD");
    return !(e && std::strcmp(e, "0") == 0);
  }();
  return allowed && pb.dtype == TSR_F32 && pb.groups == 1 && pb.r == 3 && pb.s == 3 && pb.stride_h == 1 &&
         pb.stride_w == 1 && pb.dil_h == 1 && pb.dil_w == 1 && pb.c >= 64 && pb.k >= 64 && pb.p >= 14 && pb.q >= 14;
}

std::shared_ptr<const Plan> build_plan(const Problem& pb, dnnl::algorithm algo) {
  const memory::data_type dt = data_type(pb.dtype);
  const memory::dims x_dims{pb.n, pb.c, pb.h, pb.w}, y_dims{pb.n, pb.k, pb.p, pb.q};
  const memory::dims w_dims = pb.groups == 1 ? memory::dims{pb.k, pb.c, pb.r, pb.s}
                                             : memory::dims{pb.groups, pb.k / pb.groups, pb.c / pb.groups, pb.r, pb.s};
  const memory::desc x_user(x_dims, dt, tag::nchw), y_user(y_dims, dt, tag::nchw),
      w_user(w_dims, dt, pb.groups == 1 ? tag::oihw : tag::goihw);
  const memory::desc x_any(x_dims, dt, tag::any), y_any(y_dims, dt, tag::any), w_any(w_dims, dt, tag::any);
  const memory::dims strides{pb.stride_h, pb.stride_w}, dilates{pb.dil_h - 1, pb.dil_w - 1},  // 0: dense
      pad{pb.pad_h, pb.pad_w};
  // Right padding equal to the left: oneDNN checks P == (H + pad_l + pad_r - span) / stride + 1
  // with floor division, the core's formula, and extra right padding is never read.
  const dnnl::primitive_attr attr = user_scratchpad();
  const auto& eng = engine();
  auto plan = std::make_shared<Plan>();
  const Dir dir = static_cast<Dir>(pb.dir);
  if (dir == Dir::Forward) {
    const memory::desc b_desc({pb.k}, dt, tag::x);
    const auto prop = dnnl::prop_kind::forward_training;  // layouts: see the header comment
    const auto d = pb.bias ? dnnl::convolution_forward::desc(prop, algo, x_any, w_any, b_desc, y_any, strides,
                                                               dilates, pad, pad)
                           : dnnl::convolution_forward::desc(prop, algo, x_any, w_any, y_any, strides, dilates, pad, pad);
    dnnl::convolution_forward::primitive_desc pd(d, attr, eng);
    if (pb.bias) plan->bias = b_desc;
    plan->conv = dnnl::convolution_forward(pd);
    plan->conv_scratch = pd.scratchpad_desc();
    plan->user[0] = x_user, plan->user[1] = w_user, plan->user[2] = y_user;
    plan->prim[0] = pd.src_desc(), plan->prim[1] = pd.weights_desc(), plan->prim[2] = pd.dst_desc();
  } else {
    // The backward primitives take a forward primitive descriptor as a hint (its layouts).
    dnnl::convolution_forward::desc fd(dnnl::prop_kind::forward_training, algo, x_any, w_any, y_any, strides, dilates,
                                       pad, pad);
    dnnl::convolution_forward::primitive_desc hint(fd, attr, eng);
    if (dir == Dir::BackwardData) {
      dnnl::convolution_backward_data::desc d(algo, x_any, w_any, y_any, strides, dilates, pad, pad);
      dnnl::convolution_backward_data::primitive_desc pd(d, attr, eng, hint);
      plan->conv = dnnl::convolution_backward_data(pd);
      plan->conv_scratch = pd.scratchpad_desc();
      plan->user[0] = y_user, plan->user[1] = w_user, plan->user[2] = x_user;
      plan->prim[0] = pd.diff_dst_desc(), plan->prim[1] = pd.weights_desc(), plan->prim[2] = pd.diff_src_desc();
    } else {
      dnnl::convolution_backward_weights::desc d(algo, x_any, w_any, y_any, strides, dilates, pad, pad);
      dnnl::convolution_backward_weights::primitive_desc pd(d, attr, eng, hint);
      plan->conv = dnnl::convolution_backward_weights(pd);
      plan->conv_scratch = pd.scratchpad_desc();
      plan->user[0] = y_user, plan->user[1] = x_user, plan->user[2] = w_user;
      plan->prim[0] = pd.diff_dst_desc(), plan->prim[1] = pd.src_desc(), plan->prim[2] = pd.diff_weights_desc();
    }
  }
  // Scratch block: [reordered tensor 0][1][2][scratchpad shared by the conv and the reorders,
  // which run one after the other].
  size_t off = 0, scratch = plan->conv_scratch.get_size();
  for (int i = 0; i < 3; ++i) {
    if (plan->prim[i] == plan->user[i]) continue;
    plan->reorder_needed[i] = true;
    const bool out = i == 2;
    dnnl::reorder::primitive_desc rpd(eng, out ? plan->prim[i] : plan->user[i], eng,
                                      out ? plan->user[i] : plan->prim[i], attr);
    plan->reorder[i] = dnnl::reorder(rpd);
    plan->reorder_scratch[i] = rpd.scratchpad_desc();
    scratch = std::max(scratch, plan->reorder_scratch[i].get_size());
    plan->offset[i] = off;
    off += align_up(plan->prim[i].get_size());
  }
  plan->scratch_offset = off;
  plan->scratch_bytes = scratch;
  plan->total_bytes = off + align_up(scratch);
  return plan;
}

PlanCache<Problem, Plan>& cache() {
  static auto* c = new PlanCache<Problem, Plan>;  // never destroyed: kernels may run during exit
  return *c;
}

bool empty(const tsr_tensor_view_t& v) {
  for (int32_t d = 0; d < v.ndim; ++d)
    if (v.sizes[d] == 0) return true;
  return false;
}

void check_4d(const KernelCall& c, const tsr_tensor_view_t& v, const char* what) {
  TSR_CHECK(v.ndim == 4, TSR_INTERNAL, c.op_name(), ": expected a 4-D ", what, ", got ", v.ndim, "-D");
  if (empty(v)) return;  // nothing is read or written: any strides will do
  int64_t expect = 1;
  for (int d = 3; d >= 0; --d) {
    TSR_CHECK(v.sizes[d] <= 1 || v.strides[d] == expect, TSR_INTERNAL, c.op_name(), ": ", what, " is not dense");
    expect *= v.sizes[d];
  }
}

void zero_output(const KernelCall& c, const tsr_tensor_view_t& o) {
  std::memset(o.data, 0, size_t(view_numel(o)) * itemsize(c.dtype()));
}

// The problem of a call: x [N, C, H, W], w [K, C/G, R, S], y [N, K, P, Q]; stride, padding,
// dilation and groups from argument `geo` on.
Problem make_problem(const KernelCall& c, Dir dir, const int64_t* xs, const int64_t* ws, const int64_t* ys,
                     size_t geo) {
  const IntList stride = c.arg_ints(geo), padding = c.arg_ints(geo + 1), dilation = c.arg_ints(geo + 2);
  const int64_t groups = c.arg_int(geo + 3);
  TSR_CHECK(stride.size() == 2 && padding.size() == 2 && dilation.size() == 2 && groups > 0, TSR_INVALID_ARGUMENT,
            c.op_name(), ": expected 2 strides, paddings and dilations and groups > 0");
  TSR_CHECK(xs[1] == ws[1] * groups && ws[0] == ys[1] && ws[0] % groups == 0 && xs[0] == ys[0], TSR_INTERNAL,
            c.op_name(), ": tensor shapes do not match");
  if (data_type(c.dtype()) == memory::data_type::undef) c.unsupported_dtype();
  Problem pb{};
  pb.dir = int64_t(dir);
  pb.dtype = c.dtype();
  pb.threads = max_threads();
  pb.n = xs[0], pb.c = xs[1], pb.h = xs[2], pb.w = xs[3];
  pb.k = ws[0], pb.r = ws[2], pb.s = ws[3], pb.p = ys[2], pb.q = ys[3];
  pb.groups = groups;
  pb.stride_h = stride[0], pb.stride_w = stride[1];
  pb.pad_h = padding[0], pb.pad_w = padding[1];
  pb.dil_h = dilation[0], pb.dil_w = dilation[1];
  return pb;
}

std::shared_ptr<const Plan> plan_for(const KernelCall& c, const Problem& pb) {
  try {
    return cache().get(pb, [](const Problem& p) {
      if (winograd_suits(p)) {
        try {
          return build_plan(p, dnnl::algorithm::convolution_winograd);
        } catch (const dnnl::error& e) {
          if (e.status != dnnl_unimplemented) throw;  // not implemented here: direct instead
        }
      }
      return build_plan(p, dnnl::algorithm::convolution_direct);
    });
  } catch (const dnnl::error& e) {
    fail(e.status == dnnl_unimplemented ? TSR_UNIMPLEMENTED : TSR_INTERNAL, c.op_name(),
         ": oneDNN has no convolution for input [", pb.n, ", ", pb.c, ", ", pb.h, ", ", pb.w, "], weight [", pb.k, ", ",
         pb.c / pb.groups, ", ", pb.r, ", ", pb.s, "], groups ", pb.groups, " in ", dtype_name(c.dtype()), ": ",
         e.what());
  }
}

// Runs the plan on the call's tensors: reorders of the inputs, the convolution, the output's
// reorder, all on one oneDNN stream, finished before returning. `bias`: the forward's [K] bias
// (problems with pb.bias only).
void run(const KernelCall& c, const Problem& pb, const void* in0, const void* in1, void* out,
         const void* bias = nullptr) {
  std::shared_ptr<const Plan> plan = plan_for(c, pb);
  Scratch block(c, plan->total_bytes);
  char* base = static_cast<char*>(block.data());
  try {
    const auto& eng = engine();
    dnnl::stream s(eng);
    void* data[3] = {const_cast<void*>(in0), const_cast<void*>(in1), out};
    memory user[3], prim[3];
    for (int i = 0; i < 3; ++i) {
      user[i] = memory(plan->user[i], eng, data[i]);
      prim[i] = plan->reorder_needed[i] ? memory(plan->prim[i], eng, base + plan->offset[i]) : user[i];
    }
    void* scratch = plan->scratch_bytes ? base + plan->scratch_offset : nullptr;
    for (int i = 0; i < 2; ++i)
      if (plan->reorder_needed[i])
        plan->reorder[i].execute(s, {{DNNL_ARG_FROM, user[i]},
                                     {DNNL_ARG_TO, prim[i]},
                                     {DNNL_ARG_SCRATCHPAD, memory(plan->reorder_scratch[i], eng, scratch)}});
    const int* args = kArgs[pb.dir];
    std::unordered_map<int, memory> conv_args{{args[0], prim[0]},
                                              {args[1], prim[1]},
                                              {args[2], prim[2]},
                                              {DNNL_ARG_SCRATCHPAD, memory(plan->conv_scratch, eng, scratch)}};
    if (pb.bias) conv_args.emplace(DNNL_ARG_BIAS, memory(plan->bias, eng, const_cast<void*>(bias)));
    plan->conv.execute(s, conv_args);
    if (plan->reorder_needed[2])
      plan->reorder[2].execute(s, {{DNNL_ARG_FROM, prim[2]},
                                   {DNNL_ARG_TO, user[2]},
                                   {DNNL_ARG_SCRATCHPAD, memory(plan->reorder_scratch[2], eng, scratch)}});
    s.wait();
  } catch (const dnnl::error& e) {
    fail(TSR_INTERNAL, c.op_name(), ": oneDNN convolution failed: ", e.what());
  }
}

// _nn_conv2d(input, weight, stride, padding, dilation, groups)
void conv_forward_kernel(KernelCall& c) {
  const auto &X = c.input(0), &W = c.input(1), &Y = c.output(0);
  check_4d(c, X, "input"), check_4d(c, W, "weight"), check_4d(c, Y, "output");
  if (empty(Y)) return;
  if (empty(X) || empty(W)) return zero_output(c, Y);  // no input channels: sums over nothing
  run(c, make_problem(c, Dir::Forward, X.sizes, W.sizes, Y.sizes, 2), X.data, W.data, Y.data);
}

// _nn_conv2d_bias(input, weight, bias, stride, padding, dilation, groups): the forward with the
// bias added by the primitive, instead of a separate pass over the output.
void conv_forward_bias_kernel(KernelCall& c) {
  const auto &X = c.input(0), &W = c.input(1), &B = c.input(2), &Y = c.output(0);
  check_4d(c, X, "input"), check_4d(c, W, "weight"), check_4d(c, Y, "output");
  TSR_CHECK(B.ndim == 1 && B.sizes[0] == Y.sizes[1] && (B.sizes[0] <= 1 || B.strides[0] == 1), TSR_INTERNAL,
            c.op_name(), ": expected a dense bias of one element per output channel");
  if (empty(Y)) return;
  if (empty(X) || empty(W)) {  // no input channels: each output is its channel's bias
    const size_t isz = itemsize(c.dtype());
    const int64_t plane = Y.sizes[2] * Y.sizes[3];
    char* y = static_cast<char*>(Y.data);
    for (int64_t n = 0; n < Y.sizes[0]; ++n)
      for (int64_t k = 0; k < Y.sizes[1]; ++k)
        for (int64_t i = 0; i < plane; ++i, y += isz) std::memcpy(y, static_cast<const char*>(B.data) + k * isz, isz);
    return;
  }
  Problem pb = make_problem(c, Dir::Forward, X.sizes, W.sizes, Y.sizes, 3);
  pb.bias = 1;
  run(c, pb, X.data, W.data, Y.data, B.data);
}

// _nn_conv2d_backward_input(grad_output, weight, input_hw, stride, padding, dilation, groups)
void conv_backward_input_kernel(KernelCall& c) {
  const auto &G = c.input(0), &W = c.input(1), &DX = c.output(0);
  check_4d(c, G, "grad_output"), check_4d(c, W, "weight"), check_4d(c, DX, "grad_input");
  if (empty(DX)) return;
  if (empty(G) || empty(W)) return zero_output(c, DX);
  run(c, make_problem(c, Dir::BackwardData, DX.sizes, W.sizes, G.sizes, 3), G.data, W.data, DX.data);
}

// _nn_conv2d_backward_weight(grad_output, input, kernel_hw, stride, padding, dilation, groups)
void conv_backward_weight_kernel(KernelCall& c) {
  const auto &G = c.input(0), &X = c.input(1), &DW = c.output(0);
  check_4d(c, G, "grad_output"), check_4d(c, X, "input"), check_4d(c, DW, "grad_weight");
  if (empty(DW)) return;
  if (empty(G) || empty(X)) return zero_output(c, DW);  // no batch or no output positions
  run(c, make_problem(c, Dir::BackwardWeights, X.sizes, DW.sizes, G.sizes, 3), G.data, X.data, DW.data);
}

}  // namespace

}  // namespace tsr::cpu

// The kernels as C entry points (onednn_entry.h), called by the plugin's registered kernels.
extern "C" TSR_EXPORT tsr_status_t tsr_cpu_onednn_conv2d(const tsr_kernel_call_t* c) {
  return TSR_KERNEL(tsr::cpu::conv_forward_kernel)(c);
}
extern "C" TSR_EXPORT tsr_status_t tsr_cpu_onednn_conv2d_bias(const tsr_kernel_call_t* c) {
  return TSR_KERNEL(tsr::cpu::conv_forward_bias_kernel)(c);
}
extern "C" TSR_EXPORT tsr_status_t tsr_cpu_onednn_conv2d_backward_input(const tsr_kernel_call_t* c) {
  return TSR_KERNEL(tsr::cpu::conv_backward_input_kernel)(c);
}
extern "C" TSR_EXPORT tsr_status_t tsr_cpu_onednn_conv2d_backward_weight(const tsr_kernel_call_t* c) {
  return TSR_KERNEL(tsr::cpu::conv_backward_weight_kernel)(c);
}
