// `tessera`: the command-line front end of the runtime. This file only dispatches: each
// subcommand is one row of kCommands and lives in its own file.
#include <cstdio>
#include <cstring>
#include <string>

#include "cli.hpp"

namespace tessera_cli {
namespace {

int cmd_version(int argc, char** argv);
int cmd_help(int argc, char** argv);

struct Command {
  const char* name;
  int (*run)(int argc, char** argv);  // argv[0] is the program, argv[1] the subcommand
  const char* summary;
};

// To add a subcommand: write cmd_NAME in its own file, declare it in cli.hpp, add a row here.
const Command kCommands[] = {
    {"info", cmd_info, "core version, ABI, devices, loaded and refused plugins, allocator config"},
    {"kernels", cmd_kernels, "op x device-type matrix of registered kernels and their dtypes"},
    {"ops", cmd_ops, "where each op is written: record, formula, kernels, SDK wrapper, OpInfo, docs (--where NAME)"},
    {"check-plugin", cmd_check_plugin, "load one plugin .so in a child process and report what it registers"},
    {"conformance", cmd_conformance, "check every op on every loaded device and dtype against a float64 CPU reference"},
    {"certify", cmd_certify, "certify a plugin: check-plugin, then conformance in child processes with guard bytes; JSON certificate"},
    {"new-plugin", cmd_new_plugin, "generate a buildable out-of-tree plugin project (--device NAME or --ops NAME)"},
    {"launch", cmd_launch, "start N processes of a program with the environment init_process_group reads (torchrun)"},
    {"train", cmd_train, "train a small GPT on addition (held-out accuracy) or on a text file (--text)"},
    {"run", cmd_run, "run a saved model (a traced graph with its weights, or an ONNX file): outputs, --bench latency"},
#ifdef TESSERA_HAVE_ONNX
    {"import-onnx", cmd_import_onnx, "import an ONNX model into a Tessera graph (--print the text, -o save the model)"},
    {"onnx-conformance", cmd_onnx_conformance, "run ONNX's backend node tests through the importer and the graph runner"},
#endif
    {"version", cmd_version, "print the core and ABI versions"},
    {"help", cmd_help, "this help"},
};

void usage(FILE* to) {
  std::fprintf(to,
               "usage: tessera <command> [options]\n"
               "       tessera <command> --help\n\ncommands:\n");
  for (const Command& c : kCommands) std::fprintf(to, "  %-14s %s\n", c.name, c.summary);
  std::fprintf(to,
               "\nenvironment: TESSERA_PLUGIN_PATH (plugin directories searched first), "
               "TESSERA_ALLOC_CONF,\n             TESSERA_LOG_LEVEL (error|warn|info|debug)\n");
}

int cmd_help(int, char**) {
  usage(stdout);
  return kExitOk;
}

int cmd_version(int argc, char** argv) {
  Args args;
  if (!parse_args("version", argc, argv, 2, {{"--help", false, "this help"}}, &args)) return kExitUsage;
  if (args.has("--help")) {
    std::printf("usage: tessera version\n");
    return kExitOk;
  }
  const tsr_api_t* api = core_api();
  if (!api) {
    std::fprintf(stderr, "tessera: the core does not speak ABI major %d\n", TSR_ABI_MAJOR);
    return kExitInternal;
  }
  std::printf("tessera %s (ABI %u.%u; command built against ABI %d.%d)\n", api->version_string(),
              TSR_ABI_VERSION_MAJOR(api->abi_version), TSR_ABI_VERSION_MINOR(api->abi_version), TSR_ABI_MAJOR,
              TSR_ABI_MINOR);
  return kExitOk;
}

}  // namespace
}  // namespace tessera_cli

int main(int argc, char** argv) {
  using namespace tessera_cli;
  if (argc < 2) {
    usage(stderr);
    return kExitUsage;
  }
  const char* sub = argv[1];
  if (!std::strcmp(sub, "--help") || !std::strcmp(sub, "-h")) return cmd_help(argc, argv);
  if (!std::strcmp(sub, "--version")) return cmd_version(argc, argv);
  for (const Command& c : kCommands)
    if (!std::strcmp(sub, c.name)) {
      try {
        return c.run(argc, argv);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "tessera %s: %s\n", c.name, e.what());
        return kExitInternal;
      }
    }
  std::fprintf(stderr, "tessera: unknown command '%s'\n\n", sub);
  usage(stderr);
  return kExitUsage;
}
