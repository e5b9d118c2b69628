// The conformance runner (see runner.hpp for what is checked).
#include "runner.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>

#include "runner_util.hpp"

namespace tsr::conformance {

using namespace detail;

const char* outcome_name(Outcome o) {
  switch (o) {
    case Outcome::Pass:
      return "pass";
    case Outcome::Fail:
      return "fail";
    case Outcome::Skip:
      return "skip";
  }
  return "?";
}

std::vector<tsr::Device> loaded_devices(tsr_runtime_t* rt) {
  std::vector<tsr::Device> out;
  const tsr_api_t* a = tsr::api();
  int32_t types = a->device_type_count(rt);
  for (int32_t ty = 0; ty < types; ++ty) {
    int32_t n = a->device_count(rt, ty);
    for (int32_t i = 0; i < n; ++i) out.push_back(tsr::Device(tsr_device_t{ty, i}));
  }
  std::stable_partition(out.begin(), out.end(), [](const tsr::Device& d) { return d == tsr::Device::cpu(); });
  return out;
}

std::string device_name(tsr_runtime_t* rt, const tsr::Device& d) { return d.str(rt); }

Tol default_tolerance(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_F64:
      return {1e-10, 1e-12};
    case TSR_F32:
      return {1e-5, 1e-6};
    case TSR_F16:
      return {2e-3, 2e-3};
    case TSR_BF16:
      return {1.6e-2, 1e-2};
    default:
      return {0, 0};
  }
}

Tol tolerance(const OpInfo& info, tsr_dtype_t dt) {
  auto it = info.tol.find(dt);
  Tol t = it != info.tol.end() ? it->second : default_tolerance(dt);
  return {t.rtol * info.tol_scale, t.atol * info.tol_scale};
}

namespace detail {

std::vector<double> values(const tsr::Tensor& t) {
  return t.to(tsr::Device::cpu(), TSR_F64).contiguous().to_vector<double>();
}

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// A float64 reference value as the integer or bool dtype dt holds it: truncated (a Scalar 1.5
// filled into an int tensor is 1), wrapped in two's complement (integer arithmetic overflows
// alike on every backend); nonzero is true for bool.
double convert_to(tsr_dtype_t dt, double v) {
  if (!std::isfinite(v)) return v;
  if (dt == TSR_BOOL) return v != 0 ? 1.0 : 0.0;
  v = std::trunc(v);
  int bits = dt == TSR_U8 || dt == TSR_I8 ? 8 : dt == TSR_I16 ? 16 : dt == TSR_I32 ? 32 : 0;
  if (!bits) return v;
  const double m = std::ldexp(1.0, bits);
  double w = std::fmod(v, m);
  if (w < 0) w += m;
  if (dt != TSR_U8 && w >= m / 2) w -= m;
  return w;
}

std::string compare(const tsr::Tensor& actual, const tsr::Tensor& expected, Tol tol, bool exact) {
  if (actual.sizes() != expected.sizes())
    return "shape " + shape_str(actual.sizes()) + " but the reference has " + shape_str(expected.sizes());
  std::vector<double> a = values(actual), e = values(expected);
  if (exact && !tsr::is_floating(actual.dtype()))
    for (double& y : e) y = convert_to(actual.dtype(), y);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double x = a[i], y = e[i];
    bool ok;
    if (std::isnan(y) || std::isnan(x))
      ok = std::isnan(x) && std::isnan(y);
    else if (exact || std::isinf(y))
      ok = x == y;
    else
      ok = std::fabs(x - y) <= tol.atol + tol.rtol * std::fabs(y);
    if (!ok && bad++ == 0) first = i;
  }
  if (!bad) return "";
  std::ostringstream os;
  os.precision(10);
  os << bad << " of " << a.size() << " elements differ; first at flat index " << first << ": got " << a[first]
     << ", reference " << e[first];
  if (exact)
    os << " (exact match required)";
  else
    os << " (rtol " << tol.rtol << ", atol " << tol.atol << ")";
  return os.str();
}

Tensors run_sample(const Sample& s, const Tensors& inputs, const Where& where) {
  if (s.run_at) return s.run_at(inputs, where);
  if (!s.run) throw tsr::Error(TSR_INVALID_ARGUMENT, "sample '" + s.desc + "' has neither run nor run_at");
  return s.run(inputs);
}

}  // namespace detail

namespace {

bool is_cpu_type(const tsr::Device& d) { return d.d.type == TSR_DEVICE_TYPE_CPU; }

bool is_integer(tsr_dtype_t dt) { return !tsr::is_floating(dt) && dt != TSR_BOOL; }

// A float64 sample input as dtype dt on the CPU. Integer dtypes go through int64 (truncation,
// then two's-complement wrap): well defined for negative values into unsigned types, where a
// direct float conversion is not (and backends disagree).
Tensor as_dtype(const Tensor& t, tsr_dtype_t dt) {
  if (is_integer(dt) && dt != TSR_I64) return t.to(TSR_I64).to(dt);
  return t.to(dt);
}

// Floating inputs are float64 in the sample; they become `dt` on `dev` (others only move).
Tensors convert_inputs(const Tensors& in, const tsr::Device& dev, tsr_dtype_t dt) {
  Tensors out;
  for (const Tensor& t : in) {
    if (!t.defined())
      out.push_back(t);
    else if (t.dtype() == TSR_F64)
      out.push_back(as_dtype(t, dt).to(dev));
    else
      out.push_back(t.to(dev));
  }
  return out;
}

// The reference's inputs: the values the device sees (rounded through dt), in ref_dt on cpu:0.
Tensors reference_inputs(const Tensors& in, tsr_dtype_t dt, tsr_dtype_t ref_dt) {
  Tensors out;
  for (const Tensor& t : in) {
    if (t.defined() && t.dtype() == TSR_F64)
      out.push_back(as_dtype(t, dt).to(ref_dt));
    else
      out.push_back(t);
  }
  return out;
}

// A non-contiguous tensor with t's values: a transposed copy transposed back where that is not
// contiguous, else every other element of a doubled buffer. 0-dim and single-element tensors
// stay as they are.
Tensor noncontig(const Tensor& t) {
  if (!t.defined() || t.numel() < 2) return t;
  if (t.dim() >= 2) {
    Tensor v = t.transpose(0, t.dim() - 1).contiguous().transpose(0, t.dim() - 1);
    if (!v.is_contiguous()) return v;
  }
  Shape sizes = t.sizes(), strides(sizes.size(), 2);
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 2; d >= 0; --d) strides[d] = strides[d + 1] * sizes[d + 1];
  Tensor big = tsr::empty({t.numel() * 2}, t.dtype(), t.device());
  Tensor v = big.as_strided(sizes, strides, 0);
  v.copy_(t);
  return v;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[from.size() - 1 - i], t = to[to.size() - 1 - i];
    if (f != t && f != 1) return false;
  }
  return true;
}

// A shape an out= tensor for a result of shape s must be refused with; empty when none exists
// (for ops whose out= broadcasts, a 0-dim result fits everything).
std::optional<Shape> wrong_out_shape(const Shape& s, bool out_broadcasts) {
  std::vector<Shape> candidates;
  if (s.empty()) {
    candidates.push_back({2});
  } else {
    Shape a = s;
    a[0] += 1;
    candidates.push_back(a);
    Shape b = s;
    b.push_back(2);
    candidates.push_back(b);
    int64_t n = 1;
    for (int64_t d : s) n *= d;
    candidates.push_back({n + 1});
  }
  for (const Shape& c : candidates)
    if (!out_broadcasts || !broadcasts_to(s, c)) return c;
  return std::nullopt;
}

class OpRun {
 public:
  OpRun(tsr_runtime_t* rt, const OpInfo& info, const tsr::Device& dev, const RunOptions& opts)
      : rt_(rt), info_(info), dev_(dev), opts_(opts), dev_name_(device_name(rt, dev)) {}

  std::vector<CheckResult> run() {
    std::vector<Sample> samples;
    try {
      samples = info_.samples(opts_.seed);
    } catch (const std::exception& e) {
      add("", "samples", "", Outcome::Fail, std::string("building the samples threw: ") + e.what());
      return std::move(results_);
    }
    if (samples.empty()) add("", "samples", "", Outcome::Fail, "the OpInfo has no samples");
    if (opts_.smoke && samples.size() > 1) samples.resize(1);
    if (info_.dtypes.empty()) add("", "samples", "", Outcome::Fail, "the OpInfo lists no dtypes");
    for (tsr_dtype_t dt : info_.dtypes) {
      if (!opts_.dtypes.empty() && std::find(opts_.dtypes.begin(), opts_.dtypes.end(), dt) == opts_.dtypes.end())
        continue;
      for (const Sample& s : samples) run_sample_checks(s, dt);
    }
    if (dev_ == tsr::Device::cpu() && info_.differentiable && opts_.gradcheck && !opts_.smoke &&
        (opts_.dtypes.empty() || std::count(opts_.dtypes.begin(), opts_.dtypes.end(), TSR_F64)))
      for (const Sample& s : samples) check_gradcheck(s);
    return std::move(results_);
  }

 private:
  void add(const std::string& dtype, const std::string& check, const std::string& sample, Outcome o,
           const std::string& msg = "") {
    results_.push_back({info_.name, dev_name_, dtype, check, sample, o, msg, false});
  }

  // Missing kernels are skips, except on CPU devices when they must support everything.
  bool may_skip() const { return !(is_cpu_type(dev_) && opts_.cpu_must_support_all_dtypes); }

  // Runs fn; an exception becomes a failed check (a skip for missing kernels where allowed).
  template <class F>
  void attempt(const std::string& dtype, const std::string& check, const Sample& s, F&& fn) {
    try {
      std::string msg = fn();
      add(dtype, check, s.desc, msg.empty() ? Outcome::Pass : Outcome::Fail, msg);
    } catch (const tsr::Error& e) {
      // A kernel the check needs (a copy, a fill) is missing on this device.
      if (e.code() == TSR_UNIMPLEMENTED && may_skip()) {
        add(dtype, check, s.desc, Outcome::Skip, e.what());
        results_.back().missing_kernel = true;
      }
      else
        add(dtype, check, s.desc, Outcome::Fail, std::string("threw: ") + e.what());
    } catch (const std::exception& e) {
      add(dtype, check, s.desc, Outcome::Fail, std::string("threw: ") + e.what());
    }
  }

  std::string compare_results(const Tensors& got, const Tensors& ref, tsr_dtype_t dt) const {
    if (got.size() != ref.size())
      return std::to_string(got.size()) + " results but the reference has " + std::to_string(ref.size());
    for (size_t k = 0; k < got.size(); ++k) {
      if (got[k].defined() != ref[k].defined())
        return "result " + std::to_string(k) + (got[k].defined() ? " is defined" : " is undefined") +
               " but the reference's is not";
      if (!got[k].defined()) continue;
      if (!info_.deterministic) {
        if (got[k].sizes() != ref[k].sizes())
          return "result " + std::to_string(k) + ": shape " + shape_str(got[k].sizes()) + " but the reference has " +
                 shape_str(ref[k].sizes());
        continue;
      }
      const tsr_dtype_t rdt = got[k].dtype();
      const bool exact = !tsr::is_floating(rdt);
      Tol a = tolerance(info_, dt), b = tolerance(info_, rdt);
      std::string msg = compare(got[k], ref[k], {std::max(a.rtol, b.rtol), std::max(a.atol, b.atol)}, exact);
      if (!msg.empty()) return "result " + std::to_string(k) + " (" + tsr::dtype_name(rdt) + "): " + msg;
    }
    return "";
  }

  void run_sample_checks(const Sample& s, tsr_dtype_t dt) {
    const std::string dn = tsr::dtype_name(dt);
    tsr::NoGradGuard no_grad;
    const bool int_dt = !tsr::is_floating(dt);
    const tsr_dtype_t ref_dt = int_dt && info_.integer_reference_in_dtype ? dt : TSR_F64;
    const Where where{dev_, dt};

    Tensors ref;
    try {
      Tensors ref_in = reference_inputs(s.inputs, dt, ref_dt);
      ref = s.reference ? s.reference(ref_in) : run_sample(s, ref_in, Where{tsr::Device::cpu(), ref_dt});
    } catch (const std::exception& e) {
      add(dn, "forward", s.desc, Outcome::Fail,
          std::string("the reference (cpu:0, ") + tsr::dtype_name(ref_dt) + ") threw: " + e.what());
      return;
    }

    Tensors in, got;
    try {
      in = convert_inputs(s.inputs, dev_, dt);
      got = run_sample(s, in, where);
    } catch (const tsr::Error& e) {
      if (e.code() == TSR_UNIMPLEMENTED && may_skip()) {
        add(dn, "forward", s.desc, Outcome::Skip, std::string("not implemented here: ") + e.what());
        results_.back().missing_kernel = true;
        return;
      }
      std::string why = e.code() == TSR_UNIMPLEMENTED
                            ? "the CPU backend must support every dtype the OpInfo lists, but: "
                            : "threw: ";
      add(dn, "forward", s.desc, Outcome::Fail, why + e.what());
      return;
    } catch (const std::exception& e) {
      add(dn, "forward", s.desc, Outcome::Fail, std::string("threw: ") + e.what());
      return;
    }

    bool forward_ok = false;
    attempt(dn, "forward", s, [&]() -> std::string {
      std::string msg = compare_results(got, ref, dt);
      if (msg.empty() && !(dev_ == tsr::Device::cpu())) msg = compare_dtypes_with_cpu(s, dt, got);
      if (msg.empty() && s.validate) msg = s.validate(got);
      forward_ok = msg.empty();
      return msg;
    });
    if (opts_.smoke) return;

    if (info_.noncontiguous && !s.inputs.empty()) check_noncontiguous(s, dt, in, ref);
    if (s.run_out) check_out(s, dt, in, got, ref);
    if (s.run_inplace) check_inplace(s, dt, in, got, ref);
    if (forward_ok && info_.differentiable && opts_.gradcheck && !(dev_ == tsr::Device::cpu()) &&
        (dt == TSR_F32 || dt == TSR_F64))
      check_device_grads(s, dt);
  }

  // Result dtypes on another device follow the CPU's for the same input dtype.
  std::string compare_dtypes_with_cpu(const Sample& s, tsr_dtype_t dt, const Tensors& got) {
    Tensors cpu = run_sample(s, convert_inputs(s.inputs, tsr::Device::cpu(), dt), Where{tsr::Device::cpu(), dt});
    for (size_t k = 0; k < got.size() && k < cpu.size(); ++k)
      if (got[k].defined() && cpu[k].defined() && got[k].dtype() != cpu[k].dtype())
        return "result " + std::to_string(k) + " is " + tsr::dtype_name(got[k].dtype()) + " but " +
               tsr::dtype_name(cpu[k].dtype()) + " on cpu:0";
    return "";
  }

  void check_noncontiguous(const Sample& s, tsr_dtype_t dt, const Tensors& in, const Tensors& ref) {
    bool any = false;
    for (const Tensor& t : in) any = any || (t.defined() && t.numel() >= 2);
    if (!any) return;
    attempt(tsr::dtype_name(dt), "noncontiguous", s, [&]() -> std::string {
      Tensors nc;
      for (const Tensor& t : in) nc.push_back(noncontig(t));
      for (const Tensor& t : nc)
        if (t.defined() && t.numel() >= 2 && t.is_contiguous()) return "could not make a non-contiguous input";
      Tensors got = run_sample(s, nc, Where{dev_, dt});
      std::string msg = compare_results(got, ref, dt);
      if (msg.empty() && s.validate) msg = s.validate(got);
      return msg;
    });
  }

  void check_out(const Sample& s, tsr_dtype_t dt, const Tensors& in, const Tensors& got, const Tensors& ref) {
    const std::string dn = tsr::dtype_name(dt);
    attempt(dn, "out", s, [&]() -> std::string {
      Tensors outs;
      for (const Tensor& r : got) outs.push_back(r.defined() ? tsr::empty(r.sizes(), r.dtype(), r.device()) : r);
      s.run_out(in, outs);
      std::string msg = compare_results(outs, ref, dt);
      if (msg.empty() && s.validate) msg = s.validate(outs);
      return msg.empty() ? "" : "out=: " + msg;
    });
    if (got.empty() || !got[0].defined()) return;
    std::optional<Shape> wrong = wrong_out_shape(got[0].sizes(), info_.out_broadcasts);
    if (!wrong) return;
    attempt(dn, "out_wrong_shape", s, [&]() -> std::string {
      Tensors outs;
      for (const Tensor& r : got) outs.push_back(r.defined() ? tsr::empty(r.sizes(), r.dtype(), r.device()) : r);
      outs[0] = tsr::full(*wrong, 1.0, got[0].dtype(), got[0].device());
      bool threw = false;
      try {
        s.run_out(in, outs);
      } catch (const tsr::Error&) {
        threw = true;
      }
      std::string what =
          "an out= of shape " + shape_str(*wrong) + " for a result of shape " + shape_str(got[0].sizes());
      if (!threw) return what + " was accepted (expected tsr::Error)";
      for (double v : values(outs[0]))
        if (v != 1.0) return what + " was refused but partly written";
      return "";
    });
  }

  void check_inplace(const Sample& s, tsr_dtype_t dt, const Tensors& in, const Tensors& got, const Tensors& ref) {
    const std::string dn = tsr::dtype_name(dt);
    if (in.empty() || !in[0].defined() || got.empty() || !got[0].defined()) return;
    if (got[0].dtype() != in[0].dtype() || got[0].sizes() != in[0].sizes()) {
      add(dn, "inplace", s.desc, Outcome::Skip,
          "the result (" + shape_str(got[0].sizes()) + " " + tsr::dtype_name(got[0].dtype()) + ") does not fit self (" +
              shape_str(in[0].sizes()) + " " + tsr::dtype_name(in[0].dtype()) + ")");
      return;
    }
    for (bool nc : {false, true}) {
      if (nc && (!info_.noncontiguous || in[0].numel() < 2)) continue;
      attempt(dn, nc ? "inplace_noncontiguous" : "inplace", s, [&]() -> std::string {
        Tensors copy;
        for (const Tensor& t : in) copy.push_back(t.defined() ? t.clone() : t);
        if (nc) copy[0] = noncontig(copy[0]);
        Tensor self = copy[0];
        s.run_inplace(copy);
        std::string msg = compare_results({self}, {ref[0]}, dt);
        return msg.empty() ? "" : "self after the in-place op: " + msg;
      });
    }
  }

  void check_gradcheck(const Sample& s) {
    if (grad_inputs_of(s, s.inputs).empty()) {
      add("float64", "gradcheck", s.desc, Outcome::Skip, "no floating inputs to differentiate");
      return;
    }
    attempt("float64", "gradcheck", s, [&]() { return gradcheck(s, opts_.seed, info_.tol_scale); });
  }

  // Device gradients (dt) of the rounded inputs vs float64 CPU gradients of the same values.
  void check_device_grads(const Sample& s, tsr_dtype_t dt) {
    std::vector<int> wrt = grad_inputs_of(s, s.inputs);
    if (wrt.empty()) return;
    attempt(tsr::dtype_name(dt), "grad", s, [&]() -> std::string {
      tsr::EnableGradGuard grad_on;
      std::string error;
      Tensors dev_grads =
          analytic_grads(s, convert_inputs(s.inputs, dev_, dt), wrt, Where{dev_, dt}, opts_.seed, &error);
      if (!error.empty()) return error;
      Tensors ref_grads = analytic_grads(s, reference_inputs(s.inputs, dt, TSR_F64), wrt,
                                         Where{tsr::Device::cpu(), TSR_F64}, opts_.seed, &error);
      if (!error.empty()) return "the reference gradient (cpu:0, float64): " + error;
      Tol t = tolerance(info_, dt);
      for (size_t j = 0; j < dev_grads.size(); ++j) {
        std::string msg = compare(dev_grads[j], ref_grads[j], {t.rtol * 10, t.atol * 10}, false);
        if (!msg.empty()) return "gradient of input " + std::to_string(wrt[j]) + ": " + msg;
      }
      return "";
    });
  }

  tsr_runtime_t* rt_;
  const OpInfo& info_;
  tsr::Device dev_;
  const RunOptions& opts_;
  std::string dev_name_;
  std::vector<CheckResult> results_;
};

}  // namespace

std::vector<CheckResult> run_opinfo(tsr_runtime_t* rt, const OpInfo& info, const tsr::Device& device,
                                    const RunOptions& opts) {
  tsr::set_runtime(rt);
  try {
    return OpRun(rt, info, device, opts).run();
  } catch (const std::exception& e) {
    return {{info.name, device_name(rt, device), "", "runner", "", Outcome::Fail,
             std::string("unexpected exception: ") + e.what(), false}};
  }
}

}  // namespace tsr::conformance
