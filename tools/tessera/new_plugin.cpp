// `tessera new-plugin --device NAME | --ops NAME [--dir DIR] [--force]`: writes a buildable
// out-of-tree plugin project (CMake against the installed Tessera, a test, a README) from the
// templates of tools/templates/<kind>/, which are compiled into this binary (gen_templates.py)
// so that an installed command needs no data files.
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "cli.hpp"

namespace fs = std::filesystem;

namespace tessera_cli {

// templates.cpp (generated): kTemplateFileCount triples of (kind, relative path, text).
extern const char* const kTemplateFiles[];
extern const size_t kTemplateFileCount;

namespace {

const char* const kUsage = "new-plugin --device NAME | --ops NAME [--dir DIR] [--force]";

// Names a plugin may not take: the built-in plugins (a second plugin of the same name is
// shadowed by the loader) and device types, and C++ keywords (NAME is a namespace in the code).
const char* const kReservedNames[] = {
    "cpu", "cuda", "sm100", "fabric", "host", "meta", "tessera", "tsr", "std", "alignas", "alignof", "and",
    "asm", "auto", "bool", "break", "case", "catch", "char", "class", "const", "constexpr", "continue",
    "decltype", "default", "delete", "do", "double", "else", "enum", "explicit", "export", "extern", "false",
    "float", "for", "friend", "goto", "if", "inline", "int", "long", "mutable", "namespace", "new", "noexcept",
    "not", "nullptr", "operator", "or", "private", "protected", "public", "register", "return", "short",
    "signed", "sizeof", "static", "struct", "switch", "template", "this", "throw", "true", "try", "typedef",
    "typeid", "typename", "union", "unsigned", "using", "virtual", "void", "volatile", "while", "xor"};

// Why NAME cannot be used, or "" when it can: a lowercase C identifier that starts with a letter
// (the device type, the plugin, the manifest and a C++ namespace all carry it).
std::string name_problem(const std::string& name) {
  if (name.empty()) return "the name is empty";
  if (name.size() > 40) return "the name is longer than 40 characters";
  if (!(name[0] >= 'a' && name[0] <= 'z')) return "the name must start with a lowercase letter";
  for (char ch : name)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_'))
      return "the name may hold only lowercase letters, digits and '_' (a lowercase C identifier)";
  for (const char* r : kReservedNames)
    if (name == r) return "'" + name + "' is reserved (a built-in plugin or device type, or a C++ keyword)";
  return "";
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char ch) { return static_cast<char>(std::toupper(ch)); });
  return s;
}

std::string substitute(std::string text, const std::vector<std::pair<std::string, std::string>>& vars) {
  for (const auto& [key, value] : vars)
    for (size_t at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size()))
      text.replace(at, key.size(), value);
  return text;
}

// "MAJOR.MINOR" of the core this command runs with (the generated project asks find_package for
// at least that), and its ABI version (written into the README's manifest example).
void core_versions(std::string* version, std::string* abi) {
  *version = "0.1";
  *abi = std::to_string(TSR_ABI_MAJOR) + "." + std::to_string(TSR_ABI_MINOR);
  const tsr_api_t* api = core_api();
  if (!api) return;
  *abi = std::to_string(TSR_ABI_VERSION_MAJOR(api->abi_version)) + "." +
         std::to_string(TSR_ABI_VERSION_MINOR(api->abi_version));
  std::string v = api->version_string();
  size_t dot = v.find('.');
  if (dot != std::string::npos) dot = v.find('.', dot + 1);
  *version = v.substr(0, dot);
}

// The install prefix of the running core (for the hint printed at the end): <prefix>/lib*/libtessera.so.
std::string core_prefix() {
  const std::string lib = core_library_path();
  if (lib.empty()) return "<tessera prefix>";
  fs::path libdir = fs::path(lib).parent_path();
  if (libdir.filename().string().find("-linux-gnu") != std::string::npos) libdir = libdir.parent_path();
  return libdir.parent_path().string();
}

}  // namespace

int cmd_new_plugin(int argc, char** argv) {
  const std::vector<OptionSpec> specs = {
      {"--device", true, "generate a device backend: device type NAME over host memory, allocator, copy, kernels"},
      {"--ops", true, "generate an op library: the op NAME::scale_add with meta, cpu kernel and backward"},
      {"--dir", true, "the project directory to create (default: ./tessera-NAME)"},
      {"--force", false, "write into DIR even when it exists and is not empty (overwrites template files)"},
      {"--help", false, "this help"},
  };
  Args args;
  int rc = kExitOk;
  if (!parse_command("new-plugin", kUsage, argc, argv, specs, &args, &rc)) return rc;
  if (args.has("--device") == args.has("--ops")) {
    std::fprintf(stderr, "tessera new-plugin: give exactly one of --device NAME and --ops NAME (usage: tessera %s)\n",
                 kUsage);
    return kExitUsage;
  }
  const std::string kind = args.has("--device") ? "device" : "ops";
  const std::string name = args.value("--" + kind);
  const std::string problem = name_problem(name);
  if (!problem.empty()) {
    std::fprintf(stderr, "tessera new-plugin: invalid name '%s': %s\n", name.c_str(), problem.c_str());
    return kExitUsage;
  }
  const fs::path dir = args.value("--dir", "tessera-" + name);
  std::error_code ec;
  if (fs::exists(dir, ec)) {
    if (!fs::is_directory(dir, ec)) {
      std::fprintf(stderr, "tessera new-plugin: %s exists and is not a directory\n", dir.c_str());
      return kExitUsage;
    }
    if (!fs::is_empty(dir, ec) && !args.has("--force")) {
      std::fprintf(stderr,
                   "tessera new-plugin: %s exists and is not empty (choose another --dir, or --force to write "
                   "the template files into it)\n",
                   dir.c_str());
      return kExitUsage;
    }
  }

  std::string version, abi;
  core_versions(&version, &abi);
  const std::vector<std::pair<std::string, std::string>> vars = {
      {"@NAME_UPPER@", upper(name)}, {"@NAME@", name}, {"@ABI@", abi}, {"@TESSERA_VERSION@", version}};
  size_t written = 0;
  for (size_t i = 0; i < kTemplateFileCount; ++i) {
    const char* const* t = kTemplateFiles + 3 * i;
    if (kind != t[0]) continue;
    const fs::path path = dir / substitute(t[1], vars);
    fs::create_directories(path.parent_path(), ec);
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << substitute(t[2], vars);
    out.close();
    if (ec || !out) {
      std::fprintf(stderr, "tessera new-plugin: cannot write %s%s%s\n", path.c_str(), ec ? ": " : "",
                   ec ? ec.message().c_str() : "");
      return kExitInternal;
    }
    ++written;
  }
  if (written == 0) {  // a build without templates: nothing to generate from
    std::fprintf(stderr, "tessera new-plugin: this tessera was built without '%s' templates\n", kind.c_str());
    return kExitInternal;
  }
  std::printf("wrote %zu files of a%s '%s' into %s\n\nnext:\n", written,
              kind == "device" ? " device backend" : "n op library", name.c_str(), dir.c_str());
  std::printf("  cmake -S %s -B %s/build -DCMAKE_PREFIX_PATH=%s\n", dir.c_str(), dir.c_str(), core_prefix().c_str());
  std::printf("  cmake --build %s/build && ctest --test-dir %s/build\n", dir.c_str(), dir.c_str());
  if (kind == "device")
    std::printf("  tessera conformance --plugin %s/build/tessera_%s.so --device %s\n", dir.c_str(), name.c_str(),
                name.c_str());
  else
    std::printf("  tessera check-plugin %s/build/tessera_%s.so\n", dir.c_str(), name.c_str());
  std::printf("(see %s/README.md)\n", dir.c_str());
  return kExitOk;
}

}  // namespace tessera_cli
