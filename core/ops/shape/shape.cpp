// Shape family, joining and rearranging: cat (primitive: one kernel call over every input where
// the device has a "cat" kernel, else one copy per input into a slice of the output, so it runs
// on every backend through "_copy"), stack/hstack/vstack/dstack, flatten,
// unflatten, movedim, swapaxes, flip (kernel), fliplr/flipud, roll, repeat, tile,
// repeat_interleave, narrow_copy. Composites get their gradients from views and cat/flip.
#include <algorithm>
#include <numeric>

#include "ops/elementwise.hpp"
#include "ops/shape/shape_util.hpp"

namespace tsr::core {
namespace {

using namespace shape_ops;
using tsr::Tensor;  // NOLINT: SDK tensors throughout this file

// PyTorch's legacy rule: 1-D empty tensors are skipped by cat whatever the other shapes.
bool legacy_empty(const Tensor& t) { return t.dim() == 1 && t.numel() == 0; }

// Kernel contract (cat): inputs = the list's tensors in list order (one view each, however many:
// not bounded by the 16 arguments of other ops), each with the output's dtype (inputs the call
// promotes are converted first; an input without elements may keep its own); outputs = the dense
// result; args[1] = the dim, wrapped. Inputs without elements contribute nothing (PyTorch's
// legacy 1-D empties among them, whose rank may differ); every other input has the output's
// rank and sizes except along dim, and those sizes add up to the output's, in list order.
// Returns false, having written nothing, when the device has no cat kernel for the dtype or every
// kernel declined (UNIMPLEMENTED): the caller then copies input by input.
bool cat_kernel(const CArgs& a, const std::vector<Tensor>& ts, int64_t d, const Tensor& out) {
  CallCtx& c = a.ctx();
  core::Tensor* o = out.get();
  if (!find_kernel(c.op, o->device, o->dtype)) return false;
  std::vector<Tensor> converted;  // keeps the promoted copies alive for the call
  std::vector<core::Tensor*> ins;
  ins.reserve(ts.size());
  for (const Tensor& t : ts) {
    if (t.dtype() == out.dtype() || t.numel() == 0) {
      ins.push_back(t.get());
      continue;
    }
    Tensor cv = new_empty(a, t.sizes(), out.dtype(), out.device());
    cv.copy_(t);  // the conversion (and its errors) of the per-input path
    ins.push_back(cv.get());
    converted.push_back(std::move(cv));
  }
  tsr_value_t args[2];
  args[0] = c.args[0];
  args[1].tag = TSR_VALUE_INT;
  args[1].u.i = d;
  core::Tensor* outs[1] = {o};
  tsr_status_t st =
      launch_op(c.rt, c.op, o->device, o->dtype, args, 2, ins.data(), static_cast<int>(ins.size()), outs, 1, nullptr);
  if (st && st->code == TSR_UNIMPLEMENTED) {
    free_status(st);
    return false;
  }
  tsr::check(st);
  return true;
}

Tensor cat_fn(CArgs& a) {
  std::vector<Tensor> ts = a.tensors(0);
  if (ts.empty()) a.fail(TSR_INVALID_ARGUMENT, "expected a non-empty list of Tensors");
  std::vector<tsr_tensor_t*> raw;
  for (const Tensor& t : ts) raw.push_back(t.get());
  tsr_device_t dev;
  CallCtx& c = a.ctx();
  tsr::check(common_device(c, raw.data(), static_cast<int>(raw.size()), &dev));
  // Devices must agree exactly (common_device lets 0-dim cpu tensors join; cat never does).
  for (size_t i = 0; i < ts.size(); ++i) {
    if (ts[i].dim() == 0)
      a.fail(TSR_INVALID_ARGUMENT,
             "zero-dimensional tensor (at position " + std::to_string(i) + ") cannot be concatenated");
    tsr::Device d = ts[i].device();
    if (d != tsr::Device(dev))
      a.fail(TSR_INVALID_ARGUMENT, "expected all tensors to be on the same device, but tensor " + std::to_string(i) +
                                       " is on " + d.str(a.runtime()) + " and another on " +
                                       tsr::Device(dev).str(a.runtime()));
  }
  tsr_dtype_t dt = result_type(raw.data(), static_cast<int>(raw.size()));
  int ref = -1;
  for (size_t i = 0; i < ts.size() && ref < 0; ++i)
    if (!legacy_empty(ts[i])) ref = static_cast<int>(i);
  if (ref < 0) return new_empty(a, {0}, dt, tsr::Device(dev));
  const std::vector<int64_t> rs = ts[static_cast<size_t>(ref)].sizes();
  const int64_t nd = static_cast<int64_t>(rs.size());
  const int64_t d = wrap(a, a.int_arg(1), nd);
  std::vector<int64_t> out_sizes = rs;
  out_sizes[static_cast<size_t>(d)] = 0;
  for (size_t i = 0; i < ts.size(); ++i) {
    if (legacy_empty(ts[i])) continue;
    std::vector<int64_t> s = ts[i].sizes();
    bool ok = static_cast<int64_t>(s.size()) == nd;
    for (int64_t k = 0; ok && k < nd; ++k) ok = k == d || s[static_cast<size_t>(k)] == rs[static_cast<size_t>(k)];
    if (!ok)
      a.fail(TSR_INVALID_ARGUMENT, "sizes of tensors must match except in dimension " + std::to_string(d) +
                                       ": tensor " + std::to_string(ref) + " is " + shp(rs) + " but tensor " +
                                       std::to_string(i) + " in the list is " + shp(s));
    out_sizes[static_cast<size_t>(d)] += s[static_cast<size_t>(d)];
  }
  Tensor out = new_empty(a, out_sizes, dt, tsr::Device(dev));
  if (out.numel() == 0 || cat_kernel(a, ts, d, out)) return out;
  int64_t off = 0;  // no kernel for this device and dtype, or every one declined: input by input
  for (const Tensor& t : ts) {
    if (legacy_empty(t)) continue;
    int64_t n = t.size(d);
    if (n > 0 && t.numel() > 0) out.narrow(d, off, n).copy_(t);
    off += n;
  }
  return out;
}

void cat_backward(GradCtx& g) {
  const std::vector<Tensor>& ts = g.input_list(0);
  const Tensor& gr = g.grad(0);
  if (!gr.defined()) return;
  int64_t d = g.int_arg(1);
  if (d < 0) d += gr.dim();
  int64_t off = 0;
  for (size_t k = 0; k < ts.size(); ++k) {
    if (legacy_empty(ts[k])) {
      if (g.needs(0, k)) g.set(0, k, ts[k].detach().clone());  // empty: nothing flows back
      continue;
    }
    int64_t n = ts[k].size(d);
    if (g.needs(0, k)) g.set(0, k, gr.narrow(d, off, n));
    off += n;
  }
}

Tensor stack_fn(CArgs& a) {
  std::vector<Tensor> ts = a.tensors(0);
  if (ts.empty()) a.fail(TSR_INVALID_ARGUMENT, "expected a non-empty list of Tensors");
  std::vector<int64_t> s0 = ts[0].sizes();
  for (size_t i = 1; i < ts.size(); ++i)
    if (ts[i].sizes() != s0)
      a.fail(TSR_INVALID_ARGUMENT, "expects each tensor to be equal size, but got " + shp(s0) + " at entry 0 and " +
                                       shp(ts[i]) + " at entry " + std::to_string(i));
  int64_t d = wrap(a, a.int_arg(1), static_cast<int64_t>(s0.size()) + 1);
  std::vector<Tensor> us;
  for (const Tensor& t : ts) us.push_back(t.unsqueeze(d));
  return tsr::cat(us, d);
}

// atleast_{1,2,3}d as numpy: 1-D [n] becomes [1, n] (2-D) or [1, n, 1] (3-D); 2-D [m, n] becomes
// [m, n, 1].
Tensor atleast(const Tensor& t, int nd) {
  std::vector<int64_t> s = t.sizes();
  if (static_cast<int>(s.size()) >= nd) return t;
  if (s.empty()) return t.reshape(std::vector<int64_t>(static_cast<size_t>(nd), 1));
  if (nd == 2) return t.unsqueeze(0);
  if (s.size() == 1) return t.unsqueeze(0).unsqueeze(2);
  return t.unsqueeze(2);
}

template <int ND, int DIM>
Tensor stack_like_fn(CArgs& a) {
  std::vector<Tensor> ts = a.tensors(0);
  if (ts.empty()) a.fail(TSR_INVALID_ARGUMENT, "expected a non-empty list of Tensors");
  std::vector<Tensor> v;
  for (const Tensor& t : ts) v.push_back(atleast(t, ND));
  int64_t d = DIM;
  if (ND == 1 && v[0].dim() == 1) d = 0;  // hstack of vectors joins them end to end
  return tsr::cat(v, d);
}

Tensor flatten_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t nd = x.dim();
  int64_t s = wrap(a, a.int_arg(1), nd), e = wrap(a, a.int_arg(2), nd);
  if (s > e)
    a.fail(TSR_INVALID_ARGUMENT, "start_dim (" + std::to_string(a.int_arg(1)) + ") cannot come after end_dim (" +
                                     std::to_string(a.int_arg(2)) + ") for input " + shp(x));
  if (nd == 0) return x.reshape({1});
  std::vector<int64_t> sz = x.sizes(), ns;
  for (int64_t d = 0; d < s; ++d) ns.push_back(sz[static_cast<size_t>(d)]);
  int64_t p = 1;
  for (int64_t d = s; d <= e; ++d) p *= sz[static_cast<size_t>(d)];
  ns.push_back(p);
  for (int64_t d = e + 1; d < nd; ++d) ns.push_back(sz[static_cast<size_t>(d)]);
  return x.reshape(ns);
}

Tensor unflatten_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t d = wrap(a, a.int_arg(1), x.dim());
  std::vector<int64_t> parts = a.ints(2);
  if (parts.empty()) a.fail(TSR_INVALID_ARGUMENT, "sizes must be non-empty");
  if (x.dim() == 0) a.fail(TSR_INVALID_ARGUMENT, "cannot unflatten a 0-dim tensor");
  int64_t n = x.size(d), known = 1, infer = -1;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i] == -1) {
      if (infer >= 0) a.fail(TSR_INVALID_ARGUMENT, "only one dimension can be inferred, got sizes " + shp(parts));
      infer = static_cast<int64_t>(i);
    } else if (parts[i] < 0) {
      a.fail(TSR_INVALID_ARGUMENT, "invalid size " + std::to_string(parts[i]) + " in " + shp(parts));
    } else {
      known *= parts[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || n % known != 0)
      a.fail(TSR_INVALID_ARGUMENT, "sizes " + shp(parts) + " cannot unflatten dim " + std::to_string(d) + " of size " +
                                       std::to_string(n) + " of input " + shp(x));
    parts[static_cast<size_t>(infer)] = n / known;
  } else if (known != n) {
    a.fail(TSR_INVALID_ARGUMENT, "provided sizes " + shp(parts) + " don't multiply up to the size of dim " +
                                     std::to_string(d) + " (" + std::to_string(n) + ") in the input " + shp(x));
  }
  std::vector<int64_t> sz = x.sizes(), ns(sz.begin(), sz.begin() + d);
  ns.insert(ns.end(), parts.begin(), parts.end());
  ns.insert(ns.end(), sz.begin() + d + 1, sz.end());
  return x.view(ns);
}

Tensor movedim_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  std::vector<int64_t> src = a.ints(1), dst = a.ints(2);
  int64_t nd = x.dim();
  if (src.size() != dst.size())
    a.fail(TSR_INVALID_ARGUMENT, "Invalid source or destination dims: source " + shp(src) + " and destination " +
                                     shp(dst) + " should contain the same number of dims");
  std::vector<int64_t> order(static_cast<size_t>(nd), -1);
  std::vector<bool> used_src(static_cast<size_t>(std::max<int64_t>(nd, 1)), false);
  for (size_t i = 0; i < src.size(); ++i) {
    int64_t s = wrap(a, src[i], nd), t = wrap(a, dst[i], nd);
    if (nd == 0) continue;
    if (used_src[static_cast<size_t>(s)] || order[static_cast<size_t>(t)] >= 0)
      a.fail(TSR_INVALID_ARGUMENT, "repeated dim in source " + shp(src) + " or destination " + shp(dst));
    used_src[static_cast<size_t>(s)] = true;
    order[static_cast<size_t>(t)] = s;
  }
  if (nd == 0) return x.view({});
  int64_t next = 0;
  for (auto& o : order) {
    if (o >= 0) continue;
    while (used_src[static_cast<size_t>(next)]) ++next;
    o = next++;
  }
  return x.permute(order);
}

Tensor swapaxes_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t d0 = wrap(a, a.int_arg(1), x.dim()), d1 = wrap(a, a.int_arg(2), x.dim());
  if (x.dim() == 0) return x.view({});
  return x.transpose(d0, d1);
}

// Wrapped, de-duplicated flip dims as a bit mask over the input's dims.
int64_t flip_mask(const CArgs& a, const std::vector<int64_t>& dims, int64_t nd) {
  int64_t mask = 0;
  for (int64_t d : dims) {
    int64_t w = wrap(a, d, nd);
    if (nd == 0) continue;
    if (mask & (int64_t(1) << w))
      a.fail(TSR_INVALID_ARGUMENT,
             "dim " + std::to_string(w) + " appears multiple times in the list of dims " + shp(dims));
    mask |= int64_t(1) << w;
  }
  return mask;
}

// Kernel contract (flip): one input view (any strides), one dense output of the same shape and
// dtype; args[1] is an INT bit mask of the dims to reverse.
Tensor flip_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t mask = flip_mask(a, a.ints(1), x.dim());
  Tensor out = new_empty(a, x.sizes(), x.dtype(), x.device());
  if (mask == 0) {
    if (out.numel() > 0) out.copy_(x);
    return out;
  }
  tsr_value_t args[2];
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = x.get();
  args[1].tag = TSR_VALUE_INT;
  args[1].u.i = mask;
  launch_kernel(a, x, out, args, 2);
  return out;
}

void flip_backward(GradCtx& g) {
  if (g.needs(0) && g.grad(0).defined()) g.set(0, tsr::flip(g.grad(0), g.ints(1)));
}

Tensor fliplr_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  if (x.dim() < 2) a.fail(TSR_INVALID_ARGUMENT, "input must be >= 2-d, got " + shp(x));
  return tsr::flip(x, {1});
}
Tensor flipud_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  if (x.dim() < 1) a.fail(TSR_INVALID_ARGUMENT, "input must be >= 1-d, got " + shp(x));
  return tsr::flip(x, {0});
}

Tensor roll_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  std::vector<int64_t> shifts = a.ints(1), dims = a.ints(2);
  if (shifts.empty()) a.fail(TSR_INVALID_ARGUMENT, "`shifts` required");
  if (dims.empty()) {
    if (shifts.size() != 1)
      a.fail(TSR_INVALID_ARGUMENT, "shifts " + shp(shifts) + " need matching dims when more than one is given");
    Tensor flat = x.reshape({-1});
    return tsr::roll(flat, shifts, {0}).view(x.sizes());
  }
  if (shifts.size() != dims.size())
    a.fail(TSR_INVALID_ARGUMENT, "shifts and dimensions must align: shifts " + shp(shifts) + ", dims " + shp(dims));
  Tensor y = x;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = wrap(a, dims[i], x.dim());
    int64_t n = y.dim() == 0 ? 1 : y.size(d);
    if (n == 0 || y.dim() == 0) continue;
    int64_t s = ((shifts[i] % n) + n) % n;
    if (s == 0) continue;
    y = tsr::cat({y.narrow(d, n - s, s), y.narrow(d, 0, n - s)}, d);
  }
  return y.get() == x.get() ? x.clone() : y;
}

// Expanding a size-1 axis in front of each dim and folding it in repeats without a kernel.
Tensor repeat_impl(const CArgs& a, const Tensor& x, const std::vector<int64_t>& reps) {
  for (int64_t r : reps)
    if (r < 0) a.fail(TSR_INVALID_ARGUMENT, "repeats cannot be negative, got " + shp(reps));
  std::vector<int64_t> sz = x.sizes();
  std::vector<int64_t> padded(reps.size() - sz.size(), 1);
  padded.insert(padded.end(), sz.begin(), sz.end());
  std::vector<int64_t> inter, expanded, result;
  for (size_t i = 0; i < reps.size(); ++i) {
    inter.push_back(1);
    inter.push_back(padded[i]);
    expanded.push_back(reps[i]);
    expanded.push_back(padded[i]);
    int64_t r = 0;
    if (!checked_mul(reps[i], padded[i], &r))
      a.fail(TSR_INVALID_ARGUMENT, "repeats " + shp(reps) + " of input " + shp(x) + " overflow the result size");
    result.push_back(r);
  }
  Tensor y = x.reshape(inter).expand(expanded).reshape(result);
  if (y.shares_storage(x) || y.get() == x.get()) y = y.clone();
  return y;
}

Tensor repeat_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  std::vector<int64_t> reps = a.ints(1);
  if (static_cast<int64_t>(reps.size()) < x.dim())
    a.fail(TSR_INVALID_ARGUMENT, "number of dimensions of repeat dims " + shp(reps) +
                                     " can not be smaller than number of dimensions of tensor " + shp(x));
  return repeat_impl(a, x, reps);
}

Tensor tile_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  std::vector<int64_t> reps = a.ints(1);
  if (static_cast<int64_t>(reps.size()) < x.dim())
    reps.insert(reps.begin(), static_cast<size_t>(x.dim()) - reps.size(), 1);
  return repeat_impl(a, x, reps);
}

// (input along dim d, or flattened when dim is None) and the wrapped dim.
std::pair<Tensor, int64_t> interleave_input(const CArgs& a, size_t dim_arg) {
  Tensor x = a.tensor(0);
  if (a.is_none(dim_arg)) return {x.reshape({-1}), 0};
  int64_t d = wrap(a, a.int_arg(dim_arg), x.dim());
  if (x.dim() == 0) return {x.reshape({1}), 0};
  return {x, d};
}

void check_output_size(const CArgs& a, size_t arg, int64_t total) {
  if (!a.is_none(arg) && a.int_arg(arg) != total)
    a.fail(TSR_INVALID_ARGUMENT, "output_size " + std::to_string(a.int_arg(arg)) +
                                     " does not match the sum of repeats " + std::to_string(total));
}

Tensor interleave_uniform(const Tensor& x, int64_t d, int64_t r) {
  std::vector<int64_t> sz = x.sizes(), ex = sz;
  ex.insert(ex.begin() + d + 1, r);
  std::vector<int64_t> res = sz;
  res[static_cast<size_t>(d)] *= r;
  Tensor y = x.unsqueeze(d + 1).expand(ex).reshape(res);
  if (y.shares_storage(x)) y = y.clone();
  return y;
}

Tensor repeat_interleave_int_fn(CArgs& a) {
  auto [x, d] = interleave_input(a, 2);
  int64_t r = a.int_arg(1);
  if (r < 0) a.fail(TSR_INVALID_ARGUMENT, "repeats can not be negative, got " + std::to_string(r));
  int64_t total = 0;
  if (!checked_mul(x.size(d), r, &total))
    a.fail(TSR_INVALID_ARGUMENT, "repeats " + std::to_string(r) + " of input " + shp(x) + " overflow the result size");
  check_output_size(a, 3, total);
  return interleave_uniform(x, d, r);
}

Tensor repeat_interleave_fn(CArgs& a) {
  auto [x, d] = interleave_input(a, 2);
  Tensor rep = a.tensor(1);
  if (tsr::is_floating(rep.dtype()) || rep.dtype() == TSR_BOOL)
    a.fail(TSR_INVALID_ARGUMENT, std::string("repeats must be an integer tensor, got ") + tsr::dtype_name(rep.dtype()));
  if (rep.dim() > 1) a.fail(TSR_INVALID_ARGUMENT, "repeats must be 0-dim or 1-dim, got " + shp(rep));
  std::vector<int64_t> r = rep.to_vector<int64_t>();
  for (int64_t v : r)
    if (v < 0) a.fail(TSR_INVALID_ARGUMENT, "repeats can not be negative, got " + std::to_string(v));
  int64_t n = x.size(d);
  if (r.size() == 1) {
    int64_t total = 0;
    if (!checked_mul(n, r[0], &total))
      a.fail(TSR_INVALID_ARGUMENT, "repeats " + std::to_string(r[0]) + " of input " + shp(x) + " overflow the result size");
    check_output_size(a, 3, total);
    return interleave_uniform(x, d, r[0]);
  }
  if (static_cast<int64_t>(r.size()) != n)
    a.fail(TSR_INVALID_ARGUMENT, "repeats " + shp(rep) + " must have the same size as input along dim " +
                                     std::to_string(d) + " (input " + shp(x) + ")");
  int64_t total = 0;
  for (int64_t v : r)
    if (!checked_add(total, v, &total)) a.fail(TSR_INVALID_ARGUMENT, "the sum of repeats " + shp(rep) + " overflows");
  check_output_size(a, 3, total);
  std::vector<Tensor> pieces;
  for (int64_t i = 0; i < n; ++i) {
    if (r[static_cast<size_t>(i)] == 0) continue;
    std::vector<int64_t> ex = x.sizes();
    ex[static_cast<size_t>(d)] = r[static_cast<size_t>(i)];
    pieces.push_back(x.narrow(d, i, 1).expand(ex));
  }
  if (pieces.empty()) return x.narrow(d, 0, 0).clone();
  if (pieces.size() == 1) return pieces[0].contiguous().clone();
  return tsr::cat(pieces, d);
}

Tensor repeat_interleave_index_fn(CArgs& a) {
  Tensor rep = a.tensor(0);
  if (tsr::is_floating(rep.dtype()) || rep.dtype() == TSR_BOOL)
    a.fail(TSR_INVALID_ARGUMENT, std::string("repeats must be an integer tensor, got ") + tsr::dtype_name(rep.dtype()));
  if (rep.dim() != 1) a.fail(TSR_INVALID_ARGUMENT, "repeats must be 1-dim, got " + shp(rep));
  std::vector<int64_t> r = rep.to_vector<int64_t>();
  int64_t total = 0;
  for (int64_t v : r) {
    if (v < 0) a.fail(TSR_INVALID_ARGUMENT, "repeats can not be negative, got " + std::to_string(v));
    if (!checked_add(total, v, &total) || total > kMaxNumel)
      a.fail(TSR_INVALID_ARGUMENT, "the sum of repeats " + shp(rep) + " is too large");
  }
  check_output_size(a, 1, total);
  std::vector<int64_t> idx;
  idx.reserve(static_cast<size_t>(total));
  for (size_t i = 0; i < r.size(); ++i) idx.insert(idx.end(), static_cast<size_t>(r[i]), static_cast<int64_t>(i));
  tsr_tensor_t* h = nullptr;
  std::vector<int64_t> sz{total};
  tsr::check(tsr::api()->tensor_from_host(a.runtime(), idx.data(), 1, sz.data(), TSR_I64, tsr::Device::cpu().d, &h));
  return Tensor::adopt(h).to(rep.device(), rep.dtype());
}

Tensor narrow_copy_fn(CArgs& a) {
  Tensor x = a.tensor(0);
  int64_t d = wrap(a, a.int_arg(1), x.dim());
  int64_t start = a.int_arg(2), len = a.int_arg(3);
  if (x.dim() == 0) a.fail(TSR_INVALID_ARGUMENT, "cannot be applied to a 0-dim tensor");
  int64_t n = x.size(d);
  if (start < 0) start += n;
  if (start < 0 || len < 0 || start > n || len > n - start)
    a.fail(TSR_INVALID_ARGUMENT, "start (" + std::to_string(a.int_arg(2)) + ") + length (" + std::to_string(len) +
                                     ") exceeds dimension size (" + std::to_string(n) + ") of input " + shp(x));
  return x.narrow(d, start, len).clone();
}

}  // namespace

TSR_CORE_OPS(shape) {
  v.push_back({"cat(Tensor[] tensors, int dim=0) -> Tensor", composite<cat_fn>, TSR_GRAD(cat_backward), kSaveInputs});
  v.push_back(composite_op("stack(Tensor[] tensors, int dim=0) -> Tensor", composite<stack_fn>));
  v.push_back(composite_op("hstack(Tensor[] tensors) -> Tensor", composite<stack_like_fn<1, 1>>));
  v.push_back(composite_op("vstack(Tensor[] tensors) -> Tensor", composite<stack_like_fn<2, 0>>));
  v.push_back(composite_op("dstack(Tensor[] tensors) -> Tensor", composite<stack_like_fn<3, 2>>));
  v.push_back(composite_op("flatten(Tensor self, int start_dim=0, int end_dim=-1) -> Tensor", composite<flatten_fn>));
  v.push_back(composite_op("unflatten(Tensor self, int dim, int[] sizes) -> Tensor", composite<unflatten_fn>));
  v.push_back(composite_op("movedim(Tensor self, int[] source, int[] destination) -> Tensor", composite<movedim_fn>));
  v.push_back(composite_op("swapaxes(Tensor self, int axis0, int axis1) -> Tensor", composite<swapaxes_fn>));
  // PyTorch's aliases.
  v.push_back(composite_op("moveaxis(Tensor self, int[] source, int[] destination) -> Tensor", composite<movedim_fn>));
  v.push_back(composite_op("swapdims(Tensor self, int dim0, int dim1) -> Tensor", composite<swapaxes_fn>));
  v.push_back({"flip(Tensor self, int[] dims) -> Tensor", composite<flip_fn>, TSR_GRAD(flip_backward), kSaveNothing});
  v.push_back(composite_op("fliplr(Tensor self) -> Tensor", composite<fliplr_fn>));
  v.push_back(composite_op("flipud(Tensor self) -> Tensor", composite<flipud_fn>));
  v.push_back(composite_op("roll(Tensor self, int[] shifts, int[] dims=[]) -> Tensor", composite<roll_fn>));
  v.push_back(composite_op("repeat(Tensor self, int[] repeats) -> Tensor", composite<repeat_fn>));
  v.push_back(composite_op("tile(Tensor self, int[] dims) -> Tensor", composite<tile_fn>));
  // PyTorch's overloads repeat_interleave.self_Tensor / .self_int / .Tensor.
  v.push_back(
      composite_op("repeat_interleave(Tensor self, Tensor repeats, int? dim=None, int? output_size=None) -> Tensor",
                   composite<repeat_interleave_fn>));
  v.push_back(
      composite_op("repeat_interleave_int(Tensor self, int repeats, int? dim=None, int? output_size=None) -> Tensor",
                   composite<repeat_interleave_int_fn>));
  v.push_back(composite_op("repeat_interleave_index(Tensor repeats, int? output_size=None) -> Tensor",
                           composite<repeat_interleave_index_fn>));
  v.push_back(
      composite_op("narrow_copy(Tensor self, int dim, int start, int length) -> Tensor", composite<narrow_copy_fn>));
}

}  // namespace tsr::core
