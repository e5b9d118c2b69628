// tessera_ops_bench: the operator library's and autograd's headline numbers, each beside the same
// work in libtorch measured in the same run when built with -DTESSERA_BENCH_LIBTORCH=ON (Debian's
// libtorch-dev), else beside the memory bandwidth of a memcpy in the same run.
//
//   softmax        softmax over the last dim of [4096, 1024] f32 (ms; GB/s counting read+write,
//                  against a memcpy of the same 16 MiB on the same threads)
//   layer_norm     layer_norm over the last dim of [4096, 1024] f32 with weight and bias
//   cross_entropy  mean cross entropy of [4096, 1000] f32 logits with int64 class targets
//   sum            sum of 1e5 f32 (in cache: per-call overhead plus the reduction loop), us
//   amax           amax over the last dim of [4096, 1024] f32 (a NaN-propagating max per row), ms
//   conv2d         8x64x56x56 input, 64 3x3 filters, padding 1, with bias (f32)
//   conv2d_train   the same conv2d forward and backward into input, weight and bias
//   rg_add         add of two 1-element f32 tensors that require grad (graph recorded), ns/op
//   backward_100   backward() through 100 chained adds of 1-element tensors, µs per backward
//   mlp_step       784-512-512-10 MLP (relu) train step at batch 128: forward, cross entropy,
//                  backward, SGD update of every parameter, ms per step
//   cat            cat of 8 and of 32 [64, 256] f32 tensors along dim 0, µs per call
//   lstm           one-layer LSTM 128->256 over T=32 steps, batch 32: forward + backward, ms
//   cnn            two conv+relu+maxpool blocks and a linear head on 32 images of 3x32x32,
//                  cross entropy: forward + backward, ms per step
//
// Every number is the median of several repetitions after warm-up. Ratios are libtorch's time
// divided by Tessera's (above 1: Tessera is faster). The machines are shared and noisy: compare
// within one run only.
//
//   tessera_ops_bench [--json] [--quick] [--threads N] [--only NAME]
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/nn.hpp"
#include "tessera/tessera.hpp"

#ifdef TESSERA_BENCH_HAVE_TORCH
#include <torch/torch.h>
#endif

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n == 0 ? 0 : n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Median seconds per call of fn, `inner` calls per timed repetition.
double time_it(const std::function<void()>& fn, int reps, int inner = 1, int warmup = 2) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    auto t0 = Clock::now();
    for (int i = 0; i < inner; ++i) fn();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / inner);
  }
  return median(t);
}

struct Row {
  Row(std::string n, std::string u) : name(std::move(n)), unit(std::move(u)) {}
  std::string name;
  std::string unit;
  double tessera = -1;  // in `unit`; <0: not measured (message says why)
  double baseline = -1;
  std::string baseline_name;
  std::string note;
};

tsr::Tensor randn(std::vector<int64_t> s) { return tsr::randn(std::move(s), TSR_F32); }

// The ops the bench needs may come from families a given build lacks: report, do not abort.
template <class F>
double guarded(Row& row, F&& f) {
  try {
    return f();
  } catch (const std::exception& e) {
    row.note = std::string("tessera failed: ") + e.what();
    return -1;
  }
}

tsr::Tensor linear(const tsr::Tensor& x, const tsr::Tensor& w, const tsr::Tensor& b) {
  static const tsr::Op op("linear");
  return tsr::call(op, {x, w, b});
}

struct Options {
  bool json = false;
  bool quick = false;
  int threads = 0;
  std::string only;
};

bool wanted(const Options& o, const char* name) { return o.only.empty() || o.only == name; }

// GB/s of a memcpy of `bytes` split over the OpenMP threads (read + write counted): the
// machine's bandwidth for softmax's figure, measured in the same run.
double memcpy_gbs(size_t bytes, int reps) {
  std::vector<char> src(bytes, 1), dst(bytes);
  const double s = time_it(
      [&] {
#pragma omp parallel
        {
          const size_t nt = size_t(omp_get_num_threads()), t = size_t(omp_get_thread_num());
          const size_t chunk = (bytes / nt + 4095) / 4096 * 4096, b = std::min(bytes, chunk * t),
                       e = std::min(bytes, b + chunk);
          if (b < e) std::memcpy(dst.data() + b, src.data() + b, e - b);
        }
      },
      reps);
  return 2.0 * double(bytes) / s / 1e9;
}

void bench_softmax(const Options& o, std::vector<Row>& rows) {
  Row r{"softmax [4096,1024] f32", "ms"};
  int reps = o.quick ? 5 : 20;
  r.tessera = guarded(r, [&] {
    tsr::Tensor x = randn({4096, 1024});
    return 1e3 * time_it([&] { tsr::softmax(x, -1); }, reps);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::Tensor tx = torch::randn({4096, 1024});
  r.baseline = 1e3 * time_it([&] { torch::softmax(tx, -1); }, reps);
  r.baseline_name = "libtorch";
#endif
  if (r.tessera > 0) {
    const double gbs = 2.0 * 4096 * 1024 * 4 / (r.tessera * 1e-3) / 1e9, mem = memcpy_gbs(size_t(4096) * 1024 * 4, reps);
    char note[96];
    std::snprintf(note, sizeof note, "%.1f GB/s = %.0f%% of memcpy (%.1f GB/s)", gbs, 100 * gbs / mem, mem);
    r.note = note;
  }
  rows.push_back(r);
}

void bench_layer_norm(const Options& o, std::vector<Row>& rows) {
  Row r{"layer_norm [4096,1024] f32", "ms"};
  int reps = o.quick ? 5 : 20;
  r.tessera = guarded(r, [&] {
    tsr::Tensor x = randn({4096, 1024}), w = randn({1024}), b = randn({1024});
    static const tsr::Op op("layer_norm");
    return 1e3 * time_it([&] { tsr::call(op, {x, std::vector<int64_t>{1024}, w, b}); }, reps);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::Tensor tx = torch::randn({4096, 1024}), tw = torch::randn({1024}), tb = torch::randn({1024});
  r.baseline = 1e3 * time_it([&] { torch::layer_norm(tx, {1024}, tw, tb); }, reps);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

void bench_sum(const Options& o, std::vector<Row>& rows) {
  Row r{"sum [100000] f32 (in cache)", "us"};
  int reps = o.quick ? 5 : 20;
  r.tessera = guarded(r, [&] {
    tsr::Tensor x = randn({100000});
    return 1e6 * time_it([&] { tsr::sum(x); }, reps, 100);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::Tensor tx = torch::randn({100000});
  r.baseline = 1e6 * time_it([&] { torch::sum(tx); }, reps, 100);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

void bench_amax(const Options& o, std::vector<Row>& rows) {
  Row r{"amax [4096,1024] f32, dim 1", "ms"};
  int reps = o.quick ? 5 : 20;
  r.tessera = guarded(r, [&] {
    tsr::Tensor x = randn({4096, 1024});
    return 1e3 * time_it([&] { tsr::amax(x, {1}); }, reps);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::Tensor tx = torch::randn({4096, 1024});
  r.baseline = 1e3 * time_it([&] { torch::amax(tx, {1}); }, reps);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

void bench_cross_entropy(const Options& o, std::vector<Row>& rows) {
  Row r{"cross_entropy [4096,1000] f32", "ms"};
  int reps = o.quick ? 5 : 20;
  r.tessera = guarded(r, [&] {
    tsr::Tensor x = randn({4096, 1000});
    tsr::Tensor t = tsr::call("randint", {int64_t{0}, int64_t{1000}, std::vector<int64_t>{4096}});
    static const tsr::Op op("cross_entropy");
    return 1e3 * time_it([&] { tsr::call(op, {x, t}); }, reps);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::Tensor tx = torch::randn({4096, 1000});
  torch::Tensor tt = torch::randint(0, 1000, {4096}, torch::kLong);
  r.baseline = 1e3 * time_it([&] { torch::nn::functional::cross_entropy(tx, tt); }, reps);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

void bench_conv2d(const Options& o, std::vector<Row>& rows) {
  Row r{"conv2d 8x64x56x56 3x3 pad1", "ms"};
  int reps = o.quick ? 3 : 10;
  r.tessera = guarded(r, [&] {
    tsr::Tensor x = randn({8, 64, 56, 56}), w = randn({64, 64, 3, 3}), b = randn({64});
    static const tsr::Op op("conv2d");
    return 1e3 * time_it(
                     [&] {
                       tsr::call(op, {x, w, b, std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1}});
                     },
                     reps);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::Tensor tx = torch::randn({8, 64, 56, 56}), tw = torch::randn({64, 64, 3, 3}), tb = torch::randn({64});
  r.baseline = 1e3 * time_it([&] { torch::conv2d(tx, tw, tb, 1, 1); }, reps);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

// One training step's convolution work: conv2d forward, then backward into input, weight and
// bias (the gradients accumulate across repetitions, as without zero_grad).
void bench_conv2d_train(const Options& o, std::vector<Row>& rows) {
  Row r{"conv2d fwd+bwd 8x64x56x56 3x3", "ms"};
  int reps = o.quick ? 3 : 10;
  r.tessera = guarded(r, [&] {
    tsr::Tensor x = randn({8, 64, 56, 56}).requires_grad_(), w = randn({64, 64, 3, 3}).requires_grad_(),
                b = randn({64}).requires_grad_(), gy = randn({8, 64, 56, 56});
    static const tsr::Op op("conv2d");
    return 1e3 * time_it(
                     [&] {
                       tsr::Tensor y = tsr::call(op, {x, w, b, std::vector<int64_t>{1, 1}, std::vector<int64_t>{1, 1}});
                       y.backward(gy);
                     },
                     reps);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::Tensor tx = torch::randn({8, 64, 56, 56}).requires_grad_(), tw = torch::randn({64, 64, 3, 3}).requires_grad_(),
                tb = torch::randn({64}).requires_grad_(), tgy = torch::randn({8, 64, 56, 56});
  r.baseline = 1e3 * time_it([&] { torch::conv2d(tx, tw, tb, 1, 1).backward(tgy); }, reps);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

void bench_rg_add(const Options& o, std::vector<Row>& rows) {
  Row r{"requires_grad add, 1 element", "ns"};
  int reps = o.quick ? 5 : 15, inner = 20000;
  r.tessera = guarded(r, [&] {
    tsr::Tensor a = randn({1}).requires_grad_(), b = randn({1}).requires_grad_();
    return 1e9 * time_it([&] { tsr::add(a, b); }, reps, inner);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::Tensor ta = torch::randn({1}).requires_grad_(), tb = torch::randn({1}).requires_grad_();
  r.baseline = 1e9 * time_it([&] { torch::add(ta, tb); }, reps, inner);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

void bench_backward_chain(const Options& o, std::vector<Row>& rows) {
  Row r{"backward through 100 adds", "us"};
  int reps = o.quick ? 5 : 15, inner = 200;
  // Only the backward is timed: the graph is built outside the timed region each time.
  r.tessera = guarded(r, [&] {
    tsr::Tensor a = randn({1}).requires_grad_(), b = randn({1});
    std::vector<double> t;
    for (int rep = 0; rep < reps + 2; ++rep) {
      double total = 0;
      for (int i = 0; i < inner; ++i) {
        tsr::Tensor y = a;
        for (int k = 0; k < 100; ++k) y = tsr::add(y, b);
        auto t0 = Clock::now();
        y.backward();
        total += std::chrono::duration<double>(Clock::now() - t0).count();
      }
      if (rep >= 2) t.push_back(total / inner);
    }
    return 1e6 * median(t);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::Tensor ta = torch::randn({1}).requires_grad_(), tb = torch::randn({1});
  std::vector<double> t;
  for (int rep = 0; rep < reps + 2; ++rep) {
    double total = 0;
    for (int i = 0; i < inner; ++i) {
      torch::Tensor y = ta;
      for (int k = 0; k < 100; ++k) y = torch::add(y, tb);
      auto t0 = Clock::now();
      y.backward();
      total += std::chrono::duration<double>(Clock::now() - t0).count();
    }
    if (rep >= 2) t.push_back(total / inner);
  }
  r.baseline = 1e6 * median(t);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

void bench_mlp(const Options& o, std::vector<Row>& rows) {
  Row r{"MLP 784-512-512-10 step, batch 128", "ms"};
  int reps = o.quick ? 5 : 20;
  const double lr = 0.01;
  r.tessera = guarded(r, [&] {
    std::vector<int64_t> dims{784, 512, 512, 10};
    std::vector<tsr::Tensor> params;
    for (size_t i = 0; i + 1 < dims.size(); ++i) {
      params.push_back((randn({dims[i + 1], dims[i]}) * 0.05).requires_grad_());
      params.push_back((randn({dims[i + 1]}) * 0.05).requires_grad_());
    }
    tsr::Tensor x = randn({128, 784});
    tsr::Tensor y = tsr::call("randint", {int64_t{0}, int64_t{10}, std::vector<int64_t>{128}});
    static const tsr::Op ce("cross_entropy");
    return 1e3 * time_it(
                     [&] {
                       tsr::Tensor h = x;
                       for (size_t l = 0; l < 3; ++l) {
                         h = linear(h, params[2 * l], params[2 * l + 1]);
                         if (l < 2) h = tsr::relu(h);
                       }
                       tsr::Tensor loss = tsr::call(ce, {h, y});
                       loss.backward();
                       tsr::NoGradGuard ng;
                       for (tsr::Tensor& p : params) {
                         p.copy_(p - p.grad() * lr);
                         p.set_grad(tsr::Tensor());
                       }
                     },
                     reps);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::nn::Sequential net(torch::nn::Linear(784, 512), torch::nn::ReLU(), torch::nn::Linear(512, 512),
                            torch::nn::ReLU(), torch::nn::Linear(512, 10));
  torch::Tensor tx = torch::randn({128, 784});
  torch::Tensor ty = torch::randint(0, 10, {128}, torch::kLong);
  r.baseline = 1e3 * time_it(
                         [&] {
                           torch::Tensor loss = torch::nn::functional::cross_entropy(net->forward(tx), ty);
                           loss.backward();
                           torch::NoGradGuard ng;
                           for (torch::Tensor& p : net->parameters()) {
                             p.copy_(p - p.grad() * lr);
                             p.mutable_grad() = torch::Tensor();
                           }
                         },
                         reps);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

// cat of `n` [64, 256] f32 tensors along dim 0 (one output of n x 64 rows), µs per call.
void bench_cat(const Options& o, std::vector<Row>& rows, int n) {
  Row r{"cat of " + std::to_string(n) + " x [64,256] f32", "us"};
  int reps = o.quick ? 5 : 15, inner = 200;
  r.tessera = guarded(r, [&] {
    std::vector<tsr::Tensor> ts;
    for (int i = 0; i < n; ++i) ts.push_back(randn({64, 256}));
    return 1e6 * time_it([&] { tsr::cat(ts, 0); }, reps, inner);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  std::vector<torch::Tensor> tts;
  for (int i = 0; i < n; ++i) tts.push_back(torch::randn({64, 256}));
  r.baseline = 1e6 * time_it([&] { torch::cat(tts, 0); }, reps, inner);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

// One-layer LSTM (input 128, hidden 256) over T=32 steps of a batch of 32: forward, sum of the
// outputs, backward into every weight, ms per step.
void bench_lstm(const Options& o, std::vector<Row>& rows) {
  Row r{"LSTM 128->256, T=32 N=32, fwd+bwd", "ms"};
  int reps = o.quick ? 3 : 10;
  r.tessera = guarded(r, [&] {
    tsr::nn::LSTM lstm(128, 256);
    tsr::Tensor x = randn({32, 32, 128});
    return 1e3 * time_it(
                     [&] {
                       tsr::sum(lstm.forward(x)).backward();
                       lstm.zero_grad();
                     },
                     reps);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::nn::LSTM tl(torch::nn::LSTMOptions(128, 256));
  torch::Tensor tx = torch::randn({32, 32, 128});
  r.baseline = 1e3 * time_it(
                         [&] {
                           std::get<0>(tl->forward(tx)).sum().backward();
                           tl->zero_grad();
                         },
                         reps);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

// A small CNN on 32 images of 3x32x32: conv 3->32 3x3 pad 1, relu, 2x2 max pool, conv 32->64,
// relu, max pool, linear 4096->10, cross entropy; forward + backward, ms per step.
void bench_cnn(const Options& o, std::vector<Row>& rows) {
  Row r{"small CNN 3x32x32 batch 32, fwd+bwd", "ms"};
  int reps = o.quick ? 3 : 10;
  r.tessera = guarded(r, [&] {
    tsr::nn::Conv2d c1(3, 32, {3, 3}, {1}, {1}), c2(32, 64, {3, 3}, {1}, {1});
    tsr::nn::Linear fc(64 * 8 * 8, 10);
    tsr::Tensor x = randn({32, 3, 32, 32});
    tsr::Tensor y = tsr::call("randint", {int64_t{0}, int64_t{10}, std::vector<int64_t>{32}});
    return 1e3 * time_it(
                     [&] {
                       tsr::Tensor h = tsr::nn::max_pool2d(tsr::relu(c1.forward(x)), {2, 2});
                       h = tsr::nn::max_pool2d(tsr::relu(c2.forward(h)), {2, 2});
                       tsr::nn::cross_entropy(fc.forward(tsr::flatten(h, 1)), y).backward();
                       c1.zero_grad();
                       c2.zero_grad();
                       fc.zero_grad();
                     },
                     reps);
  });
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::nn::Conv2d t1(torch::nn::Conv2dOptions(3, 32, 3).padding(1)), t2(torch::nn::Conv2dOptions(32, 64, 3).padding(1));
  torch::nn::Linear tf(64 * 8 * 8, 10);
  torch::Tensor tx = torch::randn({32, 3, 32, 32});
  torch::Tensor ty = torch::randint(0, 10, {32}, torch::kLong);
  r.baseline = 1e3 * time_it(
                         [&] {
                           torch::Tensor h = torch::max_pool2d(torch::relu(t1->forward(tx)), 2);
                           h = torch::max_pool2d(torch::relu(t2->forward(h)), 2);
                           torch::nn::functional::cross_entropy(tf->forward(h.flatten(1)), ty).backward();
                           t1->zero_grad();
                           t2->zero_grad();
                           tf->zero_grad();
                         },
                         reps);
  r.baseline_name = "libtorch";
#endif
  rows.push_back(r);
}

void print(const Options& o, const std::vector<Row>& rows, int threads) {
  if (o.json) {
    std::printf("{\"threads\": %d, \"results\": [\n", threads);
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::printf(
          "  {\"name\": \"%s\", \"unit\": \"%s\", \"tessera\": %.6g, \"baseline\": %.6g, \"baseline_name\": \"%s\", "
          "\"note\": \"%s\"}%s\n",
          r.name.c_str(), r.unit.c_str(), r.tessera, r.baseline, r.baseline_name.c_str(), r.note.c_str(),
          i + 1 < rows.size() ? "," : "");
    }
    std::printf("]}\n");
    return;
  }
  std::printf("tessera_ops_bench: %d threads; ratio = baseline time / tessera time (>1: tessera faster)\n", threads);
  std::printf("%-38s %12s %12s %8s  %s\n", "benchmark", "tessera", "libtorch", "ratio", "note");
  for (const Row& r : rows) {
    char t[32] = "n/a", b[32] = "n/a", q[16] = "n/a";
    if (r.tessera > 0) std::snprintf(t, sizeof t, "%.3f %s", r.tessera, r.unit.c_str());
    if (r.baseline > 0) std::snprintf(b, sizeof b, "%.3f %s", r.baseline, r.unit.c_str());
    if (r.tessera > 0 && r.baseline > 0) std::snprintf(q, sizeof q, "%.2fx", r.baseline / r.tessera);
    std::printf("%-38s %12s %12s %8s  %s\n", r.name.c_str(), t, b, q, r.note.c_str());
  }
#ifndef TESSERA_BENCH_HAVE_TORCH
  std::printf("(libtorch columns need -DTESSERA_BENCH_LIBTORCH=ON with Debian's libtorch-dev installed)\n");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--json")
      o.json = true;
    else if (a == "--quick")
      o.quick = true;
    else if (a == "--threads" && i + 1 < argc)
      o.threads = std::atoi(argv[++i]);
    else if (a == "--only" && i + 1 < argc)
      o.only = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: tessera_ops_bench [--json] [--quick] [--threads N] "
                   "[--only softmax|layer_norm|cross_entropy|sum|amax|conv2d|conv2d_train|rg_add|backward_100|mlp_step|cat|lstm|cnn]\n");
      return 2;
    }
  }
  // One thread count for both libraries (both use OpenMP pools).
  if (o.threads > 0) omp_set_num_threads(o.threads);
  int threads = o.threads > 0 ? o.threads : omp_get_max_threads();
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::set_num_threads(threads);
  torch::manual_seed(0);
#endif
  std::vector<Row> rows;
  if (wanted(o, "softmax")) bench_softmax(o, rows);
  if (wanted(o, "layer_norm")) bench_layer_norm(o, rows);
  if (wanted(o, "cross_entropy")) bench_cross_entropy(o, rows);
  if (wanted(o, "sum")) bench_sum(o, rows);
  if (wanted(o, "amax")) bench_amax(o, rows);
  if (wanted(o, "conv2d")) bench_conv2d(o, rows);
  if (wanted(o, "conv2d_train")) bench_conv2d_train(o, rows);
  if (wanted(o, "rg_add")) bench_rg_add(o, rows);
  if (wanted(o, "backward_100")) bench_backward_chain(o, rows);
  if (wanted(o, "mlp_step")) bench_mlp(o, rows);
  if (wanted(o, "cat")) {
    bench_cat(o, rows, 8);
    bench_cat(o, rows, 32);
  }
  if (wanted(o, "lstm")) bench_lstm(o, rows);
  if (wanted(o, "cnn")) bench_cnn(o, rows);
  print(o, rows, threads);
  return 0;
}
