// Elementwise losses (mse, l1, smooth_l1, huber, binary cross entropy with and without logits,
// kl_div): primitives whose forward is written with SDK ops and whose backward is closed form.
// Input and target broadcast (as PyTorch, which warns); reduction 'none' | 'mean' | 'sum'.
#include <cmath>

#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

using nn::Reduction;
using tsr::Tensor;

Tensor reduce_loss(const Tensor& l, Reduction r, int64_t batch = 1) {
  switch (r) {
    case Reduction::None:
      return l;
    case Reduction::Sum:
      return tsr::sum(l);
    case Reduction::BatchMean:
      return tsr::sum(l) / static_cast<double>(batch);
    case Reduction::Mean:
      break;
  }
  return tsr::mean(l);
}

// The incoming gradient spread over the elements of the unreduced loss of `numel` elements.
Tensor spread_grad(const Tensor& g, Reduction r, int64_t numel, int64_t batch = 1) {
  if (r == Reduction::Mean) return g / static_cast<double>(numel);
  if (r == Reduction::BatchMean) return g / static_cast<double>(batch);
  return g;
}

void check_pair(const char* op, const Tensor& x, const Tensor& y) {
  nn::require_floating(op, "input", x);
  nn::require_floating(op, "target", y);
  auto a = x.sizes(), b = y.sizes();
  size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (sa != sb && sa != 1 && sb != 1)
      nn::fail(op, "input " + nn::shp(x) + " and target " + nn::shp(y) + " cannot be broadcast together");
  }
}

int64_t broadcast_numel(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  size_t n = std::max(a.size(), b.size());
  int64_t numel = 1;
  for (size_t i = 0; i < n; ++i) {
    int64_t sa = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t sb = i < n - b.size() ? 1 : b[i - (n - b.size())];
    numel *= std::max(sa, sb) == 1 && (sa == 0 || sb == 0) ? 0 : (sa == 1 ? sb : sa);
  }
  return numel;
}

// ---- losses of d = input - target ---------------------------------------------------------------

enum class Diff { Mse, L1, SmoothL1, Huber };

Tensor diff_loss(Diff k, const Tensor& d, double p) {
  switch (k) {
    case Diff::Mse:
      return d * d;
    case Diff::L1:
      return tsr::abs(d);
    case Diff::SmoothL1: {
      Tensor ad = tsr::abs(d);
      if (p == 0) return ad;
      return tsr::where(tsr::lt(ad, p), d * d * (0.5 / p), ad - 0.5 * p);
    }
    case Diff::Huber: {
      Tensor ad = tsr::abs(d);
      return tsr::where(tsr::le(ad, p), d * d * 0.5, (ad - 0.5 * p) * p);
    }
  }
  return d;
}

Tensor diff_grad(Diff k, const Tensor& d, double p) {
  switch (k) {
    case Diff::Mse:
      return d * 2.0;
    case Diff::L1:
      return nn::sign_of(d);
    case Diff::SmoothL1:
      if (p == 0) return nn::sign_of(d);
      return tsr::where(tsr::lt(tsr::abs(d), p), d / p, nn::sign_of(d));
    case Diff::Huber:
      return tsr::where(tsr::le(tsr::abs(d), p), d, nn::sign_of(d) * p);
  }
  return d;
}

template <Diff K>
Tensor diff_fwd(CArgs& a) {
  Tensor x = a.tensor(0), y = a.tensor(1);
  check_pair(a.op(), x, y);
  Reduction r = nn::parse_reduction(a.op(), a.str(2));
  double p = a.size() > 3 ? a.double_arg(3) : 0.0;
  if ((K == Diff::SmoothL1 && p < 0) || (K == Diff::Huber && p <= 0))
    nn::fail(a.op(), std::string(K == Diff::Huber ? "delta must be positive" : "beta must be non-negative") + ", got " +
                         std::to_string(p));
  return reduce_loss(diff_loss(K, x - y, p), r);
}

template <Diff K>
void diff_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor &x = c.input(0), &y = c.input(1);
  Reduction r = nn::parse_reduction(c.op_name(), c.str(2));
  double p = c.nargs_ > 3 ? c.double_arg(3) : 0.0;
  Tensor gd = diff_grad(K, x - y, p) * spread_grad(c.grad(0), r, broadcast_numel(x.sizes(), y.sizes()));
  if (c.needs(0)) c.set(0, gd);
  if (c.needs(1)) c.set(1, -gd);
}

// ---- binary cross entropy -----------------------------------------------------------------------

void check_weight(const char* op, const char* what, const std::optional<Tensor>& w, const Tensor& x) {
  if (!w) return;
  nn::require_floating(op, what, *w);
  if (broadcast_numel(w->sizes(), x.sizes()) != x.numel() || w->dim() > x.dim())
    nn::fail(op, std::string(what) + " " + nn::shp(*w) + " cannot be broadcast to input " + nn::shp(x));
}

Tensor bce_fwd(CArgs& a) {
  Tensor x = a.tensor(0), y = a.tensor(1);
  check_pair(a.op(), x, y);
  if (x.sizes() != y.sizes())
    nn::fail(a.op(), "target " + nn::shp(y) + " must have the same shape as input " + nn::shp(x));
  auto w = a.opt_tensor(2);
  check_weight(a.op(), "weight", w, x);
  Reduction r = nn::parse_reduction(a.op(), a.str(3));
  if (x.numel() > 0) {
    double lo = tsr::amin(x).item<double>(), hi = tsr::amax(x).item<double>();
    if (!(lo >= 0 && hi <= 1))
      nn::fail(a.op(), "all elements of input " + nn::shp(x) + " should be between 0 and 1, found values in [" +
                           std::to_string(lo) + ", " + std::to_string(hi) + "]");
  }
  // PyTorch clamps the logs at -100 so that 0 * log(0) stays finite.
  Tensor lx = tsr::clamp(tsr::log(x), -100.0), l1x = tsr::clamp(tsr::log(1.0 - x), -100.0);
  Tensor l = -(y * lx + (1.0 - y) * l1x);
  if (w) l = l * *w;
  return reduce_loss(l, r);
}

void bce_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor &x = c.input(0), &y = c.input(1);
  Reduction r = nn::parse_reduction(c.op_name(), c.str(3));
  Tensor g = spread_grad(c.grad(0), r, x.numel());
  if (!c.is_none(2)) g = g * c.input(2);
  if (c.needs(0)) c.set(0, g * (x - y) / tsr::clamp((1.0 - x) * x, 1e-12));
  if (c.needs(1)) c.set(1, g * (tsr::clamp(tsr::log(1.0 - x), -100.0) - tsr::clamp(tsr::log(x), -100.0)));
  if (!c.is_none(2) && c.needs(2)) {
    Tensor l = -(y * tsr::clamp(tsr::log(x), -100.0) + (1.0 - y) * tsr::clamp(tsr::log(1.0 - x), -100.0));
    c.set(2, l * spread_grad(c.grad(0), r, x.numel()));
  }
}

// softplus(-x) = log(1 + e^-|x|) + max(-x, 0): no overflow for large |x|.
Tensor softplus_neg(const Tensor& x) { return tsr::log(tsr::exp(-tsr::abs(x)) + 1.0) + tsr::relu(-x); }

Tensor bce_logits_fwd(CArgs& a) {
  Tensor x = a.tensor(0), y = a.tensor(1);
  check_pair(a.op(), x, y);
  if (x.sizes() != y.sizes())
    nn::fail(a.op(), "target " + nn::shp(y) + " must have the same shape as input " + nn::shp(x));
  auto w = a.opt_tensor(2), pw = a.opt_tensor(3);
  check_weight(a.op(), "weight", w, x);
  check_weight(a.op(), "pos_weight", pw, x);
  Reduction r = nn::parse_reduction(a.op(), a.str(4));
  Tensor sp = softplus_neg(x);
  Tensor l = pw ? (1.0 - y) * x + (y * (*pw - 1.0) + 1.0) * sp : (1.0 - y) * x + sp;
  if (w) l = l * *w;
  return reduce_loss(l, r);
}

void bce_logits_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor &x = c.input(0), &y = c.input(1);
  Reduction r = nn::parse_reduction(c.op_name(), c.str(4));
  Tensor g = spread_grad(c.grad(0), r, x.numel());
  bool has_w = !c.is_none(2), has_pw = !c.is_none(3);
  Tensor gw = has_w ? g * c.input(2) : g;
  Tensor sp = softplus_neg(x);
  if (c.needs(0)) {
    Tensor lw = has_pw ? y * (c.input(3) - 1.0) + 1.0 : Tensor();
    Tensor dx = has_pw ? (1.0 - y) - lw * tsr::sigmoid(-x) : (1.0 - y) - tsr::sigmoid(-x);
    c.set(0, gw * dx);
  }
  if (c.needs(1)) c.set(1, gw * (has_pw ? (c.input(3) - 1.0) * sp - x : -x));
  if (has_w && c.needs(2)) {
    Tensor l = has_pw ? (1.0 - y) * x + (y * (c.input(3) - 1.0) + 1.0) * sp : (1.0 - y) * x + sp;
    c.set(2, g * l);
  }
  if (has_pw && c.needs(3)) c.set(3, gw * y * sp);
}

// ---- kl_div ---------------------------------------------------------------------------------------

// target * (log(target) - input), 0 where target == 0 (xlogy); or e^t * (t - input) for log targets.
Tensor kl_pointwise(const Tensor& x, const Tensor& t, bool log_target) {
  if (log_target) return tsr::exp(t) * (t - x);
  Tensor pos = tsr::gt(t, 0);
  Tensor safe = tsr::where(pos, t, tsr::wrap_scalar(1.0, t.runtime()).to(t.dtype()));
  return tsr::where(pos, t * tsr::log(safe), tsr::wrap_scalar(0.0, t.runtime()).to(t.dtype())) - t * x;
}

Tensor kl_fwd(CArgs& a) {
  Tensor x = a.tensor(0), t = a.tensor(1);
  check_pair(a.op(), x, t);
  Reduction r = nn::parse_reduction(a.op(), a.str(2), true);
  int64_t batch = x.dim() > 0 ? x.size(0) : 1;
  return reduce_loss(kl_pointwise(x, t, a.bool_arg(3)), r, batch);
}

void kl_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor &x = c.input(0), &t = c.input(1);
  Reduction r = nn::parse_reduction(c.op_name(), c.str(2), true);
  bool log_target = c.bool_arg(3);
  int64_t batch = x.dim() > 0 ? x.size(0) : 1;
  Tensor g = spread_grad(c.grad(0), r, broadcast_numel(x.sizes(), t.sizes()), batch);
  if (c.needs(0)) c.set(0, -(log_target ? tsr::exp(t) : t) * g);
  if (c.needs(1)) {
    if (log_target) {
      c.set(1, tsr::exp(t) * (t - x + 1.0) * g);
    } else {
      Tensor pos = tsr::gt(t, 0);
      Tensor safe = tsr::where(pos, t, tsr::wrap_scalar(1.0, t.runtime()).to(t.dtype()));
      c.set(1, tsr::where(pos, tsr::log(safe) + 1.0 - x, tsr::wrap_scalar(0.0, t.runtime()).to(t.dtype())) * g);
    }
  }
}

}  // namespace

TSR_CORE_OPS(nn_loss) {
  v.push_back(nn::prim("mse_loss(Tensor self, Tensor target, str reduction='mean') -> Tensor",
                       composite<diff_fwd<Diff::Mse>>, TSR_GRAD(diff_bwd<Diff::Mse>)));
  v.push_back(nn::prim("l1_loss(Tensor self, Tensor target, str reduction='mean') -> Tensor",
                       composite<diff_fwd<Diff::L1>>, TSR_GRAD(diff_bwd<Diff::L1>)));
  v.push_back(nn::prim("smooth_l1_loss(Tensor self, Tensor target, str reduction='mean', float beta=1.0) -> Tensor",
                       composite<diff_fwd<Diff::SmoothL1>>, TSR_GRAD(diff_bwd<Diff::SmoothL1>)));
  v.push_back(nn::prim("huber_loss(Tensor self, Tensor target, str reduction='mean', float delta=1.0) -> Tensor",
                       composite<diff_fwd<Diff::Huber>>, TSR_GRAD(diff_bwd<Diff::Huber>)));
  v.push_back(
      nn::prim("binary_cross_entropy(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean') -> Tensor",
               composite<bce_fwd>, TSR_GRAD(bce_bwd)));
  v.push_back(
      nn::prim("binary_cross_entropy_with_logits(Tensor self, Tensor target, Tensor? weight=None, "
               "Tensor? pos_weight=None, str reduction='mean') -> Tensor",
               composite<bce_logits_fwd>, TSR_GRAD(bce_logits_bwd)));
  v.push_back(nn::prim("kl_div(Tensor self, Tensor target, str reduction='mean', bool log_target=False) -> Tensor",
                       composite<kl_fwd>, TSR_GRAD(kl_bwd)));
}

}  // namespace tsr::core
