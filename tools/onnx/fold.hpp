// Constant folding at import time: Shape and the small integer computations the PyTorch
// exporter builds on it (Gather, Unsqueeze, Concat, Slice, Cast, arithmetic, ...), and any of
// the foldable ops whose inputs are all known and small. Elements may be symbols (dims of the
// graph inputs), so a Reshape target computed from a dynamic batch size still folds to a
// target with one run-time entry.
#pragma once

#include "converter.hpp"

namespace tsr::onnx::detail {

// Defines the node's outputs at import time and returns true when it can; false leaves the
// node to its handler.
bool fold_node(NodeCtx& ctx);

}  // namespace tsr::onnx::detail
