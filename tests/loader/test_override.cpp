// Kernel overrides by device predicate and priority, without a GPU: the ccdev test backend
// (plugins/ccdev.cpp) has devices that report chosen compute capabilities and registers a
// generic kernel and a compute-capability-10.x override (tsr::ComputeCapabilityGate, the SDK
// helper the sm100 plugin registers its kernels with) for ccdev::which. The override must run
// on the 10.x devices only, the generic kernel everywhere else, and `tessera kernels` must show
// both with their priorities and the predicate.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "ccdev_runtime.hpp"
#include "cli_runner.hpp"
#include "tessera/api.h"

namespace {

using ccdev_test::api;
using ccdev_test::kDir;
using ccdev_test::take_message;

struct CcRuntime : ccdev_test::CcdevRuntime {
  using CcdevRuntime::CcdevRuntime;
  // The value `op` (ccdev::which) writes on ccdev:index for an input of n elements (1 = generic
  // kernel, 2 = the 10.x override, which declines n > 4); -1 when the call fails (*error: why).
  float which(int32_t index, int64_t n = 3, const char* op_name = "ccdev::which", std::string* error = nullptr) {
    int32_t type = -1;
    EXPECT_EQ(take_message(api()->device_type_lookup(rt, "ccdev", &type)), "");
    const float x[8] = {};
    const int64_t sizes[1] = {n};
    tsr_tensor_t* xt = nullptr;
    EXPECT_EQ(take_message(api()->tensor_from_host(rt, x, 1, sizes, TSR_F32, tsr_device_t{type, index}, &xt)), "");
    tsr_op_t* op = nullptr;
    EXPECT_EQ(take_message(api()->op_find(rt, op_name, &op)), "");
    tsr_value_t arg{};
    arg.tag = TSR_VALUE_TENSOR;
    arg.u.tensor = xt;
    tsr_tensor_t* out = nullptr;
    const std::string err = take_message(api()->op_call(op, &arg, 1, &out, 1));
    if (error) *error = err;
    else
      EXPECT_EQ(err, "");
    float y[8] = {-1.f, -1.f, -1.f, -1.f, -1.f, -1.f, -1.f, -1.f};
    if (out) {
      EXPECT_EQ(take_message(api()->tensor_copy_to_host(out, y, size_t(n) * sizeof(float))), "");
    }
    EXPECT_EQ(y[0], y[n - 1]);
    if (out) api()->tensor_release(out);
    if (xt) api()->tensor_release(xt);
    return y[0];
  }
};

TEST(KernelOverride, PredicateSelectsTheOverrideOnlyOnComputeCapability10) {
  CcRuntime r(nullptr);  // ccdev:0 is 10.0, ccdev:1 is 9.0
  ASSERT_NE(r.rt, nullptr);
  EXPECT_EQ(r.which(0), 2.f) << "the 10.0 device must run the override";
  EXPECT_EQ(r.which(1), 1.f) << "the 9.0 device must run the generic kernel";
  // Asked again (the predicate's per-device cache answers now): the same choice.
  EXPECT_EQ(r.which(0), 2.f);
  EXPECT_EQ(r.which(1), 1.f);
}

TEST(KernelOverride, AnyMinorOfMajor10MatchesAndNothingElse) {
  CcRuntime r("9.0,10.3,12.0,10.0,8.9");
  ASSERT_NE(r.rt, nullptr);
  const float want[5] = {1.f, 2.f, 1.f, 2.f, 1.f};
  for (int32_t i = 0; i < 5; ++i) EXPECT_EQ(r.which(i), want[i]) << "ccdev:" << i;
}

TEST(KernelOverride, NoMatchingDeviceMeansGenericEverywhere) {
  CcRuntime r("9.0,9.0");
  ASSERT_NE(r.rt, nullptr);
  EXPECT_EQ(r.which(0), 1.f);
  EXPECT_EQ(r.which(1), 1.f);
}

// An override that declines an input (UNIMPLEMENTED, nothing written) hands it to the next
// kernel by priority: the 10.x override takes 3 elements and declines 8, which the generic kernel
// then computes; when every kernel declines, the caller gets the last one's UNIMPLEMENTED.
TEST(KernelOverride, ADecliningOverrideFallsBackToTheNextKernel) {
  CcRuntime r(nullptr);  // ccdev:0 is 10.0, ccdev:1 is 9.0
  ASSERT_NE(r.rt, nullptr);
  EXPECT_EQ(r.which(0, 3), 2.f) << "an input the override takes";
  EXPECT_EQ(r.which(0, 8), 1.f) << "an input the override declines runs the generic kernel";
  EXPECT_EQ(r.which(1, 8), 1.f);
  std::string error;
  EXPECT_EQ(r.which(0, 3, "ccdev::never", &error), -1.f);
  EXPECT_NE(error.find("declined by never_last"), std::string::npos) << error;
}

TEST(KernelOverride, DevicePropertiesReportTheCapabilities) {
  CcRuntime r(nullptr);
  int32_t type = -1;
  ASSERT_EQ(take_message(api()->device_type_lookup(r.rt, "ccdev", &type)), "");
  tsr_device_properties_t p{};
  p.struct_size = TSR_STRUCT_SIZE(tsr_device_properties_t);
  ASSERT_EQ(take_message(api()->device_properties(r.rt, tsr_device_t{type, 1}, &p)), "");
  EXPECT_EQ(p.compute_major, 9);
  EXPECT_EQ(p.compute_minor, 0);
}

#ifdef TSR_CLI
TEST(KernelOverride, TesseraKernelsListsBothWithPriorityAndPredicate) {
  tsr_test::CliResult r =
      tsr_test::run_cli(TSR_CLI, "kernels --op ccdev::which --no-default-plugins --plugin-path " + kDir);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  // Dispatch order per device type: the override first (priority 100, with its predicate).
  const size_t over = r.output.find("ccdev::which_cc10");
  const size_t gen = r.output.find("ccdev::which_generic");
  ASSERT_NE(over, std::string::npos) << r.output;
  ASSERT_NE(gen, std::string::npos) << r.output;
  EXPECT_LT(over, gen) << r.output;
  const std::string over_line = r.output.substr(over, r.output.find('\n', over) - over);
  const std::string gen_line = r.output.substr(gen, r.output.find('\n', gen) - gen);
  EXPECT_NE(over_line.find("priority 100"), std::string::npos) << over_line;
  EXPECT_NE(over_line.find("(device predicate)"), std::string::npos) << over_line;
  EXPECT_NE(gen_line.find("priority 0"), std::string::npos) << gen_line;
  EXPECT_EQ(gen_line.find("(device predicate)"), std::string::npos) << gen_line;
}
#endif

}  // namespace
