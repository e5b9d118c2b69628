// What the engines across processes share about a collective's arguments: the local checks of
// the one-member-per-process engines (gloo, mpi), and the header every rank all-gathers before
// exchanging data, so that a rank whose collective, dtype, shape, op or root differs is named
// the same way on every rank and nothing is exchanged (gloo and mpi before every collective;
// nccl only under TESSERA_DISTRIBUTED_DEBUG=1, as it costs a host round trip). Compiled into
// each engine library (not into the plugin).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "group.hpp"

namespace fabric {

// This rank's side of one collective, checked (ProcessArgs::check).
struct ProcessArgs {
  const char* what = "";        // the collective's name, for messages
  tsr_tensor_t* in = nullptr;   // all but BARRIER and RECV
  tsr_tensor_t* out = nullptr;  // ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL, RECV
  int32_t dtype = 0;            // of in (else out); 0 for BARRIER
  int64_t k_in = 0, k_out = 0;  // element counts (0 for a missing tensor)
  size_t itemsize = 1;
  char* pin = nullptr;
  char* pout = nullptr;
  bool peer = false;  // SEND or RECV: `root` is the peer

  // Checks what one rank can check alone: the kind, one tensor on this rank's device,
  // contiguous, at most kMaxDims dimensions, same dtype in and out, a known op, the root or
  // peer in range (and not ourselves). Throws INVALID_ARGUMENT.
  static ProcessArgs check(const tsr_comm_group_s* g, const tsr_collective_args_t& a);
};

constexpr int kMaxDims = 8;
// kind, op, root, dtype, in numel, out numel, ndim, pad, sizes
constexpr int kHeader = 8 + kMaxDims;

// This rank's header for `a` (kHeader values): `t` gives the shape (NULL for a barrier), dtype
// and the element counts the rest. Fails for more than kMaxDims dimensions.
std::vector<int64_t> make_header(const tsr_collective_args_t& a, tsr_tensor_t* t, int32_t dtype, int64_t k_in,
                                 int64_t k_out);
inline std::vector<int64_t> make_header(const tsr_collective_args_t& a, const ProcessArgs& p) {
  return make_header(a, p.in ? p.in : p.out, p.dtype, p.k_in, p.k_out);
}
// Compares every rank's header (`all`: n headers in rank order) and checks the sizes the
// collective needs; throws the same INVALID_ARGUMENT on every rank:
//   "all_reduce: the ranks disagree: rank 0 called all_reduce with float32 [4] but rank 1
//    called all_reduce with float32 [5] (shapes differ)"
void check_headers(const tsr_collective_args_t& a, const int64_t* all, int n, int64_t k_in, int64_t k_out);
inline void check_headers(const tsr_collective_args_t& a, const ProcessArgs& p, const int64_t* all, int n) {
  check_headers(a, all, n, p.k_in, p.k_out);
}

// "float32 [3, 4]" from a header.
std::string header_desc(const int64_t* h);

}  // namespace fabric
