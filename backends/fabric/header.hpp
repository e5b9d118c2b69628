// The header ranks exchange to agree on a collective before running it across processes: the
// kind, op, root, dtype, element counts and shape each rank passed. Every rank gathers every
// rank's header and compares them the same way, so a rank whose call differs is named
// identically on every rank and nothing is exchanged. The Gloo engine does this before every
// collective; the NCCL engine only under TESSERA_DISTRIBUTED_DEBUG=1 (it costs a host round
// trip, as PyTorch's TORCH_DISTRIBUTED_DEBUG=DETAIL checks).
#pragma once

#include <cstdint>
#include <vector>

#include "group.hpp"

namespace fabric {

constexpr int kHeaderMaxDims = 8;
constexpr int kHeader = 8 + kHeaderMaxDims;  // int64s: kind, op, root, dtype, in numel, out numel, ndim, pad, sizes

// This rank's header; `t` gives the shape (NULL for a barrier). Fails for more than 8 dimensions.
std::vector<int64_t> make_header(const tsr_collective_args_t& a, tsr_tensor_t* t, int32_t dtype, int64_t k_in,
                                 int64_t k_out);

// Compares the n headers in `all` (rank order, kHeader each) and the sizes the collective
// needs; throws INVALID_ARGUMENT naming rank 0 and the first rank that differs.
void agree_on_headers(const tsr_collective_args_t& a, const int64_t* all, int n, int64_t k_in, int64_t k_out);

}  // namespace fabric
