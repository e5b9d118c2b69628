// tessera_gpt_bench: training throughput (tokens/s) of the GPT that `tessera train` trains by
// default (tools/train's model on a batch of its addition task, the trainer's configuration), in
// Tessera and, when built with -DTESSERA_BENCH_LIBTORCH=ON (Debian's libtorch-dev), the same
// model written against libtorch's C++ frontend, in one run, at 1 and 2 threads.
//
// One training step = forward, cross entropy, zero_grad, backward, clip_grad_norm_(1.0), AdamW
// step: what the trainer does per step, minus data loading (one fixed batch) and the lr
// schedule. Both sides start from the same weights (the libtorch model copies Tessera's initial
// parameters by name) and the first and last losses are printed side by side, so a mismatch in
// the model or the optimizer shows up as differing losses.
//
// Each row: `--warmup` steps, then `--windows` timed windows of `--steps` steps, the two
// libraries' windows alternating; the median window gives the time per step. ratio = libtorch
// time / Tessera time (above 1: Tessera is faster). Both libraries run on the same OpenMP
// runtime and the same OpenBLAS (Debian's openblas-openmp); the thread count is set for both
// (omp_set_num_threads drives Tessera's CPU backend and OpenBLAS, at::set_num_threads libtorch's
// intra-op pool).
//
//   tessera_gpt_bench [--threads 1,2] [--warmup N] [--steps N] [--windows N] [--batch N]
//                     [--layers N] [--embd N] [--heads N] [--digits N] [--json]
//                     [--only tessera|libtorch] [--clock wall|cpu] [--stat median|min]
//
// On a shared machine with more runnable threads than cores, OpenMP's spin-waiting makes
// multi-threaded timings of both libraries meaningless: run with OMP_WAIT_POLICY=passive there
// (and --clock cpu for 1-thread comparisons).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gpt_bench_model.hpp"

#ifdef TESSERA_BENCH_HAVE_TORCH
#include "gpt_bench_torch.hpp"
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<int> threads{1, 2};
  int warmup = 3, steps = 5, windows = 5;
  bool json = false;
  bool cpu_clock = false;                     // --clock cpu: process CPU time instead of wall time
  bool use_min = false;                       // --stat min: the fastest window instead of the median
  bool run_tessera = true, run_torch = true;  // --only tessera|libtorch (for profiling one side)
  gpt_bench::Config cfg = gpt_bench::default_config();
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Seconds on the chosen clock. Process CPU time is robust to other processes taking the cores
// (useful at 1 thread on a loaded machine); at several threads it also counts OpenMP spinning.
double now(const Options& o) {
  if (o.cpu_clock) return double(std::clock()) / CLOCKS_PER_SEC;
  return std::chrono::duration<double>(Clock::now().time_since_epoch()).count();
}

// A side being timed: its step (returning the loss) and what was measured.
struct Side {
  std::function<double()> step;
  std::vector<double> window_s;  // seconds per step, one entry per window
  double loss0 = NAN, loss_end = NAN;
};

// Windows of the sides alternate (A, B, A, B, ...) so that both see the same background load
// on a shared machine; each side's median window gives its time per step.
void time_interleaved(std::vector<Side*> sides, const Options& o) {
  for (Side* s : sides) {
    s->loss0 = s->step();
    for (int i = 0; i < o.warmup; ++i) s->loss_end = s->step();
  }
  for (int r = 0; r < o.windows; ++r) {
    for (Side* s : sides) {
      double t0 = now(o);
      for (int i = 0; i < o.steps; ++i) s->loss_end = s->step();
      s->window_s.push_back((now(o) - t0) / o.steps);
    }
  }
}

std::vector<int> parse_list(const std::string& s) {
  std::vector<int> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) v.push_back(std::atoi(item.c_str()));
  return v;
}

struct Row {
  int threads = 0;
  double tessera_s = -1, torch_s = -1;
  double tessera_loss0 = NAN, torch_loss0 = NAN;
  double tessera_loss_end = NAN, torch_loss_end = NAN;  // after the same number of steps
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "tessera_gpt_bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--threads")
      o.threads = parse_list(next());
    else if (a == "--warmup")
      o.warmup = std::atoi(next());
    else if (a == "--steps")
      o.steps = std::atoi(next());
    else if (a == "--windows")
      o.windows = std::atoi(next());
    else if (a == "--batch")
      o.cfg.batch = std::atoi(next());
    else if (a == "--layers")
      o.cfg.n_layer = std::atoi(next());
    else if (a == "--embd")
      o.cfg.n_embd = std::atoi(next());
    else if (a == "--heads")
      o.cfg.n_head = std::atoi(next());
    else if (a == "--digits")
      o.cfg.digits = std::atoi(next());
    else if (a == "--json")
      o.json = true;
    else if (a == "--clock")
      o.cpu_clock = std::string(next()) == "cpu";
    else if (a == "--stat")
      o.use_min = std::string(next()) == "min";
    else if (a == "--only") {
      std::string w = next();
      o.run_tessera = w == "tessera";
      o.run_torch = w == "libtorch";
    } else {
      std::fprintf(stderr,
                   "usage: tessera_gpt_bench [--threads 1,2] [--warmup N] [--steps N] [--windows N] [--batch N]\n"
                   "                         [--layers N] [--embd N] [--heads N] [--digits N] [--json]\n"
                   "                         [--only tessera|libtorch] [--clock wall|cpu]\n"
                   "                         [--stat median|min]\n");
      return 2;
    }
  }
  if (o.threads.empty() || o.steps < 1 || o.windows < 1 || o.cfg.n_embd % o.cfg.n_head != 0) {
    std::fprintf(stderr,
                 "tessera_gpt_bench: bad options (threads list empty, steps/windows < 1, or embd %% heads != 0)\n");
    return 2;
  }
  const gpt_bench::Config& c = o.cfg;
  double tokens = 0;

  std::vector<Row> rows;
  try {
    gpt_bench::resolve(o.cfg);
    tokens = double(c.batch) * c.block_size;
    for (int nt : o.threads) {
      Row r;
      r.threads = nt;
      omp_set_num_threads(nt);
#ifdef TESSERA_BENCH_HAVE_TORCH
      torch::set_num_threads(nt);
#endif
      // Fresh models per row: every row starts from the same state (seed 0).
      std::vector<Side*> sides;
      std::unique_ptr<gpt_bench::TesseraTrainer> tt;
      Side ts, ls;
      if (o.run_tessera) {
        tt = std::make_unique<gpt_bench::TesseraTrainer>(c, /*seed=*/0);
        ts.step = [&] { return tt->step(); };
        sides.push_back(&ts);
      }
#ifdef TESSERA_BENCH_HAVE_TORCH
      std::unique_ptr<gpt_bench::TorchTrainer> tr;
      if (o.run_torch) {
        gpt_bench::TesseraTrainer init(c, /*seed=*/0);
        tr = std::make_unique<gpt_bench::TorchTrainer>(c, init.initial_parameters(), init.batch_tokens());
        ls.step = [&] { return tr->step(); };
        sides.push_back(&ls);
      }
#endif
      time_interleaved(sides, o);
      auto stat = [&](const std::vector<double>& w) {
        return o.use_min ? *std::min_element(w.begin(), w.end()) : median(w);
      };
      if (o.run_tessera) r.tessera_s = stat(ts.window_s), r.tessera_loss0 = ts.loss0, r.tessera_loss_end = ts.loss_end;
      if (!ls.window_s.empty()) r.torch_s = stat(ls.window_s), r.torch_loss0 = ls.loss0, r.torch_loss_end = ls.loss_end;
      rows.push_back(r);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tessera_gpt_bench: %s\n", e.what());
    return 1;
  }

  if (o.json) {
    std::printf("{\"config\": \"%s\", \"tokens_per_step\": %.0f, \"rows\": [\n", gpt_bench::describe(c).c_str(),
                tokens);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf(
          "  {\"threads\": %d, \"tessera_ms\": %.4f, \"libtorch_ms\": %.4f, \"tessera_tok_s\": %.1f, "
          "\"libtorch_tok_s\": %.1f, \"tessera_loss0\": %.6f, \"libtorch_loss0\": %.6f, "
          "\"tessera_loss_end\": %.6f, \"libtorch_loss_end\": %.6f}%s\n",
          r.threads, 1e3 * r.tessera_s, 1e3 * r.torch_s, tokens / r.tessera_s,
          r.torch_s > 0 ? tokens / r.torch_s : -1.0, r.tessera_loss0, r.torch_loss0, r.tessera_loss_end,
          r.torch_loss_end, i + 1 < rows.size() ? "," : "");
    }
    std::printf("]}\n");
    return 0;
  }
  std::printf("tessera_gpt_bench: %s\n", gpt_bench::describe(c).c_str());
  std::printf(
      "train step = forward + cross entropy + backward + clip_grad_norm + AdamW; %s of %d windows "
      "of %d steps after %d warmup (%s time)\n",
      o.use_min ? "fastest" : "median", o.windows, o.steps, o.warmup, o.cpu_clock ? "process CPU" : "wall");
  std::printf("%7s %12s %12s %14s %14s %8s   %s\n", "threads", "tessera ms", "libtorch ms", "tessera tok/s",
              "libtorch tok/s", "ratio", "loss first, last (tessera / libtorch)");
  for (const Row& r : rows) {
    char sm[32] = "n/a", sk[32] = "n/a", tm[32] = "n/a", tk[32] = "n/a", q[16] = "n/a", loss[96];
    if (r.tessera_s > 0) {
      std::snprintf(sm, sizeof sm, "%.2f", 1e3 * r.tessera_s);
      std::snprintf(sk, sizeof sk, "%.0f", tokens / r.tessera_s);
    }
    if (r.torch_s > 0) {
      std::snprintf(tm, sizeof tm, "%.2f", 1e3 * r.torch_s);
      std::snprintf(tk, sizeof tk, "%.0f", tokens / r.torch_s);
    }
    if (r.tessera_s > 0 && r.torch_s > 0) std::snprintf(q, sizeof q, "%.2fx", r.torch_s / r.tessera_s);
    std::snprintf(loss, sizeof loss, "%.5f / %.5f, %.5f / %.5f", r.tessera_loss0, r.torch_loss0, r.tessera_loss_end,
                  r.torch_loss_end);
    std::printf("%7d %12s %12s %14s %14s %8s   %s\n", r.threads, sm, tm, sk, tk, q, loss);
  }
#ifndef TESSERA_BENCH_HAVE_TORCH
  std::printf("(libtorch columns need -DTESSERA_BENCH_LIBTORCH=ON with Debian's libtorch-dev installed)\n");
#endif
  return 0;
}
