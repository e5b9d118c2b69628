// Elementwise math, comparisons, matrix products and reductions.
#include <cmath>

#include "converter.hpp"
#include "shape_rules.hpp"

namespace tsr::onnx::detail {

using ::onnx::TensorProto;

namespace {

// ONNX ops that are one Tessera op of the same arguments.
const std::map<std::string, std::string>& unary_ops() {
  static const std::map<std::string, std::string> m = {
      {"Relu", "relu"},   {"Sigmoid", "sigmoid"}, {"Tanh", "tanh"},   {"Erf", "erf"},       {"Exp", "exp"},
      {"Log", "log"},     {"Neg", "neg"},         {"Sqrt", "sqrt"},   {"Abs", "abs"},       {"Reciprocal", "reciprocal"},
      {"Floor", "floor"}, {"Ceil", "ceil"},       {"Sin", "sin"},     {"Cos", "cos"},       {"Tan", "tan"},
      {"Asin", "asin"},   {"Acos", "acos"},       {"Atan", "atan"},   {"Sinh", "sinh"},     {"Cosh", "cosh"},
      {"Asinh", "asinh"}, {"Acosh", "acosh"},     {"Atanh", "atanh"}, {"Sign", "sign"},     {"Not", "logical_not"},
      {"Round", "round"}, {"Softplus", "softplus"}, {"IsNaN", "isnan"}, {"Mish", "mish"}};
  return m;
}

const std::map<std::string, std::string>& binary_ops() {
  static const std::map<std::string, std::string> m = {
      {"Add", "add"},         {"Sub", "sub"},       {"Mul", "mul"},
      {"Equal", "eq"},        {"Less", "lt"},       {"Greater", "gt"},
      {"LessOrEqual", "le"},  {"GreaterOrEqual", "ge"}, {"And", "logical_and"},
      {"Or", "logical_or"},   {"Xor", "logical_xor"}};
  return m;
}

void unary(NodeCtx& c) { c.emit(unary_ops().at(c.op_type()), {c.tensor(0)}, 0); }
void binary(NodeCtx& c) { c.emit(binary_ops().at(c.op_type()), {c.tensor(0), c.tensor(1)}, 0); }

void div(NodeCtx& c) {
  // ONNX's integer Div truncates; Tessera's div is true division.
  if (is_float_dtype(c.dtype(0)))
    c.emit("div", {c.tensor(0), c.tensor(1)}, 0);
  else
    c.emit("div_mode", {c.tensor(0), c.tensor(1), "\"trunc\""}, 0);
}

void pow(NodeCtx& c) {
  // ONNX keeps the base's dtype; Tessera promotes (int ** float is float).
  if (c.dtype(0) == c.dtype(1) || is_float_dtype(c.dtype(0))) {
    c.emit("pow", {c.tensor(0), c.tensor(1)}, 0);
    return;
  }
  const std::string p = c.emit("pow", {c.tensor(0), c.tensor(1)});
  c.emit("to", {p, dtype_lit(c.dtype(0))}, 0);
}

void mod(NodeCtx& c) {
  // fmod=1: C's fmod (sign of the dividend); fmod=0: Python's % (sign of the divisor).
  const bool f = c.attr_int("fmod", 0) != 0;
  if (!f && is_float_dtype(c.dtype(0))) c.fail("fmod=0 is not allowed for floats");
  c.emit(f ? "fmod" : "remainder", {c.tensor(0), c.tensor(1)}, 0);
}

// Max, Min, Sum, Mean: variadic with broadcasting.
void variadic(NodeCtx& c) {
  const std::string& op = c.op_type();
  const std::string t = op == "Max" ? "maximum" : op == "Min" ? "minimum" : "add";
  const int n = c.num_inputs();
  if (n == 1 && op != "Mean") {
    c.alias(0, c.tensor(0));
    return;
  }
  std::string acc = c.tensor(0);
  for (int i = 1; i < n; ++i) acc = c.emit(t, {acc, c.tensor(i)}, op != "Mean" && i == n - 1 ? 0 : -1);
  if (op == "Mean") c.emit("div", {acc, c.scalar(c.dtype(0), n)}, 0);
}

void clip(NodeCtx& c) {
  std::string lo = "None", hi = "None";
  if (c.opset() < 11) {
    if (c.has_attr("min")) lo = lit_float(c.attr_float("min", 0));
    if (c.has_attr("max")) hi = lit_float(c.attr_float("max", 0));
    c.emit("clamp", {c.tensor(0), lo, hi}, 0);
    return;
  }
  // Bounds known at import time are scalars; others are tensors (clamp_tensor).
  const bool scalars = (!c.has_input(1) || c.is_constant(1)) && (!c.has_input(2) || c.is_constant(2));
  auto bound = [&](int i) -> std::string {
    if (!c.has_input(i)) return "None";
    if (!scalars) return c.tensor(i);
    const Elem e = c.constant(i, i == 1 ? "min" : "max").elems.at(0);
    return e.kind == Elem::Float ? lit_float(static_cast<float>(e.f)) : lit(e.i);
  };
  lo = bound(1);
  hi = bound(2);
  if (lo == "None" && hi == "None") {  // no bounds: the identity
    c.forward(0, 0);
    return;
  }
  c.emit(scalars ? "clamp" : "clamp_tensor", {c.tensor(0), lo, hi}, 0);
}

void leaky_relu(NodeCtx& c) { c.emit("leaky_relu", {c.tensor(0), lit_float(c.attr_float("alpha", 0.01f))}, 0); }

void elu(NodeCtx& c) {
  if (c.op_type() == "Elu") {
    c.emit("elu", {c.tensor(0), lit_float(c.attr_float("alpha", 1.0f))}, 0);
    return;
  }
  // Selu is elu with scale gamma.
  const float alpha = c.attr_float("alpha", 1.67326319217681884765625f);
  const float gamma = c.attr_float("gamma", 1.05070102214813232421875f);
  c.emit("elu", {c.tensor(0), lit_float(alpha), lit_float(gamma)}, 0);
}

void hard_sigmoid(NodeCtx& c) {
  // max(0, min(1, alpha * x + beta))
  const float alpha = c.attr_float("alpha", 0.2f), beta = c.attr_float("beta", 0.5f);
  const std::string ax = c.emit("mul", {c.tensor(0), c.scalar(c.dtype(0), alpha)});
  const std::string y = c.emit("add", {ax, c.scalar(c.dtype(0), beta)});
  c.emit("clamp", {y, "0", "1"}, 0);
}

void hard_swish(NodeCtx& c) { c.emit("hardswish", {c.tensor(0)}, 0); }

void prelu(NodeCtx& c) {
  // x >= 0 ? x : slope * x  (slope broadcasts against x)
  const std::string x = c.tensor(0);
  const std::string pos = c.emit("ge", {x, c.scalar(c.dtype(0), 0)});
  const std::string neg = c.emit("mul", {x, c.tensor(1)});
  c.emit("where", {pos, x, neg}, 0);
}

void where(NodeCtx& c) { c.emit("where", {c.tensor(0), c.tensor(1), c.tensor(2)}, 0); }

void matmul(NodeCtx& c) { c.emit("matmul", {c.tensor(0), c.tensor(1)}, 0); }

void gemm(NodeCtx& c) {
  // Y = alpha * A' @ B' + beta * C, A' = transA ? A^T : A, B' = transB ? B^T : B (2-D).
  const bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  const float alpha = c.attr_float("alpha", 1.0f), beta = c.attr_float("beta", 1.0f);
  if (c.rank(0) != 2 || c.rank(1) != 2) c.fail("A and B must be 2-D");
  std::string a = c.tensor(0);
  if (ta) a = c.emit("transpose", {a, "0", "1"});
  const bool has_c = c.has_input(2) && beta != 0;
  // nn.Linear exports as Gemm(transB=1) with a 1-D bias of the output's width: Tessera's linear
  // computes exactly that (a C that broadcasts otherwise goes through addmm).
  const Dim n = c.in(1).shape.dims[0];
  const bool bias_is_row = has_c && beta == 1.0f && c.rank(2) == 1 && c.in(2).shape.dims[0].is_static() &&
                           n.is_static() && c.in(2).shape.dims[0].size == n.size;
  if (tb && alpha == 1.0f && (!has_c || bias_is_row)) {
    c.emit("linear", {a, c.tensor(1), has_c ? c.tensor(2) : "None"}, 0);
    return;
  }
  std::string b = c.tensor(1);
  if (tb) b = c.emit("transpose", {b, "0", "1"});
  if (!has_c) {
    if (alpha == 1.0f) {
      c.emit("mm", {a, b}, 0);
    } else {
      const std::string p = c.emit("mm", {a, b});
      c.emit("mul", {p, c.scalar(c.dtype(0), alpha)}, 0);
    }
    return;
  }
  // addmm: beta * C + alpha * (A' @ B'), C broadcast to the result.
  c.emit("addmm", {c.tensor(2), a, b, "beta=" + lit_float(beta), "alpha=" + lit_float(alpha)}, 0);
}

// The reduced axes: all when the node gives none (empty axes with noop_with_empty_axes are
// handled by the caller).
std::vector<int64_t> reduce_axes(NodeCtx& c, const std::optional<std::vector<int64_t>>& axes) {
  const int r = c.rank(0);
  std::vector<int64_t> out;
  if (!axes || axes->empty()) {
    for (int k = 0; k < r; ++k) out.push_back(k);
    return out;
  }
  for (int64_t a : *axes) out.push_back(normalize_axis(c, a, r));
  return out;
}

void reduce(NodeCtx& c) {
  const std::string& op = c.op_type();
  // ReduceSum takes its axes as an input from opset 13; the others from 18 (beyond this importer).
  const std::optional<std::vector<int64_t>> given = read_axes(c, 1, op == "ReduceSum" ? 13 : 18);
  const bool keep = c.attr_int("keepdims", 1) != 0;
  if (c.attr_int("noop_with_empty_axes", 0) && (!given || given->empty())) {
    c.alias(0, c.tensor(0));
    return;
  }
  const std::vector<int64_t> axes = reduce_axes(c, given);
  const std::string x = c.tensor(0), k = lit_bool(keep);
  if (op == "ReduceMean") c.emit("mean", {x, lit(axes), k}, 0);
  else if (op == "ReduceSum") c.emit("sum", {x, lit(axes), k}, 0);
  else if (op == "ReduceMax") c.emit("amax", {x, lit(axes), k}, 0);
  else if (op == "ReduceMin") c.emit("amin", {x, lit(axes), k}, 0);
  else if (op == "ReduceProd") c.emit("prod", {x, lit(axes), k}, 0);
  else if (op == "ReduceLogSumExp") c.emit("logsumexp", {x, lit(axes), k}, 0);
  else if (op == "ReduceSumSquare") c.emit("sum", {c.emit("mul", {x, x}), lit(axes), k}, 0);
  else if (op == "ReduceL1") c.emit("sum", {c.emit("abs", {x}), lit(axes), k}, 0);
  else if (op == "ReduceL2") c.emit("sqrt", {c.emit("sum", {c.emit("mul", {x, x}), lit(axes), k})}, 0);
  else if (op == "ReduceLogSum") c.emit("log", {c.emit("sum", {x, lit(axes), k})}, 0);
}

void arg_extreme(NodeCtx& c) {
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), c.rank(0));
  const bool keep = c.attr_int("keepdims", 1) != 0;
  const std::string op = c.op_type() == "ArgMax" ? "argmax" : "argmin";
  if (!c.attr_int("select_last_index", 0)) {
    c.emit(op, {c.tensor(0), lit(axis), lit_bool(keep)}, 0);
    return;
  }
  // The last of equal extremes: the first one of the flipped input, counted from the end.
  const Dim d = c.in(0).shape.dims[static_cast<size_t>(axis)];
  if (!d.is_static()) c.unsupported("select_last_index=1 over a dim known only at run time is not supported");
  const std::string f = c.emit("flip", {c.tensor(0), lit(std::vector<int64_t>{axis})});
  const std::string i = c.emit(op, {f, lit(axis), lit_bool(keep)});
  c.emit("sub", {c.scalar(::onnx::TensorProto::INT64, static_cast<double>(d.size - 1)), i}, 0);
}

void thresholded_relu(NodeCtx& c) {
  // x > alpha ? x : 0
  const std::string x = c.tensor(0);
  const std::string gt = c.emit("gt", {x, c.scalar(c.dtype(0), c.attr_float("alpha", 1.0f))});
  c.emit("where", {gt, x, c.scalar(c.dtype(0), 0)}, 0);
}

void is_inf(NodeCtx& c) {
  const bool neg = c.attr_int("detect_negative", 1) != 0, pos = c.attr_int("detect_positive", 1) != 0;
  const std::string x = c.tensor(0);
  if (neg && pos) c.emit("isinf", {x}, 0);
  else if (pos) c.emit("isposinf", {x}, 0);
  else if (neg) c.emit("isneginf", {x}, 0);
  else c.emit("logical_and", {c.emit("isinf", {x}), c.scalar(::onnx::TensorProto::BOOL, 0)}, 0);
}

void einsum(NodeCtx& c) {
  std::string list = "[";
  for (int i = 0; i < c.num_inputs(); ++i) list += (i ? ", " : "") + c.tensor(i);
  std::string eq;
  for (char ch : c.attr_string("equation", "")) {
    if (ch == '"' || ch == '\\') eq += '\\';
    eq += ch;
  }
  c.emit("einsum", {"\"" + eq + "\"", list + "]"}, 0);
}

void cumsum(NodeCtx& c) {
  const int64_t axis = normalize_axis(c, c.constant(1, "axis").ints("axis").at(0), c.rank(0));
  const bool exclusive = c.attr_int("exclusive", 0) != 0, reverse = c.attr_int("reverse", 0) != 0;
  const std::string flip_dims = lit(std::vector<int64_t>{axis});
  std::string x = c.tensor(0);
  if (reverse) x = c.emit("flip", {x, flip_dims});
  // Tessera's cumsum keeps the dtype given: ONNX's does too.
  std::string y = c.emit("cumsum", {x, lit(axis), dtype_lit(c.dtype(0))}, reverse || exclusive ? -1 : 0);
  if (exclusive) y = c.emit("sub", {y, x}, reverse ? -1 : 0);
  if (reverse) c.emit("flip", {y, flip_dims}, 0);
}

void shrink(NodeCtx& c) {
  // x < -lambd ? x + bias : x > lambd ? x - bias : 0
  const float l = c.attr_float("lambd", 0.5f), b = c.attr_float("bias", 0.0f);
  const int32_t dt = c.dtype(0);
  const std::string x = c.tensor(0);
  const std::string lo = c.emit("lt", {x, c.scalar(dt, -l)}), hi = c.emit("gt", {x, c.scalar(dt, l)});
  const std::string inner = c.emit("where", {hi, c.emit("sub", {x, c.scalar(dt, b)}), c.scalar(dt, 0)});
  c.emit("where", {lo, c.emit("add", {x, c.scalar(dt, b)}), inner}, 0);
}

void celu(NodeCtx& c) { c.emit("celu", {c.tensor(0), lit_float(c.attr_float("alpha", 1.0f))}, 0); }

void softsign(NodeCtx& c) {
  // x / (1 + |x|)
  const std::string x = c.tensor(0);
  c.emit("div", {x, c.emit("add", {c.emit("abs", {x}), c.scalar(c.dtype(0), 1)})}, 0);
}

void nonzero(NodeCtx& c) {
  // ONNX gives [rank, count], torch's nonzero [count, rank].
  c.emit("permute", {c.emit("nonzero", {c.tensor(0)}), "[1, 0]"}, 0);
}

void mean_variance_normalization(NodeCtx& c) {
  // (x - mean) / sqrt(mean((x - mean)^2)) over axes (default N, H, W), without an epsilon.
  const std::vector<int64_t> axes = c.attr_ints("axes", {0, 2, 3});
  std::vector<int64_t> dims;
  for (int64_t a : axes) dims.push_back(normalize_axis(c, a, c.rank(0)));
  const std::string x = c.tensor(0);
  const std::string d = c.emit("sub", {x, c.emit("mean", {x, lit(dims), "true"})});
  const std::string var = c.emit("mean", {c.emit("mul", {d, d}), lit(dims), "true"});
  c.emit("div", {d, c.emit("sqrt", {var})}, 0);
}

void det(NodeCtx& c) { c.emit("det", {c.tensor(0)}, 0); }

void scatter_elements(NodeCtx& c) {
  const int r = c.rank(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), r);
  const std::string reduction = c.attr_string("reduction", "none");
  // ONNX allows negative indices; Tessera's scatter does not: wrap them (static dim).
  std::string idx = c.tensor(1);
  if (c.dtype(1) != ::onnx::TensorProto::INT64) idx = c.emit("to", {idx, "int64"});
  const Dim d = c.in(0).shape.dims[static_cast<size_t>(axis)];
  if (d.is_static()) {
    const std::string neg = c.emit("lt", {idx, c.scalar(::onnx::TensorProto::INT64, 0)});
    idx = c.emit("where", {neg, c.emit("add", {idx, c.scalar(::onnx::TensorProto::INT64, static_cast<double>(d.size))}), idx});
  }
  if (reduction == "none") c.emit("scatter", {c.tensor(0), lit(axis), idx, c.tensor(2)}, 0);
  else if (reduction == "add") c.emit("scatter_add", {c.tensor(0), lit(axis), idx, c.tensor(2)}, 0);
  else if (reduction == "mul") c.emit("scatter_reduce", {c.tensor(0), lit(axis), idx, c.tensor(2), "\"prod\""}, 0);
  else c.fail("reduction '" + reduction + "'");
}

void trilu(NodeCtx& c) {
  const int64_t k = c.has_input(1) ? c.constant(1, "k").ints("k").at(0) : 0;
  c.emit(c.attr_int("upper", 1) ? "triu" : "tril", {c.tensor(0), lit(k)}, 0);
}

void top_k(NodeCtx& c) {
  const int64_t k = c.constant(1, "K").ints("K").at(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", -1), c.rank(0));
  const bool largest = c.attr_int("largest", 1) != 0, sorted = c.attr_int("sorted", 1) != 0;
  c.emit_multi("topk", {c.tensor(0), lit(k), lit(axis), lit_bool(largest), lit_bool(sorted)}, {0, 1});
}

// The reduction and class weights of the two ONNX losses, as Tessera's nll_loss and
// cross_entropy take them.
std::vector<std::string> loss_args(NodeCtx& c) {
  const std::string reduction = c.attr_string("reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none") c.fail("reduction '" + reduction + "'");
  return {c.has_input(2) ? c.tensor(2) : "None", "\"" + reduction + "\"",
          lit(c.attr_int("ignore_index", -100))};  // no ignore_index: torch's default, never a class
}

void nll_loss(NodeCtx& c) {
  std::vector<std::string> args{c.tensor(0), c.tensor(1)};
  for (std::string& a : loss_args(c)) args.push_back(a);
  c.emit("nll_loss", args, 0);
}

void softmax_cross_entropy(NodeCtx& c) {
  // loss = nll_loss(log_softmax(scores, 1), labels); output 1 is the log-probabilities.
  const std::string logp = c.emit("log_softmax", {c.tensor(0), "1"}, c.output_used(1) ? 1 : -1);
  std::vector<std::string> args{logp, c.tensor(1)};
  for (std::string& a : loss_args(c)) args.push_back(a);
  c.emit("nll_loss", args, 0);
}

}  // namespace

void add_math_ops(OpTable& t) {
  for (const auto& [onnx_op, _] : unary_ops()) t[onnx_op] = unary;
  for (const auto& [onnx_op, _] : binary_ops()) t[onnx_op] = binary;
  t["Div"] = div;
  t["Pow"] = pow;
  t["Mod"] = mod;
  for (const char* op : {"Max", "Min", "Sum", "Mean"}) t[op] = variadic;
  t["Clip"] = clip;
  t["LeakyRelu"] = leaky_relu;
  t["Elu"] = elu;
  t["Selu"] = elu;
  t["HardSigmoid"] = hard_sigmoid;
  t["HardSwish"] = hard_swish;
  t["PRelu"] = prelu;
  t["Where"] = where;
  t["MatMul"] = matmul;
  t["Gemm"] = gemm;
  for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceLogSumExp",
                         "ReduceSumSquare", "ReduceL1", "ReduceL2", "ReduceLogSum"})
    t[op] = reduce;
  t["ThresholdedRelu"] = thresholded_relu;
  t["IsInf"] = is_inf;
  t["Einsum"] = einsum;
  t["CumSum"] = cumsum;
  t["Trilu"] = trilu;
  t["Shrink"] = shrink;
  t["Det"] = det;
  t["Celu"] = celu;
  t["Softsign"] = softsign;
  t["NonZero"] = nonzero;
  t["MeanVarianceNormalization"] = mean_variance_normalization;
  t["ScatterElements"] = scatter_elements;
  t["Scatter"] = scatter_elements;
  t["TopK"] = top_k;
  t["NegativeLogLikelihoodLoss"] = nll_loss;
  t["SoftmaxCrossEntropyLoss"] = softmax_cross_entropy;
  t["ArgMax"] = arg_extreme;
  t["ArgMin"] = arg_extreme;
}

}  // namespace tsr::onnx::detail
