// sum, mean, amax, amin, argmax.
//
// Strategy per call (operands: out, in; the first nreduce dims are reduced):
//  - "vertical": when the reduced dims are not the input's fastest but the first kept dim is
//    contiguous in both input and output (e.g. sum over dim 0 of a row-major matrix), rows of the
//    input are accumulated into tiles of output accumulators, reading memory sequentially;
//  - many outputs: outputs split across threads, each block reduced by one thread;
//  - few outputs with large blocks: each block split into fixed 64K-element chunks across
//    threads, chunk partials combined in order (deterministic whatever the thread count).
// Sums of f16/bf16/f32 accumulate in 16 f32 lanes over 4096-element blocks, blocks in double;
// f64 in f64 lanes; integers in wrapping 64-bit.
#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "cpu_common.hpp"
#include "cpu_math.hpp"

namespace tsr::cpu {
namespace {

template <class T>
using C = compute_t<T>;

constexpr int kLanes = 16;
constexpr int64_t kSumBlock = 4096;
constexpr int64_t kChunk = int64_t(1) << 16;
constexpr int64_t kVerticalTile = 2048;  // accumulators on the stack: 16 KiB of doubles

// Sum of a contiguous f32/f16/bf16 run: 64 float lanes per block of kSumBlock elements, blocks
// summed in double (the reference's accuracy at float's speed). 64 lanes are eight independent
// 8-wide chains in the AVX2 clone (multiversioned), enough to hide the add latency; 16 lanes left
// it latency-bound at a quarter of the adder's rate.
template <class T>
TSR_CPU_MULTIVERSION double sum_contig_float(const T* p, int64_t n) {
  constexpr int kSumLanes = 64;
  double total = 0;
  for (int64_t b0 = 0; b0 < n; b0 += kSumBlock) {
    const int64_t e = std::min(n, b0 + kSumBlock);
    float acc[kSumLanes] = {};
    int64_t i = b0;
    for (; i + kSumLanes <= e; i += kSumLanes)
      for (int j = 0; j < kSumLanes; ++j) acc[j] += float(p[i + j]);
    float tail = 0;
    for (; i < e; ++i) tail += float(p[i]);
    total += double(fold_lanes<kSumLanes>(acc, plus_of<float>)) + double(tail);
  }
  return total;
}

// ---- reducers ----------------------------------------------------------------------------------
// init(), step(acc, x) (one element), run(p, n, stride_bytes) (a run, fast), combine(a, b),
// finish(acc, count) -> T.

template <class T, bool MEAN>
struct SumReducer {
  using acc_t = std::conditional_t<is_float_type<T>::value, double, uint64_t>;
  // Vertical (column) sums of f16/bf16/f32 accumulate rows in f32 lanes, flushed into the
  // double accumulators every kVerticalFlush rows.
  static constexpr bool kVerticalF32 = is_float_type<T>::value && !std::is_same<T, double>::value;
  acc_t init() const { return acc_t(0); }
  acc_t step(acc_t a, T x) const {
    if constexpr (is_float_type<T>::value)
      return a + double(C<T>(x));
    else
      return a + static_cast<uint64_t>(static_cast<int64_t>(x));
  }
  acc_t combine(acc_t a, acc_t b) const { return a + b; }
  acc_t run(const char* base, int64_t n, int64_t stride) const {
    if constexpr (std::is_same<T, double>::value) {
      if (stride == int64_t(sizeof(T))) {
        const double* p = reinterpret_cast<const double*>(base);
        double acc[kLanes] = {};
        int64_t i = 0;
        for (; i + kLanes <= n; i += kLanes)
          for (int j = 0; j < kLanes; ++j) acc[j] += p[i + j];
        double tail = 0;
        for (; i < n; ++i) tail += p[i];
        return fold_lanes<kLanes>(acc, plus_of<double>) + tail;
      }
      double acc = 0;
      for (int64_t i = 0; i < n; ++i) acc += *reinterpret_cast<const double*>(base + i * stride);
      return acc;
    } else if constexpr (is_float_type<T>::value) {
      double total = 0;
      if (stride == int64_t(sizeof(T))) return sum_contig_float(reinterpret_cast<const T*>(base), n);
      // Strided runs cannot use the lane trick without gathers: accumulate in double directly
      // (one float accumulator over a 4096-element block loses digits against the reference).
      double acc[4] = {};
      int64_t i = 0;
      for (; i + 4 <= n; i += 4)
        for (int j = 0; j < 4; ++j) acc[j] += double(C<T>(*reinterpret_cast<const T*>(base + (i + j) * stride)));
      for (; i < n; ++i) acc[0] += double(C<T>(*reinterpret_cast<const T*>(base + i * stride)));
      return total + ((acc[0] + acc[1]) + (acc[2] + acc[3]));
    } else {
      uint64_t acc = 0;
      if (stride == int64_t(sizeof(T))) {
        const T* p = reinterpret_cast<const T*>(base);
        for (int64_t i = 0; i < n; ++i) acc += static_cast<uint64_t>(static_cast<int64_t>(p[i]));
      } else {
        for (int64_t i = 0; i < n; ++i)
          acc += static_cast<uint64_t>(static_cast<int64_t>(*reinterpret_cast<const T*>(base + i * stride)));
      }
      return acc;
    }
  }
  T finish(acc_t a, int64_t count) const {
    if constexpr (MEAN) {
      return static_cast<T>(static_cast<C<T>>(double(a) / double(count)));
    } else if constexpr (is_float_type<T>::value) {
      return static_cast<T>(static_cast<C<T>>(a));
    } else {
      return static_cast<T>(a);  // wraps modulo 2^bits
    }
  }
};

// max (MAX) or min of p[0..n) and `init`, NaN-propagating for floating C. Written with GCC
// vector extensions (GCC does not vectorize a NaN-aware select reduction on its own): 32-byte
// vectors, AVX2/AVX-512 in x86-64-v3/v4 clones. Call it only from multiversioned code
// (maxmin_contig_mv below): compiled for baseline x86-64, GCC splits the vector selects into
// scalar moves through the stack, 16x slower than a sum.
template <bool MAX, class C>
inline C maxmin_contig(const C* p, int64_t n, C init) {
  C r = init;
  bool nan = false;
  int64_t i = 0;
#if defined(__GNUC__) && !defined(__CUDACC__)
  constexpr int W = 32 / int(sizeof(C));
  typedef C V __attribute__((vector_size(32)));
  V m0, m1, m2, m3;
  for (int k = 0; k < W; ++k) m0[k] = init;
  m1 = m2 = m3 = m0;
  using M = decltype(m0 != m0);
  M nan0 = m0 != m0, nan1 = nan0;
  for (; i + 4 * W <= n; i += 4 * W) {
    V x0, x1, x2, x3;
    std::memcpy(&x0, p + i, sizeof(V));
    std::memcpy(&x1, p + i + W, sizeof(V));
    std::memcpy(&x2, p + i + 2 * W, sizeof(V));
    std::memcpy(&x3, p + i + 3 * W, sizeof(V));
    if constexpr (MAX) {
      m0 = x0 > m0 ? x0 : m0;
      m1 = x1 > m1 ? x1 : m1;
      m2 = x2 > m2 ? x2 : m2;
      m3 = x3 > m3 ? x3 : m3;
    } else {
      m0 = x0 < m0 ? x0 : m0;
      m1 = x1 < m1 ? x1 : m1;
      m2 = x2 < m2 ? x2 : m2;
      m3 = x3 < m3 ? x3 : m3;
    }
    if constexpr (std::is_floating_point<C>::value) {
      nan0 |= (x0 != x0) | (x1 != x1);
      nan1 |= (x2 != x2) | (x3 != x3);
    }
  }
  for (int k = 0; k < W; ++k) {
    const C v[4] = {m0[k], m1[k], m2[k], m3[k]};
    for (C x : v) r = MAX ? (x > r ? x : r) : (x < r ? x : r);
    nan |= (nan0[k] | nan1[k]) != 0;
  }
#endif
  for (; i < n; ++i) {
    const C x = p[i];
    nan |= x != x;
    r = MAX ? (x > r ? x : r) : (x < r ? x : r);
  }
  if constexpr (std::is_floating_point<C>::value) {
    if (nan || r != r) return std::numeric_limits<C>::quiet_NaN();
  }
  return r;
}

// maxmin_contig in the x86-64-v3/v4 clones: its 32-byte GCC vectors are native there. Compiled
// for the baseline only, GCC splits them into scalar selects through the stack: amax over the
// rows of a [4096,1024] f32 tensor took 10 ms at 1 thread, 16x a sum of the same elements.
template <bool MAX, class C>
TSR_CPU_MULTIVERSION C maxmin_contig_mv(const C* p, int64_t n, C init) {
  return maxmin_contig<MAX, C>(p, n, init);
}

template <class T, bool MAX>
struct MaxMinReducer {
  // bool is handled as uint8_t (max = any, min = all).
  using acc_t = C<T>;
  acc_t init() const {
    if constexpr (std::is_floating_point<acc_t>::value)
      return MAX ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    else
      return MAX ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
  }
  acc_t step(acc_t a, T x) const { return MAX ? max_nan<acc_t>(a, acc_t(x)) : min_nan<acc_t>(a, acc_t(x)); }
  acc_t combine(acc_t a, acc_t b) const { return MAX ? max_nan<acc_t>(a, b) : min_nan<acc_t>(a, b); }
  acc_t run(const char* base, int64_t n, int64_t stride) const {
    if (stride == int64_t(sizeof(T))) {
      const T* p = reinterpret_cast<const T*>(base);
      if constexpr (std::is_same<T, acc_t>::value) {
        return maxmin_contig_mv<MAX, acc_t>(p, n, init());
      } else {
        // f16/bf16: convert chunks to the compute type, then reduce them.
        acc_t buf[256];
        acc_t r = init();
        for (int64_t b0 = 0; b0 < n; b0 += 256) {
          const int64_t len = std::min<int64_t>(256, n - b0);
          for (int64_t j = 0; j < len; ++j) buf[j] = acc_t(p[b0 + j]);
          r = combine(r, maxmin_contig_mv<MAX, acc_t>(buf, len, init()));
        }
        return r;
      }
    }
    acc_t r = init();
    for (int64_t i = 0; i < n; ++i) r = step(r, *reinterpret_cast<const T*>(base + i * stride));
    return r;
  }
  T finish(acc_t a, int64_t) const { return static_cast<T>(a); }
};

// ---- drivers -----------------------------------------------------------------------------------

constexpr int64_t kVerticalFlush = 256;

template <class R, class = void>
struct has_vertical_f32 : std::false_type {};
template <class R>
struct has_vertical_f32<R, std::enable_if_t<R::kVerticalF32>> : std::true_type {};

// Adds the float partial sums into acc and clears them (every kVerticalFlush rows).
template <class A>
inline void flush_vertical(float* facc, A* acc, int64_t len, int64_t* rows) {
  for (int64_t j = 0; j < len; ++j) {
    acc[j] += double(facc[j]);
    facc[j] = 0.0f;
  }
  *rows = 0;
}

// The vertical reduction's rows (n rows `stride` bytes apart, `len` columns) in their own
// multiversioned function: inside reduce_vertical's lambda they compiled for baseline x86-64
// only, 4 floats per SSE step (the bias gradients of a GPT step, 2% of it, ran that way). Four
// rows per pass: four memory streams in flight, a quarter of the accumulator traffic. F32: float
// sums into facc, flushed into acc every kVerticalFlush rows (*rows counts them across calls);
// otherwise the reducer's step per element into acc.
template <class T, bool F32, class R>
TSR_CPU_MULTIVERSION void vertical_rows(const char* p, int64_t n, int64_t stride, int64_t len, float* facc,
                                        typename R::acc_t* acc, int64_t* rows, const R& r) {
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const T* r0 = reinterpret_cast<const T*>(p + i * stride);
    const T* r1 = reinterpret_cast<const T*>(p + (i + 1) * stride);
    const T* r2 = reinterpret_cast<const T*>(p + (i + 2) * stride);
    const T* r3 = reinterpret_cast<const T*>(p + (i + 3) * stride);
    if constexpr (F32) {
      for (int64_t j = 0; j < len; ++j) facc[j] += (float(r0[j]) + float(r1[j])) + (float(r2[j]) + float(r3[j]));
      *rows += 4;
      if (*rows >= kVerticalFlush) flush_vertical(facc, acc, len, rows);
    } else {
      for (int64_t j = 0; j < len; ++j) acc[j] = r.step(r.step(r.step(r.step(acc[j], r0[j]), r1[j]), r2[j]), r3[j]);
    }
  }
  for (; i < n; ++i) {
    const T* row = reinterpret_cast<const T*>(p + i * stride);
    if constexpr (F32) {
      for (int64_t j = 0; j < len; ++j) facc[j] += float(row[j]);
      if (++*rows >= kVerticalFlush) flush_vertical(facc, acc, len, rows);
    } else {
      for (int64_t j = 0; j < len; ++j) acc[j] = r.step(acc[j], row[j]);
    }
  }
}

// Linear index over dims [first, ndim) of the iteration -> byte offsets of operands 0 and 1.
inline void offsets_of(const tsr_iter_t& it, int first, int64_t index, int64_t& out_off, int64_t& in_off) {
  out_off = 0;
  in_off = 0;
  for (int d = first; d < it.ndim; ++d) {
    const int64_t i = index % it.sizes[d];
    index /= it.sizes[d];
    out_off += i * it.strides[0][d];
    in_off += i * it.strides[1][d];
  }
}

template <class T, class R>
void reduce_vertical(const tsr_iter_t& it, const R& r) {
  using acc_t = typename R::acc_t;
  const int nr = it.nreduce;
  const int64_t inner = it.sizes[nr];
  int64_t outer = 1;
  for (int d = nr + 1; d < it.ndim; ++d) outer *= it.sizes[d];
  // Tile width: the whole kept row when it fits (sequential reads), split so every thread gets
  // work; multiples of 64 elements.
  const int64_t nthreads = std::max(1, max_threads());
  int64_t tile = (inner + nthreads - 1) / nthreads;
  tile = std::min<int64_t>(kVerticalTile, std::max<int64_t>(64, (tile + 63) / 64 * 64));
  const int64_t ntiles = (inner + tile - 1) / tile;
  const int64_t blk = reduction_block_numel(it);
  ReduceBlock rb;
  rb.ndim = nr;
  rb.sizes = it.sizes;
  rb.strides = it.strides[1];
  rb.numel = blk;
  const int64_t work_per_item = std::max<int64_t>(1, blk * std::min(inner, tile));
  parallel_for(0, outer * ntiles, std::max<int64_t>(1, kParallelGrain / work_per_item), [&](int64_t b, int64_t e) {
    acc_t acc[kVerticalTile];
    ReduceBlock blk_local = rb;
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / ntiles, t = item % ntiles;
      const int64_t j0 = t * tile;
      const int64_t len = std::min(tile, inner - j0);
      int64_t out_off, in_off;
      offsets_of(it, nr + 1, o, out_off, in_off);
      T* out = reinterpret_cast<T*>(it.data[0] + out_off) + j0;
      blk_local.data = it.data[1] + in_off + j0 * int64_t(sizeof(T));
      for (int64_t j = 0; j < len; ++j) acc[j] = r.init();
      if constexpr (has_vertical_f32<R>::value) {
        float facc[kVerticalTile];
        for (int64_t j = 0; j < len; ++j) facc[j] = 0.0f;
        int64_t rows = 0;
        blk_local.for_each_run([&](const char* p, int64_t n, int64_t stride) {
          vertical_rows<T, true>(p, n, stride, len, facc, acc, &rows, r);
        });
        for (int64_t j = 0; j < len; ++j) acc[j] += double(facc[j]);
      } else {
        int64_t rows = 0;
        blk_local.for_each_run([&](const char* p, int64_t n, int64_t stride) {
          vertical_rows<T, false>(p, n, stride, len, nullptr, acc, &rows, r);
        });
      }
      for (int64_t j = 0; j < len; ++j) out[j] = r.finish(acc[j], blk);
    }
  });
}

template <class T, class R>
void reduce_generic(const tsr_iter_t& it, const R& r) {
  using acc_t = typename R::acc_t;
  const int64_t nout = reduction_num_outputs(it);
  if (nout == 0) return;
  const int64_t blk = reduction_block_numel(it);
  const int nr = std::min(it.nreduce, it.ndim);

  // Vertical: reduced dims strided, first kept dim contiguous in input and output.
  if (nr >= 1 && nr < it.ndim && blk > 1 && it.sizes[nr] > 1 && it.strides[1][0] != int64_t(sizeof(T)) &&
      it.strides[1][nr] == int64_t(sizeof(T)) && it.strides[0][nr] == int64_t(sizeof(T))) {
    reduce_vertical<T>(it, r);
    return;
  }

  auto one_output = [&](char* out, const ReduceBlock& b) {
    acc_t acc = r.init();
    b.for_each_run([&](const char* p, int64_t n, int64_t stride) { acc = r.combine(acc, r.run(p, n, stride)); });
    *reinterpret_cast<T*>(out) = r.finish(acc, blk);
  };

  const int nthreads = max_threads();
  if (blk < 2 * kChunk || nout >= 4 * int64_t(nthreads) || nthreads == 1 || in_parallel_region()) {
    parallel_for_each_reduction(it, one_output);
    return;
  }

  // Few outputs, large blocks: chunk each block.
  tsr_iter_t sub;
  sub.struct_size = sizeof(sub);
  sub.ndim = nr;
  sub.noperands = 1;
  sub.noutputs = 0;
  sub.nreduce = 0;
  sub.contiguous = 0;
  sub.reserved = 0;
  sub.numel = blk;
  for (int d = 0; d < nr; ++d) {
    sub.sizes[d] = it.sizes[d];
    sub.strides[0][d] = it.strides[1][d];
  }
  sub.dtypes[0] = it.dtypes[1];
  const int64_t nchunks = (blk + kChunk - 1) / kChunk;
  std::vector<acc_t> partial(static_cast<size_t>(nchunks));
  for_each_reduction(it, [&](char* out, const ReduceBlock& b) {
    sub.data[0] = const_cast<char*>(b.data);
    parallel_for(0, nchunks, 1, [&](int64_t c0, int64_t c1) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        acc_t acc = r.init();
        for_each_run<1>(
            sub, ch * kChunk, std::min(blk, (ch + 1) * kChunk),
            [&](char* const* p, const int64_t* s, int64_t n) { acc = r.combine(acc, r.run(p[0], n, s[0])); });
        partial[static_cast<size_t>(ch)] = acc;
      }
    });
    acc_t acc = r.init();
    for (const acc_t& v : partial) acc = r.combine(acc, v);
    *reinterpret_cast<T*>(out) = r.finish(acc, blk);
  });
}

void sum_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_numeric(c.dtype(), "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_generic<T>(it, SumReducer<T, false>{});
  });
}

void mean_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_floating(c.dtype(), "mean", [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce_generic<T>(it, SumReducer<T, true>{});
  });
}

template <bool MAX>
void amax_amin(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), c.op_name(), [&](auto tag) {
    using T0 = typename decltype(tag)::type;
    using T = std::conditional_t<std::is_same<T0, bool>::value, uint8_t, T0>;
    reduce_generic<T>(it, MaxMinReducer<T, MAX>{});
  });
}
void amax_kernel(KernelCall& c) { amax_amin<true>(c); }
void amin_kernel(KernelCall& c) { amax_amin<false>(c); }

void argmax_kernel(KernelCall& c) {
  const tsr_iter_t& it = c.iter();
  dispatch_all(c.dtype(), "argmax", [&](auto tag) {
    using T0 = typename decltype(tag)::type;
    using T = std::conditional_t<std::is_same<T0, bool>::value, uint8_t, T0>;
    using CT = C<T>;
    parallel_for_each_reduction(it, [&](char* out, const ReduceBlock& b) {
      int64_t best_i = 0;
      if (b.numel > 0) {
        const char* p = b.data;
        const int64_t n = b.ndim == 0 ? 1 : b.sizes[0];
        const int64_t s = b.ndim == 0 ? 0 : b.strides[0];
        CT best = CT(*reinterpret_cast<const T*>(p));
        if (!tsr::isnan(best)) {
          for (int64_t i = 1; i < n; ++i) {
            const CT v = CT(*reinterpret_cast<const T*>(p + i * s));
            if (v > best || v != v) {
              best = v;
              best_i = i;
              if (v != v) break;  // the first NaN is the maximum
            }
          }
        }
      }
      *reinterpret_cast<int64_t*>(out) = best_i;
    });
  });
}

}  // namespace

TSR_CPU_KERNELS(reduce) {
  r.kernel("sum", "cpu::sum", device_type, kNumericMask, TSR_KERNEL(sum_kernel));
  r.kernel("mean", "cpu::mean", device_type, kFloatingMask, TSR_KERNEL(mean_kernel));
  r.kernel("amax", "cpu::amax", device_type, kAllMask, TSR_KERNEL(amax_kernel));
  r.kernel("amin", "cpu::amin", device_type, kAllMask, TSR_KERNEL(amin_kernel));
  r.kernel("argmax", "cpu::argmax", device_type, kAllMask, TSR_KERNEL(argmax_kernel));
}

}  // namespace tsr::cpu
