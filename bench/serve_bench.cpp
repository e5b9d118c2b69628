// tessera_serve_bench: per-call inference latency of models served from a saved graph (tsr::jit:
// the runner) against the same models called eagerly through the SDK, and against libtorch eager
// (when built with TESSERA_BENCH_LIBTORCH) with the same weights, in the same run. The runner's
// target is an overhead per node no larger than eager dispatch's.
//
//   tessera_serve_bench [--rounds R] [--calls N]
//
// Models: an MLP 784-512-512-10 (batch 1 and 64) and `tessera train`'s GPT (2 layers x 4 heads x
// 64, 11 positions; batch 1 and 16), each traced with a dynamic batch (and length for the GPT).
// Each figure is the median over R rounds of the mean of N calls; the variants run interleaved
// within a round so that load on a shared machine hits them alike.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "gpt.hpp"
#include "tessera/jit.hpp"
#include "tessera/nn.hpp"
#include "tessera/tessera.hpp"

#ifdef TESSERA_BENCH_HAVE_TORCH
#include <torch/torch.h>

#include "gpt_bench_torch.hpp"
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Variant {
  std::string name;
  std::function<void()> call;
  std::vector<double> us = {};  // per round: mean microseconds per call
  Variant(std::string n, std::function<void()> c) : name(std::move(n)), call(std::move(c)) {}
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

void measure(std::vector<Variant>& vs, int rounds, int calls) {
  for (Variant& v : vs)
    for (int i = 0; i < 10; ++i) v.call();  // warm-up: allocator caches, lazy lookups
  for (int r = 0; r < rounds; ++r)
    for (Variant& v : vs) {
      auto t0 = Clock::now();
      for (int i = 0; i < calls; ++i) v.call();
      v.us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / calls);
    }
}

void report(const std::string& title, std::vector<Variant>& vs, int64_t nodes) {
  std::printf("\n%s\n", title.c_str());
  double runner = 0, eager = 0;
  for (const Variant& v : vs) {
    if (v.name == "runner") runner = median(v.us);
    if (v.name == "eager SDK") eager = median(v.us);
  }
  for (const Variant& v : vs) {
    double m = median(v.us);
    std::printf("  %-14s %10.2f us/call", v.name.c_str(), m);
    if (v.name == "runner" && nodes > 0) std::printf("   (%lld nodes, %.2f us/node)", (long long)nodes, m / nodes);
    if (v.name != "runner" && runner > 0) std::printf("   runner is %.2fx faster", m / runner);
    std::printf("\n");
  }
  if (eager > 0 && runner > 0 && nodes > 0)
    std::printf("  per-node overhead beyond eager: %+.3f us/node\n", (runner - eager) / static_cast<double>(nodes));
}

int64_t count_nodes(const tsr::jit::Model& m) {
  tsr::jit::RunStats s;
  std::vector<tsr::Tensor> in;
  for (const tsr::jit::IoInfo& io : m.inputs()) {
    std::vector<int64_t> sizes;
    for (int64_t d : io.sizes) sizes.push_back(d < 0 ? 3 : d);
    in.push_back(io.dtype == TSR_I64 ? tsr::zeros(sizes, TSR_I64) : tsr::randn(sizes, io.dtype));
  }
  m.run(in, &s);
  return s.nodes;
}

void bench_mlp(int rounds, int calls) {
  tsr::manual_seed(1);
  auto net = std::make_shared<tsr::nn::Sequential>(std::make_shared<tsr::nn::Linear>(784, 512), std::make_shared<tsr::nn::ReLU>(),
                                                   std::make_shared<tsr::nn::Linear>(512, 512), std::make_shared<tsr::nn::ReLU>(),
                                                   std::make_shared<tsr::nn::Linear>(512, 10));
  net->eval();
  tsr::jit::TraceOptions opts;
  opts.dynamic = {{0, 0, "B"}};
  tsr::jit::Model model = tsr::jit::trace(*net, {tsr::randn({4, 784})}, opts);
  int64_t nodes = count_nodes(model);
#ifdef TESSERA_BENCH_HAVE_TORCH
  torch::nn::Sequential tnet(torch::nn::Linear(784, 512), torch::nn::ReLU(), torch::nn::Linear(512, 512),
                             torch::nn::ReLU(), torch::nn::Linear(512, 10));
  {
    torch::NoGradGuard ng;
    auto named = tnet->named_parameters();
    for (auto& [name, t] : net->named_parameters()) {
      std::vector<float> v = t.to_vector<float>();
      named[name].copy_(torch::from_blob(v.data(), named[name].sizes(), torch::kFloat));
    }
  }
#endif
  for (int64_t batch : {1, 64}) {
    tsr::Tensor x = tsr::randn({batch, 784});
    double diff = tsr::amax(tsr::abs(model(x) - [&] {
                    tsr::NoGradGuard ng;
                    return net->forward(x);
                  }()))
                      .item<double>();
    std::vector<Variant> vs;
    vs.push_back({"eager SDK", [&] {
                    tsr::NoGradGuard ng;
                    tsr::Tensor y = net->forward(x);
                  }});
    vs.push_back({"runner", [&] { std::vector<tsr::Tensor> y = model.run({x}); }});
#ifdef TESSERA_BENCH_HAVE_TORCH
    std::vector<float> xv = x.to_vector<float>();
    torch::Tensor tx = torch::from_blob(xv.data(), {batch, 784}, torch::kFloat).clone();
    vs.push_back({"libtorch eager", [&] {
                    torch::NoGradGuard ng;
                    torch::Tensor y = tnet->forward(tx);
                  }});
#endif
    measure(vs, rounds, calls);
    report("MLP 784-512-512-10, batch " + std::to_string(batch) + " (runner vs eager max |diff| " + std::to_string(diff) + ")",
           vs, nodes);
  }
}

void bench_gpt(int rounds, int calls) {
  tsr::manual_seed(2);
  tessera_train::GPTConfig cfg;
  cfg.vocab_size = 12;
  cfg.block_size = 11;
  tessera_train::GPT gpt(cfg);
  gpt.eval();
  tsr::jit::TraceOptions opts;
  opts.dynamic = {{0, 0, "B"}, {0, 1, "T"}};
  tsr::jit::Model model = tsr::jit::trace(gpt, {tsr::zeros({3, 11}, TSR_I64)}, opts);
  model.optimize("all");
  int64_t nodes = count_nodes(model);
#ifdef TESSERA_BENCH_HAVE_TORCH
  gpt_bench::Config tc;
  tc.vocab_size = 12;
  tc.block_size = 11;
  gpt_bench::TorchGPT tgpt(tc);
  tgpt->eval();
  {
    torch::NoGradGuard ng;
    auto named = tgpt->named_parameters();
    for (auto& [name, t] : gpt.named_parameters()) {
      std::vector<float> v = t.to_vector<float>();
      named[name].copy_(torch::from_blob(v.data(), named[name].sizes(), torch::kFloat));
    }
  }
#endif
  for (int64_t batch : {1, 16}) {
    tsr::Tensor idx = tsr::randint(0, 12, {batch, 11});
    double diff = tsr::amax(tsr::abs(model(idx) - [&] {
                    tsr::NoGradGuard ng;
                    return gpt.forward(idx);
                  }()))
                      .item<double>();
    std::vector<Variant> vs;
    vs.push_back({"eager SDK", [&] {
                    tsr::NoGradGuard ng;
                    tsr::Tensor y = gpt.forward(idx);
                  }});
    vs.push_back({"runner", [&] { std::vector<tsr::Tensor> y = model.run({idx}); }});
#ifdef TESSERA_BENCH_HAVE_TORCH
    std::vector<int64_t> iv = idx.to_vector<int64_t>();
    torch::Tensor tidx = torch::tensor(iv, torch::kLong).view({batch, 11});
    vs.push_back({"libtorch eager", [&] {
                    torch::NoGradGuard ng;
                    torch::Tensor y = tgpt->forward(tidx);
                  }});
#endif
    measure(vs, rounds, calls);
    report("GPT (tessera train's, 2x4x64), batch " + std::to_string(batch) + " x 11 tokens (runner vs eager max |diff| " +
               std::to_string(diff) + ")",
           vs, nodes);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 9, calls = 200;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--rounds")) rounds = std::max(1, std::atoi(argv[i + 1]));
    if (!std::strcmp(argv[i], "--calls")) calls = std::max(1, std::atoi(argv[i + 1]));
  }
  const char* threads = std::getenv("OMP_NUM_THREADS");
  const char* wait = std::getenv("OMP_WAIT_POLICY");
#ifdef TESSERA_BENCH_HAVE_TORCH
  if (threads) torch::set_num_threads(std::atoi(threads));
#endif
  double load[3] = {0, 0, 0};
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) != 3) load[0] = -1;
    std::fclose(f);
  }
  std::printf("tessera_serve_bench: OMP_NUM_THREADS=%s OMP_WAIT_POLICY=%s, load %.2f %.2f %.2f, %d rounds x %d calls%s\n",
              threads ? threads : "(default)", wait ? wait : "(default)", load[0], load[1], load[2], rounds, calls,
#ifdef TESSERA_BENCH_HAVE_TORCH
              ", libtorch " TORCH_VERSION
#else
              " (libtorch not built in: configure with -DTESSERA_BENCH_LIBTORCH=ON)"
#endif
  );
  bench_mlp(rounds, calls);
  bench_gpt(rounds, calls);
  return 0;
}
