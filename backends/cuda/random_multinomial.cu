// multinomial on CUDA over float64 probabilities [rows, cats] (dense), the CPU kernel's
// algorithm (backends/cpu/random_extra.cpp) so the same seed and offset draw the same samples:
//  with replacement: sample s of row r uses uniform r*ns + s (53-bit, Philox block
//    offset + u/2, lanes 2*(u%2), 2*(u%2)+1) and takes the first category whose cumulative
//    weight exceeds u * total (capped at the last category of nonzero weight). The cumulative
//    sums are computed serially per row, in the CPU's order, so they are bit-identical.
//  without: category k of row r gets the key -log1p(-u_(r*cats + k)) / p_k (zero-weight
//    categories never qualify: their key is a NaN that sorts after every number), and the ns
//    smallest keys, ties by index (a stable segmented radix sort), are the samples in order.
//    The keys use CUDA's log1p, which may differ from the host libm's in the last ulp, so two
//    categories whose keys agree to within an ulp may come out in the other order than on the
//    CPU (practically never: it needs keys equal to ~1e-16 relative).
// Validation (a probability that is negative, inf or NaN; a row summing to <= 0; too few
// nonzero categories without replacement) is computed on the device and read back to the host
// before sampling — a SYNCHRONIZING step, as PyTorch's multinomial; the error names the first
// bad row as the CPU kernel does (refused, FAILED_PRECONDITION, during a CUDA graph capture).
#include <cub/device/device_segmented_radix_sort.cuh>

#include <cmath>

#include "index_common.cuh"
#include "tessera/philox.h"

namespace tsr::cuda {
namespace {

__device__ __forceinline__ double uniform53(unsigned long long seed, unsigned long long offset, unsigned long long u) {
  const tsr_philox4x32_t r = tsr_philox_block(seed, offset + u / 2);
  const int l = int(u % 2) * 2;
  const unsigned long long k = ((static_cast<unsigned long long>(r.v[l]) << 32) | r.v[l + 1]) >> 11;
  return double(k) * 1.1102230246251565404236316680908203125e-16;
}

// Per row: the facts sampling needs and the first problem found.
struct RowInfo {
  double total;
  double bad_value;
  int64_t bad_cat;
  int64_t nonzero;
  int64_t last;  // last category of nonzero weight (0 if none)
  int32_t code;  // 0 ok, 1 bad probability, 2 sum <= 0, 3 too few nonzero categories
  int32_t pad;
};

__global__ void rows_k(const double* __restrict__ p, int64_t rows, int64_t cats, int64_t ns, bool replacement,
                       double* __restrict__ cum, RowInfo* __restrict__ info, unsigned long long* first_bad) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < rows; r += int64_t(gridDim.x) * blockDim.x) {
    const double* pr = p + r * cats;
    RowInfo ri{};
    double total = 0;
    int64_t nonzero = 0, last = 0;
    for (int64_t k = 0; k < cats; ++k) {
      const double w = pr[k];
      if (!(w >= 0) || isinf(w)) {
        ri.code = 1;
        ri.bad_cat = k;
        ri.bad_value = w;
        break;
      }
      total += w;
      if (w > 0) {
        ++nonzero;
        last = k;
      }
      if (cum) cum[r * cats + k] = total;
    }
    if (ri.code == 0 && !(total > 0)) ri.code = 2;
    if (ri.code == 0 && !replacement && nonzero < ns) ri.code = 3;
    ri.total = total;
    ri.nonzero = nonzero;
    ri.last = last;
    info[r] = ri;
    if (ri.code != 0) atomicMin(first_bad, static_cast<unsigned long long>(r));
  }
}

__global__ void sample_replacement_k(const double* __restrict__ cum, const RowInfo* __restrict__ info, int64_t rows,
                                     int64_t cats, int64_t ns, unsigned long long seed, unsigned long long offset,
                                     int64_t* __restrict__ out) {
  const int64_t total = rows * ns;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    const int64_t r = n / ns;
    const double t = uniform53(seed, offset, static_cast<unsigned long long>(n)) * info[r].total;
    const double* cr = cum + r * cats;
    int64_t lo = 0, hi = cats;  // upper_bound: first k with cum[k] > t
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (!(t < cr[mid]))
        lo = mid + 1;
      else
        hi = mid;
    }
    out[n] = lo < info[r].last ? lo : info[r].last;
  }
}

__global__ void keys_k(const double* __restrict__ p, int64_t rows, int64_t cats, unsigned long long seed,
                       unsigned long long offset, double* __restrict__ keys, int64_t* __restrict__ vals,
                       int* __restrict__ seg) {
  const int64_t total = rows * cats;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x) {
    const double w = p[n];
    // A positive quiet NaN sorts after +inf in CUB's radix order: zero weights are never taken
    // before a positive one (whose key may overflow to +inf for tiny weights).
    keys[n] = w == 0 ? __longlong_as_double(0x7ff8000000000000ll)
                     : -log1p(-uniform53(seed, offset, static_cast<unsigned long long>(n))) / w;
    vals[n] = n % cats;
    if (n % cats == 0) seg[n / cats] = static_cast<int>(n);
    if (n == total - 1) seg[rows] = static_cast<int>(total);
  }
}

__global__ void take_k(const int64_t* __restrict__ sorted, int64_t rows, int64_t cats, int64_t ns,
                       int64_t* __restrict__ out) {
  const int64_t total = rows * ns;
  for (int64_t n = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; n < total; n += int64_t(gridDim.x) * blockDim.x)
    out[n] = sorted[(n / ns) * cats + n % ns];
}

void multinomial_kernel(KernelCall& c) {
  const tsr_tensor_view_t& P = c.input(0);
  const tsr_tensor_view_t& O = c.output(0);
  TSR_CHECK(P.dtype == TSR_F64 && (P.ndim == 1 || P.ndim == 2), TSR_INTERNAL, c.op_name(),
            ": expected 1-D or 2-D float64 probabilities on cuda");
  const int64_t cats = P.sizes[P.ndim - 1];
  const int64_t rows = P.ndim == 2 ? P.sizes[0] : 1;
  const int64_t ns = c.arg_int(1);
  const bool replacement = c.arg_bool(2);
  const unsigned long long seed = static_cast<unsigned long long>(c.arg_int(3));
  const unsigned long long offset = static_cast<unsigned long long>(c.arg_int(4));
  if (rows == 0 || ns == 0 || cats == 0) return;
  const int dev = c.device().index;
  DeviceGuard guard(dev);
  const cudaStream_t s = stream_of(c);
  const double* p = static_cast<const double*>(P.data);
  int64_t* out = static_cast<int64_t*>(O.data);

  // The validation is read back to the host: refused inside a graph capture (a sync there would
  // invalidate it) with a clear error instead of CUDA's.
  refuse_during_capture(c, "reading the validity of the probabilities back to the host");

  // 1. per-row validation (+ cumulative sums with replacement), read back.
  const size_t info_bytes = static_cast<size_t>(rows) * sizeof(RowInfo);
  const size_t cum_bytes = replacement ? static_cast<size_t>(rows * cats) * sizeof(double) : 0;
  Scratch rs(c, 256 + info_bytes + cum_bytes);
  char* rbase = static_cast<char*>(rs.data());
  auto* first_bad = reinterpret_cast<unsigned long long*>(rbase);
  auto* info = reinterpret_cast<RowInfo*>(rbase + 256);
  double* cum = replacement ? reinterpret_cast<double*>(rbase + 256 + info_bytes) : nullptr;
  TSR_CUDA_CHECK(cudaMemsetAsync(first_bad, 0xff, sizeof(unsigned long long), s), c.op_name(), dev);
  rows_k<<<idx::blocks_for(rows), 128, 0, s>>>(p, rows, cats, ns, replacement, cum, info, first_bad);
  after_launch(c);
  unsigned long long bad = 0;
  TSR_CUDA_CHECK(cudaMemcpyAsync(&bad, first_bad, sizeof bad, cudaMemcpyDeviceToHost, s), c.op_name(), dev);
  sync_for_host(c);  // also reports earlier asynchronous failures as a synchronizing call does
  if (bad != ~0ull) {
    RowInfo ri{};
    TSR_CUDA_CHECK(cudaMemcpy(&ri, info + bad, sizeof ri, cudaMemcpyDeviceToHost), c.op_name(), dev);
    const int64_t r = static_cast<int64_t>(bad);
    if (ri.code == 1)
      fail(TSR_INVALID_ARGUMENT, c.op_name(), ": probability tensor contains either inf, nan or element < 0 (row ", r,
           ", category ", ri.bad_cat, " = ", ri.bad_value, ")");
    if (ri.code == 2)
      fail(TSR_INVALID_ARGUMENT, c.op_name(), ": invalid multinomial distribution (sum of probabilities <= 0) in row ",
           r);
    fail(TSR_INVALID_ARGUMENT, c.op_name(),
         ": invalid multinomial distribution (with replacement=False, not enough non-zero "
         "categories to sample): row ",
         r, " has ", ri.nonzero, " for ", ns, " samples");
  }

  // 2. sampling.
  if (replacement) {
    sample_replacement_k<<<idx::blocks_for(rows * ns), kBlock, 0, s>>>(cum, info, rows, cats, ns, seed, offset, out);
    after_launch(c);
    return;
  }
  const int64_t total = rows * cats;
  TSR_CHECK(total < (int64_t(1) << 31), TSR_UNIMPLEMENTED, c.op_name(), ": without replacement, rows * categories (",
            rows, " * ", cats, ") must be below 2^31 on cuda");
  size_t sort_bytes = 0;
  TSR_CUDA_CHECK(
      cub::DeviceSegmentedRadixSort::SortPairs(
          nullptr, sort_bytes, static_cast<const double*>(nullptr), static_cast<double*>(nullptr),
          static_cast<const int64_t*>(nullptr), static_cast<int64_t*>(nullptr), static_cast<int>(total),
          static_cast<int>(rows), static_cast<const int*>(nullptr), static_cast<const int*>(nullptr), 0, 64, s),
      c.op_name(), dev);
  const size_t sort_room = (sort_bytes + 255) / 256 * 256;
  const size_t arr = static_cast<size_t>(total) * 8;
  Scratch ss(c, sort_room + 4 * arr + static_cast<size_t>(rows + 1) * sizeof(int));
  char* base = static_cast<char*>(ss.data());
  auto* keys_in = reinterpret_cast<double*>(base + sort_room);
  auto* keys_out = reinterpret_cast<double*>(base + sort_room + arr);
  auto* vals_in = reinterpret_cast<int64_t*>(base + sort_room + 2 * arr);
  auto* vals_out = reinterpret_cast<int64_t*>(base + sort_room + 3 * arr);
  auto* seg = reinterpret_cast<int*>(base + sort_room + 4 * arr);
  keys_k<<<idx::blocks_for(total), kBlock, 0, s>>>(p, rows, cats, seed, offset, keys_in, vals_in, seg);
  after_launch(c);
  TSR_CUDA_CHECK(
      cub::DeviceSegmentedRadixSort::SortPairs(base, sort_bytes, keys_in, keys_out, vals_in, vals_out,
                                               static_cast<int>(total), static_cast<int>(rows), seg, seg + 1, 0, 64, s),
      c.op_name(), dev);
  take_k<<<idx::blocks_for(rows * ns), kBlock, 0, s>>>(vals_out, rows, cats, ns, out);
  after_launch(c);
}

}  // namespace

TSR_CUDA_KERNELS(random_multinomial) {
  r.kernel("multinomial", "cuda::multinomial", device_type, TSR_DTYPE_BIT(TSR_F64), TSR_KERNEL(multinomial_kernel));
}

}  // namespace tsr::cuda
