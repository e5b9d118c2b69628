#include "infer.hpp"

#include <set>

#include "shape_rules.hpp"

namespace tsr::onnx::detail {

using ::onnx::TensorProto;

namespace {

// Broadcasting with symbols: 1 gives way, equal dims stay, anything else is unknown.
Shape broadcast(const Shape& a, const Shape& b) {
  Shape out;
  if (!a.has_rank || !b.has_rank) return out;
  out.has_rank = true;
  const size_t r = std::max(a.dims.size(), b.dims.size());
  for (size_t k = 0; k < r; ++k) {
    const Dim one{1, {}};
    const Dim& x = k < r - a.dims.size() ? one : a.dims[k - (r - a.dims.size())];
    const Dim& y = k < r - b.dims.size() ? one : b.dims[k - (r - b.dims.size())];
    Dim d;
    if (x == y) d = x;
    else if (x.is_static() && x.size == 1) d = y;
    else if (y.is_static() && y.size == 1) d = x;
    else if (x.is_static() && y.known() && !y.is_static()) d = x;  // a symbol meets a size: the size (or an error)
    else if (y.is_static() && x.known() && !x.is_static()) d = y;
    out.dims.push_back(d);
  }
  return out;
}

const std::set<std::string>& same_shape_ops() {
  static const std::set<std::string> s = {
      "Relu", "Sigmoid", "Tanh", "Erf", "Exp", "Log", "Neg", "Sqrt", "Abs", "Reciprocal", "Floor", "Ceil", "Sin",
      "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Sign", "Not", "Round",
      "Softplus", "Mish", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "HardSwish", "Softmax", "LogSoftmax",
      "LayerNormalization", "BatchNormalization", "InstanceNormalization", "Dropout", "Identity", "Cast", "CastLike",
      "Clip", "IsNaN"};
  return s;
}

const std::set<std::string>& broadcast_ops() {
  static const std::set<std::string> s = {"Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean",
                                          "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or",
                                          "Xor", "Where", "PRelu"};
  return s;
}

// A dim from a size known at import time: static, one plain input symbol, or unknown.
Dim dim_of(const Elem& e) {
  if (e.kind == Elem::Int && e.i >= 0) return Dim{e.i, {}};
  if (e.kind == Elem::Sym && e.poly.size() == 1 && e.poly.begin()->first.size() == 1 && e.poly.begin()->second == 1)
    return Dim{-1, e.poly.begin()->first[0]};
  return Dim{};
}

// Shape rules of the view-like ops, from the input's shape and the constant operands.
bool view_info(NodeCtx& ctx, Value* v) {
  const std::string& op = ctx.op_type();
  const Value& x = ctx.in(0);
  if (!x.shape.has_rank) return false;
  const int r = x.shape.rank();
  Shape s;
  s.has_rank = true;
  if (op == "Reshape" && ctx.is_constant(1)) {
    const Folded& t = ctx.constant(1, "the target shape");
    for (size_t k = 0; k < t.elems.size(); ++k) {
      const Elem& e = t.elems[k];
      const bool copy = e.kind == Elem::Int && e.i == 0 && !ctx.attr_int("allowzero", 0) && k < x.shape.dims.size();
      s.dims.push_back(copy ? x.shape.dims[k] : dim_of(e));
    }
  } else if (op == "Transpose") {
    std::vector<int64_t> perm;
    for (int k = r - 1; k >= 0; --k) perm.push_back(k);
    perm = ctx.attr_ints("perm", perm);
    for (int64_t p : perm) {
      if (p < 0 || p >= r) return false;
      s.dims.push_back(x.shape.dims[static_cast<size_t>(p)]);
    }
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    std::optional<std::vector<int64_t>> axes;
    try {
      axes = read_axes(ctx, 1, 13);
    } catch (const Error&) {
      return false;
    }
    if (!axes) return false;
    const int out_rank = op == "Unsqueeze" ? r + static_cast<int>(axes->size()) : r;
    std::vector<bool> hit(static_cast<size_t>(out_rank), false);
    for (int64_t a : *axes) {
      if (a < -out_rank || a >= out_rank) return false;
      hit[static_cast<size_t>(a < 0 ? a + out_rank : a)] = true;
    }
    size_t j = 0;
    for (int k = 0; k < out_rank; ++k) {
      if (op == "Unsqueeze") s.dims.push_back(hit[static_cast<size_t>(k)] ? Dim{1, {}} : x.shape.dims[j++]);
      else if (!hit[static_cast<size_t>(k)]) s.dims.push_back(x.shape.dims[static_cast<size_t>(k)]);
    }
  } else if (op == "Concat" || op == "Split") {
    // The rank stays; the joined or split dim is left unknown.
    const int64_t axis = ctx.attr_int("axis", 0);
    s.dims = x.shape.dims;
    if (axis < -r || axis >= r) return false;
    s.dims[static_cast<size_t>(axis < 0 ? axis + r : axis)] = Dim{};
  } else if (op == "Gather" && ctx.in(1).shape.has_rank) {
    int64_t axis = ctx.attr_int("axis", 0);
    if (axis < -r || axis >= r) return false;
    if (axis < 0) axis += r;
    const auto& d = x.shape.dims;
    s.dims.assign(d.begin(), d.begin() + axis);
    for (const Dim& i : ctx.in(1).shape.dims) s.dims.push_back(i);
    s.dims.insert(s.dims.end(), d.begin() + axis + 1, d.end());
  } else {
    return false;
  }
  v->shape = s;
  if (!v->dtype) v->dtype = x.dtype;
  return true;
}

}  // namespace

void fallback_info(NodeCtx& ctx, int k, Value* v) {
  const std::string& op = ctx.op_type();
  if (!ctx.has_input(0)) return;
  const Value& x = ctx.in(0);
  if (!v->shape.has_rank && (k == 0 || op == "Split") && view_info(ctx, v)) return;
  if (k != 0) return;
  if (same_shape_ops().count(op)) {
    if (!v->shape.has_rank) v->shape = x.shape;
    if (!v->dtype) v->dtype = op == "Cast" ? static_cast<int32_t>(ctx.attr_int("to", 0)) : x.dtype;
    if (op == "IsNaN") v->dtype = TensorProto::BOOL;
  } else if (broadcast_ops().count(op)) {
    Shape s = x.shape;
    for (int i = 1; i < ctx.num_inputs(); ++i)
      if (ctx.has_input(i)) s = broadcast(s, ctx.in(i).shape);
    if (!v->shape.has_rank) v->shape = s;
    if (!v->dtype) {
      const bool cmp = op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" || op == "GreaterOrEqual";
      v->dtype = cmp ? static_cast<int32_t>(TensorProto::BOOL) : op == "Where" ? ctx.in(1).dtype : x.dtype;
    }
  } else if (op == "Slice" && x.shape.has_rank && !v->shape.has_rank) {
    Shape s = x.shape;
    // Sliced dims are known only when the input's dim and the bounds are.
    try {
      const SliceSpec spec = read_slice(ctx, x.shape.rank());
      for (size_t j = 0; j < spec.axes.size(); ++j) {
        Dim& d = s.dims[static_cast<size_t>(spec.axes[j])];
        if (!d.is_static() || spec.starts[j].kind != Elem::Int || spec.ends[j].kind != Elem::Int) {
          d = Dim{};
          continue;
        }
        int64_t b = spec.starts[j].i, e = spec.ends[j].i;
        clamp_slice(d.size, spec.steps[j], &b, &e);
        d = Dim{slice_count(b, e, spec.steps[j]), {}};
      }
    } catch (const Error&) {
      for (Dim& d : s.dims) d = Dim{};  // bounds known only at run time: the rank stays
    }
    v->shape = s;
    if (!v->dtype) v->dtype = x.dtype;
  } else if (op == "MatMul" && ctx.has_input(1) && x.shape.has_rank && ctx.in(1).shape.has_rank && !v->shape.has_rank) {
    const Shape& y = ctx.in(1).shape;
    if (x.shape.rank() >= 2 && y.rank() >= 2) {
      Shape bx = x.shape, by = y;
      bx.dims.resize(bx.dims.size() - 2);
      by.dims.resize(by.dims.size() - 2);
      Shape s = broadcast(bx, by);
      s.dims.push_back(x.shape.dims[x.shape.dims.size() - 2]);
      s.dims.push_back(y.dims.back());
      v->shape = s;
    }
    if (!v->dtype) v->dtype = x.dtype;
  }
}

}  // namespace tsr::onnx::detail
