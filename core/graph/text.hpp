// The graph's text form (docs/graphs.md): print, and parse back. The round trip is exact:
// parse(print(g)) prints as print(g).
#pragma once

#include <memory>

#include "graph/graph.hpp"

namespace tsr::core::graph {

std::string print(const Graph& g);

struct ParseOptions {
  // Where the graph will run: device arguments naming the graph's `device` are moved there,
  // and the graph's device becomes it (model_load with a device). Not set: as written.
  bool move_device = false;
  tsr_device_t device{};
};

// Parses `text` into a new graph of `rt`. Weights (param and non-inline const) are left unbound.
// Errors are INVALID_ARGUMENT "graph text line L:C: ..." (unknown ops name the plugin the
// graph says defines them).
tsr_status_t parse(Runtime* rt, const std::string& text, const ParseOptions& opts, std::unique_ptr<tsr_model_s>* out);

// A float literal that parses back to the same double ("2.0", "1e-05", "inf", "nan").
std::string format_double(double d);

}  // namespace tsr::core::graph
