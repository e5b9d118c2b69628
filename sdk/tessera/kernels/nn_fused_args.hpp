// Tessera SDK: the arguments of the fused row kernels of the nn family (_nn_layer_norm,
// _nn_cross_entropy_rows and their backwards; see core/ops/nn/nn_fused.cpp), read alike by the CPU
// and CUDA kernels. Host only (header-only). Each kernel keeps its own early returns.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/plugin.hpp"

namespace tsr::kernels {

// _nn_layer_norm args: input, weight?, bias?, int M, float eps, bool rms.
// _nn_layer_norm_backward args: input, weight?, grad, int M, float eps, bool rms.
// Rows of M elements; `total` elements in all (of the output forward, of the input backward).
struct LayerNormArgs {
  int64_t M = 0, total = 1;
  double eps = 0;
  bool rms = false;
  const void* weight = nullptr;               // nullptr: no weight
  const void* bias = nullptr;                 // forward only; nullptr: no bias
  const void* grad = nullptr;                 // backward only
  int64_t rows() const { return total / M; }  // for M > 0
};

inline LayerNormArgs layer_norm_args(const KernelCall& c, bool backward) {
  LayerNormArgs a;
  a.M = c.arg_int(3);
  a.eps = c.arg_double(4);
  a.rms = c.arg_bool(5);
  size_t next = 1;
  a.weight = c.arg_is_none(1) ? nullptr : c.input(next++).data;
  if (backward)
    a.grad = c.input(next).data;
  else
    a.bias = c.arg_is_none(2) ? nullptr : c.input(next).data;
  const tsr_tensor_view_t& v = backward ? c.input(0) : c.output(0);
  for (int32_t d = 0; d < v.ndim; ++d) a.total *= v.sizes[d];
  return a;
}

// _nn_cross_entropy_rows args: input [N, C], target [N] int64, weight? [C], int ignore_index,
// float label_smoothing; the backward has grad [N] after the weight.
struct CrossEntropyArgs {
  int64_t N = 0, C = 0;
  const int64_t* target = nullptr;
  const void* weight = nullptr;  // nullptr: no class weights
  const void* grad = nullptr;    // backward only
  int64_t ignore_index = 0;
  double label_smoothing = 0;
};

inline CrossEntropyArgs cross_entropy_args(const KernelCall& c, bool backward) {
  CrossEntropyArgs a;
  const tsr_tensor_view_t& in = c.input(0);
  a.N = in.sizes[0];
  a.C = in.sizes[1];
  a.target = static_cast<const int64_t*>(c.input(1).data);
  const bool has_w = !c.arg_is_none(2);
  a.weight = has_w ? c.input(2).data : nullptr;
  const size_t next = backward ? 1 : 0;
  if (backward) a.grad = c.input(has_w ? 3 : 2).data;
  a.ignore_index = c.arg_int(3 + next);
  a.label_smoothing = c.arg_double(4 + next);
  return a;
}

}  // namespace tsr::kernels
