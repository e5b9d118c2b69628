// The "cpu" device type (memcpy copies, synchronous) and its raw allocator: 64-byte aligned,
// blocks of 2 MiB and more aligned to 2 MiB and advised as transparent huge pages.
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cpu_common.hpp"

namespace tsr::cpu {
namespace {

constexpr size_t kHugePage = size_t(2) << 20;

// The api table of the core (static in the core, the same for every runtime; set by init,
// possibly from several runtimes at once).
std::atomic<const tsr_api_t*> g_api{nullptr};

tsr_status_t cpu_copy(void*, tsr_device_t, void* dst, tsr_device_t, const void* src, size_t nbytes, tsr_stream_t*) {
  if (nbytes == 0 || dst == src) return nullptr;
  constexpr int64_t kGrain = int64_t(1) << 20;
  char* d = static_cast<char*>(dst);
  const char* s = static_cast<const char*>(src);
  if (d < s + nbytes && s < d + nbytes) {  // overlapping ranges: one memmove
    std::memmove(d, s, nbytes);
    return nullptr;
  }
  parallel_for(
      0, static_cast<int64_t>(nbytes), kGrain,
      [&](int64_t b, int64_t e) { std::memcpy(d + b, s + b, static_cast<size_t>(e - b)); }, 4096);
  return nullptr;
}

void cpu_describe(void*, tsr_device_t device, char* buf, size_t len) {
  if (!buf || len == 0) return;
  std::snprintf(buf, len, "cpu:%d (%d threads)", device.index, max_threads());
}

tsr_status_t cpu_alloc(void*, tsr_device_t, size_t nbytes, void** out) {
  *out = nullptr;
  if (nbytes == 0) nbytes = 1;
  void* p = nullptr;
  int rc;
  if (nbytes >= kHugePage) {
    const size_t rounded = (nbytes + kHugePage - 1) / kHugePage * kHugePage;
    rc = rounded < nbytes ? ENOMEM : posix_memalign(&p, kHugePage, rounded);
#ifdef MADV_HUGEPAGE
    if (rc == 0) (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
  } else {
    rc = posix_memalign(&p, 64, nbytes);
  }
  if (rc != 0 || !p) {
    const std::string msg = "cpu allocator: out of memory allocating " + std::to_string(nbytes) + " bytes";
    return g_api.load()->status_create(TSR_RESOURCE_EXHAUSTED, msg.c_str());
  }
  *out = p;
  return nullptr;
}

void cpu_free(void*, tsr_device_t, void* ptr, size_t) { std::free(ptr); }

// TESSERA_CPU_DEVICES: 1..64, default 1.
int32_t device_count_from_env() {
  const char* s = std::getenv("TESSERA_CPU_DEVICES");
  if (!s || !*s) return 1;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 10);
  if (errno != 0 || end == s || *end != '\0' || v < 1 || v > 64)
    fail(TSR_INVALID_ARGUMENT, "cpu: TESSERA_CPU_DEVICES='", s, "' is invalid (expected an integer in 1..64)");
  return static_cast<int32_t>(v);
}

}  // namespace

int32_t register_device(Registrar& r) {
  g_api.store(r.api());
  tsr_device_type_def_t def{};
  def.struct_size = TSR_STRUCT_SIZE(tsr_device_type_def_t);
  def.name = "cpu";
  def.device_count = device_count_from_env();
  def.copy = &cpu_copy;
  def.synchronize = nullptr;
  def.describe = &cpu_describe;
  const int32_t type = r.device_type(def);

  tsr_raw_allocator_t alloc{};
  alloc.struct_size = TSR_STRUCT_SIZE(tsr_raw_allocator_t);
  alloc.name = "cpu";
  alloc.device_type = type;
  alloc.flags = 0;
  alloc.alloc = &cpu_alloc;
  alloc.free = &cpu_free;
  r.allocator(alloc);
  return type;
}

}  // namespace tsr::cpu
