// Output types where ONNX's shape inference found none: it stops at values computed from
// Shape chains (a Slice whose bounds come from Shape, say), which the importer has folded. A
// few local rules (elementwise, broadcasting, Slice, MatMul) fill the gap, conservatively:
// a dim they cannot tell stays unknown (and the node's type is then left out of the text).
#pragma once

#include "converter.hpp"

namespace tsr::onnx::detail {

// Fills v's dtype and shape for output k of ctx's node where it can.
void fallback_info(NodeCtx& ctx, int k, Value* v);

}  // namespace tsr::onnx::detail
