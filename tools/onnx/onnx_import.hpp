// ONNX import (docs/onnx.md): an ONNX model file becomes a Tessera graph in its text form
// (docs/graphs.md) plus the weights its `param` statements name. The text is what
// tsr::jit::Graph::parse reads; the weights are bound to it by name.
//
// Errors are tsr::Error: INVALID_ARGUMENT for a file that is not a valid ONNX model (or whose
// values the importer cannot make sense of), UNIMPLEMENTED for an op, attribute, dtype or opset
// the importer does not map. A message about a node names it: its index in the graph, its name
// and its op type.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr::onnx {

struct Imported {
  std::string text;  // the graph, docs/graphs.md
  // One entry per `param` statement, in the text's order: the name (without '%') and the
  // weight (a CPU tensor of the param's dtype and shape).
  std::vector<std::pair<std::string, tsr::Tensor>> weights;
};

// The ONNX opsets of the default domain the importer maps.
constexpr int kMinOpset = 7;
constexpr int kMaxOpset = 17;

Imported import_file(const std::string& path);
// The same from the bytes of a model (a serialized ModelProto); `dir` is where tensors stored
// as external data are read from (the model file's folder). ONNX's checker looks for external
// data relative to the working directory here: import such models with import_file.
Imported import_bytes(const std::string& bytes, const std::string& dir = ".");

// The ONNX op types the importer maps (default domain), sorted.
std::vector<std::string> supported_ops();

}  // namespace tsr::onnx
