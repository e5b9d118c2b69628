// Gradients for the conformance runner: autograd gradients of a sample, and the float64
// central finite-difference gradcheck on the CPU.
#include <cmath>
#include <sstream>

#include "runner_util.hpp"

namespace tsr::conformance::detail {

namespace {

// Results that carry a gradient, with their cotangents (fixed per seed so every device sees
// the same contraction).
struct Contraction {
  std::vector<size_t> outputs;
  Tensors cotangents;  // on the result's device and dtype
};

Contraction contraction_of(const Tensors& results, uint64_t seed) {
  Contraction c;
  for (size_t k = 0; k < results.size(); ++k) {
    const Tensor& r = results[k];
    if (!r.defined() || !tsr::is_floating(r.dtype()) || !r.requires_grad()) continue;
    c.outputs.push_back(k);
    c.cotangents.push_back(random_f64(r.sizes(), seed + 101 + k, -1.0, 1.0).to(r.device(), r.dtype()));
  }
  return c;
}

}  // namespace

std::vector<int> grad_inputs_of(const Sample& s, const Tensors& inputs) {
  if (!s.use_default_grad_inputs) return s.grad_inputs;
  std::vector<int> wrt;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && tsr::is_floating(inputs[i].dtype())) wrt.push_back(static_cast<int>(i));
  return wrt;
}

Tensors analytic_grads(const Sample& s, const Tensors& inputs, const std::vector<int>& wrt, const Where& where,
                       uint64_t seed, std::string* error) {
  Tensors leaves;
  for (const Tensor& t : inputs) leaves.push_back(t.defined() ? t.detach().clone() : t);
  Tensors wrt_leaves;
  for (int i : wrt) {
    if (i < 0 || static_cast<size_t>(i) >= leaves.size() || !leaves[i].defined()) {
      *error = "grad_inputs names input " + std::to_string(i) + ", which does not exist";
      return {};
    }
    leaves[i].requires_grad_(true);
    wrt_leaves.push_back(leaves[i]);
  }
  Tensors results = run_sample(s, leaves, where);
  Contraction c = contraction_of(results, seed);
  if (c.outputs.empty()) {
    *error = "the op is marked differentiable but none of its results requires grad";
    return {};
  }
  Tensors outs;
  for (size_t k : c.outputs) outs.push_back(results[k]);
  Tensors grads = tsr::autograd::grad(outs, wrt_leaves, c.cotangents, false, false, true);
  for (size_t j = 0; j < grads.size(); ++j) {
    const Tensor& in = wrt_leaves[j];
    if (!grads[j].defined()) grads[j] = tsr::zeros(in.sizes(), in.dtype(), in.device());
    if (grads[j].sizes() != in.sizes()) {
      *error = "the gradient of input " + std::to_string(wrt[j]) + " has shape " + shape_str(grads[j].sizes()) +
               " but the input has " + shape_str(in.sizes());
      return {};
    }
  }
  return grads;
}

std::string gradcheck(const Sample& s, uint64_t seed, double tol_scale) {
  const Where cpu{tsr::Device::cpu(), TSR_F64};
  const std::vector<int> wrt = grad_inputs_of(s, s.inputs);
  std::string error;
  Tensors analytic = analytic_grads(s, s.inputs, wrt, cpu, seed, &error);
  if (!error.empty()) return error;

  // The contraction the analytic gradient was taken of, evaluated without autograd.
  Tensors probe;
  {
    tsr::NoGradGuard ng;
    probe = run_sample(s, s.inputs, cpu);
  }
  std::vector<std::vector<double>> cot(probe.size());
  for (size_t k = 0; k < probe.size(); ++k)
    if (probe[k].defined() && tsr::is_floating(probe[k].dtype()))
      cot[k] = values(random_f64(probe[k].sizes(), seed + 101 + k, -1.0, 1.0).to(probe[k].dtype()));
  auto contract = [&](const Tensors& in) {
    tsr::NoGradGuard ng;
    Tensors r = run_sample(s, in, cpu);
    double sum = 0;
    for (size_t k = 0; k < r.size() && k < cot.size(); ++k) {
      if (cot[k].empty()) continue;
      std::vector<double> v = values(r[k]);
      for (size_t i = 0; i < v.size() && i < cot[k].size(); ++i) sum += v[i] * cot[k][i];
    }
    return sum;
  };

  const double eps = 1e-6, atol = 1e-5 * tol_scale, rtol = 1e-4 * tol_scale;
  const size_t kMaxElements = 48;  // evenly spaced probes keep large samples cheap
  for (size_t j = 0; j < wrt.size(); ++j) {
    const size_t idx = static_cast<size_t>(wrt[j]);
    const Tensor& x = s.inputs[idx];
    std::vector<double> ga = values(analytic[j]);
    std::vector<double> base = values(x);
    Tensors in = s.inputs;
    const size_t n = base.size();
    const size_t step = n > kMaxElements ? (n + kMaxElements - 1) / kMaxElements : 1;
    for (size_t e = 0; e < n; e += step) {
      std::vector<double> plus = base, minus = base;
      plus[e] += eps;
      minus[e] -= eps;
      in[idx] = tsr::from_vector(plus, x.sizes(), tsr::Device::cpu()).to(x.dtype());
      double fp = contract(in);
      in[idx] = tsr::from_vector(minus, x.sizes(), tsr::Device::cpu()).to(x.dtype());
      double fm = contract(in);
      double num = (fp - fm) / (2 * eps);
      if (!(std::fabs(num - ga[e]) <= atol + rtol * std::fabs(num))) {
        std::ostringstream os;
        os << "input " << idx << " element " << e << ": autograd gives " << ga[e] << ", finite differences " << num
           << " (atol " << atol << ", rtol " << rtol << ")";
        return os.str();
      }
    }
  }
  return "";
}

}  // namespace tsr::conformance::detail
