// OpInfos a plugin ships as data: NAME.tests.json beside NAME.so (tessera_add_plugin's TESTS
// argument puts it there and installs it). `tessera conformance` and `tessera certify` read it
// for every loaded plugin, so a vendor's own ops are checked like the core's: against the same
// op on cpu:0 in float64, non-contiguous inputs, out=, and float64 gradchecks (through the
// plugin's backward formula). The format is described in docs/conformance.md:
//
//   {"ops": [{"op": "example::gemm_bias_act",
//             "dtypes": ["float32", "float64"], "differentiable": true, "tol_scale": 4,
//             "samples": [{"desc": "relu", "args": [{"tensor": [3, 5]}, {"tensor": [5, 4]},
//                                                    {"tensor": [4]}, "relu"]}]}]}
//
// An argument is a tensor spec {"tensor": SHAPE, "low": L, "high": H, "dtype": "int64"|"bool"}
// (floating by default: uniform in [low, high), default [-2, 2); int64 in [low, high); bool
// masks) or a constant: null (None), true/false, an integer, a float, a string, a list of ints.
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "opinfo.hpp"

namespace tsr::conformance {
namespace {

using json = nlohmann::json;

struct ArgSpec {
  enum Kind { Tensor, None, Int, Double, Bool, Str, IntList } kind = None;
  int input = -1;  // Tensor: index into the sample's inputs
  int64_t i = 0;
  double d = 0;
  bool b = false;
  std::string s;
  std::vector<int64_t> ints;
};

struct TensorSpec {
  Shape shape;
  double low = -2, high = 2;
  tsr_dtype_t dtype = TSR_F64;  // F64: a floating input (converted to the dtype under test)
};

bool dtype_by_name(const std::string& s, tsr_dtype_t* out) {
  for (int d = TSR_BOOL; d <= TSR_F64; ++d)
    if (s == tsr::dtype_name(d)) {
      *out = static_cast<tsr_dtype_t>(d);
      return true;
    }
  return false;
}

// Calls op `name` with the specs' arguments (tensors from `in`), into `outs` when given.
Tensors call_op(const std::string& name, const std::vector<ArgSpec>& specs, const Tensors& in,
                const Tensors* outs) {
  const tsr_api_t* a = tsr::api();
  tsr_op_t* h = nullptr;
  tsr::check(a->op_find(tsr::runtime(), name.c_str(), &h));
  std::vector<tsr_value_t> vals(specs.size());
  for (size_t k = 0; k < specs.size(); ++k) {
    const ArgSpec& s = specs[k];
    tsr_value_t& v = vals[k];
    switch (s.kind) {
      case ArgSpec::Tensor:
        v.tag = TSR_VALUE_TENSOR;
        v.u.tensor = in.at(static_cast<size_t>(s.input)).get();
        break;
      case ArgSpec::None:
        v.tag = TSR_VALUE_NONE;
        break;
      case ArgSpec::Int:
        v.tag = TSR_VALUE_INT;
        v.u.i = s.i;
        break;
      case ArgSpec::Double:
        v.tag = TSR_VALUE_DOUBLE;
        v.u.d = s.d;
        break;
      case ArgSpec::Bool:
        v.tag = TSR_VALUE_BOOL;
        v.u.b = s.b;
        break;
      case ArgSpec::Str:
        v.tag = TSR_VALUE_STRING;
        v.u.str = s.s.c_str();
        break;
      case ArgSpec::IntList:
        v.tag = TSR_VALUE_INT_LIST;
        v.u.ints.data = s.ints.data();
        v.u.ints.len = static_cast<int64_t>(s.ints.size());
        break;
    }
  }
  size_t nout = a->op_num_outputs(h);
  std::vector<tsr_tensor_t*> raw(nout, nullptr);
  for (size_t i = 0; outs && i < outs->size() && i < nout; ++i) raw[i] = (*outs)[i].get();
  tsr::check(a->op_call(h, vals.data(), vals.size(), raw.data(), nout));
  Tensors result;
  for (size_t i = 0; i < nout; ++i)
    result.push_back(outs && i < outs->size() ? (*outs)[i] : tsr::Tensor::adopt(raw[i]));
  return result;
}

void parse_arg(const json& j, std::vector<ArgSpec>* args, std::vector<TensorSpec>* tensors) {
  ArgSpec a;
  if (j.is_null()) {
    a.kind = ArgSpec::None;
  } else if (j.is_boolean()) {
    a.kind = ArgSpec::Bool;
    a.b = j.get<bool>();
  } else if (j.is_number_integer()) {
    a.kind = ArgSpec::Int;
    a.i = j.get<int64_t>();
  } else if (j.is_number()) {
    a.kind = ArgSpec::Double;
    a.d = j.get<double>();
  } else if (j.is_string()) {
    a.kind = ArgSpec::Str;
    a.s = j.get<std::string>();
  } else if (j.is_array()) {
    a.kind = ArgSpec::IntList;
    a.ints = j.get<std::vector<int64_t>>();
  } else if (j.is_object() && j.contains("tensor")) {
    TensorSpec t;
    t.shape = j.at("tensor").get<Shape>();
    for (int64_t d : t.shape)
      if (d < 0) throw std::runtime_error("a tensor size is negative");
    if (j.contains("dtype")) {
      std::string dn = j.at("dtype").get<std::string>();
      if (!dtype_by_name(dn, &t.dtype)) throw std::runtime_error("unknown dtype '" + dn + "'");
      if (t.dtype != TSR_I64 && t.dtype != TSR_BOOL)
        throw std::runtime_error("a tensor spec's dtype is int64 or bool (floating inputs take the dtype under test)");
      if (t.dtype == TSR_I64) t.low = 0, t.high = 2;
    }
    t.low = j.value("low", t.low);
    t.high = j.value("high", t.high);
    if (!(t.high > t.low)) throw std::runtime_error("a tensor spec needs low < high");
    a.kind = ArgSpec::Tensor;
    a.input = static_cast<int>(tensors->size());
    tensors->push_back(t);
  } else {
    throw std::runtime_error("an argument is null, a bool, a number, a string, a list of ints or {\"tensor\": SHAPE}");
  }
  args->push_back(std::move(a));
}

Sample make_sample(const std::string& op, const std::string& desc, const std::vector<ArgSpec>& args,
                   const std::vector<TensorSpec>& tensors, uint64_t seed) {
  Sample s;
  std::string shapes;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const TensorSpec& t = tensors[k];
    const uint64_t ts = seed * 31 + k;
    if (t.dtype == TSR_I64)
      s.inputs.push_back(random_index(t.shape, ts, static_cast<int64_t>(t.low), static_cast<int64_t>(t.high)));
    else if (t.dtype == TSR_BOOL)
      s.inputs.push_back(random_mask(t.shape, ts));
    else
      s.inputs.push_back(random_f64(t.shape, ts, t.low, t.high));
    std::string sh = "[";
    for (size_t d = 0; d < t.shape.size(); ++d) sh += (d ? ", " : "") + std::to_string(t.shape[d]);
    shapes += (shapes.empty() ? "" : ", ") + sh + "]";
  }
  s.desc = desc.empty() ? shapes : desc + " " + shapes;
  auto shared = std::make_shared<const std::vector<ArgSpec>>(args);
  s.run = [op, shared](const Tensors& in) { return call_op(op, *shared, in, nullptr); };
  s.run_out = [op, shared](const Tensors& in, Tensors& outs) { call_op(op, *shared, in, &outs); };
  return s;
}

OpInfo parse_op(const json& j) {
  OpInfo o;
  o.name = j.at("op").get<std::string>();
  try {
    for (const json& d : j.at("dtypes")) {
      tsr_dtype_t dt;
      if (!dtype_by_name(d.get<std::string>(), &dt)) throw std::runtime_error("unknown dtype " + d.dump());
      o.dtypes.push_back(dt);
    }
    o.differentiable = j.value("differentiable", true);
    o.noncontiguous = j.value("noncontiguous", true);
    o.tol_scale = j.value("tol_scale", 1.0);
    if (!(o.tol_scale > 0)) throw std::runtime_error("tol_scale must be positive");
    struct Spec {
      std::string desc;
      std::vector<ArgSpec> args;
      std::vector<TensorSpec> tensors;
    };
    std::vector<Spec> specs;
    for (const json& s : j.at("samples")) {
      Spec sp;
      sp.desc = s.value("desc", std::string());
      for (const json& a : s.at("args")) parse_arg(a, &sp.args, &sp.tensors);
      specs.push_back(std::move(sp));
    }
    if (specs.empty()) throw std::runtime_error("no samples");
    const std::string name = o.name;
    o.samples = [name, specs](uint64_t seed) {
      std::vector<Sample> v;
      for (size_t k = 0; k < specs.size(); ++k)
        v.push_back(make_sample(name, specs[k].desc, specs[k].args, specs[k].tensors, seed + k));
      return v;
    };
  } catch (const std::exception& e) {
    throw std::runtime_error("op '" + o.name + "': " + e.what());
  }
  return o;
}

}  // namespace

std::vector<OpInfo> opinfos_from_tests_file(const std::string& path, std::string* error) {
  std::vector<OpInfo> v;
  std::ifstream in(path);
  if (!in) return v;  // a plugin without test cases
  try {
    json j = json::parse(in);
    for (const json& op : j.at("ops")) v.push_back(parse_op(op));
  } catch (const std::exception& e) {
    if (error) *error = path + ": " + e.what();
    v.clear();
  }
  return v;
}

}  // namespace tsr::conformance
