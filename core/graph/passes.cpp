#include "graph/passes.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <sstream>

#include "autograd/engine.hpp"
#include "graph/runner.hpp"
#include "ops/op_impl.hpp"

namespace tsr::core::graph {

namespace {

// Removes the nodes not in `keep`, fixing producers; the values they defined are dropped by
// compact() once nothing refers to them.
void remove_nodes(Graph& g, const std::vector<bool>& keep) {
  std::vector<Node> kept;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (keep[i]) {
      kept.push_back(std::move(g.nodes[i]));
      continue;
    }
    for (int o : g.nodes[i].outputs)
      if (g.values[static_cast<size_t>(o)].kind == ValueKind::Node) g.values[static_cast<size_t>(o)].producer = -1;
  }
  g.nodes = std::move(kept);
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (int o : g.nodes[i].outputs) g.values[static_cast<size_t>(o)].producer = static_cast<int>(i);
  g.compact();
}

bool any_mutation(const Graph& g) {
  for (const Node& n : g.nodes)
    if (n.callee.mutates()) return true;
  return false;
}

// A key naming a call exactly: the callee and every argument (value ids for tensors).
std::string call_key(const Node& n) {
  std::ostringstream k;
  k << n.callee.name() << '(';
  for (const Arg& a : n.args) {
    k << a.tag << ':';
    switch (a.tag) {
      case TSR_VALUE_INT:
        k << a.i;
        break;
      case TSR_VALUE_DOUBLE: {
        uint64_t bits;
        std::memcpy(&bits, &a.d, sizeof bits);
        k << bits;
        break;
      }
      case TSR_VALUE_BOOL:
        k << a.b;
        break;
      case TSR_VALUE_DTYPE:
        k << a.dtype;
        break;
      case TSR_VALUE_STRING:
        k << a.str.size() << '"' << a.str;
        break;
      case TSR_VALUE_DEVICE:
        k << a.device.type << '.' << a.device.index;
        break;
      default:
        break;
    }
    for (int64_t x : a.ints) k << x << ' ';
    for (const auto& [index, expr] : a.sym) k << '@' << index << '=' << expr.str() << ' ';
    for (int v : a.values) k << '%' << v << ' ';
    k << ',';
  }
  return k.str();
}

}  // namespace

int eliminate_dead_code(Graph& g) {
  std::vector<int> uses(g.values.size(), 0);
  for (int o : g.outputs) ++uses[static_cast<size_t>(o)];
  std::vector<bool> keep(g.nodes.size(), false);
  int removed = 0;
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    bool live = n.callee.mutates();
    for (int o : n.outputs) live = live || uses[static_cast<size_t>(o)] > 0;
    keep[i] = live;
    if (!live) {
      ++removed;
      continue;
    }
    for (const Arg& a : n.args)
      for (int v : a.values) ++uses[static_cast<size_t>(v)];
  }
  remove_nodes(g, keep);
  return removed;
}

int eliminate_common_subexpressions(Graph& g) {
  // A write anywhere may change what an earlier identical call read (views alias): merge nothing.
  if (any_mutation(g)) return 0;
  std::vector<int> replace(g.values.size());
  for (size_t v = 0; v < replace.size(); ++v) replace[v] = static_cast<int>(v);
  std::vector<bool> is_output(g.values.size(), false);
  for (int o : g.outputs) is_output[static_cast<size_t>(o)] = true;
  std::map<std::string, size_t> seen;
  std::vector<bool> keep(g.nodes.size(), true);
  int merged = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    for (Arg& a : n.args)
      for (int& v : a.values) v = replace[static_cast<size_t>(v)];
    if (!is_pure(n.callee)) continue;
    bool named_output = false;  // an output keeps its own name (the model's interface)
    for (int o : n.outputs) named_output = named_output || is_output[static_cast<size_t>(o)];
    std::string key = call_key(n);
    auto it = seen.find(key);
    if (it == seen.end() || named_output) {
      seen.emplace(key, i);
      continue;
    }
    const Node& first = g.nodes[it->second];
    for (size_t k = 0; k < n.outputs.size(); ++k) replace[static_cast<size_t>(n.outputs[k])] = first.outputs[k];
    keep[i] = false;
    ++merged;
  }
  remove_nodes(g, keep);
  return merged;
}

int fold_constants(Graph& g, tsr_status_t* error) {
  *error = nullptr;
  if (any_mutation(g)) return 0;  // a const some node writes is not constant
  std::vector<bool> keep(g.nodes.size(), true);
  std::vector<Tensor*> vals(g.values.size(), nullptr);  // borrowed: the consts' weights
  for (int id : g.weights) {
    const Value& v = g.values[static_cast<size_t>(id)];
    if (v.kind == ValueKind::Const) vals[static_cast<size_t>(id)] = v.weight;
  }
  GradModeGuard no_grad(false);
  int folded = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    Node& n = g.nodes[i];
    if (!is_pure(n.callee)) continue;
    bool sized = false;  // a size that follows the inputs is not constant
    for (const Arg& a : n.args) sized = sized || !a.sym.empty();
    if (sized) continue;
    bool all_const = true;
    int64_t in_numel = 0;
    for (const Arg& a : n.args)
      for (int v : a.values) {
        Tensor* t = vals[static_cast<size_t>(v)];
        all_const = all_const && t;
        if (t) in_numel += t->numel;
      }
    if (!all_const) continue;
    Tensor* outs[kMaxOutputs] = {};
    tsr_status_t st = exec_node(n, vals.data(), nullptr, outs);
    if (st) {
      *error = prefix_status(st, "fold: node " + std::to_string(i) + " (" + n.callee.name() + ")");
      return folded;
    }
    // Folding must not grow the model: a broadcast of a scalar to a big shape stays a node.
    int64_t out_numel = 0;
    for (size_t k = 0; k < n.outputs.size(); ++k) out_numel += outs[k]->numel;
    if (out_numel > std::max<int64_t>(in_numel, 1 << 16)) {
      for (size_t k = 0; k < n.outputs.size(); ++k) outs[k]->release();
      continue;
    }
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      Value& v = g.values[static_cast<size_t>(n.outputs[k])];
      v.kind = ValueKind::Const;
      v.producer = -1;
      v.type = type_of(outs[k]);
      v.weight = outs[k];
      vals[static_cast<size_t>(n.outputs[k])] = outs[k];
      g.weights.push_back(n.outputs[k]);
    }
    keep[i] = false;
    ++folded;
  }
  remove_nodes(g, keep);
  return folded;
}

tsr_status_t optimize(Graph& g, const std::string& passes, std::string* report) {
  std::vector<std::string> names;
  std::stringstream ss(passes);
  for (std::string p; std::getline(ss, p, ',');)
    if (!p.empty()) names.push_back(p);
  if (names.size() == 1 && names[0] == "all") names = {"cse", "fold", "dce"};
  std::string r;
  for (const std::string& p : names) {
    size_t before = g.nodes.size();
    if (p == "dce") {
      int n = eliminate_dead_code(g);
      r += "dce: removed " + std::to_string(n) + " node(s)";
    } else if (p == "cse") {
      int n = eliminate_common_subexpressions(g);
      r += "cse: merged " + std::to_string(n) + " node(s)";
    } else if (p == "fold") {
      tsr_status_t st = nullptr;
      int n = fold_constants(g, &st);
      if (st) return prefix_status(st, "optimize");
      r += "fold: folded " + std::to_string(n) + " node(s) into consts";
    } else {
      return make_status(TSR_INVALID_ARGUMENT, "optimize: unknown pass '" + p + "' (dce, cse, fold or all)");
    }
    r += " (" + std::to_string(before) + " -> " + std::to_string(g.nodes.size()) + " nodes)\n";
  }
  if (report) *report = r;
  return nullptr;
}

}  // namespace tsr::core::graph
