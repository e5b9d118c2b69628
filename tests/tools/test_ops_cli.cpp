// `tessera ops`: where each op is written (the registry's records plus the build's source index),
// and the coverage check every public op must pass.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_runner.hpp"

namespace {

using nlohmann::json;
using tsr_test::run_cli;

using tsr_test::kHaveCpu;

using tsr_test::contains;

TEST(OpsCli, WhereSoftmaxAnswersInOneScreen) {
  if (!kHaveCpu) GTEST_SKIP() << "the cpu backend is not built here";
  tsr_test::CliResult r = run_cli(TSR_CLI, "ops --where softmax");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_LE(std::count(r.output.begin(), r.output.end(), '\n'), 24) << r.output;
  EXPECT_TRUE(contains(r.output, "softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor")) << r.output;
  // The record and the formula live together in the family's file.
  EXPECT_TRUE(contains(r.output, "declared  core/ops/nn/nn_softmax.cpp:")) << r.output;
  EXPECT_TRUE(contains(r.output, "backward  softmax_backward at core/ops/nn/nn_softmax.cpp:")) << r.output;
  EXPECT_TRUE(contains(r.output, "cpu::softmax")) << r.output;
  EXPECT_TRUE(contains(r.output, "plugin cpu")) << r.output;
  EXPECT_TRUE(contains(r.output, "sdk       sdk/tessera/")) << r.output;
  EXPECT_TRUE(contains(r.output, "opinfo    tools/conformance/opinfo_nn.cpp:")) << r.output;
  EXPECT_TRUE(contains(r.output, "docs      docs/")) << r.output;
}

TEST(OpsCli, WhereNamesTheLineOfTheRecord) {
  tsr_test::CliResult r = run_cli(TSR_CLI, "ops --where mul --json --no-default-plugins");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  json j = json::parse(r.output);
  EXPECT_EQ(j.at("name"), "mul");
  EXPECT_EQ(j.at("plugin"), "core");
  EXPECT_EQ(j.at("declared").at("file"), "core/ops/binary/binary.cpp");
  EXPECT_GT(j.at("declared").at("line").get<int>(), 0);
  EXPECT_EQ(j.at("backward").at("formula"), "mul_backward");
  EXPECT_EQ(j.at("backward").at("at").at("file"), "core/ops/binary/binary.cpp");
  EXPECT_FALSE(j.at("composite").get<bool>());
  // A composite has no formula of its own.
  r = run_cli(TSR_CLI, "ops --where addmm --json --no-default-plugins");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = json::parse(r.output);
  EXPECT_TRUE(j.at("composite").get<bool>());
  EXPECT_TRUE(j.at("backward").is_null());
}

TEST(OpsCli, UnknownOpSuggestsSimilarNames) {
  tsr_test::CliResult r = run_cli(TSR_CLI, "ops --where softma --no-default-plugins");
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "no op named 'softma'")) << r.output;
  EXPECT_TRUE(contains(r.output, "log_softmax")) << r.output;
}

// Every public op has an SDK wrapper, an OpInfo and a doc row, or an exemption with its reason;
// an exemption no longer needed fails too.
TEST(OpsCli, EveryPublicOpHasAWrapperAnOpInfoAndADocRow) {
  tsr_test::CliResult r = run_cli(TSR_CLI, "ops --check --no-default-plugins");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, " 0 problems")) << r.output;
}

}  // namespace
