// example_gemm: a vendor op library built against the Tessera SDK alone.
//
// It defines one NEW operator,
//
//   example::gemm_bias_act(Tensor a, Tensor b, Tensor? bias=None, str act='none') -> Tensor
//
// computing act(a @ b + bias) for a [m,k], b [k,n], bias [n] (added to every row) and
// act in {none, relu, gelu, silu}, and a CPU kernel for it (f32, f64; f16/bf16 computed in f32).
//
// What the core does for us (so the kernel only computes):
//   - parses the schema, fills defaults (bias=None, act='none'), checks argument kinds, checks that
//     all tensors are on one device;
//   - runs our meta function (validation + output shape/dtype), then allocates the output, or
//     checks the caller's out= tensor against what meta said;
//   - picks our kernel by (op, device type, dtype) and calls it.
// Nothing here includes a core header or links libtessera: abi/ + sdk/ only.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/plugin.hpp"
#include "tessera/plugin_backward.hpp"

namespace {

constexpr const char* kOpName = "example::gemm_bias_act";
constexpr const char* kSchema =
    "example::gemm_bias_act(Tensor a, Tensor b, Tensor? bias=None, str act='none') -> Tensor";

// Argument positions in the schema.
enum : size_t { kArgA = 0, kArgB = 1, kArgBias = 2, kArgAct = 3 };

// ---- activation --------------------------------------------------------------------------------

enum class Act { None, Relu, Gelu, Silu };

bool parse_act(const char* s, Act* out) {
  if (!std::strcmp(s, "none"))
    *out = Act::None;
  else if (!std::strcmp(s, "relu"))
    *out = Act::Relu;
  else if (!std::strcmp(s, "gelu"))
    *out = Act::Gelu;
  else if (!std::strcmp(s, "silu"))
    *out = Act::Silu;
  else
    return false;
  return true;
}

template <class Acc>
Acc apply_act(Act act, Acc x) {
  switch (act) {
    case Act::None:
      return x;
    case Act::Relu:
      return x < Acc(0) ? Acc(0) : x;  // NaN stays NaN, as in PyTorch
    case Act::Gelu:
      return Acc(0.5) * x * (Acc(1) + std::erf(x * Acc(0.70710678118654752440)));
    case Act::Silu:
      return x / (Acc(1) + std::exp(-x));
  }
  return x;
}

// "[2, 3]"
std::string shape_str(int32_t ndim, const int64_t* sizes) {
  std::string s = "[";
  for (int32_t d = 0; d < ndim; ++d) s += (d ? ", " : "") + std::to_string(sizes[d]);
  return s + "]";
}

// ---- meta: validation and output spec ----------------------------------------------------------

void gemm_bias_act_meta(tsr::MetaCall& c) {
  const char* op = c.op_name();
  const int32_t a_nd = c.tensor_ndim(kArgA), b_nd = c.tensor_ndim(kArgB);
  const int64_t* as = c.tensor_sizes(kArgA);
  const int64_t* bs = c.tensor_sizes(kArgB);
  const std::string a_str = shape_str(a_nd, as), b_str = shape_str(b_nd, bs);
  TSR_CHECK(a_nd == 2 && b_nd == 2, TSR_INVALID_ARGUMENT, op, ": expected 2-D a and b, got a ", a_str, " and b ",
            b_str);
  TSR_CHECK(as[1] == bs[0], TSR_INVALID_ARGUMENT, op, ": a ", a_str, " and b ", b_str, " cannot be multiplied (a has ",
            as[1], " columns, b has ", bs[0], " rows)");
  const tsr_dtype_t dt = c.tensor_dtype(kArgA);
  TSR_CHECK(c.tensor_dtype(kArgB) == dt, TSR_INVALID_ARGUMENT, op, ": a ", a_str, " is ", tsr::dtype_name(dt),
            " but b ", b_str, " is ", tsr::dtype_name(c.tensor_dtype(kArgB)), " (same dtype required)");
  TSR_CHECK(tsr::is_floating(dt), TSR_INVALID_ARGUMENT, op, ": expected a floating dtype, got ", tsr::dtype_name(dt),
            " for a ", a_str, " and b ", b_str);
  const int64_t m = as[0], n = bs[1];
  if (!c.arg_is_none(kArgBias)) {
    const int32_t nd = c.tensor_ndim(kArgBias);
    const std::string bias_str = shape_str(nd, c.tensor_sizes(kArgBias));
    TSR_CHECK(nd == 1 && c.tensor_sizes(kArgBias)[0] == n, TSR_INVALID_ARGUMENT, op, ": bias ", bias_str,
              " must have shape [", n, "] for a ", a_str, " and b ", b_str);
    TSR_CHECK(c.tensor_dtype(kArgBias) == dt, TSR_INVALID_ARGUMENT, op, ": bias is ",
              tsr::dtype_name(c.tensor_dtype(kArgBias)), " but a and b are ", tsr::dtype_name(dt));
  }
  Act act;
  TSR_CHECK(parse_act(c.arg_str(kArgAct), &act), TSR_INVALID_ARGUMENT, op, ": unknown act '", c.arg_str(kArgAct),
            "' (expected none, relu, gelu or silu)");
  const int64_t out_sizes[2] = {m, n};
  c.set_output(0, dt, c.tensor_device(kArgA), 2, out_sizes);
  c.set_dispatch_dtype(dt);
}

// ---- the CPU kernel ----------------------------------------------------------------------------
//
// Blocked over n (panels of kNB columns) and k (slabs of kKB rows of b). Each slab of b is packed
// into a contiguous buffer in the compute type Acc, which makes any stride of b cheap to read and
// converts f16/bf16 once. The inner loop, c[i, j..] += a[i,p] * bp[p, j..], runs over contiguous
// memory and vectorizes. a is read element by element through its strides (each element is used
// kNB times). The m x kNB accumulator panel is finished by the epilogue (bias, activation, one
// rounding to T) and stored through the output's strides, so out= may be any strided view.
// Single-threaded on purpose: this is an example; a production kernel would call a BLAS or
// parallelize over panels.

constexpr int64_t kNB = 128;  // columns per panel (the accumulator row fits in L1)
constexpr int64_t kKB = 256;  // rows of b per packed slab (kKB x kNB x 4 bytes = 128 KiB for f32)

template <class T>
void gemm_bias_act_typed(tsr::KernelCall& c, Act act) {
  using Acc = tsr::compute_t<T>;  // float for f16/bf16/f32, double for f64
  const tsr_tensor_view_t& A = c.input(0);
  const tsr_tensor_view_t& B = c.input(1);
  const tsr_tensor_view_t* bias = c.arg_is_none(kArgBias) ? nullptr : &c.input(2);
  const tsr_tensor_view_t& C = c.output(0);
  const int64_t m = A.sizes[0], k = A.sizes[1], n = B.sizes[1];
  if (m == 0 || n == 0) return;
  const T* a = static_cast<const T*>(A.data);
  const T* b = static_cast<const T*>(B.data);
  T* out = static_cast<T*>(C.data);
  const int64_t as0 = A.strides[0], as1 = A.strides[1];
  const int64_t bs0 = B.strides[0], bs1 = B.strides[1];
  const int64_t cs0 = C.strides[0], cs1 = C.strides[1];

  std::vector<Acc> acc(static_cast<size_t>(m * std::min(n, kNB)));
  std::vector<Acc> bp(static_cast<size_t>(std::min(k, kKB) * std::min(n, kNB)));
  for (int64_t j0 = 0; j0 < n; j0 += kNB) {
    const int64_t nb = std::min(kNB, n - j0);
    std::fill(acc.begin(), acc.begin() + m * nb, Acc(0));
    for (int64_t p0 = 0; p0 < k; p0 += kKB) {
      const int64_t kb = std::min(kKB, k - p0);
      // Pack b[p0:p0+kb, j0:j0+nb] row-major into bp.
      for (int64_t p = 0; p < kb; ++p) {
        const T* brow = b + (p0 + p) * bs0 + j0 * bs1;
        Acc* dst = bp.data() + p * nb;
        if (bs1 == 1) {
          for (int64_t j = 0; j < nb; ++j) dst[j] = static_cast<Acc>(brow[j]);
        } else {
          for (int64_t j = 0; j < nb; ++j) dst[j] = static_cast<Acc>(brow[j * bs1]);
        }
      }
      // acc[i, :] += a[i, p0:p0+kb] @ bp
      for (int64_t i = 0; i < m; ++i) {
        Acc* crow = acc.data() + i * nb;
        const T* arow = a + i * as0 + p0 * as1;
        for (int64_t p = 0; p < kb; ++p) {
          const Acc aip = static_cast<Acc>(arow[p * as1]);
          const Acc* brow = bp.data() + p * nb;
          for (int64_t j = 0; j < nb; ++j) crow[j] += aip * brow[j];
        }
      }
    }
    // Epilogue: + bias, activation, one rounding to T, strided store.
    for (int64_t i = 0; i < m; ++i) {
      const Acc* crow = acc.data() + i * nb;
      T* orow = out + i * cs0 + j0 * cs1;
      for (int64_t j = 0; j < nb; ++j) {
        Acc v = crow[j];
        if (bias) v += static_cast<Acc>(static_cast<const T*>(bias->data)[(j0 + j) * bias->strides[0]]);
        orow[j * cs1] = static_cast<T>(apply_act(act, v));
      }
    }
  }
}

void gemm_bias_act_cpu(tsr::KernelCall& c) {
  Act act;
  if (!parse_act(c.arg_str(kArgAct), &act))  // meta already checked; stay defensive
    tsr::fail(TSR_INVALID_ARGUMENT, c.op_name(), ": unknown act '", c.arg_str(kArgAct), "'");
  tsr::dispatch_floating(c.dtype(), c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    gemm_bias_act_typed<T>(c, act);
  });
}

// ---- backward: written with ops, like the core's formulas ---------------------------------------
//
// out = act(pre), pre = a @ b + bias. d pre = grad * act'(pre), then da = d pre @ b^T,
// db = a^T @ d pre, dbias = sum over rows of d pre. relu reads its derivative off the saved
// output; gelu and silu recompute pre with ops (cheaper to keep than to save).
tsr::Tensor act_grad(Act act, const tsr::Tensor& grad, const tsr::Tensor& out, const tsr::Tensor& a,
                     const tsr::Tensor& b, const tsr::Tensor& bias) {
  if (act == Act::None) return grad;
  if (act == Act::Relu) return tsr::where(tsr::gt(out, 0.0), grad, 0.0);
  tsr::Tensor pre = tsr::matmul(a, b);
  if (bias.defined()) pre = pre + bias;
  if (act == Act::Gelu) {
    tsr::Tensor cdf = (tsr::erf(pre * 0.70710678118654752440) + 1.0) * 0.5;
    tsr::Tensor pdf = tsr::exp(pre * pre * -0.5) * 0.39894228040143267794;  // 1 / sqrt(2 pi)
    return grad * (cdf + pre * pdf);
  }
  tsr::Tensor s = tsr::sigmoid(pre);  // silu
  return grad * s * ((1.0 - s) * pre + 1.0);
}

void gemm_bias_act_backward(tsr::BackwardCall& c) {
  tsr::Tensor grad = c.grad(0);
  if (!grad.defined()) return;
  Act act;
  if (!parse_act(c.arg_str(kArgAct), &act))
    tsr::fail(TSR_INVALID_ARGUMENT, c.op_name(), ": unknown act '", c.arg_str(kArgAct), "'");
  const tsr::Tensor a = c.input(kArgA), b = c.input(kArgB), bias = c.input(kArgBias);
  const tsr::Tensor d = act_grad(act, grad, c.output(0), a, b, bias);
  if (c.needs(kArgA)) c.set(kArgA, tsr::matmul(d, b.t()));
  if (c.needs(kArgB)) c.set(kArgB, tsr::matmul(a.t(), d));
  if (c.needs(kArgBias)) c.set(kArgBias, tsr::sum(d, {0}));
}

// ---- registration ------------------------------------------------------------------------------

void example_gemm_init(tsr::Registrar& r) {
  // The "cpu" device type comes from the cpu plugin (our manifest depends on it, so it is loaded
  // first). Look it up by name, as a vendor would for any device type it did not register.
  int32_t cpu = -1;
  tsr::check(r.api(), r.api()->device_type_lookup(r.runtime(), "cpu", &cpu));
  r.op(kSchema, TSR_META(gemm_bias_act_meta), TSR_BACKWARD(gemm_bias_act_backward));
  r.kernel(kOpName, "example_gemm::gemm_bias_act_cpu", cpu, tsr::kFloatingMask, TSR_KERNEL(gemm_bias_act_cpu));
}

}  // namespace

#ifndef EXAMPLE_GEMM_VERSION
#define EXAMPLE_GEMM_VERSION "0.1.0"
#endif

TSR_DEFINE_PLUGIN("example_gemm", EXAMPLE_GEMM_VERSION,
                  "Example vendor op library: example::gemm_bias_act = act(a @ b + bias) on cpu", nullptr,
                  example_gemm_init, nullptr)
