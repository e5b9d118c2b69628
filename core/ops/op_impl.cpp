#include "ops/op_impl.hpp"
#include "runtime/streams.hpp"

#include "autograd/engine.hpp"
#include "graph/trace.hpp"
#include "tessera/kernels/fill_ops.hpp"
#include "tessera/plugin.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

namespace tsr::core {

static tsr_status_t call_op_body(tsr_op_s* op, const tsr_value_t* args, size_t nargs, tsr_tensor_t** outs,
                                 size_t nouts) {
  const Schema& s = op->schema;
  if (nargs > s.args.size() || (nargs > 0 && !args))
    return make_status(TSR_INVALID_ARGUMENT, s.name + ": expected at most " + std::to_string(s.args.size()) +
                                                 " arguments, got " + std::to_string(nargs));
  if (nouts != static_cast<size_t>(s.num_outputs) || (nouts > 0 && !outs))
    return make_status(TSR_INVALID_ARGUMENT, s.name + ": expected " + std::to_string(s.num_outputs) +
                                                 " output slot(s), got " + std::to_string(nouts));
  CallCtx ctx;
  ctx.rt = op->runtime;
  ctx.op = op;
  ctx.outs = outs;
  ctx.nouts = nouts;
  ctx.nargs = s.args.size();
  for (size_t i = 0; i < s.args.size(); ++i) {
    const ArgSpec& a = s.args[i];
    if (i < nargs) {
      ctx.args[i] = args[i];
    } else if (a.has_default) {
      ctx.args[i] = a.default_value;
    } else {
      return make_status(TSR_INVALID_ARGUMENT,
                         s.name + ": missing required argument '" + a.name + "' (schema: " + op->schema_text + ")");
    }
    // The common cases (a tensor of this runtime, a number where a scalar is expected) pass
    // here without the call; check_arg sees the rest, and all errors.
    const tsr_value_t& v = ctx.args[i];
    if (v.tag == TSR_VALUE_TENSOR ? a.kind == ArgKind::Tensor && v.u.tensor && v.u.tensor->runtime == ctx.rt
                                  : (a.kind == ArgKind::Scalar || a.kind == ArgKind::Float) &&
                                        (v.tag == TSR_VALUE_DOUBLE || v.tag == TSR_VALUE_INT))
      continue;
    TSR_RETURN_IF_ERROR(check_arg(ctx, i));
  }
  bool writes = op->mutates;
  for (size_t i = 0; i < nouts; ++i)
    if (outs[i]) {
      if (outs[i]->runtime != ctx.rt)
        return make_status(TSR_INVALID_ARGUMENT, s.name + ": out tensor belongs to another runtime");
      writes = true;
    }
  if (writes && !op->overlapping_writes_ok) TSR_RETURN_IF_ERROR(check_overlap(ctx));
  tsr_status_t st = (!op->composite && should_record(ctx)) ? call_recorded(ctx) : op->impl(ctx);
  if (!st && op->mutates)
    for (size_t i = 0; i < s.args.size(); ++i)
      if (s.args[i].mutable_ && ctx.args[i].tag == TSR_VALUE_TENSOR) ctx.args[i].u.tensor->bump_version();
  return st;
}

tsr_status_t call_op(tsr_op_s* op, const tsr_value_t* args, size_t nargs, tsr_tensor_t** outs, size_t nouts) {
  if (!op) return make_status(TSR_INVALID_ARGUMENT, "op_call: op is NULL");
  // Tracing (graph/trace.hpp) costs one relaxed load here while no thread traces.
  if (graph::g_tracing_threads.load(std::memory_order_relaxed) != 0)
    if (graph::Tracer* tr = graph::thread_tracer())
      return graph::traced_call(tr, call_op_body, op, args, nargs, outs, nouts);
  return call_op_body(op, args, nargs, outs, nouts);
}

std::string describe(Runtime* rt, const Tensor* t) {
  return shape_str(t->sizes, t->ndim) + " " + dtype_name(t->dtype) + " on " + device_str(rt, t->device);
}

static bool same_device(tsr_device_t a, tsr_device_t b) { return a.type == b.type && a.index == b.index; }

tsr_status_t common_device(const CallCtx& ctx, Tensor* const* ts, int n, tsr_device_t* device) {
  const Tensor* first = nullptr;
  for (int i = 0; i < n; ++i) {
    const Tensor* t = ts[i];
    if (!t || (t->ndim == 0 && t->device.type == TSR_DEVICE_TYPE_CPU)) continue;
    if (!first)
      first = t;
    else if (!same_device(first->device, t->device))
      return ctx.error(TSR_INVALID_ARGUMENT,
                       "expected all tensors to be on the same device, but found at least two "
                       "devices, " +
                           device_str(ctx.rt, first->device) + " and " + device_str(ctx.rt, t->device) + " (tensors " +
                           describe(ctx.rt, first) + " and " + describe(ctx.rt, t) + ")");
  }
  if (!first)  // only 0-dim cpu tensors (or none): the first tensor's device
    for (int i = 0; i < n && !first; ++i) first = ts[i];
  *device = first ? first->device : tsr_device_t{TSR_DEVICE_TYPE_CPU, 0};
  return nullptr;
}

tsr_status_t broadcast_shapes(const CallCtx& ctx, Tensor* const* ts, int n, int* ndim_out, int64_t* sizes) {
  // Fast path: identical shapes (the common case) need no per-dim rules.
  // (A loop over the few dims, not memcmp: the library call cost more than the compare.)
  bool same = n > 0 && ts[0];
  for (int i = 1; i < n && same; ++i) {
    same = ts[i] && ts[i]->ndim == ts[0]->ndim;
    for (int d = 0; d < ts[0]->ndim && same; ++d) same = ts[i]->sizes[d] == ts[0]->sizes[d];
  }
  if (same) {
    *ndim_out = ts[0]->ndim;
    std::memcpy(sizes, ts[0]->sizes, sizeof(int64_t) * static_cast<size_t>(ts[0]->ndim));
    return nullptr;
  }
  int ndim = 0;
  for (int i = 0; i < n; ++i)
    if (ts[i]) ndim = std::max(ndim, static_cast<int>(ts[i]->ndim));
  for (int d = 0; d < ndim; ++d) sizes[d] = 1;
  for (int i = 0; i < n; ++i) {
    const Tensor* t = ts[i];
    if (!t) continue;
    int off = ndim - t->ndim;
    for (int d = 0; d < t->ndim; ++d) {
      int64_t s = t->sizes[d], &o = sizes[off + d];
      if (s == o || s == 1) continue;
      if (o == 1) {
        o = s;
        continue;
      }
      std::string shapes;
      for (int j = 0; j < n; ++j)
        if (ts[j]) shapes += (shapes.empty() ? "" : " and ") + shape_str(ts[j]->sizes, ts[j]->ndim);
      return ctx.error(TSR_INVALID_ARGUMENT, "shapes " + shapes + " cannot be broadcast together (size " +
                                                 std::to_string(o) + " vs " + std::to_string(s) + " at dimension " +
                                                 std::to_string(off + d) + ")");
    }
  }
  *ndim_out = ndim;
  return nullptr;
}

tsr_status_t make_output(CallCtx& ctx, size_t i, int ndim, const int64_t* sizes, tsr_dtype_t dtype, tsr_device_t device,
                         Tensor** out) {
  if (Tensor* o = ctx.out_slot(i)) {
    bool shape_ok = o->ndim == ndim && std::equal(sizes, sizes + ndim, o->sizes);
    if (!shape_ok || o->dtype != dtype || !same_device(o->device, device))
      return ctx.error(TSR_INVALID_ARGUMENT, "out tensor " + std::to_string(i) + " is " + describe(ctx.rt, o) +
                                                 " but the result is " + shape_str(sizes, ndim) + " " +
                                                 dtype_name(dtype) + " on " + device_str(ctx.rt, device));
    o->retain();
    o->bump_version();
    *out = o;
    return nullptr;
  }
  // Result shapes are computed from arguments (arange's bounds, one_hot's class count, repeat's
  // factors), so they are checked here once for every op: a wrapped element or byte count would
  // under-allocate the output. The device lookup is skipped when it is one we know.
  int64_t numel = 0;
  TSR_RETURN_IF_ERROR(check_shape(ctx.name(), ndim, sizes, &numel));
  Runtime* rt = ctx.rt;
  if (device.type >= 0 && device.type < kMaxDeviceTypes && device.index >= 0 &&
      device.index < rt->device_types[device.type].count && dtype_valid(dtype)) {
    if (DeviceAllocator* a = rt->device_types[device.type].allocators[device.index].get())
      return new_tensor_trusted(rt, ndim, sizes, numel, dtype, device, a, ctx.name(), out);
  }
  return new_tensor(ctx.rt, ndim, sizes, dtype, device, ctx.name(), out);
}

void publish_outputs(CallCtx& ctx, Tensor** results, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (ctx.out_slot(i)) {
      results[i]->release();  // the caller keeps its own reference
    } else {
      ctx.outs[i] = results[i];
    }
    results[i] = nullptr;
  }
}

void release_all(Tensor** ts, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (ts[i]) {
      ts[i]->release();
      ts[i] = nullptr;
    }
}

bool cast_host_element(const Tensor* t, Tensor* r) {
  if (t->device.type != TSR_DEVICE_TYPE_CPU || r->device.type != TSR_DEVICE_TYPE_CPU || t->numel != 1 ||
      r->numel != 1 || t->dtype == TSR_F4_E2M1FN_X2 || r->dtype == TSR_F4_E2M1FN_X2)
    return false;
  dispatch_castable(r->dtype, "_copy", [&](auto otag) {
    using T = typename decltype(otag)::type;
    dispatch_castable(t->dtype, "_copy", [&](auto stag) {
      using S = typename decltype(stag)::type;
      kernels::Elem<S> v;
      std::memcpy(&v, t->data(), sizeof(v));
      const kernels::Elem<T> w = kernels::CastOp<T, S>{}(v);
      std::memcpy(r->data(), &w, sizeof(w));
    });
  });
  r->bump_version();
  return true;
}

tsr_status_t cast_to(Runtime* rt, Tensor* t, tsr_dtype_t dtype, const char* op, Tensor** out) {
  if (t->dtype == dtype) {
    t->retain();
    *out = t;
    return nullptr;
  }
  Tensor* r = nullptr;
  TSR_RETURN_IF_ERROR(new_tensor(rt, t->ndim, t->sizes, dtype, t->device, op, &r));
  if (cast_host_element(t, r)) {
    *out = r;
    return nullptr;
  }
  if (tsr_status_t st = copy_into(r, t, op)) {
    r->release();
    return st;
  }
  *out = r;
  return nullptr;
}

tsr_status_t make_contiguous(Runtime* rt, Tensor* t, const char* op, Tensor** out) {
  if (t->contiguous) {
    t->retain();
    *out = t;
    return nullptr;
  }
  Tensor* r = nullptr;
  TSR_RETURN_IF_ERROR(new_tensor(rt, t->ndim, t->sizes, t->dtype, t->device, op, &r));
  if (tsr_status_t st = copy_into(r, t, op)) {
    r->release();
    return st;
  }
  *out = r;
  return nullptr;
}

tsr_status_t to_device(Runtime* rt, Tensor* t, tsr_device_t device, const char* op, Tensor** out) {
  if (same_device(t->device, device)) {
    t->retain();
    *out = t;
    return nullptr;
  }
  Tensor* r = nullptr;
  TSR_RETURN_IF_ERROR(new_tensor(rt, t->ndim, t->sizes, t->dtype, device, op, &r));
  if (tsr_status_t st = copy_into(r, t, op)) {
    r->release();
    return st;
  }
  r->wrapped_number = t->wrapped_number;
  *out = r;
  return nullptr;
}

void build_iter(Tensor* const* operands, int nops, int noutputs, int ndim, const int64_t* sizes, uint32_t reduce_mask,
                tsr_iter_t* it) {
  it->struct_size = sizeof(tsr_iter_t);
  it->noperands = nops;
  it->noutputs = noutputs;
  it->contiguous = 0;
  it->reserved = 0;
  int64_t numel = 1;
  for (int d = 0; d < ndim; ++d) numel *= sizes[d];
  it->numel = numel;
  // Fast path: every operand dense with the iteration's full shape (the common case of
  // same-shape contiguous elementwise ops): one flat dim.
  if (reduce_mask == 0) {
    bool flat = true;
    for (int k = 0; k < nops && flat; ++k) {
      const Tensor* t = operands[k];
      flat = t->contiguous && t->numel == numel && t->ndim == ndim;
    }
    if (flat) {
      for (int k = 0; k < nops; ++k) {
        const Tensor* t = operands[k];
        it->data[k] = static_cast<char*>(t->data());
        it->dtypes[k] = t->dtype;
        it->strides[k][0] = static_cast<int64_t>(dtype_size(t->dtype));
      }
      it->ndim = 1;
      it->nreduce = 0;
      it->sizes[0] = numel;
      it->contiguous = 1;
      return;
    }
  }
  // Element strides of each operand broadcast to the iteration shape (stride 0 where the
  // operand has size 1 or lacks the dim; outputs get 0 on reduced dims).
  int64_t st[TSR_ITER_MAX_OPERANDS][TSR_MAX_DIMS];
  size_t isz[TSR_ITER_MAX_OPERANDS];
  for (int k = 0; k < nops; ++k) {
    const Tensor* t = operands[k];
    isz[k] = dtype_size(t->dtype);
    it->data[k] = static_cast<char*>(t->data());
    it->dtypes[k] = t->dtype;
    int off = ndim - t->ndim;
    for (int d = 0; d < ndim; ++d) {
      int td = d - off;
      st[k][d] = (td < 0 || t->sizes[td] == 1) ? 0 : t->strides[td] * static_cast<int64_t>(isz[k]);
    }
    if (k < noutputs)
      for (int d = 0; d < ndim; ++d)
        if (reduce_mask & (1u << d)) st[k][d] = 0;
  }
  // Order: reduced dims innermost (in reverse logical order), then the kept dims in reverse
  // logical order; so dims are fastest-first for row-major tensors.
  int order[TSR_MAX_DIMS], n = 0;
  for (int d = ndim - 1; d >= 0; --d)
    if (reduce_mask & (1u << d)) order[n++] = d;
  const int nred = n;
  for (int d = ndim - 1; d >= 0; --d)
    if (!(reduce_mask & (1u << d))) order[n++] = d;
  // Copy in that order, dropping size-1 dims, then coalesce neighbours of the same group.
  int out_nd = 0, out_nred = 0;
  for (int j = 0; j < n; ++j) {
    int d = order[j];
    bool reduced = j < nred;
    if (sizes[d] == 1) continue;
    bool group_start = reduced ? out_nd == 0 : out_nd == out_nred;
    if (out_nd > 0 && !group_start) {
      int p = out_nd - 1;
      bool can = true;
      for (int k = 0; k < nops && can; ++k) can = st[k][d] == it->strides[k][p] * it->sizes[p];
      if (can) {
        it->sizes[p] *= sizes[d];
        continue;
      }
    }
    it->sizes[out_nd] = sizes[d];
    for (int k = 0; k < nops; ++k) it->strides[k][out_nd] = st[k][d];
    ++out_nd;
    if (reduced) out_nred = out_nd;
  }
  it->ndim = out_nd;
  it->nreduce = out_nred;
  bool contig = out_nd <= 1 && out_nred == 0;
  if (contig && out_nd == 1)
    for (int k = 0; k < nops; ++k) contig = contig && it->strides[k][0] == static_cast<int64_t>(isz[k]);
  it->contiguous = contig ? 1 : 0;
}

static void fill_view(const Tensor* t, tsr_tensor_view_t* v) {
  v->data = t->data();
  v->dtype = t->dtype;
  v->ndim = t->ndim;
  v->device = t->device;
  v->sizes = t->sizes;
  v->strides = t->strides;
}

// Guard mode: the canaries around every tensor the kernel was given, outputs first (the usual
// culprits). A damaged one is a DATA_LOSS status naming the op, the kernel and the tensor.
static tsr_status_t check_guards(Runtime* rt, tsr_op_s* op, const KernelRec& k, tsr_device_t device,
                                 Tensor* const* inputs, int ninputs, Tensor* const* outputs, int noutputs) {
  auto check = [&](Tensor* t, const char* role, int i) -> tsr_status_t {
    if (!t || !t->storage || !t->storage->allocator) return nullptr;
    std::string damage = t->storage->allocator->guard_damage(t->storage->data);
    if (damage.empty()) return nullptr;
    std::string shape = "[";
    for (int d = 0; d < t->ndim; ++d) shape += (d ? ", " : "") + std::to_string(t->sizes[d]);
    shape += "]";
    return make_status(TSR_DATA_LOSS, op->schema.name + ": kernel " + k.kernel_name +
                                          (k.plugin.empty() ? "" : " (plugin " + k.plugin + ")") + " on " +
                                          device_str(rt, device) + " wrote outside " + role + " " + std::to_string(i) +
                                          " (" + dtype_name(t->dtype) + " " + shape + "): " + damage);
  };
  for (int i = 0; i < noutputs; ++i)
    if (tsr_status_t st = check(outputs[i], "output", i)) return st;
  for (int i = 0; i < ninputs; ++i)
    if (tsr_status_t st = check(inputs[i], "input", i)) return st;
  return nullptr;
}

tsr_status_t launch_op(Runtime* rt, tsr_op_s* op, tsr_device_t device, int32_t dtype, const tsr_value_t* args,
                       size_t nargs, Tensor* const* inputs, int ninputs, Tensor* const* outputs, int noutputs,
                       const tsr_iter_t* iter) {
  const KernelRec* k = find_kernel(op, device, dtype);
  if (auto* ob = rt->dispatch_observer.load(std::memory_order_acquire))  // tessera.dispatch_trace
    ob->fn(ob->user, op->schema.name.c_str(), device, dtype, k != nullptr);
  if (!k) return no_kernel_status(rt, op, device, dtype);
  // A kernel that takes a Tensor[] (cat) gets one view per list element, so inputs are not
  // bounded by kMaxArgs; the common case stays on the stack.
  tsr_tensor_view_t in_small[kMaxArgs], out_views[kMaxOutputs];
  std::vector<tsr_tensor_view_t> in_large;
  tsr_tensor_view_t* in_views = in_small;
  if (ninputs > kMaxArgs) {
    in_large.resize(static_cast<size_t>(ninputs));
    in_views = in_large.data();
  }
  for (int i = 0; i < ninputs; ++i) fill_view(inputs[i], &in_views[i]);
  for (int i = 0; i < noutputs; ++i) fill_view(outputs[i], &out_views[i]);
  tsr_kernel_call_t call;
  call.struct_size = sizeof(call);
  call.api = api_table();
  call.runtime = rt;
  call.op_name = op->schema.name.c_str();
  call.device = device;
  call.stream = current_stream(rt, device);
  call.dtype = dtype;
  call.reserved = 0;
  call.args = args;
  call.nargs = nargs;
  call.inputs = in_views;
  call.ninputs = static_cast<size_t>(ninputs);
  call.outputs = out_views;
  call.noutputs = static_cast<size_t>(noutputs);
  call.iter = iter;
  for (;;) {
    call.user_data = k->def.user_data;
    tsr_status_t st;
    try {
      st = k->def.fn(&call);
    } catch (const std::exception& e) {  // a kernel must not throw; contain it, keeping its message
      st = make_status(TSR_INTERNAL,
                       op->schema.name + ": kernel " + k->kernel_name + " threw a C++ exception: " + e.what());
    } catch (...) {
      st = make_status(TSR_INTERNAL, op->schema.name + ": kernel " + k->kernel_name + " threw a C++ exception");
    }
    if (rt->guard_mode) {  // TESSERA_ALLOC_CONF guard_bytes: did the kernel write outside its tensors?
      if (tsr_status_t g = check_guards(rt, op, *k, device, inputs, ninputs, outputs, noutputs)) {
        free_status(st);
        st = g;
      }
    }
    // A kernel that declines (UNIMPLEMENTED, nothing written: kernel.h) hands the call to the next
    // kernel for the same op, device and dtype in priority order, e.g. an override for one GPU
    // generation back to the generic kernel; the last one's status stands.
    if (st && st->code == TSR_UNIMPLEMENTED) {
      if (const KernelRec* next = find_kernel(op, device, dtype, k)) {
        free_status(st);
        k = next;
        continue;
      }
    }
    return st;
  }
}

tsr_status_t launch(CallCtx& ctx, tsr_device_t device, int32_t dtype, Tensor* const* inputs, int ninputs,
                    Tensor* const* outputs, int noutputs, const tsr_iter_t* iter) {
  return launch_op(ctx.rt, ctx.op, device, dtype, ctx.args, ctx.nargs, inputs, ninputs, outputs, noutputs, iter);
}

namespace {
// One CPU element of the value's own kind (a float as f64, an int as i64, a bool: every wrapped
// number, `x * 2.0`) is stored directly: CPU memory is the host's and CPU work runs on the
// calling thread, so the store is the fill, and dispatching _fill cost more than the arithmetic
// the number then takes part in. Other cases (a conversion, another device) take the kernel.
bool store_host_element(Tensor* t, const tsr_value_t& v) {
  if (t->device.type != TSR_DEVICE_TYPE_CPU || t->numel != 1) return false;
  void* p = t->data();
  if (t->dtype == TSR_F64 && v.tag == TSR_VALUE_DOUBLE) {
    std::memcpy(p, &v.u.d, sizeof(double));
  } else if (t->dtype == TSR_I64 && v.tag == TSR_VALUE_INT) {
    std::memcpy(p, &v.u.i, sizeof(int64_t));
  } else if (t->dtype == TSR_BOOL && v.tag == TSR_VALUE_BOOL) {
    const uint8_t b = v.u.b ? 1 : 0;
    std::memcpy(p, &b, 1);
  } else {
    return false;
  }
  return true;
}
}  // namespace

tsr_status_t fill_tensor(Runtime* rt, Tensor* t, const tsr_value_t& value, const char* op) {
  if (t->numel == 0) return nullptr;
  t->bump_version();
  if (store_host_element(t, value)) return nullptr;
  tsr_value_t args[2];
  args[0].tag = TSR_VALUE_TENSOR;
  args[0].u.tensor = t;
  args[1] = value;
  tsr_iter_t it;
  Tensor* ops[1] = {t};
  build_iter(ops, 1, 1, t->ndim, t->sizes, 0, &it);
  tsr_status_t st = launch_op(rt, rt->op_fill, t->device, t->dtype, args, 2, nullptr, 0, ops, 1, &it);
  return op ? prefix_status(st, op) : st;
}

tsr_status_t plugin_op_impl(CallCtx& ctx) {
  const Schema& s = ctx.op->schema;
  Tensor* tensors[kMaxArgs];
  int nt = 0;
  for (size_t i = 0; i < ctx.nargs; ++i)
    if (Tensor* t = ctx.tensor(i)) tensors[nt++] = t;
  tsr_device_t device;
  TSR_RETURN_IF_ERROR(common_device(ctx, tensors, nt, &device));
  tsr_tensor_spec_t specs[kMaxOutputs];
  std::memset(specs, 0, sizeof(specs));
  for (auto& sp : specs) sp.device = device;
  int32_t dispatch = nt > 0 ? tensors[0]->dtype : TSR_F32;
  tsr_meta_call_t meta;
  meta.struct_size = sizeof(meta);
  meta.api = api_table();
  meta.runtime = ctx.rt;
  meta.op_name = s.name.c_str();
  meta.args = ctx.args;
  meta.nargs = ctx.nargs;
  meta.outputs = specs;
  meta.noutputs = static_cast<size_t>(s.num_outputs);
  meta.dispatch_dtype = &dispatch;
  meta.user_data = ctx.op->extra.user_data;
  tsr_status_t st;
  try {
    st = ctx.op->extra.meta(&meta);
  } catch (const std::exception& e) {
    st = ctx.error(TSR_INTERNAL, std::string("meta function threw a C++ exception: ") + e.what());
  } catch (...) {
    st = ctx.error(TSR_INTERNAL, "meta function threw a C++ exception");
  }
  if (st) return st;
  Tensor* results[kMaxOutputs] = {};
  for (int i = 0; i < s.num_outputs; ++i) {
    const tsr_tensor_spec_t& sp = specs[i];
    if (!dtype_valid(sp.dtype) || sp.ndim < 0 || sp.ndim > TSR_MAX_DIMS) {
      release_all(results, kMaxOutputs);
      return ctx.error(TSR_INTERNAL, "meta function produced an invalid output spec");
    }
    if ((st = check_shape(ctx.name(), sp.ndim, sp.sizes, nullptr)) ||
        (st = make_output(ctx, i, sp.ndim, sp.sizes, static_cast<tsr_dtype_t>(sp.dtype), sp.device, &results[i]))) {
      release_all(results, kMaxOutputs);
      return st;
    }
  }
  bool all_empty = true;
  for (int i = 0; i < s.num_outputs; ++i) all_empty = all_empty && results[i]->numel == 0;
  if (all_empty && s.num_outputs > 0) {  // kernels are never called with empty outputs
    publish_outputs(ctx, results, static_cast<size_t>(s.num_outputs));
    return nullptr;
  }
  st = launch(ctx, device, dispatch, tensors, nt, results, s.num_outputs, nullptr);
  if (st) {
    release_all(results, kMaxOutputs);
    return st;
  }
  publish_outputs(ctx, results, static_cast<size_t>(s.num_outputs));
  return nullptr;
}

}  // namespace tsr::core
