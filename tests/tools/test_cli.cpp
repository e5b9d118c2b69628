// The `tessera` command against the build tree: info, kernels, version, help, errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cli_runner.hpp"

namespace {

using nlohmann::json;
using tsr_test::run_cli;

#define REQUIRE_CPU()                                                   \
  do {                                                                  \
    if (!kHaveCpu) GTEST_SKIP() << "the cpu backend is not built here"; \
  } while (0)

using tsr_test::kHaveCpu;

using tsr_test::contains;

TEST(Cli, InfoListsTheCpuPluginAndDevice) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "info");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "ABI 1.")) << r.output;
  EXPECT_TRUE(contains(r.output, "Device types")) << r.output;
  EXPECT_TRUE(contains(r.output, "cpu:0")) << r.output;
  EXPECT_TRUE(contains(r.output, "Plugins loaded")) << r.output;
  EXPECT_TRUE(contains(r.output, std::string(TSR_PLUGIN_DIR) + "/tessera_cpu.so")) << r.output;
  EXPECT_TRUE(contains(r.output, "Allocator configuration")) << r.output;
}

TEST(Cli, InfoJsonParses) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "info --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  EXPECT_EQ(j.at("abi").at("major"), 1);
  EXPECT_FALSE(j.at("core_version").get<std::string>().empty());
  bool cpu_type = false, cpu_plugin = false;
  for (const json& t : j.at("device_types"))
    if (t.at("name") == "cpu") {
      cpu_type = true;
      EXPECT_GE(t.at("device_count").get<int>(), 1);
      EXPECT_EQ(t.at("devices")[0], "cpu:0");
    }
  for (const json& p : j.at("plugins").at("loaded"))
    if (p.at("name") == "cpu") {
      cpu_plugin = true;
      EXPECT_GE(p.at("score").get<int>(), 1);
      EXPECT_EQ(p.at("path"), std::string(TSR_PLUGIN_DIR) + "/tessera_cpu.so");
    }
  EXPECT_TRUE(cpu_type) << r.output;
  EXPECT_TRUE(cpu_plugin) << r.output;
  EXPECT_TRUE(j.at("plugins").at("refused").is_array());
  EXPECT_EQ(j.at("allocator").at("source"), "defaults");
  // One entry per device type whose backend publishes tessera.peer_topology.<type> (the cpu
  // backend does not; tests/loader/test_peer_topology.cpp checks one that does).
  ASSERT_TRUE(j.at("peer_topology").is_object()) << r.output;
  EXPECT_FALSE(j.at("peer_topology").contains("cpu"));
}

TEST(Cli, InfoReportsVirtualCpuDevicesAndAllocatorConf) {
  REQUIRE_CPU();
  tsr_test::CliResult r =
      run_cli(TSR_CLI, "info --json", "TESSERA_CPU_DEVICES=3 TESSERA_ALLOC_CONF=max_split_size_mb:64");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  EXPECT_EQ(j.at("allocator").at("conf"), "max_split_size_mb:64");
  EXPECT_EQ(j.at("allocator").at("source"), "TESSERA_ALLOC_CONF");
  for (const json& t : j.at("device_types")) {
    if (t.at("name") == "cpu") {
      EXPECT_EQ(t.at("device_count"), 3) << r.output;
    }
  }
}

TEST(Cli, InfoWithoutPluginsStillWorks) {
  tsr_test::CliResult r = run_cli(TSR_CLI, "info --no-default-plugins --plugin-path /nonexistent");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "Device types (0)")) << r.output;
}

TEST(Cli, KernelsShowsAddForCpuWithFloat32) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "kernels");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  bool add_row = false;
  size_t pos = 0;
  while (pos < r.output.size()) {
    size_t end = r.output.find('\n', pos);
    std::string line = r.output.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (line.rfind("add ", 0) == 0) add_row = contains(line, "f32");
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  EXPECT_TRUE(add_row) << r.output;
  EXPECT_TRUE(contains(r.output.substr(0, r.output.find('\n')), "cpu")) << "header names the cpu column";

  r = run_cli(TSR_CLI, "kernels --op add");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "schema:  add(")) << r.output;
  EXPECT_TRUE(contains(r.output, "cpu")) << r.output;
  EXPECT_TRUE(contains(r.output, "float32")) << r.output;

  r = run_cli(TSR_CLI, "kernels --json --op add");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  ASSERT_EQ(j.at("ops").size(), 1u);
  bool cpu_f32 = false;
  for (const json& k : j.at("ops")[0].at("kernels"))
    if (k.at("device_type") == "cpu")
      for (const json& d : k.at("dtypes")) cpu_f32 = cpu_f32 || d == "float32";
  EXPECT_TRUE(cpu_f32) << r.output;
}

TEST(Cli, KernelsSchemaAndUnknownOp) {
  tsr_test::CliResult r = run_cli(TSR_CLI, "kernels --schema");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "add(Tensor self")) << r.output;
  r = run_cli(TSR_CLI, "kernels --op no_such_op_anywhere");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "no op named 'no_such_op_anywhere'")) << r.output;
}

// --reach: the kernels an op's forward and backward reach, traced through the dispatcher and
// compared with what the device type registered. The CPU has them all.
TEST(Cli, KernelsReachOnTheCpuRunsEverything) {
  REQUIRE_CPU();
  tsr_test::CliResult r = run_cli(TSR_CLI, "kernels --device cpu --reach --op relu --json");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  EXPECT_EQ(j.at("device_type"), "cpu");
  ASSERT_GT(j.at("pairs").size(), 3u) << r.output;
  for (const json& p : j.at("pairs")) {
    EXPECT_EQ(p.at("op"), "relu");
    EXPECT_EQ(p.at("runs"), "yes") << p.dump();
  }
  r = run_cli(TSR_CLI, "kernels --reach");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "--reach needs --device")) << r.output;
  r = run_cli(TSR_CLI, "kernels --reach --device nosuchtype");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "no device type 'nosuchtype'")) << r.output;
}

#ifdef TSR_TOY_PLUGIN
// A device type with one kernel of its own: relu needs relu there, and its backward also
// _threshold_backward (the fused kernel relu's formula takes on cpu, where the trace runs; on a
// device without it the formula falls back to le and where, which the trace does not see); the
// summary ranks the missing kernels.
TEST(Cli, KernelsReachNamesWhatAThinBackendLacks) {
  REQUIRE_CPU();
  std::string dir = std::string(TSR_TOY_PLUGIN).substr(0, std::string(TSR_TOY_PLUGIN).rfind('/'));
  tsr_test::CliResult r =
      run_cli(TSR_CLI, "kernels --device toy --reach --op relu --json --plugin-path " + tsr_test::shell_quote(dir));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  bool f32 = false;
  for (const json& p : j.at("pairs")) {
    if (p.at("dtype") != "float32") continue;
    f32 = true;
    EXPECT_EQ(p.at("runs"), "no");
    EXPECT_EQ(p.at("forward_missing"), json::array({"relu[f32]"})) << p.dump();
    std::set<std::string> b = p.at("backward_missing").get<std::set<std::string>>();
    EXPECT_TRUE(b.count("_threshold_backward[f32]")) << p.dump();
  }
  EXPECT_TRUE(f32) << r.output;
  EXPECT_FALSE(j.at("missing_kernels").empty());
  EXPECT_EQ(j.at("summary").at("runs"), 0);
}
#endif

TEST(Cli, UnknownSubcommandExits2WithUsage) {
  tsr_test::CliResult r = run_cli(TSR_CLI, "frobnicate");
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(contains(r.output, "unknown command 'frobnicate'")) << r.output;
  EXPECT_TRUE(contains(r.output, "usage: tessera")) << r.output;
  EXPECT_EQ(run_cli(TSR_CLI, "").exit_code, 2);
  EXPECT_EQ(run_cli(TSR_CLI, "info --bogus-option").exit_code, 2);
}

TEST(Cli, HelpAndVersion) {
  tsr_test::CliResult r = run_cli(TSR_CLI, "--help");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  for (const char* cmd : {"info", "kernels", "check-plugin", "version"}) EXPECT_TRUE(contains(r.output, cmd)) << cmd;
  r = run_cli(TSR_CLI, "version");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "ABI 1.")) << r.output;
  EXPECT_EQ(run_cli(TSR_CLI, "info --help").exit_code, 0);
  EXPECT_EQ(run_cli(TSR_CLI, "kernels --help").exit_code, 0);
  EXPECT_EQ(run_cli(TSR_CLI, "check-plugin --help").exit_code, 0);
}

}  // namespace
