// `tessera kernels --device D --reach`: per op (every op with an OpInfo, the core's and the loaded
// plugins') and dtype, whether it runs on device type D forward and backward, and if not, which
// kernels it reaches that D lacks. The kernels an op reaches are traced on cpu:0
// (conformance::trace_reach); D's kernels come from the registry. The summary ranks the missing
// kernels by how many op/dtype pairs each one blocks: the order in which to write them.
#include <algorithm>
#include <cstdio>
#include <map>

#include "conformance_report.hpp"

namespace conf = tsr::conformance;

namespace tessera_cli {

namespace {

enum class Runs { Yes, ForwardOnly, No };

struct PairReach {
  std::string op;
  tsr_dtype_t dtype = TSR_F32;
  Runs runs = Runs::Yes;
  std::vector<conf::KernelUse> forward_missing, backward_missing;
  std::string trace_error;
};

// "mul" when the kernel's dtype is the row's, else "sum[i64]".
std::string kernel_str(const conf::KernelUse& k, tsr_dtype_t row) {
  return k.dtype == row ? k.op : k.op + "[" + dtype_short_name(k.dtype) + "]";
}
std::string kernel_full(const conf::KernelUse& k) { return k.op + "[" + dtype_short_name(k.dtype) + "]"; }

std::string join(const std::vector<conf::KernelUse>& ks, tsr_dtype_t row) {
  std::string s;
  for (const conf::KernelUse& k : ks) s += (s.empty() ? "" : ", ") + kernel_str(k, row);
  return s;
}

}  // namespace

int kernels_reach(const Args& args, tsr_runtime_t* rt, const Inventory& inv) {
  const std::string dev = args.value("--device");
  std::string type = dev.substr(0, dev.find(':'));
  if (type.empty()) {
    std::fprintf(stderr, "tessera kernels: --reach needs --device TYPE (e.g. --device cuda)\n");
    return kExitUsage;
  }
  if (std::none_of(inv.device_types.begin(), inv.device_types.end(),
                   [&](const DeviceTypeEntry& t) { return t.name == type; })) {
    std::string known;
    for (const DeviceTypeEntry& t : inv.device_types) known += (known.empty() ? "" : ", ") + t.name;
    std::fprintf(stderr, "tessera kernels: --device %s: no device type '%s' is loaded (loaded: %s)\n", dev.c_str(),
                 type.c_str(), known.c_str());
    return kExitUsage;
  }
  // D's kernels: op -> dtype masks (0 = every dtype). Kernels behind a device predicate count as
  // present (they run on the devices the predicate accepts).
  std::map<std::string, std::vector<uint32_t>> have;
  for (const OpEntry& o : inv.ops)
    for (const KernelEntry& k : o.kernels)
      if (k.device_type == type) have[o.name].push_back(k.dtype_mask);
  auto available = [&](const conf::KernelUse& k) {
    auto it = have.find(k.op);
    if (it == have.end()) return false;
    for (uint32_t m : it->second)
      if (m == 0 || (m & TSR_DTYPE_BIT(k.dtype))) return true;
    return false;
  };

  std::vector<conf::OpInfo> infos = conf::all_opinfos();
  std::vector<std::string> errors;
  for (conf::OpInfo& o : plugin_opinfos(inv, &errors)) infos.push_back(std::move(o));
  const std::string only = args.value("--op");
  // (op, dtype) -> the union over the op's OpInfos.
  std::map<std::pair<std::string, int>, conf::ReachTrace> traces;
  std::vector<std::pair<std::string, int>> order;
  for (const conf::OpInfo& o : infos) {
    if (!only.empty() && o.name != only) continue;
    for (tsr_dtype_t dt : o.dtypes) {
      set_crash_context("tracing op " + o.name);
      conf::ReachTrace t = conf::trace_reach(rt, o, dt, 20240601);
      auto key = std::make_pair(o.name, static_cast<int>(dt));
      if (!traces.count(key)) order.push_back(key);
      conf::ReachTrace& u = traces[key];
      u.forward.insert(t.forward.begin(), t.forward.end());
      u.backward.insert(t.backward.begin(), t.backward.end());
      if (u.error.empty()) u.error = t.error;
    }
  }
  set_crash_context("");
  if (!only.empty() && order.empty()) {
    std::fprintf(stderr, "tessera kernels: no OpInfo for op '%s': its reach cannot be traced\n", only.c_str());
    return kExitUsage;
  }

  std::vector<PairReach> pairs;
  std::map<conf::KernelUse, size_t> blocks;  // missing kernel -> op/dtype pairs it blocks
  size_t n_yes = 0, n_fwd = 0, n_no = 0;
  for (const auto& key : order) {
    const conf::ReachTrace& t = traces[key];
    PairReach p;
    p.op = key.first;
    p.dtype = static_cast<tsr_dtype_t>(key.second);
    p.trace_error = t.error;
    for (const conf::KernelUse& k : t.forward)
      if (!available(k)) p.forward_missing.push_back(k);
    for (const conf::KernelUse& k : t.backward)
      if (!available(k)) p.backward_missing.push_back(k);
    p.runs = !p.forward_missing.empty() ? Runs::No : !p.backward_missing.empty() ? Runs::ForwardOnly : Runs::Yes;
    (p.runs == Runs::Yes ? n_yes : p.runs == Runs::ForwardOnly ? n_fwd : n_no)++;
    for (const auto* v : {&p.forward_missing, &p.backward_missing})
      for (const conf::KernelUse& k : *v) ++blocks[k];
    pairs.push_back(std::move(p));
  }
  std::vector<std::pair<conf::KernelUse, size_t>> ranked(blocks.begin(), blocks.end());
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  // Public ops (no leading '_') without an OpInfo: nothing to trace them with.
  std::set<std::string> traced;
  for (const conf::OpInfo& o : infos) traced.insert(o.name);
  std::vector<std::string> untraced;
  if (only.empty())
    for (const OpEntry& o : inv.ops)
      if (!o.name.empty() && o.name[0] != '_' && !traced.count(o.name)) untraced.push_back(o.name);

  if (args.has("--json")) {
    json jp = json::array();
    for (const PairReach& p : pairs) {
      json f = json::array(), b = json::array();
      for (const conf::KernelUse& k : p.forward_missing) f.push_back(kernel_full(k));
      for (const conf::KernelUse& k : p.backward_missing) b.push_back(kernel_full(k));
      jp.push_back({{"op", p.op},
                    {"dtype", dtype_full_name(p.dtype)},
                    {"runs", p.runs == Runs::Yes ? "yes" : p.runs == Runs::ForwardOnly ? "forward only" : "no"},
                    {"forward_missing", f},
                    {"backward_missing", b},
                    {"trace_error", p.trace_error}});
    }
    json jr = json::array();
    for (const auto& [k, n] : ranked) jr.push_back({{"kernel", kernel_full(k)}, {"blocks", n}});
    std::printf("%s\n", json{{"device_type", type},
                             {"pairs", jp},
                             {"missing_kernels", jr},
                             {"untraced_ops", untraced},
                             {"summary", {{"pairs", pairs.size()}, {"runs", n_yes}, {"forward_only", n_fwd},
                                          {"not_at_all", n_no}}}}
                            .dump(2)
                            .c_str());
    return kExitOk;
  }

  // One line per op and group of dtypes with the same answer.
  std::printf("%-24s %-22s on %s: runs, or the kernels it lacks\n", "op", "dtypes", type.c_str());
  for (size_t i = 0; i < pairs.size();) {
    size_t j = i;
    std::map<std::string, std::vector<tsr_dtype_t>> groups;
    std::vector<std::string> group_order;
    for (; j < pairs.size() && pairs[j].op == pairs[i].op; ++j) {
      const PairReach& p = pairs[j];
      std::string what = p.runs == Runs::Yes ? "runs (forward and backward)"
                         : p.runs == Runs::ForwardOnly
                             ? "forward only; the backward needs " + join(p.backward_missing, p.dtype)
                             : "needs " + join(p.forward_missing, p.dtype) +
                                   (p.backward_missing.empty() ? "" : "; backward also " + join(p.backward_missing, p.dtype));
      if (!groups.count(what)) group_order.push_back(what);
      groups[what].push_back(p.dtype);
    }
    for (const std::string& what : group_order) {
      std::string dts;
      for (tsr_dtype_t d : groups[what]) dts += (dts.empty() ? "" : " ") + dtype_short_name(d);
      std::printf("%-24s %-22s %s\n", pairs[i].op.c_str(), dts.c_str(), what.c_str());
    }
    i = j;
  }
  if (!ranked.empty()) {
    std::printf("\nmissing kernels, by how many op/dtype pairs each one blocks (write these first):\n");
    for (size_t k = 0; k < ranked.size() && k < 25; ++k)
      std::printf("  %4zu  %s\n", ranked[k].second, kernel_full(ranked[k].first).c_str());
    if (ranked.size() > 25) std::printf("  ... and %zu more (--json lists them all)\n", ranked.size() - 25);
  }
  if (!untraced.empty())
    std::printf("\n%zu public ops have no OpInfo, so their reach is not traced (--json lists them)\n", untraced.size());
  std::printf("\n%zu op/dtype pairs on %s: %zu run forward and backward, %zu forward only, %zu not at all\n",
              pairs.size(), type.c_str(), n_yes, n_fwd, n_no);
  return kExitOk;
}

}  // namespace tessera_cli
