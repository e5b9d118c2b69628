// einsum, inverse, linalg_solve, cholesky: values against float64 loops, gradchecks, and the
// statuses for singular / non-positive-definite inputs.
#include "linalg_test.hpp"

namespace {

using namespace tsr;
using namespace tsr::optest;

// Batches of well-conditioned n x n matrices: small random entries plus n on the diagonal.
Tensor well_conditioned(int64_t batch, int64_t n, uint64_t seed, tsr_dtype_t dt = TSR_F64) {
  std::vector<double> v = values(randu({batch, n, n}, seed, -0.5, 0.5));
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i) v[size_t((b * n + i) * n + i)] += double(n);
  return from_vector(v, {batch, n, n}).to(dt);
}

Tensor eye(int64_t n) {
  std::vector<double> v(size_t(n * n), 0.0);
  for (int64_t i = 0; i < n; ++i) v[size_t(i * n + i)] = 1;
  return from_vector(v, {n, n});
}

std::vector<double> slice_mat(const std::vector<double>& v, int64_t b, int64_t r, int64_t c) {
  return std::vector<double>(v.begin() + b * r * c, v.begin() + (b + 1) * r * c);
}

TEST(LinalgOps, EinsumPatterns) {
  Tensor a = randu({3, 4}, 1), b = randu({4, 5}, 2), sq = randu({4, 4}, 3), v = randu({4}, 4), w = randu({3}, 5);
  EXPECT_TRUE(close(einsum("ij,jk->ik", {a, b}), ref_mm(values(a), values(b), 3, 4, 5), {3, 5}, 1e-12, 1e-12));
  EXPECT_TRUE(close(einsum("ij,jk", {a, b}), ref_mm(values(a), values(b), 3, 4, 5), {3, 5}, 1e-12, 1e-12));
  std::vector<double> at, sv = values(sq), diag;
  double trace = 0;
  for (int j = 0; j < 4; ++j)
    for (int i = 0; i < 3; ++i) at.push_back(values(a)[i * 4 + j]);
  EXPECT_TRUE(close(einsum("ij->ji", {a}), at, {4, 3}, 0, 0));
  EXPECT_TRUE(close(einsum("ba", {a}), at, {4, 3}, 0, 0));  // implicit: alphabetical output
  for (int i = 0; i < 4; ++i) diag.push_back(sv[i * 5]), trace += sv[i * 5];
  EXPECT_TRUE(close(einsum("ii->i", {sq}), diag, {4}, 0, 0));
  EXPECT_TRUE(close(einsum("ii->", {sq}), {trace}, {}, 1e-12, 1e-12));
  EXPECT_TRUE(close(einsum("ii", {noncontig(sq)}), {trace}, {}, 1e-12, 1e-12));
  double vv = 0;
  for (double x : values(v)) vv += x * x;
  EXPECT_TRUE(close(einsum("i,i->", {v, v}), {vv}, {}, 1e-12, 1e-12));
  std::vector<double> o;
  for (double x : values(w))
    for (double y : values(v)) o.push_back(x * y);
  EXPECT_TRUE(close(einsum("i,j->ij", {w, v}), o, {3, 4}, 1e-12, 1e-12));
  // Attention scores: q k^T per batch and head.
  Tensor q = randu({2, 3, 4, 5}, 6), k = randu({2, 3, 6, 5}, 7);
  std::vector<double> qv = values(q), kv = values(k), sc;
  for (int bh = 0; bh < 6; ++bh)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 6; ++j) {
        double s = 0;
        for (int d = 0; d < 5; ++d) s += qv[(bh * 4 + i) * 5 + d] * kv[(bh * 6 + j) * 5 + d];
        sc.push_back(s);
      }
  EXPECT_TRUE(close(einsum("bhqd,bhkd->bhqk", {q, k}), sc, {2, 3, 4, 6}, 1e-12, 1e-12));
  // Ellipsis with broadcasting batch dims.
  Tensor ea = randu({2, 1, 3, 4}, 8), eb = randu({5, 4, 2}, 9);
  std::vector<double> ev, eav = values(ea), ebv = values(eb);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 5; ++j) {
      auto c = ref_mm(slice_mat(eav, i, 3, 4), slice_mat(ebv, j, 4, 2), 3, 4, 2);
      ev.insert(ev.end(), c.begin(), c.end());
    }
  EXPECT_TRUE(close(einsum("...ij,...jk->...ik", {ea, eb}), ev, {2, 5, 3, 2}, 1e-12, 1e-12));
  Tensor ba = randu({3, 2, 4}, 10), bb = randu({3, 4, 5}, 11);
  std::vector<double> bv, bav = values(ba), bbv = values(bb);
  for (int i = 0; i < 3; ++i) {
    auto c = ref_mm(slice_mat(bav, i, 2, 4), slice_mat(bbv, i, 4, 5), 2, 4, 5);
    bv.insert(bv.end(), c.begin(), c.end());
  }
  EXPECT_TRUE(close(einsum("bij,bjk->bik", {ba, bb}), bv, {3, 2, 5}, 1e-12, 1e-12));
  // Three operands and a label summed away inside one operand.
  Tensor c = randu({5, 2}, 12);
  auto abc = ref_mm(ref_mm(values(a), values(b), 3, 4, 5), values(c), 3, 5, 2);
  EXPECT_TRUE(close(einsum("ij,jk,kl->il", {a, b, c}), abc, {3, 2}, 1e-12, 1e-12));
  std::vector<double> rs(3, 0.0);
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) rs[i] += values(a)[i * 4 + j];
  EXPECT_TRUE(close(einsum("ij->i", {a}), rs, {3}, 1e-12, 1e-12));
  EXPECT_EQ(einsum("ij,jk->ik", {randu({0, 4}, 1), b}).sizes(), (Shape{0, 5}));
  EXPECT_TRUE(close(einsum("ij,jk->ik", {a.to(TSR_F32), b.to(TSR_F32)}), ref_mm(values(a), values(b), 3, 4, 5), {3, 5},
                    1e-5, 1e-5));
}

TEST(LinalgOps, EinsumErrors) {
  Tensor a = randu({3, 4}, 1);
  EXPECT_TRUE(throws_with([&] { einsum("ij,jk->ik", {a}); }, {"einsum", "2 operand terms", "1 tensors"}));
  EXPECT_TRUE(throws_with([&] { einsum("ijk->i", {a}); }, {"einsum", "ijk", "[3, 4]"}));
  EXPECT_TRUE(throws_with([&] { einsum("ij,jk->ik", {a, a}); }, {"einsum", "4", "3"}));
  EXPECT_TRUE(throws_with([&] { einsum("ij->iz", {a}); }, {"einsum", "appears in no operand"}));
  EXPECT_TRUE(throws_with([&] { einsum("i1->i", {a}); }, {"einsum", "invalid subscript '1'"}));
  EXPECT_TRUE(throws_with([&] { einsum("ij,jk->ik", {a, a.to(TSR_F32)}); }, {"einsum", "float64", "float32"}));
}

TEST(LinalgOps, EinsumGrad) {
  GRADCHECK(
      [](const std::vector<Tensor>& x) {
        return einsum("ij,jk->ik", {x[0], x[1]});
      },
      {randu({2, 3}, 1), randu({3, 2}, 2)});
  GRADCHECK([](const std::vector<Tensor>& x) { return einsum("ii->i", {x[0]}); }, {randu({3, 3}, 3)});
  GRADCHECK(
      [](const std::vector<Tensor>& x) {
        return einsum("bhqd,bhkd->bhqk", {x[0], x[1]});
      },
      {randu({1, 2, 3, 2}, 4), randu({1, 2, 2, 2}, 5)});
  GRADCHECK(
      [](const std::vector<Tensor>& x) {
        return einsum("...ij,...jk->...ik", {x[0], x[1]});
      },
      {randu({2, 1, 2, 3}, 6), randu({3, 3, 2}, 7)});
  GRADCHECK(
      [](const std::vector<Tensor>& x) {
        return einsum("i,j->ij", {x[0], x[1]});
      },
      {randu({3}, 8), randu({2}, 9)});
}

TEST(LinalgOps, Inverse) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
    Tensor a = well_conditioned(3, 4, 20, dt);
    Tensor inv = inverse(dt == TSR_F64 ? noncontig(a) : a);
    std::vector<double> av = values(a), iv = values(inv);
    for (int b = 0; b < 3; ++b) {
      auto p = ref_mm(slice_mat(av, b, 4, 4), slice_mat(iv, b, 4, 4), 4, 4, 4);
      EXPECT_TRUE(close(from_vector(p, {4, 4}), eye(4), dt == TSR_F64 ? 1e-12 : 1e-5, dt == TSR_F64 ? 1e-12 : 1e-5));
    }
  }
  EXPECT_EQ(inverse(randu({0, 3, 3}, 1)).sizes(), (Shape{0, 3, 3}));
  EXPECT_EQ(inverse(randu({2, 0, 0}, 1)).sizes(), (Shape{2, 0, 0}));
  std::vector<double> sing = values(well_conditioned(2, 3, 21));
  for (int i = 9; i < 18; ++i) sing[i] = (i % 3 == 0) ? 1.0 : 2.0;  // batch 1: rank 1
  Tensor s = from_vector(sing, {2, 3, 3});
  EXPECT_TRUE(throws_with([&] { inverse(s); }, {"inverse", "batch index 1", "singular"}));
  EXPECT_TRUE(throws_with([&] { inverse(randu({2, 3}, 1)); }, {"inverse", "[2, 3]"}));
  EXPECT_TRUE(throws_with([&] { inverse(randint({2, 2}, 1, 0, 5)); }, {"inverse", "int64"}));
  EXPECT_TRUE(throws_with([&] { inverse(randu({2, 2}, 1, -1, 1, TSR_F16)); }, {"inverse", "float16"}));
  GRADCHECK([](const std::vector<Tensor>& x) { return inverse(x[0]); }, {well_conditioned(2, 3, 22)});
}

TEST(LinalgOps, Solve) {
  Tensor A = well_conditioned(2, 3, 30), B = randu({3, 2}, 31);
  Tensor X = linalg_solve(A, B);  // B broadcasts over A's batch
  ASSERT_EQ(X.sizes(), (Shape{2, 3, 2}));
  std::vector<double> av = values(A), xv = values(X), bv = values(B);
  for (int b = 0; b < 2; ++b)
    EXPECT_TRUE(
        close(from_vector(ref_mm(slice_mat(av, b, 3, 3), slice_mat(xv, b, 3, 2), 3, 3, 2), {3, 2}), B, 1e-12, 1e-12));
  Tensor v = randu({3}, 32);
  Tensor xvec = linalg_solve(A.select(0, 0).to(TSR_F32), v.to(TSR_F32));
  ASSERT_EQ(xvec.sizes(), (Shape{3}));
  EXPECT_TRUE(close(from_vector(ref_mm(slice_mat(av, 0, 3, 3), values(xvec), 3, 3, 1), {3}), v, 1e-5, 1e-5));
  // B of shape A.shape[:-1] is a batch of vectors.
  Tensor bv2 = randu({2, 3}, 33);
  EXPECT_EQ(linalg_solve(A, bv2).sizes(), (Shape{2, 3}));
  std::vector<double> sing = values(A);
  for (int i = 0; i < 9; ++i) sing[i] = 1.0;
  EXPECT_TRUE(throws_with(
      [&] {
        linalg_solve(from_vector(sing, {2, 3, 3}), B);
      },
      {"linalg_solve", "batch index 0", "singular"}));
  EXPECT_TRUE(throws_with([&] { linalg_solve(A, randu({4, 2}, 1)); }, {"linalg_solve", "[2, 3, 3]", "[4, 2]"}));
  EXPECT_TRUE(throws_with([&] { linalg_solve(randu({3, 2}, 1), B); }, {"linalg_solve", "[3, 2]"}));
  EXPECT_TRUE(throws_with([&] { linalg_solve(A, B.to(TSR_F32)); }, {"linalg_solve", "float64", "float32"}));
  GRADCHECK([](const std::vector<Tensor>& x) { return linalg_solve(x[0], x[1]); },
            {well_conditioned(2, 3, 34), randu({2, 3, 2}, 35)});
  GRADCHECK([](const std::vector<Tensor>& x) { return linalg_solve(x[0], x[1]); },
            {well_conditioned(1, 3, 36).select(0, 0), randu({3}, 37)});
  // A broadcast over B's batch: its gradient sums over the batch.
  GRADCHECK([](const std::vector<Tensor>& x) { return linalg_solve(x[0], x[1]); },
            {well_conditioned(1, 3, 38).select(0, 0), randu({2, 3, 2}, 39)});
}

// A symmetric positive-definite batch.
Tensor spd(int64_t batch, int64_t n, uint64_t seed) {
  std::vector<double> m = values(randu({batch, n, n}, seed, -1, 1)), a(m.size(), 0.0);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = i == j ? double(n) : 0.0;
        for (int64_t k = 0; k < n; ++k) s += m[size_t((b * n + i) * n + k)] * m[size_t((b * n + j) * n + k)];
        a[size_t((b * n + i) * n + j)] = s;
      }
  return from_vector(a, {batch, n, n});
}

TEST(LinalgOps, Cholesky) {
  Tensor A = spd(2, 4, 40);
  std::vector<double> av = values(A);
  for (bool upper : {false, true}) {
    for (tsr_dtype_t dt : {TSR_F64, TSR_F32}) {
      Tensor L = cholesky(A.to(dt), upper);
      std::vector<double> lv = values(L);
      for (int b = 0; b < 2; ++b) {
        auto m = slice_mat(lv, b, 4, 4);
        std::vector<double> lt(16);
        for (int i = 0; i < 4; ++i)
          for (int j = 0; j < 4; ++j) {
            lt[j * 4 + i] = m[i * 4 + j];
            if (upper ? j < i : j > i) {
              EXPECT_EQ(m[i * 4 + j], 0.0);
            }
          }
        auto p = upper ? ref_mm(lt, m, 4, 4, 4) : ref_mm(m, lt, 4, 4, 4);
        double tol = dt == TSR_F64 ? 1e-12 : 1e-4;
        EXPECT_TRUE(close(from_vector(p, {4, 4}), slice_mat(av, b, 4, 4), {4, 4}, tol, tol)) << upper;
      }
    }
  }
  Tensor bad = A.clone();
  std::vector<double> bv = values(A);
  for (int i = 16; i < 32; ++i) bv[i] = (i % 5 == 1) ? -1.0 : 0.0;  // batch 1: -I
  EXPECT_TRUE(throws_with(
      [&] {
        cholesky(from_vector(bv, {2, 4, 4}));
      },
      {"cholesky", "batch index 1", "positive-definite"}));
  EXPECT_TRUE(throws_with([&] { cholesky(randu({3, 4}, 1)); }, {"cholesky", "[3, 4]"}));
  EXPECT_EQ(cholesky(randu({0, 2, 2}, 1)).sizes(), (Shape{0, 2, 2}));
  // Gradients through a symmetric parametrization (cholesky reads one triangle).
  for (bool upper : {false, true})
    GRADCHECK(
        [upper](const std::vector<Tensor>& x) {
          Tensor s = add(matmul(x[0], x[0].transpose(0, 1)), mul(eye(3), 3.0));
          return cholesky(s, upper);
        },
        {randu({3, 3}, 41, -1, 1)});
}

TEST(LinalgOps, OutVariants) {
  Tensor a = well_conditioned(2, 3, 60);
  Tensor out = zeros({3, 3, 2}, TSR_F64).transpose(0, 2).transpose(1, 2);  // [2, 3, 3], strided
  static const Op inv("inverse");
  call_out(inv, out, {a});
  EXPECT_TRUE(close(out, inverse(a), 0, 0));
  // A failure at batch index 1 leaves the out= tensor untouched (batch 0 would succeed).
  std::vector<double> sv = values(a);
  for (int i = 9; i < 18; ++i) sv[i] = 1.0;
  Tensor sentinel = full({2, 3, 3}, 7.0, TSR_F64);
  EXPECT_TRUE(throws_with(
      [&] {
        call_out(inv, sentinel, {from_vector(sv, {2, 3, 3})});
      },
      {"inverse", "batch index 1"}));
  EXPECT_TRUE(close(sentinel, full({2, 3, 3}, 7.0, TSR_F64), 0, 0));
  static const Op chol("cholesky");
  EXPECT_TRUE(throws_with(
      [&] {
        call_out(chol, sentinel, {from_vector(sv, {2, 3, 3}), false});
      },
      {"cholesky", "batch index"}));
  EXPECT_TRUE(close(sentinel, full({2, 3, 3}, 7.0, TSR_F64), 0, 0));
  Tensor wrong = zeros({3, 3}, TSR_F64);
  EXPECT_TRUE(throws_with([&] { call_out(inv, wrong, {a}); }, {"inverse"}));
  // Composite out=: einsum and addmm fill the caller's tensor.
  Tensor m1 = randu({3, 4}, 61), m2 = randu({4, 2}, 62);
  Tensor eo = zeros({3, 2}, TSR_F64);
  static const Op ein("einsum");
  call_out(ein, eo, {std::string("ij,jk->ik"), std::vector<Tensor>{m1, m2}});
  EXPECT_TRUE(close(eo, ref_mm(values(m1), values(m2), 3, 4, 2), {3, 2}, 1e-12, 1e-12));
  Tensor ao = zeros({3, 2}, TSR_F64);
  static const Op addmm_op("addmm");
  call_out(addmm_op, ao, {zeros({2}, TSR_F64), m1, m2, int64_t{1}, int64_t{1}});
  EXPECT_TRUE(close(ao, eo, 1e-12, 1e-12));
}

// Determinant by Gaussian elimination with partial pivoting (float64 reference).
double ref_det(std::vector<double> m, int64_t n) {
  double det = 1;
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::fabs(m[size_t(r * n + c)]) > std::fabs(m[size_t(p * n + c)])) p = r;
    if (m[size_t(p * n + c)] == 0) return 0;
    if (p != c) {
      for (int64_t k = 0; k < n; ++k) std::swap(m[size_t(p * n + k)], m[size_t(c * n + k)]);
      det = -det;
    }
    det *= m[size_t(c * n + c)];
    for (int64_t r = c + 1; r < n; ++r) {
      double f = m[size_t(r * n + c)] / m[size_t(c * n + c)];
      for (int64_t k = c; k < n; ++k) m[size_t(r * n + k)] -= f * m[size_t(c * n + k)];
    }
  }
  return det;
}

TEST(LinalgOps, DetSlogdet) {
  Tensor a = randu({3, 4, 4}, 50);
  std::vector<double> av = values(a), dets;
  for (int b = 0; b < 3; ++b) dets.push_back(ref_det(slice_mat(av, b, 4, 4), 4));
  EXPECT_TRUE(close(det(noncontig(a)), dets, {3}, 1e-10, 1e-12));
  EXPECT_TRUE(close(det(a.to(TSR_F32)), dets, {3}, 1e-4, 1e-5));
  auto sl = slogdet(a);
  std::vector<double> signs, logs;
  for (double d : dets) signs.push_back(d > 0 ? 1 : -1), logs.push_back(std::log(std::fabs(d)));
  EXPECT_TRUE(close(sl.first, signs, {3}, 0, 0));
  EXPECT_TRUE(close(sl.second, logs, {3}, 1e-10, 1e-12));
  std::vector<double> sing(9, 1.0);
  EXPECT_TRUE(close(det(from_vector(sing, {3, 3})), {0.0}, {}, 0, 0));
  auto ss = slogdet(from_vector(sing, {3, 3}));
  EXPECT_EQ(ss.first.item<double>(), 0.0);
  EXPECT_TRUE(std::isinf(ss.second.item<double>()) && ss.second.item<double>() < 0);
  EXPECT_EQ(det(randu({0, 3, 3}, 1)).sizes(), (Shape{0}));
  EXPECT_TRUE(close(det(randu({2, 0, 0}, 1)), {1.0, 1.0}, {2}, 0, 0));
  EXPECT_TRUE(throws_with([] { det(randu({2, 3}, 1)); }, {"det", "[2, 3]"}));
  EXPECT_TRUE(throws_with([] { slogdet(randint({2, 2}, 1, 0, 3)); }, {"slogdet", "int64"}));
  GRADCHECK([](const std::vector<Tensor>& x) { return det(x[0]); }, {well_conditioned(2, 3, 51)});
  GRADCHECK([](const std::vector<Tensor>& x) { return slogdet(x[0]).second; }, {randu({3, 3}, 52)});
}

}  // namespace
