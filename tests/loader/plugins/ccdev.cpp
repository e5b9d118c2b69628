// A test backend for kernel overrides by compute capability (how sm100 overrides cuda on 10.x):
// device type "ccdev" over host memory whose devices report the compute capabilities listed in
// TSR_TEST_CCDEV_CAPS (comma-separated "major.minor"; default "10.0,9.0": ccdev:0 is a 10.0
// device, ccdev:1 a 9.0 one) through the device type's properties callback, exactly where the
// cuda backend reports a GPU's. It registers one op, ccdev::which(Tensor x) -> Tensor (float32,
// x's shape), with two kernels:
//   ccdev::which_generic   priority 0, no predicate: fills the output with 1;
//   ccdev::which_cc10      priority 100, predicate tsr::ComputeCapabilityGate (major 10, the
//                          SDK helper the sm100 plugin uses): fills it with 2.
// The override is registered first, so that only its priority (not registration order, which
// breaks ties) can make it win.
// It also publishes a fake "tessera.peer_topology.ccdev" table (ext_peer_topology.h), through the
// SDK's registrar only, so that the table and `tessera info`'s matrix are tested without GPUs.
// The link of a pair depends on its larger index m: m == 1 NVLink x4 (rank 0, native atomics),
// m == 2 PCIe (rank 1), m == 3 peer access over an unknown link, m >= 4 no peer access.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/compute_capability.hpp"
#include "tessera/ext_peer_topology.h"
#include "tessera/plugin.hpp"

namespace {

struct Caps {
  int32_t major, minor;
};
std::vector<Caps> g_caps;
const tsr_api_t* g_api = nullptr;
tsr::ComputeCapabilityGate g_gate;

std::vector<Caps> parse_caps() {
  const char* env = std::getenv("TSR_TEST_CCDEV_CAPS");
  std::string text = env && *env ? env : "10.0,9.0";
  std::vector<Caps> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t comma = text.find(',', pos);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = text.substr(pos, comma - pos);
    int maj = 0, min = 0;
    if (std::sscanf(item.c_str(), "%d.%d", &maj, &min) != 2)
      tsr::fail(TSR_INVALID_ARGUMENT, "ccdev: TSR_TEST_CCDEV_CAPS item '", item, "' is not MAJOR.MINOR");
    out.push_back({maj, min});
    pos = comma + 1;
  }
  return out;
}

tsr_status_t cc_copy(void*, tsr_device_t, void* dst, tsr_device_t, const void* src, size_t n, tsr_stream_t*) {
  std::memcpy(dst, src, n);
  return nullptr;
}

tsr_status_t cc_properties(void*, tsr_device_t d, tsr_device_properties_t* out) {
  if (d.index < 0 || size_t(d.index) >= g_caps.size())
    return g_api->status_create(TSR_INVALID_ARGUMENT, "ccdev: no such device");
  std::snprintf(out->name, sizeof(out->name), "ccdev fake GPU %d.%d", g_caps[d.index].major, g_caps[d.index].minor);
  out->compute_major = g_caps[d.index].major;
  out->compute_minor = g_caps[d.index].minor;
  return nullptr;
}

tsr_status_t cc_alloc(void*, tsr_device_t, size_t n, void** out) {
  *out = std::aligned_alloc(64, (n + 63) / 64 * 64);
  if (!*out) return g_api->status_create(TSR_RESOURCE_EXHAUSTED, "ccdev: out of memory");
  return nullptr;
}
void cc_free(void*, tsr_device_t, void* p, size_t) { std::free(p); }

tsr_status_t cc_peer_query(tsr_runtime_t*, int32_t src, int32_t dst, tsr_peer_link_t* out) {
  const int32_t n = int32_t(g_caps.size());
  for (int32_t index : {src, dst})
    if (index < 0 || index >= n)
      return g_api->status_create(
          TSR_INVALID_ARGUMENT,
          ("peer_topology query: no device ccdev:" + std::to_string(index) + " (" + std::to_string(n) + " devices)")
              .c_str());
  if (!out || (out->struct_size != 0 && out->struct_size < sizeof(size_t)))
    return g_api->status_create(TSR_INVALID_ARGUMENT,
                                "peer_topology query: out is NULL or its struct_size is too small");
  tsr_peer_link_t r{};
  r.performance_rank = -1;
  const int32_t m = src > dst ? src : dst;
  if (src == dst) {
    r.can_access = 1;
    r.link = TSR_PEER_LINK_SAME_DEVICE;
    r.performance_rank = 0;
    r.native_atomics = 1;
  } else if (m == 1) {
    r.can_access = 1;
    r.link = TSR_PEER_LINK_NVLINK;
    r.nvlink_count = 4;
    r.performance_rank = 0;
    r.native_atomics = 1;
  } else if (m == 2) {
    r.can_access = 1;
    r.link = TSR_PEER_LINK_PCIE;
    r.performance_rank = 1;
  } else if (m == 3) {
    r.can_access = 1;
    r.link = TSR_PEER_LINK_UNKNOWN;
  } else {
    r.link = TSR_PEER_LINK_NONE;
  }
  const size_t size = out->struct_size == 0 || out->struct_size > sizeof(r) ? sizeof(r) : out->struct_size;
  r.struct_size = size;
  std::memcpy(out, &r, size);
  return nullptr;
}
const tsr_peer_topology_t kPeerTopology = {sizeof(tsr_peer_topology_t), 0u, cc_peer_query};

void which_meta(tsr::MetaCall& m) {
  TSR_CHECK(m.tensor_dtype(0) == TSR_F32, TSR_INVALID_ARGUMENT, m.op_name(), ": expected float32");
  m.set_output(0, TSR_F32, m.tensor_device(0), m.tensor_ndim(0), m.tensor_sizes(0));
  m.set_dispatch_dtype(TSR_F32);
}

void fill(tsr::KernelCall& k, float v) {
  const tsr_tensor_view_t& y = k.output(0);
  int64_t n = 1;
  for (int32_t d = 0; d < y.ndim; ++d) n *= y.sizes[d];
  float* p = static_cast<float*>(y.data);
  for (int64_t i = 0; i < n; ++i) p[i] = v;
}
void which_generic(tsr::KernelCall& k) { fill(k, 1.0f); }
// The override takes only inputs of up to 4 elements and declines the rest (UNIMPLEMENTED,
// nothing written): the dispatcher then runs the generic kernel.
void which_cc10(tsr::KernelCall& k) {
  const tsr_tensor_view_t& x = k.input(0);
  int64_t n = 1;
  for (int32_t d = 0; d < x.ndim; ++d) n *= x.sizes[d];
  TSR_CHECK(n <= 4, TSR_UNIMPLEMENTED, k.op_name(), ": the 10.x override declines ", n, " elements");
  fill(k, 2.0f);
}
// ccdev::never: every kernel declines, so the caller sees the last one's UNIMPLEMENTED.
void never_first(tsr::KernelCall& k) { tsr::fail(TSR_UNIMPLEMENTED, k.op_name(), ": declined by never_first"); }
void never_last(tsr::KernelCall& k) { tsr::fail(TSR_UNIMPLEMENTED, k.op_name(), ": declined by never_last"); }

void init(tsr::Registrar& r) {
  g_api = r.api();
  g_caps = parse_caps();
  tsr_device_type_def_t dt{};
  dt.struct_size = TSR_STRUCT_SIZE(tsr_device_type_def_t);
  dt.name = "ccdev";
  dt.device_count = int32_t(g_caps.size());
  dt.copy = cc_copy;
  dt.properties = cc_properties;
  const int32_t type = r.device_type(dt);
  tsr_raw_allocator_t al{};
  al.name = "ccdev_malloc";
  al.device_type = type;
  al.alloc = cc_alloc;
  al.free = cc_free;
  r.allocator(al);
  r.extension(TSR_PEER_TOPOLOGY_EXTENSION_PREFIX "ccdev", &kPeerTopology);
  g_gate.bind(r.api(), r.runtime(), 10);
  r.op("ccdev::which(Tensor x) -> Tensor", TSR_META(which_meta));
  r.kernel("ccdev::which", "ccdev::which_cc10", type, TSR_DTYPE_BIT(TSR_F32), TSR_KERNEL(which_cc10), 100,
           tsr::ComputeCapabilityGate::predicate, &g_gate);
  r.kernel("ccdev::which", "ccdev::which_generic", type, TSR_DTYPE_BIT(TSR_F32), TSR_KERNEL(which_generic));
  r.op("ccdev::never(Tensor x) -> Tensor", TSR_META(which_meta));
  r.kernel("ccdev::never", "ccdev::never_first", type, TSR_DTYPE_BIT(TSR_F32), TSR_KERNEL(never_first), 100);
  r.kernel("ccdev::never", "ccdev::never_last", type, TSR_DTYPE_BIT(TSR_F32), TSR_KERNEL(never_last));
}

}  // namespace

TSR_DEFINE_PLUGIN("ccdev", "1.0.0", "test backend: devices with given compute capabilities, a kernel override on 10.x",
                  nullptr, init, nullptr)
