// What a runtime holds, read through the public C ABI only: registered device types, ops with
// their kernels, and the loader's plugin records. Also their JSON form (check-plugin sends an
// inventory diff from its child process as JSON).
#include <algorithm>
#include <cstdio>
#include <tuple>

#include "cli.hpp"

namespace tessera_cli {

bool KernelEntry::operator<(const KernelEntry& o) const {
  return std::tie(op, device_type, name, plugin, priority, dtype_mask, has_predicate) <
         std::tie(o.op, o.device_type, o.name, o.plugin, o.priority, o.dtype_mask, o.has_predicate);
}

namespace {
std::string str(const char* s) { return s ? s : ""; }
}  // namespace

Inventory collect_inventory(const tsr_api_t* api, tsr_runtime_t* rt) {
  Inventory inv;
  int32_t ntypes = api->device_type_count(rt);
  std::map<int32_t, std::string> type_names;
  for (int32_t t = 0; t < ntypes; ++t) {
    const char* name = api->device_type_name(rt, t);
    if (!name) continue;
    type_names[t] = name;
    // A reserved name (cpu is always id 0) counts only once a plugin registered it.
    int32_t id = -1;
    tsr_status_t st = api->device_type_lookup(rt, name, &id);
    if (st) {
      api->status_free(st);
      continue;
    }
    if (id != t) continue;
    inv.device_types.push_back(DeviceTypeEntry{t, name, api->device_count(rt, t)});
  }
  size_t nops = api->op_count(rt);
  for (size_t i = 0; i < nops; ++i) {
    tsr_op_t* op = api->op_at(rt, i);
    if (!op) continue;
    OpEntry e;
    e.name = str(api->op_name(op));
    e.schema = str(api->op_schema(op));
    e.num_outputs = api->op_num_outputs(op);
    if (TSR_HAS_FIELD(api, tsr_api_t, op_source)) {
      tsr_op_source_t src{};
      src.struct_size = TSR_STRUCT_SIZE(tsr_op_source_t);
      if (tsr_status_t st = api->op_source(op, &src)) {
        api->status_free(st);
      } else {
        e.plugin = str(src.plugin);
        e.source_file = str(src.file);
        e.source_line = src.line;
        e.composite = src.composite != 0;
        e.formula = str(src.formula);
      }
    }
    size_t nk = api->op_kernel_count(op);
    for (size_t k = 0; k < nk; ++k) {
      tsr_kernel_info_t info{};
      info.struct_size = TSR_STRUCT_SIZE(tsr_kernel_info_t);
      if (tsr_status_t st = api->op_kernel_info(op, k, &info)) {
        api->status_free(st);
        continue;
      }
      KernelEntry ke;
      ke.op = e.name;
      ke.name = str(info.kernel_name);
      ke.plugin = str(info.plugin_name);
      ke.device_type_id = info.device_type;
      auto it = type_names.find(info.device_type);
      ke.device_type = it != type_names.end() ? it->second : "type" + std::to_string(info.device_type);
      ke.priority = info.priority;
      ke.dtype_mask = info.dtype_mask;
      ke.has_predicate = info.has_predicate != 0;
      e.kernels.push_back(ke);
    }
    inv.ops.push_back(std::move(e));
  }
  size_t np = api->plugin_count(rt);
  for (size_t i = 0; i < np; ++i) {
    tsr_plugin_record_t r{};
    r.struct_size = TSR_STRUCT_SIZE(tsr_plugin_record_t);
    if (tsr_status_t st = api->plugin_record(rt, i, &r)) {
      api->status_free(st);
      continue;
    }
    PluginEntry p;
    p.name = str(r.name);
    p.version = str(r.version);
    p.path = str(r.path);
    p.loaded = r.loaded != 0;
    p.score = r.score;
    p.reason = str(r.reason);
    inv.plugins.push_back(p);
  }
  return inv;
}

bool select_ops(Inventory& inv, const std::string& only, const char* command, std::vector<const OpEntry*>* out) {
  std::sort(inv.ops.begin(), inv.ops.end(), [](const OpEntry& a, const OpEntry& b) { return a.name < b.name; });
  out->clear();
  for (const OpEntry& o : inv.ops)
    if (only.empty() || o.name == only) out->push_back(&o);
  if (!only.empty() && out->empty()) {
    std::string near;
    for (const OpEntry& o : inv.ops)
      if (o.name.find(only) != std::string::npos) near += (near.empty() ? "" : ", ") + o.name;
    std::fprintf(stderr, "tessera %s: no op named '%s'%s\n", command, only.c_str(),
                 near.empty() ? "" : (" (similar: " + near + ")").c_str());
    return false;
  }
  return true;
}

void to_json(json& j, const KernelEntry& k) {
  std::vector<std::string> dtypes;
  for (int d : dtypes_in_mask(k.dtype_mask)) dtypes.push_back(dtype_full_name(d));
  j = json{{"op", k.op},
           {"device_type", k.device_type},
           {"device_type_id", k.device_type_id},
           {"kernel", k.name},
           {"plugin", k.plugin},
           {"priority", k.priority},
           {"dtype_mask", k.dtype_mask},
           {"dtypes", dtypes},
           {"has_predicate", k.has_predicate}};
}
void from_json(const json& j, KernelEntry& k) {
  k.op = j.at("op").get<std::string>();
  k.device_type = j.at("device_type").get<std::string>();
  k.device_type_id = j.at("device_type_id").get<int32_t>();
  k.name = j.at("kernel").get<std::string>();
  k.plugin = j.at("plugin").get<std::string>();
  k.priority = j.at("priority").get<int32_t>();
  k.dtype_mask = j.at("dtype_mask").get<uint32_t>();
  k.has_predicate = j.at("has_predicate").get<bool>();
}

void to_json(json& j, const OpEntry& o) {
  j = json{{"name", o.name}, {"schema", o.schema}, {"num_outputs", o.num_outputs}, {"kernels", o.kernels}};
}
void from_json(const json& j, OpEntry& o) {
  o.name = j.at("name").get<std::string>();
  o.schema = j.at("schema").get<std::string>();
  o.num_outputs = j.at("num_outputs").get<size_t>();
  o.kernels = j.at("kernels").get<std::vector<KernelEntry>>();
}

void to_json(json& j, const DeviceTypeEntry& d) {
  std::vector<std::string> devices;
  for (int32_t i = 0; i < d.device_count; ++i) devices.push_back(d.name + ":" + std::to_string(i));
  j = json{{"id", d.id}, {"name", d.name}, {"device_count", d.device_count}, {"devices", devices}};
}
void from_json(const json& j, DeviceTypeEntry& d) {
  d.id = j.at("id").get<int32_t>();
  d.name = j.at("name").get<std::string>();
  d.device_count = j.at("device_count").get<int32_t>();
}

void to_json(json& j, const PluginEntry& p) {
  j = json{{"name", p.name},     {"version", p.version}, {"path", p.path},
           {"loaded", p.loaded}, {"score", p.score},     {"reason", p.reason}};
}
void from_json(const json& j, PluginEntry& p) {
  p.name = j.at("name").get<std::string>();
  p.version = j.at("version").get<std::string>();
  p.path = j.at("path").get<std::string>();
  p.loaded = j.at("loaded").get<bool>();
  p.score = j.at("score").get<int32_t>();
  p.reason = j.at("reason").get<std::string>();
}

}  // namespace tessera_cli
