// The sm100 plugin (backends/sm100): its score and how it is recorded. It must load only on a
// machine with a compute capability 10.x GPU, and everywhere else be refused with score 0 and
// its own reason ("no CUDA device ..." or "no compute capability 10.x device (cuda:0 is NAME,
// X.Y)"), visible in `tessera info`, without loading its backend library (cuBLASLt). Whether
// its kernels are chosen on 10.x devices only is tested without a GPU in
// tests/loader/test_override.cpp (same predicate helper, a fake device type); on a 10.x machine
// the last test checks the real registrations.
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "tessera/tessera.hpp"

namespace {

const tsr_api_t* A() { return tsr::api(); }

// What CUDA itself says: the number of devices and whether one is 10.x.
struct Machine {
  int count = 0;
  bool blackwell = false;
  std::string first;  // "cuda:0 is NAME, X.Y" for the first device
};
Machine machine() {
  Machine m;
  if (cudaGetDeviceCount(&m.count) != cudaSuccess) {
    (void)cudaGetLastError();
    m.count = 0;
  }
  for (int d = 0; d < m.count; ++d) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, d) != cudaSuccess) continue;
    if (p.major == 10) m.blackwell = true;
    if (d == 0) m.first = "cuda:0 is " + std::string(p.name) + ", " + std::to_string(p.major) + "." + std::to_string(p.minor);
  }
  return m;
}

bool find_plugin(tsr_runtime_t* rt, const char* name, tsr_plugin_record_t* out) {
  for (size_t i = 0; i < A()->plugin_count(rt); ++i) {
    tsr_plugin_record_t r{};
    r.struct_size = sizeof(r);
    tsr::check(A()->plugin_record(rt, i, &r));
    if (std::string(r.name) == name) {
      *out = r;
      return true;
    }
  }
  return false;
}

std::string mapped_files() {
  std::string maps;
  if (std::FILE* f = std::fopen("/proc/self/maps", "r")) {
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) maps.append(buf, n);
    std::fclose(f);
  }
  return maps;
}

TEST(Sm100Loading, ScoredWithItsOwnReason) {
  tsr_plugin_record_t r{};
  ASSERT_TRUE(find_plugin(tsr::runtime(), "sm100", &r)) << "the sm100 plugin was not seen by the loader";
  const Machine m = machine();
  if (m.blackwell) {
    EXPECT_EQ(r.loaded, 1) << r.reason;
    EXPECT_GT(r.score, 0);
    return;
  }
  EXPECT_EQ(r.loaded, 0);
  EXPECT_EQ(r.score, 0);
  const std::string reason = r.reason;
  EXPECT_EQ(reason.rfind("scored 0: ", 0), 0u) << reason;
  if (m.count == 0) {
    EXPECT_NE(reason.find("no CUDA device"), std::string::npos) << reason;
    // The cuda plugin itself is refused here: the record says so after sm100's own reason.
    EXPECT_NE(reason.find("a dependency failed to load (cuda)"), std::string::npos) << reason;
  } else {
    EXPECT_NE(reason.find("no compute capability 10.x device (" + m.first), std::string::npos) << reason;
  }
}

// Scoring needs the CUDA runtime only: without a 10.x GPU the backend library (and cuBLASLt,
// unless the cuda backend loaded it) is never mapped.
TEST(Sm100Loading, WithoutBlackwellNoBackendLibraryIsLoaded) {
  tsr_plugin_record_t r{};
  ASSERT_TRUE(find_plugin(tsr::runtime(), "sm100", &r));
  if (r.loaded) GTEST_SKIP() << "a compute capability 10.x device is present: the backend library is loaded";
  const std::string maps = mapped_files();
  EXPECT_EQ(maps.find("tessera_sm100_backend"), std::string::npos) << "sm100's backend library is mapped";
  if (machine().count == 0) {
    EXPECT_EQ(maps.find("libcublasLt"), std::string::npos) << "cuBLASLt is mapped without a GPU";
  }
}

// The backend library lies in sm100/ beside the shell, exports an "sm100" plugin table for this
// ABI and scores the machine as the shell does.
TEST(Sm100Loading, BackendLibraryIsBesideTheShell) {
  tsr_plugin_record_t r{};
  ASSERT_TRUE(find_plugin(tsr::runtime(), "sm100", &r));
  std::string path = r.path;
  path = path.substr(0, path.rfind('/')) + "/sm100/tessera_sm100_backend.so";
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << path << ": " << dlerror();
  auto query = reinterpret_cast<tsr_plugin_query_fn_t>(dlsym(h, TSR_PLUGIN_QUERY_SYMBOL));
  ASSERT_NE(query, nullptr);
  const tsr_plugin_t* p = query(TSR_ABI_VERSION);
  ASSERT_NE(p, nullptr);
  EXPECT_STREQ(p->name, "sm100");
  ASSERT_NE(p->init, nullptr);
  ASSERT_NE(p->score, nullptr);
  char reason[512] = "";
  EXPECT_EQ(p->score(A(), reason, sizeof reason), r.score);
  if (!r.loaded) {
    EXPECT_EQ(std::string(r.reason).rfind(std::string("scored 0: ") + reason, 0), 0u) << r.reason;
  }
  // Left loaded: CUDA libraries dislike dlclose.
}

#ifdef TSR_CLI
std::string run(const std::string& args) {
  const std::string cmd = "env -u TESSERA_PLUGIN_PATH '" + std::string(TSR_CLI) + "' " + args + " 2>&1";
  std::string out;
  if (FILE* p = popen(cmd.c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
    pclose(p);
  }
  return out;
}

TEST(Sm100Loading, TesseraInfoShowsTheReason) {
  const std::string out = run("info");
  if (machine().blackwell) GTEST_SKIP() << "a 10.x device is present: sm100 loads (see the next test)";
  const size_t refused = out.find("Plugins refused");
  ASSERT_NE(refused, std::string::npos) << out;
  const size_t at = out.find("sm100", refused);
  ASSERT_NE(at, std::string::npos) << out;
  EXPECT_NE(out.find("reason: scored 0: no ", at), std::string::npos) << out;
}

// On a 10.x machine: the overrides are registered on cuda with priority 100 and a predicate.
TEST(Sm100Loading, OverridesAreListedOnBlackwell) {
  if (!machine().blackwell) GTEST_SKIP() << "no compute capability 10.x device: sm100 registers nothing here";
  tsr_op_t* op = nullptr;
  if (tsr_status_t st = A()->op_find(tsr::runtime(), "scaled_mm", &op)) {
    A()->status_free(st);
    GTEST_SKIP() << "this core has no scaled_mm op (the low-precision ops are not merged)";
  }
  const std::string out = run("kernels --op scaled_mm");
  const size_t at = out.find("sm100::scaled_mm_cublaslt");
  ASSERT_NE(at, std::string::npos) << out;
  const std::string line = out.substr(at, out.find('\n', at) - at);
  EXPECT_NE(line.find("priority 100"), std::string::npos) << line;
  EXPECT_NE(line.find("(device predicate)"), std::string::npos) << line;
}
#endif

}  // namespace
