// OpInfos of the binary family: broadcast, odd and empty shapes; out= where the op has it.
#include <functional>
#include <memory>
#include <string>

#include "opinfo.hpp"

namespace tsr::conformance {
namespace {

using Gen = std::function<tsr::Tensor(const Shape&, uint64_t)>;
using Fn2 = std::function<tsr::Tensor(const tsr::Tensor&, const tsr::Tensor&)>;

const std::vector<tsr_dtype_t>& floats() {
  static const std::vector<tsr_dtype_t> d = {TSR_F32, TSR_F64, TSR_F16, TSR_BF16};
  return d;
}

// Ops whose results jump (comparisons, rounding): reduced-precision inputs may land on the
// other side of a step than the float64 reference, so they are checked in f32/f64 only.
const std::vector<tsr_dtype_t>& wide_floats() {
  static const std::vector<tsr_dtype_t> d = {TSR_F32, TSR_F64};
  return d;
}

Gen uniform(double lo, double hi) {
  return [lo, hi](const Shape& s, uint64_t seed) { return random_f64(s, seed, lo, hi); };
}
Gen away(double lo, double hi) {
  return [lo, hi](const Shape& s, uint64_t seed) { return random_f64_away_from_zero(s, seed, lo, hi); };
}

// A long-lived handle per op name (tsr::Op caches by address).
const tsr::Op& op_of(const char* name) {
  static std::vector<std::unique_ptr<tsr::Op>> ops;
  for (const auto& o : ops)
    if (std::string(o->name()) == name) return *o;
  ops.push_back(std::make_unique<tsr::Op>(name));
  return *ops.back();
}

OpInfo binary_info(const char* name, Fn2 fn, Gen ga, Gen gb, std::vector<tsr_dtype_t> dtypes, bool differentiable,
                   bool has_out = true, double tol_scale = 1) {
  OpInfo o;
  o.name = name;
  o.dtypes = std::move(dtypes);
  o.differentiable = differentiable;
  o.tol_scale = tol_scale;
  o.samples = [name, fn, ga, gb, has_out](uint64_t seed) {
    const std::vector<std::pair<Shape, Shape>> shapes = {
        {{3, 5}, {5}}, {{2, 1, 3}, {4, 1}}, {{7}, {7}}, {{0, 3}, {3}}, {{}, {}}, {{1}, {5}}};
    std::vector<Sample> out;
    for (const auto& sp : shapes) {
      Sample s;
      s.desc = describe(tsr::empty(sp.first)) + " x " + describe(tsr::empty(sp.second));
      s.inputs = {ga(sp.first, seed++), gb(sp.second, seed++)};
      s.run = [fn](const Tensors& in) { return Tensors{fn(in[0], in[1])}; };
      if (has_out) {
        s.run_out = [name](const Tensors& in, Tensors& outs) { tsr::call_multi(op_of(name), {in[0], in[1]}, outs); };
      }
      out.push_back(std::move(s));
    }
    return out;
  };
  return o;
}

OpInfo ternary_info(const char* name, std::function<tsr::Tensor(const Tensors&)> fn, std::vector<Gen> gens,
                    bool differentiable = true) {
  OpInfo o;
  o.name = name;
  o.dtypes = floats();
  o.differentiable = differentiable;
  o.tol_scale = 4;
  o.samples = [fn, gens](uint64_t seed) {
    const std::vector<std::vector<Shape>> shapes = {{{3, 4}, {4}, {3, 1}}, {{5}, {5}, {5}}, {{0, 2}, {2}, {1}}};
    std::vector<Sample> out;
    for (const auto& sh : shapes) {
      Sample s;
      s.desc = "[" + std::to_string(sh[0].size()) + "-d broadcast]";
      for (size_t i = 0; i < 3; ++i) s.inputs.push_back(gens[i](sh[i], seed++));
      s.run = [fn](const Tensors& in) { return Tensors{fn(in)}; };
      out.push_back(std::move(s));
    }
    return out;
  };
  return o;
}

}  // namespace

TSR_OPINFOS(binary) {
  auto u = uniform(-2, 2);
  auto nz = away(0.5, 2);
  auto pos = uniform(0.5, 2);
  v.push_back(binary_info("add", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::add(a, b, 2.0); }, u, u,
                          floats(), true, false));
  v.push_back(binary_info("sub", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::sub(a, b); }, u, u, floats(), true));
  v.push_back(binary_info("mul", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::mul(a, b); }, u, u, floats(), true));
  v.push_back(binary_info("div", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::div(a, b); }, u, nz, floats(), true));
  v.push_back(binary_info("maximum", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::maximum(a, b); }, u, u, floats(), true));
  v.push_back(binary_info("minimum", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::minimum(a, b); }, u, u, floats(), true));
  v.push_back(binary_info("pow", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::pow(a, b); }, pos, u, floats(), true, true, 4));
  for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    v.push_back(binary_info(cmp, [cmp](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::call(op_of(cmp), {a, b}); },
                            u, u, wide_floats(), false));
  }
  v.push_back(binary_info("div_mode", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::div(a, b, "floor"); },
                          uniform(-5, 5), nz, wide_floats(), true, false));
  v.push_back(binary_info("remainder", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::remainder(a, b); },
                          uniform(-5, 5), nz, floats(), true, true, 4));
  v.push_back(binary_info("fmod", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::fmod(a, b); },
                          uniform(-5, 5), nz, floats(), true, true, 4));
  v.push_back(binary_info("atan2", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::atan2(a, b); }, nz, nz, floats(), true));
  v.push_back(binary_info("hypot", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::hypot(a, b); }, nz, nz, floats(), true));
  v.push_back(binary_info("copysign", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::copysign(a, b); }, nz, nz, floats(), true));
  v.push_back(binary_info("xlogy", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::xlogy(a, b); }, u, pos, floats(), true));
  v.push_back(binary_info("logaddexp", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::logaddexp(a, b); }, u, u, floats(), true));
  v.push_back(binary_info("logaddexp2", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::logaddexp2(a, b); }, u, u, floats(), true));
  v.push_back(binary_info("fmax", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::fmax(a, b); }, u, u, floats(), true));
  v.push_back(binary_info("fmin", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::fmin(a, b); }, u, u, floats(), true));
  v.push_back(binary_info("true_divide", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::true_divide(a, b); }, u, nz, floats(), true));
  v.push_back(binary_info("floor_divide", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::floor_divide(a, b); },
                          uniform(-5, 5), nz, wide_floats(), true));
  v.push_back(binary_info("float_power", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::float_power(a, b); },
                          pos, u, {TSR_F64}, true));
  v.push_back(binary_info("logical_and", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::logical_and(a, b); },
                          u, u, wide_floats(), false));
  v.push_back(binary_info("logical_or", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::logical_or(a, b); },
                          u, u, wide_floats(), false));
  v.push_back(binary_info("logical_xor", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::logical_xor(a, b); },
                          u, u, wide_floats(), false));
  v.push_back(binary_info("isclose", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::isclose(a, b, 0.5, 0.1); },
                          u, u, wide_floats(), false, false));
  // Integer-only ops: int64 index inputs keep their dtype in the runner.
  auto ints = [](const Shape& s, uint64_t seed) { return random_index(s, seed, -40, 40); };
  auto counts = [](const Shape& s, uint64_t seed) { return random_index(s, seed, -2, 70); };
  for (const char* b : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
    v.push_back(binary_info(b, [b](const tsr::Tensor& x, const tsr::Tensor& y) { return tsr::call(op_of(b), {x, y}); },
                            ints, ints, {TSR_I64}, false));
  }
  v.push_back(binary_info("bitwise_left_shift",
                          [](const tsr::Tensor& x, const tsr::Tensor& y) { return tsr::bitwise_left_shift(x, y); }, ints,
                          counts, {TSR_I64}, false));
  v.push_back(binary_info("bitwise_right_shift",
                          [](const tsr::Tensor& x, const tsr::Tensor& y) { return tsr::bitwise_right_shift(x, y); }, ints,
                          counts, {TSR_I64}, false));

  v.push_back(ternary_info("where", [](const Tensors& in) { return tsr::where(tsr::gt(in[2], 0.0), in[0], in[1]); },
                           {uniform(-2, 2), uniform(-2, 2), uniform(-1, 1)}));
  v.push_back(ternary_info("lerp", [](const Tensors& in) { return tsr::lerp(in[0], in[1], in[2]); },
                           {uniform(-2, 2), uniform(-2, 2), uniform(-0.5, 1.5)}));
  v.push_back(ternary_info("addcmul", [](const Tensors& in) { return tsr::addcmul(in[0], in[1], in[2], 0.5); },
                           {uniform(-2, 2), uniform(-2, 2), uniform(-2, 2)}));
  v.push_back(ternary_info("addcdiv", [](const Tensors& in) { return tsr::addcdiv(in[0], in[1], in[2], -1.5); },
                           {uniform(-2, 2), uniform(-2, 2), away(0.5, 2)}));
  v.push_back(ternary_info("clamp_tensor", [](const Tensors& in) { return tsr::clamp(in[0], in[1], in[2]); },
                           {uniform(-2, 2), uniform(-1.5, -0.5), uniform(0.5, 1.5)}));

  OpInfo c;
  c.name = "clamp";
  c.dtypes = floats();
  c.samples = [](uint64_t seed) {
    std::vector<Sample> out;
    for (const Shape& s : {Shape{4, 5}, Shape{7}, Shape{0}, Shape{}}) {
      Sample smp;
      smp.desc = describe(tsr::empty(s));
      smp.inputs = {random_f64(s, seed++)};
      smp.run = [](const Tensors& in) { return Tensors{tsr::clamp(in[0], -0.5, 0.75)}; };
      out.push_back(std::move(smp));
    }
    return out;
  };
  v.push_back(std::move(c));
  for (const char* name : {"clamp_min", "clamp_max"}) {
    OpInfo o;
    o.name = name;
    o.dtypes = floats();
    o.samples = [name](uint64_t seed) {
      std::vector<Sample> out;
      for (const Shape& s : {Shape{3, 4}, Shape{0}, Shape{}}) {
        Sample smp;
        smp.desc = describe(tsr::empty(s));
        smp.inputs = {random_f64(s, seed++)};
        smp.run = [name](const Tensors& in) { return Tensors{tsr::call(op_of(name), {in[0], 0.25})}; };
        out.push_back(std::move(smp));
      }
      return out;
    };
    v.push_back(std::move(o));
  }
  OpInfo ls;
  ls.name = "lerp_scalar";
  ls.dtypes = floats();
  ls.tol_scale = 4;
  ls.samples = [](uint64_t seed) {
    std::vector<Sample> out;
    for (const auto& sp : std::vector<std::pair<Shape, Shape>>{{{3, 4}, {4}}, {{5}, {5}}, {{0}, {1}}}) {
      Sample smp;
      smp.desc = describe(tsr::empty(sp.first)) + " x " + describe(tsr::empty(sp.second));
      smp.inputs = {random_f64(sp.first, seed++), random_f64(sp.second, seed++)};
      smp.run = [](const Tensors& in) { return Tensors{tsr::lerp(in[0], in[1], 0.3)}; };
      out.push_back(std::move(smp));
    }
    return out;
  };
  v.push_back(std::move(ls));
}

}  // namespace tsr::conformance
