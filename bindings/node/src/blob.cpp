// TypedArray <-> tensor without copies where the layout allows (see blob.hpp for the rules).
#include "blob.hpp"

#include "tensor.hpp"

namespace tsrnode {

// ---- ReleaseQueue ------------------------------------------------------------------------------

std::shared_ptr<ReleaseQueue> ReleaseQueue::create(Napi::Env env) {
  auto q = std::make_shared<ReleaseQueue>();
  q->env_ = env;
  napi_value name = Napi::String::New(env, "tessera.releaseQueue");
  NAPI_THROW_IF_FAILED(env,
                       napi_create_threadsafe_function(env, nullptr, nullptr, name, 0, 1, nullptr, nullptr, q.get(),
                                                       &ReleaseQueue::call_js, &q->tsfn_),
                       nullptr);
  // Never keeps the event loop alive: references still queued at exit die with the env.
  napi_unref_threadsafe_function(env, q->tsfn_);
  q->self_ = q;
  NAPI_THROW_IF_FAILED(env, napi_add_env_cleanup_hook(env, &ReleaseQueue::on_cleanup, q.get()), nullptr);
  return q;
}

void ReleaseQueue::push(napi_ref ref) {
  std::lock_guard<std::mutex> lock(mu_);
  if (closed_) return;  // the environment is gone, and its references with it
  pending_.push_back(ref);
  if (!scheduled_) {
    // One wake-up per batch: the drain takes everything queued until it runs.
    scheduled_ = napi_call_threadsafe_function(tsfn_, nullptr, napi_tsfn_nonblocking) == napi_ok;
  }
}

void ReleaseQueue::drain() {
  std::vector<napi_ref> refs;
  {
    std::lock_guard<std::mutex> lock(mu_);
    refs.swap(pending_);
    scheduled_ = false;
  }
  for (napi_ref r : refs) napi_delete_reference(env_, r);
}

void ReleaseQueue::call_js(napi_env env, napi_value, void* context, void*) {
  if (env == nullptr) return;  // the function is being torn down
  static_cast<ReleaseQueue*>(context)->drain();
}

void ReleaseQueue::on_cleanup(void* arg) {
  auto* q = static_cast<ReleaseQueue*>(arg);
  q->drain();
  {
    std::lock_guard<std::mutex> lock(q->mu_);
    q->closed_ = true;
  }
  napi_release_threadsafe_function(q->tsfn_, napi_tsfn_abort);
  q->self_.reset();  // blob contexts still alive hold their own shared_ptr
}

// ---- TypedArray -> tensor ------------------------------------------------------------------------

namespace {

struct BlobCtx {
  std::shared_ptr<ReleaseQueue> queue;
  napi_ref buffer;
};

// Called by the core on any thread when the last view of the memory is released.
void blob_deleter(void* ctx, void*) {
  auto* c = static_cast<BlobCtx*>(ctx);
  c->queue->push(c->buffer);
  delete c;
}

// The dtype whose elements a TypedArray holds, UNDEFINED for those Tessera lacks (Uint16Array,
// Uint32Array, BigUint64Array: index.js converts them first). A Uint16Array may carry the raw
// bits of float16 or bfloat16 when that dtype is asked for.
tsr_dtype_t natural_dtype(napi_typedarray_type type, tsr_dtype_t wanted) {
  switch (type) {
    case napi_int8_array:
      return TSR_I8;
    case napi_uint8_array:
    case napi_uint8_clamped_array:
      return wanted == TSR_BOOL ? TSR_BOOL : TSR_U8;
    case napi_int16_array:
      return TSR_I16;
    case napi_int32_array:
      return TSR_I32;
    case napi_float32_array:
      return TSR_F32;
    case napi_float64_array:
      return TSR_F64;
    case napi_bigint64_array:
      return TSR_I64;
    case napi_uint16_array:
      return (wanted == TSR_F16 || wanted == TSR_BF16) ? wanted : TSR_DTYPE_UNDEFINED;
    default:
      return TSR_DTYPE_UNDEFINED;
  }
}

bool is_cpu0(tsr_device_t d) { return d.type == TSR_DEVICE_TYPE_CPU && d.index == 0; }

}  // namespace

Napi::Value from_typed_array(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  return guard(env, [&]() -> Napi::Value {
    if (info.Length() < 1 || !info[0].IsTypedArray()) throw_type_error(env, "tensor: expected a TypedArray");
    napi_typedarray_type type;
    size_t length = 0;
    void* data = nullptr;
    napi_value buffer;
    size_t byte_offset = 0;
    NAPI_THROW_IF_FAILED(env, napi_get_typedarray_info(env, info[0], &type, &length, &data, &buffer, &byte_offset),
                         Napi::Value());
    tsr_dtype_t wanted = TSR_DTYPE_UNDEFINED;
    if (info.Length() > 2 && !info[2].IsUndefined() && !info[2].IsNull()) wanted = parse_dtype(env, info[2], "tensor");
    tsr_dtype_t natural = natural_dtype(type, wanted);
    if (natural == TSR_DTYPE_UNDEFINED)
      throw_type_error(env,
                       "tensor: this TypedArray's element type has no Tessera dtype (use Int8/Uint8/Int16/Int32/"
                       "BigInt64/Float32/Float64Array, or a Uint16Array of float16/bfloat16 bits)");
    tsr_dtype_t target = wanted == TSR_DTYPE_UNDEFINED ? natural : wanted;
    if (natural == TSR_BOOL && data)
      for (size_t i = 0; i < length; ++i)
        if (static_cast<const uint8_t*>(data)[i] > 1)
          throw make_error(env, TSR_INVALID_ARGUMENT,
                           "tensor: a bool tensor's bytes must be 0 or 1, element " + std::to_string(i) + " is " +
                               std::to_string(static_cast<const uint8_t*>(data)[i]));
    tsr_device_t device{TSR_DEVICE_TYPE_CPU, 0};
    if (info.Length() > 3 && !info[3].IsUndefined() && !info[3].IsNull()) device = parse_device(env, info[3], "tensor");
    const bool copy = info.Length() > 4 && info[4].ToBoolean().Value();

    std::vector<int64_t> sizes;
    if (info.Length() > 1 && info[1].IsArray()) {
      Napi::Array shape = info[1].As<Napi::Array>();
      for (uint32_t i = 0; i < shape.Length(); ++i) {
        Napi::Value s = shape.Get(i);
        if (!s.IsNumber() || s.As<Napi::Number>().DoubleValue() < 0 ||
            s.As<Napi::Number>().DoubleValue() != static_cast<double>(s.As<Napi::Number>().Int64Value()))
          throw_type_error(env, "tensor: a shape is an array of non-negative integers");
        sizes.push_back(s.As<Napi::Number>().Int64Value());
      }
    } else {
      sizes.push_back(static_cast<int64_t>(length));
    }
    if (sizes.size() > TSR_MAX_DIMS)
      throw make_error(env, TSR_INVALID_ARGUMENT, "tensor: at most " + std::to_string(TSR_MAX_DIMS) + " dimensions");
    int64_t numel = 1;
    for (int64_t s : sizes) numel *= s;
    if (numel != static_cast<int64_t>(length))
      throw make_error(
          env, TSR_INVALID_ARGUMENT,
          "tensor: a shape of " + std::to_string(numel) + " elements for a TypedArray of " + std::to_string(length));
    const tsr_api_t* a = tsr::api();
    const int32_t ndim = static_cast<int32_t>(sizes.size());
    const bool same = target == natural && is_cpu0(device);
    tsr_tensor_t* out = nullptr;
    if (length == 0 || data == nullptr) {  // nothing to share (a detached buffer reads as empty)
      return TensorWrap::wrap(env, tsr::empty(sizes, target, tsr::Device(device)));
    }
    if (copy && same) {  // a copy asked for: data is read during the call
      tsr::check(a->tensor_from_host(rt(), data, ndim, sizes.data(), natural, device, &out));
      return TensorWrap::wrap(env, tsr::Tensor::adopt(out));
    }
    // A view of the TypedArray's memory, returned as is, or the source of the one conversion
    // (dtype or device) asked for; the ArrayBuffer stays referenced while the view lives.
    napi_ref ref = nullptr;
    NAPI_THROW_IF_FAILED(env, napi_create_reference(env, buffer, 1, &ref), Napi::Value());
    auto* ctx = new BlobCtx{addon_data(env).releases, ref};
    tsr_status_t st = a->tensor_from_blob(rt(), data, ndim, sizes.data(), nullptr, natural,
                                          tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}, blob_deleter, ctx, &out);
    if (st) {  // the deleter is not called on error: the reference is still ours
      napi_delete_reference(env, ref);
      delete ctx;
      tsr::check(st);
    }
    tsr::Tensor view = tsr::Tensor::adopt(out);
    if (same) return TensorWrap::wrap(env, std::move(view));
    return TensorWrap::wrap(env, view.to(tsr::Device(device), target));
  });
}

// ---- tensor -> TypedArray ------------------------------------------------------------------------

namespace {

napi_typedarray_type array_type(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_BOOL:
    case TSR_U8:
      return napi_uint8_array;
    case TSR_I8:
      return napi_int8_array;
    case TSR_I16:
      return napi_int16_array;
    case TSR_I32:
      return napi_int32_array;
    case TSR_I64:
      return napi_bigint64_array;
    case TSR_F64:
      return napi_float64_array;
    default:
      return napi_float32_array;  // F32, and F16/BF16/float8 after conversion
  }
}

// May run during garbage collection (NAPI_EXPERIMENTAL's basic finalizers): no N-API call.
void release_tensor(finalize_env_t, void*, void* hint) { tsr::api()->tensor_release(static_cast<tsr_tensor_t*>(hint)); }

}  // namespace

Napi::Value to_typed_array(Napi::Env env, const tsr::Tensor& t, bool force_copy) {
  tsr_dtype_t dt = t.dtype();
  tsr::Tensor src = t;
  const tsr::Device cpu0 = tsr::Device::cpu(0);
  if (dt == TSR_F4_E2M1FN_X2)
    throw tsr::Error(TSR_UNIMPLEMENTED, "no TypedArray holds float4_e2m1fn_x2 (two values per byte): dequantize first");
  if (dt == TSR_F16 || dt == TSR_BF16 || tsr::is_low_precision_float(dt)) {
    src = t.to(cpu0, TSR_F32);  // no 16-bit or 8-bit float TypedArray in Node 20: a converted copy
  } else if (force_copy) {
    src = t.device().d.type == TSR_DEVICE_TYPE_CPU ? t.clone() : t.to(cpu0);
  } else if (t.device().d.type != TSR_DEVICE_TYPE_CPU) {
    src = t.to(cpu0);  // a copy on the host
  }
  if (!src.is_contiguous()) src = src.contiguous();
  const size_t n = static_cast<size_t>(src.numel());
  const size_t nbytes = n * tsr::itemsize(src.dtype());
  Napi::ArrayBuffer buffer;
  if (nbytes == 0) {
    buffer = Napi::ArrayBuffer::New(env, 0);
  } else {
    // Every CPU device's memory is host memory (virtual cpu:N included): expose it directly.
    tsr_tensor_t* h = src.release();
    napi_value ab;
    napi_status s = napi_create_external_arraybuffer(env, tsr::api()->tensor_data(h), nbytes, release_tensor, h, &ab);
    if (s != napi_ok) {
      tsr::api()->tensor_release(h);
      NAPI_THROW_IF_FAILED(env, s, Napi::Value());
    }
    buffer = Napi::ArrayBuffer(env, ab);
  }
  napi_value arr;
  NAPI_THROW_IF_FAILED(env, napi_create_typedarray(env, array_type(dt), n, buffer, 0, &arr), Napi::Value());
  return Napi::Value(env, arr);
}

}  // namespace tsrnode
