// Runs a graph: nodes in order, each value released after its last use (the buffer reuse
// plan: the caching allocator then hands the freed blocks to later nodes), with autograd off.
#pragma once

#include "graph/graph.hpp"

namespace tsr::core::graph {

struct RunStats {
  int64_t nodes = 0;
  // Bytes of the tensors the nodes created: the most alive at once under the release plan, and
  // the sum of all of them (what a run that frees nothing until the end would hold).
  int64_t peak_bytes = 0;
  int64_t total_bytes = 0;
};

// Every param and const has a tensor; FAILED_PRECONDITION naming the first that has none.
tsr_status_t check_bound(const Graph& g, const char* entry);

// inputs: n tensors matching the graph's inputs (dtype, rank, static dims, one size per
// symbol, the graph's device). outputs: g.outputs.size() slots, filled with new references
// on success and left untouched on error. stats may be null.
tsr_status_t run(const Graph& g, Tensor* const* inputs, size_t n, Tensor** outputs, size_t nout, RunStats* stats);

// Calls node n with vals[id] as the tensor of value id and env binding the symbols of its
// symbolic ints (nullptr: the node has none); outs gets n.outputs.size() new references. Used by
// the runner and by constant folding.
tsr_status_t exec_node(const Node& n, Tensor* const* vals, const SymbolEnv* env, Tensor** outs);

}  // namespace tsr::core::graph
