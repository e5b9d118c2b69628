// Graph passes (docs/graphs.md "Passes"): dead code, common subexpressions, constant folding.
// Buffer reuse is the runner's release plan (graph/runner.hpp). Each pass keeps the graph's
// inputs, outputs (and their names) and results exactly: a pass never changes what a run computes.
#pragma once

#include "graph/graph.hpp"

namespace tsr::core::graph {

// Nodes whose results nothing reads (and that write nothing) go, then unused weights.
int eliminate_dead_code(Graph& g);
// A pure node identical to an earlier one (same op, same arguments) reuses its results.
int eliminate_common_subexpressions(Graph& g);
// A pure node whose tensor arguments are all consts runs once now; its results become consts.
int fold_constants(Graph& g, tsr_status_t* error);

// Runs the named passes ("dce", "cse", "fold"; comma-separated; "all" = every one, in the
// order cse, fold, dce) and describes what each did in *report.
tsr_status_t optimize(Graph& g, const std::string& passes, std::string* report);

}  // namespace tsr::core::graph
