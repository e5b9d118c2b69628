// DLPack exchange (ABI 1.4; contract in abi/tessera/tensor.h and abi/tessera/dlpack.h).
// Export: one allocation holds the managed struct, its shape and strides and a reference to the
// tensor; the consumer's call of the deleter drops that reference. Import: tensor_from_blob
// over the producer's memory, with a deleter that calls the producer's once the last view dies.
#include "io/dlpack.hpp"

#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "runtime/status.hpp"
#include "runtime/streams.hpp"
#include "tensor/tensor.hpp"

namespace tsr::core {
namespace {

tsr_status_t fail(const char* op, tsr_code_t code, const std::string& what) {
  return make_status(code, std::string(op) + ": " + what);
}

bool dl_dtype(tsr_dtype_t d, DLDataType* out) {
  switch (d) {
    case TSR_BOOL:
      *out = DLDataType{kDLBool, 8, 1};
      return true;
    case TSR_U8:
      *out = DLDataType{kDLUInt, 8, 1};
      return true;
    case TSR_I8:
      *out = DLDataType{kDLInt, 8, 1};
      return true;
    case TSR_I16:
      *out = DLDataType{kDLInt, 16, 1};
      return true;
    case TSR_I32:
      *out = DLDataType{kDLInt, 32, 1};
      return true;
    case TSR_I64:
      *out = DLDataType{kDLInt, 64, 1};
      return true;
    case TSR_F16:
      *out = DLDataType{kDLFloat, 16, 1};
      return true;
    case TSR_BF16:
      *out = DLDataType{kDLBfloat, 16, 1};
      return true;
    case TSR_F32:
      *out = DLDataType{kDLFloat, 32, 1};
      return true;
    case TSR_F64:
      *out = DLDataType{kDLFloat, 64, 1};
      return true;
    case TSR_F8_E4M3FN:
      *out = DLDataType{kDLFloat8_e4m3fn, 8, 1};
      return true;
    case TSR_F8_E5M2:
      *out = DLDataType{kDLFloat8_e5m2, 8, 1};
      return true;
    case TSR_F8_E8M0FNU:
      *out = DLDataType{kDLFloat8_e8m0fnu, 8, 1};
      return true;
    default:  // float4_e2m1fn_x2: DLPack's fp4 counts single values (and pads sub-byte types)
      return false;
  }
}

tsr_dtype_t tsr_dtype(DLDataType t) {
  if (t.lanes != 1) return TSR_DTYPE_UNDEFINED;
  switch (t.code) {
    case kDLBool:
      return t.bits == 8 ? TSR_BOOL : TSR_DTYPE_UNDEFINED;
    case kDLUInt:
      return t.bits == 8 ? TSR_U8 : TSR_DTYPE_UNDEFINED;
    case kDLInt:
      return t.bits == 8    ? TSR_I8
             : t.bits == 16 ? TSR_I16
             : t.bits == 32 ? TSR_I32
             : t.bits == 64 ? TSR_I64
                            : TSR_DTYPE_UNDEFINED;
    case kDLFloat:
      return t.bits == 16 ? TSR_F16 : t.bits == 32 ? TSR_F32 : t.bits == 64 ? TSR_F64 : TSR_DTYPE_UNDEFINED;
    case kDLBfloat:
      return t.bits == 16 ? TSR_BF16 : TSR_DTYPE_UNDEFINED;
    case kDLFloat8_e4m3fn:
      return t.bits == 8 ? TSR_F8_E4M3FN : TSR_DTYPE_UNDEFINED;
    case kDLFloat8_e5m2:
      return t.bits == 8 ? TSR_F8_E5M2 : TSR_DTYPE_UNDEFINED;
    case kDLFloat8_e8m0fnu:
      return t.bits == 8 ? TSR_F8_E8M0FNU : TSR_DTYPE_UNDEFINED;
    default:
      return TSR_DTYPE_UNDEFINED;
  }
}

std::string dl_dtype_text(DLDataType t) {
  return "(code " + std::to_string(t.code) + ", bits " + std::to_string(t.bits) + ", lanes " + std::to_string(t.lanes) +
         ")";
}

// ---- export ------------------------------------------------------------------------------------

template <class M>
struct Exported {
  M managed;
  int64_t shape[TSR_MAX_DIMS];
  int64_t strides[TSR_MAX_DIMS];
  tsr_tensor_t* tensor;

  static void deleter(M* self) {
    if (self == nullptr) return;
    auto* e = static_cast<Exported*>(self->manager_ctx);
    e->tensor->release();
    delete e;
  }
};

// Fills `dl` (shape and strides pointing into e) from t; the caller has checked t.
template <class M>
tsr_status_t describe(const char* op, tsr_tensor_t* t, Exported<M>* e, DLTensor* dl) {
  const Runtime* rt = t->runtime;
  const std::string& type = rt->device_types[t->device.type].name;
  if (type == "cpu") {
    dl->device = DLDevice{kDLCPU, 0};
  } else if (type == "cuda") {
    dl->device = DLDevice{kDLCUDA, t->device.index};
  } else {
    return fail(op, TSR_UNIMPLEMENTED,
                "DLPack has no device for a tensor on " + type + ":" + std::to_string(t->device.index) +
                    " (cpu and cuda only)");
  }
  if (!dl_dtype(t->dtype, &dl->dtype))
    return fail(op, TSR_UNIMPLEMENTED, std::string("DLPack has no dtype for ") + dtype_name(t->dtype));
  for (int d = 0; d < t->ndim; ++d) {
    e->shape[d] = t->sizes[d];
    e->strides[d] = t->strides[d];
  }
  dl->ndim = t->ndim;
  dl->shape = e->shape;
  dl->strides = e->strides;
  dl->byte_offset = 0;
  dl->data = t->storage == nullptr || t->storage->data == nullptr ? nullptr : t->data();
  return nullptr;
}

template <class M>
tsr_status_t export_tensor(const char* op, tsr_tensor_t* t, M** out) {
  if (t == nullptr || out == nullptr) return fail(op, TSR_INVALID_ARGUMENT, "tensor and out are required");
  *out = nullptr;
  auto* e = new (std::nothrow) Exported<M>();
  if (e == nullptr) return fail(op, TSR_RESOURCE_EXHAUSTED, "out of host memory");
  std::memset(&e->managed, 0, sizeof(e->managed));
  if (tsr_status_t st = describe(op, t, e, &e->managed.dl_tensor)) {
    delete e;
    return st;
  }
  if constexpr (std::is_same<M, DLManagedTensorVersioned>::value) {
    e->managed.version = DLPackVersion{DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION};
    e->managed.flags = 0;
  }
  t->retain();
  e->tensor = t;
  e->managed.manager_ctx = e;
  e->managed.deleter = &Exported<M>::deleter;
  *out = &e->managed;
  return nullptr;
}

// ---- import ------------------------------------------------------------------------------------

template <class M>
void call_producer_deleter(void* ctx, void*) {
  M* m = static_cast<M*>(ctx);
  if (m->deleter) m->deleter(m);
}

template <class M>
tsr_status_t import_tensor(const char* op, tsr_runtime_t* rt, M* src, tsr_tensor_t** out) {
  if (rt == nullptr || src == nullptr || out == nullptr)
    return fail(op, TSR_INVALID_ARGUMENT, "runtime, src and out are required");
  *out = nullptr;
  const DLTensor& dl = src->dl_tensor;
  if constexpr (std::is_same<M, DLManagedTensorVersioned>::value) {
    if (src->version.major != DLPACK_MAJOR_VERSION)
      return fail(op, TSR_INVALID_ARGUMENT,
                  "DLPack major version " + std::to_string(src->version.major) + " (this core reads " +
                      std::to_string(DLPACK_MAJOR_VERSION) + ".x)");
    if (src->flags & DLPACK_FLAG_BITMASK_READ_ONLY)
      return fail(op, TSR_INVALID_ARGUMENT,
                  "the DLPack tensor is read-only and Tessera tensors are writable; copy it first");
  }
  if (dl.ndim < 0 || dl.ndim > TSR_MAX_DIMS)
    return fail(op, TSR_INVALID_ARGUMENT,
                "ndim " + std::to_string(dl.ndim) + " is outside [0, " + std::to_string(TSR_MAX_DIMS) + "]");
  if (dl.ndim > 0 && dl.shape == nullptr) return fail(op, TSR_INVALID_ARGUMENT, "shape is NULL");
  const tsr_dtype_t dtype = tsr_dtype(dl.dtype);
  if (dtype == TSR_DTYPE_UNDEFINED)
    return fail(op, TSR_INVALID_ARGUMENT, "unsupported DLPack dtype " + dl_dtype_text(dl.dtype));
  tsr_device_t device{TSR_DEVICE_TYPE_CPU, 0};
  switch (dl.device.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      break;
    case kDLCUDA: {
      int32_t type = find_device_type(rt, "cuda");
      if (type < 0)
        return fail(op, TSR_NOT_FOUND,
                    "the DLPack tensor is on CUDA device " + std::to_string(dl.device.device_id) +
                        " and no 'cuda' device type is registered (is the cuda plugin loaded?)");
      device = tsr_device_t{type, dl.device.device_id};
      break;
    }
    default:
      return fail(op, TSR_INVALID_ARGUMENT,
                  "unsupported DLPack device type " + std::to_string(static_cast<int>(dl.device.device_type)));
  }
  void* data = dl.data == nullptr ? nullptr : static_cast<char*>(dl.data) + dl.byte_offset;
  tsr_status_t st = stream_api::tensor_from_blob(rt, data, dl.ndim, dl.shape, dl.strides, dtype, device,
                                                 &call_producer_deleter<M>, src, out);
  if (st) return prefix_status(st, op);
  return nullptr;
}

}  // namespace

tsr_status_t tensor_to_dlpack(tsr_tensor_t* t, DLManagedTensorVersioned** out) {
  return export_tensor("tensor_to_dlpack", t, out);
}
tsr_status_t tensor_to_dlpack_legacy(tsr_tensor_t* t, DLManagedTensor** out) {
  return export_tensor("tensor_to_dlpack_legacy", t, out);
}
tsr_status_t tensor_from_dlpack(tsr_runtime_t* rt, DLManagedTensorVersioned* src, tsr_tensor_t** out) {
  return import_tensor("tensor_from_dlpack", rt, src, out);
}
tsr_status_t tensor_from_dlpack_legacy(tsr_runtime_t* rt, DLManagedTensor* src, tsr_tensor_t** out) {
  return import_tensor("tensor_from_dlpack_legacy", rt, src, out);
}

}  // namespace tsr::core
