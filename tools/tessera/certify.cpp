// `tessera certify PLUGIN.so`: the vendor's certificate, honest about what it checked.
//
//   1. `check-plugin` (in a child): ABI negotiation, manifest, what loads, what is unusable.
//   2. The conformance checks of every op the plugin can run (all OpInfos for a device
//      backend, the ops it has kernels or test cases for otherwise), in child processes that
//      stream one line per check: a child that crashes or hangs names the op it was in, the
//      op is recorded as crashed, and a fresh child goes on from the next one. The children run
//      with the allocators' guard mode (TESSERA_ALLOC_CONF guard_bytes), so a kernel writing
//      outside its tensors fails its check naming the op and the tensor.
//   3. One verdict per op and device (conformance_report.hpp) and for the plugin: complete
//      (everything conforms), partial (no failure, but ops or dtypes the device cannot run, or
//      ops without test cases), failed, crashed, or refused / unusable (step 1).
//   4. A JSON certificate (--certificate FILE): the plugin's SHA-256, core and ABI versions,
//      seed, devices and their properties, the counts and every row.
//
// The parent never opens a runtime (a CUDA context does not survive fork): everything that
// loads plugins happens in the children.
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "conformance_report.hpp"

namespace fs = std::filesystem;
namespace conf = tsr::conformance;

namespace tessera_cli {

namespace {

std::string sha256_file(const std::string& path, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + path;
    return "";
  }
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  if (!ctx || EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr) != 1) {
    EVP_MD_CTX_free(ctx);
    *error = "SHA-256 is not available";
    return "";
  }
  std::vector<char> buf(1 << 16);
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) EVP_DigestUpdate(ctx, buf.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx, md, &len);
  EVP_MD_CTX_free(ctx);
  std::string hex;
  char b[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(b, sizeof(b), "%02x", md[i]);
    hex += b;
  }
  return hex;
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Runs `tessera <argv...>` (a subcommand of this binary) in a child, its stdout on the pipe, or
// (stdout_to_pipe false: conformance) with --stream-fd naming the pipe.
ChildOutcome run_subcommand(std::vector<std::string> argv, double timeout, bool idle, bool stdout_to_pipe = true) {
  return run_in_child(
      [&](int fd) {
        if (stdout_to_pipe) {
          if (dup2(fd, 1) < 0) return static_cast<int>(kExitInternal);
        } else {
          argv.push_back("--stream-fd");
          argv.push_back(std::to_string(fd));
        }
        std::vector<char*> args;
        args.push_back(const_cast<char*>("tessera"));
        for (std::string& a : argv) args.push_back(a.data());
        args.push_back(nullptr);
        const std::string& cmd = argv.at(0);
        int argc = static_cast<int>(args.size()) - 1;
        int rc = cmd == "check-plugin" ? cmd_check_plugin(argc, args.data()) : cmd_conformance(argc, args.data());
        std::fflush(stdout);
        return rc;
      },
      timeout, idle);
}

void print_usage(const std::vector<OptionSpec>& specs) {
  std::printf(
      "usage: tessera certify [options] PLUGIN.so\n\n"
      "Certifies a plugin: the checks of check-plugin (ABI, manifest, allocators), then the\n"
      "conformance checks of every op it can run, in child processes with guard bytes around every\n"
      "allocation, so that a crash, a hang or an out-of-bounds write names the op and the run goes\n"
      "on. A device backend is checked on all OpInfos; an op library on the ops it has kernels or\n"
      "test cases (NAME.tests.json) for. Each op/device pair conforms, is partial, not implemented,\n"
      "failed or crashed; the plugin is complete, partial, failed, crashed, refused or unusable.\n"
      "Exit status: 0 complete or partial (partial: 1 with --require-complete), 1 failed,\n"
      "refused or unusable, 2 usage, 3 crashed or hung, 4 could not run.\n\n"
      "  tessera certify ./build/tessera_mydev.so --certificate mydev.cert.json\n\n");
  print_options(specs);
}

}  // namespace

bool plan_checks(const json& report, const std::string& so, const std::vector<std::string>& device_args,
                 const std::vector<std::string>& op_args, Plan* plan, std::string* error) {
  plan->devices = device_args;
  const json& types = report.at("new_device_types");
  plan->library = types.empty();
  std::set<std::string> plugin_ops;
  if (plan->devices.empty())
    for (const json& t : types) plan->devices.push_back(t.at("name").get<std::string>());
  for (const json& k : report.at("new_kernels")) {
    plugin_ops.insert(k.at("op").get<std::string>());
    if (types.empty() && device_args.empty()) {
      std::string dt = k.at("device_type").get<std::string>();
      if (std::find(plan->devices.begin(), plan->devices.end(), dt) == plan->devices.end()) plan->devices.push_back(dt);
    }
  }
  for (const json& o : report.at("new_ops")) plugin_ops.insert(o.at("name").get<std::string>());
  // Which ops have test cases: the core's OpInfos and the plugin's tests file.
  std::set<std::string> with_opinfo;
  for (const conf::OpInfo& o : conf::all_opinfos()) with_opinfo.insert(o.name);
  std::string tests_error;
  fs::path tests = so;
  tests.replace_extension(".tests.json");
  for (const conf::OpInfo& o : conf::opinfos_from_tests_file(tests.string(), &tests_error)) with_opinfo.insert(o.name);
  if (!tests_error.empty()) {
    *error = "the plugin's test cases are malformed: " + tests_error;
    return false;
  }
  if (!op_args.empty()) {
    plan->ops = op_args;
  } else if (plan->library) {  // an op library: its own ops and the ops it adds kernels to
    for (const std::string& op : plugin_ops) (with_opinfo.count(op) ? plan->ops : plan->untested).push_back(op);
  } else {  // a device backend: everything, plus its own ops without test cases noted
    for (const std::string& op : plugin_ops)
      if (op.find("::") != std::string::npos && !with_opinfo.count(op)) plan->untested.push_back(op);
  }
  return true;
}

ChecksRun run_checks_in_children(const std::string& so, const Plan& plan, const std::vector<std::string>& extra,
                                 double timeout, uint64_t guard_bytes) {
  ChecksRun run;
  std::error_code ec;
  uint64_t next = 0;
  for (;;) {
    std::vector<std::string> cargv = {"conformance", "--plugin", so, "--skip", std::to_string(next),
                                      "--guard-bytes", std::to_string(guard_bytes)};
    for (const std::string& d : plan.devices) cargv.insert(cargv.end(), {"--device", d});
    for (const std::string& o : plan.ops) cargv.insert(cargv.end(), {"--op", o});
    cargv.insert(cargv.end(), extra.begin(), extra.end());
    ChildOutcome child = run_subcommand(cargv, timeout, true, false);
    // Read the stream: DEVICE, STAGED, BEGIN k OP DEV, RESULT {...}, END k.
    std::istringstream in(child.output);
    std::string line, staged, cur_op, cur_dev;
    int64_t open_k = -1;
    std::vector<conf::CheckResult> cur;
    while (std::getline(in, line)) {
      if (line.rfind("STAGED ", 0) == 0) {
        staged = line.substr(7);
      } else if (line.rfind("DEVICE ", 0) == 0) {
        if (next == 0) run.devices.push_back(json::parse(line.substr(7)));
      } else if (line.rfind("BEGIN ", 0) == 0) {
        std::istringstream b(line.substr(6));
        b >> open_k >> cur_op >> cur_dev;
        cur.clear();
      } else if (line.rfind("RESULT ", 0) == 0) {
        json j = json::parse(line.substr(7));
        conf::CheckResult r;
        r.op = j.at("op");
        r.device = j.at("device");
        r.dtype = j.at("dtype");
        r.check = j.at("check");
        r.sample = j.at("sample");
        std::string o = j.at("outcome");
        r.outcome = o == "pass" ? conf::Outcome::Pass : o == "fail" ? conf::Outcome::Fail : conf::Outcome::Skip;
        r.message = j.at("message");
        r.missing_kernel = j.at("missing_kernel");
        cur.push_back(std::move(r));
      } else if (line.rfind("END ", 0) == 0) {
        run.rows.push_back(summarize(cur_op, cur_dev, cur));
        run.results.insert(run.results.end(), cur.begin(), cur.end());
        next = static_cast<uint64_t>(open_k) + 1;
        open_k = -1;
      }
    }
    if (!staged.empty()) fs::remove_all(staged, ec);  // a killed child could not
    if (open_k >= 0 && (child.signaled || child.timed_out)) {
      char t[32];
      std::snprintf(t, sizeof(t), "%g", timeout);
      run.rows.push_back(crashed_row(cur_op, cur_dev,
                                     child.timed_out ? std::string("hung: no progress within ") + t +
                                                           " s, the child process was killed (SIGKILL)"
                                                     : "the process died: signal " + std::to_string(child.signal) +
                                                           " (" + signal_name(child.signal) + ")"));
      next = static_cast<uint64_t>(open_k) + 1;
      continue;
    }
    if (!child.started || child.signaled || child.timed_out || child.exit_code != kExitOk)
      run.error = !child.started    ? "cannot run the checks: " + child.error
                  : child.signaled  ? "the checks died outside an op: " + signal_name(child.signal)
                  : child.timed_out ? "the checks hung outside an op"
                                    : "the checks could not run (exit status " + std::to_string(child.exit_code) +
                                          "; see the messages above)";
    break;
  }
  return run;
}

int cmd_certify(int argc, char** argv) {
  std::vector<OptionSpec> specs = {
      {"--device", true, "only this device or device type (repeatable; default: the plugin's)"},
      {"--op", true, "only this op (repeatable)"},
      {"--dtype", true, "only this dtype (repeatable)"},
      {"--seed", true, "seed of the sample inputs (default 20240601)"},
      {"--no-gradcheck", false, "skip the gradient checks"},
      {"--timeout", true, "seconds an op may run without progress before it counts as hung (default 120)"},
      {"--guard-bytes", true, "canary bytes around every allocation (default 4096; 0: no guard mode)"},
      {"--plugin-path", true, "colon-separated directories to find dependencies in (default: $TESSERA_PLUGIN_PATH)"},
      {"--certificate", true, "write the JSON certificate to this file"},
      {"--require-complete", false, "exit 1 unless the certificate is complete"},
      {"--json", false, "print the certificate as JSON instead of the report"},
      {"--help", false, "this help"},
  };
  Args args;
  if (!parse_args("certify", argc, argv, 2, specs, &args)) return kExitUsage;
  if (args.has("--help")) {
    print_usage(specs);
    return kExitOk;
  }
  if (args.positional.size() != 1) {
    std::fprintf(stderr, "usage: tessera certify [options] PLUGIN.so\n");
    return kExitUsage;
  }
  auto number = [&](const char* opt, double def, double* out) {
    *out = def;
    if (!args.values.count(opt)) return true;
    char* end = nullptr;
    std::string v = args.value(opt);
    *out = std::strtod(v.c_str(), &end);
    if (v.empty() || *end || !(*out >= 0)) {
      std::fprintf(stderr, "tessera certify: %s needs a non-negative number, got '%s'\n", opt, v.c_str());
      return false;
    }
    return true;
  };
  double timeout = 0, guard = 0;
  if (!number("--timeout", 120, &timeout) || !number("--guard-bytes", 4096, &guard)) return kExitUsage;
  if (timeout <= 0 || static_cast<uint64_t>(guard) % 64 != 0) {
    std::fprintf(stderr, "tessera certify: --timeout must be positive and --guard-bytes a multiple of 64\n");
    return kExitUsage;
  }
  for (const std::string& s : args.lists["--dtype"]) {
    tsr_dtype_t dt;
    if (!parse_dtype(s, &dt)) {
      std::fprintf(stderr, "tessera certify: unknown dtype '%s'\n", s.c_str());
      return kExitUsage;
    }
  }
  std::error_code ec;
  const fs::path so = fs::absolute(args.positional[0], ec).lexically_normal();
  if (ec || !fs::is_regular_file(so, ec)) {
    std::fprintf(stderr, "tessera certify: %s is not a file\n", args.positional[0].c_str());
    return kExitUsage;
  }
  const tsr_api_t* api = core_api();
  if (!api) {
    std::fprintf(stderr, "tessera certify: the core does not speak ABI major %d\n", TSR_ABI_MAJOR);
    return kExitInternal;
  }
  setenv("TESSERA_LOG_LEVEL", "error", 0);
  const std::string seed = args.values.count("--seed") ? args.value("--seed") : "20240601";

  json cert;
  cert["certificate_version"] = 1;
  cert["created"] = utc_now();
  cert["core"] = {{"version", api->version_string()},
                  {"abi", std::to_string(TSR_ABI_VERSION_MAJOR(api->abi_version)) + "." +
                              std::to_string(TSR_ABI_VERSION_MINOR(api->abi_version))}};
  std::string hash_error;
  json plugin = {{"path", so.string()}, {"size_bytes", fs::file_size(so, ec)}};
  std::string sha = sha256_file(so.string(), &hash_error);
  plugin["sha256"] = sha.empty() ? json(nullptr) : json(sha);
  cert["seed"] = seed;
  cert["guard_bytes"] = static_cast<uint64_t>(guard);
  cert["gradcheck"] = !args.has("--no-gradcheck");

  // 1. check-plugin.
  std::vector<std::string> check_argv = {"check-plugin", "--json", "--timeout", std::to_string(timeout)};
  if (args.values.count("--plugin-path")) {
    check_argv.push_back("--plugin-path");
    check_argv.push_back(args.value("--plugin-path"));
  }
  check_argv.push_back(so.string());
  ChildOutcome checked = run_subcommand(check_argv, timeout * 3, false);
  json report;
  try {
    report = json::parse(checked.output);
  } catch (const std::exception&) {
    std::fprintf(stderr, "tessera certify: check-plugin gave no report (%s)\n",
                 checked.signaled ? signal_name(checked.signal).c_str() : checked.error.c_str());
    return kExitInternal;
  }
  const std::string load_status = report.value("status", std::string("error"));
  if (report.contains("plugin") && report["plugin"].is_object()) {
    plugin["name"] = report["plugin"].value("name", "");
    plugin["version"] = report["plugin"].value("version", "");
  }
  plugin["abi"] = report.value("abi", json::object());
  plugin["load"] = {{"status", load_status}, {"message", report.value("message", "")},
                    {"notes", report.value("notes", json::array())}};
  cert["plugin"] = plugin;

  // 2. What to check.
  Plan plan;
  std::string plan_error;
  if (load_status == "loaded" && !plan_checks(report, so.string(), args.lists["--device"], args.lists["--op"], &plan,
                                              &plan_error)) {
    std::fprintf(stderr, "tessera certify: %s\n", plan_error.c_str());
    return kExitFailure;
  }

  // 3. The checks, in children that pick up after a crash.
  std::vector<Row> rows;
  std::vector<conf::CheckResult> results;
  json devices = json::array();
  std::string run_error;
  const bool nothing_to_check =
      load_status == "loaded" && (plan.devices.empty() || (plan.ops.empty() && plan.library));
  if (load_status == "loaded" && !nothing_to_check) {
    std::vector<std::string> extra = {"--seed", seed};
    for (const std::string& d : args.lists["--dtype"]) extra.insert(extra.end(), {"--dtype", d});
    if (args.has("--no-gradcheck")) extra.push_back("--no-gradcheck");
    if (args.values.count("--plugin-path")) extra.insert(extra.end(), {"--plugin-path", args.value("--plugin-path")});
    ChecksRun run = run_checks_in_children(so.string(), plan, extra, timeout, static_cast<uint64_t>(guard));
    rows = std::move(run.rows);
    results = std::move(run.results);
    devices = std::move(run.devices);
    run_error = run.error;
  }

  // 4. The verdict.
  Totals t = totals(rows, results);
  std::string verdict;
  int rc = kExitOk;
  if (load_status != "loaded") {
    verdict = load_status;  // refused, unusable, crashed, hung, error
    rc = load_status == "crashed" || load_status == "hung" ? kExitCrashed
         : load_status == "error"                          ? kExitInternal
                                                           : kExitFailure;
  } else if (!run_error.empty()) {
    verdict = "error";
    rc = kExitInternal;
  } else if (nothing_to_check && plan.untested.empty()) {
    verdict = "empty";  // registers nothing that could be checked
    rc = kExitFailure;
  } else if (t.rows[static_cast<int>(Verdict::Crashed)]) {
    verdict = "crashed";
    rc = kExitCrashed;
  } else if (t.rows[static_cast<int>(Verdict::Failed)]) {
    verdict = "failed";
    rc = kExitFailure;
  } else if (t.rows[static_cast<int>(Verdict::Partial)] || t.rows[static_cast<int>(Verdict::NotImplemented)] ||
             !plan.untested.empty()) {
    verdict = "partial";
    rc = args.has("--require-complete") ? kExitFailure : kExitOk;
  } else {
    verdict = "complete";
  }
  cert["devices"] = devices;
  cert["verdict"] = verdict;
  if (!run_error.empty()) cert["error"] = run_error;
  cert["summary"] = totals_json(t);
  cert["untested_ops"] = plan.untested;
  json jrows = json::array();
  for (const Row& r : rows) jrows.push_back(row_json(r));
  cert["ops"] = jrows;
  json problems = json::array();  // failures and missing kernels, with their messages
  for (const conf::CheckResult& r : results)
    if (r.outcome == conf::Outcome::Fail || r.missing_kernel) problems.push_back(result_json(r));
  cert["problems"] = problems;

  if (args.values.count("--certificate")) {
    std::ofstream out(args.value("--certificate"));
    out << cert.dump(2) << "\n";
    if (!out) {
      std::fprintf(stderr, "tessera certify: cannot write %s\n", args.value("--certificate").c_str());
      return kExitInternal;
    }
  }
  if (args.has("--json")) {
    std::printf("%s\n", cert.dump(2).c_str());
    return rc;
  }
  std::printf("plugin:  %s%s%s\n", so.c_str(), plugin.contains("name") ? "  " : "",
              plugin.contains("name") ? (plugin["name"].get<std::string>() + " " + plugin["version"].get<std::string>()).c_str()
                                      : "");
  std::printf("sha256:  %s\n", sha.empty() ? hash_error.c_str() : sha.c_str());
  const json& abi = plugin["abi"];
  auto abi_str = [&](const char* k) {
    return abi.contains(k) && abi[k].is_string() ? abi[k].get<std::string>() : std::string("unknown");
  };
  std::printf("abi:     binary %s, manifest %s, core %s\n", abi_str("binary").c_str(), abi_str("manifest").c_str(),
              abi_str("core").c_str());
  for (const json& n : plugin["load"]["notes"]) std::printf("note:    %s\n", n.get<std::string>().c_str());
  std::printf("load:    %s%s%s\n", load_status.c_str(), report.value("message", "").empty() ? "" : ": ",
              report.value("message", "").c_str());
  if (!devices.empty()) {
    std::string d;
    for (const json& x : devices)
      d += (d.empty() ? "" : ", ") + x.value("device", "") +
           (x.contains("description") ? " (" + x["description"].get<std::string>() + ")" : "");
    std::printf("devices: %s\n", d.c_str());
  }
  std::printf("checks:  seed %s, guard bytes %llu, gradchecks %s\n\n", seed.c_str(),
              static_cast<unsigned long long>(guard), args.has("--no-gradcheck") ? "off" : "on");
  if (!rows.empty()) print_report(rows, results, t);
  if (!plan.untested.empty()) {
    std::printf("\nops of the plugin without test cases (ship NAME.tests.json, see docs/conformance.md):\n");
    for (const std::string& o : plan.untested) std::printf("  %s\n", o.c_str());
  }
  if (!run_error.empty()) std::printf("\nerror: %s\n", run_error.c_str());
  std::printf("\nverdict: %s\n", verdict == "complete" ? "COMPLETE" : verdict == "partial" ? "PARTIAL" : verdict == "failed" ? "FAILED" : verdict == "crashed" ? "CRASHED" : verdict == "refused" ? "REFUSED" : verdict == "unusable" ? "UNUSABLE" : verdict == "empty" ? "NOTHING TO CERTIFY (the plugin registers no kernels)" : ("ERROR (" + verdict + ")").c_str());
  if (args.values.count("--certificate")) std::printf("certificate: %s\n", args.value("--certificate").c_str());
  return rc;
}

}  // namespace tessera_cli
