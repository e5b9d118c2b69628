// What `tessera conformance` and `tessera certify` share: staging a --plugin into a private
// directory that is removed on every exit (signals and crashes included), choosing devices,
// the plugins' own OpInfos, and one accounting of the results:
//
//   conforms         every listed dtype ran every check and passed
//   partial          some dtypes (or some checks, e.g. a backward) reach kernels the device lacks
//   not implemented  no listed dtype runs on the device
//   failed           a check failed (wrong values, a bad status, damaged guard bytes)
//   crashed          the process died or hung in the op (certify runs ops in child processes)
#pragma once

#include <string>
#include <vector>

#include "cli.hpp"
#include "runner.hpp"

namespace tessera_cli {

// A private temporary directory, removed with its files when the object dies, and also when
// the process ends by a signal (SIGINT, SIGTERM, SIGSEGV, ...): a handler deletes the files
// registered with add_file() using only async-signal-safe calls, then re-raises the signal.
class TempDir {
 public:
  TempDir() = default;
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir();
  bool create(const char* prefix);  // $TMPDIR/<prefix>-XXXXXX
  // Registers a file created inside the directory for removal on a signal.
  void add_file(const std::string& path);
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Names what the process is doing for a crash report: a fatal signal (SIGSEGV, ...) prints
// "tessera: crashed (SIGSEGV) while running <what>" to stderr before the process dies.
void set_crash_context(const std::string& what);
// In a forked child: the parent's directories are not the child's to remove.
void forget_cleanup_in_child();

// Copies plugin `so` and its manifest (and NAME.tests.json when present) into dir; returns the
// copy's path, or "" with *error set.
std::string stage_plugin(const std::string& so, TempDir& dir, std::string* error);

bool parse_dtype(const std::string& s, tsr_dtype_t* out);

// The devices named by --device values ("cuda:0" or a whole type "cuda"; all when empty);
// false (after printing why, prefixed by `cmd`) on an unknown one.
bool select_devices(const char* cmd, tsr_runtime_t* rt, const std::vector<std::string>& names,
                    std::vector<tsr::Device>* out);

// The OpInfos the loaded plugins ship (NAME.tests.json beside each loaded NAME.so).
// Malformed files are reported in *errors.
std::vector<tsr::conformance::OpInfo> plugin_opinfos(const Inventory& inv, std::vector<std::string>* errors);

enum class Verdict { Conforms, Partial, NotImplemented, Failed, Crashed };
const char* verdict_name(Verdict v);  // "conforms", "partial", "not implemented", "failed", "crashed"

// One op on one device.
struct Row {
  std::string op, device;
  Verdict verdict = Verdict::Conforms;
  std::vector<std::string> passed, partial, not_implemented, failed;  // dtypes
  std::string reason;  // why partial / not implemented / crashed (the first missing kernel, the signal)
  size_t checks = 0;
};

Row summarize(const std::string& op, const std::string& device,
              const std::vector<tsr::conformance::CheckResult>& results);
// A row for an op during which the child process died.
Row crashed_row(const std::string& op, const std::string& device, const std::string& how);

struct Totals {
  size_t checks = 0, passed = 0, failed = 0, skipped = 0;
  size_t rows[5] = {0, 0, 0, 0, 0};  // by Verdict
};
Totals totals(const std::vector<Row>& rows, const std::vector<tsr::conformance::CheckResult>& results);

json result_json(const tsr::conformance::CheckResult& r);
json row_json(const Row& r);
json totals_json(const Totals& t);

// The table, the failures, what is not implemented and why, and the summary line.
void print_report(const std::vector<Row>& rows, const std::vector<tsr::conformance::CheckResult>& results,
                  const Totals& t);

// ---- running the checks crash-proof (certify.cpp; certify and check-plugin --smoke) -------------

// What to check for a plugin, from its check-plugin --json report.
struct Plan {
  bool library = false;               // registers no device type (an op library)
  std::vector<std::string> devices;  // --device values for the children
  std::vector<std::string> ops;      // --op values (empty: every OpInfo)
  std::vector<std::string> untested;  // ops of the plugin nobody has test cases for
};
// Devices: device_args, else the plugin's device types, else the device types its kernels are
// for. Ops: op_args, else every OpInfo (a device backend), else the ops it has kernels or test
// cases for (an op library). False with *error when its tests file is malformed.
bool plan_checks(const json& report, const std::string& so, const std::vector<std::string>& device_args,
                 const std::vector<std::string>& op_args, Plan* plan, std::string* error);

struct ChecksRun {
  std::vector<Row> rows;
  std::vector<tsr::conformance::CheckResult> results;
  json devices = json::array();  // the children's DEVICE lines: name, description, properties
  std::string error;             // the checks could not run (not a crash inside an op)
};
// Runs `tessera conformance --plugin so` over the plan in forked children (extra: more
// arguments, e.g. --seed, --smoke) with guard_bytes canaries; a child that dies or stalls for
// `timeout` seconds marks its op crashed and a new child goes on from the next one.
ChecksRun run_checks_in_children(const std::string& so, const Plan& plan, const std::vector<std::string>& extra,
                                 double timeout, uint64_t guard_bytes);

}  // namespace tessera_cli
