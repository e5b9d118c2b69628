// The machinery of elementwise ops (ops/elementwise.hpp): promotion, broadcasting, output
// allocation, then one kernel over the canonical iteration. See docs/kernel-contracts.md for what
// kernels receive. The ops themselves are declared by their families (binary, unary).
#include <cstring>

#include "ops/elementwise.hpp"
#include "ops/op_impl.hpp"
#include "ops/op_table.hpp"

namespace tsr::core {

namespace {

using Rule = ElementwiseRule;

}  // namespace

tsr_status_t run_elementwise(CallCtx& ctx, Tensor* const* in, int n, tsr_dtype_t compute, tsr_dtype_t out_dtype,
                             const bool* keep_dtype) {
  if (compute == TSR_DTYPE_UNDEFINED || out_dtype == TSR_DTYPE_UNDEFINED) {
    // The only way promotion fails: a low-precision float met another dtype (PyTorch refuses
    // it too). Name every operand's dtype.
    std::string got;
    for (int i = 0; i < n; ++i) got += (i ? ", " : "") + describe(ctx.rt, in[i]);
    return ctx.error(TSR_INVALID_ARGUMENT, "no promotion rule for these inputs (" + got +
                                               "): low-precision floats (float8, float4) combine only with their own "
                                               "dtype; cast with to() first");
  }
  tsr_device_t device;
  TSR_RETURN_IF_ERROR(common_device(ctx, in, n, &device));
  int ndim = 0;
  int64_t sizes[TSR_MAX_DIMS];
  TSR_RETURN_IF_ERROR(broadcast_shapes(ctx, in, n, &ndim, sizes));
  // Inputs already on the device in the compute dtype are borrowed (no refcount traffic: this
  // is the hot path of small ops); others are converted into owned temporaries.
  Tensor* prepared[TSR_ITER_MAX_OPERANDS] = {};
  Tensor* owned[TSR_ITER_MAX_OPERANDS] = {};
  Tensor* out = nullptr;
  tsr_status_t st = nullptr;
  for (int i = 0; i < n && !st; ++i) {
    Tensor* t = in[i];
    bool on_device = t->device.type == device.type && t->device.index == device.index;
    bool keep = (keep_dtype && keep_dtype[i]) || t->dtype == compute;
    if (on_device && keep) {
      prepared[i] = t;
      continue;
    }
    Tensor* moved = nullptr;
    st = to_device(ctx.rt, t, device, ctx.name(), &moved);
    if (st) break;
    if (keep) {
      owned[i] = moved;
    } else {
      st = cast_to(ctx.rt, moved, compute, ctx.name(), &owned[i]);
      moved->release();
    }
    prepared[i] = owned[i];
  }
  if (!st) st = make_output(ctx, 0, ndim, sizes, out_dtype, device, &out);
  if (!st && out->numel > 0) {
    // An out= tensor that overlaps an input only partially would be corrupted mid-way.
    tsr_iter_t it;
    Tensor* ops[TSR_ITER_MAX_OPERANDS];
    ops[0] = out;
    for (int i = 0; i < n; ++i) ops[i + 1] = prepared[i];
    build_iter(ops, n + 1, 1, ndim, sizes, 0, &it);
    st = launch(ctx, device, compute, prepared, n, &out, 1, &it);
  }
  release_all(owned, static_cast<size_t>(n));
  if (st) {
    if (out) out->release();
    return st;
  }
  publish_outputs(ctx, &out, 1);
  return nullptr;
}

tsr_dtype_t result_type(Tensor* const* in, int n) {
  ResultTypeState s;
  for (int i = 0; i < n; ++i) s.add(in[i]->dtype, in[i]->ndim, in[i]->wrapped_number);
  return s.result();
}

tsr_status_t elementwise_op(CallCtx& ctx, ElementwiseRule R, int N) {
  Tensor* in[TSR_ITER_MAX_OPERANDS];
  for (int i = 0; i < N; ++i) in[i] = ctx.tensor(i);
  tsr_dtype_t common = result_type(in, N);
  tsr_dtype_t compute = common, out = common;
  switch (R) {
    case Rule::Promote:
      break;
    case Rule::IntToFloat:
      if (!is_floating(common)) compute = out = TSR_F32;
      break;
    case Rule::Compare:
      out = TSR_BOOL;
      break;
    case Rule::NoBool:
      if (common == TSR_BOOL)
        return ctx.error(TSR_INVALID_ARGUMENT, "not supported for bool tensors (got " + describe(ctx.rt, in[0]) + ")");
      break;
  }
  return run_elementwise(ctx, in, N, compute, out, nullptr);
}

}  // namespace tsr::core
