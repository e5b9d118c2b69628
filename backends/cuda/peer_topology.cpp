// "tessera.peer_topology.cuda": which GPU pairs have peer access and over which link (see
// abi/tessera/ext_peer_topology.h; `tessera info` prints the matrix).
//
// can_access, performance_rank and native_atomics come from the CUDA runtime
// (cudaDeviceCanAccessPeer, cudaDeviceGetP2PAttribute). The link (NVLink or PCIe) is known only
// to NVML, which ships with the driver, not the toolkit: libnvidia-ml.so.1 is dlopen'ed on the
// first query (once, thread-safe) and never linked, so that the plugin loads on a machine
// without it; without NVML a pair with peer access reports TSR_PEER_LINK_UNKNOWN. The toolkit
// has no nvml.h, so the few NVML types and entry points used are declared below, as the NVML
// headers define them (they are part of NVML's stable C ABI).
//
// CUDA device indices and NVML device indices differ (CUDA_VISIBLE_DEVICES, CUDA's
// fastest-first order), so devices are matched by PCI address: CUDA's bus id string gives the
// NVML handle, CUDA's PCI domain/bus/device attributes are compared with the remote end of
// each NVLink. An NVLink of src counts towards dst when it is active and its remote end is dst,
// or is an NVSwitch while dst also has an active link to a switch (NVSwitch systems: every GPU
// reaches every other through the switches with all its links).
#include <dlfcn.h>

#include <cstring>
#include <mutex>

#include "device_internal.hpp"
#include "tessera/ext_peer_topology.h"

namespace tsr::cuda {
namespace {

// ---- NVML, declared here (nvml.h), loaded at run time -------------------------------------

using nvmlReturn_t = int;  // NVML_SUCCESS = 0
constexpr nvmlReturn_t NVML_SUCCESS = 0;
using nvmlDevice_t = struct nvmlDevice_st*;
using nvmlEnableState_t = int;  // NVML_FEATURE_DISABLED 0, NVML_FEATURE_ENABLED 1
constexpr nvmlEnableState_t NVML_FEATURE_ENABLED = 1;
using nvmlIntNvLinkDeviceType_t = int;  // GPU 0, IBMNPU 1, SWITCH 2, UNKNOWN 0xFF
constexpr nvmlIntNvLinkDeviceType_t NVML_NVLINK_DEVICE_TYPE_SWITCH = 2;
// NVML_NVLINK_MAX_LINKS (18 since Hopper; a link index past a GPU's own count answers an error,
// which counts as inactive).
constexpr unsigned kMaxLinks = 18;

struct nvmlPciInfo_t {   // nvmlPciInfo_st
  char busIdLegacy[16];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pciDeviceId;
  unsigned int pciSubSystemId;
  char busId[32];  // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
};

struct Nvml {
  nvmlReturn_t (*init)() = nullptr;  // nvmlInit_v2
  nvmlReturn_t (*handle_by_pci_bus_id)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned, nvmlEnableState_t*) = nullptr;
  nvmlReturn_t (*nvlink_remote_pci)(nvmlDevice_t, unsigned, nvmlPciInfo_t*) = nullptr;
  nvmlReturn_t (*nvlink_remote_type)(nvmlDevice_t, unsigned, nvmlIntNvLinkDeviceType_t*) = nullptr;  // optional
  bool ok = false;
};

// Loaded once for the process and never unloaded (nor nvmlShutdown: other runtimes may query
// later, and NVML's own teardown at exit is the driver's business).
const Nvml& nvml() {
  static Nvml n;
  static std::once_flag once;
  std::call_once(once, [] {
    void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return;  // no driver's NVML: links are reported unknown
    auto sym = [lib](const char* name) { return dlsym(lib, name); };
    n.init = reinterpret_cast<decltype(n.init)>(sym("nvmlInit_v2"));
    n.handle_by_pci_bus_id =
        reinterpret_cast<decltype(n.handle_by_pci_bus_id)>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
    n.nvlink_state = reinterpret_cast<decltype(n.nvlink_state)>(sym("nvmlDeviceGetNvLinkState"));
    n.nvlink_remote_pci = reinterpret_cast<decltype(n.nvlink_remote_pci)>(sym("nvmlDeviceGetNvLinkRemotePciInfo_v2"));
    n.nvlink_remote_type = reinterpret_cast<decltype(n.nvlink_remote_type)>(sym("nvmlDeviceGetNvLinkRemoteDeviceType"));
    n.ok = n.init && n.handle_by_pci_bus_id && n.nvlink_state && n.nvlink_remote_pci && n.init() == NVML_SUCCESS;
  });
  return n;
}

struct Pci {
  int domain = -1, bus = -1, device = -1;
};

Pci pci_of(int dev) {
  Pci p;
  if (cudaDeviceGetAttribute(&p.domain, cudaDevAttrPciDomainId, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&p.bus, cudaDevAttrPciBusId, dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&p.device, cudaDevAttrPciDeviceId, dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return Pci{};
  }
  return p;
}

// The NVML handle of a CUDA device (NULL when NVML does not know it).
nvmlDevice_t nvml_handle(const Nvml& n, int dev) {
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return nullptr;
  }
  nvmlDevice_t h = nullptr;
  return n.handle_by_pci_bus_id(bus_id, &h) == NVML_SUCCESS ? h : nullptr;
}

struct Links {
  int to_peer = 0;    // active links whose remote end is the peer
  int to_switch = 0;  // active links whose remote end is an NVSwitch
};

Links active_links(const Nvml& n, nvmlDevice_t h, const Pci& peer) {
  Links l;
  for (unsigned i = 0; i < kMaxLinks; ++i) {
    nvmlEnableState_t active = 0;
    if (n.nvlink_state(h, i, &active) != NVML_SUCCESS || active != NVML_FEATURE_ENABLED) continue;
    nvmlIntNvLinkDeviceType_t type = -1;
    if (n.nvlink_remote_type && n.nvlink_remote_type(h, i, &type) == NVML_SUCCESS &&
        type == NVML_NVLINK_DEVICE_TYPE_SWITCH) {
      ++l.to_switch;
      continue;
    }
    nvmlPciInfo_t remote{};
    if (n.nvlink_remote_pci(h, i, &remote) != NVML_SUCCESS) continue;
    if (int(remote.domain) == peer.domain && int(remote.bus) == peer.bus && int(remote.device) == peer.device)
      ++l.to_peer;
  }
  return l;
}

void check_index(int32_t index) {
  const int n = device_count();
  if (index < 0 || index >= n)
    fail(TSR_INVALID_ARGUMENT, "peer_topology query: no device cuda:", index, " (", n,
         n == 1 ? " device)" : " devices)");
}

tsr_status_t query(tsr_runtime_t*, int32_t src, int32_t dst, tsr_peer_link_t* out) {
  return guarded("cuda peer_topology query", [&] {
    check_index(src);
    check_index(dst);
    if (!out || (out->struct_size != 0 && out->struct_size < sizeof(size_t)))
      fail(TSR_INVALID_ARGUMENT, "peer_topology query (cuda:", src, " -> cuda:", dst,
           "): out is NULL or its struct_size is too small");
    tsr_peer_link_t r{};
    r.performance_rank = -1;
    if (src == dst) {
      r.can_access = 1;
      r.link = TSR_PEER_LINK_SAME_DEVICE;
      r.performance_rank = 0;
      r.native_atomics = 1;
    } else {
      int can = 0;
      TSR_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, dst, src), "peer_topology query", dst);
      r.can_access = can ? 1 : 0;
      if (can) {
        int rank = -1, atomics = 0;
        if (cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, src, dst) != cudaSuccess) {
          (void)cudaGetLastError();
          rank = -1;
        }
        if (cudaDeviceGetP2PAttribute(&atomics, cudaDevP2PAttrNativeAtomicSupported, src, dst) != cudaSuccess) {
          (void)cudaGetLastError();
          atomics = 0;
        }
        r.performance_rank = rank;
        r.native_atomics = atomics ? 1 : 0;
      }
      // The link, from NVML. Without it (or without a handle for either GPU) it stays unknown.
      r.link = can ? TSR_PEER_LINK_UNKNOWN : TSR_PEER_LINK_NONE;
      const Nvml& n = nvml();
      nvmlDevice_t hs = n.ok ? nvml_handle(n, src) : nullptr;
      nvmlDevice_t hd = n.ok ? nvml_handle(n, dst) : nullptr;
      if (hs && hd) {
        const Links from_src = active_links(n, hs, pci_of(dst));
        r.nvlink_count = from_src.to_peer;
        if (r.nvlink_count == 0 && from_src.to_switch > 0 && active_links(n, hd, pci_of(src)).to_switch > 0)
          r.nvlink_count = from_src.to_switch;
        if (can) r.link = r.nvlink_count > 0 ? TSR_PEER_LINK_NVLINK : TSR_PEER_LINK_PCIE;
      }
    }
    // Growable out struct (tessera/tessera.h): no more than the caller's struct_size.
    const size_t size = out->struct_size == 0 || out->struct_size > sizeof(r) ? sizeof(r) : out->struct_size;
    r.struct_size = size;
    std::memcpy(out, &r, size);
  });
}

const tsr_peer_topology_t kPeerTopology = {sizeof(tsr_peer_topology_t), 0u, &query};

}  // namespace

void register_peer_topology(Registrar& r) { r.extension(TSR_PEER_TOPOLOGY_EXTENSION_PREFIX "cuda", &kPeerTopology); }

}  // namespace tsr::cuda
