// _copy (any dtype to any dtype, strided): memcpy for dense same-dtype copies, kernels::CastOp
// otherwise.
#include <cstring>

#include "cpu_common.hpp"
#include "tessera/kernels/fill_ops.hpp"

namespace tsr::cpu {
namespace {

// Contiguous same-dtype copy: memcpy, split across threads for large buffers. copy_ and the
// dispatcher refuse partially overlapping tensors (core tensor/overlap.hpp), but the core's own
// copies are not checked: a copy onto itself is nothing to do, and overlapping ranges take one
// memmove, so that memcpy never sees overlapping ranges.
void parallel_memcpy(char* dst, const char* src, int64_t nbytes) {
  if (dst == src || nbytes <= 0) return;
  if (dst < src + nbytes && src < dst + nbytes) {
    std::memmove(dst, src, static_cast<size_t>(nbytes));
    return;
  }
  constexpr int64_t kGrain = int64_t(1) << 20;  // 1 MiB per thread at least
  parallel_for(
      0, nbytes, kGrain, [&](int64_t b, int64_t e) { std::memcpy(dst + b, src + b, static_cast<size_t>(e - b)); },
      /*align=*/4096);
}

// A run of `bytes` bytes: a fixed-size copy (inlined as a few vector moves) for the short runs
// of permuted views (an attention head's 16 floats) and narrowed rows (the GPT's 64-float q/k/v
// gradient rows into their projection's gradient) where bytes is one of Sizes, libc's memcpy
// otherwise.
template <int64_t... Sizes>
inline void copy_run_of(char* dst, const char* src, int64_t bytes) {
  if (!((bytes == Sizes && (std::memcpy(dst, src, Sizes), true)) || ...)) std::memcpy(dst, src, size_t(bytes));
}
inline void copy_run(char* dst, const char* src, int64_t bytes) { copy_run_of<16, 32, 64, 128, 256, 512>(dst, src, bytes); }

// Same-dtype copy of a strided view whose innermost dim is dense in both tensors (transposes of
// outer dims: permuted attention heads, narrowed rows): each run along dim 0 is one block copy
// (copy_run), the runs walked by the SDK's for_each_run. The typed elementwise path costs a loop
// setup and an operand-stride check per run: 46 us for a [256, 11, 4, 16] f32 head permute at
// 1 thread, 25-28 us here (33 us with libc's memcpy per 64-byte run), memcpy of the same bytes 15 us.
bool copy_dense_runs(const tsr_iter_t& it, int64_t isz) {
  if (it.ndim < 2 || it.strides[0][0] != isz || it.strides[1][0] != isz) return false;
  // Split from 1 MiB per thread, as parallel_memcpy: a copy is memory-bound, and below that
  // waking the team costs more than it saves (a 720 KB permute: 31 us serial, 64 us on 2 threads).
  // The source run 8 steps ahead along dim 1 is prefetched: runs of a permuted view are a page
  // or more apart, where the hardware prefetcher does not follow (the GPT's head permute
  // [256,11,4,16] -> [256,4,11,16]: 28-29 -> 22.5-23 us at 1 thread; memcpy of its bytes 15 us).
  // Destination runs of up to 512 bytes are prefetched for writing: the q/k/v gradient rows go
  // into a third of each row of their projection's gradient, lines the hardware prefetcher does
  // not fetch ahead of the stores.
  const int64_t ahead = 8 * it.strides[1][1], ahead_out = 8 * it.strides[0][1];
  parallel_for_each_element<2>(
      it,
      [isz, ahead, ahead_out](char* const* p, const int64_t*, int64_t n) {
        __builtin_prefetch(p[1] + ahead, 0, 3);
        const int64_t bytes = n * isz;
        if (bytes <= 512) prefetch_row<true>(p[0] + ahead_out, bytes);
        copy_run(p[0], p[1], bytes);
      },
      std::max<int64_t>(1, (int64_t(1) << 20) / isz));
  return true;
}

void copy_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  if (it.numel == 0) return;
  const int32_t out_dt = c.dtype();
  const int32_t src_dt = it.noperands > 1 ? it.dtypes[1] : out_dt;
  if (out_dt == src_dt && it.contiguous) {
    parallel_memcpy(it.data[0], it.data[1], it.numel * int64_t(itemsize(out_dt)));
    return;
  }
  if (out_dt == src_dt && out_dt != TSR_F4_E2M1FN_X2 && it.noperands > 1 &&
      copy_dense_runs(it, int64_t(itemsize(out_dt))))
    return;
  if (out_dt == TSR_F4_E2M1FN_X2 || src_dt == TSR_F4_E2M1FN_X2) {  // packed pairs: bytes only
    kernels::check_packed_copy(out_dt, src_dt);
    elementwise<uint8_t, uint8_t>(it, kernels::CastOp<uint8_t, uint8_t>{});
    return;
  }
  dispatch_castable(out_dt, "_copy", [&](auto otag) {
    using T = typename decltype(otag)::type;
    dispatch_castable(src_dt, "_copy", [&](auto stag) {
      using S = typename decltype(stag)::type;
      const kernels::CastOp<T, S> op;
      if constexpr (!std::is_same<T, S>::value && (is_reduced_float<T>::value || is_reduced_float<S>::value))
        elementwise_mv<kernels::Elem<T>, kernels::Elem<S>>(it, op);
      else
        elementwise<kernels::Elem<T>, kernels::Elem<S>>(it, op);
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(copy) { r.kernel("_copy", "cpu::copy", device_type, kMovableMask, TSR_KERNEL(copy_kernel)); }

}  // namespace tsr::cpu
