// Tessera SDK: staging host tensors in page-locked memory through the "tessera.pinned_host"
// extension (abi/tessera/ext_pinned_host.h), as DataLoader does with pin_memory = true.
//
//   const tsr_pinned_host_t* table = tsr::data::find_pinned_host(rt);  // nullptr on CPU-only
//   tsr::Tensor p = tsr::data::pin(t, table);  // t's values in pinned memory, or t itself
//
// Pinning only pays off when a device backend copies from it (asynchronous host-to-device
// transfers), so without the extension pin() is the identity and costs nothing.
//
// Ownership: pin() returns a new tensor that owns its pinned storage (the backend frees it
// with the last reference), or another reference to the argument.
// Errors: tsr::Error from the backend, except RESOURCE_EXHAUSTED (pinned memory is a scarce,
// locked resource), on which pin() falls back to the ordinary tensor.
// Thread-safety: any thread; the table's functions are thread-safe by contract.
#pragma once

#include <vector>

#include "tessera/ext_pinned_host.h"
#include "tessera/tessera.hpp"

namespace tsr::data {

// The runtime's pinned-host table, or nullptr when no loaded backend offers one (or the one
// offered predates tensor_empty).
inline const tsr_pinned_host_t* find_pinned_host(tsr_runtime_t* rt) {
  auto* t = static_cast<const tsr_pinned_host_t*>(api()->get_extension(rt, TSR_PINNED_HOST_EXTENSION));
  if (!t || !TSR_PINNED_HOST_HAS(t, tensor_empty) || !t->tensor_empty) return nullptr;
  return t;
}

// t's values in a pinned CPU tensor of the same shape and dtype; t itself when table is null,
// t is not on the CPU, or pinned memory ran out.
inline Tensor pin(const Tensor& t, const tsr_pinned_host_t* table) {
  if (!table || !t.defined() || t.device().d.type != TSR_DEVICE_TYPE_CPU) return t;
  std::vector<int64_t> sizes = t.sizes();
  tsr_tensor_t* raw = nullptr;
  tsr_status_t st = table->tensor_empty(t.runtime(), static_cast<int32_t>(sizes.size()), sizes.data(), t.dtype(), &raw);
  if (st && api()->status_code(st) == TSR_RESOURCE_EXHAUSTED) {
    api()->status_free(st);
    return t;
  }
  check(st);
  if (!raw) throw Error(TSR_INTERNAL, "pin: the tessera.pinned_host table returned no tensor for " + describe(t));
  Tensor pinned = Tensor::adopt(raw);
  pinned.copy_(t);
  return pinned;
}

}  // namespace tsr::data
