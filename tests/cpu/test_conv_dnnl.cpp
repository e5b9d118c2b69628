// conv2d on the cpu through oneDNN (backends/cpu/conv_dnnl.cpp): the public conv2d op and its
// backward in f32 and bf16 (direct kernels) against the same op on float64 copies of the inputs
// (float64 has no direct kernel: im2col + GEMM), over strides, padding, dilation, groups,
// depthwise, odd sizes, empty and unbatched inputs, non-contiguous views, bias on and off; and
// that f32 really dispatches to the oneDNN kernels. TSR_TEST_CPU_HAS_DNNL (tests/cpu/CMakeLists.txt)
// says whether tessera_cpu was built with oneDNN; without it the kernels must be absent and the
// value tests check im2col + GEMM instead.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "op_test_util.hpp"
#include "tessera/ext_dispatch_trace.h"

namespace {

using tsr::Tensor;
using tt::Shape;
using V = std::vector<int64_t>;

enum class View { Contiguous, Transposed, Sliced };

struct Case {
  Shape x;  // [N, C, H, W], or [C, H, W] (unbatched)
  int64_t cout, kh, kw;
  V stride, padding, dilation;
  int64_t groups;
  bool bias;
  View view;
};

std::string describe(const Case& c, tsr_dtype_t dt) {
  return std::string(tsr::dtype_name(dt)) + " x" + tt::str(c.x) + " cout " + std::to_string(c.cout) + " k " +
         std::to_string(c.kh) + "x" + std::to_string(c.kw) + " s" + tt::str(c.stride) + " p" + tt::str(c.padding) +
         " d" + tt::str(c.dilation) + " g" + std::to_string(c.groups) + (c.bias ? " bias" : "") + " view " +
         std::to_string(int(c.view));
}

// A leaf of the same values as `x` ([.., H, W]) whose view `make_view` returns `x`'s logical
// shape in the requested layout (so gradients flow through the view to the leaf).
struct Input {
  Tensor leaf, x;
};
Input as_view(const std::vector<double>& vals, const Shape& shape, tsr_dtype_t dt, View view) {
  const size_t nd = shape.size();
  Input in;
  if (view == View::Transposed) {  // the leaf holds [.., W, H]; x = leaf.transpose(-1, -2)
    Shape s = shape;
    std::swap(s[nd - 1], s[nd - 2]);
    std::vector<double> t(vals.size());
    const int64_t H = shape[nd - 2], W = shape[nd - 1];
    for (size_t i = 0; i < vals.size(); ++i) {
      const int64_t plane = int64_t(i) / (H * W), h = (int64_t(i) / W) % H, w = int64_t(i) % W;
      t[size_t(plane * H * W + w * H + h)] = vals[i];
    }
    in.leaf = tt::make(t, s, dt).requires_grad_();
    in.x = in.leaf.transpose(int64_t(nd) - 1, int64_t(nd) - 2);
  } else if (view == View::Sliced) {  // every other channel and an inner window of the width
    Shape s = shape;
    s[nd - 3] *= 2;
    s[nd - 1] += 3;
    std::vector<double> big(size_t(tt::numel(s)), 0.5);
    const int64_t C = shape[nd - 3], H = shape[nd - 2], W = shape[nd - 1];
    for (size_t i = 0; i < vals.size(); ++i) {
      const int64_t w = int64_t(i) % W, h = (int64_t(i) / W) % H, ch = (int64_t(i) / (W * H)) % C,
                    n = int64_t(i) / (W * H * C);
      big[size_t(((n * 2 * C + 2 * ch) * H + h) * (W + 3) + w + 1)] = vals[i];
    }
    in.leaf = tt::make(big, s, dt).requires_grad_();
    in.x = in.leaf.slice(int64_t(nd) - 3, 0, 2 * C, 2).slice(int64_t(nd) - 1, 1, W + 1);
  } else {
    in.leaf = tt::make(vals, shape, dt).requires_grad_();
    in.x = in.leaf;
  }
  return in;
}

// Values representable in dt (so the float64 run sees exactly the same inputs).
std::vector<double> random_in(const Shape& shape, tsr_dtype_t dt, std::mt19937& rng) {
  std::vector<double> v = tt::random_values(tt::numel(shape), TSR_F64, rng);
  for (double& e : v) e = tt::cast_to(e, dt);
  return v;
}

struct Run {
  Tensor y, dx, dw, db;  // db undefined without bias; dx/dw/db: gradients of the leaves
  Tensor x_leaf;
};

Run run_conv(const Case& c, tsr_dtype_t dt, const std::vector<double>& xv, const std::vector<double>& wv,
             const std::vector<double>& bv, const std::vector<double>& gv, bool absolute) {
  auto maybe_abs = [&](std::vector<double> v) {
    if (absolute)
      for (double& e : v) e = std::fabs(e);
    return v;
  };
  Input in = as_view(maybe_abs(xv), c.x, dt, c.view);
  const Shape ws{c.cout, c.x[c.x.size() - 3] / c.groups, c.kh, c.kw};
  Tensor w = tt::make(maybe_abs(wv), ws, dt).requires_grad_();
  Tensor b;
  if (c.bias) b = tt::make(maybe_abs(bv), {c.cout}, dt).requires_grad_();
  Run r;
  r.x_leaf = in.leaf;
  r.y = c.bias ? tsr::call("conv2d", {in.x, w, b, c.stride, c.padding, c.dilation, c.groups})
               : tsr::call("conv2d", {in.x, w, tsr::none, c.stride, c.padding, c.dilation, c.groups});
  Tensor gy = tt::make(maybe_abs(gv), r.y.sizes(), dt);
  std::vector<Tensor> inputs{in.leaf, w};
  if (c.bias) inputs.push_back(b);
  std::vector<Tensor> g = tsr::autograd::grad({r.y}, inputs, {gy});
  r.dx = g[0];
  r.dw = g[1];
  if (c.bias) r.db = g[2];
  return r;
}

// |got - ref| <= u_out (|ref| + rounded * scale) + 2 K u_acc scale + tiny, where scale is the
// same computation on absolute values (the sum of |terms|), K the reduction length, u_acc f32's
// unit roundoff (oneDNN accumulates in f32 for f32 and bf16), u_out the output dtype's, and
// `rounded` 1 when an intermediate result was rounded to the output dtype (the convolution
// before conv2d adds the bias).
void expect_close(const char* what, const Tensor& got, const Tensor& ref, const Tensor& scale, int64_t K,
                  tsr_dtype_t dt, const std::string& where, int rounded = 0) {
  ASSERT_EQ(got.dtype(), dt) << what << " " << where;
  ASSERT_EQ(got.sizes(), ref.sizes()) << what << " " << where;
  const std::vector<double> g = tt::values(got), r = tt::values(ref), s = tt::values(scale);
  const double u_acc = std::ldexp(1.0, -24), u_out = dt == TSR_BF16 ? std::ldexp(1.0, -8) : u_acc;
  int bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const double tol = u_out * (std::fabs(r[i]) + rounded * s[i]) + 2.0 * double(K + 1) * u_acc * s[i] + 1e-30;
    if (!(std::fabs(g[i] - r[i]) <= tol) && ++bad <= 5)
      ADD_FAILURE() << what << " " << where << " at " << i << ": got " << g[i] << ", expected " << r[i] << " (tol "
                    << tol << ")";
  }
  EXPECT_EQ(bad, 0) << what << " " << where << ": " << bad << " of " << g.size() << " elements off";
}

void check_case(const Case& c, tsr_dtype_t dt, std::mt19937& rng) {
  const std::string where = describe(c, dt);
  SCOPED_TRACE(where);
  const Shape ws{c.cout, c.x[c.x.size() - 3] / c.groups, c.kh, c.kw};
  const std::vector<double> xv = random_in(c.x, dt, rng), wv = random_in(ws, dt, rng),
                            bv = random_in({c.cout}, dt, rng);
  // The output's shape from a float64 run, then a random output gradient of that shape.
  Shape ys = tsr::call("conv2d", {tt::make(xv, c.x, TSR_F64), tt::make(wv, ws, TSR_F64), tsr::none, c.stride, c.padding,
                                  c.dilation, c.groups})
                 .sizes();
  const std::vector<double> gv = random_in(ys, dt, rng);
  Run got = run_conv(c, dt, xv, wv, bv, gv, false);
  Run ref = run_conv(c, TSR_F64, xv, wv, bv, gv, false);
  Run scale = run_conv(c, TSR_F64, xv, wv, bv, gv, true);
  const bool batched = c.x.size() == 4;
  const int64_t N = batched ? c.x[0] : 1, cin = c.x[c.x.size() - 3];
  const int64_t L = N * ys[ys.size() - 2] * ys[ys.size() - 1];
  expect_close("y", got.y, ref.y, scale.y, cin / c.groups * c.kh * c.kw, dt, where, c.bias ? 1 : 0);
  expect_close("dx", got.dx, ref.dx, scale.dx, c.cout / c.groups * c.kh * c.kw, dt, where);
  expect_close("dw", got.dw, ref.dw, scale.dw, L, dt, where);
  if (c.bias) expect_close("db", got.db, ref.db, scale.db, L, dt, where);
}

const std::vector<Case>& cases() {
  static const std::vector<Case> v = {
      // 3x3, stride 1, padding 1, batch 1 and 3, odd channels
      {{1, 3, 7, 9}, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, View::Contiguous},
      {{3, 3, 7, 9}, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, false, View::Contiguous},
      // 1x1 kernel, 1x1 image, stride 2
      {{3, 5, 1, 1}, 7, 1, 1, {1, 1}, {0, 0}, {1, 1}, 1, true, View::Contiguous},
      {{2, 5, 7, 9}, 3, 1, 1, {2, 2}, {0, 0}, {1, 1}, 1, false, View::Contiguous},
      // 5x3, stride 2 and 1, padding 2 and 0, dilation 2
      {{3, 3, 9, 7}, 5, 5, 3, {2, 1}, {2, 0}, {1, 1}, 1, true, View::Contiguous},
      {{1, 3, 11, 9}, 5, 5, 3, {1, 2}, {2, 1}, {2, 2}, 1, true, View::Contiguous},
      {{3, 4, 9, 9}, 6, 3, 3, {2, 2}, {2, 2}, {2, 1}, 1, false, View::Contiguous},
      // stride leaving trailing rows/columns unread (no gradient there)
      {{2, 3, 8, 10}, 4, 3, 3, {3, 3}, {0, 0}, {1, 1}, 1, true, View::Contiguous},
      // groups 2 (odd channels per group), depthwise (groups = Cin) with multiplier 1 and 2
      {{3, 6, 7, 9}, 10, 3, 3, {1, 1}, {1, 1}, {1, 1}, 2, true, View::Contiguous},
      {{3, 6, 9, 7}, 4, 5, 3, {2, 1}, {1, 2}, {2, 1}, 2, false, View::Contiguous},
      {{3, 5, 7, 9}, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 5, true, View::Contiguous},
      {{1, 5, 9, 7}, 10, 3, 3, {2, 2}, {1, 1}, {2, 2}, 5, false, View::Contiguous},
      // unbatched
      {{3, 7, 9}, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, View::Contiguous},
      {{6, 9, 7}, 6, 3, 5, {2, 1}, {0, 2}, {1, 1}, 3, false, View::Contiguous},
      // non-contiguous inputs
      {{3, 3, 7, 9}, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, View::Transposed},
      {{2, 6, 9, 7}, 4, 3, 3, {2, 1}, {1, 0}, {1, 2}, 2, false, View::Sliced},
      {{5, 9, 7}, 5, 3, 3, {1, 1}, {1, 1}, {1, 1}, 5, true, View::Transposed},
  };
  return v;
}

bool cpu_has_avx512_core() {
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
#else
  return false;
#endif
}

// The dtype masks of the oneDNN kernels of `op` on the cpu device type (0 when absent).
uint32_t dnnl_mask(const char* op_name, const char* kernel) {
  tsr_op_t* op = nullptr;
  tsr::check(tsr::api()->op_find(tsr::runtime(), op_name, &op));
  uint32_t mask = 0;
  for (size_t k = 0; k < tsr::api()->op_kernel_count(op); ++k) {
    tsr_kernel_info_t info{};
    info.struct_size = TSR_STRUCT_SIZE(tsr_kernel_info_t);
    tsr::check(tsr::api()->op_kernel_info(op, k, &info));
    if (info.device_type == 0 && std::string(info.kernel_name) == kernel) mask |= info.dtype_mask;
  }
  return mask;
}

// Whether the oneDNN kernels should be there: built with oneDNN, not switched off.
bool dnnl_on() {
  const char* off = std::getenv("TESSERA_CPU_ONEDNN");
  return TSR_TEST_CPU_HAS_DNNL && !(off && std::string(off) == "0");
}

bool has_bf16() { return (dnnl_mask("_nn_conv2d", "cpu::dnnl_conv2d") & TSR_DTYPE_BIT(TSR_BF16)) != 0; }

TEST(CpuConvDnnl, KernelsRegistered) {
  const std::pair<const char*, const char*> kernels[] = {
      {"_nn_conv2d", "cpu::dnnl_conv2d"},
      {"_nn_conv2d_backward_input", "cpu::dnnl_conv2d_backward_input"},
      {"_nn_conv2d_backward_weight", "cpu::dnnl_conv2d_backward_weight"}};
  for (const auto& [op, kernel] : kernels) {
    const uint32_t mask = dnnl_mask(op, kernel);
    if (!dnnl_on()) {
      EXPECT_EQ(mask, 0u) << op << ": tessera_cpu without oneDNN, or TESSERA_CPU_ONEDNN=0";
      continue;
    }
    EXPECT_TRUE(mask & TSR_DTYPE_BIT(TSR_F32)) << op;
    EXPECT_FALSE(mask & (TSR_DTYPE_BIT(TSR_F64) | TSR_DTYPE_BIT(TSR_F16))) << op << ": oneDNN has no f64/f16 conv";
    // oneDNN has bf16 convolutions on every AVX-512 (avx512_core) CPU.
    if (cpu_has_avx512_core()) {
      EXPECT_TRUE(mask & TSR_DTYPE_BIT(TSR_BF16)) << op;
    }
  }
}

TEST(CpuConvDnnl, F32MatchesFloat64) {
  std::mt19937 rng(1234);
  for (const Case& c : cases()) check_case(c, TSR_F32, rng);
}

// Problems in the range where f32 runs oneDNN's Winograd F(4x4, 3x3) kernels on AVX-512 CPUs
// (onednn_conv.cpp, winograd_suits: 3x3, stride 1, >= 64 channels, outputs of >= 14x14), held
// to the same float64 bound as the direct kernels, forward and both backward directions; on
// other CPUs, or with TESSERA_CPU_WINOGRAD=0 (CTest cpu.conv_direct), the direct kernels.
TEST(CpuConvDnnl, F32WinogradProblemsMatchFloat64) {
  std::mt19937 rng(4321);
  const std::vector<Case> winograd = {
      {{2, 64, 14, 14}, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, true, View::Contiguous},
      {{1, 64, 17, 15}, 80, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, false, View::Contiguous},  // partial tiles
      {{1, 96, 16, 18}, 64, 3, 3, {1, 1}, {0, 0}, {1, 1}, 1, true, View::Contiguous},   // no padding
      {{1, 64, 15, 14}, 64, 3, 3, {1, 1}, {1, 1}, {1, 1}, 1, false, View::Transposed},
  };
  for (const Case& c : winograd) check_case(c, TSR_F32, rng);
}

TEST(CpuConvDnnl, Bf16MatchesFloat64) {
  if (!has_bf16()) GTEST_SKIP() << "no bf16 oneDNN convolution on this CPU";
  std::mt19937 rng(99);
  for (const Case& c : cases()) check_case(c, TSR_BF16, rng);
}

TEST(CpuConvDnnl, EmptyBatch) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    std::mt19937 rng(7);
    Tensor x = tt::make({}, {0, 3, 7, 9}, dt).requires_grad_();
    Tensor w = tt::make(random_in({4, 3, 3, 3}, dt, rng), {4, 3, 3, 3}, dt).requires_grad_();
    Tensor b = tt::make(random_in({4}, dt, rng), {4}, dt).requires_grad_();
    Tensor y = tsr::call("conv2d", {x, w, b, V{1, 1}, V{1, 1}, V{1, 1}, int64_t(1)});
    EXPECT_EQ(y.sizes(), (Shape{0, 4, 7, 9}));
    std::vector<Tensor> g = tsr::autograd::grad({y}, {x, w, b}, {tt::make({}, {0, 4, 7, 9}, dt)});
    EXPECT_EQ(g[0].sizes(), (Shape{0, 3, 7, 9}));
    ASSERT_EQ(g[1].sizes(), (Shape{4, 3, 3, 3}));
    for (double v : tt::values(g[1])) EXPECT_EQ(v, 0.0) << tsr::dtype_name(dt);  // a sum over nothing
    for (double v : tt::values(g[2])) EXPECT_EQ(v, 0.0) << tsr::dtype_name(dt);
  }
}

// Which internal ops the dispatcher looks up while `fn` runs.
struct Lookups {
  std::vector<std::string> ops;
  std::vector<int32_t> found;
  bool saw(const std::string& op) const {
    for (size_t i = 0; i < ops.size(); ++i)
      if (ops[i] == op && found[i]) return true;
    return false;
  }
};
void record(void* user, const char* op, tsr_device_t, int32_t, int32_t has_kernel) {
  auto* l = static_cast<Lookups*>(user);
  l->ops.push_back(op);
  l->found.push_back(has_kernel);
}
template <class F>
Lookups trace(F&& fn) {
  const auto* t =
      static_cast<const tsr_dispatch_trace_t*>(tsr::api()->get_extension(tsr::runtime(), TSR_DISPATCH_TRACE_EXTENSION));
  EXPECT_NE(t, nullptr);
  Lookups l;
  if (!t) return l;
  tsr::check(t->set_observer(tsr::runtime(), record, &l));
  try {
    fn();
  } catch (...) {
    tsr::check(t->set_observer(tsr::runtime(), nullptr, nullptr));
    throw;
  }
  tsr::check(t->set_observer(tsr::runtime(), nullptr, nullptr));
  return l;
}

TEST(CpuConvDnnl, F32RunsTheDirectKernels) {
  if (!dnnl_on()) GTEST_SKIP() << "tessera_cpu without oneDNN, or TESSERA_CPU_ONEDNN=0";
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    std::mt19937 rng(5);
    Tensor x = tt::make(random_in({2, 3, 7, 9}, dt, rng), {2, 3, 7, 9}, dt).requires_grad_();
    Tensor w = tt::make(random_in({4, 3, 3, 3}, dt, rng), {4, 3, 3, 3}, dt).requires_grad_();
    Lookups l = trace([&] {
      Tensor y = tsr::call("conv2d", {x, w, tsr::none, V{1, 1}, V{1, 1}, V{1, 1}, int64_t(1)});
      tsr::autograd::grad({y}, {x, w},
                          {tt::make(std::vector<double>(size_t(tt::numel(y.sizes())), 1.0), y.sizes(), dt)});
    });
    if (dt == TSR_F32) {  // oneDNN, no im2col
      EXPECT_TRUE(l.saw("_nn_conv2d"));
      EXPECT_TRUE(l.saw("_nn_conv2d_backward_input"));
      EXPECT_TRUE(l.saw("_nn_conv2d_backward_weight"));
      EXPECT_FALSE(l.saw("_nn_im2col"));
      EXPECT_FALSE(l.saw("_nn_col2im"));
    } else {  // float64: im2col + GEMM
      EXPECT_FALSE(l.saw("_nn_conv2d"));
      EXPECT_TRUE(l.saw("_nn_im2col"));
      EXPECT_TRUE(l.saw("_nn_col2im"));
    }
  }
}

// With a bias, f32 runs the forward with the bias fused (_nn_conv2d_bias: no separate add over
// the output), and its result equals the unfused kernel's plus the bias, channel by channel.
TEST(CpuConvDnnl, BiasIsFusedIntoTheForward) {
  if (!dnnl_on()) GTEST_SKIP() << "tessera_cpu without oneDNN, or TESSERA_CPU_ONEDNN=0";
  std::mt19937 rng(9);
  const Shape xs{3, 4, 8, 5}, ws{6, 2, 3, 3};
  Tensor x = tt::make(random_in(xs, TSR_F32, rng), xs, TSR_F32), w = tt::make(random_in(ws, TSR_F32, rng), ws, TSR_F32);
  Tensor b = tt::make(random_in({6}, TSR_F32, rng), {6}, TSR_F32);
  Tensor y;
  Lookups l = trace([&] { y = tsr::call("conv2d", {x, w, b, V{2, 1}, V{1, 2}, V{1, 2}, int64_t(2)}); });
  EXPECT_TRUE(l.saw("_nn_conv2d_bias"));
  EXPECT_FALSE(l.saw("_nn_im2col"));
  const Tensor plain = tsr::call("conv2d", {x, w, tsr::none, V{2, 1}, V{1, 2}, V{1, 2}, int64_t(2)});
  const std::vector<double> got = tt::values(y), base = tt::values(plain), bv = tt::values(b);
  const std::vector<int64_t> ys = y.sizes();
  ASSERT_EQ(got.size(), base.size());
  const int64_t plane = ys[2] * ys[3];
  for (size_t i = 0; i < got.size(); ++i) {
    const double want = base[i] + bv[size_t((int64_t(i) / plane) % ys[1])];
    EXPECT_NEAR(got[i], want, 1e-5 * (1 + std::fabs(want))) << "at " << i;
  }
  // No input channels at all: every output is its channel's bias.
  Tensor x0 = tsr::zeros({2, 0, 4, 4}, TSR_F32), w0 = tsr::zeros({3, 0, 3, 3}, TSR_F32);
  Tensor b0 = tt::make(std::vector<double>{1.5, -2, 0.25}, {3}, TSR_F32);
  const std::vector<double> y0 = tt::values(tsr::call("conv2d", {x0, w0, b0, V{1, 1}, V{1, 1}, V{1, 1}, int64_t(1)}));
  ASSERT_EQ(y0.size(), size_t(2 * 3 * 16));
  for (size_t i = 0; i < y0.size(); ++i) EXPECT_EQ(y0[i], (std::vector<double>{1.5, -2, 0.25})[(i / 16) % 3]) << i;
  // And without a bias, zeros (the unfused kernel; empty tensors may have any strides).
  for (double v : tt::values(tsr::call("conv2d", {x0, w0, tsr::none, V{1, 1}, V{1, 1}, V{1, 1}, int64_t(1)})))
    EXPECT_EQ(v, 0.0);
}

// Several threads running the same and different problems at once share the primitive cache.
TEST(CpuConvDnnl, ConcurrentCallsAgree) {
  std::mt19937 rng(11);
  const Shape xs{2, 4, 9, 7}, ws{6, 4, 3, 3};
  Tensor x = tt::make(random_in(xs, TSR_F32, rng), xs, TSR_F32), w = tt::make(random_in(ws, TSR_F32, rng), ws, TSR_F32);
  auto conv = [&](int64_t s) { return tsr::call("conv2d", {x, w, tsr::none, V{s, s}, V{1, 1}, V{1, 1}, int64_t(1)}); };
  const std::vector<double> want1 = tt::values(conv(1)), want2 = tt::values(conv(2));
  std::vector<int> ok(8, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      bool good = true;
      for (int i = 0; i < 20; ++i) good = good && tt::values(conv(1 + (t + i) % 2)) == ((t + i) % 2 ? want2 : want1);
      ok[size_t(t)] = good;
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) EXPECT_TRUE(ok[size_t(t)]) << "thread " << t;
}

}  // namespace
