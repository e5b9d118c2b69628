// Option parsing shared by the subcommands: "--name", "--name value", "--name=value", and
// positional arguments ("--" ends the options).
#include <cstdio>
#include <cstring>

#include "cli.hpp"

namespace tessera_cli {

const std::vector<OptionSpec> kRuntimeOptions = {
    {"--plugin-path", true, "colon-separated plugin directories searched first (default: $TESSERA_PLUGIN_PATH)"},
    {"--no-default-plugins", false, "do not search the plugins/ directory installed beside the core"},
    {"--alloc-conf", true, "allocator configuration (default: $TESSERA_ALLOC_CONF)"},
};

bool parse_args(const char* command, int argc, char** argv, int first, const std::vector<OptionSpec>& specs,
                Args* out) {
  bool options_done = false;
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (options_done || a.size() < 2 || a[0] != '-') {
      out->positional.push_back(a);
      continue;
    }
    if (a == "--") {
      options_done = true;
      continue;
    }
    if (a == "-h") a = "--help";
    std::string name = a, value;
    bool inline_value = false;
    size_t eq = a.find('=');
    if (eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      inline_value = true;
    }
    const OptionSpec* spec = nullptr;
    for (const OptionSpec& s : specs)
      if (name == s.name) spec = &s;
    if (!spec) {
      std::fprintf(stderr, "tessera %s: unknown option '%s' (see tessera %s --help)\n", command, name.c_str(), command);
      return false;
    }
    if (!spec->takes_value) {
      if (inline_value) {
        std::fprintf(stderr, "tessera %s: option %s takes no value\n", command, name.c_str());
        return false;
      }
      out->flags.insert(name);
      continue;
    }
    if (!inline_value) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tessera %s: option %s needs a value\n", command, name.c_str());
        return false;
      }
      value = argv[++i];
    }
    out->values[name] = value;
    out->lists[name].push_back(value);
  }
  return true;
}

void print_options(const std::vector<OptionSpec>& specs) {
  for (const OptionSpec& s : specs) {
    std::string left = std::string(s.name) + (s.takes_value ? " VALUE" : "");
    std::printf("  %-24s %s\n", left.c_str(), s.help);
  }
}

bool parse_command(const char* command, const char* usage, int argc, char** argv, const std::vector<OptionSpec>& specs,
                   Args* args, int* rc) {
  if (!parse_args(command, argc, argv, 2, specs, args)) {
    *rc = kExitUsage;
    return false;
  }
  if (args->has("--help")) {
    std::printf("usage: tessera %s\n\n", usage);
    print_options(specs);
    *rc = kExitOk;
    return false;
  }
  if (!args->positional.empty()) {
    std::fprintf(stderr, "tessera %s: unexpected argument '%s'\n", command, args->positional[0].c_str());
    *rc = kExitUsage;
    return false;
  }
  return true;
}

}  // namespace tessera_cli
