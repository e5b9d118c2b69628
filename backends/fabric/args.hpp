// The argument checks of engines that see every local member's tensors in one call (the
// in-process engine, and the NCCL engine for this process's members): each tensor present, on
// its member's device, contiguous, of one dtype and shape across members, outputs of the size
// the collective needs. Errors name the op, both ranks, their dtypes, shapes and devices, and
// are raised before anything is written.
#pragma once

#include <string>
#include <vector>

#include "group.hpp"

namespace fabric {

// One member's tensor, checked.
struct View {
  tsr_tensor_t* t = nullptr;
  char* data = nullptr;  // tensor_data: host memory for cpu devices, device memory for cuda
  int64_t numel = 0;
  int32_t dtype = 0;
  std::string desc;  // "float32 [3, 4] on cpu:1"
};

// ts[i] for every local member i (rank g.rank + i in messages), checked as above; same_shape:
// the shapes must be equal (else only the element counts).
std::vector<View> member_views(const tsr_comm_group_s& g, tsr_tensor_t* const* ts, const char* role,
                               const char* what, bool same_shape);

// A collective's tensors, checked.
struct Checked {
  std::vector<View> in, out;  // out: ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL only
};

// Checks a collective other than SEND, RECV and BARRIER (the engines handle those): a known
// kind, one tensor per local member, a known reduce op, a root that is a rank of the group, and
// the members' tensors, including the output sizes against world_size:
//   ALL_GATHER      output = world_size x the input's elements
//   REDUCE_SCATTER  input splits into world_size slices, output = one slice
//   ALL_TO_ALL      input splits into world_size slices, output = as many as the input
Checked check_collective(const tsr_comm_group_s& g, const tsr_collective_args_t& a);

}  // namespace fabric
