// The agreement header of collectives across processes: see header.hpp.
#include "header.hpp"

#include <cstring>
#include <string>

#include "tessera/dtype.hpp"

namespace fabric {
namespace {

std::string shape_of(const int64_t* h) {
  std::string s = "[";
  for (int64_t d = 0; d < h[6] && d < kHeaderMaxDims; ++d) s += (d ? ", " : "") + std::to_string(h[8 + d]);
  return s + "]";
}

}  // namespace

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
    if (h[6] > kHeaderMaxDims)
      fail(TSR_INVALID_ARGUMENT, std::string(kind_name(a.kind)) + ": more than 8 dimensions (" +
                                     std::to_string(h[6]) + ")");
    for (int32_t d = 0; d < h[6]; ++d) h[8 + d] = api->tensor_sizes(t)[d];
  }
  return h;
}

void agree_on_headers(const tsr_collective_args_t& a, const int64_t* all, int n, int64_t k_in, int64_t k_out) {
  const char* what = kind_name(a.kind);
  const bool reducing = a.kind == TSR_COLLECTIVE_ALL_REDUCE || a.kind == TSR_COLLECTIVE_REDUCE ||
                        a.kind == TSR_COLLECTIVE_REDUCE_SCATTER;
  const int64_t* r0 = all;
  for (int r = 1; r < n; ++r) {
    const int64_t* h = all + static_cast<size_t>(r) * kHeader;
    auto who = [&](const int64_t* x, int rank) {
      return "rank " + std::to_string(rank) + " called " + kind_name(static_cast<tsr_collective_kind_t>(x[0])) +
             " with " + tsr::dtype_name(static_cast<int32_t>(x[3])) + " " + shape_of(x);
    };
    std::string diff;
    if (h[0] != r0[0])
      diff = "different collectives";
    else if (h[3] != r0[3])
      diff = "dtypes differ";
    else if (std::memcmp(h + 6, r0 + 6, sizeof(int64_t) * (2 + kHeaderMaxDims)) != 0 || h[4] != r0[4] ||
             h[5] != r0[5])
      diff = "shapes differ";
    else if (reducing && h[1] != r0[1])
      diff = "reduce ops differ (" + std::to_string(r0[1]) + " and " + std::to_string(h[1]) + ")";
    else if ((a.kind == TSR_COLLECTIVE_REDUCE || a.kind == TSR_COLLECTIVE_BROADCAST) && h[2] != r0[2])
      diff = "roots differ (" + std::to_string(r0[2]) + " and " + std::to_string(h[2]) + ")";
    if (!diff.empty())
      fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the ranks disagree: " + who(r0, 0) + " but " + who(h, r) +
                                     " (" + diff + ")");
  }
  if (a.kind == TSR_COLLECTIVE_ALL_GATHER && k_out != k_in * n)
    fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the output has " + std::to_string(k_out) + " elements but needs " +
                                   std::to_string(k_in * n) + " (world_size x the input's)");
  if (a.kind == TSR_COLLECTIVE_REDUCE_SCATTER && k_in != k_out * n)
    fail(TSR_INVALID_ARGUMENT, std::string(what) + ": the input has " + std::to_string(k_in) + " elements but needs " +
                                   std::to_string(k_out * n) + " (world_size x the output's)");
  if (a.kind == TSR_COLLECTIVE_ALL_TO_ALL && (k_in != k_out || k_in % n != 0))
    fail(TSR_INVALID_ARGUMENT, std::string(what) +
                                   ": input and output need the same number of elements, a multiple of world_size (" +
                                   std::to_string(k_in) + " and " + std::to_string(k_out) + ")");
}

}  // namespace fabric
