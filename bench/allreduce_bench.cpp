// tessera_allreduce_bench: all-reduce bus bandwidth of the fabric backend's engines, as
// nccl-tests defines it (busbw = algbw x 2(n-1)/n, algbw = bytes / time), against memcpy
// bandwidth measured in the same run.
//
//   tessera_allreduce_bench [--max-mib M] [--iters K]           in-process (2, 4) and ring (4) virtual CPU devices
//   tessera launch -n 2 -- tessera_allreduce_bench --gloo       the Gloo engine across processes
//   mpirun -n 2 tessera_allreduce_bench --mpi                    the MPI engine across processes
//
// Where the machine has GPUs, the default run adds the NCCL engine: one GPU (world size 1, where
// NCCL copies in place and busbw is 0 by definition, so algbw is printed) and, with 2 or more
// GPUs, all of them in one process. Each timed call waits for the collective to have run on the
// device (work.wait()).
//
// Sizes run from 4 KiB to --max-mib (default 64 MiB) by factors of 4, float32, sum. Each figure
// is the median of K timed calls after one warm-up; memcpy copies the same number of bytes.
// Rank 0 prints. The numbers are for comparing engines and sizes on one machine in one run.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/distributed/process_group.hpp"
#include "tessera/tessera.hpp"

namespace dist = tsr::distributed;
using Clock = std::chrono::steady_clock;

namespace {

template <class F>
double median_seconds(int iters, F&& f) {
  f();  // warm-up
  std::vector<double> t;
  for (int i = 0; i < iters; ++i) {
    auto a = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - a).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

double memcpy_gbs(size_t bytes, int iters) {
  std::vector<char> a(bytes, 1), b(bytes, 0);
  double s = median_seconds(iters, [&] {
    std::memcpy(b.data(), a.data(), bytes);
    asm volatile("" : : "r"(b.data()) : "memory");
  });
  return static_cast<double>(bytes) / s / 1e9;
}

double busbw(size_t bytes, int n, double seconds) {
  return static_cast<double>(bytes) / seconds / 1e9 * 2.0 * (n - 1) / n;
}

std::string size_str(size_t b) {
  char buf[32];
  if (b >= (1u << 20))
    std::snprintf(buf, sizeof(buf), "%zu MiB", b >> 20);
  else
    std::snprintf(buf, sizeof(buf), "%zu KiB", b >> 10);
  return buf;
}

// The NCCL rows: world size 1 on cuda:0, and every GPU of the machine when there are several.
void nccl_rows(size_t max_bytes, int iters) {
  int32_t type = -1;
  if (tsr_status_t st = tsr::api()->device_type_lookup(tsr::runtime(), "cuda", &type)) {
    tsr::api()->status_free(st);
    std::printf("\nnccl engine: skipped (no cuda device type: the CUDA backend is not loaded)\n");
    return;
  }
  const int gpus = tsr::api()->device_count(tsr::runtime(), type);
  if (gpus < 1) {
    std::printf("\nnccl engine: skipped (no GPU)\n");
    return;
  }
  std::printf("\nall_reduce (sum, float32), nccl engine, world size 1 and %d GPU(s) in one process; the ring engine "
              "(peer copies, NCCL's fallback) over the same GPUs\n%10s %14s %14s %14s\n",
              gpus, "size", "algbw n=1", gpus > 1 ? "busbw n=all" : "-", gpus > 1 ? "ring n=all" : "-");
  for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
    double bw[3] = {0, 0, 0};
    for (int k = 0; k < (gpus > 1 ? 3 : 1); ++k) {
      const int n = k == 0 ? 1 : gpus;
      std::vector<tsr::Device> ds;
      std::vector<tsr::Tensor> ts;
      for (int i = 0; i < n; ++i) {
        ds.push_back(tsr::Device(tsr_device_t{type, i}));
        ts.push_back(tsr::ones({static_cast<int64_t>(bytes / 4)}, TSR_F32, ds.back()));
      }
      dist::DeviceGroup g(ds, 0, k == 2 ? "ring" : nullptr);
      const double s = median_seconds(iters, [&] { g.all_reduce(ts).wait(); });
      bw[k] = n == 1 ? static_cast<double>(bytes) / s / 1e9 : busbw(bytes, n, s);
    }
    std::printf("%10s %14.3f %14.3f %14.3f\n", size_str(bytes).c_str(), bw[0], bw[1], bw[2]);
  }
}

}  // namespace

int main(int argc, char** argv) {
  size_t max_bytes = size_t(64) << 20;
  int iters = 10;
  std::string across;  // the engine across processes, if any
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--max-mib") && i + 1 < argc)
      max_bytes = static_cast<size_t>(std::atol(argv[++i])) << 20;
    else if (!std::strcmp(argv[i], "--iters") && i + 1 < argc)
      iters = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--gloo") || !std::strcmp(argv[i], "--mpi"))
      across = argv[i] + 2;
    else {
      std::fprintf(stderr, "usage: %s [--max-mib M] [--iters K] [--gloo | --mpi]\n", argv[0]);
      return 2;
    }
  }
  try {
    if (!across.empty()) {
      dist::InitOptions o;
      o.backend = across;
      dist::DeviceGroup pg = dist::init_process_group(o);
      const int n = pg.size(), rank = pg.rank();
      if (rank == 0)
        std::printf("all_reduce (sum, float32), %s engine, %d processes on this machine\n%10s %14s %14s %12s\n",
                    pg.info().engine, n, "size", "busbw GB/s", "memcpy GB/s", "busbw/memcpy");
      for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
        tsr::Tensor t = tsr::ones({static_cast<int64_t>(bytes / 4)});
        double s = median_seconds(iters, [&] { pg.all_reduce({t}).wait(); });
        double mc = memcpy_gbs(bytes, iters);
        if (rank == 0)
          std::printf("%10s %14.3f %14.3f %12.3f\n", size_str(bytes).c_str(), busbw(bytes, n, s), mc,
                      busbw(bytes, n, s) / mc);
      }
      return 0;
    }
    setenv("TESSERA_CPU_DEVICES", "4", 0);  // before the runtime is created
    // The ring engine's column: the same virtual devices through its peer-copy algorithm (device
    // copies and the cpu backend's add kernels), which GPUs take when NCCL cannot be loaded.
    std::printf("all_reduce (sum, float32), virtual CPU devices: in-process engine (n=2, n=4), ring engine (n=4)\n"
                "%10s %14s %14s %14s %14s %12s\n",
                "size", "busbw n=2", "busbw n=4", "ring n=4", "memcpy GB/s", "n=4/memcpy");
    for (size_t bytes = 4096; bytes <= max_bytes; bytes *= 4) {
      double bw[3];
      int k = 0;
      for (int n : {2, 4, -4}) {
        const char* engine = n < 0 ? "ring" : nullptr;
        n = std::abs(n);
        std::vector<tsr::Device> ds;
        std::vector<tsr::Tensor> ts;
        for (int i = 0; i < n; ++i) {
          ds.push_back(tsr::Device::cpu(i));
          ts.push_back(tsr::ones({static_cast<int64_t>(bytes / 4)}, TSR_F32, ds.back()));
        }
        dist::DeviceGroup g(ds, 0, engine);
        bw[k++] = busbw(bytes, n, median_seconds(iters, [&] { g.all_reduce(ts).wait(); }));
      }
      double mc = memcpy_gbs(bytes, iters);
      std::printf("%10s %14.3f %14.3f %14.3f %14.3f %12.3f\n", size_str(bytes).c_str(), bw[0], bw[1], bw[2], mc,
                  bw[1] / mc);
    }
    nccl_rows(max_bytes, iters);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 1;
  }
}
