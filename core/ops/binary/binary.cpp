// Binary family ops with their own kernels: div_mode (torch.div with rounding_mode), remainder,
// fmod, atan2, hypot, copysign, xlogy, logaddexp(2), fmax, fmin, lerp, logical_* and
// bitwise_* (incl. shifts). Promotion follows PyTorch (wrapped scalars weigh less, see
// result_type); backward formulas are in ops/binary/binary_grad.cpp.
#include <string>

#include "ops/elementwise.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {
namespace {

using Rule = ElementwiseRule;

std::string both(CallCtx& ctx, Tensor* a, Tensor* b) { return describe(ctx.rt, a) + " and " + describe(ctx.rt, b); }

tsr_status_t div_mode_impl(CallCtx& ctx) {
  std::string mode = ctx.args[2].u.str ? ctx.args[2].u.str : "";
  if (mode != "trunc" && mode != "floor")
    return ctx.error(TSR_INVALID_ARGUMENT,
                     "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found '" + mode + "'");
  return elementwise_op(ctx, Rule::NoBool, 2);
}

// Ops PyTorch defines for floating dtypes only (no int -> float promotion).
tsr_status_t float_only_impl(CallCtx& ctx) {
  Tensor* in[2] = {ctx.tensor(0), ctx.tensor(1)};
  tsr_dtype_t common = result_type(in, 2);
  if (!is_floating(common))
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("not implemented for ") + dtype_name(common) + " (inputs " +
                                               both(ctx, in[0], in[1]) + ")");
  return run_elementwise(ctx, in, 2, common, common, nullptr);
}

tsr_status_t logical_impl(CallCtx& ctx) {
  Tensor* in[2] = {ctx.tensor(0), ctx.tensor(1)};
  tsr_dtype_t common = result_type(in, 2);
  return run_elementwise(ctx, in, 2, common, TSR_BOOL, nullptr);
}

tsr_status_t logical_not_impl(CallCtx& ctx) {
  Tensor* in[1] = {ctx.tensor(0)};
  return run_elementwise(ctx, in, 1, in[0]->dtype, TSR_BOOL, nullptr);
}

// bitwise ops take integers and bool; shifts (allow_bool false) integers only.
template <bool AllowBool>
tsr_status_t bitwise_impl(CallCtx& ctx) {
  int n = ctx.nargs >= 2 && ctx.tensor(1) ? 2 : 1;
  Tensor* in[2] = {ctx.tensor(0), n == 2 ? ctx.tensor(1) : nullptr};
  tsr_dtype_t common = result_type(in, n);
  if (is_floating(common) || (!AllowBool && common == TSR_BOOL)) {
    std::string got = n == 2 ? both(ctx, in[0], in[1]) : describe(ctx.rt, in[0]);
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("only integer") + (AllowBool ? " and bool" : "") +
                                               " tensors are supported, got " + got);
  }
  return run_elementwise(ctx, in, n, common, common, nullptr);
}

// lerp(self, end, weight): floating; self and end share a dtype; weight too unless it is a
// wrapped number (lerp_scalar passes its weight so).
tsr_status_t lerp_impl(CallCtx& ctx) {
  Tensor* in[3] = {ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)};
  tsr_dtype_t dt = in[0]->dtype;
  if (!is_floating(dt))
    return ctx.error(TSR_INVALID_ARGUMENT, "expected a floating point self, got " + describe(ctx.rt, in[0]));
  if (in[1]->dtype != dt)
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("expected dtype ") + dtype_name(dt) +
                                               " for `end` but got dtype " + dtype_name(in[1]->dtype));
  if (in[2]->dtype != dt && !(in[2]->wrapped_number && is_floating(in[2]->dtype)))
    return ctx.error(TSR_INVALID_ARGUMENT, std::string("expected dtype ") + dtype_name(dt) +
                                               " for `weight` but got dtype " + dtype_name(in[2]->dtype));
  return run_elementwise(ctx, in, 3, dt, dt, nullptr);
}

}  // namespace

TSR_CORE_OPS(binary) {
  v.push_back({"div_mode(Tensor self, Tensor other, str rounding_mode) -> Tensor", div_mode_impl});
  v.push_back({"remainder(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::NoBool, 2>});
  v.push_back({"fmod(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::NoBool, 2>});
  for (const char* f : {"atan2", "copysign", "xlogy"})
    v.push_back({std::string(f) + "(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::IntToFloat, 2>});
  for (const char* f : {"hypot", "logaddexp", "logaddexp2"})
    v.push_back({std::string(f) + "(Tensor self, Tensor other) -> Tensor", float_only_impl});
  v.push_back({"fmax(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>});
  v.push_back({"fmin(Tensor self, Tensor other) -> Tensor", elementwise_impl<Rule::Promote, 2>});
  v.push_back({"lerp(Tensor self, Tensor end, Tensor weight) -> Tensor", lerp_impl});
  for (const char* f : {"logical_and", "logical_or", "logical_xor"})
    v.push_back({std::string(f) + "(Tensor self, Tensor other) -> Tensor", logical_impl});
  v.push_back({"logical_not(Tensor self) -> Tensor", logical_not_impl});
  for (const char* f : {"bitwise_and", "bitwise_or", "bitwise_xor"})
    v.push_back({std::string(f) + "(Tensor self, Tensor other) -> Tensor", bitwise_impl<true>});
  v.push_back({"bitwise_not(Tensor self) -> Tensor", bitwise_impl<true>});
  for (const char* f : {"bitwise_left_shift", "bitwise_right_shift"})
    v.push_back({std::string(f) + "(Tensor self, Tensor other) -> Tensor", bitwise_impl<false>});
}

}  // namespace tsr::core
