// Helpers of the binary family's tests: float64 references over broadcast shapes, and a sweep
// of a binary op over shapes, dtypes, layouts and out=.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "op_test.hpp"

namespace tsr::binarytest {

using optest::Shape;

inline Shape broadcast(const std::vector<Shape>& shapes) {
  size_t nd = 0;
  for (const Shape& s : shapes) nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (const Shape& s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t& o = out[nd - s.size() + i];
      if (s[i] != 1) o = s[i];
    }
  for (const Shape& s : shapes)
    for (size_t i = 0; i < s.size(); ++i)
      if (s[i] == 0) out[nd - s.size() + i] = 0;
  return out;
}

// f applied elementwise to the broadcast of `ins` (float64 values).
inline std::vector<double> ref_nary(const std::vector<Tensor>& ins,
                                    const std::function<double(const std::vector<double>&)>& f, Shape* out_shape) {
  std::vector<Shape> shapes;
  std::vector<std::vector<double>> vals;
  for (const Tensor& t : ins) {
    shapes.push_back(t.sizes());
    vals.push_back(optest::values(t));
  }
  Shape out = broadcast(shapes);
  *out_shape = out;
  int64_t n = optest::numel_of(out);
  std::vector<double> res(static_cast<size_t>(n));
  std::vector<double> args(ins.size());
  for (int64_t lin = 0; lin < n; ++lin) {
    for (size_t k = 0; k < ins.size(); ++k) {
      const Shape& s = shapes[k];
      int64_t rem = lin, idx = 0, stride = 1;
      for (int d = int(out.size()) - 1; d >= 0; --d) {
        int64_t coord = rem % out[d];
        rem /= out[d];
        int sd = d - int(out.size() - s.size());
        if (sd >= 0) {
          if (s[sd] != 1) idx += coord * stride;
          stride *= s[sd];
        }
      }
      args[k] = vals[k][static_cast<size_t>(idx)];
    }
    res[static_cast<size_t>(lin)] = f(args);
  }
  return res;
}

// A long-lived Op per name (tsr::Op caches its handle by address: temporaries would collide).
inline const Op& op_named(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Op>> ops;
  auto it = ops.find(name);
  if (it == ops.end()) {
    // Op keeps the char*: point it at the map's own key (map nodes never move).
    it = ops.emplace(name, nullptr).first;
    it->second = std::make_unique<Op>(it->first.c_str());
  }
  return *it->second;
}

using Fn2 = std::function<Tensor(const Tensor&, const Tensor&)>;
using Ref2 = std::function<double(double, double)>;
using Gen = std::function<Tensor(const Shape&, uint64_t)>;

inline const std::vector<std::pair<Shape, Shape>>& shape_pairs() {
  static const std::vector<std::pair<Shape, Shape>> p = {{{3, 5}, {5}}, {{2, 1, 4}, {3, 1}}, {{0, 3}, {3}}, {{7}, {1}},
                                                         {{}, {4}},     {{1, 1}, {1, 1}},    {{13}, {13}}};
  return p;
}

// Sweep: shapes with broadcasting, every dtype in `dtypes` (inputs rounded to it first), a
// non-contiguous layout and out= (when `name` is given).
inline void check_binary(const char* name, const Fn2& fn, const Ref2& ref, const std::vector<tsr_dtype_t>& dtypes,
                         const Gen& gen_a, const Gen& gen_b, double tol_scale = 1) {
  uint64_t seed = 10;
  for (tsr_dtype_t dt : dtypes) {
    for (const auto& sp : shape_pairs()) {
      SCOPED_TRACE(std::string(name) + " " + dtype_name(dt));
      Tensor a = gen_a(sp.first, ++seed).to(dt), b = gen_b(sp.second, ++seed).to(dt);
      Shape shape;
      std::vector<double> expected = ref_nary(
          {a, b}, [&](const std::vector<double>& x) { return ref(x[0], x[1]); }, &shape);
      auto tol = optest::default_tol(dt);
      double rtol = tol.first * tol_scale, atol = tol.second * tol_scale;
      Tensor r = fn(a, b);
      EXPECT_EQ(r.dtype(), dt);
      EXPECT_TRUE(optest::close(r, expected, shape, rtol, atol));
      if (a.dim() >= 1 && b.dim() >= 1) {
        EXPECT_TRUE(optest::close(fn(optest::noncontig(a), optest::noncontig(b)), expected, shape, rtol, atol));
      }
      Tensor out = full(shape, -7.0, dt);
      call_multi(op_named(name), {a, b}, {out});
      EXPECT_TRUE(optest::close(out, expected, shape, rtol, atol));
    }
  }
}

inline Gen uniform(double lo, double hi) {
  return [lo, hi](const Shape& s, uint64_t seed) { return optest::randu(s, seed, lo, hi); };
}
inline Gen away(double lo, double hi) {
  return [lo, hi](const Shape& s, uint64_t seed) { return optest::rand_away(s, seed, lo, hi); };
}

inline const std::vector<tsr_dtype_t>& float_dtypes() {
  static const std::vector<tsr_dtype_t> d = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};
  return d;
}

// Gradcheck of a two-input op for same-shape and broadcast inputs.
inline void grad_binary(const Fn2& fn, const Gen& ga, const Gen& gb) {
  const std::vector<std::pair<Shape, Shape>> shapes = {{{2, 3}, {2, 3}}, {{3, 1}, {4}}, {{4}, {}}};
  uint64_t seed = 100;
  for (const auto& sp : shapes) {
    Tensor a = ga(sp.first, ++seed), b = gb(sp.second, ++seed);
    EXPECT_TRUE(optest::gradcheck([&](const std::vector<Tensor>& x) { return fn(x[0], x[1]); }, {a, b}));
  }
}

}  // namespace tsr::binarytest
