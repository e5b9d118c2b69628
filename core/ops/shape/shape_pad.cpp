// Shape family, triangles, diagonals and padding: tril/triu (kernel), diagonal (a strided view),
// diag_embed (primitive: zeros plus one copy into the diagonal view, so no kernel), diag,
// constant_pad_nd (primitive: fill plus one copy into the interior) and pad (constant goes to
// constant_pad_nd; reflect/replicate/circular are cat of slices, flipped or expanded).
#include <algorithm>

#include "ops/shape/shape_util.hpp"

namespace tsr::core {
namespace {

using namespace shape_ops;
using tsr::Tensor;  // NOLINT: SDK tensors throughout this file

// Kernel contract (tril, triu): one input view (any strides, >= 2-D), one dense output of the
// same shape and dtype; args[1] INT diagonal. Keeps elements with col - row <= diagonal (tril) or
// >= diagonal (triu), writes zero bytes elsewhere.
Tensor tri_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  if (x.dim() < 2) a.fail(TSR_INVALID_ARGUMENT, "input tensor must have at least 2 dimensions, got " + shp(x));
  Tensor out = new_empty(a, x.sizes(), x.dtype(), x.device());
  tsr_value_t args[2];
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = x.get();
  args[1].tag = TSR_VALUE_INT;
  // Beyond +-(rows + cols) every diagonal selects the same: clamping keeps kernels' index
  // arithmetic from overflowing.
  int64_t lim = x.size(-1) + x.size(-2) + 1;
  args[1].u.i = std::min(std::max(a.int_arg(1), -lim), lim);
  launch_kernel(a, x, out, args, 2);
  return out;
}

void tril_backward(GradCtx& g) {
  if (g.needs(0) && g.grad(0).defined()) g.set(0, tsr::tril(g.grad(0), g.int_arg(1)));
}
void triu_backward(GradCtx& g) {
  if (g.needs(0) && g.grad(0).defined()) g.set(0, tsr::triu(g.grad(0), g.int_arg(1)));
}

std::pair<int64_t, int64_t> diag_dims(const CArgs& a, int64_t d1, int64_t d2, int64_t nd) {
  int64_t w1 = wrap(a, d1, nd), w2 = wrap(a, d2, nd);
  if (w1 == w2)
    a.fail(TSR_INVALID_ARGUMENT,
           "diagonal dimensions cannot be identical " + std::to_string(d1) + ", " + std::to_string(d2));
  return {w1, w2};
}

Tensor diagonal_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  if (x.dim() < 2) a.fail(TSR_INVALID_ARGUMENT, "input must have at least 2 dimensions, got " + shp(x));
  auto [d1, d2] = diag_dims(a, a.int_arg(2), a.int_arg(3), x.dim());
  return diagonal_view(x, a.int_arg(1), d1, d2);
}

Tensor diag_embed_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  if (x.dim() < 1) a.fail(TSR_INVALID_ARGUMENT, "input must have at least 1 dimension, got " + shp(x));
  int64_t nd = x.dim() + 1, offset = a.int_arg(1);
  auto [d1, d2] = diag_dims(a, a.int_arg(2), a.int_arg(3), nd);
  std::vector<int64_t> in = x.sizes();
  int64_t n = 0;
  if (offset == INT64_MIN || !checked_add(in.back(), offset < 0 ? -offset : offset, &n))
    a.fail(TSR_INVALID_ARGUMENT, "offset " + std::to_string(offset) + " overflows the size of input " + shp(x));
  in.pop_back();
  std::vector<int64_t> out_sizes;
  size_t k = 0;
  for (int64_t d = 0; d < nd; ++d) out_sizes.push_back(d == d1 || d == d2 ? n : in[k++]);
  Tensor out = new_full(a, out_sizes, x.dtype(), x.device(), tsr::Arg(int64_t{0}));
  Tensor diag = diagonal_view(out, offset, d1, d2);
  if (diag.numel() > 0) diag.copy_(x);
  return out;
}

void diag_embed_backward(GradCtx& g) {
  if (!g.needs(0) || !g.grad(0).defined()) return;
  g.set(0, tsr::diagonal(g.grad(0), g.int_arg(1), g.int_arg(2), g.int_arg(3)));
}

Tensor diag_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t k = a.int_arg(1);
  if (x.dim() == 1) return tsr::diag_embed(x, k, 0, 1);
  if (x.dim() == 2) return tsr::diagonal(x, k, 0, 1).clone();
  a.fail(TSR_INVALID_ARGUMENT, "expected a 1-D or 2-D tensor, got " + shp(x));
}

// Checks the pad list against the input and returns the padded sizes.
std::vector<int64_t> padded_sizes(const CArgs& a, const Tensor& x, const std::vector<int64_t>& pad) {
  int64_t nd = x.dim();
  if (pad.size() % 2 != 0) a.fail(TSR_INVALID_ARGUMENT, "padding length must be divisible by 2, got " + shp(pad));
  if (static_cast<int64_t>(pad.size() / 2) > nd)
    a.fail(TSR_INVALID_ARGUMENT, "padding length " + std::to_string(pad.size()) + " is too large for input " + shp(x) +
                                     " (at most twice its " + std::to_string(nd) + " dims)");
  std::vector<int64_t> s = x.sizes();
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    size_t d = static_cast<size_t>(nd) - 1 - i;
    int64_t n = s[d] + pad[2 * i] + pad[2 * i + 1];
    if (n < 0)
      a.fail(TSR_INVALID_ARGUMENT, "the input size " + std::to_string(s[d]) + ", plus negative padding " +
                                       std::to_string(pad[2 * i]) + " and " + std::to_string(pad[2 * i + 1]) +
                                       " resulted in a negative output size, which is invalid; check dimension " +
                                       std::to_string(d) + " of input " + shp(x));
    s[d] = n;
  }
  return s;
}

Tensor constant_pad_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  std::vector<int64_t> pad = a.ints(1);
  std::vector<int64_t> out_sizes = padded_sizes(a, x, pad);
  Tensor out = new_full(a, out_sizes, x.dtype(), x.device(), a.scalar(2));
  if (out.numel() == 0) return out;
  // Positive pads move the interior inside out; negative pads crop the input.
  Tensor src = x, dst = out;
  int64_t nd = x.dim();
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = nd - 1 - static_cast<int64_t>(i), l = pad[2 * i], r = pad[2 * i + 1];
    int64_t in_start = std::max<int64_t>(-l, 0), in_end = x.size(d) - std::max<int64_t>(-r, 0);
    int64_t len = std::max<int64_t>(in_end - in_start, 0);
    src = src.narrow(d, std::min(in_start, x.size(d)), len);
    dst = dst.narrow(d, std::max<int64_t>(l, 0), len);
  }
  if (src.numel() > 0) dst.copy_(src);
  return out;
}

void constant_pad_backward(GradCtx& g) {
  if (!g.needs(0) || !g.grad(0).defined()) return;
  std::vector<int64_t> pad = g.ints(1);
  for (int64_t& p : pad) p = -p;
  g.set(0, tsr::constant_pad_nd(g.grad(0), pad, 0));
}

// One dim of a non-constant pad, positive parts only (negative parts are cropped afterwards, so
// reflections stay anchored at the original edges).
Tensor pad_dim(const CArgs& a, const Tensor& x, int64_t d, int64_t l, int64_t r, const std::string& mode) {
  int64_t n = x.size(d);
  if (l == 0 && r == 0) return x;
  std::vector<Tensor> parts;
  if (mode == "reflect") {
    if (l >= n || r >= n)
      a.fail(TSR_INVALID_ARGUMENT,
             "padding size should be less than the corresponding input dimension, but got: "
             "padding (" +
                 std::to_string(l) + ", " + std::to_string(r) + ") at dimension " + std::to_string(d) + " of input " +
                 shp(x));
    if (l > 0) parts.push_back(tsr::flip(x.narrow(d, 1, l), {d}));
    parts.push_back(x);
    if (r > 0) parts.push_back(tsr::flip(x.narrow(d, n - 1 - r, r), {d}));
  } else if (mode == "replicate") {
    if (n == 0)
      a.fail(TSR_INVALID_ARGUMENT,
             "cannot replicate-pad dimension " + std::to_string(d) + " of size 0 of input " + shp(x));
    std::vector<int64_t> s = x.sizes();
    if (l > 0) {
      s[static_cast<size_t>(d)] = l;
      parts.push_back(x.narrow(d, 0, 1).expand(s));
    }
    parts.push_back(x);
    if (r > 0) {
      s[static_cast<size_t>(d)] = r;
      parts.push_back(x.narrow(d, n - 1, 1).expand(s));
    }
  } else {  // circular
    if (l > n || r > n)
      a.fail(TSR_INVALID_ARGUMENT, "padding value causes wrapping around more than once: padding (" +
                                       std::to_string(l) + ", " + std::to_string(r) + ") at dimension " +
                                       std::to_string(d) + " of input " + shp(x));
    if (l > 0) parts.push_back(x.narrow(d, n - l, l));
    parts.push_back(x);
    if (r > 0) parts.push_back(x.narrow(d, 0, r));
  }
  return tsr::cat(parts, d);
}

Tensor pad_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  std::vector<int64_t> pad = a.ints(1);
  std::string mode = a.str(2);
  if (mode == "constant") return tsr::constant_pad_nd(x, pad, a.is_none(3) ? 0.0 : a.double_arg(3));
  if (mode != "reflect" && mode != "replicate" && mode != "circular")
    a.fail(TSR_INVALID_ARGUMENT,
           "unknown padding mode '" + mode + "' (expected constant, reflect, replicate or circular)");
  if (!a.is_none(3)) a.fail(TSR_INVALID_ARGUMENT, "padding mode '" + mode + "' doesn't take in value argument");
  padded_sizes(a, x, pad);  // validates lengths and negative results
  Tensor y = x;
  int64_t nd = x.dim();
  for (size_t i = 0; i < pad.size() / 2; ++i)
    y = pad_dim(a, y, nd - 1 - static_cast<int64_t>(i), std::max<int64_t>(pad[2 * i], 0),
                std::max<int64_t>(pad[2 * i + 1], 0), mode);
  for (size_t i = 0; i < pad.size() / 2; ++i) {
    int64_t d = nd - 1 - static_cast<int64_t>(i), l = pad[2 * i], r = pad[2 * i + 1];
    if (l >= 0 && r >= 0) continue;
    int64_t start = std::max<int64_t>(-l, 0), len = y.size(d) - start - std::max<int64_t>(-r, 0);
    y = y.narrow(d, start, len);
  }
  return y.get() == x.get() || y.shares_storage(x) ? y.clone() : y;
}

}  // namespace

TSR_CORE_OPS(shape_pad) {
  v.push_back(
      {"tril(Tensor self, int diagonal=0) -> Tensor", composite<tri_fn>, TSR_GRAD(tril_backward), kSaveNothing});
  v.push_back(
      {"triu(Tensor self, int diagonal=0) -> Tensor", composite<tri_fn>, TSR_GRAD(triu_backward), kSaveNothing});
  v.push_back(inplace_op("tril_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)"));
  v.push_back(inplace_op("triu_(Tensor(a!) self, int diagonal=0) -> Tensor(a!)"));
  v.push_back(
      composite_op("diagonal(Tensor self, int offset=0, int dim1=0, int dim2=1) -> Tensor", composite<diagonal_fn>));
  v.push_back({"diag_embed(Tensor self, int offset=0, int dim1=-2, int dim2=-1) -> Tensor", composite<diag_embed_fn>,
               TSR_GRAD(diag_embed_backward), kSaveNothing});
  v.push_back(composite_op("diag(Tensor self, int diagonal=0) -> Tensor", composite<diag_fn>));
  v.push_back({"constant_pad_nd(Tensor self, int[] pad, Scalar value=0) -> Tensor", composite<constant_pad_fn>,
               TSR_GRAD(constant_pad_backward), kSaveNothing});
  v.push_back(composite_op("pad(Tensor self, int[] pad, str mode=\"constant\", float? value=None) -> Tensor",
                           composite<pad_fn>));
}

}  // namespace tsr::core
