// `tessera conformance [--plugin PATH]... [--op NAME]... [--device DEV]... [--dtype DT]...`:
// runs the conformance suite (tools/conformance) in this process on every loaded device:
// each op's OpInfo against a float64 CPU reference, non-contiguous inputs, out= and in-place
// forms, gradchecks, and the ops of every loaded plugin that ships test cases (NAME.tests.json).
// Each op/device pair gets one verdict: conforms, partial, not implemented, failed
// (conformance_report.hpp). In this process: a crashing kernel ends the run (the crash names
// the op on stderr); `tessera certify` runs the same checks in child processes instead.
//
// --plugin copies the .so (and the NAME.json beside it) into a private temporary directory
// searched before the others, so the loader's permission rules hold wherever it was built;
// its dependencies come from the usual places (plugin path, the core's plugins/ directory).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "conformance_report.hpp"

namespace fs = std::filesystem;
namespace conf = tsr::conformance;

namespace tessera_cli {

namespace {

void print_usage(const std::vector<OptionSpec>& specs) {
  std::printf(
      "usage: tessera conformance [options]\n\n"
      "Checks every op that has an OpInfo on every loaded device and dtype against the same op\n"
      "on the CPU in float64: random inputs, odd and empty shapes, broadcasting, non-contiguous\n"
      "inputs, out= and in-place forms, and float64 gradchecks of differentiable ops. Each\n"
      "op/device pair conforms (every dtype and check passed), is partial (some dtypes or checks\n"
      "reach kernels the device lacks), not implemented (no dtype runs) or failed. Exit status:\n"
      "0 nothing failed, 1 a check failed or a --plugin was refused, 2 usage, 4 could not run.\n"
      "`tessera certify PLUGIN.so` runs the same checks crash-proof, in child processes.\n\n"
      "  tessera conformance --plugin ./libmy_backend.so\n"
      "  tessera conformance --op matmul --device cuda --dtype bf16\n\n");
  print_options(specs);
}

}  // namespace

int cmd_conformance(int argc, char** argv) {
  std::vector<OptionSpec> specs = kRuntimeOptions;
  specs.push_back({"--plugin", true, "a plugin .so to load and check (repeatable)"});
  specs.push_back({"--op", true, "only this op (repeatable; see --list)"});
  specs.push_back({"--device", true, "only this device (\"cuda:0\") or device type (\"cuda\") (repeatable)"});
  specs.push_back({"--dtype", true, "only this dtype (\"float32\" or \"f32\") (repeatable)"});
  specs.push_back({"--seed", true, "seed of the sample inputs"});
  specs.push_back({"--no-gradcheck", false, "skip the gradient checks"});
  specs.push_back({"--list", false, "list the ops with OpInfos and the loaded devices, run nothing"});
  specs.push_back({"--json", false, "print every check as JSON"});
  // For `tessera certify`, which runs this command in child processes: results as lines on a
  // file descriptor ("BEGIN k", "RESULT {...}", "END k" per op/device pair k), starting at pair
  // --skip (the ones before ran in an earlier child).
  specs.push_back({"--stream-fd", true, "(for certify) write results as lines to this file descriptor"});
  specs.push_back({"--skip", true, "(for certify) start at this op/device pair"});
  specs.push_back({"--smoke", false, "only the first sample's forward check per op and dtype"});
  specs.push_back({"--guard-bytes", true,
                   "canary bytes around every allocation, checked after every kernel (default 4096; 0: off)"});
  specs.push_back({"--help", false, "this help"});
  Args args;
  if (!parse_args("conformance", argc, argv, 2, specs, &args)) return kExitUsage;
  if (args.has("--help")) {
    print_usage(specs);
    return kExitOk;
  }
  if (!args.positional.empty()) {
    std::fprintf(stderr, "tessera conformance: unexpected argument '%s'\n", args.positional[0].c_str());
    return kExitUsage;
  }
  conf::RunOptions opts;
  opts.gradcheck = !args.has("--no-gradcheck");
  opts.smoke = args.has("--smoke");
  auto parse_u64 = [&](const char* opt, uint64_t* out) {
    char* end = nullptr;
    std::string s = args.value(opt);
    *out = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || *end || s[0] == '-') {
      std::fprintf(stderr, "tessera conformance: %s needs a non-negative integer, got '%s'\n", opt, s.c_str());
      return false;
    }
    return true;
  };
  if (args.values.count("--seed") && !parse_u64("--seed", &opts.seed)) return kExitUsage;
  uint64_t stream_fd = 0, skip = 0;
  const bool streaming = args.values.count("--stream-fd") != 0;
  if (streaming && !parse_u64("--stream-fd", &stream_fd)) return kExitUsage;
  if (args.values.count("--skip") && !parse_u64("--skip", &skip)) return kExitUsage;
  for (const std::string& s : args.lists["--dtype"]) {
    tsr_dtype_t dt;
    if (!parse_dtype(s, &dt)) {
      std::fprintf(stderr, "tessera conformance: unknown dtype '%s' (e.g. float32, f32, bfloat16, bf16, int64)\n",
                   s.c_str());
      return kExitUsage;
    }
    opts.dtypes.push_back(dt);
  }

  // Stage the plugins and put their directory first on the search path.
  TempDir staging;
  std::vector<std::pair<std::string, std::string>> staged;  // (given path, staged copy)
  Args session_args = args;
  if (!args.lists["--plugin"].empty()) {
    if (!staging.create("tessera-conformance")) {
      std::fprintf(stderr, "tessera conformance: cannot create a temporary directory\n");
      return kExitInternal;
    }
    if (streaming) write_all(static_cast<int>(stream_fd), "STAGED " + staging.path() + "\n");
    for (const std::string& p : args.lists["--plugin"]) {
      std::string error, copy = stage_plugin(p, staging, &error);
      if (copy.empty()) {
        std::fprintf(stderr, "tessera conformance: --plugin %s\n", error.c_str());
        return kExitUsage;
      }
      staged.emplace_back(p, copy);
    }
    const char* env_path = std::getenv("TESSERA_PLUGIN_PATH");
    std::string rest = args.values.count("--plugin-path") ? args.value("--plugin-path") : (env_path ? env_path : "");
    session_args.values["--plugin-path"] = staging.path() + (rest.empty() ? "" : ":" + rest);
  }
  // Guard mode: a kernel that writes outside its tensors fails its check instead of corrupting
  // the heap unnoticed (or killing the run later with no op named).
  uint64_t guard = 4096;
  if (args.values.count("--guard-bytes") && (!parse_u64("--guard-bytes", &guard) || guard % 64 != 0)) {
    if (guard % 64 != 0) std::fprintf(stderr, "tessera conformance: --guard-bytes must be a multiple of 64\n");
    return kExitUsage;
  }
  if (guard > 0) {
    const char* env_conf = std::getenv("TESSERA_ALLOC_CONF");
    std::string conf = args.values.count("--alloc-conf") ? args.value("--alloc-conf") : (env_conf ? env_conf : "");
    if (conf.find("guard_bytes") == std::string::npos)
      session_args.values["--alloc-conf"] = conf + (conf.empty() ? "" : ",") + "guard_bytes:" + std::to_string(guard);
  }
  RuntimeSession session;
  if (!session.open(session_args)) return kExitInternal;
  tsr_runtime_t* rt = session.get();
  const tsr_api_t* api = core_api();
  tsr::set_runtime(rt);
  struct ClearRuntime {
    ~ClearRuntime() { tsr::set_runtime(nullptr); }
  } clear_runtime;

  Inventory inv = collect_inventory(api, rt);
  for (const auto& [given, copy] : staged) {
    const PluginEntry* rec = nullptr;
    for (const PluginEntry& p : inv.plugins)
      if (p.path == copy) rec = &p;
    if (!rec || !rec->loaded) {
      std::fprintf(stderr, "tessera conformance: plugin %s was not loaded: %s\n", given.c_str(),
                   rec ? rec->reason.c_str() : "the loader did not consider it");
      return kExitFailure;
    }
  }

  // The core's OpInfos, then the ones the loaded plugins ship (NAME.tests.json).
  std::vector<conf::OpInfo> infos = conf::all_opinfos();
  std::vector<std::string> test_file_errors;
  for (conf::OpInfo& o : plugin_opinfos(inv, &test_file_errors)) infos.push_back(std::move(o));
  for (const std::string& e : test_file_errors) {
    std::fprintf(stderr, "tessera conformance: a plugin's test cases are malformed: %s\n", e.c_str());
    return kExitFailure;
  }
  std::vector<const conf::OpInfo*> selected;
  // An op may have several OpInfos (variants of its arguments): --op selects them all.
  const std::vector<std::string>& wanted = args.lists["--op"];
  for (const std::string& name : wanted)
    if (std::none_of(infos.begin(), infos.end(), [&](const conf::OpInfo& o) { return o.name == name; })) {
      std::fprintf(stderr,
                   "tessera conformance: no OpInfo for op '%s' (tessera conformance --list shows them; a plugin's "
                   "ops get theirs from NAME.tests.json beside NAME.so, see docs/conformance.md)\n",
                   name.c_str());
      return kExitUsage;
    }
  for (const conf::OpInfo& o : infos)
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), o.name) != wanted.end()) selected.push_back(&o);

  std::vector<tsr::Device> devices;
  if (!select_devices("conformance", rt, args.lists["--device"], &devices)) return kExitUsage;

  if (args.has("--list")) {
    std::printf("devices:");
    for (const tsr::Device& d : devices) std::printf(" %s", conf::device_name(rt, d).c_str());
    std::printf("\nops with OpInfos (%zu):\n", selected.size());
    for (const conf::OpInfo* o : selected) {
      std::string dts;
      for (tsr_dtype_t dt : o->dtypes) dts += (dts.empty() ? "" : " ") + dtype_short_name(dt);
      std::printf("  %-24s %s%s\n", o->name.c_str(), dts.c_str(), o->differentiable ? "  [differentiable]" : "");
    }
    return kExitOk;
  }

  if (streaming)  // what the certificate records about each device
    for (const tsr::Device& d : devices) {
      json jd = {{"device", conf::device_name(rt, d)}};
      char desc[512] = {0};
      if (tsr_status_t st = api->device_describe(rt, d.d, desc, sizeof(desc)))
        api->status_free(st);
      else
        jd["description"] = desc;
      tsr_device_properties_t p{};
      p.struct_size = sizeof(p);
      if (tsr_status_t st = api->device_properties(rt, d.d, &p)) {
        api->status_free(st);
      } else {
        jd["name"] = p.name;
        jd["compute_capability"] = std::to_string(p.compute_major) + "." + std::to_string(p.compute_minor);
        jd["total_memory_bytes"] = p.total_memory_bytes;
        jd["multiprocessor_count"] = p.multiprocessor_count;
      }
      write_all(static_cast<int>(stream_fd), "DEVICE " + jd.dump() + "\n");
    }

  std::vector<conf::CheckResult> all;
  std::vector<Row> rows;
  uint64_t k = 0;
  for (const tsr::Device& d : devices)
    for (const conf::OpInfo* o : selected) {
      if (k++ < skip) continue;
      const std::string dev = conf::device_name(rt, d);
      set_crash_context("op " + o->name + " on " + dev);
      if (streaming)
        write_all(static_cast<int>(stream_fd), "BEGIN " + std::to_string(k - 1) + " " + o->name + " " + dev + "\n");
      std::vector<conf::CheckResult> rs = conf::run_opinfo(rt, *o, d, opts);
      if (streaming) {
        std::string lines;
        for (const conf::CheckResult& r : rs) lines += "RESULT " + result_json(r).dump() + "\n";
        write_all(static_cast<int>(stream_fd), lines + "END " + std::to_string(k - 1) + "\n");
        continue;
      }
      rows.push_back(summarize(o->name, dev, rs));
      all.insert(all.end(), rs.begin(), rs.end());
    }
  set_crash_context("");
  if (streaming) return kExitOk;

  Totals t = totals(rows, all);
  if (args.has("--json")) {
    json j;
    json devs = json::array();
    for (const tsr::Device& d : devices) devs.push_back(conf::device_name(rt, d));
    j["devices"] = devs;
    json plugins = json::array();
    for (const auto& p : staged) plugins.push_back(p.first);
    j["plugins"] = plugins;
    json ops = json::array();
    for (const Row& r : rows) ops.push_back(row_json(r));
    j["ops"] = ops;
    json results = json::array();
    for (const conf::CheckResult& r : all) results.push_back(result_json(r));
    j["results"] = results;
    j["summary"] = totals_json(t);
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    print_report(rows, all, t);
  }
  return t.failed ? kExitFailure : kExitOk;
}

}  // namespace tessera_cli
