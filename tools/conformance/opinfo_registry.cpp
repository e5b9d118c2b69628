// The OpInfo list (families register themselves, see opinfo.hpp) and the sample helpers.
#include <random>

#include "opinfo.hpp"

namespace tsr::conformance {

std::vector<OpInfo> all_opinfos() {
  std::vector<OpInfo> v;
  for (const auto& f : OpInfoFamilies::all()) f.fn(v);
  return v;
}

static int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

tsr::Tensor random_f64(const Shape& shape, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 1);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(count(shape)));
  for (double& x : v) x = dist(rng);
  if (!v.empty() && v[0] == 0.0) v[0] = (lo + hi) / 2 == 0 ? hi / 2 : (lo + hi) / 2;
  return tsr::from_vector(v, shape, tsr::Device::cpu());
}

tsr::Tensor random_f64_away_from_zero(const Shape& shape, uint64_t seed, double lo, double hi) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 2);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(count(shape)));
  for (double& x : v) x = (rng() & 1) ? dist(rng) : -dist(rng);
  return tsr::from_vector(v, shape, tsr::Device::cpu());
}

tsr::Tensor random_index(const Shape& shape, uint64_t seed, int64_t lo, int64_t hi) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 3);
  std::vector<int64_t> v(static_cast<size_t>(count(shape)));
  for (int64_t& x : v) x = hi > lo ? lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo)) : lo;
  return tsr::from_vector(v, shape, tsr::Device::cpu());
}

tsr::Tensor random_mask(const Shape& shape, uint64_t seed, double p) {
  std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 4);
  std::bernoulli_distribution dist(p);
  std::vector<bool> v(static_cast<size_t>(count(shape)));
  bool any = false;
  for (size_t i = 0; i < v.size(); ++i) any |= (v[i] = dist(rng));
  if (!v.empty() && !any) v[0] = true;
  return tsr::from_bools(v, shape, tsr::Device::cpu());
}

}  // namespace tsr::conformance
