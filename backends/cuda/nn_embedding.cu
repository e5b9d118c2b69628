// _nn_embedding (row gather) and _nn_embedding_backward (row scatter-add, skipping padding_idx)
// on CUDA, with the CPU kernels' contracts (backends/cpu/nn_embedding.cpp): dense operands,
// int64 indices that must lie in [0, V) — no negative wrapping. An index out of range is
// reported through the device's error record (the next synchronizing call fails naming the op)
// and its row is skipped.
//
// The backward is DETERMINISTIC and matches the CPU kernel bit for bit: indices are sorted
// (stable radix sort of (row, position) pairs), and one thread per (row, column) sums that
// row's gradient entries in position order in compute_t<T> (float for f16/bf16), rounding once
// — the CPU kernel's order and precision. No atomics.
#include <cub/device/device_radix_sort.cuh>

#include "index_common.cuh"

namespace tsr::cuda {
namespace {

using idx::ErrorSink;

template <class U>
__global__ void embedding_k(const U* __restrict__ w, const int64_t* __restrict__ ix, U* __restrict__ out, int64_t total,
                            int64_t D, int64_t V, ErrorSink err) {
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    const int64_t i = n / D, d = n % D;
    const int64_t v = ix[i];
    if (v < 0 || v >= V) {
      err.report(v, V, 0);
      continue;
    }
    out[n] = w[v * D + d];
  }
}

void embedding_kernel(KernelCall& c) {
  const auto& w = c.input(0);
  const auto& ix = c.input(1);
  const auto& out = c.output(0);
  TSR_CHECK(w.ndim == 2, TSR_INTERNAL, c.op_name(), ": expected a 2-D weight on cuda");
  const int64_t V = w.sizes[0], D = w.sizes[1];
  const int64_t M = idx::numel_of(ix.sizes, ix.ndim);
  const int64_t total = M * D;
  if (total == 0) return;
  DeviceGuard guard(c.device().index);
  const ErrorSink err = idx::error_sink(c);
  idx::by_itemsize(itemsize(w.dtype), c.op_name(), [&](auto tag) {
    using U = typename decltype(tag)::type;
    embedding_k<U><<<idx::blocks_for(total), kBlock, 0, stream_of(c)>>>(static_cast<const U*>(w.data),
                                                                        static_cast<const int64_t*>(ix.data),
                                                                        static_cast<U*>(out.data), total, D, V, err);
  });
  after_launch(c);
}

// keys[i] = the row of index i, or V for an index to skip (padding or out of range, which is
// reported); pos[i] = i.
__global__ void embedding_keys_k(const int64_t* __restrict__ ix, int64_t M, int64_t V, int64_t pad,
                                 unsigned long long* __restrict__ keys, int64_t* __restrict__ pos, ErrorSink err) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < M; i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t v = ix[i];
    const bool bad = v < 0 || v >= V;
    if (bad) err.report(v, V, 0);
    keys[i] = (bad || v == pad) ? static_cast<unsigned long long>(V) : static_cast<unsigned long long>(v);
    pos[i] = i;
  }
}

// Thread (j, d): when sorted entry j starts a row's run, sums column d of that run in order.
template <class T>
__global__ void embedding_sum_k(const T* __restrict__ g, const unsigned long long* __restrict__ keys,
                                const int64_t* __restrict__ pos, T* __restrict__ out, int64_t M, int64_t D,
                                unsigned long long V) {
  using CT = compute_t<T>;
  const int64_t total = M * D;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    const int64_t j = n / D, d = n % D;
    const unsigned long long row = keys[j];
    if (row == V || (j > 0 && keys[j - 1] == row)) continue;
    CT acc = CT(0);
    for (int64_t k = j; k < M && keys[k] == row; ++k) acc += CT(g[pos[k] * D + d]);
    out[static_cast<int64_t>(row) * D + d] = static_cast<T>(acc);
  }
}

void embedding_backward_kernel(KernelCall& c) {
  const auto& g = c.input(0);
  const auto& ix = c.input(1);
  const auto& out = c.output(0);
  TSR_CHECK(out.ndim == 2, TSR_INTERNAL, c.op_name(), ": expected a 2-D gradient output on cuda");
  const int64_t V = out.sizes[0], D = out.sizes[1];
  const int64_t M = idx::numel_of(ix.sizes, ix.ndim);
  const int64_t pad = c.arg_int(3);
  const size_t out_bytes = static_cast<size_t>(V * D) * itemsize(out.dtype);
  if (out_bytes == 0) return;
  DeviceGuard guard(c.device().index);
  const cudaStream_t s = stream_of(c);
  // Rows no index hits (and the padding row) are zero: zero bits are 0.0 in every float type.
  TSR_CUDA_CHECK(cudaMemsetAsync(out.data, 0, out_bytes, s), c.op_name(), c.device().index);
  if (M == 0 || D == 0) return;
  int end_bit = 1;
  while (end_bit < 64 && (static_cast<unsigned long long>(V) >> end_bit) != 0) ++end_bit;  // keys in [0, V]
  size_t sort_bytes = 0;
  TSR_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, static_cast<const unsigned long long*>(nullptr),
                                      static_cast<unsigned long long*>(nullptr), static_cast<const int64_t*>(nullptr),
                                      static_cast<int64_t*>(nullptr), M, 0, end_bit, s),
      c.op_name(), c.device().index);
  const size_t sort_room = (sort_bytes + 255) / 256 * 256;
  const size_t arr = static_cast<size_t>(M) * 8;
  Scratch scratch(c, sort_room + 4 * arr);
  char* base = static_cast<char*>(scratch.data());
  auto* keys_in = reinterpret_cast<unsigned long long*>(base + sort_room);
  auto* keys_out = reinterpret_cast<unsigned long long*>(base + sort_room + arr);
  auto* pos_in = reinterpret_cast<int64_t*>(base + sort_room + 2 * arr);
  auto* pos_out = reinterpret_cast<int64_t*>(base + sort_room + 3 * arr);
  embedding_keys_k<<<idx::blocks_for(M), kBlock, 0, s>>>(static_cast<const int64_t*>(ix.data), M, V, pad, keys_in,
                                                         pos_in, idx::error_sink(c));
  after_launch(c);
  TSR_CUDA_CHECK(
      cub::DeviceRadixSort::SortPairs(base, sort_bytes, keys_in, keys_out, pos_in, pos_out, M, 0, end_bit, s),
      c.op_name(), c.device().index);
  dispatch_floating(out.dtype, c.op_name(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    embedding_sum_k<T><<<idx::blocks_for(M * D), kBlock, 0, s>>>(static_cast<const T*>(g.data), keys_out, pos_out,
                                                                 static_cast<T*>(out.data), M, D,
                                                                 static_cast<unsigned long long>(V));
  });
  after_launch(c);
}

}  // namespace

TSR_CUDA_KERNELS(nn_embedding) {
  r.kernel("_nn_embedding", "cuda::nn_embedding", device_type, kAllMask, TSR_KERNEL(embedding_kernel));
  r.kernel("_nn_embedding_backward", "cuda::nn_embedding_backward", device_type, kFloatingMask,
           TSR_KERNEL(embedding_backward_kernel));
}

}  // namespace tsr::cuda
