// `tessera certify`, run as a subprocess on the deliberately broken plugins of this directory:
// each gets the right verdict with the op named, the run goes on after a crash, and the JSON
// certificate says what was checked (hash, versions, seed, devices, counts).
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"

namespace {

using nlohmann::json;
using tsr_test::contains;

#ifdef TSR_CLI
const char* kCli = TSR_CLI;
#else
const char* kCli = nullptr;
#endif

#define REQUIRE_CLI_AND_CPU()                                                                  \
  if (!kCli) GTEST_SKIP() << "the tessera command is not built (TESSERA_BUILD_TOOLS=OFF)";    \
  if (!tsr_test::kHaveCpu) GTEST_SKIP() << "the cpu backend is not built here"

std::string case_so(const std::string& dir, const std::string& file) {
  return tsr_test::shell_quote(std::string(TSR_LOADER_CASES) + "/" + dir + "/" + file);
}

// Certifies and returns the certificate (written to a private file) and the text output.
struct Certified {
  tsr_test::CliResult run;
  json cert;
};
Certified certify(const std::string& so, const std::string& extra = "") {
  char dir[] = "/tmp/tessera-certify-test-XXXXXX";
  EXPECT_NE(mkdtemp(dir), nullptr);
  std::string file = std::string(dir) + "/cert.json";
  Certified c;
  c.run = tsr_test::run_cli(kCli, "certify --timeout 60 --certificate " + tsr_test::shell_quote(file) + " " + extra +
                                      " " + so,
                            "TESSERA_PLUGIN_PATH=" + tsr_test::shell_quote(TSR_PLUGIN_DIR));
  std::ifstream in(file);
  if (in) c.cert = json::parse(in);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return c;
}

const json* row(const json& cert, const std::string& op) {
  for (const json& r : cert.at("ops"))
    if (r.at("op") == op) return &r;
  return nullptr;
}

TEST(Certify, CorrectKernelIsComplete) {
  REQUIRE_CLI_AND_CPU();
  Certified c = certify(case_so("kernel_good", "goodk.so"));
  EXPECT_EQ(c.run.exit_code, 0) << c.run.output;
  EXPECT_TRUE(contains(c.run.output, "verdict: COMPLETE")) << c.run.output;
  ASSERT_FALSE(c.cert.is_null()) << c.run.output;
  EXPECT_EQ(c.cert.at("verdict"), "complete");
  EXPECT_EQ(c.cert.at("plugin").at("name"), "goodk");
  EXPECT_EQ(c.cert.at("plugin").at("sha256").get<std::string>().size(), 64u);
  EXPECT_EQ(c.cert.at("core").at("abi"), c.cert.at("plugin").at("abi").at("core"));
  EXPECT_EQ(c.cert.at("seed"), "20240601");
  EXPECT_EQ(c.cert.at("guard_bytes"), 4096);
  ASSERT_EQ(c.cert.at("devices").size(), 1u);
  EXPECT_EQ(c.cert.at("devices")[0].at("device"), "cpu:0");
  const json* neg = row(c.cert, "neg");
  ASSERT_NE(neg, nullptr) << c.cert.dump(2);
  EXPECT_EQ(neg->at("verdict"), "conforms");
  EXPECT_EQ(c.cert.at("summary").at("failed"), 0);
}

TEST(Certify, WrongResultFailsNamingOpAndDtype) {
  REQUIRE_CLI_AND_CPU();
  Certified c = certify(case_so("kernel_wrong", "wrongk.so"));
  EXPECT_EQ(c.run.exit_code, 1) << c.run.output;
  EXPECT_TRUE(contains(c.run.output, "FAIL neg on cpu:0 float32 [forward]")) << c.run.output;
  EXPECT_TRUE(contains(c.run.output, "verdict: FAILED")) << c.run.output;
  const json* neg = row(c.cert, "neg");
  ASSERT_NE(neg, nullptr);
  EXPECT_EQ(neg->at("verdict"), "failed");
  EXPECT_EQ(neg->at("failed"), json::array({"float32"}));  // the other dtypes are the cpu's own kernels
}

// The kernel writes 64 floats past its output: the guard bytes catch it after the kernel,
// naming the op, the kernel, its plugin and the tensor; without the guard mode nothing notices.
TEST(Certify, OutOfBoundsWriteIsCaughtByGuardBytes) {
  REQUIRE_CLI_AND_CPU();
  Certified c = certify(case_so("kernel_oob", "oobk.so"));
  EXPECT_EQ(c.run.exit_code, 1) << c.run.output;
  EXPECT_TRUE(contains(c.run.output, "neg: kernel oobk::neg_f32 (plugin oobk) on cpu:0 wrote outside output 0"))
      << c.run.output;
  EXPECT_TRUE(contains(c.run.output, "256 of the 4096 guard bytes after the end")) << c.run.output;
  EXPECT_EQ(c.cert.at("verdict"), "failed");
}

TEST(Certify, SegfaultingKernelIsCrashedAndNamed) {
  REQUIRE_CLI_AND_CPU();
  Certified c = certify(case_so("kernel_segv", "segvk.so"));
  EXPECT_EQ(c.run.exit_code, 3) << c.run.output;
  EXPECT_TRUE(contains(c.run.output, "CRASH neg on cpu:0: the process died: signal 11 (SIGSEGV)")) << c.run.output;
  EXPECT_EQ(c.cert.at("verdict"), "crashed");
  const json* neg = row(c.cert, "neg");
  ASSERT_NE(neg, nullptr);
  EXPECT_EQ(neg->at("verdict"), "crashed");
}

// A crash does not end the run: with two ops, the one after the crash is still checked.
TEST(Certify, RunGoesOnAfterACrash) {
  REQUIRE_CLI_AND_CPU();
  Certified c = certify(case_so("kernel_segv", "segvk.so"), "--op neg --op abs");
  EXPECT_EQ(c.run.exit_code, 3) << c.run.output;
  const json* abs = row(c.cert, "abs");
  ASSERT_NE(abs, nullptr) << c.run.output;
  EXPECT_EQ(abs->at("verdict"), "conforms");
  EXPECT_EQ(row(c.cert, "neg")->at("verdict"), "crashed");
}

TEST(Certify, SegfaultingInitIsCrashed) {
  REQUIRE_CLI_AND_CPU();
  Certified c = certify(case_so("crash", "crasher.so"));
  EXPECT_EQ(c.run.exit_code, 3) << c.run.output;
  EXPECT_TRUE(contains(c.run.output, "plugin crashed during load: signal 11 (SIGSEGV)")) << c.run.output;
  EXPECT_EQ(c.cert.at("verdict"), "crashed");
}

TEST(Certify, DeviceTypeWithoutAllocatorIsUnusable) {
  REQUIRE_CLI_AND_CPU();
  Certified c = certify(case_so("no_allocator", "noalloc.so"));
  EXPECT_EQ(c.run.exit_code, 1) << c.run.output;
  EXPECT_TRUE(contains(c.run.output, "device type 'noalloc' has no allocator")) << c.run.output;
  EXPECT_EQ(c.cert.at("verdict"), "unusable");
}

// A device backend with one kernel: every core op is checked on its devices; what it cannot
// run is "not implemented" with the missing kernel named, never a pass; its own op has no test
// cases, which keeps the certificate partial.
TEST(Certify, DeviceBackendWithFewKernelsIsPartial) {
  REQUIRE_CLI_AND_CPU();
  Certified c = certify(case_so("good", "toy.so"), "--op add --op neg --op flatten");
  EXPECT_EQ(c.run.exit_code, 0) << c.run.output;
  EXPECT_TRUE(contains(c.run.output, "verdict: PARTIAL")) << c.run.output;
  EXPECT_EQ(c.cert.at("verdict"), "partial");
  const json* add = row(c.cert, "add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->at("device"), "toy:0");
  EXPECT_EQ(add->at("verdict"), "not implemented");
  EXPECT_TRUE(contains(add->at("reason").get<std::string>(), "no kernel for device toy:0")) << add->dump();
  EXPECT_EQ(c.cert.at("summary").at("conforms"), 0);
  // Every op (no --op): the plugin's own op without test cases is listed; --require-complete
  // turns partial into a failure.
  Certified all = certify(case_so("good", "toy.so"), "--no-gradcheck --require-complete");
  EXPECT_EQ(all.run.exit_code, 1) << all.run.output;
  EXPECT_EQ(all.cert.at("verdict"), "partial");
  EXPECT_EQ(all.cert.at("untested_ops"), json::array({"toy::axpb"}));
  EXPECT_GT(all.cert.at("summary").at("not_implemented").get<int>(), 100);
}

// check-plugin --smoke: each kernel's op once, in a child, with guard bytes.
TEST(CheckPluginSmoke, RunsEachKernelOnceAndNamesCrashesAndOverruns) {
  REQUIRE_CLI_AND_CPU();
  const std::string env = "TESSERA_PLUGIN_PATH=" + tsr_test::shell_quote(TSR_PLUGIN_DIR);
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin --smoke " + case_so("kernel_good", "goodk.so"), env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "smoke (each kernel's op once")) << r.output;
  r = tsr_test::run_cli(kCli, "check-plugin --smoke " + case_so("kernel_segv", "segvk.so"), env);
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_TRUE(contains(r.output, "CRASHED: the process died: signal 11 (SIGSEGV)")) << r.output;
  r = tsr_test::run_cli(kCli, "check-plugin --smoke --json " + case_so("kernel_oob", "oobk.so"), env);
  EXPECT_EQ(r.exit_code, 1) << r.output;
  json j = json::parse(r.output);
  ASSERT_EQ(j.at("smoke").at("ops").size(), 1u) << r.output;
  EXPECT_EQ(j.at("smoke").at("ops")[0].at("verdict"), "failed");
  // Without --smoke, check-plugin never runs a kernel: the broken ones load fine.
  r = tsr_test::run_cli(kCli, "check-plugin " + case_so("kernel_segv", "segvk.so"), env);
  EXPECT_EQ(r.exit_code, 0) << r.output;
}

}  // namespace
