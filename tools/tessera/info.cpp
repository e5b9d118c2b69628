// `tessera info [--json]`: what the runtime is made of here: core and ABI versions, device
// types and their devices (and, where a backend publishes "tessera.peer_topology.<type>", which
// pairs have peer access over which link), loaded and refused plugins (with the reasons),
// allocator settings.
#include <algorithm>
#include <cstdio>

#include "cli.hpp"
#include "tessera/ext_peer_topology.h"

namespace tessera_cli {

namespace {

struct DeviceMemory {
  std::string device;
  std::string description;      // from the backend
  std::string allocator;        // e.g. "caching(cpu)"; empty: the device has none
  tsr_memory_stats_t stats{};   // zero without an allocator
  bool has_properties = false;  // ABI 1.2 device_properties answered with a name
  tsr_device_properties_t props{};
};

std::vector<DeviceMemory> memory_of(const tsr_api_t* api, tsr_runtime_t* rt, const DeviceTypeEntry& t) {
  std::vector<DeviceMemory> out;
  for (int32_t i = 0; i < t.device_count; ++i) {
    DeviceMemory m;
    m.device = t.name + ":" + std::to_string(i);
    char buf[256];
    if (tsr_status_t st = api->device_describe(rt, tsr_device_t{t.id, i}, buf, sizeof(buf)))
      api->status_free(st);
    else
      m.description = buf;
    const char* alloc = api->device_allocator_name(rt, tsr_device_t{t.id, i});
    m.allocator = alloc ? alloc : "";
    if (TSR_HAS_FIELD(api, tsr_api_t, device_properties) && api->device_properties) {
      m.props.struct_size = TSR_STRUCT_SIZE(tsr_device_properties_t);
      if (tsr_status_t st = api->device_properties(rt, tsr_device_t{t.id, i}, &m.props))
        api->status_free(st);
      else
        m.has_properties = m.props.name[0] != '\0';
    }
    m.stats.struct_size = TSR_STRUCT_SIZE(tsr_memory_stats_t);
    // A device type without an allocator stays listed (every op on it fails: say so, not hide it).
    if (tsr_status_t st = api->memory_stats(rt, tsr_device_t{t.id, i}, &m.stats)) {
      api->status_free(st);
      m.stats = tsr_memory_stats_t{};
    }
    out.push_back(m);
  }
  return out;
}

// ---- peer topology ("tessera.peer_topology.<type>", ext_peer_topology.h) ------------------

// The table a device type's backend published; NULL when none.
const tsr_peer_topology_t* peer_table(const tsr_api_t* api, tsr_runtime_t* rt, const DeviceTypeEntry& t) {
  const auto* table = static_cast<const tsr_peer_topology_t*>(
      api->get_extension(rt, (TSR_PEER_TOPOLOGY_EXTENSION_PREFIX + t.name).c_str()));
  return table && TSR_PEER_TOPOLOGY_HAS(table, query) && table->query ? table : nullptr;
}

struct PeerCell {
  int32_t src = 0, dst = 0;
  bool ok = false;  // the query answered
  std::string error;
  tsr_peer_link_t link{};
};

// Every ordered pair (row-major: src, then dst).
std::vector<PeerCell> peer_matrix(const tsr_api_t* api, tsr_runtime_t* rt, const DeviceTypeEntry& t,
                                  const tsr_peer_topology_t* table) {
  std::vector<PeerCell> cells;
  for (int32_t i = 0; i < t.device_count; ++i)
    for (int32_t j = 0; j < t.device_count; ++j) {
      PeerCell c;
      c.src = i;
      c.dst = j;
      c.link.struct_size = sizeof(tsr_peer_link_t);
      if (tsr_status_t st = table->query(rt, i, j, &c.link)) {
        c.error = api->status_message(st);
        api->status_free(st);
        c.link = tsr_peer_link_t{};
      } else {
        c.ok = true;
      }
      cells.push_back(c);
    }
  return cells;
}

// nvidia-smi topo -m style: X, NV<count>, PCIe, P2P? (access, link unknown), - (no access).
std::string peer_cell_text(const PeerCell& c) {
  if (!c.ok) return "?";
  switch (c.link.link) {
    case TSR_PEER_LINK_SAME_DEVICE:
      return "X";
    case TSR_PEER_LINK_NVLINK:
      return "NV" + std::to_string(c.link.nvlink_count);
    case TSR_PEER_LINK_PCIE:
      return "PCIe";
    case TSR_PEER_LINK_UNKNOWN:
      return "P2P?";
    case TSR_PEER_LINK_NONE:
      return c.link.can_access ? "P2P?" : "-";
    default:
      return c.link.can_access ? "P2P?" : "?";
  }
}

const char* peer_link_name(const PeerCell& c) {
  if (!c.ok) return "error";
  switch (c.link.link) {
    case TSR_PEER_LINK_NONE:
      return "none";
    case TSR_PEER_LINK_SAME_DEVICE:
      return "same_device";
    case TSR_PEER_LINK_PCIE:
      return "pcie";
    case TSR_PEER_LINK_NVLINK:
      return "nvlink";
    default:
      return "unknown";
  }
}

json peer_topology_json(const tsr_api_t* api, tsr_runtime_t* rt, const Inventory& inv) {
  json j = json::object();
  for (const DeviceTypeEntry& t : inv.device_types) {
    const tsr_peer_topology_t* table = peer_table(api, rt, t);
    if (!table) continue;
    json links = json::array();
    if (t.device_count >= 2)
      for (const PeerCell& c : peer_matrix(api, rt, t, table)) {
        json l = {{"src", c.src}, {"dst", c.dst}, {"link", peer_link_name(c)}};
        if (c.ok) {
          l["can_access"] = c.link.can_access != 0;
          l["nvlink_count"] = c.link.nvlink_count;
          l["performance_rank"] = c.link.performance_rank;
          l["native_atomics"] = c.link.native_atomics != 0;
        } else {
          l["error"] = c.error;
        }
        links.push_back(l);
      }
    j[t.name] = {{"devices", t.device_count}, {"links", links}};
  }
  return j;
}

void print_peer_topology(const tsr_api_t* api, tsr_runtime_t* rt, const Inventory& inv) {
  for (const DeviceTypeEntry& t : inv.device_types) {
    const tsr_peer_topology_t* table = peer_table(api, rt, t);
    if (!table) continue;
    if (t.device_count < 2) {
      std::printf("\nPeer topology (%s): needs 2 devices, %d here\n", t.name.c_str(), t.device_count);
      continue;
    }
    std::printf("\nPeer topology (%s): row = memory owner, column = device accessing it\n", t.name.c_str());
    const std::vector<PeerCell> cells = peer_matrix(api, rt, t, table);
    size_t width = 4;  // "P2P?"
    for (const PeerCell& c : cells) width = std::max(width, peer_cell_text(c).size());
    for (int32_t j = 0; j < t.device_count; ++j) width = std::max(width, (t.name + ":" + std::to_string(j)).size());
    // One line per source device, cells padded to one width (no trailing blanks).
    auto print_row = [width](const std::string& label, const std::vector<std::string>& row) {
      std::string line = "  " + label + std::string(width - label.size(), ' ');
      for (const std::string& cell : row) line += "  " + cell + std::string(width - cell.size(), ' ');
      while (!line.empty() && line.back() == ' ') line.pop_back();
      std::printf("%s\n", line.c_str());
    };
    std::vector<std::string> header;
    for (int32_t j = 0; j < t.device_count; ++j) header.push_back(t.name + ":" + std::to_string(j));
    print_row("", header);
    std::string errors;
    for (int32_t i = 0; i < t.device_count; ++i) {
      std::vector<std::string> row;
      for (int32_t j = 0; j < t.device_count; ++j) {
        const PeerCell& c = cells[size_t(i) * size_t(t.device_count) + size_t(j)];
        row.push_back(peer_cell_text(c));
        if (!c.ok && errors.empty()) errors = c.error;
      }
      print_row(header[size_t(i)], row);
    }
    std::printf(
        "  Legend: X = same device, NV# = peer access over # NVLinks, PCIe = peer access over PCIe, "
        "P2P? = peer access over an unknown link, - = no peer access (copies go through the host)\n");
    if (!errors.empty()) std::printf("  ? = the query failed: %s\n", errors.c_str());
  }
}

const char* conf_source(const RuntimeSession& s, const Args& args) {
  if (args.values.count("--alloc-conf")) return "--alloc-conf";
  if (s.alloc_conf_from_env()) return "TESSERA_ALLOC_CONF";
  return "defaults";
}

json info_json(const tsr_api_t* api, const RuntimeSession& s, const Args& args, const Inventory& inv) {
  json j;
  j["core_version"] = api->version_string();
  j["core_library"] = core_library_path();
  j["abi"] = {{"major", TSR_ABI_VERSION_MAJOR(api->abi_version)},
              {"minor", TSR_ABI_VERSION_MINOR(api->abi_version)},
              {"cli_built_against", std::to_string(TSR_ABI_MAJOR) + "." + std::to_string(TSR_ABI_MINOR)}};
  j["plugin_search_path"] = s.search_path();
  json types = json::array();
  for (const DeviceTypeEntry& t : inv.device_types) {
    json jt = t;
    json mem = json::object();
    for (const DeviceMemory& m : memory_of(api, s.get(), t)) {
      mem[m.device] = {{"description", m.description},
                       {"allocator", m.allocator.empty() ? json(nullptr) : json(m.allocator)},
                       {"limit_bytes", m.stats.limit_bytes},
                       {"reserved_bytes", m.stats.reserved_bytes},
                       {"allocated_bytes", m.stats.allocated_bytes}};
      if (m.has_properties)
        mem[m.device]["properties"] = {
            {"name", m.props.name},
            {"compute_capability", std::to_string(m.props.compute_major) + "." + std::to_string(m.props.compute_minor)},
            {"total_memory_bytes", m.props.total_memory_bytes},
            {"multiprocessor_count", m.props.multiprocessor_count}};
    }
    jt["memory"] = mem;
    types.push_back(jt);
  }
  j["device_types"] = types;
  j["peer_topology"] = peer_topology_json(api, s.get(), inv);
  json loaded = json::array(), refused = json::array();
  for (const PluginEntry& p : inv.plugins) (p.loaded ? loaded : refused).push_back(p);
  j["plugins"] = {{"loaded", loaded}, {"refused", refused}};
  j["allocator"] = {{"conf", s.alloc_conf()}, {"source", conf_source(s, args)}};
  j["op_count"] = inv.ops.size();
  size_t nk = 0;
  for (const OpEntry& o : inv.ops) nk += o.kernels.size();
  j["kernel_count"] = nk;
  return j;
}

void print_info(const tsr_api_t* api, const RuntimeSession& s, const Args& args, const Inventory& inv) {
  std::printf("Tessera %s  (%s)\n", api->version_string(), core_library_path().c_str());
  std::printf("ABI %u.%u  (this command was built against %d.%d)\n", TSR_ABI_VERSION_MAJOR(api->abi_version),
              TSR_ABI_VERSION_MINOR(api->abi_version), TSR_ABI_MAJOR, TSR_ABI_MINOR);
  std::printf("\nPlugin search path:\n");
  if (s.search_path().empty()) std::printf("  (empty)\n");
  for (const std::string& d : s.search_path()) std::printf("  %s\n", d.c_str());

  std::printf("\nDevice types (%zu):\n", inv.device_types.size());
  if (inv.device_types.empty()) std::printf("  (none: no backend plugin loaded)\n");
  for (const DeviceTypeEntry& t : inv.device_types) {
    std::printf("  %-10s %d device%s\n", t.name.c_str(), t.device_count, t.device_count == 1 ? "" : "s");
    for (const DeviceMemory& m : memory_of(api, s.get(), t))
      std::printf(
          "    %-8s %s  [%s]\n", m.device.c_str(), m.description.c_str(),
          m.allocator.empty() ? "no allocator: every op on this device fails" : ("allocator " + m.allocator).c_str());
  }
  print_peer_topology(api, s.get(), inv);

  size_t nloaded = 0;
  for (const PluginEntry& p : inv.plugins) nloaded += p.loaded;
  std::printf("\nPlugins loaded (%zu):\n", nloaded);
  for (const PluginEntry& p : inv.plugins)
    if (p.loaded)
      std::printf("  %-14s %-10s score %-4d %s\n", p.name.c_str(), p.version.empty() ? "-" : p.version.c_str(), p.score,
                  p.path.c_str());
  std::printf("\nPlugins refused (%zu):\n", inv.plugins.size() - nloaded);
  for (const PluginEntry& p : inv.plugins)
    if (!p.loaded) std::printf("  %-14s %s\n  %14s reason: %s\n", p.name.c_str(), p.path.c_str(), "", p.reason.c_str());

  std::printf("\nAllocator configuration: %s (%s)\n", s.alloc_conf().empty() ? "\"\"" : s.alloc_conf().c_str(),
              conf_source(s, args));
  for (const DeviceTypeEntry& t : inv.device_types)
    for (const DeviceMemory& m : memory_of(api, s.get(), t))
      if (m.stats.limit_bytes > 0)
        std::printf("  %s: limit %lld bytes\n", m.device.c_str(), static_cast<long long>(m.stats.limit_bytes));

  size_t nk = 0;
  for (const OpEntry& o : inv.ops) nk += o.kernels.size();
  std::printf("\nOps: %zu, kernels: %zu  (see `tessera kernels`)\n", inv.ops.size(), nk);
}

}  // namespace

int cmd_info(int argc, char** argv) {
  std::vector<OptionSpec> specs = kRuntimeOptions;
  specs.push_back({"--json", false, "print as JSON"});
  specs.push_back({"--help", false, "this help"});
  Args args;
  int rc = kExitOk;
  if (!parse_command("info", "info [options]", argc, argv, specs, &args, &rc)) return rc;
  RuntimeSession session;
  if (!session.open(args)) return kExitInternal;
  const tsr_api_t* api = core_api();
  Inventory inv = collect_inventory(api, session.get());
  if (args.has("--json"))
    std::printf("%s\n", info_json(api, session, args, inv).dump(2).c_str());
  else
    print_info(api, session, args, inv);
  return kExitOk;
}

}  // namespace tessera_cli
