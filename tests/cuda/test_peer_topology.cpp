// The cuda backend's "tessera.peer_topology.cuda" table (backends/cuda/peer_topology.cpp,
// abi/tessera/ext_peer_topology.h). Without a GPU the table is absent (the backend is not
// loaded) and the tests that need one skip with the reason; with 1 GPU the diagonal and the
// range errors are checked; with 2 or more, can_access must agree with cudaDeviceCanAccessPeer
// and a pair with access must name its link (NVLink or PCIe with NVML, unknown without). The
// same table and `tessera info`'s matrix are tested without GPUs in
// tests/loader/test_peer_topology.cpp (a fake backend).
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <string>

#include "tessera/ext_peer_topology.h"
#include "tessera/tessera.hpp"

namespace {

const tsr_api_t* A() { return tsr::api(); }

int cuda_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

// The table and the runtime's cuda device count, or NULL with the reason.
const tsr_peer_topology_t* table(int32_t* count, std::string* why) {
  int32_t id = -1;
  if (tsr_status_t st = A()->device_type_lookup(tsr::runtime(), "cuda", &id)) {
    *why = std::string("no cuda device type in this runtime (no GPU or no driver): ") + A()->status_message(st);
    A()->status_free(st);
    return nullptr;
  }
  *count = A()->device_count(tsr::runtime(), id);
  if (*count <= 0) {
    *why = "the cuda device type has no devices";
    return nullptr;
  }
  const auto* t = static_cast<const tsr_peer_topology_t*>(
      A()->get_extension(tsr::runtime(), TSR_PEER_TOPOLOGY_EXTENSION_PREFIX "cuda"));
  if (!t) *why = "the cuda backend did not publish tessera.peer_topology.cuda";
  return t;
}

#define REQUIRE_TABLE(t, count, min)                                    \
  int32_t count = 0;                                                    \
  std::string why_;                                                     \
  const tsr_peer_topology_t* t = table(&count, &why_);                  \
  if (!t && cuda_count() == 0) GTEST_SKIP() << "needs a GPU: " << why_; \
  ASSERT_NE(t, nullptr) << why_;                                        \
  if (count < (min)) GTEST_SKIP() << "needs " << (min) << " GPUs, this machine has " << count

tsr_code_t query(const tsr_peer_topology_t* t, int32_t src, int32_t dst, tsr_peer_link_t* out, std::string* msg) {
  out->struct_size = sizeof(*out);
  tsr_status_t st = t->query(tsr::runtime(), src, dst, out);
  if (!st) return TSR_OK;
  const tsr_code_t code = A()->status_code(st);
  *msg = A()->status_message(st);
  A()->status_free(st);
  return code;
}

TEST(CudaPeerTopology, WithoutGpuTheTableIsAbsent) {
  if (cuda_count() > 0) GTEST_SKIP() << "a GPU is present (the other tests check the table)";
  EXPECT_EQ(A()->get_extension(tsr::runtime(), TSR_PEER_TOPOLOGY_EXTENSION_PREFIX "cuda"), nullptr);
}

TEST(CudaPeerTopology, SameDeviceAndRangeErrors) {
  REQUIRE_TABLE(t, count, 1);
  EXPECT_EQ(t->struct_size, sizeof(tsr_peer_topology_t));
  std::string msg;
  for (int32_t i = 0; i < count; ++i) {
    tsr_peer_link_t l{};
    ASSERT_EQ(query(t, i, i, &l, &msg), TSR_OK) << msg;
    EXPECT_EQ(l.struct_size, sizeof(tsr_peer_link_t));
    EXPECT_EQ(l.can_access, 1);
    EXPECT_EQ(l.link, TSR_PEER_LINK_SAME_DEVICE);
    EXPECT_EQ(l.nvlink_count, 0);
  }
  for (int32_t bad : {count, -1, count + 5}) {
    tsr_peer_link_t l{};
    msg.clear();
    EXPECT_EQ(query(t, bad, 0, &l, &msg), TSR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(msg.find("cuda:" + std::to_string(bad)), std::string::npos) << msg;
    msg.clear();
    EXPECT_EQ(query(t, 0, bad, &l, &msg), TSR_INVALID_ARGUMENT) << bad;
    EXPECT_NE(msg.find("cuda:" + std::to_string(bad)), std::string::npos) << msg;
  }
}

TEST(CudaPeerTopology, CanAccessAgreesWithCuda) {
  REQUIRE_TABLE(t, count, 2);
  for (int32_t src = 0; src < count; ++src)
    for (int32_t dst = 0; dst < count; ++dst) {
      if (src == dst) continue;
      int can = 0;
      ASSERT_EQ(cudaDeviceCanAccessPeer(&can, dst, src), cudaSuccess);
      tsr_peer_link_t l{};
      std::string msg;
      ASSERT_EQ(query(t, src, dst, &l, &msg), TSR_OK) << msg;
      SCOPED_TRACE("cuda:" + std::to_string(src) + " -> cuda:" + std::to_string(dst) + ": link " +
                   std::to_string(l.link) + ", nvlinks " + std::to_string(l.nvlink_count) + ", rank " +
                   std::to_string(l.performance_rank));
      EXPECT_EQ(l.can_access, can ? 1 : 0);
      if (can) {
        EXPECT_TRUE(l.link == TSR_PEER_LINK_NVLINK || l.link == TSR_PEER_LINK_PCIE || l.link == TSR_PEER_LINK_UNKNOWN);
        EXPECT_EQ(l.link == TSR_PEER_LINK_NVLINK, l.nvlink_count > 0);
        EXPECT_GE(l.performance_rank, 0);
      } else {
        EXPECT_EQ(l.link, TSR_PEER_LINK_NONE);
        EXPECT_EQ(l.performance_rank, -1);
      }
    }
}

}  // namespace
