// Backward formulas of the foundation matrix products (mm, bmm, matmul; declared in
// ops_linalg.cpp). Written with SDK ops so they run on any backend and, under create_graph,
// are themselves recorded (double backward).
#include "composite.hpp"
#include "ops.hpp"

namespace tsr::core {

namespace {

void mm_backward(GradCtx& g) {
  const tsr::Tensor& go = g.grad(0);
  if (!go.defined()) return;
  if (g.needs(0)) g.set(0, tsr::mm(go, g.input(1).t()));
  if (g.needs(1)) g.set(1, tsr::mm(g.input(0).t(), go));
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
    tsr::Tensor gb = tsr::matmul(am.transpose(am.dim() - 2, am.dim() - 1), gm);
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
