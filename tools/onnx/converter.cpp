#include "converter.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "fold.hpp"
#include "infer.hpp"

namespace tsr::onnx::detail {

using ::onnx::AttributeProto;
using ::onnx::NodeProto;
using ::onnx::TensorProto;

// ---- literals --------------------------------------------------------------------------------

std::string lit(int64_t v) { return std::to_string(v); }

std::string lit(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t k = 0; k < v.size(); ++k) s += (k ? ", " : "") + std::to_string(v[k]);
  return s + "]";
}

std::string lit_bool(bool b) { return b ? "true" : "false"; }

// The graph printer's own rule (core/graph/text_print.cpp, format_double), so that the text
// written here prints back unchanged.
std::string lit_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[40];
  for (int prec = 15; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string lit_float(float f) {
  if (!std::isfinite(f)) return lit_double(f);
  char buf[40];
  for (int prec = 6; prec <= 9; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, static_cast<double>(f));
    if (std::strtof(buf, nullptr) == f) break;
  }
  return lit_double(std::strtod(buf, nullptr));
}

std::string dtype_lit(int32_t onnx_dtype) {
  tsr_dtype_t dt = to_tsr_dtype(onnx_dtype);
  if (dt == TSR_DTYPE_UNDEFINED)
    throw Error(TSR_UNIMPLEMENTED, onnx_dtype_name(onnx_dtype) + " is a dtype Tessera does not have");
  return dtype_name(dt);
}

namespace {

std::string scalar_lit(int32_t dtype, const Elem& e) {
  if (dtype == TensorProto::DOUBLE) return lit_double(e.as_double());
  if (is_float_dtype(dtype)) return lit_float(static_cast<float>(e.as_double()));
  if (dtype == TensorProto::BOOL) return lit_bool(e.i != 0);
  return lit(e.i);
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

}  // namespace

// ---- NodeCtx ---------------------------------------------------------------------------------

NodeCtx::NodeCtx(Converter& cv, const NodeProto& node, int opset)
    : cv_(cv), node_(node), opset_(opset), defined_(static_cast<size_t>(node.output_size()), false) {}

bool NodeCtx::has_input(int i) const { return i >= 0 && i < node_.input_size() && !node_.input(i).empty(); }

const Value& NodeCtx::in(int i) const {
  if (!has_input(i)) fail("input " + std::to_string(i) + " is missing");
  return cv_.value(node_.input(i));
}

std::string NodeCtx::tensor(int i) {
  in(i);
  return cv_.materialize(cv_.value(node_.input(i)));
}

bool NodeCtx::is_constant(int i) const { return has_input(i) && in(i).is_const(); }

const Folded& NodeCtx::constant(int i, const std::string& what) {
  const Value& v0 = in(i);
  if (!v0.is_const())
    unsupported(what + " (input " + std::to_string(i) + " " + quoted(v0.onnx_name) +
                ") is computed at run time; the importer needs it known at import time (an initializer, a Constant, "
                "or a shape computation it can fold)");
  Value& v = cv_.value(node_.input(i));
  if (!v.folded) {
    if (numel_of(*v.data) > kFoldLimit) unsupported(what + " is too large to read at import time");
    v.folded = std::make_shared<Folded>(fold_tensor(*v.data, cv_.dir_));
  }
  return *v.folded;
}

int NodeCtx::rank(int i) const {
  const Value& v = in(i);
  if (!v.shape.has_rank)
    fail("the rank of input " + std::to_string(i) + " " + quoted(v.onnx_name) + " is unknown (shape inference did not find it)");
  return v.shape.rank();
}

std::vector<int64_t> NodeCtx::static_dims(int i, const std::string& why) const {
  const Value& v = in(i);
  rank(i);
  std::vector<int64_t> out;
  for (const Dim& d : v.shape.dims) {
    if (!d.is_static())
      unsupported(why + " needs the dims of input " + std::to_string(i) + " " + quoted(v.onnx_name) +
                  " at import time, and some are only known at run time");
    out.push_back(d.size);
  }
  return out;
}

const AttributeProto* NodeCtx::attr(const std::string& name, int type) {
  for (const AttributeProto& a : node_.attribute()) {
    if (a.name() != name) continue;
    read_.insert(name);
    if (!a.ref_attr_name().empty()) unsupported("attribute " + quoted(name) + " refers to a function attribute");
    if (a.type() != type)
      fail("attribute " + quoted(name) + " has type " + AttributeProto::AttributeType_Name(a.type()) + ", expected " +
           AttributeProto::AttributeType_Name(static_cast<AttributeProto::AttributeType>(type)));
    return &a;
  }
  return nullptr;
}

bool NodeCtx::has_attr(const std::string& name) {
  for (const AttributeProto& a : node_.attribute())
    if (a.name() == name) return true;
  return false;
}

int64_t NodeCtx::attr_int(const std::string& name, int64_t def) {
  const AttributeProto* a = attr(name, AttributeProto::INT);
  return a ? a->i() : def;
}

float NodeCtx::attr_float(const std::string& name, float def) {
  const AttributeProto* a = attr(name, AttributeProto::FLOAT);
  return a ? a->f() : def;
}

std::string NodeCtx::attr_string(const std::string& name, const std::string& def) {
  const AttributeProto* a = attr(name, AttributeProto::STRING);
  return a ? a->s() : def;
}

std::vector<int64_t> NodeCtx::attr_ints(const std::string& name, const std::vector<int64_t>& def) {
  const AttributeProto* a = attr(name, AttributeProto::INTS);
  return a ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : def;
}

std::vector<float> NodeCtx::attr_floats(const std::string& name) {
  const AttributeProto* a = attr(name, AttributeProto::FLOATS);
  return a ? std::vector<float>(a->floats().begin(), a->floats().end()) : std::vector<float>{};
}

const TensorProto& NodeCtx::attr_tensor(const std::string& name) {
  const AttributeProto* a = attr(name, AttributeProto::TENSOR);
  if (!a) fail("attribute " + quoted(name) + " is missing");
  return a->t();
}

void NodeCtx::ignore_attr(const std::string& name) { read_.insert(name); }

std::set<std::string> NodeCtx::unread_attrs() const {
  std::set<std::string> out;
  for (const AttributeProto& a : node_.attribute())
    if (!read_.count(a.name())) out.insert(a.name());
  return out;
}

bool NodeCtx::output_used(int k) const {
  return k < node_.output_size() && !node_.output(k).empty() && cv_.used_.count(node_.output(k));
}

Value NodeCtx::out_info(int k) {
  const std::string& name = node_.output(k);
  auto it = cv_.inferred_.find(name);
  Value v = cv_.info_of(name, it == cv_.inferred_.end() ? nullptr : it->second);
  if (!v.shape.has_rank || !v.dtype) fallback_info(*this, k, &v);
  return v;
}

std::string NodeCtx::emit(const std::string& op, const std::vector<std::string>& args, int output) {
  return emit_multi(op, args, {output})[0];
}

void NodeCtx::emit_axis_from_last(const std::string& y, int64_t axis, int64_t r) {
  std::vector<int64_t> perm;
  for (int64_t k = 0; k < r; ++k) perm.push_back(k < axis ? k : k == axis ? r - 1 : k - 1);
  emit("permute", {y, lit(perm)}, 0);
}

std::vector<std::string> NodeCtx::emit_multi(const std::string& op, const std::vector<std::string>& args,
                                             const std::vector<int>& outputs) {
  std::vector<std::string> refs;
  std::string line;
  for (size_t j = 0; j < outputs.size(); ++j) {
    const int k = outputs[j];
    std::string name, type;
    if (k >= 0) {
      Value v = out_info(k);
      name = cv_.names_.fresh(v.onnx_name);
      v.ref = name;
      type = cv_.type_text(v);
      cv_.values_[v.onnx_name] = v;
      defined_[static_cast<size_t>(k)] = true;
    } else {
      name = cv_.names_.fresh((node_.output_size() ? node_.output(0) : node_.op_type()) + "." + op);
    }
    line += (j ? ", %" : "%") + name + (type.empty() ? "" : ": " + type);
    refs.push_back("%" + name);
  }
  line += " = " + op + "(";
  for (size_t k = 0; k < args.size(); ++k) line += (k ? ", " : "") + args[k];
  cv_.nodes_text_ += line + ")\n";
  return refs;
}

std::string NodeCtx::scalar(int32_t dtype, double v) {
  const std::string base = node_.output_size() ? node_.output(0) : node_.op_type();
  const std::string name = cv_.names_.fresh(base + ".c");
  Elem e = is_float_dtype(dtype) ? Elem::of_float(v) : Elem::of_int(static_cast<int64_t>(v));
  cv_.weights_text_ += "const %" + name + ": " + dtype_lit(dtype) + "[] = " + scalar_lit(dtype, e) + "\n";
  return "%" + name;
}

void NodeCtx::alias(int k, const std::string& ref) {
  Value v = out_info(k);
  v.ref = ref.substr(1);
  cv_.values_[v.onnx_name] = v;
  defined_[static_cast<size_t>(k)] = true;
}

void NodeCtx::define_folded(int k, Folded f) {
  Value v;
  v.onnx_name = node_.output(k);
  v.dtype = f.dtype;
  v.shape.has_rank = true;
  for (int64_t d : f.dims) v.shape.dims.push_back(Dim{d, {}});
  v.folded = std::make_shared<Folded>(std::move(f));
  cv_.values_[v.onnx_name] = v;
  defined_[static_cast<size_t>(k)] = true;
}

void NodeCtx::define_data(int k, const TensorProto& t) {
  Value v;
  v.onnx_name = node_.output(k);
  v.dtype = t.data_type();
  v.shape.has_rank = true;
  for (int64_t d : t.dims()) v.shape.dims.push_back(Dim{d, {}});
  v.data = &t;
  cv_.values_[v.onnx_name] = v;
  defined_[static_cast<size_t>(k)] = true;
}

void NodeCtx::forward(int k, int i) {
  const Value& src = in(i);
  // A weight read under two names (tied weights) stays one param; small constants stay foldable.
  if (src.data && numel_of(*src.data) > kFoldLimit) tensor(i);
  Value v = cv_.value(node_.input(i));
  v.onnx_name = node_.output(k);
  cv_.values_[v.onnx_name] = v;
  defined_[static_cast<size_t>(k)] = true;
}

bool NodeCtx::defined(int k) const { return defined_[static_cast<size_t>(k)]; }

void NodeCtx::fail(const std::string& msg) const { throw Error(TSR_INVALID_ARGUMENT, msg); }
void NodeCtx::unsupported(const std::string& msg) const { throw Error(TSR_UNIMPLEMENTED, msg); }

// ---- Converter -------------------------------------------------------------------------------

Converter::Converter(const ::onnx::ModelProto& model, std::string dir) : model_(model), dir_(std::move(dir)) {}

Shape Converter::shape_of(const ::onnx::TensorShapeProto& s) {
  Shape out;
  out.has_rank = true;
  for (const auto& d : s.dim()) {
    Dim dim;
    if (d.has_dim_value()) {
      dim.size = d.dim_value();
    } else if (d.has_dim_param()) {
      auto it = sym_of_param_.find(d.dim_param());
      if (it != sym_of_param_.end()) dim.sym = it->second;  // a symbol of the inputs; others stay unknown
    }
    out.dims.push_back(dim);
  }
  return out;
}

Value Converter::info_of(const std::string& onnx_name, const ::onnx::TypeProto* type) {
  Value v;
  v.onnx_name = onnx_name;
  if (type && type->has_tensor_type()) {
    v.dtype = type->tensor_type().elem_type();
    if (type->tensor_type().has_shape()) v.shape = shape_of(type->tensor_type().shape());
  }
  return v;
}

std::string Converter::type_text(const Value& v) const {
  if (to_tsr_dtype(v.dtype) == TSR_DTYPE_UNDEFINED || !v.shape.has_rank) return "";
  std::string s = dtype_lit(v.dtype) + "[";
  for (size_t k = 0; k < v.shape.dims.size(); ++k) {
    const Dim& d = v.shape.dims[k];
    if (!d.known()) return "";
    s += (k ? ", " : "") + (d.is_static() ? std::to_string(d.size) : d.sym);
  }
  return s + "]";
}

Value& Converter::value(const std::string& onnx_name) {
  auto it = values_.find(onnx_name);
  if (it == values_.end()) throw Error(TSR_INVALID_ARGUMENT, "value " + quoted(onnx_name) + " is read before it is defined");
  return it->second;
}

void Converter::add_input(const ::onnx::ValueInfoProto& vi) {
  const std::string where = "graph input " + quoted(vi.name());
  if (!vi.type().has_tensor_type()) throw Error(TSR_UNIMPLEMENTED, where + " is not a tensor");
  const auto& tt = vi.type().tensor_type();
  if (to_tsr_dtype(tt.elem_type()) == TSR_DTYPE_UNDEFINED)
    throw Error(TSR_UNIMPLEMENTED, where + " is " + onnx_dtype_name(tt.elem_type()) + ", a dtype Tessera does not have");
  if (!tt.has_shape()) throw Error(TSR_UNIMPLEMENTED, where + " has no shape (its rank must be known)");
  // Dim params become symbols; a dim with neither a size nor a name gets a symbol of its own.
  for (int k = 0; k < tt.shape().dim_size(); ++k) {
    const auto& d = tt.shape().dim(k);
    if (d.has_dim_value()) continue;
    const std::string param = d.has_dim_param() ? d.dim_param() : vi.name() + "_d" + std::to_string(k);
    if (!sym_of_param_.count(param)) sym_of_param_[param] = names_.fresh(symbol_name(param));
  }
  Value v;
  v.onnx_name = vi.name();
  v.dtype = tt.elem_type();
  v.shape = shape_of(tt.shape());
  for (int k = 0; k < tt.shape().dim_size(); ++k)
    if (!tt.shape().dim(k).has_dim_value() && !tt.shape().dim(k).has_dim_param())
      v.shape.dims[static_cast<size_t>(k)].sym = sym_of_param_[vi.name() + "_d" + std::to_string(k)];
  v.ref = names_.fresh(vi.name());
  inputs_text_ += "input %" + v.ref + ": " + type_text(v) + "\n";
  values_[vi.name()] = v;
}

std::string Converter::materialize(Value& v) {
  if (!v.ref.empty()) return "%" + v.ref;
  if (!v.is_const()) throw Error(TSR_INVALID_ARGUMENT, "value " + quoted(v.onnx_name) + " has no definition");
  const std::string dtype = dtype_lit(v.dtype);
  const std::vector<int64_t> dims = v.data ? std::vector<int64_t>(v.data->dims().begin(), v.data->dims().end())
                                           : v.folded->dims;
  if (v.folded && !v.folded->all_known())
    throw Error(TSR_UNIMPLEMENTED, "value " + quoted(v.onnx_name) +
                                       " is computed from input dims known only at run time, and is used as a tensor; the "
                                       "importer only folds shape computations whose result is known at import time (or "
                                       "a Reshape/Expand target with one run-time dim)");
  const std::string name = names_.fresh(v.onnx_name);
  if (dims.empty()) {
    // 0-dim constants are written inline.
    Folded f = v.folded ? *v.folded : fold_tensor(*v.data, dir_);
    weights_text_ += "const %" + name + ": " + dtype + "[] = " + scalar_lit(v.dtype, f.elems.at(0)) + "\n";
  } else {
    Tensor w = v.data ? make_weight(*v.data, dir_) : make_weight(*v.folded);
    weights_text_ += "param %" + name + ": " + dtype + lit(dims) + "\n";
    weights_.emplace_back(name, std::move(w));
  }
  v.ref = name;
  return "%" + name;
}

void Converter::convert_node(const NodeProto& node, int index, int opset) {
  std::string where = "node " + std::to_string(index);
  if (!node.name().empty()) where += " \"" + node.name() + "\"";
  where += " (" + (node.domain().empty() ? "" : node.domain() + "::") + node.op_type() + "): ";
  try {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      throw Error(TSR_UNIMPLEMENTED, "ops of domain " + quoted(node.domain()) + " are not supported");
    const OpTable& table = op_table();
    auto it = table.find(node.op_type());
    if (it == table.end()) throw Error(TSR_UNIMPLEMENTED, "op " + quoted(node.op_type()) + " is not supported");
    NodeCtx ctx(*this, node, opset);
    if (!fold_node(ctx)) it->second(ctx);
    for (const std::string& a : ctx.unread_attrs())
      throw Error(TSR_UNIMPLEMENTED, "unsupported attribute " + quoted(a));
    for (int k = 0; k < node.output_size(); ++k)
      if (ctx.output_used(k) && !ctx.defined(k))
        throw Error(TSR_UNIMPLEMENTED, "output " + std::to_string(k) + " " + quoted(node.output(k)) +
                                           " is read, and the importer only maps the op's main output");
  } catch (const Error& e) {
    throw Error(e.code(), where + e.what());
  } catch (const std::exception& e) {
    throw Error(TSR_INVALID_ARGUMENT, where + e.what());
  }
}

Imported Converter::run() {
  const ::onnx::GraphProto& g = model_.graph();
  int opset = -1;
  for (const auto& o : model_.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") opset = static_cast<int>(o.version());
  if (opset < 0)
    throw Error(TSR_UNIMPLEMENTED, "the model imports no opset of the default ONNX domain (only other domains' ops)");
  if (opset < kMinOpset || opset > kMaxOpset)
    throw Error(TSR_UNIMPLEMENTED, "the model uses opset " + std::to_string(opset) + "; the importer maps opsets " +
                                       std::to_string(kMinOpset) + " to " + std::to_string(kMaxOpset));
  if (g.sparse_initializer_size()) throw Error(TSR_UNIMPLEMENTED, "sparse initializers are not supported");
  for (const auto& vi : g.value_info()) inferred_[vi.name()] = &vi.type();
  for (const auto& vi : g.output()) inferred_[vi.name()] = &vi.type();
  for (const TensorProto& t : g.initializer()) {
    Value v;
    v.onnx_name = t.name();
    v.dtype = t.data_type();
    v.shape.has_rank = true;
    for (int64_t d : t.dims()) v.shape.dims.push_back(Dim{d, {}});
    v.data = &t;
    values_[t.name()] = v;
  }
  // Graph inputs that an initializer backs (IR < 4 lists them) are weights, not inputs.
  for (const auto& vi : g.input())
    if (!values_.count(vi.name())) add_input(vi);
  for (const NodeProto& n : g.node())
    for (const std::string& i : n.input()) used_.insert(i);
  for (const auto& vi : g.output()) used_.insert(vi.name());
  if (g.output_size() == 0) throw Error(TSR_INVALID_ARGUMENT, "the graph has no outputs");

  for (int k = 0; k < g.node_size(); ++k) convert_node(g.node(k), k, opset);

  std::string out = "output";
  for (int k = 0; k < g.output_size(); ++k) {
    try {
      out += (k ? ", " : " ") + materialize(value(g.output(k).name()));
    } catch (const Error& e) {
      throw Error(e.code(), "graph output " + quoted(g.output(k).name()) + ": " + e.what());
    }
  }
  Imported r;
  r.text = "tessera.graph 1\ndevice cpu:0\n" + inputs_text_ + weights_text_ + nodes_text_ + out + "\n";
  r.weights = std::move(weights_);
  return r;
}

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    add_math_ops(t);
    add_nn_ops(t);
    add_resize_ops(t);
    add_shape_ops(t);
    return t;
  }();
  return table;
}

}  // namespace tsr::onnx::detail
