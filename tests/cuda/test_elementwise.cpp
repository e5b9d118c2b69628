// The CUDA backend's elementwise kernels against the CPU backend: every op of the shared
// elementwise families (tessera/kernels/*_ops.hpp), _copy/_fill/arange, flip/tril/triu, the
// fused optimizer steps and rand/randn, on the same inputs on both devices. Inputs are random,
// in every registered dtype, in several layouts: contiguous (odd sizes: vector body + tail),
// offset views (misaligned for the vectorized path), transposed and step-2 views (strided
// path), broadcasting, 0-dim and empty tensors.
// Exact ops (integers, bool, comparisons, data movement, rand) must match bit for bit; float
// math within a few ulp of the result dtype (the device libm is not glibc's).
// Without a cuda device every test skips with the reason.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"
#include "tessera/ops/optim.hpp"
#include "tessera/stream.hpp"

namespace {

using tsr::Tensor;
using Shape = std::vector<int64_t>;
const tsr_api_t* A() { return tsr::api(); }

// The cuda device of the default runtime, or the reason there is none.
bool cuda_device(tsr::Device* dev, std::string* why) {
  int32_t id = -1;
  if (tsr_status_t st = A()->device_type_lookup(tsr::runtime(), "cuda", &id)) {
    *why = std::string("no cuda device type in this runtime: ") + A()->status_message(st);
    A()->status_free(st);
    return false;
  }
  if (A()->device_count(tsr::runtime(), id) <= 0) {
    *why = "the cuda device type has no devices";
    return false;
  }
  *dev = tsr::Device(tsr_device_t{id, 0});
  return true;
}

#define REQUIRE_CUDA(dev)                                \
  tsr::Device dev;                                       \
  {                                                      \
    std::string why_;                                    \
    if (!cuda_device(&dev, &why_)) GTEST_SKIP() << why_; \
  }

const std::vector<tsr_dtype_t> kAll = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32,
                                       TSR_I64,  TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
const std::vector<tsr_dtype_t> kNumeric = {TSR_U8,  TSR_I8,   TSR_I16, TSR_I32, TSR_I64,
                                           TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
const std::vector<tsr_dtype_t> kFloating = {TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
const std::vector<tsr_dtype_t> kIntegral = {TSR_U8, TSR_I8, TSR_I16, TSR_I32, TSR_I64};
const std::vector<tsr_dtype_t> kIntegralBool = {TSR_BOOL, TSR_U8, TSR_I8, TSR_I16, TSR_I32, TSR_I64};

enum class Range { Any, Positive, Unit, Wide, Shift };

double random_value(std::mt19937& rng, tsr_dtype_t dt, Range r) {
  if (dt == TSR_BOOL) return double(rng() % 2);
  if (tsr::is_integral(dt)) {
    if (r == Range::Shift) return double(rng() % 9);
    if (r == Range::Positive) return double(1 + rng() % 9);
    const int v = int(rng() % 19) - 9;
    return dt == TSR_U8 ? double(std::abs(v)) : double(v);
  }
  switch (r) {
    case Range::Positive:
      return std::uniform_real_distribution<double>(0.1, 3.0)(rng);
    case Range::Unit:
      return std::uniform_real_distribution<double>(-0.95, 0.95)(rng);
    case Range::Wide:
      return std::uniform_real_distribution<double>(-8.0, 8.0)(rng);
    default: {
      const double m = std::uniform_real_distribution<double>(0.1, 2.0)(rng);
      return (rng() & 1) ? m : -m;
    }
  }
}

// A CPU tensor of logical shape `shape`, made in one of the layouts below.
enum class Layout { Contiguous, Offset, Transposed, Strided };
const char* layout_name(Layout l) {
  switch (l) {
    case Layout::Contiguous:
      return "contiguous";
    case Layout::Offset:
      return "offset-by-one view";
    case Layout::Transposed:
      return "transposed";
    default:
      return "step-2 slice";
  }
}

Tensor filled(const Shape& s, tsr_dtype_t dt, std::mt19937& rng, Range r) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (auto& x : v) x = random_value(rng, dt, r);
  return tsr::from_vector<double>(v, s).to(dt);
}

// The view of `base` that has logical shape `shape` in `layout` (base made by base_shape()).
Shape base_shape(const Shape& shape, Layout layout) {
  const size_t nd = shape.size();
  Shape s = shape;
  if (layout == Layout::Transposed && nd >= 2) std::swap(s[nd - 1], s[nd - 2]);
  if (layout == Layout::Strided && nd >= 1) s[nd - 1] *= 2;
  if (layout == Layout::Offset && nd >= 1) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    s = {n + 1};
  }
  return s;
}
Tensor view_of(const Tensor& base, const Shape& shape, Layout layout) {
  const size_t nd = shape.size();
  if (layout == Layout::Transposed && nd >= 2) return base.transpose(int64_t(nd) - 1, int64_t(nd) - 2);
  if (layout == Layout::Strided && nd >= 1) return base.slice(int64_t(nd) - 1, 0, shape[nd - 1] * 2, 2);
  if (layout == Layout::Offset && nd >= 1) return base.slice(0, 1, base.sizes()[0]).view(shape);
  return base;
}
Tensor random_tensor(const Shape& shape, tsr_dtype_t dt, std::mt19937& rng, Range r, Layout layout) {
  return view_of(filled(base_shape(shape, layout), dt, rng, r), shape, layout);
}

// Values of a CPU tensor (logical row-major order; exact for every dtype but huge i64).
std::vector<double> vals(const Tensor& t) { return t.to_vector<double>(); }

double ulp_tol(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F16:
      return 2e-3;
    case TSR_BF16:
      return 1.6e-2;
    case TSR_F32:
      return 4e-6;
    default:
      return 1e-13;
  }
}

// Same dtype, shape and values (exact, or within the dtype's tolerance when `approx`).
void expect_same(const Tensor& cpu, const Tensor& gpu, bool approx, const std::string& what) {
  ASSERT_EQ(cpu.dtype(), gpu.dtype()) << what;
  ASSERT_EQ(cpu.sizes(), gpu.sizes()) << what;
  const tsr_dtype_t dt = cpu.dtype();
  const std::vector<double> a = vals(cpu), b = vals(gpu.to(tsr::Device::cpu()));
  ASSERT_EQ(a.size(), b.size()) << what;
  const double tol = ulp_tol(dt);
  int bad = 0;
  for (size_t i = 0; i < a.size() && bad < 5; ++i) {
    const bool nan_a = std::isnan(a[i]), nan_b = std::isnan(b[i]);
    bool ok;
    if (nan_a || nan_b)
      ok = nan_a && nan_b;
    else if (!approx || !tsr::is_floating(dt) || std::isinf(a[i]) || std::isinf(b[i]))
      ok = a[i] == b[i];
    else
      ok = std::fabs(a[i] - b[i]) <= tol * (1 + std::fabs(a[i]));
    if (!ok) {
      ++bad;
      ADD_FAILURE() << what << ": element " << i << " cpu " << a[i] << " cuda " << b[i];
    }
  }
}

struct Case {
  std::string op;
  int arity;
  std::vector<tsr_dtype_t> dtypes;
  Range range;
  std::function<Tensor(const std::vector<Tensor>&)> f;
  bool approx;  // float results within tolerance (math), else exact
};

Case U(const std::string& op, std::vector<tsr_dtype_t> dts, Range r = Range::Any, bool approx = true) {
  return {op,    1, std::move(dts), r, [op](const std::vector<Tensor>& v) { return tsr::call(op.c_str(), {v[0]}); },
          approx};
}
Case B(const std::string& op, std::vector<tsr_dtype_t> dts, Range r = Range::Any, bool approx = true) {
  return {
      op,    2, std::move(dts), r, [op](const std::vector<Tensor>& v) { return tsr::call(op.c_str(), {v[0], v[1]}); },
      approx};
}
Case F(const std::string& op, int arity, std::vector<tsr_dtype_t> dts, Range r,
       std::function<Tensor(const std::vector<Tensor>&)> f, bool approx = true) {
  return {op, arity, std::move(dts), r, std::move(f), approx};
}

std::vector<Case> cases() {
  using V = const std::vector<Tensor>&;
  std::vector<Case> c;
  // unary family
  c.push_back(U("neg", kNumeric, Range::Any, false));
  c.push_back(U("abs", kAll, Range::Any, false));
  c.push_back(U("relu", kNumeric, Range::Any, false));
  for (const char* op : {"exp", "tanh", "sigmoid", "silu", "gelu"}) c.push_back(U(op, kFloating, Range::Wide));
  for (const char* op : {"log", "sqrt", "rsqrt"}) c.push_back(U(op, kFloating, Range::Positive));
  c.push_back(F("gelu_tanh", 1, kFloating, Range::Wide, [](V v) { return tsr::call("gelu", {v[0], "tanh"}); }));
  c.push_back(F("_gelu_backward", 2, kFloating, Range::Wide, [](V v) {
    return tsr::call("_gelu_backward", {v[0], v[1], "none"});
  }));
  c.push_back(F("_gelu_backward_tanh", 2, kFloating, Range::Wide, [](V v) {
    return tsr::call("_gelu_backward", {v[0], v[1], "tanh"});
  }));
  // unary math
  for (const char* op : {"exp2", "expm1", "reciprocal", "sin", "cos", "tan", "atan", "sinh", "cosh", "asinh", "erf",
                         "erfc", "frac", "mish", "hardswish", "hardsigmoid"})
    c.push_back(U(op, kFloating, Range::Wide));
  for (const char* op : {"log2", "log10", "log1p", "acosh"}) c.push_back(U(op, kFloating, Range::Positive));
  for (const char* op : {"asin", "acos", "atanh", "erfinv"}) c.push_back(U(op, kFloating, Range::Unit));
  c.push_back(F("logit", 1, kFloating, Range::Unit, [](V v) { return tsr::call("logit", {v[0], 0.25}); }));
  c.push_back(F("leaky_relu", 1, kFloating, Range::Wide, [](V v) { return tsr::call("leaky_relu", {v[0], 0.1}); }));
  c.push_back(F("elu", 1, kFloating, Range::Wide, [](V v) { return tsr::call("elu", {v[0], 1.5, 1.0, 0.5}); }));
  c.push_back(F("softplus", 1, kFloating, Range::Wide, [](V v) { return tsr::call("softplus", {v[0], 2.0, 5.0}); }));
  // unary exact
  for (const char* op : {"sign", "sgn", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit"})
    c.push_back(U(op, kAll, Range::Any, false));
  for (const char* op : {"square", "floor", "ceil", "trunc", "round"}) c.push_back(U(op, kNumeric, Range::Wide, false));
  c.push_back(F(
      "round_decimals", 1, kNumeric, Range::Wide,
      [](V v) {
        return tsr::call("round", {v[0], int64_t{1}});
      },
      false));
  c.push_back(F(
      "hardtanh", 1, kNumeric, Range::Any,
      [](V v) {
        return tsr::call("hardtanh", {v[0], -1.0, 1.0});
      },
      false));
  c.push_back(U("nan_to_num", kAll, Range::Any, false));
  // binary family
  c.push_back(B("add", kAll, Range::Any, false));
  // a + alpha * b may be contracted into an FMA on either device: floats within tolerance.
  c.push_back(F(
      "add_alpha", 2, kNumeric, Range::Any,
      [](V v) {
        return tsr::call("add", {v[0], v[1], int64_t{3}});
      },
      true));
  c.push_back(B("sub", kNumeric, Range::Any, false));
  c.push_back(B("mul", kAll, Range::Any, false));
  c.push_back(B("div", kFloating, Range::Any, false));
  c.push_back(B("maximum", kAll, Range::Any, false));
  c.push_back(B("minimum", kAll, Range::Any, false));
  c.push_back(B("pow", kNumeric, Range::Positive));
  // binary arith
  c.push_back(F(
      "div_mode_floor", 2, kNumeric, Range::Positive,
      [](V v) {
        return tsr::call("div_mode", {v[0], v[1], "floor"});
      },
      false));
  c.push_back(F(
      "div_mode_trunc", 2, kNumeric, Range::Any,
      [](V v) {
        return tsr::call("div_mode", {v[0], tsr::call("abs", {v[1]}) + 1, "trunc"});
      },
      false));
  c.push_back(B("remainder", kNumeric, Range::Positive, false));
  c.push_back(B("fmod", kNumeric, Range::Positive, false));
  for (const char* op : {"atan2", "hypot", "logaddexp", "logaddexp2"}) c.push_back(B(op, kFloating, Range::Any));
  c.push_back(B("copysign", kFloating, Range::Any, false));
  c.push_back(B("xlogy", kFloating, Range::Positive));
  c.push_back(B("fmax", kAll, Range::Any, false));
  c.push_back(B("fmin", kAll, Range::Any, false));
  c.push_back(F("lerp", 3, kFloating, Range::Any, [](V v) { return tsr::call("lerp", {v[0], v[1], v[2]}); }));
  // bitwise / logical
  for (const char* op : {"logical_and", "logical_or", "logical_xor"}) c.push_back(B(op, kAll, Range::Any, false));
  c.push_back(U("logical_not", kAll, Range::Any, false));
  for (const char* op : {"bitwise_and", "bitwise_or", "bitwise_xor"})
    c.push_back(B(op, kIntegralBool, Range::Any, false));
  c.push_back(U("bitwise_not", kIntegralBool, Range::Any, false));
  c.push_back(B("bitwise_left_shift", kIntegral, Range::Shift, false));
  c.push_back(B("bitwise_right_shift", kIntegral, Range::Shift, false));
  // compare / where / clamp
  for (const char* op : {"eq", "ne", "lt", "le", "gt", "ge"}) c.push_back(B(op, kAll, Range::Any, false));
  c.push_back(F(
      "where", 3, kAll, Range::Any,
      [](V v) {
        return tsr::call("where", {tsr::call("gt", {v[0], v[1]}), v[1], v[2]});
      },
      false));
  c.push_back(F(
      "clamp", 1, kNumeric, Range::Wide,
      [](V v) {
        return tsr::call("clamp", {v[0], -2.0, 3.0});
      },
      false));
  c.push_back(F(
      "clamp_min", 1, kNumeric, Range::Wide,
      [](V v) {
        return tsr::call("clamp", {v[0], -2.0, tsr::none});
      },
      false));
  // data movement
  for (tsr_dtype_t to : {TSR_BOOL, TSR_U8, TSR_I32, TSR_I64, TSR_F16, TSR_BF16, TSR_F32, TSR_F64}) {
    // Positive: float -> unsigned conversion of negative values is undefined in C++ (and PyTorch).
    c.push_back(F(
        std::string("to_") + tsr::dtype_name(to), 1, kAll, Range::Positive, [to](V v) { return v[0].to(to); }, false));
  }
  c.push_back(F(
      "contiguous", 1, kAll, Range::Any, [](V v) { return v[0].contiguous(); }, false));
  return c;
}

// Shapes x layouts of one case; inputs made on the CPU, copied to the device.
void run_case(const Case& k, tsr::Device dev) {
  std::mt19937 rng(1234);
  struct Shapes {
    std::vector<Shape> in;
    const char* what;
  };
  std::vector<Shapes> shapes = {
      {{{1037}, {1037}, {1037}}, "odd 1-d"},     {{{7, 33}, {7, 33}, {7, 33}}, "2-d"},
      {{{5, 1, 9}, {4, 9}, {9}}, "broadcast"},   {{{}, {}, {}}, "0-dim"},
      {{{6, 11}, {}, {6, 11}}, "0-dim operand"}, {{{0, 5}, {0, 5}, {0, 5}}, "empty"},
  };
  for (tsr_dtype_t dt : k.dtypes) {
    for (const Shapes& s : shapes) {
      for (Layout layout : {Layout::Contiguous, Layout::Offset, Layout::Transposed, Layout::Strided}) {
        if (layout != Layout::Contiguous && s.in[0].empty()) continue;
        // The same values and the same layout on both devices: one base tensor, copied.
        std::vector<Tensor> cpu_in, gpu_in;
        for (int i = 0; i < k.arity; ++i) {
          const Shape& sh = s.in[size_t(i)];
          const Layout l = sh.empty() ? Layout::Contiguous : layout;
          const Tensor base = filled(base_shape(sh, l), dt, rng, k.range);
          cpu_in.push_back(view_of(base, sh, l));
          gpu_in.push_back(view_of(base.to(dev), sh, l));
        }
        const std::string what = k.op + " " + tsr::dtype_name(dt) + " " + s.what + " " + layout_name(layout);
        Tensor want, got;
        try {
          want = k.f(cpu_in);
        } catch (const tsr::Error& e) {
          // Not defined for this input on the CPU either (e.g. integer division by zero):
          // the device must refuse too, at the latest when it synchronizes (device-side checks).
          EXPECT_THROW(
              {
                k.f(gpu_in);
                tsr::synchronize(dev);
              },
              tsr::Error)
              << what << " (cpu: " << e.what() << ")";
          continue;
        }
        try {
          got = k.f(gpu_in);
        } catch (const tsr::Error& e) {
          ADD_FAILURE() << what << ": cuda threw " << e.what();
          continue;
        }
        ASSERT_EQ(got.device(), dev) << what;
        expect_same(want, got, k.approx, what);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

class CudaElementwise : public ::testing::TestWithParam<size_t> {};

TEST_P(CudaElementwise, MatchesCpu) {
  REQUIRE_CUDA(dev);
  static const std::vector<Case> all = cases();
  run_case(all[GetParam()], dev);
}
INSTANTIATE_TEST_SUITE_P(AllOps, CudaElementwise, ::testing::Range<size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<size_t>& info) {
                           static const std::vector<Case> all = cases();
                           return all[info.param].op;
                         });

TEST(CudaElementwiseMisc, FillArangeShape) {
  REQUIRE_CUDA(dev);
  const tsr::Device cpu = tsr::Device::cpu();
  for (tsr_dtype_t dt : kAll) {
    expect_same(tsr::full({3, 1001}, 1.0, dt, cpu), tsr::full({3, 1001}, 1.0, dt, dev), false,
                std::string("full ") + tsr::dtype_name(dt));
    expect_same(tsr::zeros({0, 3}, dt, cpu), tsr::zeros({0, 3}, dt, dev), false, "zeros empty");
  }
  for (tsr_dtype_t dt : kNumeric) {
    expect_same(tsr::arange(-3.0, 97.0, 1.0, dt, cpu), tsr::arange(-3.0, 97.0, 1.0, dt, dev), false,
                std::string("arange ") + tsr::dtype_name(dt));
  }
  // start + i * step may be an FMA on the device: within tolerance.
  for (tsr_dtype_t dt : kFloating)
    expect_same(tsr::arange(0.5, 10.0, 0.37, dt, cpu), tsr::arange(0.5, 10.0, 0.37, dt, dev), true,
                std::string("arange step 0.37 ") + tsr::dtype_name(dt));
  std::mt19937 rng(7);
  for (tsr_dtype_t dt : {TSR_BOOL, TSR_I8, TSR_F16, TSR_F32, TSR_I64, TSR_F64}) {
    for (Layout l : {Layout::Contiguous, Layout::Transposed, Layout::Strided}) {
      Tensor x = random_tensor({4, 5, 7}, dt, rng, Range::Any, l);
      Tensor g = x.to(dev);
      const std::string what = std::string(tsr::dtype_name(dt)) + " " + layout_name(l);
      for (std::vector<int64_t> dims : {std::vector<int64_t>{0}, {2}, {0, 2}, {1, 2}})
        expect_same(tsr::call("flip", {x, dims}), tsr::call("flip", {g, dims}), false, "flip " + what);
      for (int64_t k : {-2, 0, 1, 9}) {
        expect_same(tsr::call("tril", {x, k}), tsr::call("tril", {g, k}), false, "tril " + what);
        expect_same(tsr::call("triu", {x, k}), tsr::call("triu", {g, k}), false, "triu " + what);
      }
    }
  }
}

// rand/randn with an explicit seed and offset: the same Philox stream on both backends.
TEST(CudaElementwiseMisc, RandomMatchesCpu) {
  REQUIRE_CUDA(dev);
  const tsr::Device cpu = tsr::Device::cpu();
  for (tsr_dtype_t dt : kFloating) {
    for (int64_t n : {int64_t(0), int64_t(1), int64_t(3), int64_t(4), int64_t(5), int64_t(1001), int64_t(100003)}) {
      for (int64_t offset : {int64_t(0), int64_t(17)}) {
        const std::string what = std::string(tsr::dtype_name(dt)) + " n=" + std::to_string(n);
        Tensor a = tsr::call("rand", {Shape{n}, dt, cpu, int64_t{42}, offset});
        Tensor b = tsr::call("rand", {Shape{n}, dt, dev, int64_t{42}, offset});
        expect_same(a, b, false, "rand " + what);  // bit for bit
        Tensor c = tsr::call("randn", {Shape{n}, dt, cpu, int64_t{42}, offset});
        Tensor d = tsr::call("randn", {Shape{n}, dt, dev, int64_t{42}, offset});
        expect_same(c, d, true, "randn " + what);  // device logf/sinf/cosf: a few ulp
      }
    }
  }
}

TEST(CudaElementwiseMisc, OptimizerStepsMatchCpu) {
  REQUIRE_CUDA(dev);
  std::mt19937 rng(3);
  for (tsr_dtype_t dt : kFloating) {
    for (bool amsgrad : {false, true}) {
      for (bool adamw : {false, true}) {
        Tensor p = filled({1001}, dt, rng, Range::Any), g = filled({1001}, dt, rng, Range::Any);
        Tensor m = filled({1001}, dt, rng, Range::Any), v = tsr::call("abs", {filled({1001}, dt, rng, Range::Any)});
        Tensor mx = tsr::call("abs", {filled({1001}, dt, rng, Range::Any)});
        Tensor P = p.to(dev), G = g.to(dev), M = m.to(dev), Vv = v.to(dev), MX = mx.to(dev);
        tsr::AdamOptions o;
        o.lr = 0.01;
        o.weight_decay = 0.1;
        o.amsgrad = amsgrad;
        o.decoupled_weight_decay = adamw;
        std::optional<Tensor> mx_cpu, mx_gpu;
        if (amsgrad) {
          mx_cpu = mx;
          mx_gpu = MX;
        }
        tsr::adam_step_(p, g, m, v, mx_cpu, 3, o);
        tsr::adam_step_(P, G, M, Vv, mx_gpu, 3, o);
        const std::string what = std::string("adam ") + tsr::dtype_name(dt);
        expect_same(p, P, true, what + " param");
        expect_same(m, M, true, what + " exp_avg");
        expect_same(v, Vv, true, what + " exp_avg_sq");
      }
    }
    for (bool momentum : {false, true}) {
      Tensor p = filled({33, 7}, dt, rng, Range::Any), g = filled({33, 7}, dt, rng, Range::Any);
      Tensor b = filled({33, 7}, dt, rng, Range::Any);
      Tensor P = p.to(dev), G = g.to(dev), Bb = b.to(dev);
      tsr::SgdOptions o;
      o.lr = 0.1;
      o.momentum = momentum ? 0.9 : 0.0;
      o.nesterov = momentum;
      o.weight_decay = 0.01;
      std::optional<Tensor> bc, bg;
      if (momentum) {
        bc = b;
        bg = Bb;
      }
      tsr::sgd_step_(p, g, bc, o);
      tsr::sgd_step_(P, G, bg, o);
      expect_same(p, P, true, std::string("sgd ") + tsr::dtype_name(dt));
      if (momentum) expect_same(b, Bb, true, "sgd buffer");
    }
  }
}

// Integer division by zero is checked on the device: the next synchronizing call fails with the
// CPU's message and the device's name, the record is then cleared, and the device keeps working.
// No host round trip per call, so the division can be captured in a graph.
TEST(CudaElementwiseMisc, IntegerDivisionByZeroFailsAtTheNextSync) {
  REQUIRE_CUDA(dev);
  Tensor a = tsr::from_vector<int32_t>({1, 2, 3, 4}, {4}).to(dev);
  Tensor b = tsr::from_vector<int32_t>({1, 0, 1, 1}, {4}).to(dev);
  for (const char* op : {"div_mode", "remainder", "fmod"}) {
    const std::string name(op);
    try {
      if (name == "div_mode")
        tsr::call(op, {a, b, "floor"});
      else
        tsr::call(op, {a, b});
      tsr::synchronize(dev);
      ADD_FAILURE() << op << ": no error for a zero divisor";
    } catch (const tsr::Error& e) {
      EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT) << op;
      const std::string msg = e.what();
      EXPECT_NE(msg.find(name + ": ZeroDivisionError"), std::string::npos) << msg;
      EXPECT_NE(msg.find("(cuda:0)"), std::string::npos) << msg;
    }
    tsr::synchronize(dev);  // reported once, then cleared
  }
  // A nonzero divisor afterwards computes normally.
  Tensor ok = tsr::from_vector<int32_t>({2, -3, 5, 7}, {4}).to(dev);
  Tensor r = tsr::call("remainder", {a, ok}).to(tsr::Device::cpu());
  EXPECT_EQ(r.to_vector<int32_t>(), (std::vector<int32_t>{1, -1, 3, 4}));  // the sign of the divisor, as in Python
}

}  // namespace
