// Tessera SDK: host wrappers of the random op family (included through tessera/ops/linalg.hpp).
// seed/offset = -1 draw from the runtime's generator (tsr::manual_seed); explicit values select
// a fixed position of the Philox stream.
#pragma once

#include <optional>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr {

inline Tensor bernoulli(const Tensor& p, int64_t seed = -1, int64_t offset = -1) {
  static const Op op("bernoulli");
  return call(op, {p, seed, offset});
}
inline Tensor bernoulli_p(const Tensor& self, double p, int64_t seed = -1, int64_t offset = -1) {
  static const Op op("bernoulli_p");
  return call(op, {self, p, seed, offset});
}
inline Tensor randint(int64_t low, int64_t high, std::vector<int64_t> size, tsr_dtype_t dt = TSR_I64, Device dev = {},
                      int64_t seed = -1, int64_t offset = -1) {
  static const Op op("randint");
  return call(op, {low, high, std::move(size), dt, dev, seed, offset});
}
inline Tensor normal(double mean, double std, std::vector<int64_t> size, tsr_dtype_t dt = TSR_F32, Device dev = {},
                     int64_t seed = -1, int64_t offset = -1) {
  static const Op op("normal");
  return call(op, {mean, std, std::move(size), dt, dev, seed, offset});
}
inline Tensor normal(const Tensor& mean, const Tensor& std, int64_t seed = -1, int64_t offset = -1) {
  static const Op op("normal_tensor");
  return call(op, {mean, std, seed, offset});
}
inline Tensor& normal_(Tensor& self, double mean = 0, double std = 1, int64_t seed = -1, int64_t offset = -1) {
  static const Op op("normal_");
  call(op, {self, mean, std, seed, offset});
  return self;
}
inline Tensor& uniform_(Tensor& self, double from = 0, double to = 1, int64_t seed = -1, int64_t offset = -1) {
  static const Op op("uniform_");
  call(op, {self, from, to, seed, offset});
  return self;
}
inline Tensor rand_like(const Tensor& self, std::optional<tsr_dtype_t> dt = std::nullopt) {
  static const Op op("rand_like");
  return call(op, {self, dt ? Arg(*dt) : Arg(none)});
}
inline Tensor randn_like(const Tensor& self, std::optional<tsr_dtype_t> dt = std::nullopt) {
  static const Op op("randn_like");
  return call(op, {self, dt ? Arg(*dt) : Arg(none)});
}
inline Tensor randperm(int64_t n, tsr_dtype_t dt = TSR_I64, Device dev = {}, int64_t seed = -1, int64_t offset = -1) {
  static const Op op("randperm");
  return call(op, {n, dt, dev, seed, offset});
}
inline Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement = false, int64_t seed = -1,
                          int64_t offset = -1) {
  static const Op op("multinomial");
  return call(op, {probs, num_samples, replacement, seed, offset});
}

}  // namespace tsr
