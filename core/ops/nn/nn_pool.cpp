// Pooling: max_pool2d(_with_indices), avg_pool2d via im2col/col2im (windows gathered with
// -inf or 0 padding, gradients scattered back by the adjoint); adaptive_avg_pool2d as the
// separable linear map out = Ph @ x @ Pw^T with host-built averaging matrices.
#include <cmath>

#include "ops/nn/nn_conv_util.hpp"
#include "ops/nn/nn_kernel_op.hpp"

namespace tsr::core {
namespace {

using nn::Geo;
using tsr::Tensor;

struct PoolArgs {
  Tensor x;  // 4-D
  Geo g;
  int64_t N, C, H, W, OH, OW;
  bool unbatched;
};

int64_t pool_out(const char* op, int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil) {
  int64_t num = in + 2 * p - d * (k - 1) - 1;
  if (num < 0) return 0;
  int64_t out = (ceil ? (num + s - 1) / s : num / s) + 1;
  // The last window must start inside the input or the left padding.
  if (ceil && (out - 1) * s >= in + p) --out;
  (void)op;
  return out;
}

PoolArgs pool_args(const char* op, Tensor x, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                   std::vector<int64_t> d, bool ceil, bool is_max) {
  // avg_pool2d also averages integers (truncating, as PyTorch's CPU kernel does).
  if (is_max || x.dtype() == TSR_BOOL) nn::require_floating(op, "input", x);
  if (x.dim() != 3 && x.dim() != 4) nn::fail(op, "expected a 3-D (unbatched) or 4-D input, got " + nn::shp(x));
  PoolArgs a;
  a.unbatched = x.dim() == 3;
  if (a.unbatched) x = x.unsqueeze(0);
  if (s.empty()) s = k;
  a.g = nn::make_geo(op, k, s, p, d);
  for (int i = 0; i < 2; ++i) {
    int64_t kk = i ? a.g.kw : a.g.kh, pp = i ? a.g.pw : a.g.ph, dd = i ? a.g.dw : a.g.dh;
    int64_t limit = is_max ? ((kk - 1) * dd + 1) / 2 : kk / 2;
    if (pp > limit)
      nn::fail(op, "padding " + nn::shp(a.g.padding()) + " should be at most half of the effective kernel size " +
                       nn::shp(a.g.kernel()));
  }
  a.x = x;
  a.N = x.size(0);
  a.C = x.size(1);
  a.H = x.size(2);
  a.W = x.size(3);
  a.OH = pool_out(op, a.H, a.g.kh, a.g.sh, a.g.ph, a.g.dh, ceil);
  a.OW = pool_out(op, a.W, a.g.kw, a.g.sw, a.g.pw, a.g.dw, ceil);
  if (a.OH <= 0 || a.OW <= 0)
    nn::fail(op, "output size " + std::to_string(a.OH) + "x" + std::to_string(a.OW) + " is too small for input " +
                     nn::shp(x) + " with kernel " + nn::shp(a.g.kernel()));
  return a;
}

// [K, L]: the flat input position (ih * W + iw) each window tap reads, -1 in the padding.
Tensor tap_table(const PoolArgs& a, tsr::Device dev) {
  const int64_t K = a.g.kh * a.g.kw, L = a.OH * a.OW;
  std::vector<int64_t> t(static_cast<size_t>(K * L));
  for (int64_t ki = 0; ki < a.g.kh; ++ki)
    for (int64_t kj = 0; kj < a.g.kw; ++kj)
      for (int64_t oh = 0; oh < a.OH; ++oh)
        for (int64_t ow = 0; ow < a.OW; ++ow) {
          int64_t ih = oh * a.g.sh - a.g.ph + ki * a.g.dh, iw = ow * a.g.sw - a.g.pw + kj * a.g.dw;
          bool in = ih >= 0 && ih < a.H && iw >= 0 && iw < a.W;
          t[static_cast<size_t>((ki * a.g.kw + kj) * L + oh * a.OW + ow)] = in ? ih * a.W + iw : -1;
        }
  return tsr::from_vector(t, {K, L}).to(dev);
}

// _nn_max_pool2d(self [N, C, H, W], kernel_size, stride, padding, dilation, output_hw):
// (values, int64 indices into each H*W plane), both [N, C, OH, OW].
tsr_dtype_t max_pool_kernel_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* x = nn::ktensor(ctx, 0, 4);
  nn::kints(ctx, 1, 2, 1);
  nn::kints(ctx, 2, 2, 1);
  nn::kints(ctx, 3, 2, 0);
  nn::kints(ctx, 4, 2, 1);
  const int64_t* o = nn::kints(ctx, 5, 2, 0);
  std::vector<int64_t> s{x->sizes[0], x->sizes[1], o[0], o[1]};
  outs.push_back({s, x->dtype});
  outs.push_back({s, TSR_I64});
  return x->dtype;
}

// _nn_max_pool2d_backward(grad [N, C, OH, OW], indices like grad, input_hw): [N, C, H, W];
// indices outside the plane are skipped by the kernel.
tsr_dtype_t max_pool_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* g = nn::kfloat(ctx, 0, 4);
  core::Tensor* idx = nn::kindex(ctx, 1, 4);
  nn::krequire(ctx, std::equal(g->sizes, g->sizes + 4, idx->sizes),
               "indices " + shape_str(idx->sizes, 4) + " do not match grad " + shape_str(g->sizes, 4));
  const int64_t* hw = nn::kints(ctx, 2, 2, 0);
  outs.push_back({{g->sizes[0], g->sizes[1], hw[0], hw[1]}, g->dtype});
  return g->dtype;
}

std::vector<Tensor> max_pool_fwd(CArgs& c) {
  PoolArgs a = pool_args(c.op(), c.tensor(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.bool_arg(5), true);
  try {
    static const tsr::Op op("_nn_max_pool2d");
    auto r = tsr::call_multi(
        op, {a.x, a.g.kernel(), a.g.stride(), a.g.padding(), a.g.dilation(), std::vector<int64_t>{a.OH, a.OW}});
    if (a.unbatched) return {r[0].squeeze(0), r[1].squeeze(0)};
    return r;
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_UNIMPLEMENTED) throw;  // no direct kernel: windows through im2col
  }
  const int64_t K = a.g.kh * a.g.kw, L = a.OH * a.OW;
  Tensor cols = nn::im2col(a.x, a.g, a.OH, a.OW, -INFINITY).view({a.N, a.C, K, L});
  Tensor out = tsr::amax(cols, {2});
  Tensor kk = tsr::argmax(cols, 2, true);  // [N, C, 1, L]
  Tensor table = tap_table(a, a.x.device());
  Tensor sel = tsr::eq(kk, tsr::arange(K, TSR_I64, a.x.device()).view({K, 1}));
  Tensor idx = tsr::sum(tsr::where(sel, table, tsr::wrap_scalar(int64_t{0}, table.runtime())), {2});
  std::vector<int64_t> os = {a.N, a.C, a.OH, a.OW};
  out = out.reshape(os);
  idx = idx.reshape(os);
  if (a.unbatched) return {out.squeeze(0), idx.squeeze(0)};
  return {out, idx};
}

void max_pool_bwd(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  PoolArgs a = pool_args(c.op_name(), c.input(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.bool_arg(5), true);
  const int64_t K = a.g.kh * a.g.kw, L = a.OH * a.OW;
  try {
    static const tsr::Op op("_nn_max_pool2d_backward");
    Tensor dx = tsr::call(op, {c.grad(0).reshape({a.N, a.C, a.OH, a.OW}), c.output(1).reshape({a.N, a.C, a.OH, a.OW}),
                               std::vector<int64_t>{a.H, a.W}});
    c.set(0, a.unbatched ? dx.squeeze(0) : dx);
    return;
  } catch (const tsr::Error& e) {
    if (e.code() != TSR_UNIMPLEMENTED) throw;
  }
  Tensor idx = c.output(1).reshape({a.N, a.C, 1, L});
  Tensor g = c.grad(0).reshape({a.N, a.C, 1, L});
  Tensor sel = tsr::eq(idx, tap_table(a, a.x.device()));
  Tensor dcols = tsr::where(sel, g, tsr::wrap_scalar(0.0, g.runtime()).to(g.dtype())).reshape({a.N, a.C * K, L});
  Tensor dx = nn::col2im(dcols, a.H, a.W, a.g, a.OH, a.OW);
  c.set(0, a.unbatched ? dx.squeeze(0) : dx);
}

Tensor max_pool2d_fn(CArgs& c) {
  static const tsr::Op op("max_pool2d_with_indices");
  return tsr::call_multi(op, {c.tensor(0), c.ints(1), c.ints(2), c.ints(3), c.ints(4), c.bool_arg(5)})[0];
}

// Per output position: the divisor of avg_pool2d (PyTorch's rules for padding and ceil mode).
Tensor avg_divisor(const PoolArgs& a, bool include_pad, const std::optional<int64_t>& override_div, tsr_dtype_t dt) {
  std::vector<double> d(static_cast<size_t>(a.OH * a.OW));
  for (int64_t oh = 0; oh < a.OH; ++oh)
    for (int64_t ow = 0; ow < a.OW; ++ow) {
      double v;
      if (override_div) {
        v = static_cast<double>(*override_div);
      } else {
        int64_t h0 = oh * a.g.sh - a.g.ph, w0 = ow * a.g.sw - a.g.pw;
        int64_t h1 = std::min(h0 + a.g.kh, a.H + a.g.ph), w1 = std::min(w0 + a.g.kw, a.W + a.g.pw);
        int64_t pool = (h1 - h0) * (w1 - w0);
        h0 = std::max<int64_t>(h0, 0);
        w0 = std::max<int64_t>(w0, 0);
        h1 = std::min(h1, a.H);
        w1 = std::min(w1, a.W);
        v = static_cast<double>(include_pad ? pool : (h1 - h0) * (w1 - w0));
      }
      d[static_cast<size_t>(oh * a.OW + ow)] = v;
    }
  return tsr::from_vector(d, {a.OH, a.OW}).to(a.x.device(), dt);
}

PoolArgs avg_args(const char* op, const Tensor& x, const std::vector<int64_t>& k, const std::vector<int64_t>& s,
                  const std::vector<int64_t>& p, bool ceil, const std::optional<int64_t>& div) {
  if (div && *div == 0) nn::fail(op, "divisor_override must not be zero");
  return pool_args(op, x, k, s, p, {1, 1}, ceil, false);
}

// Integer avg_pool2d: window sums in int64 (exact, where im2col's kernels are float-only) over
// a strided view of the zero-padded input, divided with truncation toward zero as PyTorch's
// integer kernel does. The right and bottom pads reach the last ceil-mode window; the zeros past
// the declared padding add nothing, and avg_divisor counts only what PyTorch counts.
Tensor avg_pool_integer(const PoolArgs& a, bool include_pad, const std::optional<int64_t>& div) {
  const int64_t need_h = (a.OH - 1) * a.g.sh + a.g.kh, need_w = (a.OW - 1) * a.g.sw + a.g.kw;
  const int64_t bottom = std::max<int64_t>(0, need_h - a.H - a.g.ph),
                right = std::max<int64_t>(0, need_w - a.W - a.g.pw);
  Tensor xp = tsr::constant_pad_nd(a.x, {a.g.pw, right, a.g.ph, bottom}).contiguous();
  const int64_t HP = xp.size(2), WP = xp.size(3);
  Tensor win = xp.as_strided({a.N, a.C, a.OH, a.OW, a.g.kh, a.g.kw},
                             {a.C * HP * WP, HP * WP, a.g.sh * WP, a.g.sw, WP, 1}, xp.storage_offset());
  Tensor sums = tsr::sum(win, {4, 5}, false, TSR_I64);
  return tsr::div(sums, avg_divisor(a, include_pad, div, TSR_I64), "trunc").to(a.x.dtype());
}

Tensor avg_pool_fwd(CArgs& c) {
  PoolArgs a = avg_args(c.op(), c.tensor(0), c.ints(1), c.ints(2), c.ints(3), c.bool_arg(4), c.opt_int(6));
  Tensor y;
  if (is_floating(a.x.dtype())) {
    const int64_t K = a.g.kh * a.g.kw;
    Tensor cols = nn::im2col(a.x, a.g, a.OH, a.OW).view({a.N, a.C, K, a.OH, a.OW});
    y = tsr::sum(cols, {2}) / avg_divisor(a, c.bool_arg(5), c.opt_int(6), a.x.dtype());
  } else {
    y = avg_pool_integer(a, c.bool_arg(5), c.opt_int(6));
  }
  return a.unbatched ? y.squeeze(0) : y;
}

void avg_pool_bwd(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  std::optional<int64_t> div;
  if (!c.is_none(6)) div = c.int_arg(6);
  PoolArgs a = avg_args(c.op_name(), c.input(0), c.ints(1), c.ints(2), c.ints(3), c.bool_arg(4), div);
  const int64_t K = a.g.kh * a.g.kw, L = a.OH * a.OW;
  Tensor g = c.grad(0).reshape({a.N, a.C, a.OH, a.OW}) / avg_divisor(a, c.bool_arg(5), div, c.grad(0).dtype());
  Tensor dcols = g.reshape({a.N, a.C, 1, L}).expand({a.N, a.C, K, L}).reshape({a.N, a.C * K, L});
  Tensor dx = nn::col2im(dcols, a.H, a.W, a.g, a.OH, a.OW);
  c.set(0, a.unbatched ? dx.squeeze(0) : dx);
}

// ---- adaptive average pooling -------------------------------------------------------------------

// [out, in]: row i averages input [floor(i*in/out), ceil((i+1)*in/out)).
Tensor adaptive_matrix(int64_t in, int64_t out, const Tensor& like) {
  std::vector<double> m(static_cast<size_t>(in * out), 0.0);
  for (int64_t i = 0; i < out; ++i) {
    int64_t s = (i * in) / out, e = ((i + 1) * in + out - 1) / out;
    for (int64_t j = s; j < e; ++j) m[static_cast<size_t>(i * in + j)] = 1.0 / static_cast<double>(e - s);
  }
  return tsr::from_vector(m, {out, in}).to(like.device(), like.dtype());
}

std::vector<int64_t> adaptive_size(const char* op, const Tensor& x, const std::vector<int64_t>& os) {
  nn::require_floating(op, "input", x);
  if (x.dim() != 3 && x.dim() != 4) nn::fail(op, "expected a 3-D (unbatched) or 4-D input, got " + nn::shp(x));
  auto o = nn::expand_param(op, "output_size", os, 2);
  if (o[0] < 0 || o[1] < 0) nn::fail(op, "output_size must be non-negative, got " + nn::shp(o));
  for (int64_t d = 1; d < x.dim(); ++d)
    if (x.size(d) == 0) nn::fail(op, "expected non-empty spatial and channel dims, got input " + nn::shp(x));
  nn::check_separable_output(op, x, o);
  return o;
}

Tensor adaptive_avg_fwd(CArgs& c) {
  Tensor x = c.tensor(0);
  auto o = adaptive_size(c.op(), x, c.ints(1));
  Tensor ph = adaptive_matrix(x.size(-2), o[0], x), pw = adaptive_matrix(x.size(-1), o[1], x);
  return nn::matmul(nn::matmul(ph, x), pw.t());
}

void adaptive_avg_bwd(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  const Tensor& x = c.input(0);
  auto o = adaptive_size(c.op_name(), x, c.ints(1));
  Tensor ph = adaptive_matrix(x.size(-2), o[0], x), pw = adaptive_matrix(x.size(-1), o[1], x);
  c.set(0, nn::matmul(nn::matmul(ph.t(), c.grad(0)), pw));
}

}  // namespace

TSR_CORE_OPS(nn_pool) {
  v.push_back(
      {"_nn_max_pool2d(Tensor self, int[] kernel_size, int[] stride, int[] padding, int[] dilation, "
       "int[] output_hw) -> (Tensor, Tensor)",
       nn::kernel_op_impl<max_pool_kernel_shape>});
  v.push_back({"_nn_max_pool2d_backward(Tensor grad, Tensor indices, int[] input_hw) -> Tensor",
               nn::kernel_op_impl<max_pool_backward_shape>});
  v.push_back(
      nn::prim("max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2]? stride=None, int[2] padding=0, "
               "int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
               composite_multi<max_pool_fwd>, TSR_GRAD(max_pool_bwd), kSaveAll));
  v.push_back(
      composite_op("max_pool2d(Tensor self, int[2] kernel_size, int[2]? stride=None, int[2] padding=0, "
                   "int[2] dilation=1, bool ceil_mode=False) -> Tensor",
                   composite<max_pool2d_fn>));
  v.push_back(
      nn::prim("avg_pool2d(Tensor self, int[2] kernel_size, int[2]? stride=None, int[2] padding=0, "
               "bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
               composite<avg_pool_fwd>, TSR_GRAD(avg_pool_bwd)));
  v.push_back(nn::prim("adaptive_avg_pool2d(Tensor self, int[2] output_size) -> Tensor", composite<adaptive_avg_fwd>,
                       TSR_GRAD(adaptive_avg_bwd)));
}

}  // namespace tsr::core
