// The examples' synthetic dataset: `classes` interleaved spiral arms, n points each, as
// (points [n*classes, 2] float32, labels [n*classes] int64). A linear model cannot separate them.
#pragma once

#include <cmath>
#include <random>
#include <utility>
#include <vector>

#include "tessera/tessera.hpp"

// Radius r in (0, 1], angle proportional to r plus the arm's offset, with Gaussian noise.
inline std::pair<tsr::Tensor, tsr::Tensor> spirals(int64_t n, int64_t classes, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::normal_distribution<double> noise(0.0, 0.2);
  std::vector<float> xy;
  std::vector<int64_t> label;
  for (int64_t c = 0; c < classes; ++c)
    for (int64_t i = 0; i < n; ++i) {
      double r = double(i + 1) / double(n);
      double angle = 8.0 * r + 2.0 * 3.14159265358979 * double(c) / double(classes) + noise(g) * r;
      xy.push_back(float(r * std::cos(angle)));
      xy.push_back(float(r * std::sin(angle)));
      label.push_back(c);
    }
  return {tsr::from_vector(xy, {n * classes, 2}), tsr::from_vector(label, {n * classes})};
}
