#include "fold.hpp"

#include <cmath>
#include <functional>

#include "shape_rules.hpp"

namespace tsr::onnx::detail {

using ::onnx::TensorProto;

namespace {

std::vector<int64_t> strides_of(const std::vector<int64_t>& dims) {
  std::vector<int64_t> st(dims.size(), 1);
  for (size_t k = dims.size(); k-- > 1;) st[k - 1] = st[k] * dims[k];
  return st;
}

int64_t prod(const std::vector<int64_t>& d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t k = from; k < d.size() && k < to; ++k) n *= d[k];
  return n;
}

// The flat index into a tensor of dims `src` broadcast to `out`, for out's multi-index `idx`.
int64_t broadcast_index(const std::vector<int64_t>& idx, const std::vector<int64_t>& out,
                        const std::vector<int64_t>& src) {
  const std::vector<int64_t> st = strides_of(src);
  int64_t flat = 0;
  const size_t off = out.size() - src.size();
  for (size_t k = 0; k < src.size(); ++k)
    if (src[k] != 1) flat += idx[k + off] * st[k];
  return flat;
}

// Calls f(multi-index) for every element of dims, row-major.
void for_each_index(const std::vector<int64_t>& dims, const std::function<void(const std::vector<int64_t>&)>& f) {
  if (prod(dims) == 0) return;
  std::vector<int64_t> idx(dims.size(), 0);
  while (true) {
    f(idx);
    size_t k = dims.size();
    while (k > 0 && ++idx[k - 1] == dims[k - 1]) idx[--k] = 0;
    if (k == 0) return;
  }
}

// Elementwise over broadcast inputs.
Folded elementwise(const NodeCtx& ctx, const std::vector<const Folded*>& in, int32_t out_dtype,
                   const std::function<Elem(const std::vector<Elem>&)>& f) {
  std::vector<int64_t> dims = in[0]->dims;
  for (size_t k = 1; k < in.size(); ++k) dims = broadcast_dims(ctx, dims, in[k]->dims);
  Folded out;
  out.dtype = out_dtype;
  out.dims = dims;
  std::vector<Elem> args(in.size());
  for_each_index(dims, [&](const std::vector<int64_t>& idx) {
    for (size_t k = 0; k < in.size(); ++k)
      args[k] = in[k]->elems[static_cast<size_t>(broadcast_index(idx, dims, in[k]->dims))];
    out.elems.push_back(f(args));
  });
  return out;
}

// A float result rounded to its dtype's precision (float32 and narrower round through float).
Elem float_elem(double v, int32_t dtype) {
  return Elem::of_float(dtype == TensorProto::DOUBLE ? v : static_cast<double>(static_cast<float>(v)));
}

Folded arith(NodeCtx& ctx, const Folded& a, const Folded& b, char op) {
  const bool is_float = is_float_dtype(a.dtype);
  return elementwise(ctx, {&a, &b}, a.dtype, [&](const std::vector<Elem>& e) {
    const Elem &x = e[0], &y = e[1];
    if (is_float) {
      if (!x.known() || !y.known()) return Elem::unknown();
      const double p = x.as_double(), q = y.as_double();
      return float_elem(op == '+' ? p + q : op == '-' ? p - q : op == '*' ? p * q : p / q, a.dtype);
    }
    // Integers and sizes that follow the inputs' symbols (b*t, t-1).
    if (!x.integral() || !y.integral()) return Elem::unknown();
    if (op == '+') return poly_add(x, y);
    if (op == '-') return poly_add(x, y, -1);
    if (op == '*') return poly_mul(x, y);
    if (y.kind != Elem::Int) return Elem::unknown();
    if (y.i == 0) ctx.fail("integer division by zero in a constant");
    // ONNX integer Div truncates (as C does); a symbolic size divides only exactly.
    return x.kind == Elem::Int ? Elem::of_int(x.i / y.i) : poly_div(x, y.i);
  });
}

Folded compare(NodeCtx& ctx, const Folded& a, const Folded& b, const std::string& op) {
  return elementwise(ctx, {&a, &b}, TensorProto::BOOL, [&](const std::vector<Elem>& e) {
    const Elem &x = e[0], &y = e[1];
    if (op == "Equal" && x.kind == Elem::Sym && y.kind == Elem::Sym && x.poly == y.poly) return Elem::of_int(1);
    if (!x.known() || !y.known()) return Elem::unknown();
    const double p = x.as_double(), q = y.as_double();
    bool r = op == "Equal" ? p == q : op == "Less" ? p < q : op == "Greater" ? p > q : op == "LessOrEqual" ? p <= q : p >= q;
    if (!is_float_dtype(a.dtype)) r = op == "Equal" ? x.i == y.i : op == "Less" ? x.i < y.i : op == "Greater" ? x.i > y.i
                                                                   : op == "LessOrEqual" ? x.i <= y.i : x.i >= y.i;
    return Elem::of_int(r);
  });
}

Elem cast_elem(const Elem& e, int32_t to) {
  if (e.kind == Elem::Sym)
    return (to == TensorProto::INT64 || to == TensorProto::INT32) ? e : Elem::unknown();
  if (!e.known()) return Elem::unknown();
  if (to == TensorProto::BOOL) return Elem::of_int(e.as_double() != 0);
  if (is_float_dtype(to)) return float_elem(e.as_double(), to);
  if (e.kind == Elem::Float) {
    if (!std::isfinite(e.f)) return Elem::unknown();
    return Elem::of_int(static_cast<int64_t>(std::trunc(e.f)));
  }
  // Narrowing integer casts wrap, as ONNX's reference does.
  switch (to) {
    case TensorProto::INT32: return Elem::of_int(static_cast<int32_t>(e.i));
    case TensorProto::INT16: return Elem::of_int(static_cast<int16_t>(e.i));
    case TensorProto::INT8: return Elem::of_int(static_cast<int8_t>(e.i));
    case TensorProto::UINT8: return Elem::of_int(static_cast<uint8_t>(e.i));
    default: return e;
  }
}

Folded reshaped(Folded f, std::vector<int64_t> dims) {
  f.dims = std::move(dims);
  return f;
}

Folded fold_gather(NodeCtx& ctx, const Folded& data, const Folded& index, int64_t axis) {
  axis = normalize_axis(ctx, axis, static_cast<int64_t>(data.dims.size()));
  const size_t a = static_cast<size_t>(axis);
  const int64_t n = data.dims[a], outer = prod(data.dims, 0, a), inner = prod(data.dims, a + 1);
  Folded out;
  out.dtype = data.dtype;
  out.dims.assign(data.dims.begin(), data.dims.begin() + axis);
  out.dims.insert(out.dims.end(), index.dims.begin(), index.dims.end());
  out.dims.insert(out.dims.end(), data.dims.begin() + axis + 1, data.dims.end());
  const std::vector<int64_t> idx = index.ints("the indices");
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j : idx) {
      if (j < -n || j >= n) ctx.fail("index " + std::to_string(j) + " is out of range for a dim of size " + std::to_string(n));
      if (j < 0) j += n;
      for (int64_t i = 0; i < inner; ++i) out.elems.push_back(data.elems[static_cast<size_t>((o * n + j) * inner + i)]);
    }
  return out;
}

Folded fold_concat(NodeCtx& ctx, const std::vector<const Folded*>& in, int64_t axis) {
  const size_t r = in[0]->dims.size();
  axis = normalize_axis(ctx, axis, static_cast<int64_t>(r));
  const size_t a = static_cast<size_t>(axis);
  Folded out;
  out.dtype = in[0]->dtype;
  out.dims = in[0]->dims;
  out.dims[a] = 0;
  for (const Folded* f : in) {
    if (f->dims.size() != r) ctx.fail("Concat inputs differ in rank");
    for (size_t k = 0; k < r; ++k)
      if (k != a && f->dims[k] != in[0]->dims[k]) ctx.fail("Concat inputs differ in dim " + std::to_string(k));
    out.dims[a] += f->dims[a];
  }
  const int64_t outer = prod(out.dims, 0, a), inner = prod(out.dims, a + 1);
  for (int64_t o = 0; o < outer; ++o)
    for (const Folded* f : in) {
      const int64_t block = f->dims[a] * inner;
      for (int64_t i = 0; i < block; ++i) out.elems.push_back(f->elems[static_cast<size_t>(o * block + i)]);
    }
  return out;
}

Folded fold_slice(NodeCtx& ctx, const Folded& data) {
  const SliceSpec s = read_slice(ctx, static_cast<int>(data.dims.size()));
  // Per dim, the first index and step of the selection and its length.
  std::vector<int64_t> first(data.dims.size(), 0), step(data.dims.size(), 1), out_dims = data.dims;
  for (size_t k = 0; k < s.axes.size(); ++k) {
    const size_t a = static_cast<size_t>(s.axes[k]);
    if (s.starts[k].kind != Elem::Int || s.ends[k].kind != Elem::Int)
      throw Error(TSR_UNIMPLEMENTED, "Slice bounds that follow the inputs' sizes do not fold");
    int64_t b = s.starts[k].i, e = s.ends[k].i;
    clamp_slice(data.dims[a], s.steps[k], &b, &e);
    first[a] = b;
    step[a] = s.steps[k];
    out_dims[a] = slice_count(b, e, s.steps[k]);
  }
  Folded out;
  out.dtype = data.dtype;
  out.dims = out_dims;
  const std::vector<int64_t> st = strides_of(data.dims);
  for_each_index(out_dims, [&](const std::vector<int64_t>& idx) {
    int64_t flat = 0;
    for (size_t k = 0; k < idx.size(); ++k) flat += (first[k] + idx[k] * step[k]) * st[k];
    out.elems.push_back(data.elems[static_cast<size_t>(flat)]);
  });
  return out;
}

std::vector<int64_t> unsqueezed_dims(NodeCtx& ctx, const std::vector<int64_t>& dims) {
  std::optional<std::vector<int64_t>> axes = read_axes(ctx, 1, 13);
  if (!axes) ctx.fail("Unsqueeze has no axes");
  const int64_t r = static_cast<int64_t>(dims.size() + axes->size());
  std::vector<bool> is_new(static_cast<size_t>(r), false);
  for (int64_t a : *axes) {
    a = normalize_axis(ctx, a, r);
    if (is_new[static_cast<size_t>(a)]) ctx.fail("axis " + std::to_string(a) + " is repeated");
    is_new[static_cast<size_t>(a)] = true;
  }
  std::vector<int64_t> out;
  size_t j = 0;
  for (int64_t k = 0; k < r; ++k) out.push_back(is_new[static_cast<size_t>(k)] ? 1 : dims[j++]);
  return out;
}

std::vector<int64_t> squeezed_dims(NodeCtx& ctx, const std::vector<int64_t>& dims) {
  std::optional<std::vector<int64_t>> axes = read_axes(ctx, 1, 13);
  std::vector<bool> drop(dims.size(), false);
  if (!axes) {
    for (size_t k = 0; k < dims.size(); ++k) drop[k] = dims[k] == 1;
  } else {
    for (int64_t a : *axes) {
      a = normalize_axis(ctx, a, static_cast<int64_t>(dims.size()));
      if (dims[static_cast<size_t>(a)] != 1) ctx.fail("cannot squeeze dim " + std::to_string(a) + " of size " +
                                                       std::to_string(dims[static_cast<size_t>(a)]));
      drop[static_cast<size_t>(a)] = true;
    }
  }
  std::vector<int64_t> out;
  for (size_t k = 0; k < dims.size(); ++k)
    if (!drop[k]) out.push_back(dims[k]);
  return out;
}

Folded scalar_of(const TensorProto& t) {
  Folded f = fold_tensor(t, ".");
  if (f.numel() != 1) throw Error(TSR_INVALID_ARGUMENT, "the value attribute holds " + std::to_string(f.numel()) + " elements, expected 1");
  return f;
}

// Shape (and Size) only need the input's shape, not its values.
bool fold_shape(NodeCtx& ctx) {
  const Value& x = ctx.in(0);
  const int64_t r = ctx.rank(0);
  std::vector<Elem> dims;
  for (const Dim& d : x.shape.dims)
    dims.push_back(d.is_static() ? Elem::of_int(d.size) : !d.sym.empty() ? Elem::of_sym(d.sym) : Elem::unknown());
  Folded out;
  out.dtype = TensorProto::INT64;
  if (ctx.op_type() == "Size") {
    int64_t n = 1;
    bool known = true;
    for (const Elem& e : dims) known = known && e.kind == Elem::Int, n *= e.i;
    out.elems.push_back(known ? Elem::of_int(n) : Elem::unknown());
  } else {
    // opset 15: start and end select a range of dims, clamped like Slice's.
    int64_t start = ctx.attr_int("start", 0), end = ctx.attr_int("end", r);
    clamp_slice(r, 1, &start, &end);
    for (int64_t k = start; k < end; ++k) out.elems.push_back(dims[static_cast<size_t>(k)]);
    out.dims = {static_cast<int64_t>(out.elems.size())};
  }
  ctx.define_folded(0, std::move(out));
  return true;
}

}  // namespace

namespace {
bool fold_known(NodeCtx& ctx, const std::string& op, const std::vector<const Folded*>& in);
}  // namespace

bool fold_node(NodeCtx& ctx) {
  const std::string& op = ctx.op_type();
  if (op == "Shape" || op == "Size") return fold_shape(ctx);
  if (op == "Constant") return false;  // its handler keeps large tensors as they are
  // Everything else folds only when every input is known and small.
  std::vector<const Folded*> in(static_cast<size_t>(ctx.num_inputs()), nullptr);
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    if (!ctx.has_input(i)) continue;
    const Value& v = ctx.in(i);
    if (!v.is_const()) return false;
    if (!v.folded && numel_of(*v.data) > kFoldLimit) return false;
    in[static_cast<size_t>(i)] = &ctx.constant(i, "input " + std::to_string(i));
  }
  if (ctx.num_outputs() != 1) return false;
  try {
    return fold_known(ctx, op, in);
  } catch (const Error& e) {
    if (e.code() != TSR_UNIMPLEMENTED) throw;
    return false;  // e.g. Slice bounds that follow the inputs' sizes: the handler writes them
  }
}

namespace {

bool fold_known(NodeCtx& ctx, const std::string& op, const std::vector<const Folded*>& in) {
  Folded out;
  if (op == "Identity") {
    out = *in[0];
  } else if (op == "Cast") {
    const int32_t to = static_cast<int32_t>(ctx.attr_int("to", 0));
    out.dtype = to;
    out.dims = in[0]->dims;
    for (const Elem& e : in[0]->elems) out.elems.push_back(cast_elem(e, to));
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    out = arith(ctx, *in[0], *in[1], op == "Add" ? '+' : op == "Sub" ? '-' : op == "Mul" ? '*' : '/');
  } else if (op == "Neg") {
    out = *in[0];
    for (Elem& e : out.elems) e = !e.known() ? Elem::unknown() : e.kind == Elem::Int ? Elem::of_int(-e.i) : Elem::of_float(-e.f);
  } else if (op == "Sqrt" && is_float_dtype(in[0]->dtype)) {
    out = *in[0];
    for (Elem& e : out.elems) e = e.known() ? float_elem(std::sqrt(e.f), out.dtype) : Elem::unknown();
  } else if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual") {
    out = compare(ctx, *in[0], *in[1], op);
  } else if (op == "Not") {
    out = *in[0];
    for (Elem& e : out.elems) e = e.known() ? Elem::of_int(e.i == 0) : Elem::unknown();
  } else if (op == "Where") {
    out = elementwise(ctx, {in[0], in[1], in[2]}, in[1]->dtype, [](const std::vector<Elem>& e) {
      if (!e[0].known()) return Elem::unknown();
      return e[0].i ? e[1] : e[2];
    });
  } else if (op == "Gather") {
    out = fold_gather(ctx, *in[0], *in[1], ctx.attr_int("axis", 0));
  } else if (op == "Concat") {
    std::vector<const Folded*> parts;
    for (const Folded* f : in)
      if (f) parts.push_back(f);
    out = fold_concat(ctx, parts, ctx.attr_int("axis", 0));
  } else if (op == "Slice") {
    out = fold_slice(ctx, *in[0]);
  } else if (op == "Unsqueeze") {
    out = reshaped(*in[0], unsqueezed_dims(ctx, in[0]->dims));
  } else if (op == "Squeeze") {
    out = reshaped(*in[0], squeezed_dims(ctx, in[0]->dims));
  } else if (op == "Reshape") {
    Shape s;
    s.has_rank = true;
    for (int64_t d : in[0]->dims) s.dims.push_back(Dim{d, {}});
    std::vector<int64_t> dims;
    for (const Elem& e : reshape_sizes(ctx, s, *in[1], ctx.attr_int("allowzero", 0) != 0)) {
      if (e.kind != Elem::Int) return false;  // a size that follows the inputs: not a constant
      dims.push_back(e.i);
    }
    int64_t known = 1, infer = -1;
    for (size_t k = 0; k < dims.size(); ++k)
      if (dims[k] == -1) infer = static_cast<int64_t>(k);
      else known *= dims[k];
    if (infer >= 0) dims[static_cast<size_t>(infer)] = known ? in[0]->numel() / known : 0;
    if (prod(dims) != in[0]->numel()) ctx.fail("cannot reshape " + lit(in[0]->dims) + " to " + lit(dims));
    out = reshaped(*in[0], dims);
  } else if (op == "Expand") {
    const std::vector<int64_t> target = in[1]->ints("the shape");
    const std::vector<int64_t> dims = broadcast_dims(ctx, in[0]->dims, target);
    if (prod(dims) > kFoldLimit) return false;
    Folded shape;
    shape.dims = target;
    shape.elems.assign(static_cast<size_t>(prod(target)), Elem::of_int(0));
    out = elementwise(ctx, {in[0], &shape}, in[0]->dtype, [](const std::vector<Elem>& e) { return e[0]; });
  } else if (op == "ConstantOfShape") {
    const std::vector<int64_t> dims = in[0]->ints("the shape");
    if (prod(dims) > kFoldLimit) return false;
    Folded value;
    if (ctx.has_attr("value")) {
      value = scalar_of(ctx.attr_tensor("value"));
    } else {
      value.dtype = TensorProto::FLOAT;
      value.elems = {Elem::of_float(0)};
    }
    out.dtype = value.dtype;
    out.dims = dims;
    out.elems.assign(static_cast<size_t>(prod(dims)), value.elems[0]);
  } else if (op == "Range") {
    for (const Folded* f : in)
      if (f->numel() != 1 || !f->all_known()) return false;
    const bool is_float = is_float_dtype(in[0]->dtype);
    const double start = in[0]->elems[0].as_double(), limit = in[1]->elems[0].as_double(),
                 delta = in[2]->elems[0].as_double();
    if (delta == 0) ctx.fail("Range's delta is 0");
    const int64_t n = std::max<int64_t>(static_cast<int64_t>(std::ceil((limit - start) / delta)), 0);
    if (n > kFoldLimit) return false;
    out.dtype = in[0]->dtype;
    out.dims = {n};
    for (int64_t k = 0; k < n; ++k)
      out.elems.push_back(is_float ? float_elem(start + static_cast<double>(k) * delta, out.dtype)
                                   : Elem::of_int(in[0]->elems[0].i + k * in[2]->elems[0].i));
  } else {
    return false;
  }
  if (out.numel() > kFoldLimit) return false;
  ctx.define_folded(0, std::move(out));
  return true;
}

}  // namespace

}  // namespace tsr::onnx::detail
