// @NAME@: elementwise kernels for float32 and float64.
//
// The core has already broadcast every operand to the output's shape and cast the inputs to the
// dispatch dtype, so each kernel sees one dtype per role and only computes out = f(in...) over
// call.iter (operands: outputs first, then inputs; strides in bytes; see
// docs/kernel-contracts.md in the installed docs for each op's exact contract).
#include <cmath>
#include <cstdint>

#include "kernels.hpp"
#include "tessera/iter.hpp"

namespace @NAME@ {
namespace {

// Runs `body` with T = float or double for the call's dtype (other dtypes: UNIMPLEMENTED).
template <class Body>
void on_float(tsr::KernelCall& c, Body&& body) {
  tsr::dispatch_mask<kFloatMask>(c.dtype(), c.op_name(), body);
}

// ---- arithmetic (add, sub: out = a +- alpha * b) ----------------------------------------------

void add_kernel(tsr::KernelCall& c) {
  on_float(c, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T alpha = c.arg_scalar<T>(2);
    tsr::elementwise_serial<T, T, T>(c.iter(), [alpha](T a, T b) { return a + alpha * b; });
  });
}
void sub_kernel(tsr::KernelCall& c) {
  on_float(c, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T alpha = c.arg_scalar<T>(2);
    tsr::elementwise_serial<T, T, T>(c.iter(), [alpha](T a, T b) { return a - alpha * b; });
  });
}

// Binary and unary kernels without arguments differ only in the per-element function.
template <class F>
void binary(tsr::KernelCall& c, F f) {
  on_float(c, [&](auto tag) {
    using T = typename decltype(tag)::type;
    tsr::elementwise_serial<T, T, T>(c.iter(), [f](T a, T b) { return static_cast<T>(f(a, b)); });
  });
}
template <class F>
void unary(tsr::KernelCall& c, F f) {
  on_float(c, [&](auto tag) {
    using T = typename decltype(tag)::type;
    tsr::elementwise_serial<T, T>(c.iter(), [f](T a) { return static_cast<T>(f(a)); });
  });
}

void mul_kernel(tsr::KernelCall& c) {
  binary(c, [](auto a, auto b) { return a * b; });
}
void div_kernel(tsr::KernelCall& c) {
  binary(c, [](auto a, auto b) { return a / b; });  // IEEE: x/0 is inf or nan
}
void neg_kernel(tsr::KernelCall& c) {
  unary(c, [](auto a) { return -a; });
}
void exp_kernel(tsr::KernelCall& c) {
  unary(c, [](auto a) { return std::exp(a); });
}
void log_kernel(tsr::KernelCall& c) {
  unary(c, [](auto a) { return std::log(a); });
}
void abs_kernel(tsr::KernelCall& c) {
  unary(c, [](auto a) { return std::fabs(a); });
}
void sqrt_kernel(tsr::KernelCall& c) {
  unary(c, [](auto a) { return std::sqrt(a); });
}
void relu_kernel(tsr::KernelCall& c) {
  unary(c, [](auto a) { return a < 0 ? decltype(a)(0) : a; });  // NaN stays NaN
}

// ---- comparisons: bool output (one byte, 0 or 1), inputs in the dispatch dtype ----------------

template <class F>
void compare(tsr::KernelCall& c, F f) {
  on_float(c, [&](auto tag) {
    using T = typename decltype(tag)::type;
    tsr::elementwise_serial<uint8_t, T, T>(c.iter(), [f](T a, T b) { return static_cast<uint8_t>(f(a, b)); });
  });
}
void eq_kernel(tsr::KernelCall& c) {
  compare(c, [](auto a, auto b) { return a == b; });
}
void ne_kernel(tsr::KernelCall& c) {
  compare(c, [](auto a, auto b) { return a != b; });
}
void lt_kernel(tsr::KernelCall& c) {
  compare(c, [](auto a, auto b) { return a < b; });
}
void le_kernel(tsr::KernelCall& c) {
  compare(c, [](auto a, auto b) { return a <= b; });
}
void gt_kernel(tsr::KernelCall& c) {
  compare(c, [](auto a, auto b) { return a > b; });
}
void ge_kernel(tsr::KernelCall& c) {
  compare(c, [](auto a, auto b) { return a >= b; });
}

// where(cond, a, b): operands out, cond (bool, always), a, b (dispatch dtype).
void where_kernel(tsr::KernelCall& c) {
  on_float(c, [&](auto tag) {
    using T = typename decltype(tag)::type;
    tsr::elementwise_serial<T, uint8_t, T, T>(c.iter(), [](uint8_t m, T a, T b) { return m ? a : b; });
  });
}

}  // namespace

void register_elementwise_kernels(tsr::Registrar& r, int32_t type) {
  struct Entry {
    const char* op;
    const char* name;
    tsr_kernel_fn_t fn;
  };
  const Entry entries[] = {
      {"add", "@NAME@::add", TSR_KERNEL(add_kernel)},    {"sub", "@NAME@::sub", TSR_KERNEL(sub_kernel)},
      {"mul", "@NAME@::mul", TSR_KERNEL(mul_kernel)},    {"div", "@NAME@::div", TSR_KERNEL(div_kernel)},
      {"neg", "@NAME@::neg", TSR_KERNEL(neg_kernel)},    {"exp", "@NAME@::exp", TSR_KERNEL(exp_kernel)},
      {"log", "@NAME@::log", TSR_KERNEL(log_kernel)},    {"relu", "@NAME@::relu", TSR_KERNEL(relu_kernel)},
      {"abs", "@NAME@::abs", TSR_KERNEL(abs_kernel)},    {"sqrt", "@NAME@::sqrt", TSR_KERNEL(sqrt_kernel)},
      {"eq", "@NAME@::eq", TSR_KERNEL(eq_kernel)},       {"ne", "@NAME@::ne", TSR_KERNEL(ne_kernel)},
      {"lt", "@NAME@::lt", TSR_KERNEL(lt_kernel)},       {"le", "@NAME@::le", TSR_KERNEL(le_kernel)},
      {"gt", "@NAME@::gt", TSR_KERNEL(gt_kernel)},       {"ge", "@NAME@::ge", TSR_KERNEL(ge_kernel)},
      {"where", "@NAME@::where", TSR_KERNEL(where_kernel)},
  };
  for (const Entry& e : entries) r.kernel(e.op, e.name, type, kFloatMask, e.fn);
}

}  // namespace @NAME@
