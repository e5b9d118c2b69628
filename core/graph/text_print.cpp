#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "graph/builtins.hpp"
#include "graph/text.hpp"
#include "tessera/dtype.hpp"

namespace tsr::core::graph {

std::string format_double(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
  char buf[40];
  for (int prec = 15; prec <= 17; ++prec) {  // the shortest that reads back exactly
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";  // keeps it a float when read back
  return s;
}

namespace {

std::string quote(const std::string& s) {
  std::string q = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\')
      q += '\\', q += c;
    else if (c == '\n')
      q += "\\n";
    else if (c == '\t')
      q += "\\t";
    else
      q += c;
  }
  return q + '"';
}

std::string ref(const Graph& g, int id) { return "%" + g.values[static_cast<size_t>(id)].name; }

std::string literal(const Graph& g, const Arg& a) {
  switch (a.tag) {
    case TSR_VALUE_NONE:
      return "None";
    case TSR_VALUE_INT:
      return a.sym.empty() ? std::to_string(a.i) : a.sym[0].second.str();
    case TSR_VALUE_DOUBLE:
      return format_double(a.d);
    case TSR_VALUE_BOOL:
      return a.b ? "true" : "false";
    case TSR_VALUE_INT_LIST: {
      std::string s = "[";
      for (size_t k = 0; k < a.ints.size(); ++k) {
        std::string item = std::to_string(a.ints[k]);
        for (const auto& [index, expr] : a.sym)
          if (index == k) item = expr.str();
        s += (k ? ", " : "") + item;
      }
      return s + "]";
    }
    case TSR_VALUE_DTYPE:
      return dtype_name(static_cast<tsr_dtype_t>(a.dtype));
    case TSR_VALUE_STRING:
      return quote(a.str);
    case TSR_VALUE_DEVICE:
      return device_str(g.rt, a.device);
    case TSR_VALUE_TENSOR:
      return ref(g, a.values[0]);
    default: {  // TENSOR_LIST
      std::string s = "[";
      for (size_t k = 0; k < a.values.size(); ++k) s += (k ? ", " : "") + ref(g, a.values[k]);
      return s + "]";
    }
  }
}

std::string scalar_literal(const Value& v) {
  if (v.scalar.tag == TSR_VALUE_BOOL) return v.scalar.u.b ? "true" : "false";
  if (v.scalar.tag == TSR_VALUE_INT) return std::to_string(v.scalar.u.i);
  return format_double(v.scalar.u.d);
}

}  // namespace

std::string print(const Graph& g) {
  std::string s = "tessera.graph 1\ndevice " + device_str(g.rt, g.device) + "\n";
  // The plugins whose ops the graph calls, so that a runtime without them says which to load.
  std::map<std::string, std::set<std::string>> plugins;
  for (const Node& n : g.nodes) {
    std::string p = n.callee.plugin();
    if (!p.empty()) plugins[p].insert(n.callee.name());
  }
  for (const auto& [plugin, ops] : plugins) {
    s += "plugin " + plugin + ":";
    bool first = true;
    for (const std::string& op : ops) s += (first ? " " : ", ") + op, first = false;
    s += "\n";
  }
  for (int id : g.inputs) s += "input " + ref(g, id) + ": " + type_str(g.values[static_cast<size_t>(id)].type) + "\n";
  for (int id : g.weights) {
    const Value& v = g.values[static_cast<size_t>(id)];
    s += (v.kind == ValueKind::Param ? "param " : "const ") + ref(g, id) + ": " + type_str(v.type);
    if (v.inline_scalar) s += " = " + scalar_literal(v) + (v.wrapped ? " wrapped" : "");
    s += "\n";
  }
  for (const Node& n : g.nodes) {
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      const Value& v = g.values[static_cast<size_t>(n.outputs[k])];
      s += (k ? ", " : "") + ref(g, n.outputs[k]);
      if (v.type.known) s += ": " + type_str(v.type);
    }
    if (!n.outputs.empty()) s += " = ";
    s += n.callee.name() + "(";
    // Trailing arguments equal to the schema's defaults are left out.
    const Schema& schema = n.callee.schema();
    size_t last = n.args.size();
    while (last > 0 && is_default(schema.args[last - 1], n.args[last - 1])) --last;
    for (size_t k = 0; k < last; ++k) s += (k ? ", " : "") + literal(g, n.args[k]);
    s += ")\n";
  }
  s += "output";
  for (size_t k = 0; k < g.outputs.size(); ++k) s += (k ? ", " : " ") + ref(g, g.outputs[k]);
  return s + "\n";
}

}  // namespace tsr::core::graph
