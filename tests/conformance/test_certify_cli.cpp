// `tessera conformance --plugin` certifying a deliberately broken backend (plugins/broken_arange):
// the wrong kernel is named in the failures and the command exits 1.
#include <gtest/gtest.h>

#include <string>

#include "cli_runner.hpp"

namespace {

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(ConformanceCertify, BrokenBackendFailsLoudly) {
  tsr_test::CliResult r =
      tsr_test::run_cli(TSR_CLI, "conformance --op arange --plugin " + tsr_test::shell_quote(TSR_BROKEN_ARANGE_PLUGIN));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_TRUE(contains(r.output, "FAIL arange on cpu:0 float32 [forward]")) << r.output;
  EXPECT_TRUE(contains(r.output, "first at flat index 3")) << r.output;
  EXPECT_FALSE(contains(r.output, "FAIL arange on cpu:0 float64")) << r.output;
  EXPECT_TRUE(contains(r.output, "1 op/device pairs: 0 conform, 0 partial, 0 not implemented, 1 failed")) << r.output;
}

TEST(ConformanceCertify, SameRunWithoutThePluginPasses) {
  tsr_test::CliResult r = tsr_test::run_cli(TSR_CLI, "conformance --op arange");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(contains(r.output, "1 op/device pairs: 1 conform")) << r.output;
}

}  // namespace
