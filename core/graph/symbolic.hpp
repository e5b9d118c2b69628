// Symbolic sizes (docs/graphs.md "Dynamic dims"). A traced int that follows an input's dynamic
// dims (view(x, [B*T, 64]), arange(T)) is a multilinear expression of the symbols with integer
// coefficients: c + a*B + b*T + d*B*T. The tracer cannot see where an int came from, so the SDK
// traces the code at several sizes and generalize() fits each int that differs between the
// traces, checking the fit at one more size.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/graph.hpp"

namespace tsr::core::graph {

// Parses text such as "B*T", "4*B-1", "7" (no spaces needed; '+', '-', '*' and integers).
// Returns false with *error set on bad input; *consumed: the characters used.
bool parse_sym_expr(const std::string& text, size_t start, SymExpr* out, size_t* consumed, std::string* error);

// traces: the same code traced at different symbol values (each read from its inputs' symbolic
// dims). On success *out is trace 0 with every int that differs between the traces (argument
// ints and value dims) replaced by its expression, and traces[0] is left empty. Errors name the
// node and argument that cannot be generalized, or the first difference in structure.
tsr_status_t generalize(std::vector<std::unique_ptr<tsr_model_s>>& traces, std::unique_ptr<tsr_model_s>* out);

}  // namespace tsr::core::graph
