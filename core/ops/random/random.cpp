// Random ops. Distributions that are transforms of uniforms/normals are composites over rand
// and randn, so every backend draws the same Philox stream (sdk/tessera/philox.h) for the same
// seed and offset; randperm and multinomial have kernels whose mapping onto Philox blocks is
// specified in docs/kernels/linalg.md. Every op takes `int seed=-1, int offset=-1` like
// rand/randn: -1 draws from the runtime's generator (advancing its offset).
#include <cmath>
#include <limits>

#include "ops/composite.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

namespace {

std::string shp(const std::vector<int64_t>& s) { return shape_str(s.data(), static_cast<int>(s.size())); }

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// rand/randn in the call's runtime (factories have no tensor argument to find it from).
tsr::Tensor draw(tsr_runtime_t* rt, const char* name, const std::vector<int64_t>& size, tsr_dtype_t dt, tsr::Device dev,
                 int64_t seed, int64_t offset) {
  tsr_op_t* h = nullptr;
  tsr::check(tsr::api()->op_find(rt, name, &h));
  tsr::Arg a0(size), a1(dt), a2(dev), a3(seed), a4(offset);
  tsr_value_t vals[5] = {a0.value(), a1.value(), a2.value(), a3.value(), a4.value()};
  tsr_tensor_t* out = nullptr;
  tsr::check(tsr::api()->op_call(h, vals, 5, &out, 1));
  return tsr::Tensor::adopt(out);
}

// Uniforms/normals are drawn in float64 for float64 results and in float32 otherwise.
tsr_dtype_t draw_dtype(tsr_dtype_t dt) { return dt == TSR_F64 ? TSR_F64 : TSR_F32; }

tsr::Device dev_or_cpu(const CArgs& a, size_t i) {
  auto d = a.device(i);
  return d ? *d : tsr::Device::cpu();
}

// Host readback of min/max for argument checks on tensors of probabilities and deviations.
std::pair<double, double> min_max(const tsr::Tensor& t) {
  tsr::NoGradGuard ng;
  tsr::Tensor d = t.to(TSR_F64);
  return {tsr::amin(d).item<double>(), tsr::amax(d).item<double>()};
}

tsr::Tensor bernoulli_fn(CArgs& a) {
  tsr::Tensor p = a.tensor(0);
  if (!is_floating(p.dtype()))
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected floating point probabilities, got ") + dtype_name(p.dtype()));
  if (p.numel() > 0) {
    auto mm = min_max(p);
    if (!(mm.first >= 0 && mm.second <= 1))
      a.fail(TSR_INVALID_ARGUMENT, "expected all probabilities in [0, 1], got values in [" + num(mm.first) + ", " +
                                       num(mm.second) + "] (tensor " + shp(p.sizes()) + ")");
  }
  tsr::Tensor u = draw(a.runtime(), "rand", p.sizes(), draw_dtype(p.dtype()), p.device(), a.int_arg(1), a.int_arg(2));
  return tsr::lt(u, p.detach()).to(p.dtype());
}

tsr::Tensor bernoulli_p_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  double p = a.double_arg(1);
  if (!(p >= 0 && p <= 1)) a.fail(TSR_INVALID_ARGUMENT, "expected 0 <= p <= 1, but got p=" + num(p));
  tsr::Tensor u = draw(a.runtime(), "rand", self.sizes(), TSR_F64, self.device(), a.int_arg(2), a.int_arg(3));
  return tsr::lt(u, tsr::wrap_scalar(p, a.runtime())).to(self.dtype());
}

void int_range(tsr_dtype_t dt, double* lo, double* hi) {
  switch (dt) {
    case TSR_I8:
      *lo = -128, *hi = 127;
      break;
    case TSR_U8:
      *lo = 0, *hi = 255;
      break;
    case TSR_I16:
      *lo = -32768, *hi = 32767;
      break;
    case TSR_I32:
      *lo = -2147483648.0, *hi = 2147483647.0;
      break;
    default:
      *lo = -9.3e18, *hi = 9.3e18;
  }
}

// floor(u * (high - low)) + low with a float64 uniform u (53 bits): exact and unbiased up to
// ranges of 2^53 / 2^20 ~ 2^33 (beyond that, rare values are off by the rounding of u*range).
tsr::Tensor randint_fn(CArgs& a) {
  int64_t low = a.int_arg(0), high = a.int_arg(1);
  std::vector<int64_t> size = a.ints(2);
  tsr_dtype_t dt = a.dtype(3).value_or(TSR_I64);
  if (high <= low)
    a.fail(TSR_INVALID_ARGUMENT, "random_ expects 'from' to be less than 'to', but got from=" + std::to_string(low) +
                                     " >= to=" + std::to_string(high));
  if (dt == TSR_BOOL) a.fail(TSR_INVALID_ARGUMENT, "bool dtype is not supported");
  if (!is_floating(dt)) {
    double lo, hi;
    int_range(dt, &lo, &hi);
    if (double(low) < lo || double(high - 1) > hi)
      a.fail(TSR_INVALID_ARGUMENT,
             "range [" + std::to_string(low) + ", " + std::to_string(high) + ") does not fit " + dtype_name(dt));
  }
  const double range = double(high) - double(low);
  if (range > 9007199254740992.0) a.fail(TSR_INVALID_ARGUMENT, "range high - low = " + num(range) + " exceeds 2^53");
  tsr::Tensor u = draw(a.runtime(), "rand", size, TSR_F64, dev_or_cpu(a, 4), a.int_arg(5), a.int_arg(6));
  tsr::Tensor k = tsr::clamp(tsr::mul(u, range), 0.0, range - 1).to(TSR_I64);
  return tsr::add(k, tsr::scalar_tensor_int(low, TSR_I64, true, a.runtime())).to(dt);
}

void check_std(const CArgs& a, double std) {
  if (!(std >= 0)) a.fail(TSR_INVALID_ARGUMENT, "expected std >= 0.0, but found std " + num(std));
}

tsr::Tensor normal_fn(CArgs& a) {
  double mean = a.double_arg(0), std = a.double_arg(1);
  check_std(a, std);
  tsr_dtype_t dt = a.dtype(3).value_or(TSR_F32);
  if (!is_floating(dt))
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected a floating point dtype, got ") + dtype_name(dt));
  tsr::Tensor z = draw(a.runtime(), "randn", a.ints(2), draw_dtype(dt), dev_or_cpu(a, 4), a.int_arg(5), a.int_arg(6));
  return tsr::add(tsr::mul(z, std), mean).to(dt);
}

// normal(Tensor mean, Tensor std): one draw per element of the broadcast shape; differentiable
// in mean and std (the normals are constants).
tsr::Tensor normal_tensor_fn(CArgs& a) {
  tsr::Tensor mean = a.tensor(0), std = a.tensor(1);
  if (!is_floating(mean.dtype()) || !is_floating(std.dtype()))
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected floating mean and std, got ") + dtype_name(mean.dtype()) +
                                     " and " + dtype_name(std.dtype()));
  if (std.numel() > 0) {
    auto mm = min_max(std);
    if (!(mm.first >= 0)) a.fail(TSR_INVALID_ARGUMENT, "expected std >= 0.0, but found std " + num(mm.first));
  }
  tsr::Tensor shape_probe = tsr::add(mean.detach(), std.detach());
  tsr::Tensor z = draw(a.runtime(), "randn", shape_probe.sizes(), draw_dtype(shape_probe.dtype()), shape_probe.device(),
                       a.int_arg(2), a.int_arg(3));
  return tsr::add(tsr::mul(z.to(shape_probe.dtype()), std), mean);
}

tsr::Tensor normal__fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  double mean = a.double_arg(1), std = a.double_arg(2);
  check_std(a, std);
  if (!is_floating(self.dtype()))
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected a floating point tensor, got ") + dtype_name(self.dtype()));
  tsr::Tensor z =
      draw(a.runtime(), "randn", self.sizes(), draw_dtype(self.dtype()), self.device(), a.int_arg(3), a.int_arg(4));
  self.copy_(tsr::add(tsr::mul(z, std), mean));
  return self;
}

tsr::Tensor uniform__fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  double from = a.double_arg(1), to = a.double_arg(2);
  if (!(from <= to))
    a.fail(TSR_INVALID_ARGUMENT, "expected from <= to, but got from=" + num(from) + " > to=" + num(to));
  if (!is_floating(self.dtype()))
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected a floating point tensor, got ") + dtype_name(self.dtype()));
  tsr::Tensor u =
      draw(a.runtime(), "rand", self.sizes(), draw_dtype(self.dtype()), self.device(), a.int_arg(3), a.int_arg(4));
  self.copy_(tsr::add(tsr::mul(u, to - from), from));
  return self;
}

tsr::Tensor rand_like_fn(CArgs& a) {
  tsr::Tensor self = a.tensor(0);
  tsr_dtype_t dt = a.dtype(1).value_or(self.dtype());
  if (!is_floating(dt))
    a.fail(TSR_INVALID_ARGUMENT, std::string("expected a floating point dtype, got ") + dtype_name(dt));
  const char* name = a.op()[4] == 'n' ? "randn" : "rand";
  return draw(a.runtime(), name, self.sizes(), dt, self.device(), a.int_arg(2), a.int_arg(3));
}

// Seeds and offsets for the kernel-backed ops: like rand, -1 takes the runtime's seed and
// reserves `blocks` Philox blocks of its stream.
void fill_seed(CallCtx& ctx, tsr_value_t* args, size_t seed_i, int64_t blocks) {
  if (args[seed_i].u.i < 0) args[seed_i].u.i = static_cast<int64_t>(ctx.rt->seed.load(std::memory_order_relaxed));
  if (args[seed_i + 1].u.i < 0)
    args[seed_i + 1].u.i = static_cast<int64_t>(ctx.rt->rng_offset.fetch_add(static_cast<uint64_t>(blocks)));
}

tsr_status_t randperm_impl(CallCtx& ctx) {
  int64_t n = ctx.int_arg(0);
  if (n < 0) return ctx.error(TSR_INVALID_ARGUMENT, "n must be non-negative, got " + std::to_string(n));
  tsr_dtype_t dt = ctx.is_none(1) ? TSR_I64 : static_cast<tsr_dtype_t>(ctx.args[1].u.dtype);
  if (!dtype_valid(dt) || dt == TSR_BOOL)
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("unsupported dtype ") + dtype_name(dt));
  if (is_integral(dt)) {
    double lo, hi;
    int_range(dt, &lo, &hi);
    if (n > 0 && double(n - 1) > hi)
      return ctx.error(TSR_INVALID_ARGUMENT, "n = " + std::to_string(n) + " is too large for " + dtype_name(dt));
  }
  tsr_device_t device = ctx.is_none(2) ? tsr_device_t{TSR_DEVICE_TYPE_CPU, 0} : ctx.args[2].u.device;
  TSR_RETURN_IF_ERROR(check_device(ctx.rt, device, ctx.name()));
  tsr_value_t args[kMaxArgs];
  std::copy(ctx.args, ctx.args + ctx.nargs, args);
  fill_seed(ctx, args, 3, (n + 1) / 2);
  Tensor* out = nullptr;
  TSR_RETURN_IF_ERROR(make_output(ctx, 0, 1, &n, dt, device, &out));
  tsr_status_t st = into_dense(ctx, out, [&](Tensor* target) {
    return launch_op(ctx.rt, ctx.op, device, dt, args, ctx.nargs, nullptr, 0, &target, 1, nullptr);
  });
  if (st) {
    out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

tsr_status_t multinomial_impl(CallCtx& ctx) {
  Tensor* p = ctx.tensor(0);
  int64_t ns = ctx.int_arg(1);
  bool replacement = ctx.bool_arg(2);
  if (p->ndim < 1 || p->ndim > 2)
    return ctx.error(TSR_INVALID_ARGUMENT, "prob_dist must be 1 or 2 dim, got " + shape_str(p->sizes, p->ndim));
  if (!is_floating(p->dtype))
    return ctx.error(TSR_INVALID_ARGUMENT,
                     std::string("prob_dist must be a floating point tensor, got ") + dtype_name(p->dtype));
  int64_t rows = p->ndim == 2 ? p->sizes[0] : 1, cats = p->sizes[p->ndim - 1];
  if (cats == 0)
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "number of categories cannot be zero (prob_dist " + shape_str(p->sizes, p->ndim) + ")");
  if (ns <= 0)
    return ctx.error(TSR_INVALID_ARGUMENT, "cannot sample n_sample <= 0 samples (got " + std::to_string(ns) + ")");
  if (!replacement && ns > cats)
    return ctx.error(TSR_INVALID_ARGUMENT, "cannot sample n_sample (" + std::to_string(ns) +
                                               ") > prob_dist.size(-1) (" + std::to_string(cats) +
                                               ") samples without replacement");
  // The result shape is checked before the generator's offset advances, so a refused call
  // leaves the random stream where it was.
  int64_t sizes[2] = {rows, ns};
  TSR_RETURN_IF_ERROR(check_shape(ctx.name(), p->ndim, p->ndim == 2 ? sizes : sizes + 1, nullptr));
  // The kernel reads float64 probabilities (sums and cumulative sums exact enough for any input dtype).
  Tensor *p64 = nullptr, *pd = nullptr;
  TSR_RETURN_IF_ERROR(cast_to(ctx.rt, p, TSR_F64, ctx.name(), &p64));
  tsr_status_t st = make_contiguous(ctx.rt, p64, ctx.name(), &pd);
  p64->release();
  if (st) return st;
  tsr_value_t args[kMaxArgs];
  std::copy(ctx.args, ctx.args + ctx.nargs, args);
  fill_seed(ctx, args, 3, (rows * (replacement ? ns : cats) + 1) / 2);
  Tensor* out = nullptr;
  st = make_output(ctx, 0, p->ndim, p->ndim == 2 ? sizes : sizes + 1, TSR_I64, p->device, &out);
  if (!st)
    st = into_dense(ctx, out, [&](Tensor* target) {
      args[0].u.tensor = pd;
      return launch_op(ctx.rt, ctx.op, p->device, TSR_F64, args, ctx.nargs, &pd, 1, &target, 1, nullptr);
    });
  pd->release();
  if (st) {
    if (out) out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

}  // namespace

TSR_CORE_OPS(random) {
  // PyTorch's bernoulli(Tensor) / bernoulli.p(Tensor, float) overloads as two names.
  v.push_back(composite_op("bernoulli(Tensor self, *, int seed=-1, int offset=-1) -> Tensor", composite<bernoulli_fn>));
  v.push_back(composite_op("bernoulli_p(Tensor self, float p=0.5, *, int seed=-1, int offset=-1) -> Tensor",
                           composite<bernoulli_p_fn>));
  v.push_back(
      composite_op("randint(int low, int high, int[] size, ScalarType? dtype=None, Device? device=None, int seed=-1, "
                   "int offset=-1) -> Tensor",
                   composite<randint_fn>));
  // normal.float_float / normal.Tensor_Tensor as normal / normal_tensor.
  v.push_back(
      composite_op("normal(float mean, float std, int[] size, ScalarType? dtype=None, Device? device=None, "
                   "int seed=-1, int offset=-1) -> Tensor",
                   composite<normal_fn>));
  v.push_back(composite_op("normal_tensor(Tensor mean, Tensor std, *, int seed=-1, int offset=-1) -> Tensor",
                           composite<normal_tensor_fn>));
  v.push_back(
      composite_op("normal_(Tensor(a!) self, float mean=0, float std=1, *, int seed=-1, int offset=-1) -> Tensor(a!)",
                   composite<normal__fn>));
  v.push_back(
      composite_op("uniform_(Tensor(a!) self, float from=0, float to=1, *, int seed=-1, int offset=-1) -> Tensor(a!)",
                   composite<uniform__fn>));
  v.push_back(composite_op("rand_like(Tensor self, ScalarType? dtype=None, *, int seed=-1, int offset=-1) -> Tensor",
                           composite<rand_like_fn>));
  v.push_back(composite_op("randn_like(Tensor self, ScalarType? dtype=None, *, int seed=-1, int offset=-1) -> Tensor",
                           composite<rand_like_fn>));
  v.push_back({"randperm(int n, ScalarType? dtype=None, Device? device=None, int seed=-1, int offset=-1) -> Tensor",
               randperm_impl});
  v.push_back(
      {"multinomial(Tensor self, int num_samples, bool replacement=False, *, int seed=-1, int offset=-1) -> Tensor",
       multinomial_impl});
}

}  // namespace tsr::core
