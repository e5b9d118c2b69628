// Every registry op as a callable: arguments are matched to the schema by position and by name
// through the ABI's op_arg records (no schema text is parsed here), boxed by the argument's
// kind, and passed to op_call. tessera/_ops.py turns these into functions with signatures and
// docstrings, one per op, at import time.
#include <deque>

#include "common.hpp"

namespace tsr::py {
namespace {

using tsr::Tensor;

const char* kind_name(int32_t k) {
  static const char* names[] = {"Tensor", "int",        "float",  "bool",   "int[]",
                                "str",    "ScalarType", "Device", "Scalar", "Tensor[]"};
  return k >= 0 && k <= TSR_ARG_TENSOR_LIST ? names[k] : "?";
}

pyb::object value_to_python(const tsr_value_t& v) {
  switch (v.tag) {
    case TSR_VALUE_INT:
      return pyb::int_(v.u.i);
    case TSR_VALUE_DOUBLE:
      return pyb::float_(v.u.d);
    case TSR_VALUE_BOOL:
      return pyb::bool_(v.u.b != 0);
    case TSR_VALUE_STRING:
      return pyb::str(v.u.str ? v.u.str : "");
    case TSR_VALUE_INT_LIST: {
      pyb::list l;
      for (int64_t i = 0; i < v.u.ints.len; ++i) l.append(v.u.ints.data[i]);
      return std::move(l);
    }
    default:
      return pyb::none();
  }
}

// Storage that boxed values point into, alive for one call.
struct Boxes {
  std::deque<Tensor> tensors;
  std::deque<std::vector<int64_t>> ints;
  std::deque<std::string> strs;
  std::deque<std::vector<tsr_tensor_t*>> lists;
};

class PyOp {
 public:
  explicit PyOp(tsr_op_t* op) : op_(op) {
    const tsr_api_t* api = tsr::api();
    name_ = api->op_name(op);
    schema_ = api->op_schema(op);
    nout_ = api->op_num_outputs(op);
    for (size_t i = 0; i < api->op_num_args(op); ++i) {
      tsr_op_arg_t a{};
      check(api->op_arg(op, i, &a));
      args_.push_back(a);
    }
  }

  const std::string& name() const { return name_; }
  const std::string& schema() const { return schema_; }
  size_t num_outputs() const { return nout_; }

  pyb::list arguments() const {
    pyb::list out;
    for (const tsr_op_arg_t& a : args_) {
      pyb::dict d;
      d["name"] = a.name;
      d["kind"] = kind_name(a.kind);
      d["optional"] = a.optional != 0;
      d["mutable"] = a.is_mutable != 0;
      d["has_default"] = a.has_default != 0;
      d["default"] = a.has_default ? value_to_python(a.default_value) : pyb::none();
      out.append(d);
    }
    return out;
  }

  pyb::object call(const pyb::args& args, const pyb::kwargs& kwargs) const {
    if (args.size() > args_.size())
      raise_type(name_ + "() takes " + std::to_string(args_.size()) + " arguments but " + std::to_string(args.size()) +
                 " were given");
    std::vector<pyb::handle> given(args_.size());
    for (size_t i = 0; i < args.size(); ++i) given[i] = args[i];
    pyb::object out_arg = pyb::none();
    for (const auto& kv : kwargs) {
      std::string key = pyb::str(kv.first);
      if (key == "out") {
        out_arg = pyb::reinterpret_borrow<pyb::object>(kv.second);
        continue;
      }
      size_t i = index_of(key);
      if (i == args_.size()) raise_type(name_ + "() got an unexpected keyword argument '" + key + "'");
      if (given[i]) raise_type(name_ + "() got multiple values for argument '" + key + "'");
      given[i] = kv.second;
    }
    size_t n = 0;
    for (size_t i = 0; i < given.size(); ++i)
      if (given[i]) n = i + 1;
    Boxes boxes;
    tsr_value_t vals[16];
    for (size_t i = 0; i < given.size(); ++i) {
      const tsr_op_arg_t& a = args_[i];
      if (given[i]) {
        vals[i] = box(a, given[i], boxes);
      } else if (a.has_default) {
        vals[i] = a.default_value;
      } else {
        raise_type(name_ + "() missing required argument '" + a.name + "'");
      }
    }
    // Outputs: new tensors, or the caller's out= tensors (one, or a tuple).
    std::vector<Tensor> outs(nout_);
    std::vector<tsr_tensor_t*> raw(nout_, nullptr);
    if (!out_arg.is_none()) {
      std::vector<pyb::handle> o;
      if (pyb::isinstance<pyb::tuple>(out_arg) || pyb::isinstance<pyb::list>(out_arg)) {
        for (const pyb::handle& h : out_arg) o.push_back(h);
      } else {
        o.push_back(out_arg);
      }
      if (o.size() != nout_)
        raise_type(name_ + "(): out= needs " + std::to_string(nout_) + " tensors, got " + std::to_string(o.size()));
      for (size_t i = 0; i < nout_; ++i) {
        outs[i] = o[i].cast<Tensor>();
        raw[i] = outs[i].get();
      }
    }
    check(tsr::api()->op_call(op_, vals, n, raw.data(), nout_));
    if (!out_arg.is_none()) return out_arg;
    if (nout_ == 0) return pyb::none();
    pyb::list results;
    for (size_t i = 0; i < nout_; ++i) {
      Tensor r = Tensor::adopt(raw[i]);
      // In-place ops return their self argument: hand back the caller's own object.
      if (i == 0 && !args_.empty() && args_[0].is_mutable && vals[0].tag == TSR_VALUE_TENSOR &&
          r.get() == vals[0].u.tensor && given[0])
        results.append(pyb::reinterpret_borrow<pyb::object>(given[0]));
      else
        results.append(pyb::cast(std::move(r)));
    }
    if (nout_ == 1) return results[0];
    return pyb::tuple(results);
  }

 private:
  [[noreturn]] static void raise_type(const std::string& msg) { throw pyb::type_error(msg); }

  size_t index_of(const std::string& key) const {
    for (size_t i = 0; i < args_.size(); ++i)
      if (key == args_[i].name) return i;
    return args_.size();
  }

  [[noreturn]] void bad(const tsr_op_arg_t& a, const pyb::handle& h) const {
    raise_type(name_ + "(): argument '" + a.name + "' must be " + kind_name(a.kind) + (a.optional ? " or None" : "") +
               ", not " + std::string(pyb::str(h.get_type().attr("__name__"))));
  }

  static bool is_int(const pyb::handle& h) {
    return pyb::isinstance<pyb::int_>(h) ||
           (pyb::hasattr(h, "__index__") && !pyb::isinstance<pyb::float_>(h) && !pyb::isinstance<Tensor>(h));
  }

  tsr_value_t box(const tsr_op_arg_t& a, const pyb::handle& h, Boxes& b) const {
    tsr_value_t v{};
    if (h.is_none()) {
      if (!a.optional) bad(a, h);
      v.tag = TSR_VALUE_NONE;
      return v;
    }
    switch (a.kind) {
      case TSR_ARG_TENSOR:
        b.tensors.push_back(as_tensor(h, true));
        v.tag = TSR_VALUE_TENSOR;
        v.u.tensor = b.tensors.back().get();
        return v;
      case TSR_ARG_INT:
        if (!is_int(h)) bad(a, h);
        v.tag = TSR_VALUE_INT;
        v.u.i = h.cast<int64_t>();
        return v;
      case TSR_ARG_FLOAT:
        if (!is_int(h) && !pyb::isinstance<pyb::float_>(h)) bad(a, h);
        v.tag = TSR_VALUE_DOUBLE;
        v.u.d = h.cast<double>();
        return v;
      case TSR_ARG_BOOL:
        if (!pyb::isinstance<pyb::bool_>(h) && !is_int(h)) bad(a, h);
        v.tag = TSR_VALUE_BOOL;
        v.u.b = h.cast<bool>() ? 1 : 0;
        return v;
      case TSR_ARG_INT_LIST: {
        std::vector<int64_t> l;
        if (is_int(h)) {
          l.push_back(h.cast<int64_t>());
        } else if (pyb::isinstance<pyb::sequence>(h) && !pyb::isinstance<pyb::str>(h)) {
          for (const pyb::handle& x : h) {
            if (!is_int(x)) bad(a, h);
            l.push_back(x.cast<int64_t>());
          }
        } else {
          bad(a, h);
        }
        b.ints.push_back(std::move(l));
        v.tag = TSR_VALUE_INT_LIST;
        v.u.ints.data = b.ints.back().data();
        v.u.ints.len = static_cast<int64_t>(b.ints.back().size());
        return v;
      }
      case TSR_ARG_STRING:
        if (!pyb::isinstance<pyb::str>(h)) bad(a, h);
        b.strs.push_back(h.cast<std::string>());
        v.tag = TSR_VALUE_STRING;
        v.u.str = b.strs.back().c_str();
        return v;
      case TSR_ARG_DTYPE:
        v.tag = TSR_VALUE_DTYPE;
        v.u.dtype = to_dtype(h);
        return v;
      case TSR_ARG_DEVICE:
        v.tag = TSR_VALUE_DEVICE;
        v.u.device = to_device(h);
        return v;
      case TSR_ARG_SCALAR:
        return scalar(a, pyb::isinstance<Tensor>(h) ? h.attr("item")() : pyb::reinterpret_borrow<pyb::object>(h));
      case TSR_ARG_TENSOR_LIST: {
        if (!pyb::isinstance<pyb::sequence>(h)) bad(a, h);
        std::vector<tsr_tensor_t*> l;
        for (const pyb::handle& x : h) {
          b.tensors.push_back(as_tensor(x, true));
          l.push_back(b.tensors.back().get());
        }
        b.lists.push_back(std::move(l));
        v.tag = TSR_VALUE_TENSOR_LIST;
        v.u.tensors.data = b.lists.back().data();
        v.u.tensors.len = static_cast<int64_t>(b.lists.back().size());
        return v;
      }
      default:
        bad(a, h);
    }
  }

  tsr_value_t scalar(const tsr_op_arg_t& a, const pyb::object& h) const {
    tsr_value_t v{};
    if (pyb::isinstance<pyb::bool_>(h)) {
      v.tag = TSR_VALUE_BOOL;
      v.u.b = h.cast<bool>() ? 1 : 0;
    } else if (is_int(h)) {
      v.tag = TSR_VALUE_INT;
      v.u.i = h.cast<int64_t>();
    } else if (pyb::isinstance<pyb::float_>(h) || pyb::hasattr(h, "__float__")) {
      v.tag = TSR_VALUE_DOUBLE;
      v.u.d = h.cast<double>();
    } else {
      bad(a, h);
    }
    return v;
  }

  tsr_op_t* op_;
  std::string name_, schema_;
  size_t nout_ = 1;
  std::vector<tsr_op_arg_t> args_;
};

}  // namespace

void bind_ops(pyb::module_& m) {
  pyb::class_<PyOp>(m, "Op", "A registry op, called with its schema's arguments by position or name.")
      .def_property_readonly("name", &PyOp::name)
      .def_property_readonly("schema", &PyOp::schema)
      .def_property_readonly("num_outputs", &PyOp::num_outputs)
      .def_property_readonly("arguments", &PyOp::arguments)
      .def("__call__", &PyOp::call)
      .def("__repr__", [](const PyOp& o) { return "<tessera op " + o.schema() + ">"; });
  m.def(
      "ops",
      [] {
        const tsr_api_t* api = tsr::api();
        tsr_runtime_t* rt = tsr::runtime();
        pyb::list out;
        for (size_t i = 0; i < api->op_count(rt); ++i) out.append(PyOp(api->op_at(rt, i)));
        return out;
      },
      "Every op of the runtime's registry (the core's and the loaded plugins').");
  m.def(
      "op",
      [](const std::string& name) {
        tsr_op_t* op = nullptr;
        check(tsr::api()->op_find(tsr::runtime(), name.c_str(), &op));
        return PyOp(op);
      },
      pyb::arg("name"), "The op called `name` (NotFoundError when there is none).");
}

}  // namespace tsr::py
