#include "plugins/registrar.hpp"

#include <algorithm>
#include <cstring>

#include "runtime/status.hpp"
#include "runtime/streams.hpp"

namespace tsr::core {

static tsr_status_t reg_error(Registrar* reg, tsr_code_t code, const std::string& msg) {
  return make_status(code, "plugin '" + reg->plugin + "': " + msg);
}

// A definition's struct_size must reach past its last required field: the core copies only
// struct_size bytes, so a zero or short size (a plugin that forgot to set it) would leave a
// required function pointer zero and the first call jump to address 0. Checked before any
// field beyond struct_size is used.
#define TSR_DEF_MIN_SIZE(type, last_required) (offsetof(type, last_required) + sizeof(type::last_required))

static tsr_status_t check_struct_size(Registrar* reg, const std::string& what, const char* type, size_t got,
                                      size_t need, const char* last_required) {
  if (got >= need) return nullptr;
  return reg_error(reg, TSR_INVALID_ARGUMENT,
                   what + ": struct_size " + std::to_string(got) + " is smaller than the " + std::to_string(need) +
                       " bytes a " + type + " needs through its field " + last_required + " (set it to sizeof(" + type +
                       "))");
}

// The name of what is being registered, for messages. Names sit in every layout of their
// struct (since 1.0), so they can be read even when struct_size is wrong.
static std::string def_name(const char* s) { return s ? s : "(null)"; }

tsr_status_t reg_device_type(Registrar* reg, const tsr_device_type_def_t* def, int32_t* out) {
  if (!reg || !def) return make_status(TSR_INVALID_ARGUMENT, "register_device_type: registrar and def are required");
  const std::string what = "register_device_type '" + def_name(def->name) + "'";
  TSR_RETURN_IF_ERROR(check_struct_size(reg, what, "tsr_device_type_def_t", def->struct_size,
                                        TSR_DEF_MIN_SIZE(tsr_device_type_def_t, copy), "copy"));
  if (!def->name || !def->copy) return reg_error(reg, TSR_INVALID_ARGUMENT, what + ": name and copy are required");
  Runtime* rt = reg->runtime;
  std::string name = def->name;
  if (name.empty() || name.find(':') != std::string::npos)
    return reg_error(reg, TSR_INVALID_ARGUMENT, "bad device type name '" + name + "'");
  if (def->device_count < 0 || def->device_count > kMaxDevicesPerType)
    return reg_error(reg, TSR_INVALID_ARGUMENT,
                     "device type '" + name + "': device_count " + std::to_string(def->device_count) + " outside [0, " +
                         std::to_string(kMaxDevicesPerType) + "]");
  int32_t n = rt->num_device_types.load();
  if (int32_t existing = find_device_type(rt, name); existing >= 0)
    return reg_error(
        reg, TSR_ALREADY_EXISTS,
        "device type '" + name + "' is already registered by plugin '" + rt->device_types[existing].plugin + "'");
  for (auto& t : reg->types)
    if (t.name == name) return reg_error(reg, TSR_ALREADY_EXISTS, "device type '" + name + "' registered twice");
  int32_t id = -1;
  for (int32_t i = 0; i < n; ++i)
    if (rt->device_types[i].name == name) id = i;  // reserved name ("cpu" -> 0)
  if (id < 0) {
    id = n;
    for (auto& t : reg->types) id = std::max(id, t.id + 1);
    if (id >= kMaxDeviceTypes) return reg_error(reg, TSR_RESOURCE_EXHAUSTED, "too many device types");
  }
  Registrar::StagedType st{id, name, tsr_device_type_def_t{}};
  std::memcpy(&st.def, def, std::min(def->struct_size, sizeof(tsr_device_type_def_t)));
  st.def.struct_size = sizeof(tsr_device_type_def_t);
  reg->types.push_back(st);
  if (out) *out = id;
  return nullptr;
}

static bool type_known(Registrar* reg, int32_t type) {
  Runtime* rt = reg->runtime;
  if (type >= 0 && type < rt->num_device_types.load() && rt->device_types[type].def.copy) return true;
  for (auto& t : reg->types)
    if (t.id == type) return true;
  return false;
}

tsr_status_t reg_allocator(Registrar* reg, const tsr_raw_allocator_t* def) {
  if (!reg || !def) return make_status(TSR_INVALID_ARGUMENT, "register_allocator: registrar and def are required");
  const std::string what = "register_allocator '" + def_name(def->name) + "'";
  TSR_RETURN_IF_ERROR(check_struct_size(reg, what, "tsr_raw_allocator_t", def->struct_size,
                                        TSR_DEF_MIN_SIZE(tsr_raw_allocator_t, free), "free"));
  if (!def->name || !def->alloc || !def->free)
    return reg_error(reg, TSR_INVALID_ARGUMENT,
                     what + ": name, alloc and free are required (" + (def->alloc ? "" : "alloc is NULL ") +
                         (def->free ? "" : "free is NULL ") + (def->name ? "" : "name is NULL") + ")");
  if (!type_known(reg, def->device_type))
    return reg_error(
        reg, TSR_NOT_FOUND,
        "register_allocator '" + std::string(def->name) + "': unknown device type " + std::to_string(def->device_type));
  Registrar::StagedAllocator a{def->name, tsr_raw_allocator_t{}};
  std::memcpy(&a.def, def, std::min(def->struct_size, sizeof(tsr_raw_allocator_t)));
  a.def.struct_size = sizeof(tsr_raw_allocator_t);
  reg->allocators.push_back(a);
  return nullptr;
}

tsr_status_t reg_op(Registrar* reg, const tsr_op_def_t* def) {
  if (!reg || !def) return make_status(TSR_INVALID_ARGUMENT, "register_op: registrar and def are required");
  const std::string what = "register_op '" + def_name(def->schema) + "'";
  TSR_RETURN_IF_ERROR(
      check_struct_size(reg, what, "tsr_op_def_t", def->struct_size, TSR_DEF_MIN_SIZE(tsr_op_def_t, meta), "meta"));
  if (!def->schema || !def->meta) return reg_error(reg, TSR_INVALID_ARGUMENT, what + ": schema and meta are required");
  Schema s;
  TSR_RETURN_IF_ERROR(parse_schema(def->schema, &s));
  if (reg->runtime->op_by_name.count(s.name))
    return reg_error(reg, TSR_ALREADY_EXISTS, "op '" + s.name + "' already exists");
  for (auto& o : reg->ops)
    if (o.name == s.name) return reg_error(reg, TSR_ALREADY_EXISTS, "op '" + s.name + "' registered twice");
  OpExtra extra{def->meta, def->user_data, reg->plugin};
  // backward is optional and newer than the struct's first fields (a plugin built for 1.3 ends before it).
  if (def->struct_size >= offsetof(tsr_op_def_t, backward) + sizeof(def->backward)) extra.backward = def->backward;
  reg->ops.push_back({def->schema, extra, s.name});
  return nullptr;
}

tsr_status_t reg_kernel(Registrar* reg, const tsr_kernel_def_t* def) {
  if (!reg || !def) return make_status(TSR_INVALID_ARGUMENT, "register_kernel: registrar and def are required");
  const std::string what = "register_kernel for '" + def_name(def->op_name) + "'";
  TSR_RETURN_IF_ERROR(
      check_struct_size(reg, what, "tsr_kernel_def_t", def->struct_size, TSR_DEF_MIN_SIZE(tsr_kernel_def_t, fn), "fn"));
  if (!def->op_name) return reg_error(reg, TSR_INVALID_ARGUMENT, what + ": op_name is NULL");
  if (!def->fn) return reg_error(reg, TSR_INVALID_ARGUMENT, what + ": fn is NULL");
  std::string op = def->op_name;
  bool op_known = reg->runtime->op_by_name.count(op) > 0;
  for (auto& o : reg->ops) op_known = op_known || o.name == op;
  if (!op_known) return reg_error(reg, TSR_NOT_FOUND, "register_kernel: unknown op '" + op + "'");
  if (!type_known(reg, def->device_type))
    return reg_error(reg, TSR_NOT_FOUND,
                     "register_kernel for '" + op + "': unknown device type " + std::to_string(def->device_type));
  KernelRec k;
  std::memcpy(&k.def, def, std::min(def->struct_size, sizeof(tsr_kernel_def_t)));
  k.def.struct_size = sizeof(tsr_kernel_def_t);
  k.op_name = op;
  k.kernel_name = def->kernel_name ? def->kernel_name : reg->plugin + "::" + op;
  k.plugin = reg->plugin;
  reg->kernels.push_back(std::move(k));
  return nullptr;
}

tsr_status_t reg_extension(Registrar* reg, const char* name, const void* table) {
  if (!reg || !name || !table)
    return make_status(TSR_INVALID_ARGUMENT, "register_extension: name and table are required");
  if (reg->runtime->extensions.count(name))
    return reg_error(reg, TSR_ALREADY_EXISTS, std::string("extension '") + name + "' already exists");
  reg->extensions.emplace_back(name, table);
  return nullptr;
}

tsr_status_t commit(Registrar* reg) {
  Runtime* rt = reg->runtime;
  std::lock_guard<std::mutex> lock(rt->registry_mutex);
  // Ops first so their kernels find them.
  for (auto& o : reg->ops) TSR_RETURN_IF_ERROR(add_op(rt, o.schema, nullptr, o.extra, nullptr));
  for (auto& t : reg->types) {
    DeviceType& dt = rt->device_types[t.id];
    dt.name = t.name;
    dt.def = t.def;
    dt.def.name = nullptr;  // the copied name lives in dt.name
    dt.plugin = reg->plugin;
    dt.count = t.def.device_count;
    dt.has_streams = device_has_streams(&dt.def);
    if (t.id >= rt->num_device_types.load()) rt->num_device_types.store(t.id + 1);
  }
  for (auto& a : reg->allocators) {
    DeviceType& dt = rt->device_types[a.def.device_type];
    dt.raw_names.push_back(std::make_unique<std::string>(a.name));
    tsr_raw_allocator_t def = a.def;
    def.name = dt.raw_names.back()->c_str();
    dt.raw_allocators.push_back(def);
  }
  // Kernels: one new immutable table per touched op.
  std::map<tsr_op_s*, std::vector<KernelRec*>> per_op;
  for (auto& k : reg->kernels) per_op[rt->op_by_name.at(k.op_name)].push_back(&k);
  for (auto& [op, recs] : per_op) {
    auto table = std::make_unique<KernelTable>();
    if (const KernelTable* old = op->kernels.load()) *table = *old;
    for (KernelRec* k : recs) {
      k->seq = ++rt->kernel_seq;
      table->by_type[k->def.device_type].push_back(*k);
    }
    for (auto& v : table->by_type) {
      std::stable_sort(v.begin(), v.end(), [](const KernelRec& a, const KernelRec& b) {
        if (a.def.priority != b.def.priority) return a.def.priority > b.def.priority;
        return a.seq > b.seq;
      });
      for (KernelRec& k : v) {  // point borrowed strings at this table's own copies
        k.def.op_name = k.op_name.c_str();
        k.def.kernel_name = k.kernel_name.c_str();
      }
    }
    const KernelTable* published = table.release();
    const KernelTable* old = op->kernels.exchange(published, std::memory_order_acq_rel);
    // Readers may still hold the old table: keep it alive until the runtime dies.
    if (old) rt->retired_tables.emplace_back(old);
  }
  for (auto& e : reg->extensions) rt->extensions[e.first] = e.second;
  return nullptr;
}

tsr_status_t finalize_allocators(Runtime* rt) {
  std::lock_guard<std::mutex> lock(rt->registry_mutex);
  for (int32_t t = 0; t < rt->num_device_types.load(); ++t) {
    DeviceType& dt = rt->device_types[t];
    if (!dt.def.copy || dt.raw_allocators.empty()) continue;
    AllocConf conf;
    TSR_RETURN_IF_ERROR(parse_alloc_conf(rt->alloc_conf, dt.name, &conf));
    const tsr_raw_allocator_t* raw = &dt.raw_allocators.front();  // the backend's own first
    bool native = conf.allocator == "native";
    if (!conf.allocator.empty() && conf.allocator != "caching" && !native) {
      raw = nullptr;
      for (auto& a : dt.raw_allocators)
        if (conf.allocator == a.name) raw = &a;
      if (!raw) {
        std::string known;
        for (auto& a : dt.raw_allocators) known += (known.empty() ? "" : ", ") + std::string(a.name);
        return make_status(TSR_NOT_FOUND, "TESSERA_ALLOC_CONF: no allocator named '" + conf.allocator +
                                              "' for device type " + dt.name + " (registered: " + known + ")");
      }
    }
    bool passthrough = native || (raw->flags & TSR_ALLOCATOR_CACHES_ITSELF);
    dt.allocator_name = std::string(passthrough ? "passthrough(" : "caching(") + raw->name + ")";
    for (int32_t i = 0; i < dt.count; ++i) {
      tsr_device_t dev{t, i};
      std::string dname = dt.name + ":" + std::to_string(i);
      if (native || (raw->flags & TSR_ALLOCATOR_CACHES_ITSELF))
        dt.allocators[i] = make_passthrough_allocator(raw, dev, dname, conf, &dt.def);
      else
        dt.allocators[i] = make_caching_allocator(raw, dev, dname, conf, &dt.def);
      if (conf.guard_bytes) {
        dt.allocators[i] = make_guard_allocator(
            std::move(dt.allocators[i]), dname, conf.guard_bytes,
            [rt, dev](bool to_device, void* device_ptr, void* host, size_t n) {
              const tsr_device_t h{TSR_DEVICE_TYPE_HOST, 0};
              return to_device ? device_memcpy(rt, dev, device_ptr, h, host, n, "guard mode")
                               : device_memcpy(rt, h, host, dev, device_ptr, n, "guard mode");
            });
        rt->guard_mode = true;
      }
      dt.allocators[i]->small_tensors_inline = t == TSR_DEVICE_TYPE_CPU && conf.guard_bytes == 0;
      if (conf.memory_fraction > 0.0) {
        size_t limit = 0;
        std::string why;
        tsr_status_t st = fraction_limit(rt, dev, conf.memory_fraction, &limit, &why);
        if (st) {  // e.g. no total memory: an untyped key also reaches such device types
          log(TSR_LOG_WARN, "TESSERA_ALLOC_CONF per_process_memory_fraction ignored for " + dname + ": " + st->message);
          free_status(st);
        } else {
          dt.allocators[i]->set_limit(limit, why);
        }
      }
    }
  }
  return nullptr;
}

std::string dtype_mask_str(uint32_t mask) {
  if (mask == 0) return "any dtype";
  std::string s;
  for (int d = 1; d < 32; ++d)
    if (mask & (1u << d)) s += (s.empty() ? "" : ", ") + std::string(dtype_name(d));
  return s;
}

tsr_status_t no_kernel_status(Runtime* rt, const tsr_op_s* op, tsr_device_t device, int32_t dtype) {
  std::string msg =
      op->schema.name + ": no kernel for device " + device_str(rt, device) + " and dtype " + dtype_name(dtype);
  std::string reg;
  if (const KernelTable* t = op->kernels.load()) {
    for (int ty = 0; ty < kMaxDeviceTypes; ++ty)
      for (const KernelRec& k : t->by_type[ty])
        reg += (reg.empty() ? "" : "; ") + rt->device_types[ty].name + " [" + dtype_mask_str(k.def.dtype_mask) + "]" +
               (k.def.predicate ? " (device predicate)" : "");
  }
  msg += reg.empty() ? " (no kernels are registered for it)" : " (registered: " + reg + ")";
  return make_status(TSR_UNIMPLEMENTED, msg);
}

}  // namespace tsr::core
