// Benchmarks of the CPU backend through the host SDK (not a test; run by hand):
//   add of 16M f32 vs memcpy bandwidth, sgemm 2048 vs OpenBLAS called directly, 1-element add
//   latency, sum of 16M f32, softmax, exp.
#include <cblas.h>
#include <omp.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

int tsr_bench_threads() { return omp_get_max_threads(); }

double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

// Best wall time of `reps` runs. With TSR_BENCH_CPU_TIME=1: best process CPU time divided by
// the OpenMP thread count instead (stable on a loaded machine; assumes all threads busy).
double best_seconds(int reps, const std::function<void()>& f) {
  static const bool cpu_time = std::getenv("TSR_BENCH_CPU_TIME") != nullptr;
  f();  // warm up
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_now();
    f();
    const double c1 = cpu_now();
    auto t1 = std::chrono::steady_clock::now();
    const double t = cpu_time ? (c1 - c0) / tsr_bench_threads() : std::chrono::duration<double>(t1 - t0).count();
    best = std::min(best, t);
  }
  return best;
}

}  // namespace

int main() {
  const int64_t n = int64_t(1) << 24;
  tsr::manual_seed(1);
  tsr::Tensor a = tsr::rand({n}), b = tsr::rand({n}), out = tsr::empty({n});
  static const tsr::Op add_op("add");

  // memcpy of 64 MB between two tensors' buffers (what the runtime's own memory gives).
  tsr::Tensor c = tsr::empty({n});
  const double t_memcpy = best_seconds(10, [&] { std::memcpy(c.data_ptr(), a.data_ptr(), size_t(n) * 4); });
  const double t_copy = best_seconds(10, [&] { c.copy_(a); });
  const double t_add = best_seconds(10, [&] { tsr::call_out(add_op, out, {a, b, int64_t(1)}); });
  const double t_add_alloc = best_seconds(10, [&] { tsr::Tensor r = a + b; });
  const double bw_memcpy = 2.0 * n * 4 / t_memcpy / 1e9, bw_add = 3.0 * n * 4 / t_add / 1e9;
  std::printf("memcpy 64MB:            %7.3f ms  %6.1f GB/s (read+write)\n", t_memcpy * 1e3, bw_memcpy);
  std::printf("copy_ 16M f32:          %7.3f ms  %6.1f GB/s\n", t_copy * 1e3, 2.0 * n * 4 / t_copy / 1e9);
  std::printf("add 16M f32 (out=):     %7.3f ms  %6.1f GB/s (2 reads+1 write) = %.0f%% of memcpy\n", t_add * 1e3,
              bw_add, 100 * bw_add / bw_memcpy);
  std::printf("add 16M f32 (new out):  %7.3f ms  %6.1f GB/s\n", t_add_alloc * 1e3, 3.0 * n * 4 / t_add_alloc / 1e9);

  const double t_sum = best_seconds(10, [&] { tsr::Tensor s = tsr::sum(a); });
  std::printf("sum 16M f32:            %7.3f ms  %6.1f GB/s\n", t_sum * 1e3, 1.0 * n * 4 / t_sum / 1e9);
  tsr::Tensor m = a.view({4096, 4096});
  const double t_sum0 = best_seconds(5, [&] { tsr::Tensor s = tsr::sum(m, {0}); });
  const double t_sum1 = best_seconds(5, [&] { tsr::Tensor s = tsr::sum(m, {1}); });
  std::printf("sum 4096x4096 dim0/1:   %7.3f / %.3f ms\n", t_sum0 * 1e3, t_sum1 * 1e3);
  const double t_amax = best_seconds(5, [&] { tsr::Tensor s = tsr::amax(a); });
  std::printf("amax 16M f32:           %7.3f ms  %6.1f GB/s\n", t_amax * 1e3, 1.0 * n * 4 / t_amax / 1e9);
  const double t_exp = best_seconds(5, [&] { tsr::Tensor s = tsr::exp(a); });
  std::printf("exp 16M f32:            %7.3f ms  %6.1f GB/s\n", t_exp * 1e3, 2.0 * n * 4 / t_exp / 1e9);
  tsr::Tensor sm = a.view({16384, 1024});
  const double t_softmax = best_seconds(5, [&] { tsr::Tensor s = tsr::softmax(sm, 1); });
  std::printf("softmax 16384x1024:     %7.3f ms  %6.1f GB/s\n", t_softmax * 1e3, 2.0 * n * 4 / t_softmax / 1e9);
  const double t_softmax0 = best_seconds(5, [&] { tsr::Tensor s = tsr::softmax(sm, 0); });
  std::printf("softmax dim0:           %7.3f ms\n", t_softmax0 * 1e3);
  tsr::Tensor h = a.to(TSR_F16);
  const double t_hadd = best_seconds(5, [&] { tsr::Tensor s = h + h; });
  std::printf("add 16M f16:            %7.3f ms\n", t_hadd * 1e3);

  // sgemm 2048
  const int64_t N = 2048;
  tsr::Tensor A = tsr::rand({N, N}), B = tsr::rand({N, N}), C = tsr::empty({N, N});
  static const tsr::Op mm_op("mm");
  const double t_mm = best_seconds(5, [&] { tsr::call_out(mm_op, C, {A, B}); });
  std::vector<float> Cd(size_t(N * N));
  const double t_blas = best_seconds(5, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, int(N), int(N), int(N), 1.0f,
                static_cast<const float*>(A.data_ptr()), int(N), static_cast<const float*>(B.data_ptr()), int(N), 0.0f,
                Cd.data(), int(N));
  });
  const double flop = 2.0 * N * N * N;
  std::printf("sgemm 2048 via mm:      %7.3f ms  %6.1f GFLOP/s\n", t_mm * 1e3, flop / t_mm / 1e9);
  std::printf("sgemm 2048 OpenBLAS:    %7.3f ms  %6.1f GFLOP/s  -> mm at %.1f%%\n", t_blas * 1e3, flop / t_blas / 1e9,
              100 * t_blas / t_mm);

  // 1-element add, total time per call including dispatch
  tsr::Tensor x = tsr::ones({1}), y = tsr::ones({1}), z = tsr::empty({1});
  const int iters = 200000;
  const double t_tiny = best_seconds(5, [&] {
    for (int i = 0; i < iters; ++i) tsr::call_out(add_op, z, {x, y, int64_t(1)});
  });
  const double t_tiny_alloc = best_seconds(5, [&] {
    for (int i = 0; i < iters; ++i) tsr::Tensor r = x + y;
  });
  std::printf("1-element add (out=):   %7.1f ns/call\n", t_tiny / iters * 1e9);
  std::printf("1-element add (a + b):  %7.1f ns/call\n", t_tiny_alloc / iters * 1e9);
  return 0;
}
