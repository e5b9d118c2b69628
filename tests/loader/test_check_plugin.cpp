// `tessera check-plugin`, run as a subprocess: a plugin that crashes or hangs in init is
// reported with the signal (or the time limit) while this test process, and the command's own
// parent process, survive.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"
#include "tessera/version.h"

namespace {

#ifdef TSR_CLI
const char* kCli = TSR_CLI;
#else
const char* kCli = nullptr;
#endif

std::string case_so(const std::string& dir, const std::string& file) {
  return tsr_test::shell_quote(std::string(TSR_LOADER_CASES) + "/" + dir + "/" + file);
}

#define REQUIRE_CLI() \
  if (!kCli) GTEST_SKIP() << "the tessera command is not built (TESSERA_BUILD_TOOLS=OFF)"

TEST(CheckPlugin, CrashInInitIsReportedAndSurvived) {
  REQUIRE_CLI();
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin " + case_so("crash", "crasher.so"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("plugin crashed during load: signal 11 (SIGSEGV)"), std::string::npos) << r.output;
}

TEST(CheckPlugin, CrashReportAsJson) {
  REQUIRE_CLI();
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin --json " + case_so("crash", "crasher.so"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("status"), "crashed");
  EXPECT_EQ(j.at("phase"), "load");
  EXPECT_EQ(j.at("signal").at("number"), 11);
  EXPECT_EQ(j.at("signal").at("name"), "SIGSEGV");
}

TEST(CheckPlugin, HangIsKilledAfterTheTimeLimit) {
  REQUIRE_CLI();
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin --timeout 1.5 " + case_so("hang", "sleeper.so"));
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("plugin hung during load"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("SIGKILL"), std::string::npos) << r.output;
}

TEST(CheckPlugin, GoodPluginListsWhatItRegisters) {
  REQUIRE_CLI();
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin " + case_so("good", "toy.so"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("LOADED  toy 1.2.3"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("device type toy: 2 devices"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("op toy::axpb(Tensor x"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("kernel toy::axpb on toy [float32]"), std::string::npos) << r.output;

  r = tsr_test::run_cli(kCli, "check-plugin --json " + case_so("good", "toy.so"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("status"), "loaded");
  EXPECT_EQ(j.at("plugin").at("name"), "toy");
  EXPECT_EQ(j.at("plugin").at("path"), std::string(TSR_LOADER_CASES) + "/good/toy.so");
  ASSERT_EQ(j.at("new_device_types").size(), 1u);
  EXPECT_EQ(j.at("new_device_types")[0].at("name"), "toy");
  ASSERT_EQ(j.at("new_ops").size(), 1u);
  EXPECT_EQ(j.at("new_ops")[0].at("name"), "toy::axpb");
  ASSERT_EQ(j.at("new_kernels").size(), 1u);
  EXPECT_EQ(j.at("new_kernels")[0].at("dtypes"), nlohmann::json::array({"float32"}));
}

// What loads but cannot work fails the check (issue 16): a device type without an allocator, and
// a plugin the loader would refuse where it lies (world-writable), though its copy loads.
TEST(CheckPlugin, LoadedButUnusableFails) {
  REQUIRE_CLI();
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin " + case_so("no_allocator", "noalloc.so"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("LOADED BUT UNUSABLE"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("device type 'noalloc' has no allocator"), std::string::npos) << r.output;
  r = tsr_test::run_cli(kCli, "check-plugin --json " + case_so("no_allocator", "noalloc.so"));
  nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("status"), "unusable");

  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tessera-ww-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (const char* f : {"toy.so", "toy.json"})
    fs::copy_file(fs::path(TSR_LOADER_CASES) / "good" / f, dir / f, fs::copy_options::overwrite_existing);
  fs::permissions(dir, fs::perms::all);  // 0777
  r = tsr_test::run_cli(kCli, "check-plugin " + tsr_test::shell_quote((dir / "toy.so").string()));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("world-writable"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("LOADED BUT UNUSABLE"), std::string::npos) << r.output;
  std::error_code ec;
  fs::remove_all(dir, ec);
  // `tessera info` lists such a device type's devices and says why they are unusable, rather than
  // dropping them.
  r = tsr_test::run_cli(kCli, "info --no-default-plugins --plugin-path " +
                                  tsr_test::shell_quote(std::string(TSR_LOADER_CASES) + "/no_allocator"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("noalloc:1"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no allocator: every op on this device fails"), std::string::npos) << r.output;
  // A healthy plugin in a private directory still passes.
  EXPECT_EQ(tsr_test::run_cli(kCli, "check-plugin " + case_so("good", "toy.so")).exit_code, 0);
}

// The ABI negotiation is shown, and disagreements are said (issue 16: a newer minor loaded with
// no note).
TEST(CheckPlugin, ShowsTheAbiNegotiation) {
  REQUIRE_CLI();
  const std::string core = std::to_string(TSR_ABI_MAJOR) + "." + std::to_string(TSR_ABI_MINOR);
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin " + case_so("good", "toy.so"));
  EXPECT_NE(r.output.find("abi:         binary " + core + ", manifest " + core + ", core " + core), std::string::npos)
      << r.output;
  EXPECT_EQ(r.output.find("note:"), std::string::npos) << r.output;

  r = tsr_test::run_cli(kCli, "check-plugin --json " + case_so("newer_minor", "newer.so"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("abi").at("binary"), "1.7");
  EXPECT_EQ(j.at("abi").at("manifest"), "1.7");
  EXPECT_EQ(j.at("abi").at("core"), core);
  r = tsr_test::run_cli(kCli, "check-plugin " + case_so("newer_minor", "newer.so"));
  EXPECT_NE(r.output.find("built for ABI 1.7, newer than the core's " + core), std::string::npos) << r.output;

  // A manifest that disagrees with its binary.
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tessera-abi-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  fs::copy_file(fs::path(TSR_LOADER_CASES) / "good" / "toy.so", dir / "toy.so", fs::copy_options::overwrite_existing);
  std::ofstream(dir / "toy.json") << R"({"name": "toy", "version": "1.2.3", "abi": "1.0", "depends": []})";
  fs::permissions(dir, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                           fs::perms::others_exec);
  r = tsr_test::run_cli(kCli, "check-plugin " + tsr_test::shell_quote((dir / "toy.so").string()));
  EXPECT_NE(r.output.find("the manifest says ABI 1.0 but the binary was built for " + core), std::string::npos)
      << r.output;
  std::error_code ec;
  fs::remove_all(dir, ec);

  // Refused before the loader opened it: the binary's ABI is unknown, not guessed.
  r = tsr_test::run_cli(kCli, "check-plugin --json " + case_so("abi_manifest", "abi2.so"));
  j = nlohmann::json::parse(r.output);
  EXPECT_TRUE(j.at("abi").at("binary").is_null()) << r.output;
  EXPECT_EQ(j.at("abi").at("manifest"), "2.0");
  EXPECT_EQ(j.at("plugin").at("scored"), false) << r.output;
  // ... and the text never calls that a score of 0.
  r = tsr_test::run_cli(kCli, "check-plugin " + case_so("abi_manifest", "abi2.so"));
  EXPECT_NE(r.output.find("refused before scoring"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("score 0"), std::string::npos) << r.output;
}

TEST(CheckPlugin, RefusedPluginReportsTheReason) {
  REQUIRE_CLI();
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin " + case_so("score_zero", "picky.so"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("REFUSED"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("no frobnicator on this machine"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("score 0"), std::string::npos) << r.output;  // this one did score

  r = tsr_test::run_cli(kCli, "check-plugin " + case_so("init_fails", "ghost.so"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("ghost init failed on purpose"), std::string::npos) << r.output;
}

TEST(CheckPlugin, DependenciesAreFoundBesideThePlugin) {
  REQUIRE_CLI();
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin --json " + case_so("dep_order", "a_consumer.so"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  nlohmann::json j = nlohmann::json::parse(r.output);
  EXPECT_EQ(j.at("status"), "loaded");
  // The provider is part of the baseline: only the consumer's kernel is new.
  EXPECT_TRUE(j.at("new_ops").empty()) << j.dump(2);
  ASSERT_EQ(j.at("new_kernels").size(), 1u) << j.dump(2);
  EXPECT_EQ(j.at("new_kernels")[0].at("kernel"), "consumer::twice");
  ASSERT_EQ(j.at("dependencies").size(), 1u);
  EXPECT_EQ(j.at("dependencies")[0].at("name"), "provider");
  EXPECT_EQ(j.at("dependencies")[0].at("path"), std::string(TSR_LOADER_CASES) + "/dep_order/z_provider.so");
}

TEST(CheckPlugin, MissingDependencyIsNamed) {
  REQUIRE_CLI();
  tsr_test::CliResult r = tsr_test::run_cli(kCli, "check-plugin " + case_so("dep_missing", "orphan.so"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("nonexistent_dep"), std::string::npos) << r.output;
}

TEST(CheckPlugin, BadArguments) {
  REQUIRE_CLI();
  EXPECT_EQ(tsr_test::run_cli(kCli, "check-plugin").exit_code, 2);
  EXPECT_EQ(tsr_test::run_cli(kCli, "check-plugin /nonexistent/x.so").exit_code, 2);
  EXPECT_EQ(tsr_test::run_cli(kCli, "check-plugin --timeout -1 " + case_so("good", "toy.so")).exit_code, 2);
  EXPECT_EQ(tsr_test::run_cli(kCli, "check-plugin " + case_so("good", "toy.json")).exit_code, 2);
}

}  // namespace
