// libFuzzer target: the plugin manifest parser, through the loader as a host meets it. Each
// input is written as the manifest (fuzz.json) of a plugin file (fuzz.so) in a private
// directory, and a runtime is created over that directory alone. Built by tools/fuzz.sh with
// clang (TESSERA_LIBFUZZER=ON), under ASan+UBSan.
//
// fuzz.so is an empty file, so whatever the manifest says the plugin is refused (by the manifest
// checks, the ABI check, its dependencies, or at last the ELF check): the target traps unless
// runtime_create succeeds and records exactly that refusal, with a reason and a name free of
// control characters (they reach logs and `tessera info`).
#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tessera/tessera.hpp"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

bool printable(const char* s) {
  for (; s && *s; ++s)
    if (static_cast<unsigned char>(*s) < 0x20 || *s == 0x7f) return false;
  return true;
}

struct Dir {
  std::string dir, so, manifest;
  Dir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = std::string(tmp && *tmp ? tmp : "/tmp") + "/tsr_fuzz_manifest_XXXXXX";
    require(mkdtemp(templ.data()) != nullptr);  // mode 0700: a directory the loader trusts
    dir = templ;
    so = dir + "/fuzz.so";
    manifest = dir + "/fuzz.json";
    int fd = open(so.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    require(fd >= 0);
    close(fd);
  }
  ~Dir() {
    unlink(manifest.c_str());
    unlink(so.c_str());
    rmdir(dir.c_str());
  }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Dir d;
  const tsr_api_t* api = tsr::api();
  int fd = open(d.manifest.c_str(), O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  require(fd >= 0);
  for (size_t off = 0; off < size;) {
    ssize_t w = write(fd, data + off, size - off);
    require(w > 0);
    off += static_cast<size_t>(w);
  }
  close(fd);
  tsr_runtime_options_t opts{};
  opts.struct_size = sizeof opts;
  opts.plugin_path = d.dir.c_str();
  opts.no_default_plugins = 1;
  tsr_runtime_t* rt = nullptr;
  tsr_status_t st = api->runtime_create(&opts, &rt);
  require(st == nullptr && rt != nullptr);
  size_t ours = 0;
  for (size_t i = 0; i < api->plugin_count(rt); ++i) {
    tsr_plugin_record_t rec{};
    rec.struct_size = sizeof rec;
    require(api->plugin_record(rt, i, &rec) == nullptr);
    require(printable(rec.name) && printable(rec.version) && printable(rec.reason) && printable(rec.path));
    if (rec.path && d.so == rec.path) {
      ++ours;
      require(!rec.loaded && rec.reason && *rec.reason);
    }
  }
  require(ours == 1);
  api->runtime_destroy(rt);
  return 0;
}
