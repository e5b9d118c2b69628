// conv1d, conv2d, conv_transpose2d (stride, padding incl. 'same'/'valid', dilation, groups,
// output_padding, optional bias). conv2d and conv_transpose2d are primitives: im2col + batched
// GEMM per group, with backward formulas built from the same two pieces (col2im is im2col's
// adjoint); conv1d and the string-padding variants are composites over them.
// A backend with a direct convolution (cuDNN on cuda, oneDNN on cpu) registers kernels for the
// internal ops _nn_conv2d (and _nn_conv2d_bias, the bias fused) / _nn_conv2d_backward_input /
// _nn_conv2d_backward_weight; conv2d uses them when the tensors' device type has one for the
// dtype, and im2col + GEMM otherwise or when every kernel declines the problem (UNIMPLEMENTED,
// nothing written: see nn::declinable).
#include "autograd/engine.hpp"
#include "ops/nn/nn_conv_util.hpp"
#include "ops/nn/nn_kernel_op.hpp"

namespace tsr::core {
namespace {

using nn::Geo;
using tsr::Tensor;

// The geometry lists of the im2col family: kernel, dilation and stride positive, padding and
// the output grid non-negative, each 2 values.
struct GeoArgs {
  const int64_t *k, *d, *p, *s, *o;
};
GeoArgs geo_args(CallCtx& ctx, size_t k, size_t d, size_t p, size_t s, size_t o) {
  return {nn::kints(ctx, k, 2, 1), nn::kints(ctx, d, 2, 1), nn::kints(ctx, p, 2, 0), nn::kints(ctx, s, 2, 1),
          nn::kints(ctx, o, 2, 0)};
}

// _nn_im2col(self [N, C, H, W], kernel_size, dilation, padding, stride, output_hw, pad_value):
// [N, C*kh*kw, OH*OW]; taps outside the image read pad_value.
tsr_dtype_t im2col_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* x = nn::kfloat(ctx, 0, 4);
  GeoArgs g = geo_args(ctx, 1, 2, 3, 4, 5);
  outs.push_back({{x->sizes[0], nn::kmul(ctx, x->sizes[1], nn::kmul(ctx, g.k[0], g.k[1])), nn::kmul(ctx, g.o[0], g.o[1])},
                  x->dtype});
  return x->dtype;
}

// _nn_col2im(self [N, C*kh*kw, OH*OW], input_hw, kernel_size, dilation, padding, stride,
// output_hw): [N, C, H, W], overlapping taps summed.
tsr_dtype_t col2im_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* c = nn::kfloat(ctx, 0, 3);
  const int64_t* in = nn::kints(ctx, 1, 2, 0);
  GeoArgs g = geo_args(ctx, 2, 3, 4, 5, 6);
  int64_t K = nn::kmul(ctx, g.k[0], g.k[1]);
  nn::krequire(ctx, c->sizes[1] % K == 0 && c->sizes[2] == nn::kmul(ctx, g.o[0], g.o[1]),
               "columns " + shape_str(c->sizes, c->ndim) + " do not match kernel " + std::to_string(g.k[0]) + "x" +
                   std::to_string(g.k[1]) + " and output grid " + std::to_string(g.o[0]) + "x" + std::to_string(g.o[1]));
  outs.push_back({{c->sizes[0], c->sizes[1] / K, in[0], in[1]}, c->dtype});
  return c->dtype;
}

// Stride, padding, dilation (2 values each) and groups of the direct convolution ops.
struct ConvGeo {
  const int64_t *s, *p, *d;
  int64_t groups;
};
ConvGeo conv_geo(CallCtx& ctx, size_t first) {
  ConvGeo g{nn::kints(ctx, first, 2, 1), nn::kints(ctx, first + 1, 2, 0), nn::kints(ctx, first + 2, 2, 1),
            ctx.int_arg(first + 3)};
  nn::krequire(ctx, g.groups >= 1 && g.groups <= nn::kMaxGeometry,
               "groups must be positive, got " + std::to_string(g.groups));
  return g;
}

// Input channels C, weight [K, C/G, R, S]: C and K divisible by G.
void check_conv_channels(CallCtx& ctx, int64_t C, const core::Tensor* w, int64_t groups) {
  nn::krequire(ctx, C % groups == 0 && w->sizes[0] % groups == 0 && w->sizes[1] * groups == C,
               "weight " + shape_str(w->sizes, w->ndim) + " does not fit " + std::to_string(C) + " input channels in " +
                   std::to_string(groups) + " groups");
}

// _nn_conv2d(input [N, C, H, W], weight [K, C/G, R, S], stride, padding, dilation, groups):
// [N, K, P, Q]. With `geo` 3, _nn_conv2d_bias(input, weight, bias [K], stride, ...).
template <int GEO>
tsr_dtype_t conv2d_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* x = nn::kfloat(ctx, 0, 4);
  core::Tensor* w = nn::kfloat(ctx, 1, 4, x);
  if (GEO == 3) {
    core::Tensor* b = nn::kfloat(ctx, 2, 1, x);
    nn::krequire(ctx, b->sizes[0] == w->sizes[0],
                 "bias " + shape_str(b->sizes, b->ndim) + " needs one element per output channel of weight " +
                     shape_str(w->sizes, w->ndim));
  }
  ConvGeo g = conv_geo(ctx, GEO);
  check_conv_channels(ctx, x->sizes[1], w, g.groups);
  int64_t o[2];
  for (int i = 0; i < 2; ++i) {
    int64_t span = nn::kmul(ctx, g.d[i], w->sizes[2 + i] - 1) + 1;
    int64_t room = x->sizes[2 + i] + 2 * g.p[i] - span;  // geometry values are below 2^31
    nn::krequire(ctx, room >= 0, "input " + shape_str(x->sizes, x->ndim) + " is smaller than the kernel " +
                                     shape_str(w->sizes, w->ndim) + " with its dilation and padding");
    o[i] = room / g.s[i] + 1;
  }
  outs.push_back({{x->sizes[0], w->sizes[0], o[0], o[1]}, x->dtype});
  return x->dtype;
}
// _nn_conv2d_backward_input(grad [N, K, P, Q], weight [K, C/G, R, S], input_hw, ...): [N, C, H, W].
tsr_dtype_t conv2d_bwd_input_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* g = nn::kfloat(ctx, 0, 4);
  core::Tensor* w = nn::kfloat(ctx, 1, 4, g);
  const int64_t* hw = nn::kints(ctx, 2, 2, 0);
  ConvGeo geo = conv_geo(ctx, 3);
  nn::krequire(ctx, g->sizes[1] == w->sizes[0] && w->sizes[0] % geo.groups == 0,
               "grad " + shape_str(g->sizes, g->ndim) + " does not match weight " + shape_str(w->sizes, w->ndim));
  outs.push_back({{g->sizes[0], nn::kmul(ctx, w->sizes[1], geo.groups), hw[0], hw[1]}, g->dtype});
  return g->dtype;
}
// _nn_conv2d_backward_weight(grad [N, K, P, Q], input [N, C, H, W], kernel_hw, ...): [K, C/G, R, S].
tsr_dtype_t conv2d_bwd_weight_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* g = nn::kfloat(ctx, 0, 4);
  core::Tensor* x = nn::kfloat(ctx, 1, 4, g);
  const int64_t* hw = nn::kints(ctx, 2, 2, 1);
  ConvGeo geo = conv_geo(ctx, 3);
  nn::krequire(ctx, g->sizes[0] == x->sizes[0] && x->sizes[1] % geo.groups == 0 && g->sizes[1] % geo.groups == 0,
               "grad " + shape_str(g->sizes, g->ndim) + " does not match input " + shape_str(x->sizes, x->ndim) +
                   " in " + std::to_string(geo.groups) + " groups");
  outs.push_back({{g->sizes[1], x->sizes[1] / geo.groups, hw[0], hw[1]}, g->dtype});
  return g->dtype;
}

struct ConvArgs {
  Tensor x, w;
  std::optional<Tensor> b;
  Geo g;
  int64_t groups, N, Cin, Cout, H, W, OH, OW;
  bool unbatched;
};

// Shared validation; transpose: weight is [Cin, Cout/groups, kh, kw].
ConvArgs conv_args(const char* op, Tensor x, Tensor w, std::optional<Tensor> b, const std::vector<int64_t>& stride,
                   const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups,
                   bool transpose, std::vector<int64_t> out_pad = {0, 0}) {
  ConvArgs c;
  nn::require_floating(op, "input", x);
  if (w.dim() != 4) nn::fail(op, "expected a 4-D weight, got " + nn::shp(w));
  if (x.dim() != 3 && x.dim() != 4) nn::fail(op, "expected a 3-D (unbatched) or 4-D input, got " + nn::shp(x));
  if (x.dtype() != w.dtype())
    nn::fail(op, std::string("input ") + dtype_name(x.dtype()) + " and weight " + dtype_name(w.dtype()) +
                     " must have the same dtype");
  c.unbatched = x.dim() == 3;
  if (c.unbatched) x = x.unsqueeze(0);
  if (groups <= 0) nn::fail(op, "groups must be positive, got " + std::to_string(groups));
  c.g = nn::make_geo(op, {w.size(2), w.size(3)}, stride, padding, dilation);
  c.N = x.size(0);
  c.Cin = x.size(1);
  c.H = x.size(2);
  c.W = x.size(3);
  c.groups = groups;
  if (!transpose) {
    c.Cout = w.size(0);
    if (w.size(1) * groups != c.Cin || c.Cout % groups != 0)
      nn::fail(op, "input " + nn::shp(x) + " with groups=" + std::to_string(groups) + " expects weight [Cout, " +
                       std::to_string(c.Cin / groups) + ", kh, kw] with Cout divisible by groups, got weight " +
                       nn::shp(w));
    int64_t eh = c.g.dh * (c.g.kh - 1) + 1, ew = c.g.dw * (c.g.kw - 1) + 1;
    if (eh > c.H + 2 * c.g.ph || ew > c.W + 2 * c.g.pw)
      nn::fail(op, "kernel " + nn::shp(w) + " (dilated " + std::to_string(eh) + "x" + std::to_string(ew) +
                       ") is larger than the padded input " + nn::shp(x));
    c.OH = (c.H + 2 * c.g.ph - eh) / c.g.sh + 1;
    c.OW = (c.W + 2 * c.g.pw - ew) / c.g.sw + 1;
  } else {
    if (w.size(0) != c.Cin || c.Cin % groups != 0)
      nn::fail(op, "input " + nn::shp(x) + " with groups=" + std::to_string(groups) + " expects weight [" +
                       std::to_string(c.Cin) + ", Cout/groups, kh, kw], got weight " + nn::shp(w));
    c.Cout = w.size(1) * groups;
    out_pad = nn::expand_param(op, "output_padding", out_pad, 2);
    if (out_pad[0] < 0 || out_pad[1] < 0 || out_pad[0] >= std::max(c.g.sh, c.g.dh) ||
        out_pad[1] >= std::max(c.g.sw, c.g.dw))
      nn::fail(op, "output_padding " + nn::shp(out_pad) + " must be smaller than stride or dilation");
    c.OH = (c.H - 1) * c.g.sh - 2 * c.g.ph + c.g.dh * (c.g.kh - 1) + out_pad[0] + 1;
    c.OW = (c.W - 1) * c.g.sw - 2 * c.g.pw + c.g.dw * (c.g.kw - 1) + out_pad[1] + 1;
  }
  if (c.OH <= 0 || c.OW <= 0)
    nn::fail(op, "computed output size " + std::to_string(c.OH) + "x" + std::to_string(c.OW) +
                     " is too small for input " + nn::shp(x) + " and weight " + nn::shp(w));
  if (b) {
    if (b->dim() != 1 || b->size(0) != c.Cout)
      nn::fail(op,
               "bias " + nn::shp(*b) + " must have one element per output channel (" + std::to_string(c.Cout) + ")");
    if (b->dtype() != x.dtype()) nn::fail(op, "bias dtype must match the input's");
  }
  c.x = x;
  c.w = w;
  c.b = b;
  return c;
}

Tensor add_bias(Tensor y, const std::optional<Tensor>& b, int64_t cout) { return b ? y + b->view({1, cout, 1, 1}) : y; }

// ---- conv2d -------------------------------------------------------------------------------------

Tensor conv2d_fwd(CArgs& a) {
  ConvArgs c = conv_args(a.op(), a.tensor(0), a.tensor(1), a.opt_tensor(2), a.ints(3), a.ints(4), a.ints(5),
                         a.int_arg(6), false);
  const int64_t G = c.groups, K = c.g.kh * c.g.kw, L = c.OH * c.OW;
  static const tsr::Op direct_bias("_nn_conv2d_bias");
  if (c.b && nn::has_device_kernel(direct_bias, c.x, c.x.dtype())) {  // the bias fused into the kernel
    const Tensor b = c.b->contiguous();
    if (std::optional<Tensor> y = nn::declinable(
            [&] { return tsr::call(direct_bias, {c.x, c.w, b, c.g.stride(), c.g.padding(), c.g.dilation(), G}); }))
      return c.unbatched ? y->squeeze(0) : *y;
  }
  static const tsr::Op direct("_nn_conv2d");
  if (nn::has_device_kernel(direct, c.x, c.x.dtype())) {  // a direct convolution kernel (cuDNN, oneDNN)
    if (std::optional<Tensor> y = nn::declinable(
            [&] { return tsr::call(direct, {c.x, c.w, c.g.stride(), c.g.padding(), c.g.dilation(), G}); })) {
      Tensor yb = add_bias(*y, c.b, c.Cout);
      return c.unbatched ? yb.squeeze(0) : yb;
    }
  }
  Tensor cols = nn::im2col(c.x, c.g, c.OH, c.OW).view({c.N, G, c.Cin / G * K, L});
  Tensor wm = c.w.reshape({G, c.Cout / G, c.Cin / G * K});
  Tensor y = add_bias(nn::matmul(wm, cols).reshape({c.N, c.Cout, c.OH, c.OW}), c.b, c.Cout);
  return c.unbatched ? y.squeeze(0) : y;
}

void conv2d_bwd(GradCtx& ctx) {
  if (!ctx.grad(0).defined()) return;
  std::optional<Tensor> b;
  if (!ctx.is_none(2)) b = ctx.input(2);
  ConvArgs c = conv_args(ctx.op_name(), ctx.input(0), ctx.input(1), b, ctx.ints(3), ctx.ints(4), ctx.ints(5),
                         ctx.int_arg(6), false);
  const int64_t G = c.groups, K = c.g.kh * c.g.kw, L = c.OH * c.OW;
  bool direct_x = false, direct_w = false;
  Tensor g4 = ctx.grad(0);
  if (c.unbatched) g4 = g4.unsqueeze(0);
  // The direct backward kernels have no backward of their own: under create_graph (grad mode on
  // while the backward runs) the differentiable im2col + GEMM formulation is used instead.
  static const tsr::Op direct_x_op("_nn_conv2d_backward_input");
  static const tsr::Op direct_w_op("_nn_conv2d_backward_weight");
  const bool may_go_direct = !core::grad_mode();
  if (ctx.needs(0) && may_go_direct && nn::has_device_kernel(direct_x_op, g4, g4.dtype())) {
    if (std::optional<Tensor> dx = nn::declinable([&] {
          return tsr::call(direct_x_op, {g4, c.w, std::vector<int64_t>{c.H, c.W}, c.g.stride(), c.g.padding(),
                                         c.g.dilation(), G});
        })) {
      ctx.set(0, c.unbatched ? dx->squeeze(0) : *dx);
      direct_x = true;
    }
  }
  if (ctx.needs(1) && may_go_direct && nn::has_device_kernel(direct_w_op, g4, g4.dtype())) {
    if (std::optional<Tensor> dw = nn::declinable([&] {
          return tsr::call(direct_w_op, {g4, c.x, std::vector<int64_t>{c.g.kh, c.g.kw}, c.g.stride(), c.g.padding(),
                                         c.g.dilation(), G});
        })) {
      ctx.set(1, *dw);
      direct_w = true;
    }
  }
  Tensor g = ctx.grad(0).reshape({c.N, G, c.Cout / G, L});
  Tensor wm = c.w.reshape({G, c.Cout / G, c.Cin / G * K});
  if (ctx.needs(0) && !direct_x) {
    Tensor dcols = nn::matmul(wm.transpose(1, 2), g).reshape({c.N, c.Cin * K, L});
    Tensor dx = nn::col2im(dcols, c.H, c.W, c.g, c.OH, c.OW);
    ctx.set(0, c.unbatched ? dx.squeeze(0) : dx);
  }
  if (ctx.needs(1) && !direct_w) {
    Tensor cols = nn::im2col(c.x, c.g, c.OH, c.OW).view({c.N, G, c.Cin / G * K, L});
    ctx.set(1, tsr::sum(nn::matmul(g, cols.transpose(2, 3)), {0}).reshape(c.w.sizes()));
  }
  if (b && ctx.needs(2)) ctx.set(2, tsr::sum(ctx.grad(0).reshape({c.N, c.Cout, L}), {0, 2}));
}

// ---- conv_transpose2d ---------------------------------------------------------------------------

Tensor convt_fwd(CArgs& a) {
  ConvArgs c = conv_args(a.op(), a.tensor(0), a.tensor(1), a.opt_tensor(2), a.ints(3), a.ints(4), a.ints(7),
                         a.int_arg(6), true, a.ints(5));
  const int64_t G = c.groups, K = c.g.kh * c.g.kw;
  Tensor xg = c.x.reshape({c.N, G, c.Cin / G, c.H * c.W});
  Tensor wt = c.w.reshape({G, c.Cin / G, c.Cout / G * K}).transpose(1, 2);
  Tensor cols = nn::matmul(wt, xg).reshape({c.N, c.Cout * K, c.H * c.W});
  Tensor y = add_bias(nn::col2im(cols, c.OH, c.OW, c.g, c.H, c.W), c.b, c.Cout);
  return c.unbatched ? y.squeeze(0) : y;
}

void convt_bwd(GradCtx& ctx) {
  if (!ctx.grad(0).defined()) return;
  std::optional<Tensor> b;
  if (!ctx.is_none(2)) b = ctx.input(2);
  ConvArgs c = conv_args(ctx.op_name(), ctx.input(0), ctx.input(1), b, ctx.ints(3), ctx.ints(4), ctx.ints(7),
                         ctx.int_arg(6), true, ctx.ints(5));
  const int64_t G = c.groups, K = c.g.kh * c.g.kw;
  Tensor g = ctx.grad(0);
  if (c.unbatched) g = g.unsqueeze(0);
  Tensor dcols = nn::im2col(g, c.g, c.H, c.W).view({c.N, G, c.Cout / G * K, c.H * c.W});
  if (ctx.needs(0)) {
    Tensor wm = c.w.reshape({G, c.Cin / G, c.Cout / G * K});
    Tensor dx = nn::matmul(wm, dcols).reshape({c.N, c.Cin, c.H, c.W});
    ctx.set(0, c.unbatched ? dx.squeeze(0) : dx);
  }
  if (ctx.needs(1)) {
    Tensor xg = c.x.reshape({c.N, G, c.Cin / G, c.H * c.W});
    ctx.set(1, tsr::sum(nn::matmul(xg, dcols.transpose(2, 3)), {0}).reshape(c.w.sizes()));
  }
  if (b && ctx.needs(2)) ctx.set(2, tsr::sum(g.reshape({c.N, c.Cout, c.OH * c.OW}), {0, 2}));
}

// ---- composites: conv1d, string padding ---------------------------------------------------------

Tensor conv2d_call(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b, std::vector<int64_t> s,
                   std::vector<int64_t> p, std::vector<int64_t> d, int64_t groups) {
  static const tsr::Op op("conv2d");
  return tsr::call(op, {x, w, nn::opt(b), std::move(s), std::move(p), std::move(d), groups});
}

// conv1d on [N, C, L] (or [C, L]) as conv2d over [N, C, 1, L].
Tensor conv1d_impl(const char* op, Tensor x, Tensor w, const std::optional<Tensor>& b, int64_t s, int64_t p, int64_t d,
                   int64_t groups) {
  if (x.dim() != 2 && x.dim() != 3) nn::fail(op, "expected a 2-D (unbatched) or 3-D input, got " + nn::shp(x));
  if (w.dim() != 3) nn::fail(op, "expected a 3-D weight [Cout, Cin/groups, k], got " + nn::shp(w));
  bool unbatched = x.dim() == 2;
  if (unbatched) x = x.unsqueeze(0);
  Tensor y = conv2d_call(x.unsqueeze(2), w.unsqueeze(2), b, {1, s}, {0, p}, {1, d}, groups).squeeze(2);
  return unbatched ? y.squeeze(0) : y;
}

int64_t single(const char* op, const char* what, const std::vector<int64_t>& v) {
  return nn::expand_param(op, what, v, 1)[0];
}

Tensor conv1d_fn(CArgs& a) {
  return conv1d_impl(a.op(), a.tensor(0), a.tensor(1), a.opt_tensor(2), single(a.op(), "stride", a.ints(3)),
                     single(a.op(), "padding", a.ints(4)), single(a.op(), "dilation", a.ints(5)), a.int_arg(6));
}

// 'valid' = no padding; 'same' (stride 1 only): total padding d*(k-1) per dim, the odd extra on
// the right as PyTorch. Padding symmetrically by the larger half and dropping the first output
// row/column gives exactly that without a pad op.
template <int DIMS>
Tensor conv_str_padding_fn(CArgs& a) {
  Tensor x = a.tensor(0), w = a.tensor(1);
  auto b = a.opt_tensor(2);
  std::string mode = a.str(4);
  auto s = nn::expand_param(a.op(), "stride", a.ints(3), DIMS);
  auto d = nn::expand_param(a.op(), "dilation", a.ints(5), DIMS);
  int64_t groups = a.int_arg(6);
  if (w.dim() != DIMS + 2) nn::fail(a.op(), "expected a " + std::to_string(DIMS + 2) + "-D weight, got " + nn::shp(w));
  std::vector<int64_t> pad(DIMS, 0), extra(DIMS, 0);
  if (mode == "same") {
    for (int i = 0; i < DIMS; ++i)
      if (s[static_cast<size_t>(i)] != 1)
        nn::fail(a.op(), "padding='same' is not supported for strided convolutions (stride " + nn::shp(s) + ")");
    for (int i = 0; i < DIMS; ++i) {
      int64_t total = d[static_cast<size_t>(i)] * (w.size(2 + i) - 1);
      pad[static_cast<size_t>(i)] = (total + 1) / 2;
      extra[static_cast<size_t>(i)] = total % 2;
    }
  } else if (mode != "valid") {
    nn::fail(a.op(), "padding must be 'same' or 'valid', got '" + mode + "'");
  }
  Tensor y =
      DIMS == 1 ? conv1d_impl(a.op(), x, w, b, s[0], pad[0], d[0], groups) : conv2d_call(x, w, b, s, pad, d, groups);
  for (int i = 0; i < DIMS; ++i) {
    if (!extra[static_cast<size_t>(i)]) continue;
    int64_t dim = y.dim() - DIMS + i;
    y = y.slice(dim, 1, y.size(dim));
  }
  return y;
}

}  // namespace

TSR_CORE_OPS(nn_conv) {
  v.push_back(
      {"_nn_im2col(Tensor self, int[] kernel_size, int[] dilation, int[] padding, int[] stride, "
       "int[] output_hw, float pad_value=0.0) -> Tensor",
       nn::kernel_op_impl<im2col_shape>});
  v.push_back(
      {"_nn_col2im(Tensor self, int[] input_hw, int[] kernel_size, int[] dilation, int[] padding, "
       "int[] stride, int[] output_hw) -> Tensor",
       nn::kernel_op_impl<col2im_shape>});
  // Direct convolution kernels (cuDNN on cuda); conv2d falls back to im2col without one.
  v.push_back(
      {"_nn_conv2d(Tensor self, Tensor weight, int[] stride, int[] padding, int[] dilation, int groups) -> Tensor",
       nn::kernel_op_impl<conv2d_shape<2>>});
  // The forward with the bias added by the kernel (oneDNN on cpu), saving a pass over the output.
  v.push_back(
      {"_nn_conv2d_bias(Tensor self, Tensor weight, Tensor bias, int[] stride, int[] padding, int[] dilation, "
       "int groups) -> Tensor",
       nn::kernel_op_impl<conv2d_shape<3>>});
  v.push_back(
      {"_nn_conv2d_backward_input(Tensor grad, Tensor weight, int[] input_hw, int[] stride, int[] padding, "
       "int[] dilation, int groups) -> Tensor",
       nn::kernel_op_impl<conv2d_bwd_input_shape>});
  v.push_back(
      {"_nn_conv2d_backward_weight(Tensor grad, Tensor self, int[] kernel_hw, int[] stride, int[] padding, "
       "int[] dilation, int groups) -> Tensor",
       nn::kernel_op_impl<conv2d_bwd_weight_shape>});
  v.push_back(
      nn::prim("conv2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, int[2] padding=0, "
               "int[2] dilation=1, int groups=1) -> Tensor",
               composite<conv2d_fwd>, TSR_GRAD(conv2d_bwd)));
  v.push_back(
      nn::prim("conv_transpose2d(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
               "int[2] padding=0, int[2] output_padding=0, int groups=1, int[2] dilation=1) -> Tensor",
               composite<convt_fwd>, TSR_GRAD(convt_bwd)));
  v.push_back(
      composite_op("conv1d(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, int[1] padding=0, "
                   "int[1] dilation=1, int groups=1) -> Tensor",
                   composite<conv1d_fn>));
  v.push_back(
      composite_op("conv1d_padding(Tensor input, Tensor weight, Tensor? bias=None, int[1] stride=1, "
                   "str padding='valid', int[1] dilation=1, int groups=1) -> Tensor",
                   composite<conv_str_padding_fn<1>>));
  v.push_back(
      composite_op("conv2d_padding(Tensor input, Tensor weight, Tensor? bias=None, int[2] stride=1, "
                   "str padding='valid', int[2] dilation=1, int groups=1) -> Tensor",
                   composite<conv_str_padding_fn<2>>));
}

}  // namespace tsr::core
