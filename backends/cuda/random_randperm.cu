// randperm on CUDA: the CPU kernel's algorithm (backends/cpu/random_extra.cpp), so the same
// seed and offset give the SAME permutation on both backends. Element i gets the 53-bit key of
// uniform number i of the Philox stream (block offset + i/2, lanes 2*(i%2) and 2*(i%2)+1,
// sdk/tessera/philox.h) and the permutation is the indices sorted by (key, i): a stable radix
// sort of (key, i) pairs over the 53 key bits is exactly that order.
#include <cub/device/device_radix_sort.cuh>

#include "index_common.cuh"
#include "tessera/philox.h"

namespace tsr::cuda {
namespace {

__global__ void randperm_keys_k(int64_t n, unsigned long long seed, unsigned long long offset,
                                unsigned long long* __restrict__ keys, int64_t* __restrict__ vals) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const tsr_philox4x32_t r = tsr_philox_block(seed, offset + static_cast<unsigned long long>(i) / 2);
    const int l = int(i % 2) * 2;
    keys[i] = ((static_cast<unsigned long long>(r.v[l]) << 32) | r.v[l + 1]) >> 11;
    vals[i] = i;
  }
}

template <class T>
__global__ void randperm_store_k(const int64_t* __restrict__ vals, T* __restrict__ out, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = static_cast<T>(vals[i]);
}

void randperm_kernel(KernelCall& c) {
  const tsr_tensor_view_t& out = c.output(0);
  const int64_t n = out.sizes[0];
  if (n == 0) return;
  const unsigned long long seed = static_cast<unsigned long long>(c.arg_int(3));
  const unsigned long long offset = static_cast<unsigned long long>(c.arg_int(4));
  DeviceGuard guard(c.device().index);
  const cudaStream_t s = stream_of(c);
  const bool direct = out.dtype == TSR_I64;  // sort the values straight into the output
  size_t sort_bytes = 0;
  TSR_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, static_cast<const unsigned long long*>(nullptr),
                                      static_cast<unsigned long long*>(nullptr), static_cast<const int64_t*>(nullptr),
                                      static_cast<int64_t*>(nullptr), n, 0, 53, s),
      c.op_name(), c.device().index);
  const size_t sort_room = (sort_bytes + 255) / 256 * 256;
  const size_t arr = static_cast<size_t>(n) * 8;
  Scratch scratch(c, sort_room + (direct ? 3 : 4) * arr);
  char* base = static_cast<char*>(scratch.data());
  auto* keys_in = reinterpret_cast<unsigned long long*>(base + sort_room);
  auto* keys_out = reinterpret_cast<unsigned long long*>(base + sort_room + arr);
  auto* vals_in = reinterpret_cast<int64_t*>(base + sort_room + 2 * arr);
  auto* vals_out = direct ? static_cast<int64_t*>(out.data) : reinterpret_cast<int64_t*>(base + sort_room + 3 * arr);
  randperm_keys_k<<<idx::blocks_for(n), kBlock, 0, s>>>(n, seed, offset, keys_in, vals_in);
  after_launch(c);
  TSR_CUDA_CHECK(cub::DeviceRadixSort::SortPairs(base, sort_bytes, keys_in, keys_out, vals_in, vals_out, n, 0, 53, s),
                 c.op_name(), c.device().index);
  if (direct) return;
  dispatch_numeric(out.dtype, c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    randperm_store_k<T><<<idx::blocks_for(n), kBlock, 0, s>>>(vals_out, static_cast<T*>(out.data), n);
  });
  after_launch(c);
}

}  // namespace

TSR_CUDA_KERNELS(random_randperm) {
  r.kernel("randperm", "cuda::randperm", device_type, kNumericMask, TSR_KERNEL(randperm_kernel));
}

}  // namespace tsr::cuda
