// tessera_bench --sweep: cost curves. GB/s against size for add, sum, softmax and copy, from 1e2
// to 1e8 elements (f32), beside libtorch (when built with TESSERA_BENCH_LIBTORCH) and memcpy of
// the same bytes, all in one run, so that the small-size floor (dispatch and allocation) and the
// large-size bandwidth are both visible. --svg FILE draws the curves.
//
// Bytes counted per op for n f32 elements, the least any implementation must move: add 12n
// (two reads, one write), sum 4n, softmax 8n (one read, one write: the ideal two-pass kernel reads its row
// from cache the second time), copy 8n. add and softmax return new tensors (as a user calls
// them, allocation included, for both libraries); copy writes into an existing tensor. Each point
// is the median of 5 timed batches after a warm-up, a batch being enough calls to last about
// 2 ms. The machine's load average is printed before and after.
#include "sweep.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

#ifdef TESSERA_BENCH_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace bench {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds per call: the median over 5 batches, each long enough (about 2 ms) to time.
double seconds_per_call(const std::function<void()>& f) {
  f();  // warm-up (first-touch page faults, caches, allocator)
  auto t0 = Clock::now();
  f();
  const double once = std::max(1e-9, std::chrono::duration<double>(Clock::now() - t0).count());
  const int64_t calls = std::max<int64_t>(1, static_cast<int64_t>(2e-3 / once));
  std::vector<double> t;
  for (int r = 0; r < 5; ++r) {
    t0 = Clock::now();
    for (int64_t i = 0; i < calls; ++i) f();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / static_cast<double>(calls));
  }
  std::sort(t.begin(), t.end());
  return t[2];
}

std::string loadavg() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  return a.empty() ? "unknown" : a + " " + b + " " + c;
}

struct Series {
  std::string name;
  std::vector<double> gbs;  // one per size; 0 = not measured
};

// softmax over rows of 1000 (the last dim), or one row of n below that.
std::vector<int64_t> softmax_shape(int64_t n) {
  return n >= 1000 ? std::vector<int64_t>{n / 1000, 1000} : std::vector<int64_t>{1, n};
}

volatile float g_sink;

void write_svg(const std::string& path, const std::vector<int64_t>& sizes, const std::vector<Series>& series) {
  const double W = 900, H = 520, L = 70, R = 210, T = 30, B = 50;
  double ymax = 1;
  for (const Series& s : series)
    for (double v : s.gbs) ymax = std::max(ymax, v);
  ymax = std::ceil(ymax / 10) * 10;
  const double x0 = std::log10(static_cast<double>(sizes.front())), x1 = std::log10(static_cast<double>(sizes.back()));
  auto X = [&](int64_t n) { return L + (std::log10(static_cast<double>(n)) - x0) / (x1 - x0) * (W - L - R); };
  auto Y = [&](double v) { return T + (1 - v / ymax) * (H - T - B); };
  std::ofstream f(path);
  f << "<svg xmlns='http://www.w3.org/2000/svg' width='" << W << "' height='" << H
    << "' font-family='sans-serif' font-size='12'>\n<rect width='100%' height='100%' fill='white'/>\n";
  f << "<text x='" << L << "' y='18' font-size='14'>GB/s against elements (f32), tessera_bench --sweep</text>\n";
  for (int d = static_cast<int>(x0); d <= static_cast<int>(x1); ++d) {
    const double x = X(static_cast<int64_t>(std::pow(10.0, d)));
    f << "<line x1='" << x << "' y1='" << T << "' x2='" << x << "' y2='" << H - B << "' stroke='#ddd'/>\n"
      << "<text x='" << x - 10 << "' y='" << H - B + 18 << "'>1e" << d << "</text>\n";
  }
  for (int k = 0; k <= 5; ++k) {
    const double v = ymax * k / 5, y = Y(v);
    f << "<line x1='" << L << "' y1='" << y << "' x2='" << W - R << "' y2='" << y << "' stroke='#ddd'/>\n"
      << "<text x='" << L - 40 << "' y='" << y + 4 << "'>" << v << "</text>\n";
  }
  const char* colors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};
  for (size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const bool torch = s.name.rfind("torch", 0) == 0, mem = s.name == "memcpy";
    const std::string color = mem ? "#000" : colors[i % 4];  // an op's tessera and torch curves share a color
    f << "<polyline fill='none' stroke='" << color << "' stroke-width='2'"
      << (torch ? " stroke-dasharray='6 4'" : "") << (mem ? " stroke-dasharray='2 3'" : "") << " points='";
    for (size_t j = 0; j < sizes.size(); ++j)
      if (s.gbs[j] > 0) f << X(sizes[j]) << "," << Y(s.gbs[j]) << " ";
    f << "'/>\n<text x='" << W - R + 10 << "' y='" << T + 16 * (i + 1) << "' fill='" << color << "'>" << s.name
      << "</text>\n";
  }
  f << "<text x='" << (L + W - R) / 2 - 30 << "' y='" << H - 10 << "'>elements</text>\n</svg>\n";
}

}  // namespace

int run_sweep(const SweepOptions& o) {
  std::vector<int64_t> sizes;
  for (int64_t decade = 100; decade <= o.max_elements; decade *= 10) {
    sizes.push_back(decade);
    if (decade * 3 <= o.max_elements) sizes.push_back(decade * 3);
  }
  std::printf("tessera_bench --sweep: f32, %d thread(s), load average before: %s\n", o.threads, loadavg().c_str());
  std::vector<Series> series = {{"add", {}}, {"sum", {}}, {"softmax", {}}, {"copy", {}}};
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::set_num_threads(o.threads);
  for (const char* n : {"torch add", "torch sum", "torch softmax", "torch copy"}) series.push_back({n, {}});
#endif
  series.push_back({"memcpy", {}});
  for (int64_t n : sizes) {
    const double ne = static_cast<double>(n);  // bytes moved: the counts above, per element
    std::vector<double> row;
    {
      tsr::Tensor a = tsr::rand({n}), c = tsr::rand({n}), dst = tsr::empty({n});
      tsr::Tensor s2 = tsr::rand(softmax_shape(n));
      row.push_back(12 * ne / seconds_per_call([&] { tsr::Tensor r = a + c; }) / 1e9);
      row.push_back(4 * ne / seconds_per_call([&] { g_sink = tsr::sum(a).item<float>(); }) / 1e9);
      row.push_back(8 * ne / seconds_per_call([&] { tsr::Tensor r = tsr::softmax(s2, -1); }) / 1e9);
      row.push_back(8 * ne / seconds_per_call([&] { dst.copy_(a); }) / 1e9);
    }
#ifdef TESSERA_BENCH_HAVE_TORCH
    {
      torch::Tensor a = torch::rand({n}), c = torch::rand({n}), dst = torch::empty({n});
      torch::Tensor s2 = torch::rand(softmax_shape(n));
      row.push_back(12 * ne / seconds_per_call([&] { torch::Tensor r = a + c; }) / 1e9);
      row.push_back(4 * ne / seconds_per_call([&] { g_sink = torch::sum(a).item<float>(); }) / 1e9);
      row.push_back(8 * ne / seconds_per_call([&] { torch::Tensor r = torch::softmax(s2, -1); }) / 1e9);
      row.push_back(8 * ne / seconds_per_call([&] { dst.copy_(a); }) / 1e9);
    }
#endif
    {
      std::vector<float> src(static_cast<size_t>(n), 1.0f), dst(static_cast<size_t>(n));
      row.push_back(8 * ne / seconds_per_call([&] {
                      std::memcpy(dst.data(), src.data(), static_cast<size_t>(n) * 4);
                      g_sink = dst[static_cast<size_t>(n) - 1];
                    }) /
                    1e9);
    }
    for (size_t i = 0; i < row.size(); ++i) series[i].gbs.push_back(row[i]);
  }
  std::printf("%12s", "elements");
  for (const Series& s : series) std::printf(" %14s", s.name.c_str());
  std::printf("   (GB/s)\n");
  for (size_t j = 0; j < sizes.size(); ++j) {
    std::printf("%12lld", static_cast<long long>(sizes[j]));
    for (const Series& s : series) std::printf(" %14.2f", s.gbs[j]);
    std::printf("\n");
  }
#ifdef TESSERA_BENCH_HAVE_TORCH
  std::printf("\nratio tessera / torch (time_torch / time_tessera, > 1: tessera faster)\n%12s", "elements");
  for (size_t k = 0; k < 4; ++k) std::printf(" %14s", series[k].name.c_str());
  std::printf("\n");
  for (size_t j = 0; j < sizes.size(); ++j) {
    std::printf("%12lld", static_cast<long long>(sizes[j]));
    for (size_t k = 0; k < 4; ++k) std::printf(" %14.2f", series[k].gbs[j] / series[k + 4].gbs[j]);
    std::printf("\n");
  }
#endif
  std::printf("load average after: %s\n", loadavg().c_str());
  if (!o.svg.empty()) {
    write_svg(o.svg, sizes, series);
    std::printf("wrote %s\n", o.svg.c_str());
  }
  return 0;
}

}  // namespace bench
