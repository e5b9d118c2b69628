// Normalization ops: layer_norm, rms_norm, group_norm, batch_norm. Primitives with closed-form
// backward formulas (the standard dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
// over the normalized elements) instead of differentiating through the statistics. f16/bf16
// inputs are normalized in float32 and rounded once at the end.
#include <cfloat>
#include <cmath>

#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

struct Stats {
  Tensor xhat, rstd;
};

// Normalizes xa (already in the accumulation dtype) over `dims`; rms: no centering.
Stats normalize(const Tensor& xa, const std::vector<int64_t>& dims, double eps, bool rms) {
  Stats s;
  if (rms) {
    s.rstd = tsr::rsqrt(tsr::mean(xa * xa, dims, true) + eps);
    s.xhat = xa * s.rstd;
    return s;
  }
  Tensor xc = xa - tsr::mean(xa, dims, true);
  s.rstd = tsr::rsqrt(tsr::mean(xc * xc, dims, true) + eps);
  s.xhat = xc * s.rstd;
  return s;
}

// dx from dxhat for a normalization over `dims`.
Tensor norm_input_grad(const Tensor& dxhat, const Stats& s, const std::vector<int64_t>& dims, bool rms) {
  Tensor proj = s.xhat * tsr::mean(dxhat * s.xhat, dims, true);
  if (rms) return s.rstd * (dxhat - proj);
  return s.rstd * (dxhat - tsr::mean(dxhat, dims, true) - proj);
}

Tensor sum_over(const Tensor& t, const std::vector<int64_t>& dims) { return dims.empty() ? t : tsr::sum(t, dims); }

// ---- layer_norm / rms_norm ----------------------------------------------------------------------

std::vector<int64_t> check_normalized_shape(const char* op, const Tensor& x, const std::vector<int64_t>& ns,
                                            const std::optional<Tensor>& w, const std::optional<Tensor>& b) {
  nn::require_floating(op, "input", x);
  auto xs = x.sizes();
  bool ok = ns.size() <= xs.size();
  for (size_t i = 0; ok && i < ns.size(); ++i) ok = xs[xs.size() - ns.size() + i] == ns[i];
  if (!ok) nn::fail(op, "input " + nn::shp(x) + " does not end with normalized_shape " + nn::shp(ns));
  if (w && w->sizes() != ns) nn::fail(op, "weight " + nn::shp(*w) + " must have normalized_shape " + nn::shp(ns));
  if (b && b->sizes() != ns) nn::fail(op, "bias " + nn::shp(*b) + " must have normalized_shape " + nn::shp(ns));
  return nn::range_dims(x.dim() - static_cast<int64_t>(ns.size()), x.dim());
}

double rms_eps(const std::optional<double>& eps, tsr_dtype_t dt) {
  if (eps) return *eps;
  switch (dt) {
    case TSR_F64:
      return DBL_EPSILON;
    case TSR_F16:
      return 0.0009765625;
    case TSR_BF16:
      return 0.0078125;
    default:
      return FLT_EPSILON;
  }
}

template <bool RMS>
Tensor ln_fwd(CArgs& a) {
  Tensor x = a.tensor(0);
  auto ns = a.ints(1);
  auto w = a.opt_tensor(2);
  std::optional<Tensor> b = RMS ? std::nullopt : a.opt_tensor(3);
  auto dims = check_normalized_shape(a.op(), x, ns, w, b);
  double eps = RMS ? rms_eps(a.opt_double(3), x.dtype()) : a.double_arg(4);
  if (dims.empty()) nn::fail(a.op(), "normalized_shape must not be empty");
  try {
    static const tsr::Op op("_nn_layer_norm");
    int64_t m = 1;
    for (int64_t s : ns) m *= s;
    auto cast = [&](const std::optional<Tensor>& t) {
      return t ? std::optional<Tensor>(t->to(x.dtype())) : std::nullopt;
    };
    return tsr::call(op, {x, nn::opt(cast(w)), nn::opt(cast(b)), m, eps, RMS});
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_UNIMPLEMENTED) throw;  // no fused kernel on this backend
  }
  tsr_dtype_t acc = nn::acc_dtype(x.dtype());
  Tensor y = normalize(x.to(acc), dims, eps, RMS).xhat;
  if (w) y = y * w->to(acc);
  if (b) y = y + b->to(acc);
  return y.to(x.dtype());
}

template <bool RMS>
void ln_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor& x = c.input(0);
  auto ns = c.ints(1);
  bool has_w = !c.is_none(2);
  double eps =
      RMS ? rms_eps(c.is_none(3) ? std::nullopt : std::optional<double>(c.double_arg(3)), x.dtype()) : c.double_arg(4);
  auto dims = nn::range_dims(x.dim() - static_cast<int64_t>(ns.size()), x.dim());
  auto batch = nn::range_dims(0, x.dim() - static_cast<int64_t>(ns.size()));
  try {
    static const tsr::Op op("_nn_layer_norm_backward");
    int64_t m = 1;
    for (int64_t s : ns) m *= s;
    std::optional<Tensor> w;
    if (has_w) w = c.input(2).to(x.dtype());
    auto r = tsr::call_multi(op, {x, nn::opt(w), c.grad(0).to(x.dtype()), m, eps, RMS});
    if (c.needs(0)) c.set(0, r[0]);
    if (has_w && c.needs(2)) c.set(2, r[1].reshape(ns));
    if (!RMS && !c.is_none(3) && c.needs(3)) c.set(3, r[2].reshape(ns));
    return;
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_UNIMPLEMENTED) throw;  // no fused kernel on this backend
  }
  tsr_dtype_t acc = nn::acc_dtype(x.dtype());
  Stats s = normalize(x.to(acc), dims, eps, RMS);
  Tensor g = c.grad(0).to(acc);
  if (c.needs(0)) c.set(0, norm_input_grad(has_w ? g * c.input(2).to(acc) : g, s, dims, RMS));
  if (has_w && c.needs(2)) c.set(2, sum_over(g * s.xhat, batch));
  if (!RMS && !c.is_none(3) && c.needs(3)) c.set(3, sum_over(g, batch));
}

// ---- group_norm ---------------------------------------------------------------------------------

void check_channels(const char* op, const Tensor& x, const std::optional<Tensor>& w, const std::optional<Tensor>& b) {
  nn::require_floating(op, "input", x);
  if (x.dim() < 2) nn::fail(op, "expected input of shape [N, C, *], got " + nn::shp(x));
  int64_t C = x.size(1);
  if (w && (w->dim() != 1 || w->size(0) != C))
    nn::fail(op, "weight " + nn::shp(*w) + " must have one element per channel (" + std::to_string(C) + ") of input " +
                     nn::shp(x));
  if (b && (b->dim() != 1 || b->size(0) != C))
    nn::fail(op, "bias " + nn::shp(*b) + " must have one element per channel (" + std::to_string(C) + ") of input " +
                     nn::shp(x));
}

Tensor gn_fwd(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t G = a.int_arg(1);
  auto w = a.opt_tensor(2), b = a.opt_tensor(3);
  check_channels(a.op(), x, w, b);
  int64_t N = x.size(0), C = x.size(1);
  if (G <= 0 || C % G != 0)
    nn::fail(a.op(), "num_groups " + std::to_string(G) + " must divide the " + std::to_string(C) +
                         " channels of input " + nn::shp(x));
  tsr_dtype_t acc = nn::acc_dtype(x.dtype());
  Tensor xg = x.to(acc).reshape({N, G, N == 0 ? 0 : x.numel() / (N * G)});
  Tensor y = normalize(xg, {2}, a.double_arg(4), false).xhat.reshape(x.sizes());
  auto cs = nn::channel_shape(C, x.dim());
  if (w) y = y * w->to(acc).view(cs);
  if (b) y = y + b->to(acc).view(cs);
  return y.to(x.dtype());
}

void gn_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor& x = c.input(0);
  int64_t G = c.int_arg(1), N = x.size(0), C = x.size(1);
  bool has_w = !c.is_none(2);
  tsr_dtype_t acc = nn::acc_dtype(x.dtype());
  std::vector<int64_t> gshape{N, G, N == 0 ? 0 : x.numel() / (N * G)};
  Stats s = normalize(x.to(acc).reshape(gshape), {2}, c.double_arg(4), false);
  Tensor g = c.grad(0).to(acc);
  auto cs = nn::channel_shape(C, x.dim());
  if (c.needs(0)) {
    Tensor dxhat = has_w ? g * c.input(2).to(acc).view(cs) : g;
    c.set(0, norm_input_grad(dxhat.reshape(gshape), s, {2}, false).reshape(x.sizes()));
  }
  std::vector<int64_t> not_c{0};
  for (int64_t d = 2; d < x.dim(); ++d) not_c.push_back(d);
  if (has_w && c.needs(2)) c.set(2, tsr::sum(g * s.xhat.reshape(x.sizes()), not_c));
  if (!c.is_none(3) && c.needs(3)) c.set(3, tsr::sum(g, not_c));
}

// ---- batch_norm ---------------------------------------------------------------------------------

std::vector<int64_t> bn_dims(const Tensor& x) {
  std::vector<int64_t> d{0};
  for (int64_t i = 2; i < x.dim(); ++i) d.push_back(i);
  return d;
}

// Running statistics: one element per channel of x.
void check_running_stats(const char* op, const Tensor& x, const std::optional<Tensor>& rm,
                         const std::optional<Tensor>& rv) {
  const int64_t C = x.size(1);
  for (const auto* r : {&rm, &rv})
    if (*r && ((*r)->dim() != 1 || (*r)->size(0) != C))
      nn::fail(op, std::string(r == &rm ? "running_mean " : "running_var ") + nn::shp(**r) +
                       " must have one element per channel (" + std::to_string(C) + ") of input " + nn::shp(x));
}

// (out, batch mean, biased batch variance); the statistics are outputs for the running update.
// The primitives check their operands as batch_norm does: op_find reaches them directly.
std::vector<Tensor> bn_train_fwd(CArgs& a) {
  Tensor x = a.tensor(0);
  auto w = a.opt_tensor(1), b = a.opt_tensor(2);
  check_channels(a.op(), x, w, b);
  auto dims = bn_dims(x);
  tsr_dtype_t acc = nn::acc_dtype(x.dtype());
  Tensor xa = x.to(acc);
  Tensor mu = tsr::mean(xa, dims, true);
  Tensor xc = xa - mu;
  Tensor var = tsr::mean(xc * xc, dims, true);
  Tensor y = xc * tsr::rsqrt(var + a.double_arg(3));
  auto cs = nn::channel_shape(x.size(1), x.dim());
  if (w) y = y * w->to(acc).view(cs);
  if (b) y = y + b->to(acc).view(cs);
  return {y.to(x.dtype()), mu.reshape({x.size(1)}), var.reshape({x.size(1)})};
}

void bn_train_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor& x = c.input(0);
  bool has_w = !c.is_none(1);
  auto dims = bn_dims(x);
  tsr_dtype_t acc = nn::acc_dtype(x.dtype());
  Stats s = normalize(x.to(acc), dims, c.double_arg(3), false);
  Tensor g = c.grad(0).to(acc);
  auto cs = nn::channel_shape(x.size(1), x.dim());
  if (c.needs(0)) c.set(0, norm_input_grad(has_w ? g * c.input(1).to(acc).view(cs) : g, s, dims, false));
  if (has_w && c.needs(1)) c.set(1, tsr::sum(g * s.xhat, dims));
  if (!c.is_none(2) && c.needs(2)) c.set(2, tsr::sum(g, dims));
}

// With given statistics (eval mode): an affine map per channel.
Tensor bn_eval_fwd(CArgs& a) {
  Tensor x = a.tensor(0);
  auto w = a.opt_tensor(1), b = a.opt_tensor(2);
  Tensor rm = a.tensor(3), rv = a.tensor(4);
  check_channels(a.op(), x, w, b);
  check_running_stats(a.op(), x, rm, rv);
  tsr_dtype_t acc = nn::acc_dtype(x.dtype());
  auto cs = nn::channel_shape(x.size(1), x.dim());
  Tensor y = (x.to(acc) - rm.to(acc).view(cs)) * tsr::rsqrt(rv.to(acc).view(cs) + a.double_arg(5));
  if (w) y = y * w->to(acc).view(cs);
  if (b) y = y + b->to(acc).view(cs);
  return y.to(x.dtype());
}

void bn_eval_bwd(GradCtx& c) {
  if (!c.grad(0).defined()) return;
  const Tensor& x = c.input(0);
  bool has_w = !c.is_none(1);
  tsr_dtype_t acc = nn::acc_dtype(x.dtype());
  auto cs = nn::channel_shape(x.size(1), x.dim());
  auto dims = bn_dims(x);
  Tensor rstd = tsr::rsqrt(c.input(4).to(acc).view(cs) + c.double_arg(5));
  Tensor g = c.grad(0).to(acc);
  if (c.needs(0)) c.set(0, has_w ? g * (c.input(1).to(acc).view(cs) * rstd) : g * rstd);
  Tensor xhat = (x.to(acc) - c.input(3).to(acc).view(cs)) * rstd;
  if (has_w && c.needs(1)) c.set(1, tsr::sum(g * xhat, dims));
  if (!c.is_none(2) && c.needs(2)) c.set(2, tsr::sum(g, dims));
}

// batch_norm: validates, picks the training or eval primitive, updates running statistics in
// place (outside autograd, as PyTorch: they are buffers, not parameters).
Tensor batch_norm_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  auto w = a.opt_tensor(1), b = a.opt_tensor(2), rm = a.opt_tensor(3), rv = a.opt_tensor(4);
  check_channels(a.op(), x, w, b);
  int64_t C = x.size(1);
  check_running_stats(a.op(), x, rm, rv);
  if (rm.has_value() != rv.has_value()) nn::fail(a.op(), "running_mean and running_var must be given together");
  bool training = a.bool_arg(5);
  double momentum = a.double_arg(6), eps = a.double_arg(7);
  if (!training) {
    if (!rm) nn::fail(a.op(), "running_mean and running_var are required in eval mode (training=False)");
    static const tsr::Op op("_batch_norm_eval");
    return tsr::call(op, {x, nn::opt(w), nn::opt(b), *rm, *rv, eps});
  }
  int64_t per_channel = C == 0 ? 0 : x.numel() / C;
  if (per_channel <= 1)
    nn::fail(a.op(), "expected more than 1 value per channel when training, got input " + nn::shp(x));
  static const tsr::Op op("_batch_norm_train");
  auto r = tsr::call_multi(op, {x, nn::opt(w), nn::opt(b), eps});
  if (rm) {
    tsr::NoGradGuard ng;
    double unbias = static_cast<double>(per_channel) / static_cast<double>(per_channel - 1);
    rm->copy_(*rm * (1.0 - momentum) + r[1].to(rm->dtype()) * momentum);
    rv->copy_(*rv * (1.0 - momentum) + r[2].to(rv->dtype()) * (momentum * unbias));
  }
  return r[0];
}

}  // namespace

TSR_CORE_OPS(nn_norm) {
  v.push_back(
      nn::prim("layer_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
               "float eps=1e-05) -> Tensor",
               composite<ln_fwd<false>>, TSR_GRAD(ln_bwd<false>)));
  v.push_back(nn::prim("rms_norm(Tensor input, int[] normalized_shape, Tensor? weight=None, float? eps=None) -> Tensor",
                       composite<ln_fwd<true>>, TSR_GRAD(ln_bwd<true>)));
  v.push_back(
      nn::prim("group_norm(Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
               "float eps=1e-05) -> Tensor",
               composite<gn_fwd>, TSR_GRAD(gn_bwd)));
  v.push_back(
      nn::prim("_batch_norm_train(Tensor input, Tensor? weight, Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
               composite_multi<bn_train_fwd>, TSR_GRAD(bn_train_bwd)));
  v.push_back(
      nn::prim("_batch_norm_eval(Tensor input, Tensor? weight, Tensor? bias, Tensor running_mean, "
               "Tensor running_var, float eps) -> Tensor",
               composite<bn_eval_fwd>, TSR_GRAD(bn_eval_bwd)));
  v.push_back(
      composite_op("batch_norm(Tensor input, Tensor? weight=None, Tensor? bias=None, Tensor? running_mean=None, "
                   "Tensor? running_var=None, bool training=False, float momentum=0.1, float eps=1e-05) -> Tensor",
                   composite<batch_norm_fn>));
}

}  // namespace tsr::core
