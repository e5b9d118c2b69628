// Argument checks and the agreement header of the one-member-per-process engines
// (process_args.hpp).
#include "process_args.hpp"

#include <cstring>

#include "tessera/dtype.hpp"

namespace fabric {
namespace {

std::string shape_of(const int64_t* h) {
  std::string s = "[";
  for (int64_t d = 0; d < h[6] && d < kMaxDims; ++d) s += (d ? ", " : "") + std::to_string(h[8 + d]);
  return s + "]";
}

bool reducing(tsr_collective_kind_t k) {
  return k == TSR_COLLECTIVE_ALL_REDUCE || k == TSR_COLLECTIVE_REDUCE || k == TSR_COLLECTIVE_REDUCE_SCATTER;
}

tsr_tensor_t* checked(const tsr_comm_group_s* g, tsr_tensor_t* const* ts, const char* role, const char* what) {
  const tsr_api_t* api = fabric::api();
  if (!ts || !ts[0]) fail(TSR_INVALID_ARGUMENT, std::string(what) + ": no " + role + " tensor given");
  tsr_tensor_t* t = ts[0];
  tsr_device_t d = api->tensor_device(t);
  const tsr_device_t& want = g->members[0];
  if (d.type != want.type || d.index != want.index)
    fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the " + role + " " + tensor_desc(t) + " is on " +
                                   device_str(g->runtime, d) + " but this rank's device is " +
                                   device_str(g->runtime, want));
  if (!api->tensor_is_contiguous(t))
    fail(TSR_INVALID_ARGUMENT,
         std::string(what) + ": the " + role + " " + tensor_desc(t) + " is not contiguous (call .contiguous() first)");
  if (api->tensor_ndim(t) > kMaxDims)
    fail(TSR_INVALID_ARGUMENT, std::string(what) + ": more than 8 dimensions (" + tensor_desc(t) + ")");
  return t;
}

}  // namespace

std::string header_desc(const int64_t* h) {
  return std::string(tsr::dtype_name(static_cast<int32_t>(h[3]))) + " " + shape_of(h);
}

ProcessArgs ProcessArgs::check(const tsr_comm_group_s* g, const tsr_collective_args_t& a) {
  ProcessArgs p;
  p.what = kind_name(a.kind);
  if (a.kind < TSR_COLLECTIVE_ALL_REDUCE || a.kind > TSR_COLLECTIVE_BARRIER)
    fail(TSR_INVALID_ARGUMENT, "collective: unknown kind " + std::to_string(static_cast<int>(a.kind)));
  const int n = g->world_size, me = g->rank;
  if (a.kind != TSR_COLLECTIVE_BARRIER && a.num_tensors != 1)
    fail(TSR_INVALID_ARGUMENT, std::string(p.what) + ": " + std::to_string(a.num_tensors) +
                                   " tensors for a process with 1 member of the group (one tensor per member)");
  const bool uses_in = a.kind != TSR_COLLECTIVE_BARRIER && a.kind != TSR_COLLECTIVE_RECV;
  const bool uses_out = a.kind == TSR_COLLECTIVE_ALL_GATHER || a.kind == TSR_COLLECTIVE_REDUCE_SCATTER ||
                        a.kind == TSR_COLLECTIVE_ALL_TO_ALL || a.kind == TSR_COLLECTIVE_RECV;
  p.in = uses_in ? checked(g, a.inputs, "input", p.what) : nullptr;
  p.out = uses_out ? checked(g, a.outputs, "output", p.what) : nullptr;
  if (reducing(a.kind) && (a.op < TSR_REDUCE_SUM || a.op > TSR_REDUCE_PROD))
    fail(TSR_INVALID_ARGUMENT, std::string(p.what) + ": unknown reduce op " + std::to_string(static_cast<int>(a.op)));
  p.peer = a.kind == TSR_COLLECTIVE_SEND || a.kind == TSR_COLLECTIVE_RECV;
  if ((p.peer || a.kind == TSR_COLLECTIVE_REDUCE || a.kind == TSR_COLLECTIVE_BROADCAST) &&
      (a.root < 0 || a.root >= n || (p.peer && a.root == me)))
    fail(TSR_INVALID_ARGUMENT, std::string(p.what) + ": " + (p.peer ? "peer " : "root ") + std::to_string(a.root) +
                                   " is not " + (p.peer ? "another" : "a") + " rank of a group of " +
                                   std::to_string(n));
  const tsr_api_t* api = fabric::api();
  tsr_tensor_t* main = p.in ? p.in : p.out;
  p.dtype = main ? api->tensor_dtype(main) : 0;
  if (p.in && p.out && api->tensor_dtype(p.out) != p.dtype)
    fail(TSR_INVALID_ARGUMENT, std::string(p.what) + ": the output is " + tensor_desc(p.out) + " but the input is " +
                                   tensor_desc(p.in) + " (same dtype needed)");
  p.k_in = p.in ? api->tensor_numel(p.in) : 0;
  p.k_out = p.out ? api->tensor_numel(p.out) : 0;
  p.itemsize = main ? static_cast<size_t>(tsr::itemsize(p.dtype)) : 1;
  p.pin = p.in ? static_cast<char*>(api->tensor_data(p.in)) : nullptr;
  p.pout = p.out ? static_cast<char*>(api->tensor_data(p.out)) : nullptr;
  return p;
}

std::vector<int64_t> make_header(const tsr_collective_args_t& a, tsr_tensor_t* t, int32_t dtype, int64_t k_in,
                                 int64_t k_out) {
  std::vector<int64_t> h(kHeader, 0);
  h[0] = a.kind;
  h[1] = a.op;
  h[2] = a.root;
  h[3] = dtype;
  h[4] = k_in;
  h[5] = k_out;
  if (t) {
    const tsr_api_t* api = fabric::api();
    h[6] = api->tensor_ndim(t);
    if (h[6] > kMaxDims)
      fail(TSR_INVALID_ARGUMENT,
           std::string(kind_name(a.kind)) + ": more than 8 dimensions (" + tensor_desc(t) + ")");
    for (int32_t d = 0; d < h[6]; ++d) h[8 + d] = api->tensor_sizes(t)[d];
  }
  return h;
}

void check_headers(const tsr_collective_args_t& a, const int64_t* all, int n, int64_t k_in, int64_t k_out) {
  const std::string what = kind_name(a.kind);
  const int64_t* r0 = all;
  for (int r = 1; r < n; ++r) {
    const int64_t* h = all + static_cast<size_t>(r) * kHeader;
    auto who = [&](const int64_t* x, int rank) {
      return "rank " + std::to_string(rank) + " called " + kind_name(static_cast<tsr_collective_kind_t>(x[0])) +
             " with " + header_desc(x);
    };
    std::string diff;
    if (h[0] != r0[0])
      diff = "different collectives";
    else if (h[3] != r0[3])
      diff = "dtypes differ";
    else if (std::memcmp(h + 6, r0 + 6, sizeof(int64_t) * (2 + kMaxDims)) != 0 || h[4] != r0[4] || h[5] != r0[5])
      diff = "shapes differ";
    else if (reducing(a.kind) && h[1] != r0[1])
      diff = "reduce ops differ (" + std::to_string(r0[1]) + " and " + std::to_string(h[1]) + ")";
    else if ((a.kind == TSR_COLLECTIVE_REDUCE || a.kind == TSR_COLLECTIVE_BROADCAST) && h[2] != r0[2])
      diff = "roots differ (" + std::to_string(r0[2]) + " and " + std::to_string(h[2]) + ")";
    if (!diff.empty())
      fail(TSR_INVALID_ARGUMENT,
           what + ": the ranks disagree: " + who(r0, 0) + " but " + who(h, r) + " (" + diff + ")");
  }
  if (a.kind == TSR_COLLECTIVE_ALL_GATHER && k_out != k_in * n)
    fail(TSR_INVALID_ARGUMENT, what + ": the output has " + std::to_string(k_out) + " elements but needs " +
                                   std::to_string(k_in * n) + " (world_size x the input's)");
  if (a.kind == TSR_COLLECTIVE_REDUCE_SCATTER && k_in != k_out * n)
    fail(TSR_INVALID_ARGUMENT, what + ": the input has " + std::to_string(k_in) + " elements but needs " +
                                   std::to_string(k_out * n) + " (world_size x the output's)");
  if (a.kind == TSR_COLLECTIVE_ALL_TO_ALL && (k_in != k_out || k_in % n != 0))
    fail(TSR_INVALID_ARGUMENT, what +
                                   ": input and output need the same number of elements, a multiple "
                                   "of world_size (" +
                                   std::to_string(k_in) + " and " + std::to_string(k_out) + ")");
}

}  // namespace fabric
