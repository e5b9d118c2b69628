// Internals shared by runner.cpp and gradcheck.cpp (not part of the runner's interface).
#pragma once

#include <string>
#include <vector>

#include "opinfo.hpp"

namespace tsr::conformance::detail {

// Every element as double, read back on the CPU (bool and integers convert exactly).
std::vector<double> values(const tsr::Tensor& t);
std::string shape_str(const Shape& s);
// "" when `actual` matches `expected` (shape, and values within tol; NaN where NaN, equal
// infinities; `exact` for integer/bool results), else what differs.
std::string compare(const tsr::Tensor& actual, const tsr::Tensor& expected, Tol tol, bool exact);
// The sample's run (or run_at at `where`).
Tensors run_sample(const Sample& s, const Tensors& inputs, const Where& where);

// Gradients of run's floating results (contracted with fixed random cotangents) with respect
// to the inputs `wrt`, computed by autograd on copies of `inputs` (which stay untouched).
// Empty with *error set when there is nothing differentiable.
Tensors analytic_grads(const Sample& s, const Tensors& inputs, const std::vector<int>& wrt, const Where& where,
                       uint64_t seed, std::string* error);
// The inputs gradchecked for s (floating inputs unless s.grad_inputs says otherwise).
std::vector<int> grad_inputs_of(const Sample& s, const Tensors& inputs);
// Central finite differences in float64 on the CPU vs autograd; "" on success. tol_scale
// loosens the (1e-4 relative, 1e-5 absolute) tolerance.
std::string gradcheck(const Sample& s, uint64_t seed, double tol_scale);

}  // namespace tsr::conformance::detail
