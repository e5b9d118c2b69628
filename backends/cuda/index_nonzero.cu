// nonzero on CUDA. Contract as the CPU kernel (backends/cpu/index.cpp): self contiguous, out
// [n, ndim] int64 already sized by the core (which counted the nonzeros with sum(ne(self, 0))
// and read the count back to the host — the synchronizing step of this data-dependent op), so
// the kernel itself never synchronizes. Coordinates come in row-major order:
//   1. each tile of kTile elements counts its nonzeros (block reduce),
//   2. an exclusive scan of the tile counts (CUB) gives each tile's first output row,
//   3. each tile rescans its elements (block scan) and writes the coordinates; rows at or past
//      n are never written, so a count that disagrees with the data cannot write out of bounds.
// "Nonzero" is tested on bits: for float types every bit but the sign (so -0.0 is zero and NaN
// is nonzero, as C(x) != C(0)); for integers and bool any set bit.
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_scan.cuh>

#include "index_common.cuh"

namespace tsr::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int kItems = 8;  // consecutive elements per thread (blocked arrangement keeps order)
constexpr int64_t kTile = int64_t(kThreads) * kItems;

template <class U>
__device__ __forceinline__ int is_nz(const U* x, int64_t i, U mask) {
  return (x[i] & mask) != U(0) ? 1 : 0;
}

template <class U>
__global__ void __launch_bounds__(kThreads)
    count_tiles_k(const U* __restrict__ x, int64_t total, U mask, int64_t* __restrict__ tile_count) {
  using Reduce = cub::BlockReduce<int, kThreads>;
  __shared__ typename Reduce::TempStorage tmp;
  const int64_t base = int64_t(blockIdx.x) * kTile + int64_t(threadIdx.x) * kItems;
  int n = 0;
#pragma unroll
  for (int j = 0; j < kItems; ++j)
    if (base + j < total) n += is_nz(x, base + j, mask);
  const int sum = Reduce(tmp).Sum(n);
  if (threadIdx.x == 0) tile_count[blockIdx.x] = sum;
}

struct Shape {
  int32_t nd;
  int64_t sizes[TSR_MAX_DIMS];
};

template <class U>
__global__ void __launch_bounds__(kThreads)
    write_coords_k(const U* __restrict__ x, int64_t total, U mask, const int64_t* __restrict__ tile_start, int64_t rows,
                   Shape shape, int64_t* __restrict__ out) {
  using Scan = cub::BlockScan<int, kThreads>;
  __shared__ typename Scan::TempStorage tmp;
  const int64_t base = int64_t(blockIdx.x) * kTile + int64_t(threadIdx.x) * kItems;
  int flags = 0, n = 0;
#pragma unroll
  for (int j = 0; j < kItems; ++j) {
    const int f = base + j < total ? is_nz(x, base + j, mask) : 0;
    flags |= f << j;
    n += f;
  }
  int before = 0;
  Scan(tmp).ExclusiveSum(n, before);
  int64_t w = tile_start[blockIdx.x] + before;
  const int nd = shape.nd;
  for (int j = 0; j < kItems; ++j) {
    if (!((flags >> j) & 1)) continue;
    if (w >= rows) return;
    int64_t rem = base + j;
    for (int d = nd - 1; d >= 0; --d) {
      const int64_t s = shape.sizes[d];
      out[w * nd + d] = rem % s;
      rem /= s;
    }
    ++w;
  }
}

template <class U>
void run_nonzero(KernelCall& c, const tsr_tensor_view_t& self, const tsr_tensor_view_t& out, U mask) {
  const int64_t total = idx::numel_of(self.sizes, self.ndim);
  const int64_t rows = out.sizes[0];
  if (total == 0 || rows == 0) return;
  const int64_t tiles = (total + kTile - 1) / kTile;
  TSR_CHECK(tiles < (int64_t(1) << 31), TSR_UNIMPLEMENTED, "nonzero: input of ", total,
            " elements is too large on cuda");
  const cudaStream_t s = stream_of(c);
  const U* x = static_cast<const U*>(self.data);
  size_t scan_bytes = 0;
  TSR_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(nullptr, scan_bytes, static_cast<int64_t*>(nullptr),
                                               static_cast<int64_t*>(nullptr), tiles, s),
                 c.op_name(), c.device().index);
  const size_t counts_bytes = static_cast<size_t>(tiles) * sizeof(int64_t);
  // CUB's temporary storage first (the allocator's alignment), then the two count arrays.
  const size_t scan_room = (scan_bytes + 255) / 256 * 256;
  Scratch scratch(c, scan_room + 2 * counts_bytes);
  void* scan_tmp = scratch.data();
  auto* counts = reinterpret_cast<int64_t*>(static_cast<char*>(scratch.data()) + scan_room);
  auto* starts = counts + tiles;
  count_tiles_k<U><<<static_cast<unsigned>(tiles), kThreads, 0, s>>>(x, total, mask, counts);
  after_launch(c);
  TSR_CUDA_CHECK(cub::DeviceScan::ExclusiveSum(scan_tmp, scan_bytes, counts, starts, tiles, s), c.op_name(),
                 c.device().index);
  Shape shape;
  shape.nd = self.ndim;
  for (int d = 0; d < self.ndim; ++d) shape.sizes[d] = self.sizes[d];
  write_coords_k<U><<<static_cast<unsigned>(tiles), kThreads, 0, s>>>(x, total, mask, starts, rows, shape,
                                                                      static_cast<int64_t*>(out.data));
  after_launch(c);
}

void nonzero_kernel(KernelCall& c) {
  const tsr_tensor_view_t& self = c.input(0);
  const tsr_tensor_view_t& out = c.output(0);
  TSR_CHECK(self.ndim <= TSR_MAX_DIMS && out.ndim == 2 && out.sizes[1] == self.ndim, TSR_INTERNAL,
            "nonzero: expected out [n, ", self.ndim, "] on cuda");
  DeviceGuard guard(c.device().index);
  switch (self.dtype) {
    case TSR_BOOL:
    case TSR_U8:
    case TSR_I8:
      run_nonzero<uint8_t>(c, self, out, 0xffu);
      break;
    case TSR_I16:
      run_nonzero<uint16_t>(c, self, out, 0xffffu);
      break;
    case TSR_F16:
    case TSR_BF16:
      run_nonzero<uint16_t>(c, self, out, 0x7fffu);
      break;
    case TSR_I32:
      run_nonzero<uint32_t>(c, self, out, 0xffffffffu);
      break;
    case TSR_F32:
      run_nonzero<uint32_t>(c, self, out, 0x7fffffffu);
      break;
    case TSR_I64:
      run_nonzero<unsigned long long>(c, self, out, ~0ull);
      break;
    case TSR_F64:
      run_nonzero<unsigned long long>(c, self, out, 0x7fffffffffffffffull);
      break;
    default:
      c.unsupported_dtype();
  }
}

}  // namespace

TSR_CUDA_KERNELS(index_nonzero) {
  r.kernel("nonzero", "cuda::nonzero", device_type, kAllMask, TSR_KERNEL(nonzero_kernel));
}

}  // namespace tsr::cuda
