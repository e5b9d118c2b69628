// CPU-only explicit vectors: 64-byte GCC vector-extension types and the shuffles built on them
// (a W x W tile transpose; the lane sums of W rows at once). Used where GCC's vectorizer does
// not find the layout by itself: the attention kernels (nn_attention.cpp) and layer_norm over
// short rows (nn_fused.cpp). Each multiversioned clone lowers the types to its widest registers
// (AVX-512: one zmm per vector, vpermt2ps per two-source shuffle).
#pragma once

#include <cstdint>
#include <cstring>
#include <utility>

// Vector values pass between these inline helpers and the lambdas of the kernels that use them,
// never across a real call: GCC's note that a 64-byte vector argument or result changes the
// baseline clone's calling convention (-Wpsabi) does not apply, and -Werror would make it fail
// the build.
#if defined(__clang__)
#pragma clang diagnostic ignored "-Wunknown-warning-option"
#endif
#pragma GCC diagnostic ignored "-Wpsabi"

namespace tsr::cpu {

// 64-byte vectors of CT (GCC's vector extension, as small_gemm in matmul.cpp; each clone lowers
// them to its widest registers). Loads and stores take references: a vector argument or result
// would change the baseline clone's ABI.
template <class CT>
struct Vec {
  typedef CT type __attribute__((vector_size(64)));
  static constexpr int64_t W = 64 / int64_t(sizeof(CT));
  static void load(type& v, const CT* p) { std::memcpy(&v, p, sizeof(v)); }
  static void store(CT* p, const type& v) { std::memcpy(p, &v, sizeof(v)); }
};

inline int64_t pad_to(int64_t n, int64_t w) { return (n + w - 1) / w * w; }

// A W x W tile of vectors transposed in place: block-recursive, swapping the off-diagonal h x h
// blocks of every 2h x 2h block for h = W/2 .. 1, two two-source shuffles per pair of vectors and
// level (vpermt2ps with AVX-512): 64 shuffles for 16 floats against 256 scalar moves. The masks
// and the steps are compile-time constants, so the tile stays in registers.
template <class CT, int H, int... L>
inline void transpose_level(typename Vec<CT>::type* a, std::integer_sequence<int, L...>) {
  constexpr int W = int(Vec<CT>::W);
  for (int i = 0; i < W; ++i)
    if (!(i & H)) {
      // __builtin_shufflevector (GCC 12+, clang): constant indices, the second vector's from W.
      const typename Vec<CT>::type x = __builtin_shufflevector(a[i], a[i + H], ((L & H) ? W + L - H : L)...);
      a[i + H] = __builtin_shufflevector(a[i], a[i + H], ((L & H) ? W + L : L + H)...);
      a[i] = x;
    }
}
template <class CT>
inline void transpose_tile(typename Vec<CT>::type* a) {
  constexpr int W = int(Vec<CT>::W);
  const auto lanes = std::make_integer_sequence<int, W>{};
  transpose_level<CT, W / 2>(a, lanes);
  transpose_level<CT, W / 4>(a, lanes);
  transpose_level<CT, W / 8>(a, lanes);
  if constexpr (W == 16) transpose_level<CT, 1>(a, lanes);
}

// Lane r of the result = the sum (or the F-fold) of the lanes of a[r], for W vectors: the rows'
// horizontal reductions as a transposition that adds instead of moving, two shuffles and one
// operation per pair of vectors and level (30 shuffles and 15 operations for 16 floats). Row
// kernels use it to reduce W rows at once instead of one dependent chain per row. a is consumed.
template <class CT, int H, class F, int... L>
inline void fold_level(typename Vec<CT>::type* a, const F& f, std::integer_sequence<int, L...>) {
  constexpr int W = int(Vec<CT>::W);
  // Groups of 2H lanes: the first half from the first vector, the second from the other; the
  // first shuffle takes each half's first H lanes, the second its last H.
  for (int i = 0; i < H; ++i)
    a[i] = f(__builtin_shufflevector(a[i], a[i + H],
                                     ((L % (2 * H)) < H ? (L / (2 * H)) * 2 * H + L % (2 * H)
                                                        : W + (L / (2 * H)) * 2 * H + L % (2 * H) - H)...),
             __builtin_shufflevector(a[i], a[i + H],
                                     ((L % (2 * H)) < H ? (L / (2 * H)) * 2 * H + L % (2 * H) + H
                                                        : W + (L / (2 * H)) * 2 * H + L % (2 * H))...));
}
template <class CT, class F>
inline void fold_rows(typename Vec<CT>::type* a, const F& f) {
  constexpr int W = int(Vec<CT>::W);
  const auto lanes = std::make_integer_sequence<int, W>{};
  fold_level<CT, W / 2>(a, f, lanes);
  fold_level<CT, W / 4>(a, f, lanes);
  fold_level<CT, W / 8>(a, f, lanes);
  if constexpr (W == 16) fold_level<CT, 1>(a, f, lanes);
}

}  // namespace tsr::cpu
