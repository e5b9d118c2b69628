// The `tessera` command: shared declarations of its small parts.
//   main.cpp             the subcommand table and dispatch (add a row to add a subcommand)
//   args.cpp             option parsing shared by every subcommand
//   runtime_session.cpp  creating a runtime from the common options; where the core lives
//   inventory.cpp        what a runtime holds (device types, ops, kernels, plugins) + JSON
//   dtype_names.cpp      dtype masks as names
//   child_process.cpp    run a function in a forked child with a pipe and a time limit
//   op_index.hpp         where ops are written outside the core (generated at build time)
//   info.cpp, kernels.cpp, ops.cpp, check_plugin.cpp, conformance.cpp, train.cpp, run.cpp   the subcommands
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/api.h"

namespace tessera_cli {

using json = nlohmann::json;

// Exit codes shared by the subcommands.
enum ExitCode : int {
  kExitOk = 0,
  kExitFailure = 1,   // the command ran and the answer is "no" (e.g. a plugin was refused)
  kExitUsage = 2,     // bad command line
  kExitCrashed = 3,   // check-plugin: the plugin crashed or hung in the child
  kExitInternal = 4,  // could not do the job (runtime creation failed, I/O error, ...)
};

// ---- args.cpp ------------------------------------------------------------------------------

struct OptionSpec {
  const char* name;  // "--json"
  bool takes_value;
  const char* help;
};

struct Args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values;              // options with a value
  std::set<std::string> flags;                            // options without one
  std::map<std::string, std::vector<std::string>> lists;  // every value of repeatable options
  bool has(const std::string& name) const { return flags.count(name) || values.count(name); }
  std::string value(const std::string& name, const std::string& fallback = "") const {
    auto it = values.find(name);
    return it == values.end() ? fallback : it->second;
  }
};

// Parses argv[first..argc) per `specs` (accepts "--opt value" and "--opt=value"). On error
// prints a message naming `command` to stderr and returns false.
bool parse_args(const char* command, int argc, char** argv, int first, const std::vector<OptionSpec>& specs, Args* out);
void print_options(const std::vector<OptionSpec>& specs);
// The start of a subcommand without positional arguments: parses argv[2..] per `specs`, prints
// "usage: tessera USAGE" and the options for --help, refuses positional arguments. Returns false
// when the command is done, with its exit code in *rc.
bool parse_command(const char* command, const char* usage, int argc, char** argv, const std::vector<OptionSpec>& specs,
                   Args* args, int* rc);

// Options every runtime-creating subcommand accepts.
extern const std::vector<OptionSpec> kRuntimeOptions;

// ---- runtime_session.cpp -------------------------------------------------------------------

const tsr_api_t* core_api();
// Path of the loaded libtessera and the plugin directory installed beside it.
std::string core_library_path();
std::string default_plugin_dir();
std::string status_text(tsr_status_t st);  // message of st (frees it); "" for NULL

// A runtime created from the common options (--plugin-path, --no-default-plugins,
// --alloc-conf), destroyed with the session.
class RuntimeSession {
 public:
  RuntimeSession() = default;
  RuntimeSession(const RuntimeSession&) = delete;
  RuntimeSession& operator=(const RuntimeSession&) = delete;
  ~RuntimeSession();
  // Prints the error to stderr and returns false on failure.
  bool open(const Args& args);
  tsr_runtime_t* get() const { return rt_; }
  // The directories searched, in order, and the allocator configuration in effect.
  const std::vector<std::string>& search_path() const { return search_path_; }
  const std::string& alloc_conf() const { return alloc_conf_; }
  bool alloc_conf_from_env() const { return alloc_conf_from_env_; }

 private:
  tsr_runtime_t* rt_ = nullptr;
  std::string plugin_path_, alloc_conf_;
  bool alloc_conf_from_env_ = false;
  std::vector<std::string> search_path_;
};

// ---- dtype_names.cpp -----------------------------------------------------------------------

// "float32", "bfloat16", ... ("dtypeN" for values without a name).
std::string dtype_full_name(int dtype);
// "f32", "bf16", ... for compact tables.
std::string dtype_short_name(int dtype);
// The dtypes of a kernel's dtype_mask (0 = every dtype).
std::vector<int> dtypes_in_mask(uint32_t mask);
// "float32, float64" / "f32 f64"; mask 0 gives "all".
std::string mask_to_names(uint32_t mask, bool short_names);

// ---- inventory.cpp -------------------------------------------------------------------------

struct KernelEntry {
  std::string op, device_type, name, plugin;
  int32_t device_type_id = 0, priority = 0;
  uint32_t dtype_mask = 0;
  bool has_predicate = false;
  bool operator<(const KernelEntry& o) const;
};

struct OpEntry {
  std::string name, schema;
  size_t num_outputs = 0;
  std::vector<KernelEntry> kernels;  // dispatch order (best first per device type)
  // Where the op comes from (op_source; empty on a core without it).
  std::string plugin;       // "" for the core's own ops
  std::string source_file;  // the core's record, relative to the source root
  int source_line = 0;
  bool composite = false;
  std::string formula;  // the backward formula's name, "" when none
};

struct DeviceTypeEntry {
  int32_t id = 0;
  std::string name;
  int32_t device_count = 0;
};

struct PluginEntry {
  std::string name, version, path, reason;
  bool loaded = false;
  int32_t score = 0;
};

struct Inventory {
  std::vector<DeviceTypeEntry> device_types;  // registered ones only
  std::vector<OpEntry> ops;
  std::vector<PluginEntry> plugins;  // loader records: loaded in load order, then refusals
};

Inventory collect_inventory(const tsr_api_t* api, tsr_runtime_t* rt);
// The ops named `only` (every op when empty), sorted by name. For an unknown name prints
// "tessera COMMAND: no op named ..." with similar names to stderr and returns false.
bool select_ops(Inventory& inv, const std::string& only, const char* command, std::vector<const OpEntry*>* out);

void to_json(json& j, const KernelEntry& k);
void from_json(const json& j, KernelEntry& k);
void to_json(json& j, const OpEntry& o);
void from_json(const json& j, OpEntry& o);
void to_json(json& j, const DeviceTypeEntry& d);
void from_json(const json& j, DeviceTypeEntry& d);
void to_json(json& j, const PluginEntry& p);
void from_json(const json& j, PluginEntry& p);

// ---- child_process.cpp ---------------------------------------------------------------------

struct ChildOutcome {
  std::string output;      // everything the child wrote to its pipe
  bool started = false;    // fork succeeded
  bool timed_out = false;  // killed with SIGKILL after the time limit
  bool signaled = false;
  int signal = 0;
  int exit_code = 0;
  std::string error;  // why the child could not be run
};

// Runs body(write_fd) in a forked child whose exit status is body's return value, collecting
// what it writes to write_fd; kills it after timeout_s (idle: after timeout_s without output,
// for a child that reports progress). The parent never runs `body`.
template <class F>
ChildOutcome run_in_child(F&& body, double timeout_s, bool idle = false);
ChildOutcome run_in_child_fn(int (*body)(int fd, void* ctx), void* ctx, double timeout_s, bool idle = false);
template <class F>
ChildOutcome run_in_child(F&& body, double timeout_s, bool idle) {
  using Fn = std::remove_reference_t<F>;
  return run_in_child_fn([](int fd, void* c) { return (*static_cast<Fn*>(c))(fd); },
                         const_cast<void*>(static_cast<const void*>(&body)), timeout_s, idle);
}

// "SIGSEGV" (or "signal N").
std::string signal_name(int sig);
// Writes all of s to fd (retrying short writes); false on error.
bool write_all(int fd, const std::string& s);

// ---- subcommands ---------------------------------------------------------------------------

int cmd_info(int argc, char** argv);
int cmd_certify(int argc, char** argv);
int cmd_launch(int argc, char** argv);
// `kernels --device D --reach` (kernels_reach.cpp), with the open session's runtime.
int kernels_reach(const Args& args, tsr_runtime_t* rt, const Inventory& inv);
int cmd_kernels(int argc, char** argv);
int cmd_ops(int argc, char** argv);
int cmd_check_plugin(int argc, char** argv);
int cmd_conformance(int argc, char** argv);
int cmd_train(int argc, char** argv);  // train.cpp, over tools/train
int cmd_run(int argc, char** argv);    // run.cpp: run a saved model (tsr::jit)
int cmd_new_plugin(int argc, char** argv);  // new_plugin.cpp, over tools/templates (templates.cpp)
#ifdef TESSERA_HAVE_ONNX
int cmd_import_onnx(int argc, char** argv);  // import_onnx.cpp, over tools/onnx
int cmd_onnx_conformance(int argc, char** argv);  // onnx_conformance.cpp: ONNX's node tests
#endif

}  // namespace tessera_cli
