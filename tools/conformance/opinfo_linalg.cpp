// OpInfos of the linalg family (matrix products, einsum, factorizations), the random ops and the
// fused optimizer steps. Inputs avoid size-1 dims (the runner cannot make those non-contiguous);
// broadcasting is covered by lower-rank operands instead.
#include <functional>
#include <string>

#include "opinfo.hpp"

namespace tsr::conformance {
namespace {

using Run = std::function<Tensors(const Tensors&)>;
using Gen = std::function<tsr::Tensor(uint64_t)>;

std::string shp(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

Gen uni(Shape s, double lo = -2, double hi = 2) {
  return [s, lo, hi](uint64_t seed) { return random_f64(s, seed, lo, hi); };
}

// Batches of well-conditioned matrices: entries in [-0.5, 0.5) plus n on the diagonal.
Gen well_conditioned(Shape s) {
  return [s](uint64_t seed) {
    std::vector<double> v = random_f64(s, seed, -0.5, 0.5).to_vector<double>();
    int64_t n = s.back(), batch = 1;
    for (size_t i = 0; i + 2 < s.size(); ++i) batch *= s[i];
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t i = 0; i < n; ++i) v[size_t((b * n + i) * n + i)] += double(n);
    return tsr::from_vector(v, s);
  };
}

struct Case {
  std::vector<Gen> gens;
  Run run;
};

OpInfo info(const char* name, std::vector<tsr_dtype_t> dtypes, bool differentiable, double tol, std::vector<Case> cases,
            bool deterministic = true) {
  OpInfo o;
  o.name = name;
  o.dtypes = std::move(dtypes);
  o.differentiable = differentiable;
  o.tol_scale = tol;
  o.deterministic = deterministic;
  o.samples = [cases](uint64_t seed) {
    std::vector<Sample> out;
    for (const Case& c : cases) {
      Sample s;
      for (const Gen& g : c.gens) s.inputs.push_back(g(seed++));
      for (size_t i = 0; i < s.inputs.size(); ++i) s.desc += (i ? " x " : "") + shp(s.inputs[i].sizes());
      s.run = c.run;
      out.push_back(std::move(s));
    }
    return out;
  };
  return o;
}

const std::vector<tsr_dtype_t> kMmDtypes = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};
const std::vector<tsr_dtype_t> kLapack = {TSR_F32, TSR_F64};

Run r2(tsr::Tensor (*f)(const tsr::Tensor&, const tsr::Tensor&)) {
  return [f](const Tensors& x) { return Tensors{f(x[0], x[1])}; };
}

}  // namespace

TSR_OPINFOS(linalg) {
  v.push_back(info("mm", kMmDtypes, true, 4,
                   {{{uni({3, 5}), uni({5, 4})}, r2(tsr::mm)},
                    {{uni({2, 7}), uni({7, 3})}, r2(tsr::mm)},
                    {{uni({0, 3}), uni({3, 2})}, r2(tsr::mm)},
                    {{uni({2, 0}), uni({0, 3})}, r2(tsr::mm)}}));
  v.push_back(
      info("bmm", kMmDtypes, true, 4,
           {{{uni({2, 3, 5}), uni({2, 5, 4})}, r2(tsr::bmm)}, {{uni({0, 3, 2}), uni({0, 2, 1})}, r2(tsr::bmm)}}));
  v.push_back(info("matmul", kMmDtypes, true, 4,
                   {{{uni({5}), uni({5})}, r2(tsr::matmul)},
                    {{uni({3, 5}), uni({5})}, r2(tsr::matmul)},
                    {{uni({5}), uni({5, 2})}, r2(tsr::matmul)},
                    {{uni({2, 1, 3, 4}), uni({5, 4, 2})}, r2(tsr::matmul)},
                    {{uni({4}), uni({2, 4, 3})}, r2(tsr::matmul)},
                    {{uni({0, 3}), uni({3, 2})}, r2(tsr::matmul)}}));
  v.push_back(
      info("mv", kMmDtypes, true, 4, {{{uni({3, 5}), uni({5})}, r2(tsr::mv)}, {{uni({0, 2}), uni({2})}, r2(tsr::mv)}}));
  v.push_back(
      info("dot", kMmDtypes, true, 4, {{{uni({7}), uni({7})}, r2(tsr::dot)}, {{uni({0}), uni({0})}, r2(tsr::dot)}}));
  v.push_back(info("vdot", kMmDtypes, true, 4, {{{uni({5}), uni({5})}, r2(tsr::vdot)}}));
  v.push_back(info("outer", kMmDtypes, true, 1,
                   {{{uni({3}), uni({4})}, r2(tsr::outer)}, {{uni({0}), uni({2})}, r2(tsr::outer)}}));
  v.push_back(info("addmm", kMmDtypes, true, 4,
                   {{{uni({4}), uni({3, 5}), uni({5, 4})},
                     [](const Tensors& x) { return Tensors{tsr::addmm(x[0], x[1], x[2], 0.5, 2.0)}; }},
                    {{uni({2}), uni({3, 2}), uni({2, 2})},
                     [](const Tensors& x) { return Tensors{tsr::addmm(x[0], x[1], x[2])}; }}}));
  v.push_back(info("addmv", kMmDtypes, true, 4, {{{uni({3}), uni({3, 5}), uni({5})}, [](const Tensors& x) {
                                                    return Tensors{tsr::addmv(x[0], x[1], x[2], 2.0, -1.0)};
                                                  }}}));
  v.push_back(info("baddbmm", kMmDtypes, true, 4, {{{uni({2}), uni({2, 3, 4}), uni({2, 4, 2})}, [](const Tensors& x) {
                                                      return Tensors{tsr::baddbmm(x[0], x[1], x[2], 0.25, 3.0)};
                                                    }}}));
  v.push_back(info("addbmm", kMmDtypes, true, 4, {{{uni({3, 2}), uni({3, 3, 4}), uni({3, 4, 2})}, [](const Tensors& x) {
                                                     return Tensors{tsr::addbmm(x[0], x[1], x[2])};
                                                   }}}));
  v.push_back(info("linear", kMmDtypes, true, 4,
                   {{{uni({2, 3, 5}), uni({4, 5}), uni({4})},
                     [](const Tensors& x) { return Tensors{tsr::linear(x[0], x[1], x[2])}; }},
                    {{uni({5}), uni({3, 5})}, [](const Tensors& x) { return Tensors{tsr::linear(x[0], x[1])}; }}}));
  v.push_back(info("tensordot", kMmDtypes, true, 4, {{{uni({3, 4, 5}), uni({5, 4, 2})}, [](const Tensors& x) {
                                                        return Tensors{tsr::tensordot(x[0], x[1], {1, 2}, {1, 0})};
                                                      }}}));
  v.push_back(info("einsum", kMmDtypes, true, 4,
                   {{{uni({3, 4}), uni({4, 5})},
                     [](const Tensors& x) {
                       return Tensors{tsr::einsum("ij,jk->ik", {x[0], x[1]})};
                     }},
                    {{uni({4, 4})}, [](const Tensors& x) { return Tensors{tsr::einsum("ii->i", {x[0]})}; }},
                    {{uni({4, 4})}, [](const Tensors& x) { return Tensors{tsr::einsum("ii", {x[0]})}; }},
                    {{uni({3}), uni({2})},
                     [](const Tensors& x) {
                       return Tensors{tsr::einsum("i,j->ij", {x[0], x[1]})};
                     }},
                    {{uni({1, 2, 3, 4}), uni({1, 2, 5, 4})},
                     [](const Tensors& x) {
                       return Tensors{tsr::einsum("bhqd,bhkd->bhqk", {x[0], x[1]})};
                     }},
                    {{uni({2, 1, 3, 4}), uni({5, 4, 2})}, [](const Tensors& x) {
                       return Tensors{tsr::einsum("...ij,...jk->...ik", {x[0], x[1]})};
                     }}}));
  v.push_back(info("inverse", kLapack, true, 2,
                   {{{well_conditioned({3, 3})}, [](const Tensors& x) { return Tensors{tsr::inverse(x[0])}; }},
                    {{well_conditioned({2, 4, 4})}, [](const Tensors& x) { return Tensors{tsr::inverse(x[0])}; }},
                    {{well_conditioned({0, 2, 2})}, [](const Tensors& x) { return Tensors{tsr::inverse(x[0])}; }}}));
  v.push_back(info("linalg_solve", kLapack, true, 2,
                   {{{well_conditioned({2, 3, 3}), uni({3, 2})}, r2(tsr::linalg_solve)},
                    {{well_conditioned({4, 4}), uni({4})}, r2(tsr::linalg_solve)}}));
  v.push_back(info("det", kLapack, true, 2,
                   {{{uni({3, 3})}, [](const Tensors& x) { return Tensors{tsr::det(x[0])}; }},
                    {{well_conditioned({2, 4, 4})}, [](const Tensors& x) { return Tensors{tsr::det(x[0])}; }}}));
  v.push_back(info("slogdet", kLapack, true, 2, {{{uni({2, 3, 3})}, [](const Tensors& x) {
                                                    auto r = tsr::slogdet(x[0]);
                                                    return Tensors{r.first, r.second};
                                                  }}}));
  // cholesky reads one triangle: the sample symmetrizes so the gradient is well defined.
  auto chol = [](bool upper) {
    return [upper](const Tensors& x) {
      tsr::Tensor a = x[0];
      tsr::Tensor s = tsr::mul(tsr::add(a, a.transpose(a.dim() - 2, a.dim() - 1)), 0.5);
      return Tensors{tsr::cholesky(s, upper)};
    };
  };
  v.push_back(info("cholesky", kLapack, true, 4,
                   {{{well_conditioned({3, 3})}, chol(false)}, {{well_conditioned({2, 4, 4})}, chol(true)}}));
}

TSR_OPINFOS(random) {
  const std::vector<tsr_dtype_t> floats = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};
  v.push_back(info("bernoulli", floats, false, 1,
                   {{{uni({3, 5}, 0, 1)}, [](const Tensors& x) { return Tensors{tsr::bernoulli(x[0])}; }},
                    {{uni({0}, 0, 1)}, [](const Tensors& x) { return Tensors{tsr::bernoulli(x[0])}; }}},
                   false));
  v.push_back(info("bernoulli_p", floats, false, 1,
                   {{{uni({4, 3})}, [](const Tensors& x) { return Tensors{tsr::bernoulli_p(x[0], 0.3)}; }}}, false));
  v.push_back(info("randint", {TSR_I64}, false, 1,
                   {{{},
                     [](const Tensors&) {
                       return Tensors{tsr::randint(-5, 9, {3, 7})};
                     }}},
                   false));
  v.push_back(info("normal", {TSR_F32}, false, 1,
                   {{{}, [](const Tensors&) { return Tensors{tsr::normal(1.0, 2.0, {11})}; }}}, false));
  v.push_back(info(
      "normal_tensor", floats, false, 1,
      {{{uni({3, 4}), uni({4}, 0.5, 2)}, [](const Tensors& x) { return Tensors{tsr::normal(x[0], x[1])}; }}}, false));
  v.push_back(info("normal_", floats, false, 1,
                   {{{uni({2, 5})},
                     [](const Tensors& x) {
                       tsr::Tensor t = x[0].clone();
                       return Tensors{tsr::normal_(t, 0.0, 1.0)};
                     }}},
                   false));
  v.push_back(info("uniform_", floats, false, 1,
                   {{{uni({2, 5})},
                     [](const Tensors& x) {
                       tsr::Tensor t = x[0].clone();
                       return Tensors{tsr::uniform_(t, -1.0, 3.0)};
                     }}},
                   false));
  v.push_back(info("rand_like", floats, false, 1,
                   {{{uni({3, 2})}, [](const Tensors& x) { return Tensors{tsr::rand_like(x[0])}; }}}, false));
  v.push_back(info("randn_like", floats, false, 1,
                   {{{uni({3, 2})}, [](const Tensors& x) { return Tensors{tsr::randn_like(x[0])}; }}}, false));
  v.push_back(info("randperm", {TSR_I64}, false, 1,
                   {{{}, [](const Tensors&) { return Tensors{tsr::randperm(17)}; }},
                    {{}, [](const Tensors&) { return Tensors{tsr::randperm(0)}; }}},
                   false));
  v.push_back(info("multinomial", {TSR_F32, TSR_F64}, false, 1,
                   {{{uni({3, 5}, 0.1, 1)}, [](const Tensors& x) { return Tensors{tsr::multinomial(x[0], 4, true)}; }},
                    {{uni({5}, 0.1, 1)}, [](const Tensors& x) { return Tensors{tsr::multinomial(x[0], 3, false)}; }}},
                   false));
}

TSR_OPINFOS(optim) {
  const std::vector<tsr_dtype_t> floats = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};
  v.push_back(info("sgd_step_", floats, false, 2, {{{uni({3, 5}), uni({3, 5}), uni({3, 5})}, [](const Tensors& x) {
                                                      tsr::Tensor p = x[0].clone(), buf = x[2].clone();
                                                      tsr::SgdOptions o;
                                                      o.lr = 0.1;
                                                      o.momentum = 0.9;
                                                      o.weight_decay = 0.01;
                                                      tsr::sgd_step_(p, x[1], buf, o);
                                                      return Tensors{p, buf};
                                                    }}}));
  v.push_back(info("adam_step_", floats, false, 2,
                   {{{uni({3, 5}), uni({3, 5}), uni({3, 5}), uni({3, 5}, 0, 1)}, [](const Tensors& x) {
                       tsr::Tensor p = x[0].clone(), m = x[2].clone(), v2 = x[3].clone();
                       tsr::AdamOptions o;
                       o.lr = 0.01;
                       o.weight_decay = 0.1;
                       o.decoupled_weight_decay = true;
                       tsr::adam_step_(p, x[1], m, v2, std::nullopt, 3, o);
                       return Tensors{p, m, v2};
                     }}}));
}

}  // namespace tsr::conformance
