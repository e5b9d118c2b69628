#include "graph/runner.hpp"

#include <climits>
#include <unordered_map>

#include "autograd/engine.hpp"
#include "graph/builtins.hpp"
#include "ops/op_impl.hpp"

namespace tsr::core::graph {

tsr_status_t check_bound(const Graph& g, const char* entry) {
  for (int id : g.weights) {
    const Value& v = g.values[static_cast<size_t>(id)];
    if (!v.weight)
      return make_status(TSR_FAILED_PRECONDITION, std::string(entry) + ": the " +
                                                      (v.kind == ValueKind::Param ? "param" : "const") + " %" + v.name +
                                                      " has no tensor (bind one first)");
  }
  return nullptr;
}

tsr_status_t exec_node(const Node& n, Tensor* const* vals, const SymbolEnv* env, Tensor** outs) {
  const Schema& schema = n.callee.schema();
  tsr_value_t args[kMaxArgs];
  std::vector<Tensor*> lists[kMaxArgs];
  std::vector<int64_t> sized[kMaxArgs];  // int lists with symbolic elements, evaluated
  for (size_t k = 0; k < n.args.size(); ++k) {
    const Arg& a = n.args[k];
    tsr_value_t& v = args[k];
    v = tsr_value_t{};
    v.tag = a.tag;
    switch (a.tag) {
      case TSR_VALUE_INT:
        v.u.i = a.i;
        break;
      case TSR_VALUE_DOUBLE:
        v.u.d = a.d;
        break;
      case TSR_VALUE_BOOL:
        v.u.b = a.b;
        break;
      case TSR_VALUE_INT_LIST:
        v.u.ints.data = a.ints.data();
        v.u.ints.len = static_cast<int64_t>(a.ints.size());
        break;
      case TSR_VALUE_DTYPE:
        v.u.dtype = a.dtype;
        break;
      case TSR_VALUE_STRING:
        v.u.str = a.str.c_str();
        break;
      case TSR_VALUE_DEVICE:
        v.u.device = a.device;
        break;
      case TSR_VALUE_TENSOR:
        v.u.tensor = vals[a.values[0]];
        break;
      case TSR_VALUE_TENSOR_LIST:
        for (int id : a.values) lists[k].push_back(vals[id]);
        v.u.tensors.data = lists[k].data();
        v.u.tensors.len = static_cast<int64_t>(lists[k].size());
        break;
      default:
        break;
    }
    if (!a.sym.empty()) {
      if (!env) return make_status(TSR_INTERNAL, n.callee.name() + ": symbolic sizes without their symbols");
      if (a.tag == TSR_VALUE_INT_LIST) sized[k] = a.ints;
      for (const auto& [index, expr] : a.sym) {
        int64_t value = 0;
        if (!expr.eval(*env, &value))
          return make_status(TSR_INVALID_ARGUMENT, n.callee.name() + ": the size " + expr.str() +
                                                       " names a symbol no input binds, or overflows int64");
        if (a.tag == TSR_VALUE_INT_LIST)
          sized[k][index] = value;
        else
          v.u.i = value;
      }
      if (a.tag == TSR_VALUE_INT_LIST) v.u.ints.data = sized[k].data();
    }
  }
  if (n.callee.builtin) {
    // Builtins take every argument: the ones left out are the schema's defaults (as call_op
    // fills them for ops).
    for (size_t k = n.args.size(); k < schema.args.size(); ++k) args[k] = schema.args[k].default_value;
    return n.callee.builtin->fn(args, n.outputs.empty() ? nullptr : outs);
  }
  for (size_t k = 0; k < n.outputs.size(); ++k) outs[k] = nullptr;
  return call_op(n.callee.op, args, n.args.size(), outs, n.outputs.size());
}

namespace {

// Bytes alive under the release plan, by storage (views share their base's).
struct MemoryCount {
  std::unordered_map<const Storage*, int> live;  // storage -> values holding it
  std::unordered_map<const Storage*, bool> external;
  int64_t now = 0, peak = 0, total = 0;
  void mark_external(const Tensor* t) { external[t->storage] = true; }
  void add(const Tensor* t) {
    if (external.count(t->storage)) return;
    if (live[t->storage]++ == 0) {
      now += static_cast<int64_t>(t->storage->nbytes);
      total += static_cast<int64_t>(t->storage->nbytes);
      if (now > peak) peak = now;
    }
  }
  void drop(const Tensor* t) {
    auto it = live.find(t->storage);
    if (it == live.end()) return;
    if (--it->second == 0) {
      now -= static_cast<int64_t>(t->storage->nbytes);
      live.erase(it);
    }
  }
};

std::string where(const Graph& g, size_t i) {
  const Node& n = g.nodes[i];
  std::string s = "node " + std::to_string(i) + " (";
  for (size_t k = 0; k < n.outputs.size(); ++k)
    s += (k ? ", %" : "%") + g.values[static_cast<size_t>(n.outputs[k])].name;
  return s + (n.outputs.empty() ? "" : " = ") + n.callee.name() + ")";
}

tsr_status_t check_inputs(const Graph& g, Tensor* const* inputs, size_t n, SymbolEnv* symbols_out) {
  if (n != g.inputs.size() || (n > 0 && !inputs)) {
    std::string names;
    for (int id : g.inputs) names += (names.empty() ? "" : ", ") + g.values[static_cast<size_t>(id)].name;
    return make_status(TSR_INVALID_ARGUMENT, "model_run: the model takes " + std::to_string(g.inputs.size()) +
                                                 " input(s) (" + names + "), got " + std::to_string(n));
  }
  SymbolEnv& symbols = *symbols_out;
  for (size_t k = 0; k < n; ++k) {
    const Value& v = g.values[static_cast<size_t>(g.inputs[k])];
    const Tensor* t = inputs[k];
    auto bad = [&](const std::string& why) {
      return make_status(TSR_INVALID_ARGUMENT, "model_run: input " + std::to_string(k) + " '" + v.name + "' expects " +
                                                   type_str(v.type) + " on " + device_str(g.rt, g.device) + ", got " +
                                                   (t ? describe(g.rt, t) : std::string("NULL")) + why);
    };
    if (!t) return bad("");
    if (t->runtime != g.rt) return bad(" (from another runtime)");
    if (t->dtype != v.type.dtype || t->ndim != static_cast<int>(v.type.dims.size())) return bad("");
    if (t->device.type != g.device.type || t->device.index != g.device.index) return bad("");
    for (int d = 0; d < t->ndim; ++d) {
      const Dim& dim = v.type.dims[static_cast<size_t>(d)];
      if (dim.sym.empty()) {
        if (dim.size != t->sizes[d]) return bad(" (dim " + std::to_string(d) + ")");
        continue;
      }
      auto [it, fresh] = symbols.emplace(dim.sym, t->sizes[d]);
      if (!fresh && it->second != t->sizes[d])
        return bad(" (" + dim.sym + " is " + std::to_string(it->second) + " in an earlier input)");
    }
  }
  return nullptr;
}

}  // namespace

tsr_status_t run(const Graph& g, Tensor* const* inputs, size_t n, Tensor** outputs, size_t nout, RunStats* stats) {
  TSR_RETURN_IF_ERROR(check_bound(g, "model_run"));
  SymbolEnv symbols;
  TSR_RETURN_IF_ERROR(check_inputs(g, inputs, n, &symbols));
  if (nout != g.outputs.size() || (nout > 0 && !outputs))
    return make_status(TSR_INVALID_ARGUMENT, "model_run: the model has " + std::to_string(g.outputs.size()) +
                                                 " output(s), got " + std::to_string(nout) + " slot(s)");
  // The release plan: each value dies after the last node that reads it; outputs live on.
  const size_t nv = g.values.size();
  std::vector<size_t> last_use(nv, 0);
  std::vector<bool> keep(nv, false);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const Arg& a : g.nodes[i].args)
      for (int id : a.values) last_use[static_cast<size_t>(id)] = i;
  for (int id : g.outputs) keep[static_cast<size_t>(id)] = true;

  std::vector<Tensor*> vals(nv, nullptr);  // one reference each
  auto release_all = [&] {
    for (Tensor*& t : vals)
      if (t) t->release(), t = nullptr;
  };
  MemoryCount mem;
  for (size_t k = 0; k < n; ++k) {
    inputs[k]->retain();
    vals[static_cast<size_t>(g.inputs[k])] = inputs[k];
    if (stats) mem.mark_external(inputs[k]);
  }
  for (int id : g.weights) {
    Tensor* w = g.values[static_cast<size_t>(id)].weight;
    w->retain();
    vals[static_cast<size_t>(id)] = w;
    if (stats) mem.mark_external(w);
  }
  GradModeGuard no_grad(false);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    Tensor* outs[kMaxOutputs] = {};
    tsr_status_t st = exec_node(node, vals.data(), &symbols, outs);
    if (st) {
      release_all();
      return prefix_status(st, "model_run: " + where(g, i));
    }
    for (size_t k = 0; k < node.outputs.size(); ++k) {
      Tensor*& slot = vals[static_cast<size_t>(node.outputs[k])];
      if (slot) slot->release();
      slot = outs[k];
      if (stats) mem.add(outs[k]);
    }
    for (const Arg& a : node.args)
      for (int id : a.values) {
        size_t u = static_cast<size_t>(id);
        if (last_use[u] != i || keep[u] || !vals[u]) continue;
        if (stats) mem.drop(vals[u]);
        vals[u]->release();
        vals[u] = nullptr;
      }
  }
  for (size_t k = 0; k < nout; ++k) {
    Tensor* t = vals[static_cast<size_t>(g.outputs[k])];
    t->retain();
    outputs[k] = t;
  }
  release_all();
  if (stats) {
    stats->nodes = static_cast<int64_t>(g.nodes.size());
    stats->peak_bytes = mem.peak;
    stats->total_bytes = mem.total;
  }
  return nullptr;
}

}  // namespace tsr::core::graph
