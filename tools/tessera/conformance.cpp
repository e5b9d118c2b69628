// `tessera conformance [--plugin PATH]... [--op NAME]... [--device DEV]... [--dtype DT]...`:
// runs the conformance suite (tools/conformance) in this process on every loaded device:
// each op's OpInfo against a float64 CPU reference, non-contiguous inputs, out= and in-place
// forms, gradchecks. A vendor certifies a backend with `tessera conformance --plugin my.so`.
//
// --plugin copies the .so (and the NAME.json beside it) into a private temporary directory
// searched before the others, so the loader's permission rules hold wherever it was built;
// its dependencies come from the usual places (plugin path, the core's plugins/ directory).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli.hpp"
#include "runner.hpp"

namespace fs = std::filesystem;
namespace conf = tsr::conformance;

namespace tessera_cli {

namespace {

// A private directory removed with everything in it when the command ends.
class TempDir {
 public:
  bool create() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/tessera-conformance-XXXXXX";
    std::vector<char> buf(templ.begin(), templ.end());
    buf.push_back('\0');
    if (!mkdtemp(buf.data())) return false;
    path_ = buf.data();
    return true;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Copies plugin `so` (and its manifest) into dir; returns the copy's path or "" (error set).
std::string stage_plugin(const std::string& so, const fs::path& dir, std::string* error) {
  std::error_code ec;
  fs::path src = fs::absolute(so, ec).lexically_normal();
  if (ec || !fs::is_regular_file(src, ec)) {
    *error = so + " is not a file";
    return "";
  }
  if (src.extension() != ".so") {
    *error = so + ": the loader only considers files ending in .so";
    return "";
  }
  fs::path manifest = src;
  manifest.replace_extension(".json");
  if (!fs::is_regular_file(manifest, ec)) {
    *error = so + ": no manifest " + manifest.string() + " (the loader needs NAME.json beside NAME.so)";
    return "";
  }
  fs::path dst = dir / src.filename();
  if (fs::exists(dst, ec)) {
    *error = so + ": two --plugin files are named " + src.filename().string();
    return "";
  }
  fs::copy_file(src, dst, ec);
  if (!ec) {
    fs::path mdst = dst;
    mdst.replace_extension(".json");
    fs::copy_file(manifest, mdst, ec);
  }
  if (ec) {
    *error = "cannot copy " + so + ": " + ec.message();
    return "";
  }
  fs::permissions(dst, fs::perms::owner_all, ec);
  return dst.string();
}

bool parse_dtype(const std::string& s, tsr_dtype_t* out) {
  for (int d = TSR_BOOL; d <= TSR_F64; ++d)
    if (s == dtype_full_name(d) || s == dtype_short_name(d)) {
      *out = static_cast<tsr_dtype_t>(d);
      return true;
    }
  return false;
}

// The devices named by --device values ("cuda:0" or a whole type "cuda"); false on an unknown one.
bool select_devices(tsr_runtime_t* rt, const std::vector<std::string>& names, std::vector<tsr::Device>* out) {
  std::vector<tsr::Device> all = conf::loaded_devices(rt);
  if (names.empty()) {
    *out = all;
    return true;
  }
  const tsr_api_t* api = core_api();
  for (const std::string& n : names) {
    std::vector<tsr::Device> match;
    if (n.find(':') == std::string::npos) {
      int32_t type = 0;
      if (tsr_status_t st = api->device_type_lookup(rt, n.c_str(), &type)) {
        std::fprintf(stderr, "tessera conformance: --device %s: %s\n", n.c_str(), status_text(st).c_str());
        return false;
      }
      for (const tsr::Device& d : all)
        if (d.d.type == type) match.push_back(d);
    } else {
      tsr_device_t d{};
      if (tsr_status_t st = api->device_parse(rt, n.c_str(), &d)) {
        std::fprintf(stderr, "tessera conformance: --device %s: %s\n", n.c_str(), status_text(st).c_str());
        return false;
      }
      for (const tsr::Device& x : all)
        if (x == tsr::Device(d)) match.push_back(x);
    }
    if (match.empty()) {
      std::fprintf(stderr, "tessera conformance: --device %s: no such device is loaded\n", n.c_str());
      return false;
    }
    for (const tsr::Device& d : match)
      if (std::find(out->begin(), out->end(), d) == out->end()) out->push_back(d);
  }
  return true;
}

// Per op and device: which dtypes passed every check, failed one, or were only skipped.
struct Row {
  std::string op, device;
  std::vector<std::string> passed, failed, skipped;
  size_t checks = 0;
};

Row summarize(const std::string& op, const std::string& device, const std::vector<conf::CheckResult>& rs) {
  Row row{op, device, {}, {}, {}, rs.size()};
  std::vector<std::string> order;
  std::map<std::string, std::set<conf::Outcome>> by_dtype;
  std::set<std::string> unimplemented;  // a forward check was skipped: the device lacks kernels
  for (const conf::CheckResult& r : rs) {
    std::string dt = r.dtype.empty() ? "(op)" : r.dtype;
    if (!by_dtype.count(dt)) order.push_back(dt);
    by_dtype[dt].insert(r.outcome);
    if (r.check == "forward" && r.outcome == conf::Outcome::Skip) unimplemented.insert(dt);
  }
  for (const std::string& dt : order) {
    const auto& o = by_dtype[dt];
    if (o.count(conf::Outcome::Fail))
      row.failed.push_back(dt);
    else if (unimplemented.count(dt) || !o.count(conf::Outcome::Pass))
      row.skipped.push_back(dt);
    else
      row.passed.push_back(dt);
  }
  return row;
}

std::string short_list(const std::vector<std::string>& dts) {
  if (dts.empty()) return "-";
  std::string s;
  for (const std::string& d : dts) {
    tsr_dtype_t dt;
    s += (s.empty() ? "" : " ") + (parse_dtype(d, &dt) ? dtype_short_name(dt) : d);
  }
  return s;
}

json result_json(const conf::CheckResult& r) {
  return {{"op", r.op},          {"device", r.device}, {"dtype", r.dtype},
          {"check", r.check},    {"sample", r.sample}, {"outcome", conf::outcome_name(r.outcome)},
          {"message", r.message}};
}

void print_usage(const std::vector<OptionSpec>& specs) {
  std::printf(
      "usage: tessera conformance [options]\n\n"
      "Checks every op that has an OpInfo on every loaded device and dtype against the same op\n"
      "on the CPU in float64: random inputs, odd and empty shapes, broadcasting, non-contiguous\n"
      "inputs, out= and in-place forms, and float64 gradchecks of differentiable ops. Dtypes a\n"
      "non-CPU device has no kernel for are skipped. Exit status: 0 nothing failed, 1 a check\n"
      "failed or a --plugin was refused, 2 usage, 4 could not run.\n\n"
      "  tessera conformance --plugin ./libmy_backend.so      certify a backend\n"
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
  if (args.values.count("--seed")) {
    char* end = nullptr;
    std::string s = args.value("--seed");
    opts.seed = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || *end) {
      std::fprintf(stderr, "tessera conformance: --seed needs a non-negative integer, got '%s'\n", s.c_str());
      return kExitUsage;
    }
  }
  for (const std::string& s : args.lists["--dtype"]) {
    tsr_dtype_t dt;
    if (!parse_dtype(s, &dt)) {
      std::fprintf(stderr, "tessera conformance: unknown dtype '%s' (e.g. float32, f32, bfloat16, bf16, int64)\n",
                   s.c_str());
      return kExitUsage;
    }
    opts.dtypes.push_back(dt);
  }
  std::vector<conf::OpInfo> infos = conf::all_opinfos();
  std::vector<const conf::OpInfo*> selected;
  // An op may have several OpInfos (variants of its arguments): --op selects them all.
  const std::vector<std::string>& wanted = args.lists["--op"];
  for (const std::string& name : wanted)
    if (std::none_of(infos.begin(), infos.end(), [&](const conf::OpInfo& o) { return o.name == name; })) {
      std::fprintf(stderr, "tessera conformance: no OpInfo for op '%s' (tessera conformance --list shows them)\n",
                   name.c_str());
      return kExitUsage;
    }
  for (const conf::OpInfo& o : infos)
    if (wanted.empty() || std::find(wanted.begin(), wanted.end(), o.name) != wanted.end()) selected.push_back(&o);

  // Stage the plugins and put their directory first on the search path.
  TempDir staging;
  std::vector<std::pair<std::string, std::string>> staged;  // (given path, staged copy)
  Args session_args = args;
  if (!args.lists["--plugin"].empty()) {
    if (!staging.create()) {
      std::fprintf(stderr, "tessera conformance: cannot create a temporary directory\n");
      return kExitInternal;
    }
    for (const std::string& p : args.lists["--plugin"]) {
      std::string error, copy = stage_plugin(p, staging.path(), &error);
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
  RuntimeSession session;
  if (!session.open(session_args)) return kExitInternal;
  tsr_runtime_t* rt = session.get();
  const tsr_api_t* api = core_api();
  tsr::set_runtime(rt);

  Inventory inv = collect_inventory(api, rt);
  for (const auto& [given, copy] : staged) {
    const PluginEntry* rec = nullptr;
    for (const PluginEntry& p : inv.plugins)
      if (p.path == copy) rec = &p;
    if (!rec || !rec->loaded) {
      std::fprintf(stderr, "tessera conformance: plugin %s was not loaded: %s\n", given.c_str(),
                   rec ? rec->reason.c_str() : "the loader did not consider it");
      tsr::set_runtime(nullptr);
      return kExitFailure;
    }
  }

  std::vector<tsr::Device> devices;
  if (!select_devices(rt, args.lists["--device"], &devices)) {
    tsr::set_runtime(nullptr);
    return kExitUsage;
  }

  if (args.has("--list")) {
    std::printf("devices:");
    for (const tsr::Device& d : devices) std::printf(" %s", conf::device_name(rt, d).c_str());
    std::printf("\nops with OpInfos (%zu):\n", selected.size());
    for (const conf::OpInfo* o : selected) {
      std::string dts;
      for (tsr_dtype_t dt : o->dtypes) dts += (dts.empty() ? "" : " ") + dtype_short_name(dt);
      std::printf("  %-24s %s%s\n", o->name.c_str(), dts.c_str(), o->differentiable ? "  [differentiable]" : "");
    }
    tsr::set_runtime(nullptr);
    return kExitOk;
  }

  std::vector<conf::CheckResult> all;
  std::vector<Row> rows;
  for (const tsr::Device& d : devices)
    for (const conf::OpInfo* o : selected) {
      std::vector<conf::CheckResult> rs = conf::run_opinfo(rt, *o, d, opts);
      rows.push_back(summarize(o->name, conf::device_name(rt, d), rs));
      all.insert(all.end(), rs.begin(), rs.end());
    }
  tsr::set_runtime(nullptr);

  size_t npass = 0, nfail = 0, nskip = 0, rows_ok = 0;
  for (const conf::CheckResult& r : all) {
    npass += r.outcome == conf::Outcome::Pass;
    nfail += r.outcome == conf::Outcome::Fail;
    nskip += r.outcome == conf::Outcome::Skip;
  }
  for (const Row& r : rows) rows_ok += r.failed.empty();

  if (args.has("--json")) {
    json j;
    json devs = json::array();
    for (const tsr::Device& d : devices) devs.push_back(conf::device_name(rt, d));
    j["devices"] = devs;
    json plugins = json::array();
    for (const auto& p : staged) plugins.push_back(p.first);
    j["plugins"] = plugins;
    json ops = json::array();
    for (const Row& r : rows)
      ops.push_back({{"op", r.op},
                     {"device", r.device},
                     {"passed", r.passed},
                     {"failed", r.failed},
                     {"skipped", r.skipped},
                     {"checks", r.checks}});
    j["ops"] = ops;
    json results = json::array();
    for (const conf::CheckResult& r : all) results.push_back(result_json(r));
    j["results"] = results;
    j["summary"] = {{"checks", all.size()}, {"passed", npass},           {"failed", nfail},
                    {"skipped", nskip},     {"op_devices", rows.size()}, {"op_devices_conforming", rows_ok}};
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("%-24s %-10s %-44s %-20s %s\n", "op", "device", "dtypes passed", "failed", "skipped");
    for (const Row& r : rows)
      std::printf("%-24s %-10s %-44s %-20s %s\n", r.op.c_str(), r.device.c_str(), short_list(r.passed).c_str(),
                  short_list(r.failed).c_str(), short_list(r.skipped).c_str());
    if (nfail) {
      std::printf("\nfailures:\n");
      for (const conf::CheckResult& r : all)
        if (r.outcome == conf::Outcome::Fail)
          std::printf("  FAIL %s on %s %s [%s] %s: %s\n", r.op.c_str(), r.device.c_str(),
                      r.dtype.empty() ? "-" : r.dtype.c_str(), r.check.c_str(), r.sample.c_str(), r.message.c_str());
    }
    std::printf("\n%zu checks: %zu passed, %zu failed, %zu skipped; %zu of %zu op/device pairs conform\n", all.size(),
                npass, nfail, nskip, rows_ok, rows.size());
  }
  return nfail ? kExitFailure : kExitOk;
}

}  // namespace tessera_cli
