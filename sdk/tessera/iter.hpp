// Tessera SDK: loops over tsr_iter_t for elementwise and reduction kernels (header-only).
//
// tsr_iter_t (abi/tessera/types.h): dims FASTEST FIRST, strides in BYTES per operand, outputs
// first then inputs, `contiguous` set when every operand is a dense flat array.
//
// Layers, from low to high:
//   for_each_run<NOPS>(it, begin, end, body)
//       body(char* const* ptrs, const int64_t* strides, int64_t n) for each run along dim 0
//       covering the linear elements [begin, end) (one call when it.contiguous).
//   for_each_element<NOPS>(it, body) / parallel_for_each_element<NOPS>(it, body, grain)
//       the same over all elements; the parallel one splits the element range across OpenMP
//       threads when numel >= grain (default 32768: 16K+ elements per thread) and runs serially
//       otherwise (and always when compiled without OpenMP).
//   elementwise<Out, In...>(it, op) / elementwise_serial<Out, In...>(it, op)
//       typed: out = op(in...). Runs with unit strides become plain pointer loops the compiler
//       vectorizes; runs with one broadcast (stride 0) input hoist that value; anything else
//       uses a strided loop. Contiguous outputs of >= 8 MiB are written with streaming
//       (non-temporal) stores on x86-64.
//   for_each_reduction(it, f) / parallel_for_each_reduction(it, f)
//       for reductions (operands: out, in; the first it.nreduce dims are reduced): for each
//       output element, f(char* out, const ReduceBlock& block) with the input sub-block.
//   parallel_for(begin, end, grain, f)  f(b, e) on disjoint sub-ranges, OpenMP when worth it;
//       threads claim chunks dynamically, so f may run several times per thread.
// Nothing here allocates; no OpenMP region is opened for small inputs.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessera/dtype.hpp"
#include "tessera/types.h"

#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__unix__)
#include <unistd.h>
#endif
#if defined(__SSE2__) && !defined(__CUDACC__)
#include <emmintrin.h>
#define TSR_ITER_HAS_STREAM_STORES 1
#endif

namespace tsr {

constexpr int64_t kParallelGrain = 32768;
// Contiguous outputs of at least this many bytes are written with non-temporal (streaming)
// stores (write_streaming): an output larger than the last-level cache would not stay there
// anyway, and streaming saves the read-for-ownership of every output line (a quarter of the
// traffic of a binary op). A smaller output is written plainly: it stays in the cache for its
// reader, where streaming it would cost a trip to memory (softmax [4096, 1024], a 16 MiB output,
// on a machine with a 480 MiB L3: 0.61 ms written plainly, 0.99 ms streamed, at 2 threads). The
// bound is 3/4 of the last-level cache, glibc's rule for its memcpy, and 8 MiB where the cache
// size is unknown. TESSERA_CPU_STREAM_BYTES=N sets it (the tests use it to reach the streaming
// path; a value that is not a positive integer is ignored). Read once per process.
inline int64_t stream_store_bytes() {
  static const int64_t bytes = [] {
    if (const char* env = std::getenv("TESSERA_CPU_STREAM_BYTES")) {
      char* end = nullptr;
      const long long v = std::strtoll(env, &end, 10);
      if (end != env && *end == '\0' && v > 0) return static_cast<int64_t>(v);
    }
    long long llc = 0;
#if defined(_SC_LEVEL3_CACHE_SIZE)
    llc = sysconf(_SC_LEVEL3_CACHE_SIZE);
#endif
    return llc > 0 ? static_cast<int64_t>(llc / 4 * 3) : int64_t(8) << 20;
  }();
  return bytes;
}

// ---- threading ---------------------------------------------------------------------------------

inline int max_threads() {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

inline bool in_parallel_region() {
#ifdef _OPENMP
  return omp_in_parallel() != 0;
#else
  return false;
#endif
}

// Number of threads worth using for `work` units: 1 below `grain` (or inside a parallel
// region), else up to one thread per grain/2 units.
inline int threads_for(int64_t work, int64_t grain) {
  if (work < 2 || work < grain || in_parallel_region()) return 1;
  const int64_t half = std::max<int64_t>(1, grain / 2);
  const int mt = max_threads();
  return static_cast<int>(std::min<int64_t>(mt, std::max<int64_t>(2, work / half)));
}

// Calls f(b, e) on disjoint sub-ranges of [begin, end) that together cover it, possibly several
// per thread. Uses OpenMP threads when the range holds at least `grain` units; sub-range
// boundaries are multiples of `align` (relative to begin). Threads claim chunks (about four per
// thread) from a shared counter, so a thread that the OS preempts does not hold the others up.
// Exceptions thrown by f are rethrown in the caller.
template <class F>
inline void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& f, int64_t align = 1) {
  const int64_t n = end - begin;
  if (n <= 0) return;
#ifdef _OPENMP
  const int nt = threads_for(n, grain < 1 ? 1 : grain);
  if (nt > 1) {
    std::exception_ptr error;
    int64_t chunk = std::max<int64_t>(std::max<int64_t>(1, grain / 2), (n + 4 * nt - 1) / (4 * nt));
    if (align > 1) chunk = (chunk + align - 1) / align * align;
    std::atomic<int64_t> next{begin};
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
#pragma omp parallel num_threads(nt)
    {
      for (;;) {
        const int64_t b = next.fetch_add(chunk, std::memory_order_relaxed);
        if (b >= end || failed.load(std::memory_order_relaxed)) break;
        try {
          f(b, std::min(end, b + chunk));
        } catch (...) {
          std::lock_guard<std::mutex> lock(error_mutex);
          if (!error) error = std::current_exception();
          failed.store(true, std::memory_order_relaxed);
        }
      }
    }
    if (error) std::rethrow_exception(error);
    return;
  }
#else
  (void)grain;
  (void)align;
#endif
  f(begin, end);
}

// ---- elementwise -------------------------------------------------------------------------------

// Calls body(ptrs, strides, n) for every run along dim 0 covering linear elements [begin, end).
template <int NOPS, class Body>
inline void for_each_run(const tsr_iter_t& it, int64_t begin, int64_t end, Body&& body) {
  static_assert(NOPS >= 1 && NOPS <= TSR_ITER_MAX_OPERANDS, "operand count");
  if (begin >= end) return;
  char* ptrs[NOPS];
  int64_t inner[NOPS];
  if (it.contiguous || it.ndim <= 1) {
    for (int k = 0; k < NOPS; ++k) {
      const int64_t s = it.ndim >= 1 ? it.strides[k][0] : (it.contiguous ? int64_t(itemsize(it.dtypes[k])) : 0);
      inner[k] = it.contiguous ? int64_t(itemsize(it.dtypes[k])) : s;
      ptrs[k] = it.data[k] + begin * inner[k];
    }
    body(static_cast<char* const*>(ptrs), static_cast<const int64_t*>(inner), end - begin);
    return;
  }
  const int ndim = it.ndim;
  int64_t idx[TSR_MAX_DIMS];
  int64_t rem = begin;
  for (int k = 0; k < NOPS; ++k) {
    ptrs[k] = it.data[k];
    inner[k] = it.strides[k][0];
  }
  for (int d = 0; d < ndim; ++d) {
    const int64_t sz = it.sizes[d];
    idx[d] = rem % sz;
    rem /= sz;
    for (int k = 0; k < NOPS; ++k) ptrs[k] += idx[d] * it.strides[k][d];
  }
  const int64_t size0 = it.sizes[0];
  int64_t left = end - begin;
  while (left > 0) {
    const int64_t n = std::min(size0 - idx[0], left);
    body(static_cast<char* const*>(ptrs), static_cast<const int64_t*>(inner), n);
    left -= n;
    if (left <= 0) break;
    // Move to the start of the next row: rewind dim 0, then carry.
    for (int k = 0; k < NOPS; ++k) ptrs[k] -= idx[0] * inner[k];
    idx[0] = 0;
    for (int d = 1; d < ndim; ++d) {
      ++idx[d];
      for (int k = 0; k < NOPS; ++k) ptrs[k] += it.strides[k][d];
      if (idx[d] < it.sizes[d]) break;
      for (int k = 0; k < NOPS; ++k) ptrs[k] -= idx[d] * it.strides[k][d];
      idx[d] = 0;
    }
  }
}

template <int NOPS, class Body>
inline void for_each_element(const tsr_iter_t& it, Body&& body) {
  for_each_run<NOPS>(it, 0, it.numel, body);
}

template <int NOPS, class Body>
inline void parallel_for_each_element(const tsr_iter_t& it, Body&& body, int64_t grain = kParallelGrain) {
  if (it.numel < grain) {
    for_each_run<NOPS>(it, 0, it.numel, body);
    return;
  }
  parallel_for(
      0, it.numel, grain, [&](int64_t b, int64_t e) { for_each_run<NOPS>(it, b, e, body); },
      /*align=*/64);
}

// Writes out[0..n) with non-temporal (streaming) stores where the target has them: fill(tile, i0,
// len) computes out[i0..i0+len) into an aligned L1 tile (len <= 4 KiB of Out), which is then
// streamed to memory. For outputs that will not stay in cache (see stream_store_bytes): it saves
// the read-for-ownership of every output line. The unaligned head and the tail are filled in
// place. Elements are written exactly once each, in order of i0.
template <class Out, class Fill>
inline void write_streaming(Out* out, int64_t n, Fill&& fill) {
  int64_t i = 0;
#ifdef TSR_ITER_HAS_STREAM_STORES
  if (reinterpret_cast<uintptr_t>(out) % sizeof(Out) == 0) {
    int64_t head = 0;
    while (head < n && (reinterpret_cast<uintptr_t>(out + head) & 15u) != 0) ++head;
    if (head > 0) fill(out, 0, head);
    i = head;
    constexpr int64_t kTileBytes = 4096;
    constexpr int64_t kTile = kTileBytes / int64_t(sizeof(Out));
    alignas(64) Out buf[kTile];
    for (; i + kTile <= n; i += kTile) {
      fill(buf, i, kTile);
      __m128i* dst = reinterpret_cast<__m128i*>(out + i);
      const __m128i* src = reinterpret_cast<const __m128i*>(buf);
      for (int64_t k = 0; k < kTileBytes / 16; ++k) _mm_stream_si128(dst + k, _mm_load_si128(src + k));
    }
    _mm_sfence();
  }
#endif
  if (i < n) fill(out + i, i, n - i);
}

namespace detail {

template <bool IsScalar, class T>
inline T load_or_scalar(const T* p, int64_t i, T s) {
  if constexpr (IsScalar) {
    (void)p;
    (void)i;
    return s;
  } else {
    (void)s;
    return p[i];
  }
}

// Contiguous output, input S broadcast (stride 0), other inputs contiguous.
template <size_t S, class Out, class... Ins, class Op, size_t... I>
inline void run_scalar(char* const* ptrs, int64_t n, Op& op, std::index_sequence<I...>) {
  Out* out = reinterpret_cast<Out*>(ptrs[0]);
  const std::tuple<const Ins*...> in{reinterpret_cast<const Ins*>(ptrs[I + 1])...};
  const std::tuple<Ins...> sv{*std::get<I>(in)...};
  for (int64_t i = 0; i < n; ++i) out[i] = op(load_or_scalar<I == S>(std::get<I>(in), i, std::get<I>(sv))...);
}

// All operands contiguous; the output written with streaming stores through an L1 tile.
template <class Out, class... Ins, class Op, size_t... I>
inline void run_contiguous_stream(char* const* ptrs, int64_t n, Op& op, std::index_sequence<I...>) {
  const std::tuple<const Ins*...> in{reinterpret_cast<const Ins*>(ptrs[I + 1])...};
  write_streaming(reinterpret_cast<Out*>(ptrs[0]), n, [&](Out* tile, int64_t i0, int64_t len) {
    for (int64_t j = 0; j < len; ++j) tile[j] = op(std::get<I>(in)[i0 + j]...);
  });
}

template <class Out, class... Ins, class Op, size_t... I>
inline void typed_run(char* const* ptrs, const int64_t* strides, int64_t n, Op& op, std::index_sequence<I...> seq,
                      bool stream = false) {
  const bool out_contig = strides[0] == int64_t(sizeof(Out));
  if (out_contig && ((strides[I + 1] == int64_t(sizeof(Ins))) && ...)) {
    if (stream) {
      run_contiguous_stream<Out, Ins...>(ptrs, n, op, seq);
      return;
    }
    Out* out = reinterpret_cast<Out*>(ptrs[0]);
    const std::tuple<const Ins*...> in{reinterpret_cast<const Ins*>(ptrs[I + 1])...};
    for (int64_t i = 0; i < n; ++i) out[i] = op(std::get<I>(in)[i]...);
    return;
  }
  if constexpr (sizeof...(Ins) >= 1 && sizeof...(Ins) <= 3) {
    if (out_contig && n > 1) {
      int scalar = -1;
      // Folds over && and ||, not `(void)(..., ...)`: clang 14 cannot parse a comma fold
      // right after a cast (tools/fuzz.sh builds the SDK with clang).
      const bool ok = ((strides[I + 1] == int64_t(sizeof(Ins)) ||
                        (strides[I + 1] == 0 && scalar < 0 && ((scalar = int(I)), true))) &&
                       ...);
      if (ok && scalar >= 0) {
        const bool ran = ((scalar == int(I) && (run_scalar<I, Out, Ins...>(ptrs, n, op, seq), true)) || ...);
        (void)ran;
        return;
      }
    }
  }
  char* o = ptrs[0];
  const int64_t so = strides[0];
  const char* in[sizeof...(Ins) + 1] = {static_cast<const char*>(ptrs[I + 1])..., nullptr};
  int64_t si[sizeof...(Ins) + 1] = {strides[I + 1]..., 0};
  (void)in;
  (void)si;
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<Out*>(o + i * so) = op(*reinterpret_cast<const Ins*>(in[I] + i * si[I])...);
  }
}

}  // namespace detail

// out = op(in...) over the iteration (operands: out, in...), serially.
template <class Out, class... Ins, class Op>
inline void elementwise_serial(const tsr_iter_t& it, Op&& op) {
  constexpr int NOPS = 1 + int(sizeof...(Ins));
  auto body = [&op](char* const* ptrs, const int64_t* strides, int64_t n) {
    detail::typed_run<Out, Ins...>(ptrs, strides, n, op, std::index_sequence_for<Ins...>{});
  };
  for_each_run<NOPS>(it, 0, it.numel, body);
}

// out = op(in...) over the iteration, split across threads when numel >= grain. Large
// contiguous outputs are written with streaming stores (see stream_store_bytes).
template <class Out, class... Ins, class Op>
inline void elementwise(const tsr_iter_t& it, Op&& op, int64_t grain = kParallelGrain) {
  constexpr int NOPS = 1 + int(sizeof...(Ins));
  if (it.numel < grain) {
    auto body = [&op](char* const* ptrs, const int64_t* strides, int64_t n) {
      detail::typed_run<Out, Ins...>(ptrs, strides, n, op, std::index_sequence_for<Ins...>{});
    };
    for_each_run<NOPS>(it, 0, it.numel, body);
  } else {
    const bool stream = it.contiguous && it.numel * int64_t(sizeof(Out)) >= stream_store_bytes();
    auto body = [&op, stream](char* const* ptrs, const int64_t* strides, int64_t n) {
      detail::typed_run<Out, Ins...>(ptrs, strides, n, op, std::index_sequence_for<Ins...>{}, stream);
    };
    parallel_for_each_element<NOPS>(it, body, grain);
  }
}

// ---- reductions --------------------------------------------------------------------------------

// The input sub-block that reduces into one output element: the first `ndim` (= it.nreduce) dims
// of the iteration with the input's strides (bytes), fastest first.
struct ReduceBlock {
  const char* data;
  int32_t ndim;
  const int64_t* sizes;
  const int64_t* strides;
  int64_t numel;

  // f(const char* p, int64_t n, int64_t stride_bytes) for each run along the block's dim 0
  // (a single call with n = 1 when the block is 0-dimensional; none when it is empty).
  template <class F>
  void for_each_run(F&& f) const {
    if (numel <= 0) return;
    if (ndim == 0) {
      f(data, int64_t(1), int64_t(0));
      return;
    }
    if (ndim == 1) {
      f(data, sizes[0], strides[0]);
      return;
    }
    int64_t idx[TSR_MAX_DIMS] = {0};
    const char* p = data;
    const int64_t outer = numel / sizes[0];
    for (int64_t r = 0; r < outer; ++r) {
      f(p, sizes[0], strides[0]);
      for (int d = 1; d < ndim; ++d) {
        ++idx[d];
        p += strides[d];
        if (idx[d] < sizes[d]) break;
        p -= idx[d] * strides[d];
        idx[d] = 0;
      }
    }
  }
};

// Number of output elements of a reduction iteration.
inline int64_t reduction_num_outputs(const tsr_iter_t& it) {
  int64_t n = 1;
  for (int d = it.nreduce; d < it.ndim; ++d) n *= it.sizes[d];
  return n;
}
// Number of input elements reduced into each output.
inline int64_t reduction_block_numel(const tsr_iter_t& it) {
  int64_t n = 1;
  for (int d = 0; d < it.nreduce && d < it.ndim; ++d) n *= it.sizes[d];
  return n;
}

// f(char* out, const ReduceBlock& block) for outputs [begin, end) in iteration order. Operands:
// 0 = out, `in_operand` = the input.
template <class F>
inline void for_each_reduction(const tsr_iter_t& it, int64_t begin, int64_t end, F&& f, int in_operand = 1) {
  if (begin >= end) return;
  const int nr = std::min(it.nreduce, it.ndim);
  ReduceBlock blk;
  blk.ndim = nr;
  blk.sizes = it.sizes;
  blk.strides = it.strides[in_operand];
  blk.numel = reduction_block_numel(it);
  const int ndim = it.ndim;
  int64_t idx[TSR_MAX_DIMS] = {0};
  char* out = it.data[0];
  const char* in = it.data[in_operand];
  int64_t rem = begin;
  for (int d = nr; d < ndim; ++d) {
    idx[d] = rem % it.sizes[d];
    rem /= it.sizes[d];
    out += idx[d] * it.strides[0][d];
    in += idx[d] * it.strides[in_operand][d];
  }
  for (int64_t o = begin; o < end; ++o) {
    blk.data = in;
    f(out, static_cast<const ReduceBlock&>(blk));
    for (int d = nr; d < ndim; ++d) {
      ++idx[d];
      out += it.strides[0][d];
      in += it.strides[in_operand][d];
      if (idx[d] < it.sizes[d]) break;
      out -= idx[d] * it.strides[0][d];
      in -= idx[d] * it.strides[in_operand][d];
      idx[d] = 0;
    }
  }
}

template <class F>
inline void for_each_reduction(const tsr_iter_t& it, F&& f) {
  for_each_reduction(it, 0, reduction_num_outputs(it), f);
}

// As for_each_reduction, with the outputs split across threads when the total work
// (outputs x block size) is >= grain and there are several outputs.
template <class F>
inline void parallel_for_each_reduction(const tsr_iter_t& it, F&& f, int64_t grain = kParallelGrain) {
  const int64_t nout = reduction_num_outputs(it);
  const int64_t blk = std::max<int64_t>(1, reduction_block_numel(it));
  if (nout < 2 || nout * blk < grain) {
    for_each_reduction(it, 0, nout, f);
    return;
  }
  const int64_t out_grain = std::max<int64_t>(1, grain / blk);
  parallel_for(0, nout, out_grain, [&](int64_t b, int64_t e) { for_each_reduction(it, b, e, f); });
}

}  // namespace tsr
