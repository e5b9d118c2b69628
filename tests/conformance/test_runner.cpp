// The runner's own tests: deliberately broken ops (expressed as OpInfos whose run misbehaves
// for some dtype, layout or form) must fail loudly with a message naming the problem, correct
// ones must pass, and missing kernels off the CPU must be skips.
#include <gtest/gtest.h>

#include <cstdlib>

#include "runner.hpp"

namespace {

using namespace tsr::conformance;
using tsr::Tensor;

// A well-behaved elementwise "op" (x * 2 + y): run, out= and in-place forms.
OpInfo good_info(const std::string& name = "mul") {
  OpInfo o;
  o.name = name;
  // Unsigned and 8-bit dtypes get negative inputs and overflowing products: the runner wraps
  // them the same way on both sides.
  o.dtypes = {TSR_F64, TSR_F32, TSR_F16, TSR_BF16, TSR_I32, TSR_U8, TSR_I8};
  o.differentiable = false;
  o.samples = [](uint64_t seed) {
    std::vector<Sample> v;
    for (Shape shape : {Shape{}, Shape{0}, Shape{1}, Shape{7}, Shape{3, 5}, Shape{5, 1}}) {
      Sample s;
      s.desc = "shape of rank " + std::to_string(shape.size());
      s.inputs = {random_f64(shape, seed, -40, 40), random_f64(shape, seed + 1, -40, 40)};
      s.run = [](const Tensors& in) { return Tensors{tsr::mul(in[0], in[1])}; };
      s.run_out = [](const Tensors& in, Tensors& outs) {
        static const tsr::Op op("mul");
        tsr::call_multi(op, {in[0], in[1]}, outs);
      };
      v.push_back(std::move(s));
    }
    return v;
  };
  return o;
}

size_t count(const std::vector<CheckResult>& rs, Outcome o, const std::string& check = "",
             const std::string& dtype = "") {
  size_t n = 0;
  for (const CheckResult& r : rs)
    n += r.outcome == o && (check.empty() || r.check == check) && (dtype.empty() || r.dtype == dtype);
  return n;
}

std::string failures(const std::vector<CheckResult>& rs) {
  std::string s;
  for (const CheckResult& r : rs)
    if (r.outcome == Outcome::Fail) s += r.dtype + " [" + r.check + "] " + r.sample + ": " + r.message + "\n";
  return s;
}

const CheckResult* first_failure(const std::vector<CheckResult>& rs, const std::string& check) {
  for (const CheckResult& r : rs)
    if (r.outcome == Outcome::Fail && r.check == check) return &r;
  return nullptr;
}

std::vector<CheckResult> run_on_cpu(const OpInfo& info, RunOptions opts = {}) {
  return run_opinfo(tsr::runtime(), info, tsr::Device::cpu(), opts);
}

TEST(ConformanceRunner, CorrectOpPassesEveryCheck) {
  auto rs = run_on_cpu(good_info());
  EXPECT_EQ(count(rs, Outcome::Fail), 0u) << failures(rs);
  EXPECT_GT(count(rs, Outcome::Pass, "forward"), 20u);
  // [5, 1] transposed back is still contiguous: the runner falls back to a strided copy.
  EXPECT_EQ(count(rs, Outcome::Pass, "noncontiguous"), 7u * 3u);
  EXPECT_GT(count(rs, Outcome::Pass, "out"), 20u);
  EXPECT_GT(count(rs, Outcome::Pass, "out_wrong_shape"), 20u);
}

TEST(ConformanceRunner, WrongValuesInOneDtypeFail) {
  OpInfo o = good_info();
  auto base = o.samples;
  o.samples = [base](uint64_t seed) {
    auto v = base(seed);
    for (Sample& s : v)
      s.run = [](const Tensors& in) {
        Tensor r = tsr::mul(in[0], in[1]);
        // Off by 1e-3: far outside float32's tolerance, inside bfloat16's.
        if (r.dtype() == TSR_F32) r = tsr::add(r, tsr::full(r.sizes(), 1e-3, TSR_F32, r.device()));
        return Tensors{r};
      };
    return v;
  };
  auto rs = run_on_cpu(o);
  EXPECT_GT(count(rs, Outcome::Fail, "forward", "float32"), 0u);
  EXPECT_EQ(count(rs, Outcome::Fail, "forward", "float64"), 0u) << failures(rs);
  EXPECT_EQ(count(rs, Outcome::Fail, "forward", "bfloat16"), 0u) << failures(rs);
  const CheckResult* f = first_failure(rs, "forward");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->op, "mul");
  EXPECT_EQ(f->device, "cpu:0");
  EXPECT_NE(f->message.find("differ"), std::string::npos) << f->message;
}

// A fractional Scalar written into an integer tensor truncates (like a C++ cast and PyTorch):
// the float64 reference is converted the same way before the exact comparison.
OpInfo fill_like_info(double value, double int_offset) {
  OpInfo o;
  o.name = "full";
  o.dtypes = {TSR_F64, TSR_F32, TSR_I32, TSR_U8, TSR_BOOL};
  o.differentiable = false;
  o.samples = [value, int_offset](uint64_t seed) {
    Sample s;
    s.desc = "fill";
    s.inputs = {random_f64({2, 3}, seed)};
    s.run = [value, int_offset](const Tensors& in) {
      bool integral = !tsr::is_floating(in[0].dtype()) && in[0].dtype() != TSR_BOOL;
      return Tensors{tsr::full(in[0].sizes(), value + (integral ? int_offset : 0), in[0].dtype(), in[0].device())};
    };
    return std::vector<Sample>{s};
  };
  return o;
}

TEST(ConformanceRunner, IntegerResultsCompareWithTheTruncatedReference) {
  auto rs = run_on_cpu(fill_like_info(1.5, 0));
  EXPECT_EQ(count(rs, Outcome::Fail), 0u) << failures(rs);
  EXPECT_EQ(count(rs, Outcome::Pass, "forward"), 5u) << failures(rs);
  rs = run_on_cpu(fill_like_info(1.5, 1));  // integers get 2 where 1 is due
  EXPECT_EQ(count(rs, Outcome::Fail, "forward", "int32"), 1u) << failures(rs);
  EXPECT_EQ(count(rs, Outcome::Fail, "forward", "uint8"), 1u) << failures(rs);
  EXPECT_EQ(count(rs, Outcome::Fail, "forward", "bool"), 0u) << failures(rs);
}

TEST(ConformanceRunner, WrongShapeAndNaNMismatchFail) {
  OpInfo o = good_info();
  o.dtypes = {TSR_F32};
  auto base = o.samples;
  o.samples = [base](uint64_t seed) {
    auto v = base(seed);
    Sample shape_bug = v.back();
    shape_bug.run = [](const Tensors& in) {
      Tensor r = tsr::mul(in[0], in[1]);
      return Tensors{r.dtype() == TSR_F32 ? r.reshape({-1}) : r};
    };
    Sample nan_bug = v.back();
    nan_bug.run = [](const Tensors& in) {
      Tensor r = tsr::mul(in[0], in[1]);
      if (r.dtype() == TSR_F32) r = tsr::div(r, tsr::full(r.sizes(), 0.0, TSR_F32, r.device()));
      return Tensors{tsr::mul(r, tsr::full(r.sizes(), 0.0, r.dtype(), r.device()))};  // inf * 0 = NaN
    };
    return std::vector<Sample>{shape_bug, nan_bug};
  };
  auto rs = run_on_cpu(o);
  ASSERT_EQ(count(rs, Outcome::Fail, "forward"), 2u) << failures(rs);
  EXPECT_NE(rs[0].message.find("shape [5] but the reference has [5, 1]"), std::string::npos) << rs[0].message;
}

TEST(ConformanceRunner, NonContiguousBugFails) {
  OpInfo o = good_info();
  auto base = o.samples;
  o.samples = [base](uint64_t seed) {
    auto v = base(seed);
    for (Sample& s : v)
      s.run = [](const Tensors& in) {
        // A kernel that reads strided inputs as if they were contiguous.
        Tensor a = in[0];
        if (!a.is_contiguous()) {
          std::vector<int64_t> st(static_cast<size_t>(a.dim()), 1);
          for (int64_t d = a.dim() - 2; d >= 0; --d) st[d] = st[d + 1] * a.sizes()[d + 1];
          a = a.as_strided(a.sizes(), st, a.storage_offset());
        }
        return Tensors{tsr::mul(a, in[1])};
      };
    return v;
  };
  auto rs = run_on_cpu(o);
  EXPECT_EQ(count(rs, Outcome::Fail, "forward"), 0u) << failures(rs);
  EXPECT_GT(count(rs, Outcome::Fail, "noncontiguous"), 0u);
}

TEST(ConformanceRunner, OutBugsFail) {
  OpInfo o = good_info();
  o.dtypes = {TSR_F32};
  auto base = o.samples;
  o.samples = [base](uint64_t seed) {
    auto v = base(seed);
    Sample ignores_out = v.back();
    ignores_out.desc = "ignores out";
    ignores_out.run_out = [](const Tensors& in, Tensors& outs) {
      Tensor r = tsr::mul(in[0], in[1]);
      if (outs[0].sizes() == r.sizes()) outs[0].copy_(tsr::add(r, r));
    };
    Sample partial = v.back();
    partial.desc = "writes before refusing";
    partial.run_out = [](const Tensors& in, Tensors& outs) {
      outs[0].fill_(5.0);
      static const tsr::Op op("mul");
      tsr::call_multi(op, {in[0], in[1]}, outs);
    };
    return std::vector<Sample>{ignores_out, partial};
  };
  auto rs = run_on_cpu(o);
  const CheckResult* accepted = nullptr;
  for (const CheckResult& r : rs)
    if (r.sample == "ignores out" && r.check == "out_wrong_shape") accepted = &r;
  ASSERT_NE(accepted, nullptr);
  EXPECT_EQ(accepted->outcome, Outcome::Fail);
  EXPECT_NE(accepted->message.find("was accepted"), std::string::npos) << accepted->message;
  bool out_values_failed = false, partial_failed = false;
  for (const CheckResult& r : rs) {
    out_values_failed |= r.sample == "ignores out" && r.check == "out" && r.outcome == Outcome::Fail;
    partial_failed |= r.sample == "writes before refusing" && r.check == "out_wrong_shape" &&
                      r.outcome == Outcome::Fail && r.message.find("partly written") != std::string::npos;
  }
  EXPECT_TRUE(out_values_failed) << failures(rs);
  EXPECT_TRUE(partial_failed) << failures(rs);
}

TEST(ConformanceRunner, InPlaceBugFails) {
  OpInfo o = good_info();
  o.dtypes = {TSR_F64};
  auto base = o.samples;
  o.samples = [base](uint64_t seed) {
    auto v = base(seed);
    Sample good = v.back(), bad = v.back();
    good.desc = "good";
    good.run_inplace = [](Tensors& in) { in[0].copy_(tsr::mul(in[0], in[1])); };
    bad.desc = "bad";
    bad.run_inplace = [](Tensors& in) { in[0].copy_(in[1]); };
    return std::vector<Sample>{good, bad};
  };
  auto rs = run_on_cpu(o);
  for (const CheckResult& r : rs) {
    if (r.check != "inplace" && r.check != "inplace_noncontiguous") continue;
    EXPECT_EQ(r.outcome, r.sample == "good" ? Outcome::Pass : Outcome::Fail)
        << r.check << " " << r.sample << ": " << r.message;
  }
  EXPECT_EQ(count(rs, Outcome::Pass, "inplace_noncontiguous"), 1u) << failures(rs);
}

TEST(ConformanceRunner, MissingKernelIsASkipOffTheCpuAndAFailureOnIt) {
  OpInfo o = good_info();
  auto base = o.samples;
  o.samples = [base](uint64_t seed) {
    auto v = base(seed);
    for (Sample& s : v)
      s.run = [](const Tensors& in) {
        if (in[0].dtype() == TSR_F16) throw tsr::Error(TSR_UNIMPLEMENTED, "mul: no kernel for float16 (test)");
        return Tensors{tsr::mul(in[0], in[1])};
      };
    return v;
  };
  RunOptions lenient;
  lenient.cpu_must_support_all_dtypes = false;
  auto rs = run_on_cpu(o, lenient);
  EXPECT_GT(count(rs, Outcome::Skip, "forward", "float16"), 0u);
  EXPECT_EQ(count(rs, Outcome::Fail), 0u) << failures(rs);
  rs = run_on_cpu(o);
  const CheckResult* f = first_failure(rs, "forward");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->dtype, "float16");
  EXPECT_NE(f->message.find("must support every dtype"), std::string::npos) << f->message;
}

TEST(ConformanceRunner, ReferenceFailureAndThrowingSamplesFail) {
  OpInfo o = good_info();
  o.samples = [](uint64_t) -> std::vector<Sample> { throw std::runtime_error("bad sample builder"); };
  auto rs = run_on_cpu(o);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].outcome, Outcome::Fail);
  EXPECT_NE(rs[0].message.find("bad sample builder"), std::string::npos);
  OpInfo none = good_info();
  none.samples = [](uint64_t) { return std::vector<Sample>{}; };
  EXPECT_EQ(count(run_on_cpu(none), Outcome::Fail), 1u);
}

// Transposition and dtype conversion record themselves for autograd, so a gradient bug can be
// planted with a hook that doubles the incoming gradient.
enum class GradBug { None, Everywhere, OffCpu0 };
OpInfo transpose_info(GradBug bug) {
  OpInfo o;
  o.name = "transpose";
  o.dtypes = {TSR_F64, TSR_F32};
  o.samples = [bug](uint64_t seed) {
    Sample s;
    s.desc = "[3, 4]";
    s.inputs = {random_f64({3, 4}, seed)};
    s.run = [bug](const Tensors& in) {
      Tensor y = in[0].transpose(0, 1);
      bool wrong = bug == GradBug::Everywhere || (bug == GradBug::OffCpu0 && in[0].device() != tsr::Device::cpu());
      if (wrong && y.requires_grad())
        y.register_hook([](const Tensor& g) { return tsr::mul(g, tsr::full(g.sizes(), 2.0, g.dtype(), g.device())); });
      return Tensors{y};
    };
    return std::vector<Sample>{s};
  };
  return o;
}

TEST(ConformanceRunner, GradcheckCatchesAWrongGradient) {
  auto good = run_on_cpu(transpose_info(GradBug::None));
  EXPECT_EQ(count(good, Outcome::Pass, "gradcheck"), 1u) << failures(good);
  EXPECT_EQ(count(good, Outcome::Fail), 0u) << failures(good);
  auto bad = run_on_cpu(transpose_info(GradBug::Everywhere));
  const CheckResult* f = first_failure(bad, "gradcheck");
  ASSERT_NE(f, nullptr) << "a doubled gradient passed gradcheck";
  EXPECT_EQ(f->dtype, "float64");
  EXPECT_NE(f->message.find("finite differences"), std::string::npos) << f->message;
}

TEST(ConformanceRunner, DifferentiableOpWithoutGradientFails) {
  OpInfo o = transpose_info(GradBug::None);
  auto base = o.samples;
  o.samples = [base](uint64_t seed) {
    auto v = base(seed);
    v[0].run = [](const Tensors& in) { return Tensors{in[0].detach().transpose(0, 1)}; };
    return v;
  };
  const CheckResult* f = nullptr;
  auto rs = run_on_cpu(o);
  f = first_failure(rs, "gradcheck");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->message.find("none of its results requires grad"), std::string::npos) << f->message;
}

TEST(ConformanceRunner, DeviceFiltersAndTolerances) {
  RunOptions only64;
  only64.dtypes = {TSR_F64};
  auto rs = run_on_cpu(good_info(), only64);
  for (const CheckResult& r : rs) EXPECT_EQ(r.dtype, "float64") << r.check;
  OpInfo o = good_info();
  o.tol_scale = 3;
  o.tol[TSR_F32] = {1e-2, 0};
  EXPECT_DOUBLE_EQ(tolerance(o, TSR_F32).rtol, 3e-2);
  EXPECT_DOUBLE_EQ(tolerance(o, TSR_F16).rtol, 6e-3);
  EXPECT_EQ(tolerance(o, TSR_I32).rtol, 0.0);
  std::vector<tsr::Device> devs = loaded_devices(tsr::runtime());
  ASSERT_FALSE(devs.empty());
  EXPECT_TRUE(devs[0] == tsr::Device::cpu());
}

// A second CPU device (the CPU plugin's virtual devices) is checked like any other backend:
// result dtypes against cpu:0's and its gradients against cpu:0's float64 ones.
TEST(ConformanceRunner, SecondDeviceGetsTheCrossDeviceChecks) {
  setenv("TESSERA_CPU_DEVICES", "2", 1);
  tsr_runtime_options_t opts{};
  opts.struct_size = TSR_STRUCT_SIZE(tsr_runtime_options_t);
  tsr_runtime_t* rt = nullptr;
  tsr::check(tsr::api()->runtime_create(&opts, &rt));
  unsetenv("TESSERA_CPU_DEVICES");
  {
    std::vector<tsr::Device> devs = loaded_devices(rt);
    ASSERT_GE(devs.size(), 2u);
    tsr::Device cpu1(tsr_device_t{TSR_DEVICE_TYPE_CPU, 1});
    auto rs = run_opinfo(rt, transpose_info(GradBug::None), cpu1);
    EXPECT_EQ(count(rs, Outcome::Fail), 0u) << failures(rs);
    EXPECT_EQ(count(rs, Outcome::Pass, "grad"), 2u) << failures(rs);
    EXPECT_EQ(rs[0].device, "cpu:1");
    auto bad = run_opinfo(rt, transpose_info(GradBug::OffCpu0), cpu1);
    EXPECT_EQ(count(bad, Outcome::Fail, "grad"), 2u) << failures(bad);
  }
  tsr::set_runtime(nullptr);
  // Composites and backward formulas rely on this to create tensors in their runtime.
  tsr_runtime_t* process_wide = tsr::runtime();
  {
    tsr::RuntimeScope scope(rt);
    EXPECT_EQ(tsr::runtime(), rt);
    EXPECT_EQ(tsr::full({2}, 1.0).runtime(), rt);
  }
  EXPECT_EQ(tsr::runtime(), process_wide);
  EXPECT_NE(process_wide, rt);
  tsr::api()->runtime_destroy(rt);
}

}  // namespace
