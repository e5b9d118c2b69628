// The view builtins of graphs (docs/graphs.md "View builtins"): the C ABI's tensor entries
// that are not registry ops (views, contiguous, to, copy_), each with a fixed schema so that a
// graph node calls them like an op. Running one calls the same entry a host would.
#pragma once

#include "graph/graph.hpp"

namespace tsr::core::graph {

// Runs the entry with args in schema order (defaults filled); *out gets the new tensor (none
// for copy_, which has no result).
using BuiltinFn = tsr_status_t (*)(const tsr_value_t* args, Tensor** out);

struct Builtin {
  std::string name;
  Schema schema;
  BuiltinFn fn = nullptr;
  bool mutates = false;  // copy_
};

// The builtin called `name`, or nullptr.
const Builtin* find_builtin(const std::string& name);

}  // namespace tsr::core::graph
