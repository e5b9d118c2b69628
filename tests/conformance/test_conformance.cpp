// The conformance suite: every OpInfo on every device of the default runtime (the plugins the
// environment loads), one test per op x device so ctest names each op.
#include <gtest/gtest.h>

#include <algorithm>
#include <ostream>
#include <set>
#include <string>

#include "runner.hpp"

namespace {

using namespace tsr::conformance;

struct Param {
  size_t index;  // into infos(): an op may have several OpInfos (variants)
  std::string op;
  tsr::Device device;
  std::string device_name;  // "cpu:0"
  std::string test_name;    // "exp_cpu0"
};
void PrintTo(const Param& p, std::ostream* os) { *os << p.op << " on " << p.device_name; }

const std::vector<OpInfo>& infos() {
  static const std::vector<OpInfo> v = all_opinfos();
  return v;
}

std::string identifier(const std::string& s) {
  std::string r;
  for (char c : s) r += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  return r;
}

// Evaluated by GoogleTest at InitGoogleTest time, after static registration ran.
std::vector<Param> params() {
  std::vector<Param> out;
  std::set<std::string> used;
  tsr_runtime_t* rt = tsr::runtime();
  for (const tsr::Device& d : loaded_devices(rt)) {
    const std::string shown = device_name(rt, d);
    std::string dev = shown;
    dev.erase(std::remove(dev.begin(), dev.end(), ':'), dev.end());
    for (size_t i = 0; i < infos().size(); ++i) {
      const OpInfo& info = infos()[i];
      std::string name = identifier(info.name + "_" + dev);
      for (int k = 2; !used.insert(name).second; ++k)
        name = identifier(info.name + "_" + dev) + "_" + std::to_string(k);
      out.push_back({i, info.name, d, shown, name});
    }
  }
  return out;
}

class Ops : public ::testing::TestWithParam<Param> {};

TEST_P(Ops, Check) {
  const Param& p = GetParam();
  ASSERT_LT(p.index, infos().size());
  std::vector<CheckResult> results = run_opinfo(tsr::runtime(), infos()[p.index], p.device);
  size_t pass = 0, skip = 0, fail = 0;
  std::string report;
  for (const CheckResult& r : results) {
    if (r.outcome == Outcome::Pass) ++pass;
    if (r.outcome == Outcome::Skip) ++skip;
    if (r.outcome != Outcome::Fail) continue;
    if (++fail <= 20)  // enough to see the pattern; `tessera conformance --json` lists them all
      report += "  " + r.dtype + " [" + r.check + "] " + r.sample + ": " + r.message + "\n";
  }
  EXPECT_EQ(fail, 0u) << p.op << " on " << p.device_name << ": " << fail << " of " << results.size() << " checks failed"
                      << (fail > 20 ? " (first 20)" : "") << ":\n"
                      << report;
  RecordProperty("passed", static_cast<int>(pass));
  RecordProperty("skipped", static_cast<int>(skip));
  if (pass == 0 && skip > 0) GTEST_SKIP() << "every check skipped: " << results.front().message;
}

// A build without any backend plugin has no device to check.
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Ops);
INSTANTIATE_TEST_SUITE_P(Conformance, Ops, ::testing::ValuesIn(params()),
                         [](const ::testing::TestParamInfo<Param>& i) { return i.param.test_name; });

TEST(ConformanceSuite, EveryOpInfoNamesARegisteredOp) {
  for (const OpInfo& o : infos()) {
    tsr_op_t* op = nullptr;
    tsr_status_t st = tsr::api()->op_find(tsr::runtime(), o.name.c_str(), &op);
    EXPECT_EQ(st, nullptr) << "no op named " << o.name;
    tsr::api()->status_free(st);
  }
}

}  // namespace
