// Rules shared by the op handlers and constant folding: axes, broadcasting, Slice bounds and
// Reshape/Expand targets, in ONNX's semantics, with errors naming the node through its NodeCtx.
#pragma once

#include <optional>
#include <vector>

#include "converter.hpp"

namespace tsr::onnx::detail {

// axis in [-rank, rank) -> [0, rank) (INVALID_ARGUMENT naming `what` otherwise).
int64_t normalize_axis(const NodeCtx& ctx, int64_t axis, int64_t rank, const char* what = "axis");
// Numpy broadcasting of two static shapes.
std::vector<int64_t> broadcast_dims(const NodeCtx& ctx, const std::vector<int64_t>& a, const std::vector<int64_t>& b);
// Axes given by the attribute "axes" before opset `input_since`, by input `input` from it on;
// nullopt when the node gives none.
std::optional<std::vector<int64_t>> read_axes(NodeCtx& ctx, int input, int input_since);

// Slice's starts/ends/axes/steps (attributes before opset 10, inputs from it on), axes
// normalized against `rank`.
struct SliceSpec {
  std::vector<Elem> starts, ends;  // Int, or Sym: a bound that follows the inputs' sizes
  std::vector<int64_t> axes, steps;
};
SliceSpec read_slice(NodeCtx& ctx, int rank);
// ONNX's clamping of one axis of a Slice over a dim of size n: start and end end up in [0, n]
// for step > 0 and in [-1, n-1] for step < 0; the selected indices are start, start+step, ...
// while short of end.
void clamp_slice(int64_t n, int64_t step, int64_t* start, int64_t* end);
// The number of indices that range selects.
int64_t slice_count(int64_t start, int64_t end, int64_t step);

// The sizes for Tessera's reshape builtin from an ONNX Reshape of an input of shape `in` to
// `target` (0 copies the input dim unless allowzero, -1 is inferred): ints (Int) and sizes that
// follow the inputs' symbols (Sym, written as expressions); an entry nothing tells becomes the
// one -1, and more than one such is UNIMPLEMENTED.
std::vector<Elem> reshape_sizes(const NodeCtx& ctx, const Shape& in, const Folded& target, bool allowzero);
// The sizes for Tessera's expand builtin from ONNX's Expand (two-way broadcasting) of an input
// of shape `in` to `target`: -1 keeps an input dim.
std::vector<Elem> expand_sizes(const NodeCtx& ctx, const Shape& in, const Folded& target);
// "[batch, 7, -1]"
std::string lit(const std::vector<Elem>& sizes);
// Whether every dim is static, and then the dims.
bool all_static(const Shape& s, std::vector<int64_t>* dims = nullptr);

}  // namespace tsr::onnx::detail
