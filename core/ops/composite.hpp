// Composite ops: op implementations written with SDK tensors and ops (tessera/tessera.hpp)
// instead of kernels. They run on every backend and get autograd from the ops they call.
//
//   tsr::Tensor logsumexp_fn(CArgs& a) {
//     tsr::Tensor x = a.tensor(0);
//     ...
//     return result;
//   }
//   TSR_CORE_OPS(reduce_extra) {
//     v.push_back(composite_op("logsumexp(Tensor self, int[] dim, bool keepdim=False) -> Tensor",
//                              composite<logsumexp_fn>));
//   }
//
// Errors: throw tsr::Error (a.fail(...) prefixes the op name); errors from inner ops arrive as
// tsr::Error and are returned prefixed with this op's name. A caller's out= tensor is filled
// from the returned tensor after shape and dtype checks.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"
#include "tessera/tessera.hpp"

namespace tsr::core {

class CArgs {
 public:
  explicit CArgs(CallCtx& c) : c_(c) {}
  const char* op() const { return c_.name(); }
  size_t size() const { return c_.nargs; }
  bool is_none(size_t i) const { return c_.is_none(i); }
  tsr::Tensor tensor(size_t i) const { return tsr::Tensor::borrow(c_.tensor(i)); }
  std::optional<tsr::Tensor> opt_tensor(size_t i) const {
    if (c_.is_none(i)) return std::nullopt;
    return tensor(i);
  }
  std::vector<tsr::Tensor> tensors(size_t i) const;
  int64_t int_arg(size_t i) const { return c_.int_arg(i); }
  std::optional<int64_t> opt_int(size_t i) const {
    if (c_.is_none(i)) return std::nullopt;
    return c_.int_arg(i);
  }
  double double_arg(size_t i) const { return c_.double_arg(i); }
  std::optional<double> opt_double(size_t i) const {
    if (c_.is_none(i)) return std::nullopt;
    return c_.double_arg(i);
  }
  bool bool_arg(size_t i) const { return c_.bool_arg(i); }
  std::vector<int64_t> ints(size_t i) const;
  std::string str(size_t i) const { return c_.args[i].u.str ? c_.args[i].u.str : ""; }
  std::optional<tsr_dtype_t> dtype(size_t i) const {
    if (c_.is_none(i)) return std::nullopt;
    return static_cast<tsr_dtype_t>(c_.args[i].u.dtype);
  }
  std::optional<tsr::Device> device(size_t i) const {
    if (c_.is_none(i)) return std::nullopt;
    return tsr::Device(c_.args[i].u.device);
  }
  // A Scalar argument as passed (int stays int, float stays float), for forwarding.
  tsr::Arg scalar(size_t i) const;
  // A Scalar argument as a wrapped-number 0-dim tensor (promotes like a Python scalar).
  tsr::Tensor scalar_tensor(size_t i) const;
  // The caller's out= tensor for result i, undefined when none was given.
  tsr::Tensor out(size_t i) const { return tsr::Tensor::borrow(c_.out_slot(i)); }
  tsr_runtime_t* runtime() const { return c_.rt; }
  CallCtx& ctx() const { return c_; }
  [[noreturn]] void fail(tsr_code_t code, const std::string& msg) const;

 private:
  CallCtx& c_;
};

using CompositeFn = tsr::Tensor (*)(CArgs&);
using CompositeMultiFn = std::vector<tsr::Tensor> (*)(CArgs&);

// Runs fn with the runtime scoped to the call and exceptions turned into statuses, then hands
// the results to the caller (into out= tensors when given).
tsr_status_t run_composite(CallCtx& ctx, CompositeMultiFn fn);
tsr_status_t run_composite1(CallCtx& ctx, CompositeFn fn);

template <CompositeFn F>
tsr_status_t composite(CallCtx& ctx) {
  return run_composite1(ctx, F);
}
template <CompositeMultiFn F>
tsr_status_t composite_multi(CallCtx& ctx) {
  return run_composite(ctx, F);
}

// In-place variant "name_" of the functional op "name" (same arguments; the name is derived
// by dropping the trailing underscore): computes the functional result, checks it has self's
// shape and a dtype castable to self's, and writes it into self (argument 0), bumping self's
// version. Autograd history moves to self. Returns self.
//   v.push_back(inplace_op("abs_(Tensor(a!) self) -> Tensor(a!)"));
tsr_status_t inplace_impl(CallCtx& ctx);
inline OpSpec inplace_op(std::string schema, const char* file = __builtin_FILE(), int line = __builtin_LINE()) {
  return composite_op(std::move(schema), inplace_impl, file, line);
}

}  // namespace tsr::core
