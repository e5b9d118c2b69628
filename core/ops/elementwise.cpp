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

// A one-element CPU operand converted to the compute dtype in a tensor on the stack: the wrapped
// number of `x * 2.0` for an f32 x. Allocating a tensor for it (and freeing it) cost about as
// much as the rest of the op. The CPU runs the kernel on this thread before this frame ends, and
// the dispatcher neither retains nor releases input tensors, so the stack object is safe.
struct StackElement {
  // User-provided, so that the block is default-initialized: zeroing its shape arrays on every
  // elementwise call would cost more than this path saves.
  StackElement() {}
  TensorBlock block;
  alignas(16) unsigned char bytes[16];
  // A 0-dim tensor of `dtype` on `device` (a CPU device) holding src's value; null when the
  // conversion must go through the _copy kernel.
  Tensor* convert(Tensor* src, tsr_dtype_t dtype, tsr_device_t device) {
    if (device.type != TSR_DEVICE_TYPE_CPU || src->numel != 1 || dtype_size(dtype) > sizeof(bytes)) return nullptr;
    Storage& st = block.storage;
    st.data = bytes;
    st.nbytes = dtype_size(dtype);
    st.device = device;
    Tensor& t = block.tensor;
    t.ndim = 0;
    t.numel = 1;
    t.dtype = dtype;
    t.device = device;
    t.runtime = src->runtime;
    t.storage = &st;
    t.in_block = true;
    return cast_host_element(src, &t) ? &t : nullptr;
  }
};

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
  StackElement scalar;  // one per call: a second one-element operand takes the general path
  bool scalar_used = false;
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
    if (!keep && t->ndim == 0 && !scalar_used)
      if (Tensor* e = scalar.convert(t, compute, device)) {
        prepared[i] = e;
        scalar_used = true;
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
