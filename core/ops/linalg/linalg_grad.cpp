// Backward formulas of the foundation matrix products (mm, bmm, matmul; declared in
// ops/linalg/linalg.cpp). Written with SDK ops so they run on any backend and, under create_graph,
// are themselves recorded (double backward).
#include "ops/composite.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

namespace {

// Column-major (a transposed contiguous matrix, as w.t() in linear).
bool col_major(const tsr::Tensor& t) {
  auto st = t.strides();
  return t.dim() == 2 && st[0] == 1 && st[1] >= t.size(0) && t.size(1) > 1;
}

// a^T @ g for a matrix operand b of a product a @ b, laid out like b: for a transposed b
// (linear's w.t()) it is computed as (g^T @ a)^T, so the gradient that reaches w through the
// transpose is contiguous and needs no dense copy when stored as w.grad (as torch does).
tsr::Tensor mat2_grad(const tsr::Tensor& a, const tsr::Tensor& g, const tsr::Tensor& b) {
  if (col_major(b)) return tsr::mm(g.t(), a).t();
  return tsr::mm(a.t(), g);
}

void mm_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined()) return;
  if (g.needs(0)) g.set(0, tsr::mm(go, g.input(1).t()));
  if (g.needs(1)) g.set(1, mat2_grad(g.input(0), go, g.input(1)));
}

void bmm_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined()) return;
  if (g.needs(0)) g.set(0, tsr::bmm(go, g.input(1).transpose(1, 2)));
  if (g.needs(1)) g.set(1, tsr::bmm(g.input(0).transpose(1, 2), go));
}

// matmul over every rank combination: 1-D operands are lifted to matrices (a: [1, k],
// b: [k, 1]) and the incoming gradient gets the matching unit dims back; the products are then
// ordinary (batched) matmuls whose broadcast batch dims the engine sums down to each input.
void matmul_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined()) return;
  tsr::Tensor a = g.input(0), b = g.input(1);
  const bool a1 = a.dim() == 1, b1 = b.dim() == 1;
  tsr::Tensor am = a1 ? a.unsqueeze(0) : a;
  tsr::Tensor bm = b1 ? b.unsqueeze(1) : b;
  tsr::Tensor gm = go;
  if (a1) gm = gm.unsqueeze(b1 ? gm.dim() : gm.dim() - 1);
  if (b1) gm = gm.unsqueeze(gm.dim());
  if (g.needs(0)) {
    tsr::Tensor ga = tsr::matmul(gm, bm.transpose(bm.dim() - 2, bm.dim() - 1));
    if (a1) ga = ga.squeeze(ga.dim() - 2);
    g.set(0, ga);
  }
  if (g.needs(1)) {
    tsr::Tensor gb;
    if (bm.dim() == 2) {
      // b shared by every batch (forward folded into one mm): its gradient is one GEMM over all
      // rows, not a batched product summed over the batch afterwards.
      std::vector<int64_t> as = am.sizes();
      int64_t rows = 1;
      for (size_t i = 0; i + 1 < as.size(); ++i) rows *= as[i];  // not -1: k or n may be 0
      gb = mat2_grad(am.reshape({rows, as.back()}), gm.reshape({rows, gm.size(-1)}), bm);
    } else {
      gb = tsr::matmul(am.transpose(am.dim() - 2, am.dim() - 1), gm);
    }
    if (b1) gb = gb.squeeze(gb.dim() - 1);
    g.set(1, gb);
  }
}

}  // namespace

TSR_CORE_BACKWARDS(linalg) {
  b.push_back({"mm", mm_backward, kSaveInputs});
  b.push_back({"bmm", bmm_backward, kSaveInputs});
  b.push_back({"matmul", matmul_backward, kSaveInputs});
}

}  // namespace tsr::core
