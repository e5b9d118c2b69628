// embedding, one_hot, dropout. embedding gathers rows with a kernel and scatters gradients back
// (no gradient to padding_idx's row); dropout draws its mask from the runtime's Philox stream
// through `rand`, so every backend drops the same elements for the same seed.
#include "ops/nn/nn_kernel_op.hpp"
#include "ops/nn/nn_util.hpp"

namespace tsr::core {
namespace {

using tsr::Tensor;

// _nn_embedding(weight [V, D], indices int64 [...]): [..., D] (indices out of range are the
// kernel's to refuse).
tsr_dtype_t embedding_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* w = nn::ktensor(ctx, 0, 2);
  core::Tensor* idx = nn::kindex(ctx, 1);
  std::vector<int64_t> s(idx->sizes, idx->sizes + idx->ndim);
  s.push_back(w->sizes[1]);
  outs.push_back({s, w->dtype});
  return w->dtype;
}

// _nn_embedding_backward(grad [M, D], indices int64 of M elements, num_weights, padding_idx):
// [num_weights, D].
tsr_dtype_t embedding_backward_shape(CallCtx& ctx, std::vector<nn::OutDesc>& outs) {
  core::Tensor* g = nn::kfloat(ctx, 0, 2);
  core::Tensor* idx = nn::kindex(ctx, 1);
  nn::krequire(ctx, idx->numel == g->sizes[0],
               "indices " + shape_str(idx->sizes, idx->ndim) + " do not match grad " + shape_str(g->sizes, 2));
  nn::krequire(ctx, ctx.int_arg(2) >= 0, "num_weights must be non-negative, got " + std::to_string(ctx.int_arg(2)));
  outs.push_back({{ctx.int_arg(2), g->sizes[1]}, g->dtype});
  return g->dtype;
}

int64_t padding_row(const std::optional<int64_t>& p, int64_t V) {
  if (!p) return -1;
  return *p < 0 ? *p + V : *p;
}

Tensor embedding_fwd(CArgs& a) {
  Tensor w = a.tensor(0), idx = a.tensor(1);
  if (w.dim() != 2) nn::fail(a.op(), "weight must be 2-D [num_embeddings, embedding_dim], got " + nn::shp(w));
  if (!is_integral(idx.dtype()))
    nn::fail(a.op(),
             std::string("indices must be an integer tensor, got ") + dtype_name(idx.dtype()) + " " + nn::shp(idx));
  const int64_t V = w.size(0);
  auto pad = a.opt_int(2);
  if (pad && (*pad >= V || *pad < -V))
    nn::fail(a.op(),
             "padding_idx " + std::to_string(*pad) + " must be within the " + std::to_string(V) + " rows of weight");
  Tensor i64 = idx.to(TSR_I64);
  if (i64.numel() > 0) {
    int64_t lo = tsr::amin(i64).item<int64_t>(), hi = tsr::amax(i64).item<int64_t>();
    if (lo < 0 || hi >= V)
      nn::fail(a.op(), "index " + std::to_string(lo < 0 ? lo : hi) + " is out of range for weight " + nn::shp(w));
  }
  static const tsr::Op op("_nn_embedding");
  return tsr::call(op, {w, i64});
}

void embedding_bwd(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  auto ws = c.input_sizes(0);
  Tensor idx = c.input(1).to(TSR_I64);
  int64_t pad = padding_row(c.is_none(2) ? std::nullopt : std::optional<int64_t>(c.int_arg(2)), ws[0]);
  static const tsr::Op op("_nn_embedding_backward");
  c.set(0, tsr::call(op, {c.grad(0).reshape({idx.numel(), ws[1]}), idx.reshape({idx.numel()}), ws[0], pad}));
}

Tensor one_hot_fn(CArgs& a) {
  Tensor t = a.tensor(0);
  if (!is_integral(t.dtype()))
    nn::fail(a.op(), std::string("expected an integer tensor of class values, got ") + dtype_name(t.dtype()));
  int64_t n = a.int_arg(1);
  Tensor ti = t.to(TSR_I64);
  if (t.numel() == 0) {
    if (n < 0) nn::fail(a.op(), "cannot infer the number of classes from an empty tensor " + nn::shp(t));
  } else {
    int64_t lo = tsr::amin(ti).item<int64_t>(), hi = tsr::amax(ti).item<int64_t>();
    if (lo < 0) nn::fail(a.op(), "class values must be non-negative, found " + std::to_string(lo));
    if (n < 0) n = hi + 1;
    if (hi >= n)
      nn::fail(a.op(), "class values must be smaller than num_classes (" + std::to_string(n) + "), found " +
                           std::to_string(hi));
  }
  return tsr::eq(ti.unsqueeze(-1), tsr::arange(n, TSR_I64, t.device())).to(TSR_I64);
}

// (output, mask): the bool mask of kept elements (PyTorch's native_dropout); kept elements are
// scaled by 1/(1-p). train=None trains.
double dropout_scale(double p, bool train) { return !train ? 1.0 : p == 1 ? 0.0 : 1.0 / (1.0 - p); }

std::vector<Tensor> native_dropout_fwd(CArgs& a) {
  Tensor x = a.tensor(0);
  double p = a.double_arg(1);
  nn::require_floating(a.op(), "input", x);
  if (!(p >= 0 && p <= 1))
    nn::fail(a.op(), "dropout probability has to be between 0 and 1, but got " + std::to_string(p));
  bool train = a.is_none(2) ? true : a.bool_arg(2);
  if (!train || p == 0) return {x.clone(), tsr::ones(x.sizes(), TSR_BOOL, x.device())};
  if (p == 1) return {tsr::zeros(x.sizes(), x.dtype(), x.device()), tsr::zeros(x.sizes(), TSR_BOOL, x.device())};
  Tensor keep = tsr::ge(tsr::rand(x.sizes(), TSR_F32, x.device()), p);
  return {x * keep.to(x.dtype()) * dropout_scale(p, train), keep};
}

void native_dropout_bwd(GradCtx& c) {
  if (!c.needs(0) || !c.grad(0).defined()) return;
  const double scale = dropout_scale(c.double_arg(1), c.is_none(2) || c.bool_arg(2));
  c.set(0, c.grad(0) * c.output(1).to(c.grad(0).dtype()) * scale);
}

Tensor dropout_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  double p = a.double_arg(1);
  if (!(p >= 0 && p <= 1))
    nn::fail(a.op(), "dropout probability has to be between 0 and 1, but got " + std::to_string(p));
  if (!a.bool_arg(2)) return x;
  static const tsr::Op op("native_dropout");
  return tsr::call_multi(op, {x, p, true})[0];
}

}  // namespace

TSR_CORE_OPS(nn_embedding) {
  v.push_back({"_nn_embedding(Tensor weight, Tensor indices) -> Tensor", nn::kernel_op_impl<embedding_shape>});
  v.push_back({"_nn_embedding_backward(Tensor grad, Tensor indices, int num_weights, int padding_idx) -> Tensor",
               nn::kernel_op_impl<embedding_backward_shape>});
  v.push_back(nn::prim("embedding(Tensor weight, Tensor indices, int? padding_idx=None) -> Tensor",
                       composite<embedding_fwd>, TSR_GRAD(embedding_bwd)));
  v.push_back(composite_op("one_hot(Tensor self, int num_classes=-1) -> Tensor", composite<one_hot_fn>));
  v.push_back(nn::prim("native_dropout(Tensor input, float p, bool? train=None) -> (Tensor, Tensor)",
                       composite_multi<native_dropout_fwd>, TSR_GRAD(native_dropout_bwd), kSaveOutputs));
  v.push_back(composite_op("dropout(Tensor input, float p=0.5, bool train=True) -> Tensor", composite<dropout_fn>));
}

}  // namespace tsr::core
