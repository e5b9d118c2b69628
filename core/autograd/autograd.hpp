// Autograd: the interface backward formulas are written against (GradCtx), and the engine's
// entry points the op dispatcher and the API call. Formulas use SDK tensors and ops
// (tessera/tessera.hpp), so every formula runs on whatever device holds the tensors.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace tsr::core {

// What a backward formula sees of one recorded call. Argument indices are schema positions.
class GradCtx {
 public:
  // Saved tensor argument i (needs kSaveInputs). Throws when it was not saved.
  const tsr::Tensor& input(size_t i) const;
  // Elements of a saved Tensor[] argument i.
  const std::vector<tsr::Tensor>& input_list(size_t i) const;
  // Saved result i (needs kSaveOutputs).
  const tsr::Tensor& output(size_t i = 0) const;
  // Non-tensor arguments as passed (after defaults).
  const tsr_value_t& arg(size_t i) const { return args_[i]; }
  bool is_none(size_t i) const { return args_[i].tag == TSR_VALUE_NONE; }
  int64_t int_arg(size_t i) const { return args_[i].u.i; }
  double double_arg(size_t i) const;  // int, bool or float Scalar as double
  bool bool_arg(size_t i) const { return args_[i].u.b != 0; }
  std::vector<int64_t> ints(size_t i) const;
  std::string str(size_t i) const { return args_[i].u.str ? args_[i].u.str : ""; }
  // Shape/dtype of tensor argument i at record time (available even when not saved).
  std::vector<int64_t> input_sizes(size_t i) const {
    return std::vector<int64_t>(in_sizes_[i], in_sizes_[i] + in_ndim_[i]);
  }
  tsr_dtype_t input_dtype(size_t i) const { return in_dtypes_[i]; }
  // Incoming gradient of result i; undefined (!defined()) when none arrived: treat as zero.
  const tsr::Tensor& grad(size_t i = 0) const { return (*grads_)[i]; }
  // Whether tensor argument i (or element k of Tensor[] argument i) needs a gradient.
  bool needs(size_t i) const { return needs_[i] != 0; }
  bool needs(size_t i, size_t k) const {
    return i < list_needs_.size() && k < list_needs_[i].size() && list_needs_[i][k] != 0;
  }
  // Gradient for tensor argument i. The engine sums a gradient of the broadcast shape down to
  // the input's shape and casts it to the input's dtype, so formulas need not.
  void set(size_t i, tsr::Tensor g) { results_[i] = std::move(g); }
  void set(size_t i, size_t k, tsr::Tensor g);
  const char* op_name() const { return op_name_; }
  tsr_runtime_t* runtime() const { return runtime_; }

  // ---- filled by the engine (fixed arrays: no allocation per backward call) ------------------
  static constexpr size_t kMaxArgs = 16;
  const tsr_op_s* op_ = nullptr;  // the recorded op (plugin ops' formulas live on it)
  const char* op_name_ = "";
  tsr_runtime_t* runtime_ = nullptr;
  const tsr_value_t* args_ = nullptr;
  size_t nargs_ = 0;
  tsr::Tensor saved_inputs_[kMaxArgs];                 // per arg (undefined if not a tensor/not saved)
  std::vector<std::vector<tsr::Tensor>> saved_lists_;  // per arg, only when the op has Tensor[] args
  std::vector<tsr::Tensor> saved_outputs_;
  const int64_t* in_sizes_[kMaxArgs] = {};
  int32_t in_ndim_[kMaxArgs] = {};
  tsr_dtype_t in_dtypes_[kMaxArgs] = {};
  const std::vector<tsr::Tensor>* grads_ = nullptr;
  uint8_t needs_[kMaxArgs] = {};
  std::vector<std::vector<uint8_t>> list_needs_;  // only with Tensor[] args
  tsr::Tensor results_[kMaxArgs];
  std::vector<std::vector<tsr::Tensor>> list_results_;  // only with Tensor[] args
};

// A primitive op's backward: reads ctx.grad(...), calls ctx.set(...) for the inputs that
// need() it. Throw tsr::Error for failures (it becomes the backward's status).
using BackwardFn = void (*)(GradCtx& ctx);

// The formula of every plugin op that registered one (tsr_op_def_t.backward, ABI 1.4): calls
// the plugin's function through the ABI with the saved arguments, results and gradients.
void plugin_op_backward(GradCtx& ctx);

}  // namespace tsr::core
