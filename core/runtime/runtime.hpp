// The runtime object: device types, allocators, the op registry with its kernel tables, and
// the plugins that filled them.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "memory/allocator.hpp"
#include "ops/schema.hpp"
#include "tensor/tensor.hpp"
#include "tessera/api.h"

struct tsr_runtime_s;

namespace tsr::core {

constexpr int kMaxDeviceTypes = 16;
constexpr int kMaxDevicesPerType = 64;

struct DeviceType {
  std::string name;
  tsr_device_type_def_t def{};
  std::string plugin;
  int32_t count = 0;
  bool has_streams = false;  // the backend implements every stream/event callback (1.2)
  // Per device index; created at commit time from the selected raw allocator.
  std::unique_ptr<DeviceAllocator> allocators[kMaxDevicesPerType];
  std::string allocator_name;                       // e.g. "caching(cpu)", same for every device of the type
  std::vector<tsr_raw_allocator_t> raw_allocators;  // registered for this type (names copied)
  std::vector<std::unique_ptr<std::string>> raw_names;
};

struct KernelRec {
  tsr_kernel_def_t def{};
  std::string op_name, kernel_name, plugin;
  uint64_t seq = 0;  // registration order, for priority ties
};

// Immutable once published: the dispatch path reads it without locks.
struct KernelTable {
  std::vector<KernelRec> by_type[kMaxDeviceTypes];  // best first
};

struct CallCtx;  // op implementation context (ops/op_impl.hpp)
class GradCtx;   // backward formula context (autograd.hpp)
using OpImplFn = tsr_status_t (*)(CallCtx& ctx);

struct OpExtra {  // plugin-defined op
  tsr_meta_fn_t meta = nullptr;
  void* user_data = nullptr;
  std::string plugin;
  tsr_backward_fn_t backward = nullptr;  // the plugin's gradient formula (ABI 1.4), or none
};

}  // namespace tsr::core

struct tsr_op_s {
  tsr_runtime_s* runtime = nullptr;
  std::string schema_text;
  tsr::core::Schema schema;
  tsr::core::OpImplFn impl = nullptr;
  tsr::core::OpExtra extra;
  std::atomic<const tsr::core::KernelTable*> kernels{nullptr};
  // Autograd (ops/op_table.hpp OpSpec): primitive ops record a node running `backward`.
  void (*backward)(tsr::core::GradCtx&) = nullptr;
  uint32_t save = 3;
  bool composite = false;
  bool mutates = false;  // the schema has a Tensor(a!) argument
  // The op's writes may overlap (_fill: every write stores the same value), so the
  // dispatcher's overlap check (ops/op_impl.hpp check_overlap) is skipped.
  bool overlapping_writes_ok = false;
  std::string backward_name;  // "MulBackward": the name of its graph nodes
  // Where the op was declared: the core's record (file relative to the source root, line), or
  // nullptr and 0 for an op a plugin defined (the registering plugin is in `extra`).
  const char* source_file = nullptr;
  int source_line = 0;
  const char* formula_name = nullptr;  // the backward formula as the record names it
};

namespace tsr::core {

struct PluginRecord {
  std::string name, version, path, reason;
  bool loaded = false;
  int32_t score = 0;
};

struct LoadedPlugin {
  std::string name;
  const tsr_plugin_t* header = nullptr;
  void* state = nullptr;
  void (*shutdown)(const tsr_api_t*, void*) = nullptr;
};

}  // namespace tsr::core

struct tsr_runtime_s {
  std::mutex registry_mutex;  // registration only; never taken on the call path
  tsr::core::DeviceType device_types[tsr::core::kMaxDeviceTypes];
  std::atomic<int32_t> num_device_types{0};
  std::vector<std::unique_ptr<tsr_op_s>> ops;
  std::unordered_map<std::string, tsr_op_s*> op_by_name;
  std::vector<std::unique_ptr<const tsr::core::KernelTable>> retired_tables;
  uint64_t kernel_seq = 0;
  std::vector<tsr::core::PluginRecord> plugin_records;
  std::vector<std::string> plugin_dirs;  // searched, in order
  std::vector<tsr::core::LoadedPlugin> loaded_plugins;
  std::map<std::string, const void*> extensions;
  std::string alloc_conf;
  // TESSERA_ALLOC_CONF guard_bytes: some device's allocator keeps canaries, which every kernel
  // launch then checks (ops/op_impl.cpp). Set before the first op runs.
  bool guard_mode = false;
  // The tessera.dispatch_trace observer (ext_dispatch_trace.h), or null: launch_op reports
  // every kernel lookup to it. Swapped whole, never modified in place.
  struct DispatchObserver {
    void (*fn)(void*, const char*, tsr_device_t, int32_t, int32_t);
    void* user;
  };
  std::atomic<DispatchObserver*> dispatch_observer{nullptr};
  std::mutex observer_mutex;  // set_observer only
  std::vector<std::unique_ptr<DispatchObserver>> observer_storage;  // every one installed
  std::atomic<uint64_t> seed{0x5EED5EEDull};
  std::atomic<uint64_t> rng_offset{0};
  uint64_t serial = 0;
  // precision_set/get, indexed by tsr_precision_setting_t (1..4); read by backends per call.
  std::atomic<int32_t> precision[5] = {0, 0, 1, 1, 1};
  // Ops the core calls itself, looked up once.
  tsr_op_s* op_copy = nullptr;
  tsr_op_s* op_fill = nullptr;

  ~tsr_runtime_s() {
    for (auto& op : ops) delete op->kernels.load();  // retired tables free themselves
  }
};

namespace tsr::core {

using Runtime = tsr_runtime_s;

const tsr_api_t* api_table();

// Registers the built-in ops (ops/<family>/*.cpp) into a new runtime.
tsr_status_t register_builtin_ops(Runtime* rt);
// Adds an op from its schema; impl may be null for plugin ops (generic impl used).
tsr_status_t add_op(Runtime* rt, const std::string& schema, OpImplFn impl, const OpExtra& extra, tsr_op_s** out);

// Allocator of a device; status when the device does not exist.
tsr_status_t device_allocator(Runtime* rt, tsr_device_t device, const char* op, DeviceAllocator** out);
std::string device_str(Runtime* rt, tsr_device_t device);
// The id of the registered device type called `name` (reserved ids without a backend do not
// count), or -1.
int32_t find_device_type(const Runtime* rt, const std::string& name);
tsr_status_t check_device(Runtime* rt, tsr_device_t device, const char* op);

// Allocates a contiguous tensor.
tsr_status_t new_tensor(Runtime* rt, int ndim, const int64_t* sizes, tsr_dtype_t dtype, tsr_device_t device,
                        const char* op, Tensor** out);
// The same without validation, for shapes, dtypes and devices the core derived from valid
// tensors (the hot path of every op's output): numel must match sizes, alloc the device's.
tsr_status_t new_tensor_trusted(Runtime* rt, int ndim, const int64_t* sizes, int64_t numel, tsr_dtype_t dtype,
                                tsr_device_t device, DeviceAllocator* alloc, const char* op, Tensor** out);
// Publishes the extension tables the core itself implements (tessera.dispatch_trace, tessera.model).
void publish_core_extensions(Runtime* rt);
// Raw copy of nbytes between two dense buffers of possibly different devices (one may be
// TSR_DEVICE_TYPE_HOST memory); a copy with host memory on one side has finished on return.
tsr_status_t device_memcpy(Runtime* rt, tsr_device_t dst_dev, void* dst, tsr_device_t src_dev, const void* src,
                           size_t nbytes, const char* op);
// Copies src into dst (same shape after broadcasting), converting dtype; crosses devices.
tsr_status_t copy_into(Tensor* dst, Tensor* src, const char* op);

// The plugin loader (plugins/loader.cpp): loads per options into rt.
void load_plugins(Runtime* rt, const tsr_runtime_options_t* options);
void shutdown_plugins(Runtime* rt);

// Logging to stderr per TESSERA_LOG_LEVEL (error|warn|info|debug, default warn).
void log(tsr_log_level_t level, const std::string& message);

}  // namespace tsr::core
