// Registration (staged per plugin, committed atomically) and kernel lookup.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "runtime/runtime.hpp"

struct tsr_registrar_s {
  tsr_runtime_s* runtime = nullptr;
  std::string plugin;
  struct StagedType {
    int32_t id;
    std::string name;
    tsr_device_type_def_t def;
  };
  struct StagedAllocator {
    std::string name;
    tsr_raw_allocator_t def;
  };
  struct StagedOp {
    std::string schema;
    tsr::core::OpExtra extra;
    std::string name;
  };
  std::vector<StagedType> types;
  std::vector<StagedAllocator> allocators;
  std::vector<StagedOp> ops;
  std::vector<tsr::core::KernelRec> kernels;
  std::vector<std::pair<std::string, const void*>> extensions;
};

namespace tsr::core {

using Registrar = tsr_registrar_s;

tsr_status_t reg_device_type(Registrar* reg, const tsr_device_type_def_t* def, int32_t* out);
tsr_status_t reg_allocator(Registrar* reg, const tsr_raw_allocator_t* def);
tsr_status_t reg_op(Registrar* reg, const tsr_op_def_t* def);
tsr_status_t reg_kernel(Registrar* reg, const tsr_kernel_def_t* def);
tsr_status_t reg_extension(Registrar* reg, const char* name, const void* table);
// Applies everything staged (after the plugin's init succeeded).
tsr_status_t commit(Registrar* reg);
// Creates every device's allocator per the runtime's allocator configuration.
tsr_status_t finalize_allocators(Runtime* rt);

// Best kernel for (device, dtype); nullptr when none. With `after` (a kernel this returned for
// the same op, device and dtype), the next best after it: the dispatcher's fallback when a kernel
// declines (UNIMPLEMENTED). Tables are immutable once published, so `after` stays valid.
inline const KernelRec* find_kernel(const tsr_op_s* op, tsr_device_t device, int32_t dtype,
                                    const KernelRec* after = nullptr) {
  const KernelTable* table = op->kernels.load(std::memory_order_acquire);
  if (!table || device.type < 0 || device.type >= kMaxDeviceTypes) return nullptr;
  const uint32_t bit = 1u << static_cast<uint32_t>(dtype & 31);
  const std::vector<KernelRec>& ks = table->by_type[device.type];
  size_t i = 0;
  if (after) {
    while (i < ks.size() && &ks[i] != after) ++i;
    if (i == ks.size()) return nullptr;  // `after` is from an older table: no fallback
    ++i;
  }
  for (; i < ks.size(); ++i) {
    const KernelRec& k = ks[i];
    if (k.def.dtype_mask != 0 && !(k.def.dtype_mask & bit)) continue;
    if (k.def.predicate && !k.def.predicate(device, k.def.user_data)) continue;
    return &k;
  }
  return nullptr;
}

// "add: no kernel for cpu:0 and dtype int8 (registered: cpu [float32, float64] ...)".
tsr_status_t no_kernel_status(Runtime* rt, const tsr_op_s* op, tsr_device_t device, int32_t dtype);
std::string dtype_mask_str(uint32_t mask);

}  // namespace tsr::core
