// The machine's f32 fused-multiply-add peak, measured: the roofline that GEMM figures are put
// against in the same run (tessera_bench's gemm rows). Each thread runs 12 independent FMA chains
// (more than latency x ports on current x86 cores) on the widest vector unit the CPU has
// (AVX-512, else AVX2+FMA, else scalar), so the loop is bound by FMA throughput alone.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace bench {

struct FmaPeak {
  double gflops = 0;  // all threads together
  std::string isa;    // "AVX-512", "AVX2", "scalar"
};

namespace detail {

constexpr int kChains = 12;

__attribute__((target("avx512f"), noinline)) inline float fma_chains_avx512(int64_t iters) {
  __m512 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm512_set1_ps(1.0f + 0.001f * k);
  const __m512 m = _mm512_set1_ps(0.9999999f), a = _mm512_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = _mm512_fmadd_ps(acc[k], m, a);
  __m512 s = acc[0];
  for (int k = 1; k < kChains; ++k) s = _mm512_add_ps(s, acc[k]);
  float v[16];  // (not _mm512_reduce_add_ps: gcc 12 warns inside it under -Werror)
  _mm512_storeu_ps(v, s);
  float r = 0;
  for (float x : v) r += x;
  return r;
}

__attribute__((target("avx2,fma"), noinline)) inline float fma_chains_avx2(int64_t iters) {
  __m256 acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = _mm256_set1_ps(1.0f + 0.001f * k);
  const __m256 m = _mm256_set1_ps(0.9999999f), a = _mm256_set1_ps(1e-7f);
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = _mm256_fmadd_ps(acc[k], m, a);
  __m256 s = acc[0];
  for (int k = 1; k < kChains; ++k) s = _mm256_add_ps(s, acc[k]);
  float v[8];
  _mm256_storeu_ps(v, s);
  float r = 0;
  for (float x : v) r += x;
  return r;
}

__attribute__((noinline)) inline float fma_chains_scalar(int64_t iters) {
  float acc[kChains];
  for (int k = 0; k < kChains; ++k) acc[k] = 1.0f + 0.001f * k;
  for (int64_t i = 0; i < iters; ++i)
    for (int k = 0; k < kChains; ++k) acc[k] = acc[k] * 0.9999999f + 1e-7f;
  float r = 0;
  for (float x : acc) r += x;
  return r;
}

}  // namespace detail

// The best of `reps` runs of `threads` threads each doing `iters` iterations of the chains.
inline FmaPeak measure_fma_peak(int threads, int reps = 5, int64_t iters = 20'000'000) {
  FmaPeak p;
  int lanes = 1;
  float (*kernel)(int64_t) = detail::fma_chains_scalar;
  if (__builtin_cpu_supports("avx512f")) {
    kernel = detail::fma_chains_avx512;
    lanes = 16;
    p.isa = "AVX-512";
  } else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    kernel = detail::fma_chains_avx2;
    lanes = 8;
    p.isa = "AVX2";
  } else {
    p.isa = "scalar";
  }
  threads = std::max(1, threads);
  const double flops = 2.0 * lanes * detail::kChains * static_cast<double>(iters) * threads;
  volatile float sink = 0;
  kernel(iters / 10);  // warm-up: clocks up, code paged in
  for (int r = 0; r < reps; ++r) {
    std::vector<float> out(static_cast<size_t>(threads));
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) ts.emplace_back([&, t] { out[static_cast<size_t>(t)] = kernel(iters); });
    for (std::thread& th : ts) th.join();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (float v : out) sink = sink + v;
    p.gflops = std::max(p.gflops, flops / s / 1e9);  // the best run: the peak, not the noise
  }
  (void)sink;
  return p;
}

}  // namespace bench
