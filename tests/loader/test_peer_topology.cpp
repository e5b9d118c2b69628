// The peer topology extension (abi/tessera/ext_peer_topology.h) and `tessera info`'s matrix,
// without GPUs: the ccdev test backend (plugins/ccdev.cpp) publishes a fake
// "tessera.peer_topology.ccdev" table whose link depends on the larger index m of a pair
// (m == 1 NVLink x4, m == 2 PCIe, m == 3 peer access over an unknown link, m >= 4 none). The
// real table of the cuda backend is tested in tests/cuda/test_peer_topology.cpp (GPU needed).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "ccdev_runtime.hpp"
#include "cli_runner.hpp"
#include "tessera/api.h"
#include "tessera/ext_peer_topology.h"

namespace {

using ccdev_test::api;
using ccdev_test::kDir;
using ccdev_test::take_message;

// A runtime with only the ccdev plugin (2 devices unless `caps` says otherwise).
struct PeerRuntime : ccdev_test::CcdevRuntime {
  using CcdevRuntime::CcdevRuntime;
  const tsr_peer_topology_t* table() const {
    return static_cast<const tsr_peer_topology_t*>(
        api()->get_extension(rt, TSR_PEER_TOPOLOGY_EXTENSION_PREFIX "ccdev"));
  }
};

tsr_peer_link_t query(const tsr_peer_topology_t* t, tsr_runtime_t* rt, int32_t src, int32_t dst) {
  tsr_peer_link_t l{};
  l.struct_size = sizeof(l);
  EXPECT_EQ(take_message(t->query(rt, src, dst, &l)), "") << src << " -> " << dst;
  return l;
}

TEST(PeerTopology, TableIsPublishedUnderThePrefixAndTheDeviceTypeName) {
  PeerRuntime r(nullptr);
  ASSERT_NE(r.rt, nullptr);
  const tsr_peer_topology_t* t = r.table();
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->struct_size, sizeof(tsr_peer_topology_t));
  EXPECT_EQ(t->flags, 0u);
  ASSERT_TRUE(TSR_PEER_TOPOLOGY_HAS(t, query));
  ASSERT_NE(t->query, nullptr);
  EXPECT_EQ(api()->get_extension(r.rt, TSR_PEER_TOPOLOGY_EXTENSION_PREFIX "cuda"), nullptr);
}

TEST(PeerTopology, QueryFillsTheLink) {
  PeerRuntime r(nullptr);  // ccdev:0 <-> ccdev:1 over NVLink x4
  const tsr_peer_topology_t* t = r.table();
  ASSERT_NE(t, nullptr);
  for (int32_t i = 0; i < 2; ++i) {
    const tsr_peer_link_t self = query(t, r.rt, i, i);
    EXPECT_EQ(self.struct_size, sizeof(tsr_peer_link_t));
    EXPECT_EQ(self.can_access, 1);
    EXPECT_EQ(self.link, TSR_PEER_LINK_SAME_DEVICE);
    EXPECT_EQ(self.performance_rank, 0);
  }
  for (auto [src, dst] : {std::pair<int32_t, int32_t>{0, 1}, {1, 0}}) {
    const tsr_peer_link_t l = query(t, r.rt, src, dst);
    EXPECT_EQ(l.struct_size, sizeof(tsr_peer_link_t));
    EXPECT_EQ(l.can_access, 1);
    EXPECT_EQ(l.link, TSR_PEER_LINK_NVLINK);
    EXPECT_EQ(l.nvlink_count, 4);
    EXPECT_EQ(l.performance_rank, 0);
    EXPECT_EQ(l.native_atomics, 1);
    EXPECT_EQ(l.reserved, 0);
  }
}

TEST(PeerTopology, EveryLinkKind) {
  PeerRuntime r("10.0,9.0,9.0,9.0,9.0");
  const tsr_peer_topology_t* t = r.table();
  ASSERT_NE(t, nullptr);
  const tsr_peer_link_t pcie = query(t, r.rt, 2, 0);
  EXPECT_EQ(pcie.link, TSR_PEER_LINK_PCIE);
  EXPECT_EQ(pcie.can_access, 1);
  EXPECT_EQ(pcie.nvlink_count, 0);
  EXPECT_EQ(pcie.performance_rank, 1);
  const tsr_peer_link_t unknown = query(t, r.rt, 1, 3);
  EXPECT_EQ(unknown.link, TSR_PEER_LINK_UNKNOWN);
  EXPECT_EQ(unknown.can_access, 1);
  EXPECT_EQ(unknown.performance_rank, -1);
  const tsr_peer_link_t none = query(t, r.rt, 4, 0);
  EXPECT_EQ(none.link, TSR_PEER_LINK_NONE);
  EXPECT_EQ(none.can_access, 0);
  EXPECT_EQ(none.performance_rank, -1);
}

TEST(PeerTopology, AnIndexOutOfRangeIsInvalidArgumentNamingTheDevice) {
  PeerRuntime r(nullptr);
  const tsr_peer_topology_t* t = r.table();
  ASSERT_NE(t, nullptr);
  for (auto [src, dst, bad] :
       {std::tuple<int32_t, int32_t, const char*>{0, 2, "ccdev:2"}, {-1, 0, "ccdev:-1"}, {7, 1, "ccdev:7"}}) {
    tsr_peer_link_t l{};
    l.struct_size = sizeof(l);
    l.reserved = 42;  // out parameters are written on success only
    tsr_status_t st = t->query(r.rt, src, dst, &l);
    ASSERT_NE(st, nullptr) << src << " -> " << dst;
    EXPECT_EQ(api()->status_code(st), TSR_INVALID_ARGUMENT);
    const std::string msg = take_message(st);
    EXPECT_NE(msg.find(bad), std::string::npos) << msg;
    EXPECT_EQ(l.reserved, 42);
  }
  tsr_status_t st = t->query(r.rt, 0, 1, nullptr);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(api()->status_code(st), TSR_INVALID_ARGUMENT);
  take_message(st);
}

// A caller built when tsr_peer_link_t was shorter gets no more than its struct_size.
TEST(PeerTopology, AShorterOutStructIsNotOverrun) {
  PeerRuntime r(nullptr);
  const tsr_peer_topology_t* t = r.table();
  ASSERT_NE(t, nullptr);
  struct {
    tsr_peer_link_t link;
    int32_t guard[8];
  } buf;
  std::memset(&buf, 0x7f, sizeof(buf));
  const size_t shorter = offsetof(tsr_peer_link_t, nvlink_count);
  buf.link.struct_size = shorter;
  ASSERT_EQ(take_message(t->query(r.rt, 0, 1, &buf.link)), "");
  EXPECT_EQ(buf.link.struct_size, shorter);
  EXPECT_TRUE(TSR_PEER_LINK_HAS(&buf.link, link));
  EXPECT_FALSE(TSR_PEER_LINK_HAS(&buf.link, nvlink_count));
  EXPECT_EQ(buf.link.can_access, 1);
  EXPECT_EQ(buf.link.link, TSR_PEER_LINK_NVLINK);
  EXPECT_EQ(buf.link.nvlink_count, 0x7f7f7f7f) << "written past the caller's struct_size";
  // struct_size 0 means the backend's size.
  tsr_peer_link_t l{};
  ASSERT_EQ(take_message(t->query(r.rt, 0, 1, &l)), "");
  EXPECT_EQ(l.struct_size, sizeof(tsr_peer_link_t));
  EXPECT_EQ(l.nvlink_count, 4);
}

#ifdef TSR_CLI
std::string cli_args(const std::string& extra = "") {
  return "info --no-default-plugins --plugin-path " + tsr_test::shell_quote(kDir) + " " + extra;
}

// The matrix row of device `name` ("ccdev:1"), split into cells.
std::vector<std::string> row_of(const std::string& out, const std::string& name) {
  const size_t m = out.find("Peer topology (ccdev)");
  if (m == std::string::npos) return {};
  size_t pos = out.find("\n  " + name + " ", m);
  if (pos == std::string::npos) return {};
  pos += 3;
  const std::string line = out.substr(pos, out.find('\n', pos) - pos);
  std::vector<std::string> cells;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && line[i] == ' ') ++i;
    size_t j = i;
    while (j < line.size() && line[j] != ' ') ++j;
    if (j > i) cells.push_back(line.substr(i, j - i));
    i = j;
  }
  return cells;
}

TEST(PeerTopology, TesseraInfoPrintsTheMatrix) {
  tsr_test::CliResult r = tsr_test::run_cli(TSR_CLI, cli_args());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(tsr_test::contains(r.output, "Peer topology (ccdev)")) << r.output;
  EXPECT_EQ(row_of(r.output, "ccdev:0"), (std::vector<std::string>{"ccdev:0", "X", "NV4"})) << r.output;
  EXPECT_EQ(row_of(r.output, "ccdev:1"), (std::vector<std::string>{"ccdev:1", "NV4", "X"})) << r.output;
  EXPECT_TRUE(tsr_test::contains(r.output, "Legend: X = same device, NV# = peer access over # NVLinks")) << r.output;
}

TEST(PeerTopology, TesseraInfoShowsEveryCellKind) {
  tsr_test::CliResult r = tsr_test::run_cli(TSR_CLI, cli_args(), "TSR_TEST_CCDEV_CAPS=10.0,9.0,9.0,9.0,9.0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(row_of(r.output, "ccdev:0"), (std::vector<std::string>{"ccdev:0", "X", "NV4", "PCIe", "P2P?", "-"}))
      << r.output;
  EXPECT_EQ(row_of(r.output, "ccdev:4"), (std::vector<std::string>{"ccdev:4", "-", "-", "-", "-", "X"})) << r.output;
}

TEST(PeerTopology, TesseraInfoWithOneDeviceSaysItNeedsTwo) {
  tsr_test::CliResult r = tsr_test::run_cli(TSR_CLI, cli_args(), "TSR_TEST_CCDEV_CAPS=10.0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(tsr_test::contains(r.output, "Peer topology (ccdev): needs 2 devices, 1 here")) << r.output;
  EXPECT_FALSE(tsr_test::contains(r.output, "Legend:")) << r.output;
}

TEST(PeerTopology, TesseraInfoJson) {
  tsr_test::CliResult r = tsr_test::run_cli(TSR_CLI, cli_args("--json"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json j = nlohmann::json::parse(r.output);
  ASSERT_TRUE(j.contains("peer_topology")) << r.output;
  const nlohmann::json& p = j["peer_topology"]["ccdev"];
  EXPECT_EQ(p["devices"], 2);
  ASSERT_EQ(p["links"].size(), 4u) << p.dump();
  const nlohmann::json& l01 = p["links"][1];
  EXPECT_EQ(l01["src"], 0);
  EXPECT_EQ(l01["dst"], 1);
  EXPECT_EQ(l01["link"], "nvlink");
  EXPECT_EQ(l01["can_access"], true);
  EXPECT_EQ(l01["nvlink_count"], 4);
  EXPECT_EQ(l01["performance_rank"], 0);
  EXPECT_EQ(l01["native_atomics"], true);
  EXPECT_EQ(p["links"][0]["link"], "same_device");
}
#endif

}  // namespace
