// The graph IR (docs/graphs.md): op calls with constant arguments and references to earlier
// values, plus the graph's inputs, named weights and outputs. Built by the tracer
// (graph/trace.cpp) or the text parser (graph/text_parse.cpp), transformed by the passes
// (graph/passes.cpp), run by the runner (graph/runner.cpp), saved with its weights by
// graph/model_file.cpp. A graph with its weights is what the tessera.model extension calls a
// model (tsr_model_t is this Graph).
// Thread-safety: a graph is built and transformed by one thread; once built, any number of
// threads may run it at once (run reads it only).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/runtime.hpp"
#include "runtime/status.hpp"

namespace tsr::core::graph {

// A view builtin (graph/builtins.cpp): a tensor entry of the C ABI that is not a registry op
// (view, reshape, transpose, ..., to, copy_), given a fixed schema so that graphs call it like
// an op.
struct Builtin;

enum class ValueKind { Input, Param, Const, Node };

using SymbolEnv = std::unordered_map<std::string, int64_t>;

// A size that follows the inputs' symbolic dims: a multilinear expression of the symbols with
// integer coefficients, "2*B*T+B-1" (graph/symbolic.cpp).
struct SymExpr {
  // Sorted symbol names (a product; empty: the constant term) -> coefficient (never 0).
  std::map<std::vector<std::string>, int64_t> terms;

  bool symbolic() const;  // has a term with a symbol
  // Canonical text: higher degrees first, then by name, constant last ("2*B*T+B-1").
  std::string str() const;
  // The value with every symbol bound; false when a symbol is missing from env or the value
  // overflows int64.
  bool eval(const SymbolEnv& env, int64_t* out) const;
  bool operator==(const SymExpr& o) const { return terms == o.terms; }
};

// A dim: a size, or an expression of symbols the inputs decide at run time ("B", "4*T"; input
// dims are single symbols).
struct Dim {
  int64_t size = 0;
  std::string sym;
  bool operator==(const Dim& o) const { return size == o.size && sym == o.sym; }
};

struct Type {
  bool known = false;  // nodes written by hand may leave their result types out
  tsr_dtype_t dtype = TSR_DTYPE_UNDEFINED;
  std::vector<Dim> dims;
};

struct Value {
  std::string name;  // without the '%'
  ValueKind kind = ValueKind::Node;
  Type type;
  // Const scalars written inline ("const %s: float64[] = 2.5 wrapped"): scalar holds the value
  // (INT, DOUBLE or BOOL) and weight a 0-dim cpu tensor made from it.
  bool inline_scalar = false;
  tsr_value_t scalar{};
  bool wrapped = false;
  // Param and Const: the tensor (one reference owned by the graph); nullptr until bound.
  Tensor* weight = nullptr;
  int producer = -1;  // Node: the index of the node that defines it
};

// One boxed argument with its own storage. Tensor and Tensor[] arguments refer to values.
struct Arg {
  int32_t tag = TSR_VALUE_NONE;  // tsr_value_tag_t
  int64_t i = 0;
  double d = 0;
  bool b = false;
  int32_t dtype = 0;
  tsr_device_t device{};
  std::vector<int64_t> ints;
  std::string str;
  std::vector<int> values;  // TENSOR: one value id; TENSOR_LIST: every element's
  // INT (index 0) or INT_LIST elements that follow symbolic dims: evaluated per run; i / ints
  // hold the values of the trace.
  std::vector<std::pair<size_t, SymExpr>> sym;
  bool operator==(const Arg& o) const;
};

// What a node calls: a registry op or a builtin.
struct Callee {
  tsr_op_s* op = nullptr;
  const Builtin* builtin = nullptr;
  const Schema& schema() const;
  const std::string& name() const;
  bool mutates() const;  // writes one of its arguments (Tensor(a!)): never removed, merged or folded
  std::string plugin() const;  // the plugin that defined a registry op ("" for the core's)
};

struct Node {
  Callee callee;
  std::vector<Arg> args;     // in schema order; trailing arguments left out take the defaults
  std::vector<int> outputs;  // value ids
};

struct Graph {
  Runtime* rt = nullptr;
  tsr_device_t device{TSR_DEVICE_TYPE_CPU, 0};  // where it was traced; its device arguments name it
  std::vector<Value> values;
  std::unordered_map<std::string, int> by_name;
  std::vector<int> inputs;   // in call order
  std::vector<int> weights;  // params and consts, in declaration order
  std::vector<Node> nodes;
  std::vector<int> outputs;
  // Plugins named by `plugin` statements of parsed text, per op (for error messages).
  std::unordered_map<std::string, std::string> op_plugins;

  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  ~Graph();

  // Adds a value (taking its weight's reference, released on error); INVALID_ARGUMENT when the
  // name is taken.
  tsr_status_t add_value(Value v, int* id);
  // Drops values nothing refers to and renumbers ids (names are kept).
  void compact();
  // Every value a node or the outputs read, counted.
  std::vector<int> use_counts() const;
};

// A boxed value that is not a tensor, as an Arg (copied); NONE for tensors and lists of them.
Arg constant_arg(const tsr_value_t& v);
// The schema default of argument i, as an Arg (NONE when it has none).
Arg default_arg(const ArgSpec& spec);
// Whether a's stored value equals the schema's default for it.
bool is_default(const ArgSpec& spec, const Arg& a);

// "float32[B, 16]"
std::string type_str(const Type& t);
Type type_of(const Tensor* t);

// Whether an op may be evaluated ahead of time (constant folding) or merged with an identical
// call (common subexpressions): it writes nothing and gives the same result for the same
// arguments (not a random op, not a plugin op whose behaviour the core cannot know).
bool is_pure(const Callee& c);

}  // namespace tsr::core::graph

// tsr_model_t (ext_model.h) is a graph with its weights.
struct tsr_model_s : tsr::core::graph::Graph {};
