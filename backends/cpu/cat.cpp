// cat: one kernel call copies every input into its share of the dense output, in one parallel
// region split by output bytes. The per-input form it replaces, a narrow and a copy per input,
// paid two dispatches and a serial memmove per input, each copy below the parallel grain (and
// waking the team once per input would have cost more). Dense inputs are copied block by block
// with memcpy; strided ones (transposed, stepped, expanded) are gathered element by element.
// Pure data movement: every dtype by its element size. The contract (docs/kernel-contracts.md)
// is written beside cat in core/ops/shape/shape.cpp.
//
// Streaming stores were measured and not kept: cat of 4 x [1024, 1024] f32 (16 MB) took 520-560
// us with them (elementwise's run_contiguous_stream tiles) against 215-270 us with memcpy, at 2
// threads on the 2-core development machine; a serial 16-32 MB copy was no faster with them
// either.
#include <algorithm>
#include <vector>

#include "cpu_common.hpp"
#include "tessera/kernels/item_size.hpp"

namespace tsr::cpu {
namespace {

// Below this many output bytes the copy stays on the calling thread. Waking a passive OpenMP
// team and joining it costs about 15 us, so where memory is fast splitting a small cat loses a
// little: on one 2-core machine a 2 MB cat took 44-47 us split (1 MiB grain) against 35-43 us
// serial. Where it is slow, splitting wins much more: on another (2 MiB of L2 per core, a
// 2 MB memcpy at 14 GB/s) the same cat took 99-103 us split against 146-149 us serial. A 16 MB
// cat took 190-260 us split against 490-780 us serial on the first.
constexpr int64_t kCatGrainBytes = int64_t(1) << 20;

// An input's block in each output "row" (the elements under one index of the dims before dim:
// out.sizes[dim] * inner of them), in bytes.
struct Block {
  const tsr_tensor_view_t* in;
  int64_t col;    // where the block starts in a row
  int64_t bytes;  // in.sizes[dim] * inner elements
  bool dense;     // row-major contiguous: the input's block for row o starts at o * bytes
};

// Row-major contiguous, size-1 dims' strides ignored (the core's rule for contiguous tensors).
bool dense_view(const tsr_tensor_view_t& v) {
  int64_t expect = 1;
  for (int32_t d = v.ndim - 1; d >= 0; --d) {
    if (v.sizes[d] == 1) continue;
    if (v.strides[d] != expect) return false;
    expect *= v.sizes[d];
  }
  return true;
}

// Copies elements [first, first + n) of the strided view v, in row-major order, to dst.
template <class W>
void gather(W* dst, const tsr_tensor_view_t& v, int64_t first, int64_t n) {
  const int32_t nd = v.ndim;
  int64_t idx[TSR_MAX_DIMS];
  const W* src = static_cast<const W*>(v.data);
  for (int32_t d = nd - 1; d >= 0; --d) {
    idx[d] = first % v.sizes[d];
    first /= v.sizes[d];
    src += idx[d] * v.strides[d];
  }
  const int64_t len = v.sizes[nd - 1], sl = v.strides[nd - 1];
  for (;;) {
    const int64_t run = std::min(len - idx[nd - 1], n);
    if (sl == 1)
      std::memcpy(dst, src, static_cast<size_t>(run) * sizeof(W));
    else
      for (int64_t j = 0; j < run; ++j) dst[j] = src[j * sl];
    dst += run;
    n -= run;
    if (n == 0) return;
    // The run ended its last-dim row: back to the row's start, then carry into the outer dims.
    src -= idx[nd - 1] * sl;
    idx[nd - 1] = 0;
    for (int32_t d = nd - 2; d >= 0; --d) {
      src += v.strides[d];
      if (++idx[d] < v.sizes[d]) break;
      src -= idx[d] * v.strides[d];
      idx[d] = 0;
    }
  }
}

// Writes output bytes [b, e) (multiples of the element size; `row` bytes per output row).
template <class W>
void copy_range(char* out, const std::vector<Block>& blocks, int64_t row, int64_t b, int64_t e) {
  int64_t o = b / row, at = b % row;
  size_t k = static_cast<size_t>(
      std::upper_bound(blocks.begin(), blocks.end(), at, [](int64_t v, const Block& x) { return v < x.col; }) -
      blocks.begin() - 1);
  while (b < e) {
    const Block& x = blocks[k];
    const int64_t within = at - x.col, n = std::min(x.bytes - within, e - b);
    W* dst = reinterpret_cast<W*>(out + b);
    const int64_t from = o * x.bytes + within;  // byte offset in the input, row-major order
    if (x.dense)
      std::memcpy(dst, static_cast<const char*>(x.in->data) + from, static_cast<size_t>(n));
    else
      gather(dst, *x.in, from / int64_t(sizeof(W)), n / int64_t(sizeof(W)));
    b += n;
    at += n;
    if (at == x.col + x.bytes && ++k == blocks.size()) {
      k = 0;
      at = 0;
      ++o;
    }
  }
}

void cat_kernel(KernelCall& c) {
  const tsr_tensor_view_t& out = c.output(0);
  const int64_t dim = c.arg_int(1);
  if (dim < 0 || dim >= out.ndim) fail(TSR_INTERNAL, "cat: dim ", dim, " outside the output's ", out.ndim, " dims");
  const int64_t es = int64_t(itemsize(out.dtype));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= out.sizes[d];
  for (int64_t d = dim + 1; d < out.ndim; ++d) inner *= out.sizes[d];
  const int64_t row = out.sizes[dim] * inner * es;
  std::vector<Block> blocks;
  blocks.reserve(c.num_inputs());
  int64_t col = 0;
  for (size_t k = 0; k < c.num_inputs(); ++k) {
    const tsr_tensor_view_t& in = c.input(k);
    if (view_numel(in) == 0) continue;  // contributes nothing (legacy 1-D empties among them)
    bool fits = in.ndim == out.ndim && in.dtype == out.dtype;
    for (int64_t d = 0; fits && d < out.ndim; ++d) fits = d == dim || in.sizes[d] == out.sizes[d];
    if (!fits) fail(TSR_INTERNAL, "cat: input ", k, " does not match the output outside dim ", dim);
    const int64_t bytes = in.sizes[dim] * inner * es;
    blocks.push_back({&in, col, bytes, dense_view(in)});
    col += bytes;
  }
  if (col != row) fail(TSR_INTERNAL, "cat: the inputs' sizes along dim ", dim, " do not add up to the output's");
  const int64_t total = outer * row;
  if (total == 0) return;
  char* dst = static_cast<char*>(out.data);
  kernels::by_element_size(out.dtype, "cat", [&](auto word) {
    using W = decltype(word);
    parallel_for(
        0, total, kCatGrainBytes, [&](int64_t b, int64_t e) { copy_range<W>(dst, blocks, row, b, e); },
        /*align=*/64);
  });
}

}  // namespace

TSR_CPU_KERNELS(cat) { r.kernel("cat", "cpu::cat", device_type, 0, TSR_KERNEL(cat_kernel)); }

}  // namespace tsr::cpu
