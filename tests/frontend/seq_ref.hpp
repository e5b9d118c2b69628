// Float64 references for the attention and transformer tests, written with plain loops from a
// module's own parameters (read back through the SDK). Flat row-major vectors throughout.
#pragma once

#include <cmath>
#include <limits>
#include <vector>

#include "op_test.hpp"
#include "tessera/nn/attention.hpp"

namespace seqref {

using Vec = std::vector<double>;
using tsr::optest::values;

inline Vec maybe(const tsr::Tensor& t, size_t n) { return t.defined() ? values(t) : Vec(n, 0.0); }

// y[r, o] = b[o] + sum_i x[r, i] W[o, i]
inline Vec linear(const Vec& x, int64_t rows, int64_t in, const Vec& w, const Vec& b, int64_t out) {
  Vec y(static_cast<size_t>(rows * out));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double s = b.empty() ? 0.0 : b[o];
      for (int64_t i = 0; i < in; ++i) s += x[r * in + i] * w[o * in + i];
      y[r * out + o] = s;
    }
  return y;
}

inline Vec layer_norm(const Vec& x, int64_t rows, int64_t E, const Vec& w, const Vec& b, double eps) {
  Vec y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t e = 0; e < E; ++e) mean += x[r * E + e];
    mean /= E;
    for (int64_t e = 0; e < E; ++e) var += (x[r * E + e] - mean) * (x[r * E + e] - mean);
    var /= E;
    for (int64_t e = 0; e < E; ++e) y[r * E + e] = (x[r * E + e] - mean) / std::sqrt(var + eps) * w[e] + b[e];
  }
  return y;
}

// Multi-head attention, batch-major: q [N, L, E], k/v [N, S, E]; bias [N, H, L, S] added to the
// scores (empty: none). Returns out [N, L, E]; *probs gets [N, H, L, S].
inline Vec mha(tsr::nn::MultiheadAttention& m, const Vec& q, const Vec& k, const Vec& v, int64_t N, int64_t L,
               int64_t S, const Vec& bias, Vec* probs = nullptr) {
  const int64_t E = m.embed_dim, H = m.num_heads, D = m.head_dim;
  Vec win = values(m.in_proj_weight), bin = maybe(m.in_proj_bias, static_cast<size_t>(3 * E));
  Vec wq(win.begin(), win.begin() + E * E), wk(win.begin() + E * E, win.begin() + 2 * E * E),
      wv(win.begin() + 2 * E * E, win.end());
  Vec bq(bin.begin(), bin.begin() + E), bk(bin.begin() + E, bin.begin() + 2 * E), bv(bin.begin() + 2 * E, bin.end());
  Vec Q = linear(q, N * L, E, wq, bq, E), K = linear(k, N * S, E, wk, bk, E), V = linear(v, N * S, E, wv, bv, E);
  Vec ctx(static_cast<size_t>(N * L * E), 0.0);
  if (probs) probs->assign(static_cast<size_t>(N * H * L * S), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < L; ++i) {
        Vec s(static_cast<size_t>(S));
        double mx = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < S; ++j) {
          double d = 0;
          for (int64_t c = 0; c < D; ++c) d += Q[(n * L + i) * E + h * D + c] * K[(n * S + j) * E + h * D + c];
          s[j] = d / std::sqrt(static_cast<double>(D)) + (bias.empty() ? 0.0 : bias[((n * H + h) * L + i) * S + j]);
          mx = std::max(mx, s[j]);
        }
        double z = 0;
        for (int64_t j = 0; j < S; ++j) z += (s[j] = std::exp(s[j] - mx));
        for (int64_t j = 0; j < S; ++j) {
          double p = s[j] / z;
          if (probs) (*probs)[((n * H + h) * L + i) * S + j] = p;
          for (int64_t c = 0; c < D; ++c) ctx[(n * L + i) * E + h * D + c] += p * V[(n * S + j) * E + h * D + c];
        }
      }
  return linear(ctx, N * L, E, values(m.out_proj->weight), maybe(m.out_proj->bias, static_cast<size_t>(E)), E);
}

// [A, B, C] -> [B, A, C].
inline Vec swap01(const Vec& v, int64_t A, int64_t B, int64_t C) {
  Vec o(v.size());
  for (int64_t a = 0; a < A; ++a)
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c) o[(b * A + a) * C + c] = v[(a * B + b) * C + c];
  return o;
}

}  // namespace seqref
