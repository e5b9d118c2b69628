// Argument checks shared by the engines: see args.hpp.
#include "args.hpp"

#include "tessera/dtype.hpp"

namespace fabric {

std::vector<View> member_views(const tsr_comm_group_s& g, tsr_tensor_t* const* ts, const char* role,
                               const char* what, bool same_shape) {
  const tsr_api_t* a = api();
  const size_t n = g.members.size();
  if (!ts) fail(TSR_INVALID_ARGUMENT, std::string(what) + ": no " + role + " tensors given");
  std::vector<View> v(n);
  const std::string r0 = std::to_string(g.rank);
  for (size_t m = 0; m < n; ++m) {
    const std::string rm = std::to_string(g.rank + static_cast<int32_t>(m));
    tsr_tensor_t* t = ts[m];
    if (!t) fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the " + role + " of rank " + rm + " is NULL");
    tsr_device_t d = a->tensor_device(t);
    View& x = v[m];
    x.t = t;
    x.dtype = a->tensor_dtype(t);
    x.numel = a->tensor_numel(t);
    x.desc = tensor_desc(t) + " on " + device_str(g.runtime, d);
    const tsr_device_t& want = g.members[m];
    if (d.type != want.type || d.index != want.index)
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the " + role + " of rank " + rm + " is " + x.desc +
                                     " but rank " + rm + " is " + device_str(g.runtime, want));
    if (!a->tensor_is_contiguous(t))
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the " + role + " of rank " + rm + " (" + x.desc +
                                     ") is not contiguous (call .contiguous() first)");
    x.data = static_cast<char*>(a->tensor_data(t));
    if (m > 0 && x.dtype != v[0].dtype)
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": rank " + r0 + "'s " + role + " is " + v[0].desc + " but rank " +
                                     rm + "'s is " + x.desc + " (dtypes differ)");
    if (m > 0 && same_shape && shape_str(t) != shape_str(v[0].t))
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": rank " + r0 + "'s " + role + " is " + v[0].desc + " but rank " +
                                     rm + "'s is " + x.desc + " (shapes differ)");
    if (m > 0 && !same_shape && x.numel != v[0].numel)
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": rank " + r0 + "'s " + role + " is " + v[0].desc + " but rank " +
                                     rm + "'s is " + x.desc + " (sizes differ)");
  }
  return v;
}

Checked check_collective(const tsr_comm_group_s& g, const tsr_collective_args_t& a) {
  const char* what = kind_name(a.kind);
  const int32_t local = static_cast<int32_t>(g.members.size()), n = g.world_size;
  if (a.kind < TSR_COLLECTIVE_ALL_REDUCE || a.kind > TSR_COLLECTIVE_BARRIER)
    fail(TSR_INVALID_ARGUMENT, "collective: unknown kind " + std::to_string(static_cast<int>(a.kind)));
  if (a.num_tensors != local)
    fail(TSR_INVALID_ARGUMENT, std::string(what) + ": " + std::to_string(a.num_tensors) + " tensors for a group with " +
                                   std::to_string(local) +
                                   " members in this process (one tensor per member, in rank order)");
  const bool reducing = a.kind == TSR_COLLECTIVE_ALL_REDUCE || a.kind == TSR_COLLECTIVE_REDUCE ||
                        a.kind == TSR_COLLECTIVE_REDUCE_SCATTER;
  if (reducing && (a.op < TSR_REDUCE_SUM || a.op > TSR_REDUCE_PROD))
    fail(TSR_INVALID_ARGUMENT, std::string(what) + ": unknown reduce op " + std::to_string(static_cast<int>(a.op)));
  const bool rooted = a.kind == TSR_COLLECTIVE_REDUCE || a.kind == TSR_COLLECTIVE_BROADCAST;
  if (rooted && (a.root < 0 || a.root >= n))
    fail(TSR_INVALID_ARGUMENT, std::string(what) + ": root " + std::to_string(a.root) + " is not a rank of a group of " +
                                   std::to_string(n));
  Checked c;
  c.in = member_views(g, a.inputs, "input", what, true);
  const bool has_out = a.kind == TSR_COLLECTIVE_ALL_GATHER || a.kind == TSR_COLLECTIVE_REDUCE_SCATTER ||
                       a.kind == TSR_COLLECTIVE_ALL_TO_ALL;
  if (!has_out) return c;
  c.out = member_views(g, a.outputs, "output", what, false);
  const std::string r0 = std::to_string(g.rank);
  if (c.out[0].dtype != c.in[0].dtype)
    fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the output of rank " + r0 + " is " + c.out[0].desc +
                                   " but the input is " + c.in[0].desc + " (same dtype needed)");
  const int64_t k = c.in[0].numel;
  auto need = [&](int64_t want, const char* of) {
    if (c.out[0].numel != want)
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the output of rank " + r0 + " is " + c.out[0].desc +
                                     " but needs " + std::to_string(want) + " elements (" + of + ")");
  };
  auto splits = [&] {
    if (k % n != 0)
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the input " + c.in[0].desc + " does not split into " +
                                     std::to_string(n) + " equal slices");
  };
  if (a.kind == TSR_COLLECTIVE_ALL_GATHER) {
    need(k * n, "world_size x the input's");
  } else if (a.kind == TSR_COLLECTIVE_REDUCE_SCATTER) {
    splits();
    need(k / n, "the input's divided by world_size");
  } else {
    splits();
    need(k, "as many as the input");
  }
  return c;
}

}  // namespace fabric
