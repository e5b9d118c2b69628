// float64 reference implementations of torch.optim's single-tensor update rules, written out
// loop by loop from torch's formulas, for the optimizer tests (tests/frontend/test_optim_*.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace optim_ref {

using Vec = std::vector<double>;

struct SGD {
  double lr, momentum = 0, dampening = 0, wd = 0;
  bool nesterov = false, maximize = false;
  Vec buf{};
  void step(Vec& p, const Vec& g) {
    const bool first = buf.empty();
    if (first && momentum != 0) buf.assign(p.size(), 0.0);
    for (size_t i = 0; i < p.size(); ++i) {
      double d = maximize ? -g[i] : g[i];
      if (wd != 0) d += wd * p[i];
      if (momentum != 0) {
        buf[i] = first ? d : momentum * buf[i] + (1 - dampening) * d;
        d = nesterov ? d + momentum * buf[i] : buf[i];
      }
      p[i] -= lr * d;
    }
  }
};

struct Adam {
  double lr, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0;
  bool amsgrad = false, maximize = false, decoupled = false;
  Vec m{}, v{}, vmax{};
  int t = 0;
  void step(Vec& p, const Vec& g) {
    if (t == 0) m.assign(p.size(), 0.0), v.assign(p.size(), 0.0), vmax.assign(p.size(), 0.0);
    ++t;
    const double bc1 = 1 - std::pow(b1, t), bc2 = 1 - std::pow(b2, t);
    for (size_t i = 0; i < p.size(); ++i) {
      double d = maximize ? -g[i] : g[i];
      if (wd != 0) {
        if (decoupled)
          p[i] *= 1 - lr * wd;
        else
          d += wd * p[i];
      }
      m[i] = b1 * m[i] + (1 - b1) * d;
      v[i] = b2 * v[i] + (1 - b2) * d * d;
      vmax[i] = std::max(vmax[i], v[i]);
      const double denom = std::sqrt(amsgrad ? vmax[i] : v[i]) / std::sqrt(bc2) + eps;
      p[i] -= lr / bc1 * m[i] / denom;
    }
  }
};

struct RMSprop {
  double lr, alpha = 0.99, eps = 1e-8, wd = 0, momentum = 0;
  bool centered = false, maximize = false;
  Vec sq{}, ga{}, buf{};
  void step(Vec& p, const Vec& g) {
    if (sq.empty()) sq.assign(p.size(), 0.0), ga.assign(p.size(), 0.0), buf.assign(p.size(), 0.0);
    for (size_t i = 0; i < p.size(); ++i) {
      double d = maximize ? -g[i] : g[i];
      if (wd != 0) d += wd * p[i];
      sq[i] = alpha * sq[i] + (1 - alpha) * d * d;
      double avg;
      if (centered) {
        ga[i] = alpha * ga[i] + (1 - alpha) * d;
        avg = std::sqrt(sq[i] - ga[i] * ga[i]) + eps;
      } else {
        avg = std::sqrt(sq[i]) + eps;
      }
      if (momentum > 0) {
        buf[i] = momentum * buf[i] + d / avg;
        p[i] -= lr * buf[i];
      } else {
        p[i] -= lr * d / avg;
      }
    }
  }
};

struct Adagrad {
  double lr, lr_decay = 0, wd = 0, init = 0, eps = 1e-10;
  bool maximize = false;
  Vec sum{};
  int t = 0;
  void step(Vec& p, const Vec& g) {
    if (sum.empty()) sum.assign(p.size(), init);
    ++t;
    const double clr = lr / (1 + (t - 1) * lr_decay);
    for (size_t i = 0; i < p.size(); ++i) {
      double d = maximize ? -g[i] : g[i];
      if (wd != 0) d += wd * p[i];
      sum[i] += d * d;
      p[i] -= clr * d / (std::sqrt(sum[i]) + eps);
    }
  }
};

}  // namespace optim_ref
