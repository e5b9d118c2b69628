// GradCtx accessors (the formula-facing side of autograd).
#include "autograd/autograd.hpp"

namespace tsr::core {

const tsr::Tensor& GradCtx::input(size_t i) const {
  if (i >= nargs_ || !saved_inputs_[i].defined())
    throw tsr::Error(TSR_INTERNAL, std::string(op_name_) + " backward: input " + std::to_string(i) +
                                       " was not saved (the op's save flags lack kSaveInputs)");
  return saved_inputs_[i];
}

const std::vector<tsr::Tensor>& GradCtx::input_list(size_t i) const {
  if (i >= saved_lists_.size())
    throw tsr::Error(TSR_INTERNAL,
                     std::string(op_name_) + " backward: list input " + std::to_string(i) + " was not saved");
  return saved_lists_[i];
}

const tsr::Tensor& GradCtx::output(size_t i) const {
  if (i >= saved_outputs_.size() || !saved_outputs_[i].defined())
    throw tsr::Error(TSR_INTERNAL, std::string(op_name_) + " backward: output " + std::to_string(i) +
                                       " was not saved (the op's save flags lack kSaveOutputs)");
  return saved_outputs_[i];
}

double GradCtx::double_arg(size_t i) const {
  const tsr_value_t& v = args_[i];
  return v.tag == TSR_VALUE_INT ? static_cast<double>(v.u.i) : v.tag == TSR_VALUE_BOOL ? double(v.u.b) : v.u.d;
}

std::vector<int64_t> GradCtx::ints(size_t i) const {
  const tsr_value_t& v = args_[i];
  if (v.tag == TSR_VALUE_INT) return {v.u.i};
  if (v.tag != TSR_VALUE_INT_LIST) return {};
  return std::vector<int64_t>(v.u.ints.data, v.u.ints.data + v.u.ints.len);
}

void GradCtx::set(size_t i, size_t k, tsr::Tensor g) {
  if (list_results_.size() <= i) list_results_.resize(i + 1);
  if (list_results_[i].size() <= k) list_results_[i].resize(k + 1);
  list_results_[i][k] = std::move(g);
}

}  // namespace tsr::core
