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

// Whether broadcasting b against a leaves a's shape (an in-place op may not grow self).
bool keeps_shape(const Shape& a, const Shape& b) {
  if (b.size() > a.size()) return false;
  for (size_t i = 0; i < b.size(); ++i) {
    int64_t x = a[a.size() - b.size() + i], y = b[i];
    if (y != 1 && y != x) return false;
  }
  return true;
}

// inplace: the "name_" op checked where the result has self's shape (nullptr: none).
OpInfo binary_info(const char* name, Fn2 fn, Gen ga, Gen gb, std::vector<tsr_dtype_t> dtypes, bool differentiable,
                   bool has_out = true, double tol_scale = 1, const char* inplace = nullptr) {
  OpInfo o;
  o.name = name;
  o.dtypes = std::move(dtypes);
  o.differentiable = differentiable;
  o.tol_scale = tol_scale;
  o.integer_reference_in_dtype = true;
  o.samples = [name, fn, ga, gb, has_out, inplace](uint64_t seed) {
    const std::vector<std::pair<Shape, Shape>> shapes = {{{3, 5}, {5}}, {{2, 1, 3}, {4, 3}}, {{7}, {7}}, {{0, 3}, {3}},
                                                         {{}, {}},      {{1}, {5}}};
    std::vector<Sample> out;
    for (const auto& sp : shapes) {
      Sample s;
      s.desc = describe(tsr::empty(sp.first)) + " x " + describe(tsr::empty(sp.second));
      s.inputs = {ga(sp.first, seed++), gb(sp.second, seed++)};
      s.run = [fn](const Tensors& in) { return Tensors{fn(in[0], in[1])}; };
      if (has_out) {
        s.run_out = [name](const Tensors& in, Tensors& outs) { tsr::call_multi(op_of(name), {in[0], in[1]}, outs); };
      }
      if (inplace && keeps_shape(sp.first, sp.second)) {
        s.run_inplace = [inplace](Tensors& in) { tsr::call(op_of(inplace), {in[0], in[1]}); };
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
    const std::vector<std::vector<Shape>> shapes = {
        {{2, 3, 4}, {3, 4}, {2, 1, 4}}, {{5}, {5}, {5}}, {{0, 2}, {2}, {1}}};
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
  // Rounded division in every dtype from one set of samples: an integer plus a random
  // fraction truncates to an integer for integer dtypes (divisors +-(m + f), m >= 1: never
  // zero), while float quotients stay off the steps (gradcheck steps by 1e-6 only).
  auto dividend = [](const Shape& s, uint64_t seed) {
    return tsr::add(random_index(s, seed, -40, 40).to(TSR_F64), random_f64(s, seed + 7, 0.2, 0.8));
  };
  auto divisor = [](const Shape& s, uint64_t seed) {
    tsr::Tensor m = tsr::add(random_index(s, seed, 1, 9).to(TSR_F64), random_f64(s, seed + 7, 0.1, 0.9));
    return tsr::where(random_mask(s, seed + 1), m, tsr::neg(m));
  };
  std::vector<tsr_dtype_t> rounding = floats();
  for (tsr_dtype_t d : {TSR_I8, TSR_I16, TSR_I32, TSR_I64}) rounding.push_back(d);
  auto bits = [](const Shape& s, uint64_t seed) { return random_index(s, seed, 0, 100).to(TSR_F64); };
  auto counts = [](const Shape& s, uint64_t seed) { return random_index(s, seed, 0, 70).to(TSR_F64); };
  std::vector<tsr_dtype_t> num = floats();
  for (tsr_dtype_t d : {TSR_I32, TSR_I64}) num.push_back(d);
  std::vector<tsr_dtype_t> wide_num = wide_floats();
  for (tsr_dtype_t d : {TSR_I32, TSR_I64}) wide_num.push_back(d);
  const std::vector<tsr_dtype_t> ints_bool = {TSR_BOOL, TSR_U8, TSR_I8, TSR_I16, TSR_I32, TSR_I64};
  const std::vector<tsr_dtype_t> ints = {TSR_U8, TSR_I8, TSR_I16, TSR_I32, TSR_I64};

  v.push_back(binary_info(
      "add", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::add(a, b, 2); }, u, u, num, true, false));
  v.push_back(binary_info(
      "sub", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::sub(a, b); }, u, u, num, true, true, 1,
      "sub_"));
  v.push_back(binary_info(
      "mul", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::mul(a, b); }, u, u, num, true, true, 1,
      "mul_"));
  v.push_back(binary_info(
      "div", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::div(a, b); }, u, nz, floats(), true, true, 1,
      "div_"));
  v.push_back(binary_info(
      "maximum", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::maximum(a, b); }, u, u, num, true));
  v.push_back(binary_info(
      "minimum", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::minimum(a, b); }, u, u, num, true));
  v.push_back(binary_info(
      "pow", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::pow(a, b); }, pos, u, floats(), true, true, 4,
      "pow_"));
  for (const char* cmp : {"eq", "ne", "lt", "le", "gt", "ge"}) {
    v.push_back(binary_info(
        cmp,
        [cmp](const tsr::Tensor& a, const tsr::Tensor& b) {
          return tsr::call(op_of(cmp), {a, b});
        },
        u, u, wide_num, false));
  }
  v.push_back(binary_info(
      "div_mode", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::div(a, b, "floor"); }, dividend, divisor,
      rounding, true, false));
  v.push_back(binary_info(
      "remainder", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::remainder(a, b); }, dividend, divisor,
      rounding, true, true, 4, "remainder_"));
  v.push_back(binary_info(
      "fmod", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::fmod(a, b); }, dividend, divisor, rounding,
      true, true, 4, "fmod_"));
  v.push_back(binary_info(
      "atan2", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::atan2(a, b); }, nz, nz, floats(), true,
      true, 1, "atan2_"));
  v.push_back(binary_info(
      "hypot", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::hypot(a, b); }, nz, nz, floats(), true,
      true, 1, "hypot_"));
  v.push_back(binary_info(
      "copysign", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::copysign(a, b); }, nz, nz, floats(),
      true, true, 1, "copysign_"));
  v.push_back(binary_info(
      "xlogy", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::xlogy(a, b); }, u, pos, floats(), true,
      true, 1, "xlogy_"));
  v.push_back(binary_info(
      "logaddexp", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::logaddexp(a, b); }, u, u, floats(),
      true));
  v.push_back(binary_info(
      "logaddexp2", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::logaddexp2(a, b); }, u, u, floats(),
      true));
  v.push_back(binary_info(
      "fmax", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::fmax(a, b); }, u, u, num, true));
  v.push_back(binary_info(
      "fmin", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::fmin(a, b); }, u, u, num, true));
  v.push_back(binary_info(
      "true_divide", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::true_divide(a, b); }, u, nz, floats(),
      true, true, 1, "true_divide_"));
  v.push_back(binary_info(
      "floor_divide", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::floor_divide(a, b); }, dividend,
      divisor, rounding, true, true, 1, "floor_divide_"));
  v.push_back(binary_info(
      "float_power", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::float_power(a, b); }, pos, u,
      {TSR_F64}, true));
  for (const char* l : {"logical_and", "logical_or", "logical_xor"}) {
    v.push_back(binary_info(
        l,
        [l](const tsr::Tensor& x, const tsr::Tensor& y) {
          return tsr::call(op_of(l), {x, y});
        },
        bits, bits, ints_bool, false, true));
  }
  v.push_back(binary_info(
      "isclose", [](const tsr::Tensor& a, const tsr::Tensor& b) { return tsr::isclose(a, b, 0.5, 0.1); }, u, u,
      wide_floats(), false, false));
  for (const char* b : {"bitwise_and", "bitwise_or", "bitwise_xor"}) {
    v.push_back(binary_info(
        b,
        [b](const tsr::Tensor& x, const tsr::Tensor& y) {
          return tsr::call(op_of(b), {x, y});
        },
        bits, bits, ints_bool, false, true, 1,
        b[8] == 'a'   ? "bitwise_and_"
        : b[8] == 'o' ? "bitwise_or_"
                      : "bitwise_xor_"));
  }
  v.push_back(binary_info(
      "bitwise_left_shift", [](const tsr::Tensor& x, const tsr::Tensor& y) { return tsr::bitwise_left_shift(x, y); },
      bits, counts, ints, false, true, 1, "bitwise_left_shift_"));
  v.push_back(binary_info(
      "bitwise_right_shift", [](const tsr::Tensor& x, const tsr::Tensor& y) { return tsr::bitwise_right_shift(x, y); },
      bits, counts, ints, false, true, 1, "bitwise_right_shift_"));

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
