// OpInfos of the factories and copies: full, arange, _copy (dtype conversions among every
// dtype, device round trips), rand, randn.
#include <cmath>
#include <cstdio>
#include <random>

#include "opinfo.hpp"

namespace tsr::conformance {

namespace {

const std::vector<tsr_dtype_t> kAll = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32,
                                       TSR_I64,  TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
const std::vector<tsr_dtype_t> kNumeric = {TSR_U8,  TSR_I8,   TSR_I16, TSR_I32, TSR_I64,
                                           TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
const std::vector<tsr_dtype_t> kFloat = {TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
const std::vector<Shape> kShapes = {{}, {0}, {1}, {7}, {3, 5}, {2, 0, 3}, {2, 3, 1}};

std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}

std::string shape_desc(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// Values in [0, 100) with every third one zero: in range for every dtype (no negative values
// into unsigned, nothing past int8), and both truth values for bool.
Tensor copy_source(const Shape& shape, uint64_t seed) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 100.0);
  std::vector<double> v(static_cast<size_t>(n));
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0 ? 0.0 : u(rng);
  return tsr::from_vector(v, shape, tsr::Device::cpu());
}

OpInfo full_info() {
  OpInfo o;
  o.name = "full";
  o.dtypes = kAll;
  o.differentiable = false;
  // No inputs to round: integer dtypes compare with the CPU in that dtype (2.75 -> 2).
  o.integer_reference_in_dtype = true;
  o.samples = [](uint64_t) {
    static const tsr::Op op("full");
    std::vector<Sample> v;
    for (const Shape& shape : kShapes)
      for (double value : {3.0, 2.75}) {
        Sample s;
        s.desc = shape_desc(shape) + " value " + num(value);
        s.run_at = [shape, value](const Tensors&, const Where& w) {
          return Tensors{tsr::call(op, {shape, tsr::detail::scalar_arg(value), w.dtype, w.device})};
        };
        s.run_out = [shape, value](const Tensors&, Tensors& outs) {
          tsr::call_multi(op, {shape, tsr::detail::scalar_arg(value), outs[0].dtype(), outs[0].device()}, outs);
        };
        v.push_back(std::move(s));
      }
    return v;
  };
  return o;
}

OpInfo arange_info() {
  OpInfo o;
  o.name = "arange";
  o.dtypes = kNumeric;
  o.differentiable = false;
  o.integer_reference_in_dtype = true;
  o.samples = [](uint64_t) {
    static const tsr::Op op("arange");
    struct Range {
      double start, end, step;
      bool integral;
    };
    std::vector<Sample> v;
    for (Range r : {Range{0, 7, 1, true}, Range{2, 20, 3, true}, Range{5, 0, -1, true}, Range{0, 0, 1, true},
                    Range{0.5, 7.0, 1.25, false}, Range{1, 12, 2.5, false}}) {
      Sample s;
      s.desc = "(" + num(r.start) + ", " + num(r.end) + ", " + num(r.step) + ")";
      auto args = [r](tsr_dtype_t dt, tsr::Device dev, Tensors* outs) {
        if (r.integral)
          return tsr::call_multi(
              op, {static_cast<int64_t>(r.start), static_cast<int64_t>(r.end), static_cast<int64_t>(r.step), dt, dev},
              outs ? *outs : Tensors{});
        return tsr::call_multi(op, {r.start, r.end, r.step, dt, dev}, outs ? *outs : Tensors{});
      };
      s.run_at = [args](const Tensors&, const Where& w) { return args(w.dtype, w.device, nullptr); };
      s.run_out = [args](const Tensors&, Tensors& outs) { args(outs[0].dtype(), outs[0].device(), &outs); };
      v.push_back(std::move(s));
    }
    return v;
  };
  return o;
}

// `_copy` is what Tensor::to and copy_ run: conversion from the dtype under test to every dtype
// (out= decides the target dtype), and copies to the CPU and back.
OpInfo copy_info() {
  OpInfo o;
  o.name = "_copy";
  o.dtypes = kAll;
  o.out_broadcasts = true;  // copy_ semantics
  o.samples = [](uint64_t seed) {
    static const tsr::Op op("_copy");
    std::vector<Sample> v;
    uint64_t k = 0;
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{5}, Shape{3, 4}, Shape{2, 3, 5}}) {
      for (tsr_dtype_t target : kAll) {
        Sample s;
        s.desc = shape_desc(shape) + " to " + tsr::dtype_name(target);
        s.inputs = {copy_source(shape, seed + ++k)};
        s.run = [target](const Tensors& in) { return Tensors{in[0].to(target)}; };
        s.run_out = [](const Tensors& in, Tensors& outs) { tsr::call_multi(op, {in[0]}, outs); };
        // Finite differences through a narrower dtype measure its rounding, not the gradient.
        if (target != TSR_F64) s.use_default_grad_inputs = false;
        v.push_back(std::move(s));
      }
      Sample s;
      s.desc = shape_desc(shape) + " to cpu:0 and back";
      s.inputs = {copy_source(shape, seed + ++k)};
      s.run = [](const Tensors& in) {
        Tensor host = in[0].to(tsr::Device::cpu());
        return Tensors{host, host.to(in[0].device())};
      };
      s.run_inplace = [](Tensors& in) {
        Tensor src = in[0].to(tsr::Device::cpu()).clone();
        in[0].fill_(0.0);
        in[0].copy_(src);
      };
      v.push_back(std::move(s));
      Sample direct;
      direct.desc = shape_desc(shape) + " functional _copy";
      direct.inputs = {copy_source(shape, seed + ++k)};
      direct.run = [](const Tensors& in) { return Tensors{tsr::call(op, {in[0]})}; };
      // The functional form has no derivative formula (Tensor::to's copies do).
      direct.use_default_grad_inputs = false;
      v.push_back(std::move(direct));
    }
    return v;
  };
  return o;
}

// Random numbers differ per device and dtype by design: shapes, range and spread are checked.
OpInfo random_info(const char* name, bool normal) {
  OpInfo o;
  o.name = name;
  o.dtypes = kFloat;
  o.differentiable = false;
  o.deterministic = false;
  o.samples = [normal](uint64_t) {
    // Ops cache their handle per object: one static each, never a temporary.
    static const tsr::Op rand_op("rand"), randn_op("randn");
    const tsr::Op* op = normal ? &randn_op : &rand_op;
    std::vector<Sample> v;
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{1}, Shape{17}, Shape{4, 33}}) {
      Sample s;
      s.desc = shape_desc(shape);
      s.run_at = [op, shape](const Tensors&, const Where& w) {
        return Tensors{tsr::call(*op, {shape, w.dtype, w.device})};
      };
      s.run_out = [op, shape](const Tensors&, Tensors& outs) {
        tsr::call_multi(*op, {shape, outs[0].dtype(), outs[0].device()}, outs);
      };
      s.validate = [normal](const Tensors& r) -> std::string {
        if (!tsr::is_floating(r[0].dtype())) return std::string("dtype ") + tsr::dtype_name(r[0].dtype());
        std::vector<double> x = r[0].to(tsr::Device::cpu(), TSR_F64).contiguous().to_vector<double>();
        double lo = 1e300, hi = -1e300, mean = 0;
        for (double e : x) {
          if (!std::isfinite(e)) return "a non-finite value";
          if (!normal && !(e >= 0.0 && e < 1.0)) return "value " + std::to_string(e) + " outside [0, 1)";
          if (normal && std::fabs(e) > 8) return "value " + std::to_string(e) + " implausible for N(0, 1)";
          lo = std::min(lo, e);
          hi = std::max(hi, e);
          mean += e;
        }
        if (x.size() >= 16 && lo == hi) return "all " + std::to_string(x.size()) + " values equal";
        if (x.size() >= 100) {
          mean /= static_cast<double>(x.size());
          double expect = normal ? 0.0 : 0.5, spread = normal ? 0.5 : 0.15;
          if (std::fabs(mean - expect) > spread)
            return "mean " + std::to_string(mean) + " far from " + std::to_string(expect);
        }
        return "";
      };
      v.push_back(std::move(s));
    }
    return v;
  };
  return o;
}

}  // namespace

TSR_OPINFOS(factory) {
  v.push_back(full_info());
  v.push_back(arange_info());
  v.push_back(copy_info());
  v.push_back(random_info("rand", false));
  v.push_back(random_info("randn", true));
}

}  // namespace tsr::conformance
