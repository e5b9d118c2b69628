// `tessera conformance` against the build tree: op and device filters, JSON, --plugin with a
// third-party device type, and its errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_runner.hpp"

namespace {

using nlohmann::json;
using tsr_test::run_cli;
using tsr_test::shell_quote;

#ifdef TSR_HAVE_CPU
#define REQUIRE_CPU() (void)0
#else
#define REQUIRE_CPU() GTEST_SKIP() << "the cpu backend is not built here"
#endif

using tsr_test::contains;

TEST(CliConformance, OpFilterRunsOnlyThoseOps) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "conformance --op full --op arange");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "full ")) << r.output;
  EXPECT_TRUE(contains(r.output, "arange ")) << r.output;
  EXPECT_FALSE(contains(r.output, "randn")) << r.output;
  EXPECT_TRUE(contains(r.output, "cpu:0")) << r.output;
  EXPECT_TRUE(contains(r.output, " 0 failed")) << r.output;
  EXPECT_TRUE(contains(r.output, "2 op/device pairs: 2 conform")) << r.output;
}

TEST(CliConformance, UnknownOpIsAUsageError) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "conformance --op full --op no_such_op");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "no OpInfo for op 'no_such_op'")) << r.output;
}

TEST(CliConformance, BadDtypeDeviceAndPluginAreUsageErrors) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "conformance --dtype float128");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown dtype 'float128'")) << r.output;
  r = run_cli(TSR_CLI, "conformance --device nosuchdevice");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "nosuchdevice")) << r.output;
  r = run_cli(TSR_CLI, "conformance --plugin /nonexistent/libx.so");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "/nonexistent/libx.so is not a file")) << r.output;
}

TEST(CliConformance, JsonHasEveryCheckAndHonoursDtypeFilter) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "conformance --json --op _copy --dtype f32 --dtype float64");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  std::set<std::string> dtypes, checks;
  for (const json& c : j.at("results")) {
    EXPECT_EQ(c.at("op"), "_copy");
    dtypes.insert(c.at("dtype").get<std::string>());
    checks.insert(c.at("check").get<std::string>());
    EXPECT_NE(c.at("outcome"), "fail") << c.dump();
  }
  EXPECT_EQ(dtypes, (std::set<std::string>{"float32", "float64"}));
  for (const char* c : {"forward", "noncontiguous", "out", "out_wrong_shape", "inplace", "gradcheck"})
    EXPECT_TRUE(checks.count(c)) << c;
  EXPECT_EQ(j.at("summary").at("failed"), 0);
  EXPECT_GT(j.at("summary").at("passed").get<int>(), 100);
  EXPECT_EQ(j.at("devices"), json::array({"cpu:0"}));
}

TEST(CliConformance, ListShowsOpsAndDevices) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "conformance --list", "TESSERA_CPU_DEVICES=2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "devices: cpu:0 cpu:1")) << r.output;
  EXPECT_TRUE(contains(r.output, "_copy")) << r.output;
  EXPECT_TRUE(contains(r.output, "[differentiable]")) << r.output;
}

// The CPU plugin given explicitly (nothing else loaded) certifies like a vendor's would.
TEST(CliConformance, PluginGivenByPath) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "conformance --no-default-plugins --op rand --plugin " +
                                               shell_quote(std::string(TSR_PLUGIN_DIR) + "/tessera_cpu.so"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "rand ")) << r.output;
  EXPECT_TRUE(contains(r.output, "1 op/device pairs: 1 conform")) << r.output;
  // Without it there is no device at all, and nothing to certify.
  r = run_cli(TSR_CLI, "conformance --no-default-plugins --op rand --device cpu");
  EXPECT_EQ(r.exit_code, 2) << r.output;
}

#ifdef TSR_HAVE_EXAMPLE_GEMM
// A plugin's own op is checked from the test cases it ships (NAME.tests.json beside NAME.so):
// every listed dtype against its float64 CPU result, non-contiguous inputs, out=, and the
// float64 gradcheck through the backward formula the plugin registered.
TEST(CliConformance, PluginTestCasesAreChecked) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "conformance --json --op example::gemm_bias_act");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  ASSERT_EQ(j.at("ops").size(), 1u) << r.output;
  EXPECT_EQ(j.at("ops")[0].at("verdict"), "conforms");
  EXPECT_EQ(j.at("ops")[0].at("passed"), json::array({"float32", "float64", "float16", "bfloat16"}));
  std::set<std::string> checks;
  for (const json& c : j.at("results")) {
    checks.insert(c.at("check").get<std::string>());
    EXPECT_EQ(c.at("outcome"), "pass") << c.dump();
  }
  for (const char* c : {"forward", "noncontiguous", "out", "gradcheck"}) EXPECT_TRUE(checks.count(c)) << c;
}
#endif

#ifdef TSR_TOY_PLUGIN
// A third-party device type without kernels for these ops: its dtypes are skipped (with the
// missing kernel named), never failed, and the CPU is still checked.
TEST(CliConformance, ThirdPartyDeviceWithoutKernelsIsSkipped) {
  REQUIRE_CPU();
  tsr_test::CliResult r =
      run_cli(TSR_CLI, "conformance --json --op full --op _copy --plugin " + shell_quote(TSR_TOY_PLUGIN));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  EXPECT_EQ(j.at("devices"), json::array({"cpu:0", "toy:0", "toy:1"}));
  size_t toy_skips = 0;
  for (const json& c : j.at("results"))
    if (c.at("device") == "toy:0" && c.at("outcome") == "skip") {
      ++toy_skips;
      EXPECT_TRUE(contains(c.at("message").get<std::string>(), "no kernel for device toy:0")) << c.dump();
    }
  EXPECT_GT(toy_skips, 10u);
  for (const json& o : j.at("ops")) {
    if (o.at("device") == "cpu:0") {
      // Every dtype of each OpInfo: 10 for full and _copy, the 4 float dtypes for _copy's
      // float8 variant (tools/conformance/opinfo_quant.cpp).
      const size_t n = o.at("passed").size();
      EXPECT_TRUE(n == 10u || (n == 4u && o.at("op") == "_copy")) << o.dump();
    }
  }
}
#endif

}  // namespace
