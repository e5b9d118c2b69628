// The vendor example plugin (plugins/example_gemm), loaded by the core from the build tree's
// lib/tessera/plugins beside the cpu plugin, checked against a float64 reference computed here.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

const tsr::Op& gemm_op() {
  static const tsr::Op op("example::gemm_bias_act");
  return op;
}

tsr::Tensor gemm(const tsr::Tensor& a, const tsr::Tensor& b, const tsr::Tensor& bias, const char* act) {
  return tsr::call(gemm_op(), {a, b, bias.defined() ? tsr::Arg(bias) : tsr::Arg(tsr::none), act});
}

double act_ref(const std::string& act, double x) {
  if (act == "relu") return x < 0 ? 0 : x;
  if (act == "gelu") return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  if (act == "silu") return x / (1 + std::exp(-x));
  return x;
}

// act(a @ b + bias) in float64 from the tensors' values.
std::vector<double> reference(const tsr::Tensor& a, const tsr::Tensor& b, const tsr::Tensor& bias,
                              const std::string& act) {
  const int64_t m = a.size(0), k = a.size(1), n = b.size(1);
  std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>();
  std::vector<double> biasv = bias.defined() ? bias.to_vector<double>() : std::vector<double>(n, 0.0);
  std::vector<double> out(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += av[i * k + p] * bv[p * n + j];
      out[i * n + j] = act_ref(act, s + biasv[j]);
    }
  return out;
}

void expect_close(const tsr::Tensor& got, const std::vector<double>& want, tsr_dtype_t dt) {
  std::vector<double> g = got.to_vector<double>();
  ASSERT_EQ(g.size(), want.size());
  const double tol = dt == TSR_F64 ? 1e-12 : dt == TSR_F32 ? 2e-5 : dt == TSR_BF16 ? 3e-2 : 4e-3;
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], want[i], tol * (1 + std::abs(want[i]))) << "element " << i;
}

enum class Layout { Contiguous, Transposed, Strided };
const char* layout_name(Layout l) {
  return l == Layout::Contiguous ? "contiguous" : l == Layout::Transposed ? "transposed" : "strided";
}

// A random [rows, cols] tensor laid out as asked: contiguous, the transpose of a contiguous
// [cols, rows], or every other column of a [rows, 2*cols+1] tensor (non-unit inner stride).
tsr::Tensor make_matrix(int64_t rows, int64_t cols, tsr_dtype_t dt, Layout layout) {
  switch (layout) {
    case Layout::Contiguous:
      return tsr::randn({rows, cols}, dt);
    case Layout::Transposed:
      return tsr::randn({cols, rows}, dt).t();
    case Layout::Strided:
      return tsr::randn({rows, 2 * cols + 1}, dt).slice(1, 1, 2 * cols + 1, 2);
  }
  return {};
}

class ExampleGemm : public ::testing::Test {
 protected:
  void SetUp() override {
    tsr::manual_seed(1234);
    tsr_op_t* op = nullptr;
    tsr_status_t st = tsr::api()->op_find(tsr::runtime(), "example::gemm_bias_act", &op);
    if (st) {
      std::string why = tsr::api()->status_message(st);
      tsr::api()->status_free(st);
      std::string records;
      for (size_t i = 0; i < tsr::api()->plugin_count(tsr::runtime()); ++i) {
        tsr_plugin_record_t r{};
        r.struct_size = sizeof r;
        if (!tsr::api()->plugin_record(tsr::runtime(), i, &r))
          records += std::string("\n  ") + r.name + " (" + r.path + "): " + (r.loaded ? "loaded" : r.reason);
      }
      FAIL() << "example_gemm is not loaded: " << why << "; plugins:" << records;
    }
  }
};

TEST_F(ExampleGemm, LoadedAfterCpuWithItsManifest) {
  const tsr_api_t* api = tsr::api();
  int cpu_pos = -1, gemm_pos = -1, pos = 0;
  for (size_t i = 0; i < api->plugin_count(tsr::runtime()); ++i) {
    tsr_plugin_record_t r{};
    r.struct_size = sizeof r;
    ASSERT_EQ(api->plugin_record(tsr::runtime(), i, &r), nullptr);
    if (!r.loaded) continue;
    if (std::string(r.name) == "cpu") cpu_pos = pos;
    if (std::string(r.name) == "example_gemm") {
      gemm_pos = pos;
      EXPECT_NE(std::string(r.path).find("tessera_example_gemm.so"), std::string::npos) << r.path;
    }
    ++pos;
  }
  ASSERT_GE(cpu_pos, 0);
  ASSERT_GT(gemm_pos, cpu_pos) << "the manifest's depends: [cpu] must order the load";
  tsr_op_t* op = nullptr;
  ASSERT_EQ(api->op_find(tsr::runtime(), "example::gemm_bias_act", &op), nullptr);
  EXPECT_STREQ(api->op_schema(op),
               "example::gemm_bias_act(Tensor a, Tensor b, Tensor? bias=None, str act='none') -> Tensor");
  ASSERT_EQ(api->op_kernel_count(op), 1u);
  tsr_kernel_info_t info{};
  info.struct_size = sizeof info;
  ASSERT_EQ(api->op_kernel_info(op, 0, &info), nullptr);
  EXPECT_STREQ(info.plugin_name, "example_gemm");
  EXPECT_EQ(info.dtype_mask, tsr::kFloatingMask);
}

TEST_F(ExampleGemm, MatchesFloat64Reference) {
  const int64_t dims[] = {1, 3, 17};
  const char* acts[] = {"none", "relu", "gelu", "silu"};
  const Layout layouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Strided};
  int cases = 0;
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64})
    for (int64_t m : dims)
      for (int64_t k : dims)
        for (int64_t n : dims)
          for (Layout la : layouts)
            for (Layout lb : layouts)
              for (bool with_bias : {false, true}) {
                tsr::Tensor a = make_matrix(m, k, dt, la), b = make_matrix(k, n, dt, lb);
                tsr::Tensor bias = with_bias ? tsr::randn({n}, dt) : tsr::Tensor();
                for (const char* act : acts) {
                  SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " m=" + std::to_string(m) +
                               " k=" + std::to_string(k) + " n=" + std::to_string(n) + " a " + layout_name(la) + " b " +
                               layout_name(lb) + (with_bias ? " bias " : " ") + act);
                  tsr::Tensor out = gemm(a, b, bias, act);
                  ASSERT_EQ(out.sizes(), (std::vector<int64_t>{m, n}));
                  ASSERT_EQ(out.dtype(), dt);
                  expect_close(out, reference(a, b, bias, act), dt);
                  ++cases;
                }
              }
  EXPECT_EQ(cases, 2 * 27 * 9 * 2 * 4);
}

// Larger than one panel/slab of the blocked kernel (kNB = 128 columns, kKB = 256 rows of b).
TEST_F(ExampleGemm, CrossesBlockBoundaries) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    tsr::Tensor a = make_matrix(33, 300, dt, Layout::Transposed), b = make_matrix(300, 131, dt, Layout::Strided);
    tsr::Tensor bias = tsr::randn({131}, dt);
    tsr::Tensor out = gemm(a, b, bias, "gelu");
    std::vector<double> want = reference(a, b, bias, "gelu");
    std::vector<double> got = out.to_vector<double>();
    const double tol = dt == TSR_F64 ? 1e-11 : 1e-4;
    for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i])));
  }
}

TEST_F(ExampleGemm, ReducedPrecisionComputesInFloat) {
  for (tsr_dtype_t dt : {TSR_F16, TSR_BF16}) {
    tsr::Tensor a = tsr::randn({5, 17}, dt), b = tsr::randn({17, 3}, dt).t().contiguous().t();
    tsr::Tensor bias = tsr::randn({3}, dt);
    tsr::Tensor out = gemm(a, b, bias, "silu");
    EXPECT_EQ(out.dtype(), dt);
    expect_close(out, reference(a, b, bias, "silu"), dt);
  }
}

TEST_F(ExampleGemm, EmptyInnerDimensionGivesActOfBias) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64})
    for (int64_t m : {1, 3, 17})
      for (int64_t n : {1, 3, 17}) {
        tsr::Tensor a = tsr::empty({m, 0}, dt), b = tsr::empty({0, n}, dt);
        tsr::Tensor bias = tsr::randn({n}, dt);
        for (const char* act : {"none", "relu", "gelu", "silu"}) {
          expect_close(gemm(a, b, bias, act), reference(a, b, bias, act), dt);
          std::vector<double> zeros = gemm(a, b, tsr::Tensor(), act).to_vector<double>();
          for (double z : zeros) ASSERT_EQ(z, 0.0);
        }
      }
  // Empty outputs are fine too.
  tsr::Tensor e = gemm(tsr::empty({0, 4}), tsr::randn({4, 3}), tsr::Tensor(), "relu");
  EXPECT_EQ(e.sizes(), (std::vector<int64_t>{0, 3}));
}

TEST_F(ExampleGemm, OutVariantWritesIntoTheGivenTensor) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_F64}) {
    tsr::Tensor a = make_matrix(17, 3, dt, Layout::Strided), b = make_matrix(3, 17, dt, Layout::Transposed);
    tsr::Tensor bias = tsr::randn({17}, dt);
    std::vector<double> want = reference(a, b, bias, "relu");

    tsr::Tensor out = tsr::empty({17, 17}, dt);
    void* data = out.data_ptr();
    std::vector<tsr::Tensor> outs{out};
    std::vector<tsr::Tensor> r = tsr::call_multi(gemm_op(), {a, b, bias, "relu"}, outs);
    ASSERT_EQ(r.size(), 1u);
    EXPECT_EQ(r[0].get(), out.get());
    EXPECT_EQ(out.data_ptr(), data);
    expect_close(out, want, dt);

    // A non-contiguous out= (the transpose of a [17, 17] buffer) through the raw C ABI.
    tsr::Tensor base = tsr::zeros({17, 17}, dt);
    tsr::Tensor tout = base.t();
    tsr_value_t args[4];
    args[0].tag = TSR_VALUE_TENSOR, args[0].u.tensor = a.get();
    args[1].tag = TSR_VALUE_TENSOR, args[1].u.tensor = b.get();
    args[2].tag = TSR_VALUE_TENSOR, args[2].u.tensor = bias.get();
    args[3].tag = TSR_VALUE_STRING, args[3].u.str = "relu";
    tsr_tensor_t* raw_out = tout.get();
    tsr::check(tsr::api()->op_call(gemm_op().get(tsr::runtime()), args, 4, &raw_out, 1));
    EXPECT_EQ(raw_out, tout.get());
    expect_close(tout, want, dt);
  }
  // out= of the wrong shape is refused by the core, and not written.
  tsr::Tensor bad = tsr::zeros({3, 3});
  std::vector<tsr::Tensor> outs{bad};
  try {
    tsr::call_multi(gemm_op(), {tsr::randn({2, 3}), tsr::randn({3, 4})}, outs);
    FAIL() << "expected an error";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("example::gemm_bias_act"), std::string::npos) << e.what();
  }
  for (float v : bad.to_vector<float>()) EXPECT_EQ(v, 0.0f);
}

// Runs f, expects a tsr::Error with TSR_INVALID_ARGUMENT whose message contains every needle.
template <class F>
void expect_invalid(F&& f, std::vector<std::string> needles) {
  try {
    f();
    ADD_FAILURE() << "expected an error";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT) << e.what();
    for (const std::string& s : needles) EXPECT_NE(std::string(e.what()).find(s), std::string::npos) << e.what();
  }
}

TEST_F(ExampleGemm, ErrorsNameTheOpAndTheShapes) {
  const tsr::Tensor none;
  expect_invalid(
      [&] {
        gemm(tsr::randn({2, 3}), tsr::randn({4, 5}), none, "none");
      },
      {"example::gemm_bias_act", "[2, 3]", "[4, 5]"});
  expect_invalid(
      [&] {
        gemm(tsr::randn({2, 3}), tsr::randn({3, 5}), tsr::randn({4}), "none");
      },
      {"example::gemm_bias_act", "bias [4]", "[5]"});
  expect_invalid(
      [&] {
        gemm(tsr::randn({2, 3}), tsr::randn({3, 5}), tsr::randn({1, 5}), "none");
      },
      {"example::gemm_bias_act", "bias [1, 5]"});
  expect_invalid(
      [&] {
        gemm(tsr::randn({6}), tsr::randn({6, 2}), none, "none");
      },
      {"example::gemm_bias_act", "2-D", "[6]", "[6, 2]"});
  expect_invalid(
      [&] {
        gemm(tsr::randn({2, 3}), tsr::randn({3, 2}, TSR_F64), none, "none");
      },
      {"example::gemm_bias_act", "float32", "float64"});
  expect_invalid(
      [&] {
        gemm(tsr::randn({2, 3}), tsr::randn({3, 2}), tsr::randn({2}, TSR_F64), "none");
      },
      {"example::gemm_bias_act", "bias", "float64"});
  expect_invalid(
      [&] {
        gemm(tsr::arange(6).view({2, 3}), tsr::arange(6).view({3, 2}), none, "none");
      },
      {"example::gemm_bias_act", "floating", "int64"});
  expect_invalid(
      [&] {
        gemm(tsr::randn({2, 3}), tsr::randn({3, 2}), none, "tanh");
      },
      {"example::gemm_bias_act", "unknown act 'tanh'"});
  // Argument kinds are checked by the core from the schema.
  expect_invalid(
      [&] {
        tsr::call(gemm_op(), {tsr::randn({2, 3}), tsr::randn({3, 2}), tsr::none, 3});
      },
      {"example::gemm_bias_act", "act"});
}

// The plugin's own gradient formula (ABI 1.4, tsr_op_def_t.backward): every input's gradient
// against central finite differences in float64, for each activation, with and without bias,
// on strided inputs; and a second derivative through the formula (it is written with ops).
TEST_F(ExampleGemm, BackwardMatchesFiniteDifferences) {
  const double eps = 1e-6;
  for (const char* act : {"none", "relu", "gelu", "silu"})
    for (bool with_bias : {true, false}) {
      SCOPED_TRACE(std::string(act) + (with_bias ? " with bias" : " without bias"));
      tsr::Tensor a = make_matrix(3, 4, TSR_F64, Layout::Transposed);
      tsr::Tensor b = make_matrix(4, 5, TSR_F64, Layout::Strided);
      tsr::Tensor bias = with_bias ? tsr::randn({5}, TSR_F64) : tsr::Tensor();
      tsr::Tensor w = tsr::randn({3, 5}, TSR_F64);  // loss = sum(w * out): a random cotangent
      auto loss = [&](const tsr::Tensor& aa, const tsr::Tensor& bb, const tsr::Tensor& cc) {
        return tsr::sum(gemm(aa, bb, cc, act) * w).item<double>();
      };
      std::vector<tsr::Tensor> leaves = {a.clone().requires_grad_(), b.clone().requires_grad_()};
      if (with_bias) leaves.push_back(bias.clone().requires_grad_());
      tsr::sum(gemm(leaves[0], leaves[1], with_bias ? leaves[2] : tsr::Tensor(), act) * w).backward();
      for (size_t k = 0; k < leaves.size(); ++k) {
        std::vector<double> analytic = leaves[k].grad().to_vector<double>();
        tsr::Tensor base = leaves[k].detach().contiguous();
        std::vector<double> v = base.to_vector<double>();
        for (size_t e = 0; e < v.size(); ++e) {
          std::vector<double> plus = v, minus = v;
          plus[e] += eps;
          minus[e] -= eps;
          tsr::Tensor tp = tsr::from_vector(plus, base.sizes()), tm = tsr::from_vector(minus, base.sizes());
          tsr::Tensor args_p[3] = {a, b, bias}, args_m[3] = {a, b, bias};
          args_p[k] = tp;
          args_m[k] = tm;
          double numeric = (loss(args_p[0], args_p[1], args_p[2]) - loss(args_m[0], args_m[1], args_m[2])) / (2 * eps);
          // relu's kink is measure-zero for random inputs; the tolerance covers the rest.
          ASSERT_NEAR(analytic[e], numeric, 1e-6 * (1 + std::abs(numeric))) << "input " << k << " element " << e;
        }
      }
    }
  // Second order: d/da of sum(d loss / d a) through the formula, against finite differences of
  // the first derivative.
  tsr::Tensor a = tsr::randn({2, 3}, TSR_F64).requires_grad_();
  tsr::Tensor b = tsr::randn({3, 2}, TSR_F64);
  auto first = [&](const tsr::Tensor& aa) {
    tsr::Tensor leaf = aa.detach().requires_grad_();
    auto g = tsr::autograd::grad({tsr::sum(gemm(leaf, b, tsr::Tensor(), "silu"))}, {leaf});
    return tsr::sum(g[0]).item<double>();
  };
  auto g = tsr::autograd::grad({tsr::sum(gemm(a, b, tsr::Tensor(), "silu"))}, {a}, {}, true, true);
  tsr::sum(g[0]).backward();
  std::vector<double> second = a.grad().to_vector<double>(), av = a.detach().to_vector<double>();
  for (size_t e = 0; e < av.size(); ++e) {
    std::vector<double> plus = av, minus = av;
    plus[e] += eps;
    minus[e] -= eps;
    double numeric = (first(tsr::from_vector(plus, {2, 3})) - first(tsr::from_vector(minus, {2, 3}))) / (2 * eps);
    EXPECT_NEAR(second[e], numeric, 1e-5 * (1 + std::abs(numeric))) << "element " << e;
  }
  // Only the inputs that need a gradient get one; float32 works through the same formula.
  tsr::Tensor af = tsr::randn({4, 3}).requires_grad_(), bf = tsr::randn({3, 2});
  tsr::sum(gemm(af, bf, tsr::randn({2}), "gelu")).backward();
  EXPECT_EQ(af.grad().sizes(), (std::vector<int64_t>{4, 3}));
  EXPECT_FALSE(bf.grad().defined());
}

}  // namespace
