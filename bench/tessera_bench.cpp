// tessera_bench: the runtime's headline numbers in one run, each beside a baseline measured in the
// same process, as a table (default) or JSON (--json).
//
//   dispatch    ns per add of two 1-element f32 tensors, output allocation included, through the
//               SDK (tsr::add) and through the raw C ABI (api->op_call, op looked up once).
//   bandwidth   add of 16M f32 (a+b into a new tensor, and into an out= tensor) in GB/s, counting
//               3 arrays x 4 bytes x n, against memcpy of 64 MiB (2 x 64 MiB moved) in the same run;
//               sum of 16M f32 (4 bytes x n) against the memcpy bandwidth and a plain read loop.
//   gemm        sgemm 2048^3 in GFLOP/s through tsr::mm against cblas_sgemm called directly
//               (same OpenBLAS library as the cpu plugin), and against the FMA peak of as many
//               threads measured in the same run (fma_peak.hpp: the roofline); tsr::mm on bf16
//               operands of the same size against the f32 figure and libtorch's bf16 mm.
//   startup     wall time from spawning this binary with --first-op (runtime init, one add, copy
//               to host, print) to its exit, and the same for --noop (returns from main at once).
//
// Every number is the median of several repetitions after warm-up. Memory for the baselines is
// allocated like the cpu plugin's large blocks (2 MiB aligned, MADV_HUGEPAGE) and pre-faulted.
//
//   tessera_bench [--json] [--quick] [--reps N]
//   tessera_bench --sweep [--threads N] [--max ELEMENTS] [--svg FILE]   cost curves (sweep.cpp)
//   tessera_bench --first-op | --noop      (children of the startup measurement)
#include <fcntl.h>
#include <spawn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include <omp.h>

#include "fma_peak.hpp"
#include "sweep.hpp"
#include "tessera/tessera.hpp"

#ifdef TESSERA_BENCH_HAVE_CBLAS
#include <cblas.h>
#endif
#ifdef TESSERA_BENCH_HAVE_TORCH
#include <torch/torch.h>
#endif

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Runs body() `warmup` times, then `reps` timed repetitions; returns the median seconds.
double time_median(int warmup, int reps, const std::function<void()>& body) {
  for (int i = 0; i < warmup; ++i) body();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = Clock::now();
    body();
    t.push_back(seconds_since(t0));
  }
  return median(t);
}

// Median over `reps` batches of `iters` calls, in ns per call.
double ns_per_call(int reps, int64_t iters, const std::function<void()>& body) {
  for (int64_t i = 0; i < iters / 10 + 1; ++i) body();  // warm-up
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    for (int64_t i = 0; i < iters; ++i) body();
    t.push_back(seconds_since(t0) * 1e9 / static_cast<double>(iters));
  }
  return median(t);
}

// A 2 MiB-aligned, huge-page-advised, pre-faulted buffer (as the cpu plugin allocates big blocks).
struct Buffer {
  void* p = nullptr;
  size_t n = 0;
  explicit Buffer(size_t nbytes) : n(nbytes) {
    const size_t huge = size_t(2) << 20;
    const size_t rounded = (nbytes + huge - 1) / huge * huge;
    if (posix_memalign(&p, huge, rounded) != 0) {
      std::fprintf(stderr, "tessera_bench: out of memory\n");
      std::exit(1);
    }
#ifdef MADV_HUGEPAGE
    (void)madvise(p, rounded, MADV_HUGEPAGE);
#endif
    std::memset(p, 1, rounded);
  }
  ~Buffer() { std::free(p); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  float* f() const { return static_cast<float*>(p); }
};

// A read-only pass that the compiler cannot drop: 16 independent lanes (vectorizes without
// -ffast-math).
__attribute__((noinline)) float read_sum(const float* x, size_t n) {
  float acc[16] = {};
  const size_t blocks = n / 16;
  for (size_t blk = 0; blk < blocks; ++blk) {
    const float* p = x + blk * 16;
    for (int l = 0; l < 16; ++l) acc[l] += p[l];
  }
  float s = 0;
  for (size_t i = blocks * 16; i < n; ++i) s += x[i];
  for (float a : acc) s += a;
  return s;
}

// Multi-threaded memcpy with std::thread (reference for a parallel kernel).
void parallel_memcpy(void* dst, const void* src, size_t n, int threads) {
  std::vector<std::thread> ts;
  const size_t chunk = (n / threads + 4095) / 4096 * 4096;
  for (int t = 0; t < threads; ++t) {
    const size_t b = std::min(n, chunk * t), e = std::min(n, b + chunk);
    if (b < e)
      ts.emplace_back([=] { std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, e - b); });
  }
  for (auto& th : ts) th.join();
}

volatile float g_sink;

// ---- the report ---------------------------------------------------------------------------------

struct Row {
  std::string group, name;
  double value;
  std::string unit;
  std::string baseline;  // what `ratio` compares against ("" = none)
  double ratio;          // value vs baseline, oriented so that higher is better
  std::string target;    // e.g. "<= 100 ns" (informational)
  int pass;              // 1 met, 0 missed, -1 no target
};

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

// ---- startup ------------------------------------------------------------------------------------

int first_op_child() {
  // Runtime init (plugins loaded), one op, the result copied to host.
  tsr::Tensor a = tsr::from_vector(std::vector<float>{1.5f});
  tsr::Tensor b = tsr::from_vector(std::vector<float>{2.0f});
  float r = tsr::add(a, b).item<float>();
  std::printf("%g\n", r);
  std::fflush(stdout);
  return r == 3.5f ? 0 : 1;
}

// Wall seconds from just before posix_spawn to waitpid's return, for `self flag`.
double spawn_and_wait(const std::string& self, const char* flag) {
  const char* argv[] = {self.c_str(), flag, nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  auto t0 = Clock::now();
  int rc = posix_spawn(&pid, self.c_str(), &fa, nullptr, const_cast<char* const*>(argv), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    std::fprintf(stderr, "tessera_bench: posix_spawn: %s\n", std::strerror(rc));
    return NAN;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  double t = seconds_since(t0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "tessera_bench: child %s failed (status %d)\n", flag, status);
    return NAN;
  }
  return t;
}

std::string self_exe() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "";
  buf[n] = 0;
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false, quick = false, sweep = false;
  int reps = 0;
  bench::SweepOptions so;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--noop")) return 0;
    if (!std::strcmp(argv[i], "--first-op")) {
      try {
        return first_op_child();
      } catch (const tsr::Error& e) {
        std::fprintf(stderr, "tessera_bench --first-op: %s\n", e.what());
        return 1;
      }
    }
    if (!std::strcmp(argv[i], "--json"))
      json = true;
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--sweep"))
      sweep = true;
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      so.threads = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--max") && i + 1 < argc)
      so.max_elements = std::max<int64_t>(100, std::atoll(argv[++i]));
    else if (!std::strcmp(argv[i], "--svg") && i + 1 < argc)
      so.svg = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--json] [--quick] [--reps N]\n"
                   "       %s --sweep [--threads N] [--max ELEMENTS] [--svg FILE]\n",
                   argv[0], argv[0]);
      return 2;
    }
  }
  if (sweep) {
    omp_set_num_threads(so.threads);
    try {
      return bench::run_sweep(so);
    } catch (const tsr::Error& e) {
      std::fprintf(stderr, "tessera_bench --sweep: %s\n", e.what());
      return 1;
    }
  }
  if (reps <= 0) reps = quick ? 3 : 9;

  std::vector<Row> rows;
  auto add_row = [&](Row r) { rows.push_back(std::move(r)); };

  try {
    const tsr_api_t* api = tsr::api();
    tsr_runtime_t* rt = tsr::runtime();
    const unsigned hw = std::thread::hardware_concurrency();
    const char* omp = std::getenv("OMP_NUM_THREADS");
    // Other work on the machine moves every figure: the load when the run starts is printed with them.
    double load[3] = {-1, -1, -1};
    if (getloadavg(load, 3) != 3) load[0] = load[1] = load[2] = -1;
    int blas_threads = 0;
#ifdef TESSERA_BENCH_HAVE_CBLAS
    blas_threads = openblas_get_num_threads();
#endif

    // ---- dispatch overhead -------------------------------------------------------------------
    {
      tsr::Tensor a = tsr::from_vector(std::vector<float>{1.0f});
      tsr::Tensor b = tsr::from_vector(std::vector<float>{2.0f});
      const int64_t iters = quick ? 20000 : 200000;
      double sdk = ns_per_call(reps, iters, [&] { tsr::Tensor c = tsr::add(a, b); });
      add_row({"dispatch", "tsr::add 1-elem f32 (alloc incl.)", sdk, "ns", "", 0, "<= 100 ns", sdk <= 100});

      tsr_op_t* op = nullptr;
      tsr::check(api->op_find(rt, "add", &op));
      tsr_value_t args[2];
      args[0].tag = TSR_VALUE_TENSOR;
      args[0].u.tensor = a.get();
      args[1].tag = TSR_VALUE_TENSOR;
      args[1].u.tensor = b.get();
      double raw = ns_per_call(reps, iters, [&] {
        tsr_tensor_t* out = nullptr;
        tsr_status_t st = api->op_call(op, args, 2, &out, 1);
        if (st) tsr::check(st);
        api->tensor_release(out);
      });
      add_row({"dispatch", "api->op_call add 1-elem f32", raw, "ns", "", 0, "<= 100 ns", raw <= 100});

      tsr::Tensor o = tsr::empty({1});
      tsr_tensor_t* outs[1] = {o.get()};
      double raw_out = ns_per_call(reps, iters, [&] {
        tsr_status_t st = api->op_call(op, args, 2, outs, 1);
        if (st) tsr::check(st);
      });
      add_row({"dispatch", "api->op_call add 1-elem f32 out=", raw_out, "ns", "", 0, "", -1});

#ifdef TESSERA_BENCH_HAVE_TORCH
      {
        torch::Tensor x = torch::ones({1}), y = torch::ones({1});
        double t = ns_per_call(reps, iters, [&] { torch::Tensor z = torch::add(x, y); });
        add_row({"dispatch", "torch::add 1-elem f32 (libtorch)", t, "ns", "", 0, "", -1});
      }
#endif
    }

    // ---- bandwidth -----------------------------------------------------------------------------
    const int64_t n = int64_t(16) << 20;  // 16M floats = 64 MiB
    const size_t bytes = size_t(n) * sizeof(float);
    double memcpy_gbs = 0, memcpy_mt_gbs = 0, read_gbs = 0;
    {
      Buffer src(bytes), dst(bytes);
      double t = time_median(2, reps, [&] { std::memcpy(dst.p, src.p, bytes); });
      memcpy_gbs = 2.0 * bytes / t / 1e9;
      add_row({"bandwidth", "memcpy 64 MiB (1 thread)", memcpy_gbs, "GB/s", "", 0, "", -1});
      const int threads = std::max(1u, hw);
      double tm = time_median(2, reps, [&] { parallel_memcpy(dst.p, src.p, bytes, threads); });
      memcpy_mt_gbs = 2.0 * bytes / tm / 1e9;
      add_row({"bandwidth", "memcpy 64 MiB (" + std::to_string(threads) + " threads)", memcpy_mt_gbs, "GB/s", "", 0, "",
               -1});
      double tr = time_median(2, reps, [&] { g_sink = read_sum(src.f(), size_t(n)); });
      read_gbs = 1.0 * bytes / tr / 1e9;
      add_row({"bandwidth", "read loop 64 MiB (1 thread)", read_gbs, "GB/s", "", 0, "", -1});
    }
    {
      tsr::Tensor a = tsr::rand({n}), b = tsr::rand({n});
      const double moved = 3.0 * bytes;
      double t_new = time_median(2, reps, [&] { tsr::Tensor c = a + b; });
      double g = moved / t_new / 1e9;
      add_row({"bandwidth", "add 16M f32 -> new tensor", g, "GB/s", "memcpy", g / memcpy_gbs, ">= 80% memcpy",
               g / memcpy_gbs >= 0.8});
      static const tsr::Op add_op("add");
      tsr::Tensor out = tsr::empty({n});
      double t_out = time_median(2, reps, [&] { tsr::call_out(add_op, out, {a, b}); });
      g = moved / t_out / 1e9;
      add_row({"bandwidth", "add 16M f32 -> out=", g, "GB/s", "memcpy", g / memcpy_gbs, ">= 80% memcpy",
               g / memcpy_gbs >= 0.8});
      double t_sum = time_median(2, reps, [&] { g_sink = tsr::sum(a).item<float>(); });
      g = 1.0 * bytes / t_sum / 1e9;
      add_row(
          {"bandwidth", "sum 16M f32", g, "GB/s", "memcpy", g / memcpy_gbs, ">= 80% memcpy", g / memcpy_gbs >= 0.8});
      add_row({"bandwidth", "sum 16M f32 vs read loop", g, "GB/s", "read loop", g / read_gbs, "", -1});
    }

    // ---- gemm ------------------------------------------------------------------------------------
    {
      const int64_t N = quick ? 1024 : 2048;
      const double flops = 2.0 * N * N * N;
      tsr::Tensor a = tsr::randn({N, N}), b = tsr::randn({N, N});
      const int greps = std::max(3, reps / 2);
      std::vector<double> tt, tb;
      tsr::Tensor c = tsr::mm(a, b);  // warm-up
#ifdef TESSERA_BENCH_HAVE_CBLAS
      std::vector<float> cb(static_cast<size_t>(N * N));
      const float* ap = a.data<float>();
      const float* bp = b.data<float>();
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, ap, N, bp, N, 0.0f, cb.data(), N);
#endif
      // Interleaved in blocks, so both see the same machine state; the first call of each block
      // is not timed: the call after the other library's runs up to 15% slower (measured: 73% of
      // the FMA peak instead of 87-92% for tsr::mm after cblas_sgemm).
      for (int r = 0; r < greps; ++r) {
        c = tsr::mm(a, b);
        for (int i = 0; i < 2; ++i) {
          auto t0 = Clock::now();
          c = tsr::mm(a, b);
          tt.push_back(seconds_since(t0));
        }
#ifdef TESSERA_BENCH_HAVE_CBLAS
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, ap, N, bp, N, 0.0f, cb.data(), N);
        for (int i = 0; i < 2; ++i) {
          auto t0 = Clock::now();
          cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, N, N, N, 1.0f, ap, N, bp, N, 0.0f, cb.data(), N);
          tb.push_back(seconds_since(t0));
        }
#endif
      }
      const std::string size = std::to_string(N);
      double gt = flops / median(tt) / 1e9;
#ifdef TESSERA_BENCH_HAVE_CBLAS
      double gb = flops / median(tb) / 1e9;
      add_row({"gemm", "cblas_sgemm " + size + "^3 (direct)", gb, "GFLOP/s", "", 0, "", -1});
      add_row({"gemm", "tsr::mm f32 " + size + "^3", gt, "GFLOP/s", "cblas_sgemm", gt / gb, ">= 95% cblas",
               gt / gb >= 0.95});
#else
      add_row({"gemm", "tsr::mm f32 " + size + "^3", gt, "GFLOP/s", "", 0, "", -1});
#endif
      // The roofline: the FMA peak of as many threads as the GEMM runs on, measured now.
      const int gemm_threads = blas_threads > 0 ? blas_threads : static_cast<int>(std::max(1u, hw));
      const bench::FmaPeak peak = bench::measure_fma_peak(gemm_threads);
      add_row({"gemm",
               "FMA peak f32 (" + peak.isa + ", " + std::to_string(gemm_threads) + " thread" +
                   (gemm_threads > 1 ? "s)" : ")"),
               peak.gflops, "GFLOP/s", "", 0, "", -1});
      add_row({"gemm", "tsr::mm f32 " + size + "^3 vs the peak", gt, "GFLOP/s", "FMA peak", gt / peak.gflops,
               ">= 80% peak", gt / peak.gflops >= 0.8});

      // bf16: the same product from bf16 operands (f32 accumulation, one rounding to bf16), beside
      // the f32 figure and, when built with it, libtorch's bf16 mm; interleaved as above. On CPUs
      // with avx512_bf16 the cpu plugin runs it on oneDNN's bf16 matmul, else through f32 buffers.
      tsr::Tensor a16 = a.to(TSR_BF16), b16 = b.to(TSR_BF16);
      tsr::Tensor c16 = tsr::mm(a16, b16);  // warm-up: builds and caches the primitive
#ifdef TESSERA_BENCH_HAVE_TORCH
      torch::Tensor ta16 = torch::randn({N, N}).to(torch::kBFloat16), tb16 = torch::randn({N, N}).to(torch::kBFloat16);
      torch::Tensor tc16 = torch::mm(ta16, tb16);
#endif
      std::vector<double> t16, tl16;
      for (int r = 0; r < greps; ++r) {
        c16 = tsr::mm(a16, b16);
        for (int i = 0; i < 2; ++i) {
          auto t0 = Clock::now();
          c16 = tsr::mm(a16, b16);
          t16.push_back(seconds_since(t0));
        }
#ifdef TESSERA_BENCH_HAVE_TORCH
        tc16 = torch::mm(ta16, tb16);
        for (int i = 0; i < 2; ++i) {
          auto t0 = Clock::now();
          tc16 = torch::mm(ta16, tb16);
          tl16.push_back(seconds_since(t0));
        }
#endif
      }
      const double g16 = flops / median(t16) / 1e9;
      add_row({"gemm", "tsr::mm bf16 " + size + "^3", g16, "GFLOP/s", "tsr::mm f32", g16 / gt, "", -1});
#ifdef TESSERA_BENCH_HAVE_TORCH
      const double gl16 = flops / median(tl16) / 1e9;
      add_row({"gemm", "torch::mm bf16 " + size + "^3 (libtorch)", gl16, "GFLOP/s", "", 0, "", -1});
      add_row({"gemm", "tsr::mm bf16 " + size + "^3 vs libtorch", g16, "GFLOP/s", "libtorch bf16", g16 / gl16, "", -1});
#endif
    }

    // ---- linear with a bias: the fused GEMM (bias rows + beta = 1) vs matmul then add ----------
    // A narrow layer (K = 256), where the separate add's pass over the output is a visible share.
    {
      const int64_t M = quick ? 2048 : 8192, K = 256, N = 1024;
      const double flops = 2.0 * M * N * K;
      tsr::Tensor x = tsr::randn({M, K}), w = tsr::randn({N, K}), b = tsr::randn({N});
      static const tsr::Op linear_op("linear");
      tsr::Tensor y = tsr::call(linear_op, {x, w, b}), y2 = tsr::matmul(x, w.t()) + b;  // warm-up
      std::vector<double> tf, tu;
      for (int r = 0; r < reps; ++r) {  // interleaved
        auto t0 = Clock::now();
        y = tsr::call(linear_op, {x, w, b});
        tf.push_back(seconds_since(t0));
        t0 = Clock::now();
        y2 = tsr::matmul(x, w.t()) + b;
        tu.push_back(seconds_since(t0));
      }
      const std::string shape = std::to_string(M) + "x" + std::to_string(K) + "x" + std::to_string(N);
      const double gf = flops / median(tf) / 1e9, gu = flops / median(tu) / 1e9;
      add_row({"gemm", "matmul + add f32 " + shape, gu, "GFLOP/s", "", 0, "", -1});
      add_row({"gemm", "linear (fused bias) f32 " + shape, gf, "GFLOP/s", "matmul + add", gf / gu, "", -1});
    }

    // ---- startup -------------------------------------------------------------------------------
    {
      const std::string self = self_exe();
      const int sreps = quick ? 3 : 10;
      std::vector<double> first, noop;
      spawn_and_wait(self, "--first-op");  // warm the page cache
      for (int r = 0; r < sreps; ++r) {
        first.push_back(spawn_and_wait(self, "--first-op"));
        noop.push_back(spawn_and_wait(self, "--noop"));
      }
      double f = median(first) * 1e3, z = median(noop) * 1e3;
      add_row({"startup", "exec -> first op result -> exit", f, "ms", "", 0, "<= 20 ms", f <= 20});
      add_row({"startup", "exec -> exit (--noop, same binary)", z, "ms", "", 0, "", -1});
      add_row({"startup", "difference (runtime init + first op)", f - z, "ms", "", 0, "", -1});
    }

    // ---- output ----------------------------------------------------------------------------------
    if (json) {
      std::printf(
          "{\n  \"core\": \"%s\",\n  \"hardware_threads\": %u,\n  \"openblas_threads\": %d,\n"
          "  \"omp_num_threads\": \"%s\",\n  \"repetitions\": %d,\n  \"load_average\": [%.2f, %.2f, %.2f],\n"
          "  \"results\": [\n",
          api->version_string(), hw, blas_threads, omp ? omp : "", reps, load[0], load[1], load[2]);
      for (size_t i = 0; i < rows.size(); ++i) {
        const Row& r = rows[i];
        std::printf("    {\"group\": \"%s\", \"name\": \"%s\", \"value\": %.6g, \"unit\": \"%s\"", r.group.c_str(),
                    json_escape(r.name).c_str(), r.value, r.unit.c_str());
        if (!r.baseline.empty()) std::printf(", \"baseline\": \"%s\", \"ratio\": %.4f", r.baseline.c_str(), r.ratio);
        if (!r.target.empty())
          std::printf(", \"target\": \"%s\", \"met\": %s", r.target.c_str(), r.pass ? "true" : "false");
        std::printf("}%s\n", i + 1 < rows.size() ? "," : "");
      }
      std::printf("  ]\n}\n");
    } else {
      std::printf(
          "tessera_bench: core %s, %u hardware threads, OpenBLAS threads %d, OMP_NUM_THREADS=%s, "
          "median of %d reps, load average %.2f %.2f %.2f at the start\n\n",
          api->version_string(), hw, blas_threads, omp ? omp : "(unset)", reps, load[0], load[1], load[2]);
      std::printf("%-10s %-40s %12s %-8s %-22s %s\n", "group", "measurement", "value", "unit", "vs baseline", "target");
      std::printf("%s\n", std::string(112, '-').c_str());
      for (const Row& r : rows) {
        char ratio[64] = "";
        if (!r.baseline.empty()) std::snprintf(ratio, sizeof ratio, "%5.1f%% of %s", 100 * r.ratio, r.baseline.c_str());
        std::string target = r.target.empty() ? "" : r.target + (r.pass ? "  met" : "  MISSED");
        std::printf("%-10s %-40s %12.2f %-8s %-22s %s\n", r.group.c_str(), r.name.c_str(), r.value, r.unit.c_str(),
                    ratio, target.c_str());
      }
    }
  } catch (const tsr::Error& e) {
    std::fprintf(stderr, "tessera_bench: error %d: %s\n", static_cast<int>(e.code()), e.what());
    return 1;
  }
  return 0;
}
