// nll_loss and cross_entropy (class indices with weight / ignore_index / label_smoothing, or
// class probabilities). Both are primitives: every loss here is -sum_c q[i,c] * logp[i,c] for
// a per-element class distribution q built from the target, which gives the closed-form
// gradients dlogp = -q (nll) and dx = softmax(x) * sum_c q - q (cross entropy).
#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

using nn::Reduction;
using tsr::Tensor;

struct Targets {
  Tensor q;              // [N, C, d...] in the input's dtype
  Tensor denom;          // mean divisor (0-dim)
  bool squeeze = false;  // the input was [C]: results drop the batch dim
  bool probs = false;
};

// x: the input ([C] or [N, C, d...]); target: class indices ([], [N, d...]) or probabilities
// (x's shape).
Targets build_targets(const char* op, Tensor x, Tensor t, const std::optional<Tensor>& weight, int64_t ignore_index,
                      double ls, bool allow_probs, bool validate_only = false) {
  nn::require_floating(op, "input", x);
  if (x.dim() == 0) nn::fail(op, "input must have at least 1 dimension (classes), got a 0-dim tensor");
  Targets r;
  r.probs = is_floating(t.dtype());
  if (r.probs && !allow_probs)
    nn::fail(op,
             std::string("expected integer class indices as target, got ") + dtype_name(t.dtype()) + " " + nn::shp(t));
  if (!r.probs && !is_integral(t.dtype()))
    nn::fail(op, std::string("expected integer class indices or floating point probabilities as target, got ") +
                     dtype_name(t.dtype()));
  if (ls < 0 || ls > 1) nn::fail(op, "label_smoothing must be in [0, 1], got " + std::to_string(ls));
  if (x.dim() == 1) {
    r.squeeze = true;
    x = x.unsqueeze(0);
    t = t.unsqueeze(0);
  }
  const int64_t C = x.size(1);
  const int64_t nd = x.dim();
  const tsr_dtype_t dt = x.dtype();
  auto xs = x.sizes();
  if (r.probs) {
    if (t.sizes() != xs)
      nn::fail(op, "probability target " + nn::shp(t) + " must have the input's shape " + nn::shp(x));
  } else {
    std::vector<int64_t> want = xs;
    want.erase(want.begin() + 1);
    if (t.sizes() != want)
      nn::fail(op, "expected target of shape " + nn::shp(want) + " for input " + nn::shp(x) + ", got " + nn::shp(t));
  }
  Tensor wv;
  if (weight) {
    if (weight->dim() != 1 || weight->size(0) != C)
      nn::fail(op,
               "weight must be 1-D with " + std::to_string(C) + " elements (one per class), got " + nn::shp(*weight));
    nn::require_floating(op, "weight", *weight);
    wv = weight->to(dt).view(nn::channel_shape(C, nd));
  }
  if (r.probs) {
    Tensor q = ls > 0 ? t.to(dt) * (1.0 - ls) + ls / static_cast<double>(C) : t.to(dt);
    r.q = wv.defined() ? q * wv : q;
    r.denom = tsr::wrap_scalar(static_cast<double>(x.numel() / std::max<int64_t>(C, 1)), x.runtime()).to(dt);
    return r;
  }
  if (validate_only) return r;
  Tensor tl = t.to(TSR_I64);
  Tensor valid = tsr::ne(tl, ignore_index);
  Tensor safe = tsr::where(valid, tl, tsr::wrap_scalar(int64_t{0}, x.runtime()));
  if (safe.numel() > 0) {
    int64_t lo = tsr::amin(safe).item<int64_t>(), hi = tsr::amax(safe).item<int64_t>();
    if (lo < 0 || hi >= C)
      nn::fail(op, "target " + std::to_string(lo < 0 ? lo : hi) + " is out of bounds for " + std::to_string(C) +
                       " classes (input " + nn::shp(x) + ")");
  }
  Tensor classes = tsr::arange(C, TSR_I64, x.device()).view(nn::channel_shape(C, nd));
  Tensor onehot = tsr::eq(safe.unsqueeze(1), classes).to(dt);
  if (wv.defined()) onehot = onehot * wv;
  Tensor validf = valid.to(dt).unsqueeze(1);
  onehot = onehot * validf;
  r.denom = tsr::sum(onehot);
  if (ls > 0) {
    Tensor smooth = wv.defined() ? wv * (ls / static_cast<double>(C))
                                 : tsr::ones(nn::channel_shape(C, nd), dt, x.device()) * (ls / static_cast<double>(C));
    r.q = onehot * (1.0 - ls) + smooth * validf;
  } else {
    r.q = onehot;
  }
  return r;
}

Tensor finish(const Tensor& per_elem, const Targets& t, Reduction red) {
  switch (red) {
    case Reduction::None:
      return t.squeeze ? per_elem.squeeze(0) : per_elem;
    case Reduction::Sum:
      return tsr::sum(per_elem);
    default:
      return tsr::sum(per_elem) / t.denom;
  }
}

// Incoming gradient as [N, 1, d...] (broadcasts against q).
Tensor grad_per_elem(const Tensor& g, const Targets& t, Reduction red) {
  switch (red) {
    case Reduction::None:
      return (t.squeeze ? g.unsqueeze(0) : g).unsqueeze(1);
    case Reduction::Sum:
      return g;
    default:
      return g / t.denom;
  }
}

Tensor nll_fwd(CArgs& a) {
  Tensor x = a.tensor(0);
  Reduction red = nn::parse_reduction(a.op(), a.str(3));
  Targets t = build_targets(a.op(), x, a.tensor(1), a.opt_tensor(2), a.int_arg(4), 0.0, false);
  Tensor x2 = t.squeeze ? x.unsqueeze(0) : x;
  return finish(-tsr::sum(t.q * x2, {1}), t, red);
}

void nll_bwd(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  const Tensor& x = c.input(0);
  Reduction red = nn::parse_reduction(c.op_name(), c.str(3));
  std::optional<Tensor> w;
  if (!c.is_none(2)) w = c.input(2);
  Targets t = build_targets(c.op_name(), x, c.input(1), w, c.int_arg(4), 0.0, false);
  Tensor dx = -(t.q * grad_per_elem(c.grad(0), t, red));
  c.set(0, t.squeeze ? dx.squeeze(0) : dx);
}

// Class indices over [N, C] (or [C]): one fused pass per row when the backend has the kernel.
std::optional<Tensor> ce_fused(CArgs& a, Reduction red) {
  Tensor x = a.tensor(0), t = a.tensor(1);
  auto w = a.opt_tensor(2);
  Targets v = build_targets(a.op(), x, t, w, a.int_arg(4), a.double_arg(5), true, true);
  if (v.probs || x.dim() > 2) return std::nullopt;
  Tensor x2 = v.squeeze ? x.unsqueeze(0) : x, t2 = (v.squeeze ? t.unsqueeze(0) : t).to(TSR_I64);
  std::vector<Tensor> r;
  try {
    static const tsr::Op op("_nn_cross_entropy_rows");
    r = tsr::call_multi(op, {x2, t2, nn::opt(w ? std::optional<Tensor>(w->to(x.dtype())) : std::nullopt), a.int_arg(4),
                             a.double_arg(5)});
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_UNIMPLEMENTED) throw;
    return std::nullopt;
  }
  switch (red) {
    case Reduction::None:
      return v.squeeze ? r[0].squeeze(0) : r[0];
    case Reduction::Sum:
      return tsr::sum(r[0]);
    default:
      return tsr::sum(r[0]) / tsr::sum(r[1]);
  }
}

Tensor ce_fwd(CArgs& a) {
  Tensor x = a.tensor(0);
  Reduction red = nn::parse_reduction(a.op(), a.str(3));
  if (auto fused = ce_fused(a, red)) return *fused;
  Targets t = build_targets(a.op(), x, a.tensor(1), a.opt_tensor(2), a.int_arg(4), a.double_arg(5), true);
  Tensor x2 = t.squeeze ? x.unsqueeze(0) : x;
  Tensor logp = tsr::log_softmax(x2, 1);
  return finish(-tsr::sum(t.q * logp, {1}), t, red);
}

// Input gradient for class indices over [N, C] / [C] in one pass per row, when the backend
// has the kernel.
bool ce_bwd_fused(GradCtx& c, Reduction red, const std::optional<Tensor>& w, double ls) {
  const Tensor &x = c.input(0), &t = c.input(1);
  if (is_floating(t.dtype()) || x.dim() > 2 || !c.needs(0)) return false;
  bool squeeze = x.dim() == 1;
  Tensor x2 = squeeze ? x.unsqueeze(0) : x, t2 = (squeeze ? t.unsqueeze(0) : t).to(TSR_I64);
  const int64_t N = x2.size(0);
  auto wc = w ? std::optional<Tensor>(w->to(x.dtype())) : std::nullopt;
  Tensor g = c.grad(0).to(x.dtype());
  Tensor gr;
  try {
    if (red == Reduction::None) {
      gr = g.reshape({N});
    } else {
      if (red == Reduction::Mean) {
        static const tsr::Op fwd("_nn_cross_entropy_rows");
        g = g / tsr::sum(tsr::call_multi(fwd, {x2, t2, nn::opt(wc), c.int_arg(4), ls})[1]);
      }
      gr = g.reshape({1}).expand({N});
    }
    static const tsr::Op op("_nn_cross_entropy_rows_backward");
    Tensor dx = tsr::call(op, {x2, t2, nn::opt(wc), gr, c.int_arg(4), ls});
    c.set(0, squeeze ? dx.squeeze(0) : dx);
    return true;
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_UNIMPLEMENTED) throw;
    return false;
  }
}

void ce_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor& x = c.input(0);
  Reduction red = nn::parse_reduction(c.op_name(), c.str(3));
  std::optional<Tensor> w;
  if (!c.is_none(2)) w = c.input(2);
  double ls = c.double_arg(5);
  if (ce_bwd_fused(c, red, w, ls)) return;
  Targets t = build_targets(c.op_name(), x, c.input(1), w, c.int_arg(4), ls, true);
  Tensor x2 = t.squeeze ? x.unsqueeze(0) : x;
  Tensor gi = grad_per_elem(c.grad(0), t, red);
  if (c.needs(0)) {
    Tensor dx = (tsr::softmax(x2, 1) * tsr::sum(t.q, {1}, true) - t.q) * gi;
    c.set(0, t.squeeze ? dx.squeeze(0) : dx);
  }
  if (t.probs && c.needs(1)) {
    Tensor dq = -tsr::log_softmax(x2, 1) * (1.0 - ls) * gi;
    if (w) dq = dq * w->to(x.dtype()).view(nn::channel_shape(x2.size(1), x2.dim()));
    c.set(1, t.squeeze ? dq.squeeze(0) : dq);
  }
}

}  // namespace

TSR_CORE_OPS(nn_ce) {
  v.push_back(
      nn::prim("nll_loss(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean', "
               "int ignore_index=-100) -> Tensor",
               composite<nll_fwd>, TSR_GRAD(nll_bwd)));
  v.push_back(
      nn::prim("cross_entropy(Tensor self, Tensor target, Tensor? weight=None, str reduction='mean', "
               "int ignore_index=-100, float label_smoothing=0.0) -> Tensor",
               composite<ce_fwd>, TSR_GRAD(ce_bwd)));
}

}  // namespace tsr::core
