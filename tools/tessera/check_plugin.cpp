// `tessera check-plugin PATH`: vets one plugin .so without risking this process.
//
// The parent copies PATH (and its manifest) into a fresh private directory, and the plugins
// it depends on (found beside it, on the plugin path, or in the core's plugin directory) into
// another, then forks. The child creates a runtime with only the dependencies (the baseline),
// then one with the plugin too, and sends back through a pipe the loader's records and what
// the plugin added (device types, ops, kernels). A crash in the child is reported with its
// signal, a hang is killed after --timeout seconds; the parent always survives.
#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "cli.hpp"
#include "conformance_report.hpp"
#include "tessera/search_path.hpp"

namespace fs = std::filesystem;

namespace tessera_cli {

namespace {

struct PluginFile {
  std::string so, manifest, name;
  std::string abi;  // the manifest's "abi" ("MAJOR.MINOR"), empty when absent
  std::vector<std::string> depends;
};

// Reads NAME.json beside NAME.so; false when missing or unreadable (error says why).
bool read_manifest(const fs::path& so, PluginFile* out, std::string* error) {
  fs::path manifest = so;
  manifest.replace_extension(".json");
  out->so = so.string();
  std::ifstream in(manifest);
  if (!in) {
    if (error) *error = "no manifest " + manifest.string();
    return false;
  }
  out->manifest = manifest.string();
  try {
    json j = json::parse(in);
    out->name = j.at("name").get<std::string>();
    if (j.contains("abi") && j.at("abi").is_string()) out->abi = j.at("abi").get<std::string>();
    if (j.contains("depends")) out->depends = j.at("depends").get<std::vector<std::string>>();
  } catch (const std::exception& e) {
    if (error) *error = "cannot parse " + manifest.string() + ": " + e.what();
    return false;
  }
  return true;
}

bool world_writable(const fs::path& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0 && (st.st_mode & S_IWOTH);
}

// The plugins `target` depends on, transitively, first match by name along `dirs`.
std::vector<PluginFile> resolve_dependencies(const PluginFile& target, const std::vector<std::string>& dirs,
                                             std::vector<std::string>* missing) {
  std::map<std::string, PluginFile> by_name;
  std::error_code ec;
  fs::path target_canon = fs::weakly_canonical(target.so, ec);
  for (const std::string& d : dirs) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".so") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      PluginFile pf;
      if (!read_manifest(f, &pf, nullptr) || pf.name == target.name) continue;
      if (fs::weakly_canonical(f, ec) == target_canon) continue;
      by_name.emplace(pf.name, pf);  // first wins, as in the loader
    }
  }
  std::vector<PluginFile> out;
  std::vector<std::string> todo = target.depends;
  std::set<std::string> seen;
  while (!todo.empty()) {
    std::string n = todo.back();
    todo.pop_back();
    if (!seen.insert(n).second) continue;
    auto it = by_name.find(n);
    if (it == by_name.end()) {
      missing->push_back(n);
      continue;
    }
    out.push_back(it->second);
    for (const std::string& d : it->second.depends) todo.push_back(d);
  }
  return out;
}

// Copies a plugin and its manifest into dir with sane modes; returns the new .so path.
std::string copy_plugin(const std::string& so, const std::string& manifest, const fs::path& dir,
                        std::map<std::string, std::string>* origin, TempDir& tmp) {
  fs::path dst = dir / fs::path(so).filename();
  for (int k = 1; fs::exists(dst); ++k)  // two dependencies with one file name
    dst = dir / (std::to_string(k) + "_" + fs::path(so).filename().string());
  fs::copy_file(so, dst);
  tmp.add_file(dst.string());
  fs::permissions(dst, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec);
  (*origin)[dst.string()] = so;
  if (!manifest.empty()) {
    fs::path mdst = dst;
    mdst.replace_extension(".json");
    fs::copy_file(manifest, mdst);
    tmp.add_file(mdst.string());
    fs::permissions(mdst,
                    fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
  }
  return dst.string();
}

// ---- the child ---------------------------------------------------------------------------

struct ChildPlan {
  std::string plugin_dir, deps_dir;
  std::string plugin_so;  // the target's private copy
};

// The ABI the plugin binary was built for ("MAJOR.MINOR", from its tsr_plugin_t), or "" when
// the loader never opened it (refused before dlopen): RTLD_NOLOAD reuses the loader's handle
// and never opens a file the loader would not.
std::string binary_abi(const std::string& so) {
  void* h = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  if (!h) return "";
  std::string abi;
  auto query = reinterpret_cast<const tsr_plugin_t* (*)(uint32_t)>(dlsym(h, TSR_PLUGIN_QUERY_SYMBOL));
  if (const tsr_plugin_t* p = query ? query(TSR_ABI_VERSION) : nullptr)
    abi = std::to_string(TSR_ABI_VERSION_MAJOR(p->abi_version)) + "." +
          std::to_string(TSR_ABI_VERSION_MINOR(p->abi_version));
  dlclose(h);  // drops only our reference: the runtime's keeps it mapped
  return abi;
}

bool line(int fd, const std::string& s) { return write_all(fd, s + "\n"); }

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  return s;
}

int child_main(int fd, const ChildPlan& plan) {
  const tsr_api_t* api = core_api();
  tsr_runtime_options_t opts{};
  opts.struct_size = TSR_STRUCT_SIZE(tsr_runtime_options_t);
  opts.no_default_plugins = 1;

  line(fd, "PHASE baseline");
  opts.plugin_path = plan.deps_dir.c_str();
  tsr_runtime_t* rt = nullptr;
  if (tsr_status_t st = api->runtime_create(&opts, &rt)) {
    line(fd, "ERROR cannot create the baseline runtime: " + one_line(status_text(st)));
    return kExitInternal;
  }
  Inventory before = collect_inventory(api, rt);
  api->runtime_destroy(rt);

  line(fd, "PHASE load");
  std::string path = plan.plugin_dir + ":" + plan.deps_dir;
  opts.plugin_path = path.c_str();
  rt = nullptr;
  if (tsr_status_t st = api->runtime_create(&opts, &rt)) {
    line(fd, "ERROR cannot create a runtime with the plugin: " + one_line(status_text(st)));
    return kExitInternal;
  }
  Inventory after = collect_inventory(api, rt);

  json result;
  result["records"] = after.plugins;
  json types = json::array(), ops = json::array(), kernels = json::array();
  for (const DeviceTypeEntry& t : after.device_types)
    if (std::none_of(before.device_types.begin(), before.device_types.end(),
                     [&](const DeviceTypeEntry& b) { return b.name == t.name; }))
      types.push_back(t);
  std::vector<KernelEntry> kb, ka;
  for (const OpEntry& o : before.ops) kb.insert(kb.end(), o.kernels.begin(), o.kernels.end());
  for (const OpEntry& o : after.ops) {
    ka.insert(ka.end(), o.kernels.begin(), o.kernels.end());
    if (std::none_of(before.ops.begin(), before.ops.end(), [&](const OpEntry& b) { return b.name == o.name; })) {
      json jo = o;
      jo.erase("kernels");
      ops.push_back(jo);
    }
  }
  std::sort(kb.begin(), kb.end());
  std::sort(ka.begin(), ka.end());
  std::vector<KernelEntry> added;
  std::set_difference(ka.begin(), ka.end(), kb.begin(), kb.end(), std::back_inserter(added));
  for (const KernelEntry& k : added) kernels.push_back(k);
  // A device type without an allocator loads, but every op on it fails: say so here.
  json no_allocator = json::array();
  for (const json& t : types)
    if (t.at("device_count").get<int32_t>() > 0 &&
        !api->device_allocator_name(rt, tsr_device_t{t.at("id").get<int32_t>(), 0}))
      no_allocator.push_back(t.at("name"));
  result["new_device_types"] = types;
  result["device_types_without_allocator"] = no_allocator;
  result["binary_abi"] = binary_abi(plan.plugin_so);
  result["new_ops"] = ops;
  result["new_kernels"] = kernels;
  line(fd, "RESULT " + result.dump());

  line(fd, "PHASE shutdown");
  api->runtime_destroy(rt);
  line(fd, "DONE");
  return kExitOk;
}

// ---- the parent --------------------------------------------------------------------------

struct Report {
  std::string phase, error;
  bool have_result = false, done = false;
  json result;
};

Report parse_child_output(const std::string& out) {
  Report r;
  std::istringstream in(out);
  std::string l;
  while (std::getline(in, l)) {
    if (l.rfind("PHASE ", 0) == 0) {
      r.phase = l.substr(6);
    } else if (l.rfind("ERROR ", 0) == 0) {
      r.error = l.substr(6);
    } else if (l.rfind("RESULT ", 0) == 0) {
      try {
        r.result = json::parse(l.substr(7));
        r.have_result = true;
      } catch (const std::exception& e) {
        r.error = std::string("unreadable result from the child: ") + e.what();
      }
    } else if (l == "DONE") {
      r.done = true;
      r.phase = "done";
    }
  }
  return r;
}

std::string phase_words(const std::string& phase) {
  if (phase == "baseline") return "loading its dependencies (before the plugin itself)";
  if (phase == "shutdown") return "shutdown";
  return "load";
}

std::string map_path(const std::string& p, const std::map<std::string, std::string>& origin) {
  auto it = origin.find(p);
  return it == origin.end() ? p : it->second;
}

void print_registered(const json& result) {
  std::printf("registered:\n");
  const json& types = result.at("new_device_types");
  const json& ops = result.at("new_ops");
  const json& kernels = result.at("new_kernels");
  if (types.empty() && ops.empty() && kernels.empty()) std::printf("  nothing\n");
  for (const json& t : types) {
    std::string devs;
    for (const json& d : t.at("devices")) devs += " " + d.get<std::string>();
    std::printf("  device type %s: %d device%s%s%s\n", t.at("name").get<std::string>().c_str(),
                t.at("device_count").get<int>(), t.at("device_count").get<int>() == 1 ? "" : "s",
                devs.empty() ? "" : ":", devs.c_str());
  }
  for (const json& o : ops) std::printf("  op %s\n", o.at("schema").get<std::string>().c_str());
  for (const json& k : kernels) {
    KernelEntry ke = k.get<KernelEntry>();
    std::printf("  kernel %s on %s [%s]%s  (%s, priority %d)\n", ke.op.c_str(), ke.device_type.c_str(),
                mask_to_names(ke.dtype_mask, false).c_str(), ke.has_predicate ? " with device predicate" : "",
                ke.name.c_str(), ke.priority);
  }
}

}  // namespace

int cmd_check_plugin(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      {"--timeout", true, "seconds the child may take before it is killed (default 30)"},
      {"--plugin-path", true, "colon-separated directories to find dependencies in (default: $TESSERA_PLUGIN_PATH)"},
      {"--smoke", false, "also run each kernel's op once (first sample, forward) in child processes with guard bytes"},
      {"--json", false, "print the report as JSON"},
      {"--help", false, "this help"},
  };
  Args args;
  if (!parse_args("check-plugin", argc, argv, 2, specs, &args)) return kExitUsage;
  if (args.has("--help")) {
    std::printf(
        "usage: tessera check-plugin [options] PATH.so\n\n"
        "Loads the plugin (with PATH.json beside it) in a child process and reports what it\n"
        "registers, or why it was refused, or how it crashed. Exit status: 0 loaded, 1 refused or\n"
        "unusable (a device type without an allocator; a file the loader refuses where it is, e.g.\n"
        "world-writable), 2 usage, 3 crashed or hung, 4 could not check. Temporary copies go to\n"
        "$TMPDIR.\n\n");
    print_options(specs);
    return kExitOk;
  }
  if (args.positional.size() != 1) {
    std::fprintf(stderr, "usage: tessera check-plugin [options] PATH.so\n");
    return kExitUsage;
  }
  double timeout = 30;
  if (args.values.count("--timeout")) {
    char* end = nullptr;
    std::string t = args.value("--timeout");
    timeout = std::strtod(t.c_str(), &end);
    if (!end || *end || !(timeout > 0)) {
      std::fprintf(stderr, "tessera check-plugin: --timeout needs a positive number of seconds, got '%s'\n", t.c_str());
      return kExitUsage;
    }
  }
  const bool as_json = args.has("--json");
  std::error_code ec;
  fs::path so = fs::absolute(args.positional[0], ec).lexically_normal();
  if (ec || !fs::is_regular_file(so, ec)) {
    std::fprintf(stderr, "tessera check-plugin: %s is not a file\n", args.positional[0].c_str());
    return kExitUsage;
  }
  if (so.extension() != ".so") {
    std::fprintf(stderr, "tessera check-plugin: %s: the loader only considers files ending in .so\n", so.c_str());
    return kExitUsage;
  }
  if (!core_api()) {
    std::fprintf(stderr, "tessera check-plugin: the core does not speak ABI major %d\n", TSR_ABI_MAJOR);
    return kExitInternal;
  }
  setenv("TESSERA_LOG_LEVEL", "error", 0);  // the report says it all

  json report;
  report["path"] = so.string();
  std::vector<std::string> notes;
  PluginFile target;
  std::string manifest_error;
  bool have_manifest = read_manifest(so, &target, &manifest_error);
  if (!have_manifest) {
    target.so = so.string();
    notes.push_back(manifest_error + " (the loader needs NAME.json beside NAME.so)");
  }
  report["manifest"] = target.manifest;
  const bool refused_where_it_lies = world_writable(so) || world_writable(so.parent_path());
  if (refused_where_it_lies)
    notes.push_back("warning: " + so.string() +
                    " or its directory is world-writable: the loader refuses it where it is "
                    "(checked here from a private copy)");

  // Where dependencies are looked up: beside the plugin, the plugin path, the core's directory.
  std::vector<std::string> dep_dirs = {so.parent_path().string()};
  const char* env_path = std::getenv("TESSERA_PLUGIN_PATH");
  std::string pp = args.values.count("--plugin-path") ? args.value("--plugin-path") : (env_path ? env_path : "");
  for (const std::string& d : tsr::split_search_path(pp)) dep_dirs.push_back(d);
  if (!default_plugin_dir().empty()) dep_dirs.push_back(default_plugin_dir());
  std::vector<std::string> missing;
  std::vector<PluginFile> deps =
      have_manifest ? resolve_dependencies(target, dep_dirs, &missing) : std::vector<PluginFile>{};
  for (const std::string& m : missing)
    notes.push_back("dependency '" + m + "' was not found in: " + [&] {
      std::string s;
      for (const std::string& d : dep_dirs) s += (s.empty() ? "" : ":") + d;
      return s;
    }());

  // Private directories for the copies, removed on every exit (signals included).
  TempDir base_dir;
  if (!base_dir.create("tessera-check")) {
    std::fprintf(stderr, "tessera check-plugin: cannot create a temporary directory: %s\n", std::strerror(errno));
    return kExitInternal;
  }
  fs::path base = base_dir.path();
  ChildPlan plan;
  plan.plugin_dir = (base / "plugin").string();
  plan.deps_dir = (base / "deps").string();
  std::map<std::string, std::string> origin;
  int rc = kExitOk;
  try {
    fs::permissions(base, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
    for (const std::string& d : {plan.plugin_dir, plan.deps_dir}) {
      fs::create_directory(d);
      base_dir.add_file(d);
      fs::permissions(d, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                             fs::perms::others_exec);
    }
    plan.plugin_so = copy_plugin(so.string(), target.manifest, plan.plugin_dir, &origin, base_dir);
    for (const PluginFile& d : deps) copy_plugin(d.so, d.manifest, plan.deps_dir, &origin, base_dir);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera check-plugin: cannot prepare the check: %s\n", e.what());
    return kExitInternal;
  }

  ChildOutcome child = run_in_child([&](int fd) { return child_main(fd, plan); }, timeout);
  Report r = parse_child_output(child.output);

  std::string status, message;
  json plugin_record, dependencies = json::array();
  if (r.have_result) {
    for (json rec : r.result.at("records")) {
      std::string tmp_path = rec.at("path").get<std::string>();
      bool mine = tmp_path.rfind(plan.plugin_dir + "/", 0) == 0;
      rec["path"] = map_path(tmp_path, origin);
      if (mine && plugin_record.is_null())
        plugin_record = rec;
      else if (!mine)
        dependencies.push_back(rec);
    }
  }
  if (!child.started) {
    status = "error";
    message = "cannot run the check: " + child.error;
    rc = kExitInternal;
  } else if (child.timed_out) {
    status = "hung";
    char t[64];
    std::snprintf(t, sizeof(t), "%g", timeout);
    message = "plugin hung during " + phase_words(r.phase) + ": no answer within " + t +
              " s; the child process was killed (SIGKILL)";
    rc = kExitCrashed;
  } else if (child.signaled) {
    status = "crashed";
    message = "plugin crashed during " + phase_words(r.phase) + ": signal " + std::to_string(child.signal) + " (" +
              signal_name(child.signal) + ")";
    rc = kExitCrashed;
  } else if (!r.have_result || child.exit_code != 0) {
    status = "error";
    message = r.error.empty()
                  ? "the child process exited with status " + std::to_string(child.exit_code) + " without a result"
                  : r.error;
    rc = kExitInternal;
  } else if (plugin_record.is_null()) {
    status = "error";
    message = "the loader did not consider " + so.string();
    rc = kExitInternal;
  } else if (plugin_record.at("loaded").get<bool>()) {
    status = "loaded";
    // Loaded from the private copy, yet not usable as it is: fail the check all the same.
    std::string unusable;
    for (const json& t : r.result.value("device_types_without_allocator", json::array()))
      unusable += (unusable.empty() ? "" : "; ") + std::string("device type '") + t.get<std::string>() +
                  "' has no allocator, so every op on it fails (register a raw allocator for it in init)";
    if (refused_where_it_lies)
      unusable += (unusable.empty() ? "" : "; ") + std::string("the loader refuses ") + so.string() +
                  " where it is: the file or its directory is world-writable";
    if (!unusable.empty()) {
      status = "unusable";
      message = unusable;
      rc = kExitFailure;
    }
  } else {
    status = "refused";
    message = plugin_record.at("reason").get<std::string>();
    rc = kExitFailure;
  }

  // The ABI negotiation: what the binary was built for, what its manifest says, what the core
  // speaks (the loader accepts a newer minor of the same major, silently).
  const uint32_t core_v = core_api()->abi_version;
  const std::string core_abi =
      std::to_string(TSR_ABI_VERSION_MAJOR(core_v)) + "." + std::to_string(TSR_ABI_VERSION_MINOR(core_v));
  const std::string bin_abi = r.have_result ? r.result.value("binary_abi", std::string()) : std::string();
  if (!bin_abi.empty() && !target.abi.empty() && bin_abi != target.abi)
    notes.push_back("warning: the manifest says ABI " + target.abi + " but the binary was built for " + bin_abi +
                    " (tessera_add_plugin writes the manifest from the SDK it builds with)");
  unsigned bmaj = 0, bmin = 0;
  if (std::sscanf(bin_abi.c_str(), "%u.%u", &bmaj, &bmin) == 2 && bmaj == TSR_ABI_VERSION_MAJOR(core_v) &&
      bmin > TSR_ABI_VERSION_MINOR(core_v))
    notes.push_back("built for ABI " + bin_abi + ", newer than the core's " + core_abi + ": only " + core_abi +
                    "'s entries exist here, so the plugin must check TSR_HAS_FIELD before using later ones");
  report["abi"] = {{"binary", bin_abi.empty() ? json(nullptr) : json(bin_abi)},
                   {"manifest", target.abi.empty() ? json(nullptr) : json(target.abi)},
                   {"core", core_abi}};

  // --smoke: each kernel's op once, in children (certify's machinery with one sample, forward).
  json smoke = nullptr;
  std::vector<Row> smoke_rows;
  std::vector<tsr::conformance::CheckResult> smoke_results;
  std::vector<std::string> smoke_not_run;
  std::string smoke_error;
  if (args.has("--smoke") && status == "loaded") {
    json kernels_only = r.result;
    kernels_only["new_device_types"] = json::array();  // each kernel's op, not every OpInfo
    Plan plan;
    if (!plan_checks(kernels_only, so.string(), {}, {}, &plan, &smoke_error)) {
      rc = kExitFailure;
    } else {
      for (const json& t : r.result.at("new_device_types"))  // a backend's kernels run on its devices
        if (std::find(plan.devices.begin(), plan.devices.end(), t.at("name").get<std::string>()) == plan.devices.end())
          plan.devices.push_back(t.at("name").get<std::string>());
      smoke_not_run = plan.untested;
      if (!plan.ops.empty() && !plan.devices.empty()) {
        std::vector<std::string> extra = {"--smoke", "--no-gradcheck"};
        if (!pp.empty()) extra.insert(extra.end(), {"--plugin-path", pp});
        ChecksRun run = run_checks_in_children(so.string(), plan, extra, timeout, 4096);
        smoke_rows = std::move(run.rows);
        smoke_results = std::move(run.results);
        smoke_error = run.error;
      }
    }
    json rows = json::array();
    for (const Row& row : smoke_rows) {
      rows.push_back(row_json(row));
      if (row.verdict == Verdict::Crashed) rc = kExitCrashed;
      if (row.verdict == Verdict::Failed && rc == kExitOk) rc = kExitFailure;
    }
    if (!smoke_error.empty() && rc == kExitOk) rc = kExitInternal;
    smoke = {{"ops", rows}, {"not_run", smoke_not_run}, {"error", smoke_error}};
  }

  if (as_json) {
    if (!smoke.is_null()) report["smoke"] = smoke;
    report["status"] = status;
    report["message"] = message;
    report["phase"] = r.phase;
    if (child.signaled) report["signal"] = {{"number", child.signal}, {"name", signal_name(child.signal)}};
    if (!plugin_record.is_null())
      plugin_record["scored"] = plugin_record.at("score").get<int>() != 0 ||
                                plugin_record.at("reason").get<std::string>().rfind("scored ", 0) == 0;
    report["plugin"] = plugin_record;
    report["dependencies"] = dependencies;
    if (r.have_result) {
      report["new_device_types"] = r.result.at("new_device_types");
      report["new_ops"] = r.result.at("new_ops");
      report["new_kernels"] = r.result.at("new_kernels");
    }
    report["notes"] = notes;
    std::printf("%s\n", report.dump(2).c_str());
    return rc;
  }

  std::printf("plugin file: %s\n", so.c_str());
  if (have_manifest) {
    std::string d;
    for (const std::string& x : target.depends) d += (d.empty() ? "" : ", ") + x;
    std::printf("manifest:    %s (name '%s', depends: %s)\n", target.manifest.c_str(), target.name.c_str(),
                d.empty() ? "none" : d.c_str());
  }
  std::printf("abi:         binary %s, manifest %s, core %s\n",
              bin_abi.empty() ? "unknown (not opened)" : bin_abi.c_str(),
              target.abi.empty() ? "none" : target.abi.c_str(), core_abi.c_str());
  for (const std::string& n : notes) std::printf("note: %s\n", n.c_str());
  if (!plugin_record.is_null()) {
    std::string v = plugin_record.at("version").get<std::string>();
    // The loader records score 0 both for "scored 0" and for a refusal before score() ran (ABI,
    // manifest, permissions): only the first is a score.
    const int score = plugin_record.at("score").get<int>();
    const bool scored = score != 0 || plugin_record.at("reason").get<std::string>().rfind("scored ", 0) == 0;
    std::printf("result: %s  %s%s%s, %s\n",
                status == "loaded"     ? "LOADED"
                : status == "unusable" ? "LOADED BUT UNUSABLE"
                                       : "REFUSED",
                plugin_record.at("name").get<std::string>().c_str(), v.empty() ? "" : " ", v.c_str(),
                scored ? ("score " + std::to_string(score)).c_str() : "refused before scoring");
    if (status == "refused" || status == "unusable") std::printf("reason: %s\n", message.c_str());
  }
  if (r.have_result && (status == "loaded" || status == "unusable" || status == "crashed")) print_registered(r.result);
  if (!dependencies.empty()) {
    std::printf("other plugins in the check:\n");
    for (const json& d : dependencies)
      std::printf("  %-12s %s  %s%s\n", d.at("name").get<std::string>().c_str(),
                  d.at("loaded").get<bool>() ? "loaded " : "REFUSED", d.at("path").get<std::string>().c_str(),
                  d.at("loaded").get<bool>() ? "" : (" (" + d.at("reason").get<std::string>() + ")").c_str());
  }
  if (!smoke.is_null()) {
    std::printf("smoke (each kernel's op once: its first sample, forward, in a child with guard bytes):\n");
    for (const Row& row : smoke_rows) {
      std::string why = row.reason;
      if (row.verdict == Verdict::Failed)
        for (const tsr::conformance::CheckResult& c : smoke_results)
          if (c.op == row.op && c.device == row.device && c.outcome == tsr::conformance::Outcome::Fail) {
            why = c.dtype + ": " + c.message;
            break;
          }
      std::printf("  %-24s %-10s %s%s%s\n", row.op.c_str(), row.device.c_str(),
                  row.verdict == Verdict::Crashed  ? "CRASHED"
                  : row.verdict == Verdict::Failed ? "FAILED"
                                                   : verdict_name(row.verdict),
                  why.empty() ? "" : ": ", why.c_str());
    }
    for (const std::string& o : smoke_not_run)
      std::printf("  %-24s not run: no OpInfo or test case to call it with\n", o.c_str());
    if (smoke_rows.empty() && smoke_not_run.empty()) std::printf("  nothing to run: the plugin registers no kernels\n");
    if (!smoke_error.empty()) std::printf("  error: %s\n", smoke_error.c_str());
  }
  if (status == "crashed" || status == "hung" || status == "error")
    std::printf("%s%s\n", status == "error" ? "error: " : "", message.c_str());
  return rc;
}

}  // namespace tessera_cli
