// OpInfos of the reduce family: dim lists with keepdim, odd, empty and 0-d shapes. Ops that
// return indices (or order their input) get inputs with distinct values that every dtype
// represents exactly (multiples of 1/4 below 64), so that no ties appear in float16/bfloat16 that
// the float64 reference does not have.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <random>
#include <string>

#include "opinfo.hpp"

namespace tsr::conformance {
namespace {

using Gen = std::function<tsr::Tensor(const Shape&, uint64_t)>;
using Run = std::function<Tensors(const Tensors&)>;

struct Case {
  Shape shape;
  std::string what;
  Run run;
};

const std::vector<tsr_dtype_t>& floats() {
  static const std::vector<tsr_dtype_t> d = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};
  return d;
}
const std::vector<tsr_dtype_t>& all_dtypes() {
  static const std::vector<tsr_dtype_t> d = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16, TSR_I64, TSR_I32, TSR_U8, TSR_BOOL};
  return d;
}

Gen uniform(double lo, double hi) {
  return [lo, hi](const Shape& s, uint64_t seed) { return random_f64(s, seed, lo, hi); };
}
Gen distinct() {
  return [](const Shape& s, uint64_t seed) {
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    std::vector<double> v(static_cast<size_t>(n));
    std::iota(v.begin(), v.end(), 0.0);
    std::shuffle(v.begin(), v.end(), std::mt19937_64(seed));
    for (double& x : v) x = (x - double(n / 2)) * 0.25;
    return tsr::from_vector(v, s, tsr::Device::cpu());
  };
}

// Small integers (zeros included): exact, and of the same truthiness, in every dtype.
Gen small_ints() {
  return [](const Shape& s, uint64_t seed) { return random_index(s, seed, -3, 4).to(TSR_F64); };
}

std::string shape_text(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

OpInfo make(const char* name, std::vector<tsr_dtype_t> dtypes, bool differentiable, Gen gen, std::vector<Case> cases,
            double tol_scale = 1) {
  OpInfo o;
  o.name = name;
  o.dtypes = std::move(dtypes);
  o.differentiable = differentiable;
  o.tol_scale = tol_scale;
  o.samples = [gen, cases](uint64_t seed) {
    std::vector<Sample> out;
    for (const Case& c : cases) {
      Sample s;
      s.desc = shape_text(c.shape) + " " + c.what;
      s.inputs = {gen(c.shape, seed++)};
      s.run = c.run;
      out.push_back(std::move(s));
    }
    return out;
  };
  return o;
}

Tensors one(tsr::Tensor t) { return {std::move(t)}; }
Tensors two(std::pair<tsr::Tensor, tsr::Tensor> p) { return {std::move(p.first), std::move(p.second)}; }

// sum-like reductions: every dim, one dim kept, a dim pair, negative dims, empty and 0-d inputs.
std::vector<Case> dim_cases(std::function<tsr::Tensor(const tsr::Tensor&, std::vector<int64_t>, bool)> f,
                            bool allow_empty = true, bool allow_scalar = true) {
  std::vector<Case> c = {
      {{3, 5}, "dim=[]", [f](const Tensors& in) { return one(f(in[0], {}, false)); }},
      {{3, 5}, "dim=[1] keepdim", [f](const Tensors& in) { return one(f(in[0], {1}, true)); }},
      {{2, 3, 7},
       "dim=[0, -1]",
       [f](const Tensors& in) {
         return one(f(in[0], {0, -1}, false));
       }},
      {{13}, "dim=[0]", [f](const Tensors& in) { return one(f(in[0], {0}, false)); }},
  };
  if (allow_scalar) c.push_back({{}, "0-d", [f](const Tensors& in) { return one(f(in[0], {}, false)); }});
  if (allow_empty)
    c.push_back({{0, 4}, "dim=[0] over size 0", [f](const Tensors& in) { return one(f(in[0], {0}, false)); }});
  return c;
}

// Ops along one dim.
std::vector<Case> along_cases(std::function<Tensors(const tsr::Tensor&, int64_t)> f) {
  return {
      {{3, 5}, "dim=1", [f](const Tensors& in) { return f(in[0], 1); }},
      {{4, 3}, "dim=0", [f](const Tensors& in) { return f(in[0], 0); }},
      {{2, 3, 5}, "dim=-2", [f](const Tensors& in) { return f(in[0], -2); }},
      {{7}, "dim=0", [f](const Tensors& in) { return f(in[0], 0); }},
      {{}, "0-d", [f](const Tensors& in) { return f(in[0], 0); }},
  };
}

}  // namespace

TSR_OPINFOS(reduce) {
  using T = tsr::Tensor;
  using D = std::vector<int64_t>;
  v.push_back(make("sum", floats(), true, uniform(-2, 2),
                   dim_cases([](const T& x, D d, bool k) { return tsr::sum(x, d, k); }), 4));
  v.push_back(make("mean", floats(), true, uniform(-2, 2),
                   dim_cases([](const T& x, D d, bool k) { return tsr::mean(x, d, k); }), 4));
  v.push_back(make("amax", floats(), true, distinct(),
                   dim_cases([](const T& x, D d, bool k) { return tsr::amax(x, d, k); }, false)));
  v.push_back(make("amin", floats(), true, distinct(),
                   dim_cases([](const T& x, D d, bool k) { return tsr::amin(x, d, k); }, false)));
  v.push_back(make("argmax", floats(), false, distinct(),
                   {{{3, 5}, "dim=1", [](const Tensors& in) { return one(tsr::argmax(in[0], 1)); }},
                    {{3, 5}, "flat", [](const Tensors& in) { return one(tsr::argmax(in[0])); }}}));
  v.push_back(make("prod", floats(), true, uniform(0.5, 1.5),
                   dim_cases([](const T& x, D d, bool k) { return tsr::prod(x, d, k); }), 4));
  v.push_back(make("nansum", floats(), true, uniform(-2, 2),
                   dim_cases([](const T& x, D d, bool k) { return tsr::nansum(x, d, k); }), 4));
  v.push_back(make("nanmean", floats(), true, uniform(-2, 2),
                   dim_cases([](const T& x, D d, bool k) { return tsr::nanmean(x, d, k); }, false), 4));
  v.push_back(make("var", floats(), true, uniform(-2, 2),
                   dim_cases([](const T& x, D d, bool k) { return tsr::var(x, d, 1, k); }, false, false), 8));
  v.push_back(make("std", floats(), true, uniform(-2, 2),
                   dim_cases([](const T& x, D d, bool k) { return tsr::std(x, d, 0, k); }, false, false), 8));
  v.push_back(make("var_mean", floats(), true, uniform(-2, 2),
                   {{{3, 5}, "dim=[1]", [](const Tensors& in) { return two(tsr::var_mean(in[0], {1})); }},
                    {{2, 3, 4},
                     "dim=[] keepdim correction=0",
                     [](const Tensors& in) { return two(tsr::var_mean(in[0], {}, 0, true)); }}},
                   8));
  v.push_back(make("std_mean", floats(), true, uniform(-2, 2),
                   {{{3, 5}, "dim=[0]", [](const Tensors& in) { return two(tsr::std_mean(in[0], {0})); }}}, 8));
  {
    std::vector<Case> c;
    for (double p : {2.0, 1.0, 3.0, 0.5}) {
      c.push_back({{3, 5}, "p=" + std::to_string(p) + " dim=[1]", [p](const Tensors& in) {
                     return one(tsr::norm(in[0], p, {1}));
                   }});
      c.push_back({{2, 3, 2}, "p=" + std::to_string(p) + " dim=[]", [p](const Tensors& in) {
                     return one(tsr::norm(in[0], p));
                   }});
    }
    v.push_back(make("norm", floats(), true, distinct(), c, 8));
    v.push_back(
        make("norm", floats(), true, distinct(),
             {{{3, 5}, "p=inf", [](const Tensors& in) { return one(tsr::norm(in[0], HUGE_VAL, {1})); }},
              {{3, 5}, "p=-inf", [](const Tensors& in) { return one(tsr::norm(in[0], -HUGE_VAL, {0}, true)); }}}));
    v.push_back(make("norm", floats(), false, uniform(-2, 2),
                     {{{3, 5}, "p=0", [](const Tensors& in) { return one(tsr::norm(in[0], 0, {1})); }}}));
  }
  v.push_back(make("logsumexp", floats(), true, uniform(-5, 5),
                   dim_cases([](const T& x, D d, bool k) { return tsr::logsumexp(x, d, k); }), 4));
  v.push_back(make("all", all_dtypes(), false, small_ints(),
                   dim_cases([](const T& x, D d, bool k) { return tsr::all(x, d, k); })));
  v.push_back(make("any", all_dtypes(), false, small_ints(),
                   dim_cases([](const T& x, D d, bool k) { return tsr::any(x, d, k); })));
  v.push_back(make("count_nonzero", all_dtypes(), false, small_ints(),
                   dim_cases([](const T& x, D d, bool) { return tsr::count_nonzero(x, d); })));
  v.push_back(make("max", floats(), true, distinct(),
                   {{{3, 5}, "all", [](const Tensors& in) { return one(tsr::max(in[0])); }},
                    {{}, "0-d", [](const Tensors& in) { return one(tsr::max(in[0])); }}}));
  v.push_back(make("min", floats(), true, distinct(),
                   {{{2, 7}, "all", [](const Tensors& in) { return one(tsr::min(in[0])); }}}));
  v.push_back(make("max_dim", floats(), true, distinct(),
                   along_cases([](const T& x, int64_t d) { return two(tsr::max_dim(x, d)); })));
  v.push_back(make("min_dim", floats(), true, distinct(),
                   along_cases([](const T& x, int64_t d) { return two(tsr::min_dim(x, d, true)); })));
  v.push_back(
      make("argmin", floats(), false, distinct(),
           {{{3, 5}, "dim=1", [](const Tensors& in) { return one(tsr::argmin(in[0], 1)); }},
            {{3, 5}, "flat keepdim", [](const Tensors& in) { return one(tsr::argmin(in[0], std::nullopt, true)); }}}));
  v.push_back(make("aminmax", floats(), false, distinct(),
                   {{{3, 5}, "dim=0", [](const Tensors& in) { return two(tsr::aminmax(in[0], 0)); }},
                    {{3, 5}, "all", [](const Tensors& in) { return two(tsr::aminmax(in[0])); }}}));
  v.push_back(make("cumsum", floats(), true, uniform(-2, 2),
                   along_cases([](const T& x, int64_t d) { return one(tsr::cumsum(x, d)); }), 4));
  v.push_back(make("cumprod", floats(), true, uniform(0.5, 1.5),
                   along_cases([](const T& x, int64_t d) { return one(tsr::cumprod(x, d)); }), 4));
  v.push_back(make("logcumsumexp", floats(), true, uniform(-3, 3),
                   along_cases([](const T& x, int64_t d) { return one(tsr::logcumsumexp(x, d)); }), 4));
  v.push_back(make("cummax", floats(), true, distinct(),
                   along_cases([](const T& x, int64_t d) { return two(tsr::cummax(x, d)); })));
  v.push_back(make("cummin", floats(), true, distinct(),
                   along_cases([](const T& x, int64_t d) { return two(tsr::cummin(x, d)); })));
  v.push_back(make("sort", floats(), true, distinct(),
                   along_cases([](const T& x, int64_t d) { return two(tsr::sort(x, d)); })));
  v.push_back(make("sort", floats(), true, distinct(),
                   along_cases([](const T& x, int64_t d) { return two(tsr::sort(x, d, true, true)); })));
  v.push_back(make("argsort", floats(), false, distinct(),
                   along_cases([](const T& x, int64_t d) { return one(tsr::argsort(x, d, true)); })));
  v.push_back(
      make("topk", floats(), true, distinct(),
           {{{3, 5}, "k=2", [](const Tensors& in) { return two(tsr::topk(in[0], 2)); }},
            {{4, 3}, "k=3 dim=0 smallest", [](const Tensors& in) { return two(tsr::topk(in[0], 3, 0, false)); }},
            {{3, 5}, "k=0", [](const Tensors& in) { return two(tsr::topk(in[0], 0)); }}}));
  v.push_back(
      make("kthvalue", floats(), true, distinct(),
           {{{3, 5}, "k=2", [](const Tensors& in) { return two(tsr::kthvalue(in[0], 2)); }},
            {{4, 3}, "k=4 dim=0 keepdim", [](const Tensors& in) { return two(tsr::kthvalue(in[0], 4, 0, true)); }}}));
  v.push_back(make("median", floats(), true, distinct(),
                   {{{3, 5}, "all", [](const Tensors& in) { return one(tsr::median(in[0])); }},
                    {{4}, "even count", [](const Tensors& in) { return one(tsr::median(in[0])); }}}));
  // small integers repeat, so every row has a clear mode (exact in every float dtype); not
  // gradchecked: finite differences split the ties that make the mode (tests/ops gradchecks it)
  v.push_back(
      make("mode", floats(), false, small_ints(),
           {{{3, 9}, "dim=1", [](const Tensors& in) { return one(tsr::mode(in[0], 1).first); }},
            {{9, 2}, "dim=0 keepdim", [](const Tensors& in) { return one(tsr::mode(in[0], 0, true).first); }}}));
  v.push_back(make("median_dim", floats(), true, distinct(),
                   along_cases([](const T& x, int64_t d) { return two(tsr::median_dim(x, d)); })));
}

}  // namespace tsr::conformance
