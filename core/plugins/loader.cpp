// The plugin loader: finds plugin .so files and their JSON manifests, orders them by
// dependencies, and loads each one transactionally. Every refusal is recorded with its reason
// and the runtime keeps going.
#define BOOST_DLL_USE_STD_FS
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <boost/dll/shared_library.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "plugins/registrar.hpp"
#include "tessera/search_path.hpp"
#include "runtime/status.hpp"

namespace fs = std::filesystem;

namespace tsr::core {

namespace {

struct Candidate {
  std::string name, version, path, abi;
  std::vector<std::string> depends;
};

// Plugins are never unloaded before process exit: kernels, allocators and statuses they
// handed out may outlive any one runtime, and GPU runtimes dislike dlclose.
std::mutex g_libs_mutex;
std::vector<boost::dll::shared_library>* g_libs = new std::vector<boost::dll::shared_library>;

std::string core_plugin_dir() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&core_plugin_dir), &info) && info.dli_fname)
    return (fs::path(info.dli_fname).lexically_normal().parent_path() / "tessera" / "plugins").string();
  return "";
}

bool world_writable(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && (st.st_mode & S_IWOTH);
}

// The length of the well-formed UTF-8 sequence at s[i] (RFC 3629: no overlong forms, no
// surrogates, nothing past U+10FFFF), or 0.
size_t utf8_length(const std::string& s, size_t i) {
  auto at = [&](size_t k) { return i + k < s.size() ? static_cast<unsigned char>(s[i + k]) : 0u; };
  unsigned c = at(0);
  size_t n = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
  if (n == 0) return 0;
  unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80, hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
  if (at(1) < lo || at(1) > hi) return 0;
  for (size_t k = 2; k < n; ++k)
    if (at(k) < 0x80 || at(k) > 0xbf) return 0;
  return n;
}

// Text from a plugin, its manifest or the file system, made safe for a log line, a terminal
// (`tessera info` prints reasons) and JSON (`tessera info --json`): control characters (escape
// sequences, a newline forging a log line) and bytes that are not UTF-8 become \xNN.
std::string printable(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? (c >= 0x20 && c != 0x7f ? 1 : 0) : utf8_length(s, i);
    if (n) {
      out.append(s, i, n);
      i += n;
    } else {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    }
  }
  return out;
}

// `s` for a message: printable, quoted, and cut after 64 bytes (manifests are untrusted; a
// character cut in two is escaped by printable).
std::string quoted(const std::string& s) {
  constexpr size_t kMax = 64;
  return "'" + (s.size() > kMax ? printable(s.substr(0, kMax)) + "..." : printable(s)) + "'";
}

void refuse(Runtime* rt, const std::string& name, const std::string& version, const std::string& path,
            const std::string& reason, int32_t score = 0) {
  PluginRecord r;
  r.name = printable(name);
  r.version = printable(version);
  r.path = printable(path);
  r.reason = printable(reason);
  r.score = score;
  rt->plugin_records.push_back(r);
  log(TSR_LOG_WARN, "plugin '" + r.name + "' (" + r.path + ") refused: " + r.reason);
}

// Closes a file descriptor on every return path.
struct Fd {
  int fd;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// Opens `path` for reading without blocking (a FIFO would wait for a writer forever) and checks
// it is a regular file. Returns "" and the descriptor and size, or why not (and the errno, if
// there was one, into *err_no).
std::string open_regular(const std::string& path, Fd* fd, uint64_t* size, int* err_no = nullptr) {
  struct stat st;
  fd->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd->fd < 0 || ::fstat(fd->fd, &st) != 0) {
    int e = errno;
    if (err_no) *err_no = e;
    return std::strerror(e);
  }
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  *size = static_cast<uint64_t>(st.st_size);
  return "";
}

bool read_at(int fd, void* buf, size_t n, uint64_t offset) {
  auto* p = static_cast<char*>(buf);
  while (n > 0) {
    ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    p += got;
    n -= static_cast<size_t>(got);
    offset += static_cast<uint64_t>(got);
  }
  return true;
}

// Manifests are a few hundred bytes; anything huge is not one.
constexpr uint64_t kMaxManifestBytes = 1 << 20;

// The manifest's text into *text; "" on success, else the reason (starting "missing manifest"
// only when there is no such file: an unreadable one says why it cannot be read).
std::string read_manifest_text(const fs::path& manifest, std::string* text) {
  const std::string name = manifest.filename().string();
  Fd fd{-1};
  uint64_t size = 0;
  int err_no = 0;
  std::string err = open_regular(manifest.string(), &fd, &size, &err_no);
  if (err_no == ENOENT) return "missing manifest " + name;
  if (!err.empty()) return "cannot read manifest " + name + ": " + err;
  if (size > kMaxManifestBytes)
    return "manifest " + name + " is " + std::to_string(size) + " bytes (at most " + std::to_string(kMaxManifestBytes) +
           ")";
  text->resize(static_cast<size_t>(size));
  errno = 0;
  if (size && !read_at(fd.fd, text->data(), text->size(), 0))
    return "cannot read manifest " + name + ": " + (errno ? std::strerror(errno) : "it shrank while being read");
  return "";
}

// Parses a manifest, refusing duplicate keys (the DOM would keep the last one silently).
nlohmann::json parse_manifest(const std::string& text) {
  using json = nlohmann::json;
  std::vector<std::set<std::string>> keys;
  json::parser_callback_t cb = [&](int, json::parse_event_t ev, json& parsed) -> bool {
    if (ev == json::parse_event_t::object_start) keys.emplace_back();
    if (ev == json::parse_event_t::object_end) keys.pop_back();
    if (ev == json::parse_event_t::key && !keys.back().insert(parsed.get<std::string>()).second)
      throw std::runtime_error("duplicate key " + quoted(parsed.get<std::string>()));
    return true;
  };
  return json::parse(text, cb);
}

bool read_manifest(Runtime* rt, const fs::path& so, Candidate* c) {
  fs::path manifest = so;
  manifest.replace_extension(".json");
  std::string stem = so.stem().string();
  std::string text;
  std::string err = read_manifest_text(manifest, &text);
  if (!err.empty()) {
    refuse(rt, stem, "", so.string(), err);
    return false;
  }
  try {
    nlohmann::json j = parse_manifest(text);
    c->name = j.at("name").get<std::string>();
    c->version = j.value("version", "");
    c->abi = j.value("abi", "");
    if (j.contains("depends")) c->depends = j.at("depends").get<std::vector<std::string>>();
    c->path = so.string();
  } catch (const std::exception& e) {
    // nlohmann's messages quote the offending token, which may be long.
    std::string what = e.what();
    if (what.size() > 200) what = what.substr(0, 200) + "...";
    refuse(rt, stem, "", so.string(), "bad manifest " + manifest.filename().string() + ": " + what);
    return false;
  }
  if (c->name.empty()) {
    refuse(rt, stem, "", so.string(), "manifest has an empty name");
    return false;
  }
  return true;
}

// A decimal number that fits in uint32: digits only (no sign, space or suffix).
bool parse_u32(const std::string& s, uint32_t* out) {
  if (s.empty() || s.size() > 10) return false;
  uint64_t v = 0;
  for (char ch : s) {
    if (ch < '0' || ch > '9') return false;
    v = v * 10 + static_cast<uint64_t>(ch - '0');
  }
  if (v > UINT32_MAX) return false;
  *out = static_cast<uint32_t>(v);
  return true;
}

// A manifest's "abi": exactly MAJOR.MINOR ("1.3").
bool parse_abi(const std::string& s, uint32_t* major, uint32_t* minor) {
  size_t dot = s.find('.');
  return dot != std::string::npos && parse_u32(s.substr(0, dot), major) && parse_u32(s.substr(dot + 1), minor);
}

// Whether [offset, offset + count * entsize) fits in 64 bits; its end into *end.
bool extent(uint64_t offset, uint64_t count, uint64_t entsize, uint64_t* end) {
  uint64_t bytes = 0;
  return !__builtin_mul_overflow(count, entsize, &bytes) && !__builtin_add_overflow(offset, bytes, end);
}

// dlopen maps a plugin and touches its pages: a truncated file faults (SIGBUS) on the first
// page past its end instead of failing. So before dlopen the file must be a regular file
// holding an ELF shared object of this host's class and byte order, at least as long as its
// headers say (program and section header tables, every loadable segment). Returns "" when
// it is, else why not.
std::string check_elf(const std::string& path) {
  Fd fd{-1};
  uint64_t size = 0;
  std::string err = open_regular(path, &fd, &size);
  if (!err.empty()) return err;
  const std::string too_short = "the file is " + std::to_string(size) + " bytes, too short for an ELF header";
  unsigned char magic[SELFMAG];
  if (size < SELFMAG || !read_at(fd.fd, magic, SELFMAG, 0)) return too_short;
  if (std::memcmp(magic, ELFMAG, SELFMAG) != 0) return "not an ELF file";
  ElfW(Ehdr) eh;
  if (size < sizeof eh || !read_at(fd.fd, &eh, sizeof eh, 0)) return too_short + " (truncated?)";
  if (eh.e_ident[EI_CLASS] != (sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32))
    return "an ELF file of another word size than this host's";
  if (eh.e_ident[EI_DATA] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB))
    return "an ELF file of another byte order than this host's";
  if (eh.e_type != ET_DYN) return "not an ELF shared object (e_type " + std::to_string(eh.e_type) + ")";
  if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(ElfW(Phdr))) return "the ELF file has no usable program headers";
  uint64_t need = sizeof eh, end = 0;
  if (!extent(eh.e_phoff, eh.e_phnum, eh.e_phentsize, &end)) return "the ELF program header table overflows";
  need = std::max(need, end);
  if (eh.e_shoff != 0) {
    // e_shnum 0 with a table present: the real count is in the first entry (only that one is checked).
    if (!extent(eh.e_shoff, eh.e_shnum ? eh.e_shnum : 1, eh.e_shentsize, &end))
      return "the ELF section header table overflows";
    need = std::max(need, end);
  }
  const std::string truncated = " bytes, but its ELF headers describe ";
  if (need > size) return "truncated: the file has " + std::to_string(size) + truncated + std::to_string(need);
  std::vector<ElfW(Phdr)> ph(eh.e_phnum);
  if (!read_at(fd.fd, ph.data(), ph.size() * sizeof(ElfW(Phdr)), eh.e_phoff))
    return "cannot read the ELF program headers";
  for (const ElfW(Phdr) & p : ph) {
    if (p.p_type != PT_LOAD) continue;
    if (!extent(p.p_offset, 1, p.p_filesz, &end)) return "an ELF segment overflows";
    need = std::max(need, end);
  }
  if (need > size) return "truncated: the file has " + std::to_string(size) + truncated + std::to_string(need);
  return "";
}

// dep_failure: non-null when a dependency of c failed to load. The plugin is still opened and
// scored, so that its own reason is recorded when it scores 0 (sm100 on a machine without a GPU
// says "no CUDA device" rather than only that cuda, its dependency, was refused); otherwise it
// is refused with *dep_failure, and never initialised.
void load_one(Runtime* rt, const Candidate& c, const std::string* dep_failure = nullptr) {
  if (world_writable(c.path) || world_writable(fs::path(c.path).parent_path().string()))
    return refuse(rt, c.name, c.version, c.path, "refusing a world-writable plugin file or directory");
  const std::string core_abi = std::to_string(TSR_ABI_MAJOR) + "." + std::to_string(TSR_ABI_MINOR);
  uint32_t abi_major = 0, abi_minor = 0;
  if (!parse_abi(c.abi, &abi_major, &abi_minor))
    return refuse(
        rt, c.name, c.version, c.path,
        "manifest ABI " + quoted(c.abi) + " is not MAJOR.MINOR (two decimal numbers, e.g. \"" + core_abi + "\")");
  if (abi_major != TSR_ABI_MAJOR)
    return refuse(rt, c.name, c.version, c.path,
                  "manifest ABI " + quoted(c.abi) + " is incompatible with the core's ABI " + core_abi);
  std::string elf = check_elf(c.path);
  if (!elf.empty()) return refuse(rt, c.name, c.version, c.path, "cannot load: " + elf);
  boost::dll::shared_library lib;
  boost::dll::fs::error_code ec;
  dlerror();  // clear a stale message
  lib.load(c.path, boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec || !lib.is_loaded()) {
    // The error-code overload leaves dlerror()'s message alone (the throwing one consumes it);
    // ec itself is a fixed placeholder (EBADF) that says nothing about the cause.
    const char* err = dlerror();
    return refuse(rt, c.name, c.version, c.path, std::string("cannot load: ") + (err ? err : "dlopen failed"));
  }
  {
    // Once opened, a library stays mapped until exit, refused or not: a GPU runtime that a
    // plugin initialised in score() must not be unmapped under it.
    std::lock_guard<std::mutex> lock(g_libs_mutex);
    g_libs->push_back(lib);
  }
  if (!lib.has(TSR_PLUGIN_QUERY_SYMBOL))
    return refuse(rt, c.name, c.version, c.path, "missing entry symbol " TSR_PLUGIN_QUERY_SYMBOL);
  auto query = lib.get<const tsr_plugin_t*(uint32_t)>(TSR_PLUGIN_QUERY_SYMBOL);
  const tsr_plugin_t* p = nullptr;
  try {
    p = query(TSR_ABI_VERSION);
  } catch (...) {
    return refuse(rt, c.name, c.version, c.path, "tsr_plugin_query threw a C++ exception");
  }
  if (!p)
    return refuse(
        rt, c.name, c.version, c.path,
        "plugin does not support the host ABI " + std::to_string(TSR_ABI_MAJOR) + "." + std::to_string(TSR_ABI_MINOR));
  if (p->struct_size < offsetof(tsr_plugin_t, shutdown) || !p->init || !p->name)
    return refuse(rt, c.name, c.version, c.path, "plugin header is truncated or lacks init/name");
  uint32_t major = TSR_ABI_VERSION_MAJOR(p->abi_version), minor = TSR_ABI_VERSION_MINOR(p->abi_version);
  if (major != TSR_ABI_MAJOR)
    return refuse(rt, c.name, c.version, c.path,
                  "plugin was built for ABI " + std::to_string(major) + "." + std::to_string(minor) +
                      ", the core speaks " + std::to_string(TSR_ABI_MAJOR) + "." + std::to_string(TSR_ABI_MINOR));
  if (c.name != p->name)
    return refuse(rt, c.name, c.version, c.path,
                  std::string("plugin calls itself '") + p->name + "' but its manifest says '" + c.name + "'");
  int32_t score = 1;
  if (p->score) {
    char reason[512] = {0};
    try {
      score = p->score(api_table(), reason, sizeof(reason) - 1);
    } catch (...) {
      return refuse(rt, c.name, c.version, c.path, "score() threw a C++ exception");
    }
    if (score <= 0)
      return refuse(rt, c.name, c.version, c.path,
                    std::string("scored 0: ") + (reason[0] ? reason : "no reason given") +
                        (dep_failure ? "; and " + *dep_failure : std::string()),
                    score);
  }
  if (dep_failure) return refuse(rt, c.name, c.version, c.path, *dep_failure, score);
  Registrar reg;
  reg.runtime = rt;
  reg.plugin = c.name;
  void* state = nullptr;
  tsr_status_t st = nullptr;
  try {
    st = p->init(api_table(), rt, &reg, &state);
  } catch (const std::exception& e) {
    return refuse(rt, c.name, c.version, c.path, std::string("init threw a C++ exception: ") + e.what(), score);
  } catch (...) {
    return refuse(rt, c.name, c.version, c.path, "init threw a C++ exception", score);
  }
  if (st) {
    std::string msg = st->message;
    free_status(st);
    // Nothing was published: the staged registrations die with `reg`.
    if (p->struct_size >= offsetof(tsr_plugin_t, shutdown) + sizeof(p->shutdown) && p->shutdown && state) {
      try {
        p->shutdown(api_table(), state);
      } catch (...) {
      }
    }
    return refuse(rt, c.name, c.version, c.path, "init failed: " + msg, score);
  }
  if ((st = commit(&reg))) {
    std::string msg = st->message;
    free_status(st);
    if (p->struct_size >= offsetof(tsr_plugin_t, shutdown) + sizeof(p->shutdown) && p->shutdown) {
      try {
        p->shutdown(api_table(), state);
      } catch (...) {
      }
    }
    return refuse(rt, c.name, c.version, c.path, "registration failed: " + msg, score);
  }
  PluginRecord r;
  r.name = printable(c.name);
  r.version = printable(p->version ? p->version : c.version);
  r.path = printable(c.path);
  r.loaded = true;
  r.score = score;
  rt->plugin_records.push_back(r);
  LoadedPlugin lp;
  lp.name = c.name;
  lp.header = p;
  lp.state = state;
  lp.shutdown = p->struct_size >= offsetof(tsr_plugin_t, shutdown) + sizeof(p->shutdown) ? p->shutdown : nullptr;
  rt->loaded_plugins.push_back(lp);
  log(TSR_LOG_INFO, "loaded plugin '" + r.name + "' from " + r.path);
}

}  // namespace

// TESSERA_PLUGIN_PROBE=1: before loading for real, load the plugins (in dependency order) in
// a forked child that reports each plugin it is about to initialise through a pipe. A child
// that dies or hangs (30 s) names the plugin it was in; that plugin is refused with the signal,
// and the probe runs again without it, until a child gets through. Costs a fork and one extra
// load per plugin: for hosts that must survive a broken plugin on their path (a crash in init
// otherwise ends the process). A child of a multi-threaded host runs only plugin code and the
// loader, then _exits.
std::map<std::string, std::string> probe_plugins(Runtime* rt, const std::vector<const Candidate*>& order) {
  std::map<std::string, std::string> crashed;  // name -> reason
  for (size_t attempt = 0; attempt <= order.size(); ++attempt) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) break;
    std::fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) {
      ::close(fds[0]);
      ::close(fds[1]);
      break;
    }
    if (pid == 0) {
      ::close(fds[0]);
      signal(SIGPIPE, SIG_DFL);
      for (const Candidate* c : order) {
        if (crashed.count(c->name)) continue;
        std::string line = c->name + "\n";
        if (::write(fds[1], line.data(), line.size()) < 0) _exit(2);
        load_one(rt, *c);  // into the child's copy of the runtime
      }
      if (::write(fds[1], "\n", 1) < 0) _exit(2);  // got through
      _exit(0);
    }
    ::close(fds[1]);
    std::string out;
    char buf[4096];
    struct timespec start;
    clock_gettime(CLOCK_MONOTONIC, &start);
    bool timed_out = false;
    for (;;) {
      struct pollfd p = {fds[0], POLLIN, 0};
      int r = poll(&p, 1, 1000);
      struct timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (now.tv_sec - start.tv_sec > 30) {
        timed_out = true;
        kill(pid, SIGKILL);
        break;
      }
      if (r <= 0) continue;
      ssize_t n = ::read(fds[0], buf, sizeof(buf));
      if (n <= 0) break;
      out.append(buf, static_cast<size_t>(n));
    }
    ::close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!out.empty() && out.back() == '\n' && out.size() >= 2 && out[out.size() - 2] == '\n') break;  // clean
    if (!out.empty() && out == "\n") break;
    // The plugin the child was in: the last name it announced.
    if (!out.empty() && out.back() == '\n') out.pop_back();
    std::string name = out.substr(out.rfind('\n') == std::string::npos ? 0 : out.rfind('\n') + 1);
    if (name.empty() || crashed.count(name)) break;
    std::string how = timed_out             ? "hung for 30 s"
                      : WIFSIGNALED(status) ? "died of signal " + std::to_string(WTERMSIG(status)) + " (" +
                                                  (strsignal(WTERMSIG(status)) ? strsignal(WTERMSIG(status)) : "?") + ")"
                                            : "exited with status " + std::to_string(WEXITSTATUS(status));
    crashed[name] = "the crash-safe probe (TESSERA_PLUGIN_PROBE=1) " + how + " while loading it";
  }
  return crashed;
}

void load_plugins(Runtime* rt, const tsr_runtime_options_t* options) {
  std::vector<std::string> dirs;
  const char* path = options && options->plugin_path ? options->plugin_path : std::getenv("TESSERA_PLUGIN_PATH");
  if (path) dirs = ::tsr::split_search_path(path);
  if (!(options && options->no_default_plugins)) {
    std::string def = core_plugin_dir();
    if (!def.empty()) dirs.push_back(def);
  }
  rt->plugin_dirs = dirs;
  // Collect candidates in search order; first name wins.
  std::vector<Candidate> cands;
  std::set<std::string> seen_dirs;
  for (const std::string& d : dirs) {
    std::error_code ec;
    fs::path canon = fs::weakly_canonical(d, ec);
    if (!seen_dirs.insert(canon.string()).second) continue;
    // A search path may name directories that do not exist; one that exists but cannot be
    // read is recorded (its plugins would otherwise vanish without a word).
    fs::file_status dst = fs::status(d, ec);
    if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
      refuse(rt, "(directory)", "", d, "cannot read the plugin directory: " + ec.message());
      continue;
    }
    if (!fs::is_directory(dst)) continue;
    if (world_writable(d)) {
      refuse(rt, "(directory)", "", d, "refusing a world-writable plugin directory");
      continue;
    }
    std::vector<fs::path> files;
    fs::directory_iterator it(d, ec), end;
    for (; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".so") files.push_back(it->path());
    if (ec) {
      refuse(rt, "(directory)", "", d, "cannot read the plugin directory: " + ec.message());
      continue;
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
      Candidate c;
      if (!read_manifest(rt, f, &c)) continue;
      auto dup = std::find_if(cands.begin(), cands.end(), [&](const Candidate& o) { return o.name == c.name; });
      if (dup != cands.end()) {
        refuse(rt, c.name, c.version, c.path, "shadowed by " + dup->path + " (same name, found first)");
        continue;
      }
      cands.push_back(c);
    }
  }
  // Dependency order (depth-first); a missing or cyclic dependency refuses the dependent.
  std::map<std::string, const Candidate*> by_name;
  for (const Candidate& c : cands) by_name[c.name] = &c;
  std::map<std::string, int> state;  // 1 visiting, 2 done
  std::vector<const Candidate*> order;
  std::map<std::string, std::string> dep_error;
  std::function<bool(const Candidate&)> visit = [&](const Candidate& c) -> bool {
    if (state[c.name] == 2) return !dep_error.count(c.name);
    if (state[c.name] == 1) {
      dep_error[c.name] = "dependency cycle through '" + c.name + "'";
      return false;
    }
    state[c.name] = 1;
    bool ok = true;
    for (const std::string& d : c.depends) {
      auto it = by_name.find(d);
      if (it == by_name.end()) {
        dep_error[c.name] = "depends on '" + d + "', which was not found";
        ok = false;
      } else if (!visit(*it->second)) {
        if (!dep_error.count(c.name))
          dep_error[c.name] =
              "depends on '" + d + "', which cannot be loaded" + (dep_error.count(d) ? " (" + dep_error[d] + ")" : "");
        ok = false;
      }
    }
    state[c.name] = 2;
    if (ok) order.push_back(&c);
    return ok;
  };
  for (const Candidate& c : cands) visit(c);
  for (const Candidate& c : cands)
    if (dep_error.count(c.name)) refuse(rt, c.name, c.version, c.path, dep_error[c.name]);
  std::map<std::string, std::string> probe_refusals;
  const char* probe = std::getenv("TESSERA_PLUGIN_PROBE");
  if (probe && std::string(probe) == "1" && !order.empty()) probe_refusals = probe_plugins(rt, order);
  std::set<std::string> loaded;
  for (const Candidate* c : order) {
    if (probe_refusals.count(c->name)) {
      refuse(rt, c->name, c->version, c->path, probe_refusals[c->name]);
      continue;
    }
    std::string failed_deps;
    for (const std::string& d : c->depends)
      if (!loaded.count(d)) failed_deps += (failed_deps.empty() ? "" : ", ") + d;
    if (!failed_deps.empty()) {
      const std::string why = "a dependency failed to load (" + failed_deps + ")";
      load_one(rt, *c, &why);  // scored all the same, for its own reason; never initialised
      continue;
    }
    size_t before = rt->loaded_plugins.size();
    load_one(rt, *c);
    if (rt->loaded_plugins.size() > before) loaded.insert(c->name);
  }
}

void shutdown_plugins(Runtime* rt) {
  for (auto it = rt->loaded_plugins.rbegin(); it != rt->loaded_plugins.rend(); ++it) {
    if (!it->shutdown) continue;
    try {
      it->shutdown(api_table(), it->state);
    } catch (...) {
      log(TSR_LOG_ERROR, "plugin '" + it->name + "' threw from shutdown");
    }
  }
  rt->loaded_plugins.clear();
}

}  // namespace tsr::core
