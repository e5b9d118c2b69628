// Shared by `tessera conformance` and `tessera certify`: see conformance_report.hpp.
#include "conformance_report.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace fs = std::filesystem;
namespace conf = tsr::conformance;

namespace tessera_cli {

// ---- temporary directories that disappear on every exit --------------------------------------

namespace {

// What the signal handler removes: fixed-size C strings (no allocation in the handler).
constexpr int kMaxCleanupPaths = 64;
constexpr size_t kMaxPathLen = 4096;
char g_cleanup[kMaxCleanupPaths][kMaxPathLen];
volatile sig_atomic_t g_cleanup_count = 0;
bool g_handlers_installed = false;
const int kCleanupSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

char g_crash_context[512];

void write_str(const char* s) {
  ssize_t r = ::write(2, s, std::strlen(s));
  (void)r;
}

void cleanup_handler(int sig) {
  // Files first (registered after their directory), then directories.
  for (int i = g_cleanup_count - 1; i >= 0; --i)
    if (g_cleanup[i][0] && ::unlink(g_cleanup[i]) != 0) ::rmdir(g_cleanup[i]);
  const bool fault = sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL || sig == SIGABRT;
  if (fault && g_crash_context[0]) {
    write_str("tessera: crashed (");
    write_str(sig == SIGSEGV ? "SIGSEGV" : sig == SIGBUS ? "SIGBUS" : sig == SIGFPE ? "SIGFPE" : sig == SIGILL ? "SIGILL" : "SIGABRT");
    write_str(") while running ");
    write_str(g_crash_context);
    write_str("\n");
  }
  signal(sig, SIG_DFL);
  raise(sig);
}

void register_cleanup(const std::string& path) {
  if (!g_handlers_installed) {
    for (int s : kCleanupSignals) {
      struct sigaction sa;
      std::memset(&sa, 0, sizeof(sa));
      sa.sa_handler = cleanup_handler;
      sa.sa_flags = SA_RESETHAND;
      sigemptyset(&sa.sa_mask);
      sigaction(s, &sa, nullptr);
    }
    g_handlers_installed = true;
  }
  if (g_cleanup_count >= kMaxCleanupPaths || path.size() >= kMaxPathLen) return;
  std::memcpy(g_cleanup[g_cleanup_count], path.c_str(), path.size() + 1);
  g_cleanup_count = g_cleanup_count + 1;
}

void unregister_cleanup(const std::string& prefix) {
  for (int i = 0; i < g_cleanup_count; ++i)
    if (std::strncmp(g_cleanup[i], prefix.c_str(), prefix.size()) == 0) g_cleanup[i][0] = '\0';
}

}  // namespace

void set_crash_context(const std::string& what) {
  size_t n = std::min(what.size(), sizeof(g_crash_context) - 1);
  std::memcpy(g_crash_context, what.data(), n);
  g_crash_context[n] = '\0';
}

void forget_cleanup_in_child() {
  g_cleanup_count = 0;
  g_crash_context[0] = '\0';
}

bool TempDir::create(const char* prefix) {
  const char* tmp = std::getenv("TMPDIR");
  std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/" + prefix + "-XXXXXX";
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (!mkdtemp(buf.data())) return false;
  path_ = buf.data();
  register_cleanup(path_);
  return true;
}

void TempDir::add_file(const std::string& path) { register_cleanup(path); }

TempDir::~TempDir() {
  if (path_.empty()) return;
  unregister_cleanup(path_);
  std::error_code ec;
  fs::remove_all(path_, ec);
}

std::string stage_plugin(const std::string& so, TempDir& dir, std::string* error) {
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
  fs::path dst = fs::path(dir.path()) / src.filename();
  if (fs::exists(dst, ec)) {
    *error = so + ": two --plugin files are named " + src.filename().string();
    return "";
  }
  fs::path tests = src;
  tests.replace_extension(".tests.json");
  std::vector<std::pair<fs::path, fs::path>> copies = {{src, dst}, {manifest, fs::path(dst).replace_extension(".json")}};
  if (fs::is_regular_file(tests, ec)) copies.emplace_back(tests, fs::path(dst).replace_extension(".tests.json"));
  for (const auto& [from, to] : copies) {
    fs::copy_file(from, to, ec);
    if (ec) {
      *error = "cannot copy " + from.string() + ": " + ec.message();
      return "";
    }
    dir.add_file(to.string());
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

bool select_devices(const char* cmd, tsr_runtime_t* rt, const std::vector<std::string>& names,
                    std::vector<tsr::Device>* out) {
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
        std::fprintf(stderr, "tessera %s: --device %s: %s\n", cmd, n.c_str(), status_text(st).c_str());
        return false;
      }
      for (const tsr::Device& d : all)
        if (d.d.type == type) match.push_back(d);
    } else {
      tsr_device_t d{};
      if (tsr_status_t st = api->device_parse(rt, n.c_str(), &d)) {
        std::fprintf(stderr, "tessera %s: --device %s: %s\n", cmd, n.c_str(), status_text(st).c_str());
        return false;
      }
      for (const tsr::Device& x : all)
        if (x == tsr::Device(d)) match.push_back(x);
    }
    if (match.empty()) {
      std::fprintf(stderr, "tessera %s: --device %s: no such device is loaded\n", cmd, n.c_str());
      return false;
    }
    for (const tsr::Device& d : match)
      if (std::find(out->begin(), out->end(), d) == out->end()) out->push_back(d);
  }
  return true;
}

std::vector<conf::OpInfo> plugin_opinfos(const Inventory& inv, std::vector<std::string>* errors) {
  std::vector<conf::OpInfo> v;
  for (const PluginEntry& p : inv.plugins) {
    if (!p.loaded || p.path.empty()) continue;
    std::string error;
    std::vector<conf::OpInfo> mine =
        conf::opinfos_from_tests_file(fs::path(p.path).replace_extension(".tests.json").string(), &error);
    if (!error.empty()) errors->push_back(error);
    for (conf::OpInfo& o : mine) v.push_back(std::move(o));
  }
  return v;
}

// ---- accounting --------------------------------------------------------------------------------

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::Conforms:
      return "conforms";
    case Verdict::Partial:
      return "partial";
    case Verdict::NotImplemented:
      return "not implemented";
    case Verdict::Failed:
      return "failed";
    case Verdict::Crashed:
      return "crashed";
  }
  return "?";
}

Row summarize(const std::string& op, const std::string& device, const std::vector<conf::CheckResult>& rs) {
  Row row;
  row.op = op;
  row.device = device;
  row.checks = rs.size();
  struct PerDtype {
    size_t forward_missing = 0, missing = 0, failed = 0;
  };
  std::vector<std::string> order;
  std::map<std::string, PerDtype> by;
  for (const conf::CheckResult& r : rs) {
    std::string dt = r.dtype.empty() ? "(op)" : r.dtype;
    if (!by.count(dt)) order.push_back(dt);
    PerDtype& p = by[dt];
    if (r.outcome == conf::Outcome::Fail) ++p.failed;
    if (r.outcome == conf::Outcome::Skip && r.missing_kernel) {
      ++p.missing;
      if (r.check == "forward") ++p.forward_missing;
      if (row.reason.empty()) row.reason = r.check + " " + r.dtype + ": " + r.message;
    }
  }
  for (const std::string& dt : order) {
    const PerDtype& p = by[dt];
    if (p.failed)
      row.failed.push_back(dt);
    else if (p.forward_missing)  // some inputs cannot run (empty shapes often launch nothing)
      row.not_implemented.push_back(dt);
    else if (p.missing)
      row.partial.push_back(dt);
    else
      row.passed.push_back(dt);
  }
  if (!row.failed.empty())
    row.verdict = Verdict::Failed;
  else if (!row.not_implemented.empty() && row.passed.empty() && row.partial.empty())
    row.verdict = Verdict::NotImplemented;
  else if (!row.not_implemented.empty() || !row.partial.empty())
    row.verdict = Verdict::Partial;
  else
    row.verdict = Verdict::Conforms;
  if (row.verdict == Verdict::Conforms || row.verdict == Verdict::Failed) row.reason.clear();
  return row;
}

Row crashed_row(const std::string& op, const std::string& device, const std::string& how) {
  Row row;
  row.op = op;
  row.device = device;
  row.verdict = Verdict::Crashed;
  row.reason = how;
  return row;
}

Totals totals(const std::vector<Row>& rows, const std::vector<conf::CheckResult>& results) {
  Totals t;
  t.checks = results.size();
  for (const conf::CheckResult& r : results) {
    t.passed += r.outcome == conf::Outcome::Pass;
    t.failed += r.outcome == conf::Outcome::Fail;
    t.skipped += r.outcome == conf::Outcome::Skip;
  }
  for (const Row& r : rows) ++t.rows[static_cast<int>(r.verdict)];
  return t;
}

json result_json(const conf::CheckResult& r) {
  return {{"op", r.op},
          {"device", r.device},
          {"dtype", r.dtype},
          {"check", r.check},
          {"sample", r.sample},
          {"outcome", conf::outcome_name(r.outcome)},
          {"missing_kernel", r.missing_kernel},
          {"message", r.message}};
}

json row_json(const Row& r) {
  return {{"op", r.op},
          {"device", r.device},
          {"verdict", verdict_name(r.verdict)},
          {"passed", r.passed},
          {"partial", r.partial},
          {"not_implemented", r.not_implemented},
          {"failed", r.failed},
          {"reason", r.reason},
          {"checks", r.checks}};
}

json totals_json(const Totals& t) {
  return {{"checks", t.checks},
          {"passed", t.passed},
          {"failed", t.failed},
          {"skipped", t.skipped},
          {"op_devices", t.rows[0] + t.rows[1] + t.rows[2] + t.rows[3] + t.rows[4]},
          {"conforms", t.rows[static_cast<int>(Verdict::Conforms)]},
          {"partial", t.rows[static_cast<int>(Verdict::Partial)]},
          {"not_implemented", t.rows[static_cast<int>(Verdict::NotImplemented)]},
          {"failed_ops", t.rows[static_cast<int>(Verdict::Failed)]},
          {"crashed", t.rows[static_cast<int>(Verdict::Crashed)]}};
}

namespace {

std::string short_list(const std::vector<std::string>& dts) {
  if (dts.empty()) return "-";
  std::string s;
  for (const std::string& d : dts) {
    tsr_dtype_t dt;
    s += (s.empty() ? "" : " ") + (parse_dtype(d, &dt) ? dtype_short_name(dt) : d);
  }
  return s;
}

std::string one_line(std::string s, size_t max = 160) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (s.size() > max) s = s.substr(0, max - 3) + "...";
  return s;
}

}  // namespace

void print_report(const std::vector<Row>& rows, const std::vector<conf::CheckResult>& results, const Totals& t) {
  std::printf("%-24s %-10s %-16s %-36s %s\n", "op", "device", "verdict", "dtypes passed", "partial / not impl. / failed");
  for (const Row& r : rows) {
    std::string other;
    if (!r.partial.empty()) other += "partial: " + short_list(r.partial);
    if (!r.not_implemented.empty()) other += (other.empty() ? "" : "; ") + ("not impl.: " + short_list(r.not_implemented));
    if (!r.failed.empty()) other += (other.empty() ? "" : "; ") + ("FAILED: " + short_list(r.failed));
    std::printf("%-24s %-10s %-16s %-36s %s\n", r.op.c_str(), r.device.c_str(), verdict_name(r.verdict),
                short_list(r.passed).c_str(), other.empty() ? "-" : other.c_str());
  }
  bool any_missing = false;
  for (const Row& r : rows)
    if ((r.verdict == Verdict::Partial || r.verdict == Verdict::NotImplemented) && !r.reason.empty()) {
      if (!any_missing) std::printf("\nnot implemented (the first missing kernel of each op):\n");
      any_missing = true;
      std::printf("  %s on %s: %s\n", r.op.c_str(), r.device.c_str(), one_line(r.reason).c_str());
    }
  bool any_crash = false;
  for (const Row& r : rows)
    if (r.verdict == Verdict::Crashed) {
      if (!any_crash) std::printf("\ncrashes:\n");
      any_crash = true;
      std::printf("  CRASH %s on %s: %s\n", r.op.c_str(), r.device.c_str(), r.reason.c_str());
    }
  if (t.failed) {
    std::printf("\nfailures:\n");
    for (const conf::CheckResult& r : results)
      if (r.outcome == conf::Outcome::Fail)
        std::printf("  FAIL %s on %s %s [%s] %s: %s\n", r.op.c_str(), r.device.c_str(),
                    r.dtype.empty() ? "-" : r.dtype.c_str(), r.check.c_str(), r.sample.c_str(), r.message.c_str());
  }
  // Skips that are not missing kernels (e.g. no floating input to differentiate), by reason.
  std::map<std::string, size_t> other_skips;
  for (const conf::CheckResult& r : results)
    if (r.outcome == conf::Outcome::Skip && !r.missing_kernel) {
      std::string why = r.message;
      if (r.check == "inplace") why = "in-place form: the result does not fit self";
      ++other_skips[r.check + ": " + one_line(why, 100)];
    }
  if (!other_skips.empty()) {
    std::printf("\nchecks that do not apply (skipped, not counted against the device):\n");
    for (const auto& [why, n] : other_skips) std::printf("  %4zu  %s\n", n, why.c_str());
  }
  const size_t pairs = t.rows[0] + t.rows[1] + t.rows[2] + t.rows[3] + t.rows[4];
  std::printf(
      "\n%zu checks: %zu passed, %zu failed, %zu skipped\n"
      "%zu op/device pairs: %zu conform, %zu partial, %zu not implemented, %zu failed, %zu crashed\n",
      t.checks, t.passed, t.failed, t.skipped, pairs, t.rows[0], t.rows[1], t.rows[2], t.rows[3], t.rows[4]);
}

}  // namespace tessera_cli
