// The machinery every op implementation uses: argument access, device and output checks,
// the canonical iteration, and the kernel launch. Op files (ops/<family>/*.cpp) hold only op logic.
#pragma once

#include <string>

#include "plugins/registrar.hpp"
#include "runtime/status.hpp"
#include "tessera/checked_math.hpp"  // every op checks size arithmetic with these

namespace tsr::core {

constexpr int kMaxArgs = 16;
constexpr int kMaxOutputs = 4;

struct CallCtx {
  Runtime* rt = nullptr;
  tsr_op_s* op = nullptr;
  tsr_value_t args[kMaxArgs];
  size_t nargs = 0;
  int64_t single_int[kMaxArgs];   // storage when an int is passed for an int[] argument
  tsr_tensor_t** outs = nullptr;  // caller's output slots
  size_t nouts = 0;

  const char* name() const { return op->schema.name.c_str(); }
  Tensor* tensor(size_t i) const { return args[i].tag == TSR_VALUE_TENSOR ? args[i].u.tensor : nullptr; }
  bool is_none(size_t i) const { return args[i].tag == TSR_VALUE_NONE; }
  int64_t int_arg(size_t i) const { return args[i].u.i; }
  double double_arg(size_t i) const {
    return args[i].tag == TSR_VALUE_INT    ? static_cast<double>(args[i].u.i)
           : args[i].tag == TSR_VALUE_BOOL ? static_cast<double>(args[i].u.b)
                                           : args[i].u.d;
  }
  bool bool_arg(size_t i) const { return args[i].u.b != 0; }
  Tensor* out_slot(size_t i) const { return i < nouts ? outs[i] : nullptr; }
  tsr_status_t error(tsr_code_t code, const std::string& msg) const {
    return make_status(code, std::string(name()) + ": " + msg);
  }
};

// Normalizes args per the schema (defaults, kinds, int -> int[]), then runs op->impl.
// Checks boxed argument i of ctx against its schema kind (arg_check.cpp): the dispatcher's one
// boundary check, run before any op body. Normalizes an int passed for int[] to a list of one.
tsr_status_t check_arg(CallCtx& ctx, size_t i);
// The dispatcher's memory-overlap check (arg_check.cpp, tensor/overlap.hpp), run after check_arg
// when the call writes a tensor (a Tensor(a!) argument or an out= tensor): a written tensor
// with internal overlap (several elements at one address, e.g. an expanded view), or one that
// partially overlaps another tensor of the call, is INVALID_ARGUMENT naming the op; the
// identical view on both sides (add_(x, x), add(x, x, out=x)) is allowed.
tsr_status_t check_overlap(const CallCtx& ctx);

tsr_status_t call_op(tsr_op_s* op, const tsr_value_t* args, size_t nargs, tsr_tensor_t** outs, size_t nouts);

// "[2, 3] float32 on cpu:0"
std::string describe(Runtime* rt, const Tensor* t);

// All tensors (nullptrs skipped) must be on one device; 0-dim cpu tensors may join any
// device (as in PyTorch). Sets *device (cpu:0 when there are no tensors).
tsr_status_t common_device(const CallCtx& ctx, Tensor* const* ts, int n, tsr_device_t* device);

// Right-aligned broadcast of shapes; error names op and both shapes.
tsr_status_t broadcast_shapes(const CallCtx& ctx, Tensor* const* ts, int n, int* ndim, int64_t* sizes);

// Output i: the caller's out= tensor (checked to match exactly; a new reference returned)
// or a new contiguous tensor.
tsr_status_t make_output(CallCtx& ctx, size_t i, int ndim, const int64_t* sizes, tsr_dtype_t dtype, tsr_device_t device,
                         Tensor** out);
// On success: hand new outputs to the caller's slots (out= slots keep theirs).
void publish_outputs(CallCtx& ctx, Tensor** results, size_t n);
void release_all(Tensor** ts, size_t n);

// Converts t to dtype (new contiguous tensor) or returns a new reference when it matches.
tsr_status_t cast_to(Runtime* rt, Tensor* t, tsr_dtype_t dtype, const char* op, Tensor** out);
// Writes one-element CPU tensor t's value into one-element CPU tensor r, converted with _copy's
// own per-element cast: that is how a wrapped number meets the other operand's dtype (`x * 2.0`
// with x f32), and dispatching _copy for it cost more than the op it feeds. CPU memory is the
// host's and CPU work runs on the calling thread, so reading and writing here is the copy.
// Returns false, writing nothing, where the _copy kernel must run (another device, more
// elements, packed float4).
bool cast_host_element(const Tensor* t, Tensor* r);
tsr_status_t make_contiguous(Runtime* rt, Tensor* t, const char* op, Tensor** out);
// Moves a 0-dim cpu tensor to `device` when it differs.
tsr_status_t to_device(Runtime* rt, Tensor* t, tsr_device_t device, const char* op, Tensor** out);

// Builds the canonical iteration over operands (outputs first) broadcast to (ndim, sizes).
// reduce_mask: bit d set = output dim d is reduced (the output has size 1 there and gets
// stride 0). Reduced dims are placed innermost. keep_order: never reorder/coalesce reduced
// dims (argmax needs logical order).
void build_iter(Tensor* const* operands, int noperands, int noutputs, int ndim, const int64_t* sizes,
                uint32_t reduce_mask, tsr_iter_t* it);

// Finds the kernel for (device, dtype) and calls it.
tsr_status_t launch(CallCtx& ctx, tsr_device_t device, int32_t dtype, Tensor* const* inputs, int ninputs,
                    Tensor* const* outputs, int noutputs, const tsr_iter_t* iter);
// Same for an op the core calls internally (copy, fill), without a CallCtx. `ninputs` may exceed
// kMaxArgs (cat passes one input per tensor of its list).
tsr_status_t launch_op(Runtime* rt, tsr_op_s* op, tsr_device_t device, int32_t dtype, const tsr_value_t* args,
                       size_t nargs, Tensor* const* inputs, int ninputs, Tensor* const* outputs, int noutputs,
                       const tsr_iter_t* iter);

// Runs `compute(target)` with target = out when out is dense, else with a dense temporary that
// is copied into out afterwards (kernels of view-based ops write dense outputs). Skips compute
// for empty outputs.
template <class F>
tsr_status_t into_dense(CallCtx& ctx, Tensor* out, F&& compute) {
  if (out->numel == 0) return nullptr;
  if (out->contiguous) return compute(out);
  Tensor* tmp = nullptr;
  TSR_RETURN_IF_ERROR(new_tensor(ctx.rt, out->ndim, out->sizes, out->dtype, out->device, ctx.name(), &tmp));
  tsr_status_t st = compute(tmp);
  if (!st) st = copy_into(out, tmp, ctx.name());
  tmp->release();
  return st;
}

// Fills t with a scalar through the "_fill" kernel (one CPU element of the value's own dtype is
// stored directly).
tsr_status_t fill_tensor(Runtime* rt, Tensor* t, const tsr_value_t& value, const char* op);

// The generic implementation for plugin-defined ops: meta -> outputs -> kernel(views).
tsr_status_t plugin_op_impl(CallCtx& ctx);

}  // namespace tsr::core
