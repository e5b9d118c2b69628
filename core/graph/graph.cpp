#include "graph/graph.hpp"

#include <cstring>

#include "graph/builtins.hpp"
#include "tessera/dtype.hpp"

namespace tsr::core::graph {

bool Arg::operator==(const Arg& o) const {
  if (tag != o.tag || sym != o.sym) return false;
  switch (tag) {
    case TSR_VALUE_NONE:
      return true;
    case TSR_VALUE_INT:
      return i == o.i;
    case TSR_VALUE_DOUBLE:  // bitwise: NaN equals NaN, -0.0 differs from 0.0
      return std::memcmp(&d, &o.d, sizeof d) == 0;
    case TSR_VALUE_BOOL:
      return b == o.b;
    case TSR_VALUE_INT_LIST:
      return ints == o.ints;
    case TSR_VALUE_DTYPE:
      return dtype == o.dtype;
    case TSR_VALUE_STRING:
      return str == o.str;
    case TSR_VALUE_DEVICE:
      return device.type == o.device.type && device.index == o.device.index;
    default:  // TENSOR, TENSOR_LIST
      return values == o.values;
  }
}

const Schema& Callee::schema() const { return op ? op->schema : builtin->schema; }
const std::string& Callee::name() const { return op ? op->schema.name : builtin->name; }
bool Callee::mutates() const { return op ? op->mutates : builtin->mutates; }
std::string Callee::plugin() const { return op ? op->extra.plugin : std::string(); }

Graph::~Graph() {
  for (Value& v : values)
    if (v.weight) v.weight->release();
}

tsr_status_t Graph::add_value(Value v, int* id) {
  if (by_name.count(v.name)) {
    if (v.weight) v.weight->release();  // the graph would have owned it
    return make_status(TSR_INVALID_ARGUMENT, "graph: the value %" + v.name + " is defined twice");
  }
  *id = static_cast<int>(values.size());
  by_name.emplace(v.name, *id);
  values.push_back(std::move(v));
  return nullptr;
}

std::vector<int> Graph::use_counts() const {
  std::vector<int> uses(values.size(), 0);
  for (const Node& n : nodes)
    for (const Arg& a : n.args)
      for (int v : a.values) ++uses[static_cast<size_t>(v)];
  for (int v : outputs) ++uses[static_cast<size_t>(v)];
  return uses;
}

void Graph::compact() {
  std::vector<int> uses = use_counts();
  std::vector<int> remap(values.size(), -1);
  std::vector<Value> kept;
  for (size_t i = 0; i < values.size(); ++i) {
    Value& v = values[i];
    bool keep = v.kind == ValueKind::Input || uses[i] > 0 || (v.kind == ValueKind::Node && v.producer >= 0);
    if (!keep) {
      if (v.weight) v.weight->release();
      v.weight = nullptr;
      continue;
    }
    remap[i] = static_cast<int>(kept.size());
    kept.push_back(std::move(v));
  }
  values = std::move(kept);
  by_name.clear();
  for (size_t i = 0; i < values.size(); ++i) by_name.emplace(values[i].name, static_cast<int>(i));
  auto fix = [&](std::vector<int>& ids) {
    for (int& id : ids) id = remap[static_cast<size_t>(id)];
  };
  fix(inputs);
  fix(outputs);
  std::vector<int> w;
  for (int id : weights)
    if (remap[static_cast<size_t>(id)] >= 0) w.push_back(remap[static_cast<size_t>(id)]);
  weights = std::move(w);
  for (size_t n = 0; n < nodes.size(); ++n) {
    for (Arg& a : nodes[n].args) fix(a.values);
    fix(nodes[n].outputs);
    for (int o : nodes[n].outputs) values[static_cast<size_t>(o)].producer = static_cast<int>(n);
  }
}

Arg constant_arg(const tsr_value_t& v) {
  Arg a;
  a.tag = v.tag;
  switch (v.tag) {
    case TSR_VALUE_INT:
      a.i = v.u.i;
      break;
    case TSR_VALUE_DOUBLE:
      a.d = v.u.d;
      break;
    case TSR_VALUE_BOOL:
      a.b = v.u.b != 0;
      break;
    case TSR_VALUE_INT_LIST:
      a.ints.assign(v.u.ints.data, v.u.ints.data + v.u.ints.len);
      break;
    case TSR_VALUE_DTYPE:
      a.dtype = v.u.dtype;
      break;
    case TSR_VALUE_STRING:
      a.str = v.u.str ? v.u.str : "";
      break;
    case TSR_VALUE_DEVICE:
      a.device = v.u.device;
      break;
    default:  // NONE; tensors are the caller's business
      a.tag = TSR_VALUE_NONE;
  }
  return a;
}

Arg default_arg(const ArgSpec& spec) { return spec.has_default ? constant_arg(spec.default_value) : Arg{}; }

bool is_default(const ArgSpec& spec, const Arg& a) { return spec.has_default && default_arg(spec) == a; }

std::string type_str(const Type& t) {
  std::string s = dtype_name(t.dtype);
  s += '[';
  for (size_t d = 0; d < t.dims.size(); ++d) {
    if (d) s += ", ";
    s += t.dims[d].sym.empty() ? std::to_string(t.dims[d].size) : t.dims[d].sym;
  }
  return s + ']';
}

Type type_of(const Tensor* t) {
  Type ty;
  ty.known = true;
  ty.dtype = t->dtype;
  for (int d = 0; d < t->ndim; ++d) ty.dims.push_back(Dim{t->sizes[d], {}});
  return ty;
}

bool is_pure(const Callee& c) {
  if (c.mutates()) return false;
  if (c.builtin) return true;
  if (!c.op->extra.plugin.empty()) return false;  // a plugin's op may keep state the core cannot see
  // The random family draws from the runtime's generator: two calls differ.
  const char* file = c.op->source_file;
  return !(file && std::strstr(file, "/random/"));
}

}  // namespace tsr::core::graph
