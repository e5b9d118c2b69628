// `tessera train`: trains a small GPT end to end (tools/train: the model, the tasks, the loop).
// By default on multi-digit addition (no download), reporting held-out exact-match accuracy;
// with --text FILE as a character-level model of that file, then sampling from it.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "cli.hpp"
#include "tessera/tessera.hpp"
#include "trainer.hpp"

namespace tessera_cli {

namespace {

const std::vector<OptionSpec> kTrainOptions = {
    {"--steps", true, "optimizer steps (addition: 700, text: 500)"},
    {"--batch-size", true, "sequences per step (addition: 256, text: 32)"},
    {"--lr", true, "peak learning rate of the warmup + cosine schedule (default 3e-3)"},
    {"--device", true, "device to train on (default: the best loaded one, e.g. cuda:0, else cpu:0)"},
    {"--threads", true, "CPU threads (default: the OpenMP default, usually every core)"},
    {"--seed", true, "seed of the initialization, the data and the sampling (default 1337)"},
    {"--out", true,
     "output directory: checkpoint.safetensors, log.csv, log.json, loss.svg (default tessera-train-out)"},
    {"--resume", true, "continue from a checkpoint written by an earlier run"},
    {"--eval-every", true, "evaluate on the held-out set every N steps (default: only at the end)"},
    {"--quiet", false, "no progress display (the summary is still printed)"},
    {"--text", true, "train a character-level model on this text file instead of addition"},
    {"--sample-len", true, "bytes of text sampled after --text training (default 400)"},
    {"--temperature", true, "sampling temperature (default 0.8)"},
    {"--top-k", true, "sample among the k most likely bytes (default 10; 0 = all)"},
    {"--digits", true, "addition: digits per operand, 1..9 (default 3)"},
    {"--n-layer", true, "transformer blocks (addition: 2, text: 3)"},
    {"--n-head", true, "attention heads (default 4)"},
    {"--n-embd", true, "embedding width, a multiple of --n-head (addition: 64, text: 96)"},
    {"--block-size", true, "text: context length in bytes (default 64; addition: fixed by --digits)"},
    {"--dropout", true, "dropout probability (default 0)"},
    {"--warmup", true, "linear warmup steps (default 50, at most --steps)"},
    {"--weight-decay", true, "AdamW weight decay of the weight matrices (default 0.01)"},
    {"--grad-clip", true, "clip the gradient norm to this (default 1; 0 = off)"},
    {"--stop-at", true, "stop after this step and write the checkpoint, as if interrupted"},
    {"--help", false, "this help"},
};

void usage() {
  std::printf(
      "usage: tessera train [options]\n\n"
      "Trains a small GPT (token + position embeddings, pre-norm causal self-attention blocks,\n"
      "tied head) on multi-digit addition and reports held-out exact-match accuracy, or with\n"
      "--text FILE as a character-level model of FILE followed by a generated sample.\n\noptions:\n");
  print_options(kTrainOptions);
  print_options(kRuntimeOptions);
}

// Whole-string numeric parses; false (message printed) on junk like "12x" or "".
bool parse_i64(const Args& a, const char* flag, std::optional<int64_t>* out) {
  if (!a.values.count(flag)) return true;
  const std::string& s = a.value(flag);
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || errno) {
    std::fprintf(stderr, "tessera train: %s expects an integer, got '%s'\n", flag, s.c_str());
    return false;
  }
  *out = v;
  return true;
}
bool parse_f64(const Args& a, const char* flag, std::optional<double>* out) {
  if (!a.values.count(flag)) return true;
  const std::string& s = a.value(flag);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || errno) {
    std::fprintf(stderr, "tessera train: %s expects a number, got '%s'\n", flag, s.c_str());
    return false;
  }
  *out = v;
  return true;
}

}  // namespace

int cmd_train(int argc, char** argv) {
  std::vector<OptionSpec> specs = kTrainOptions;
  specs.insert(specs.end(), kRuntimeOptions.begin(), kRuntimeOptions.end());
  Args args;
  if (!parse_args("train", argc, argv, 2, specs, &args)) return kExitUsage;
  if (args.has("--help")) {
    usage();
    return kExitOk;
  }
  if (!args.positional.empty()) {
    std::fprintf(stderr, "tessera train: unexpected argument '%s' (see tessera train --help)\n",
                 args.positional[0].c_str());
    return kExitUsage;
  }

  tessera_train::TrainOptions o;
  std::optional<int64_t> digits, threads, seed, eval_every, sample_len, top_k, stop_at;
  std::optional<double> temperature;
  bool ok = parse_i64(args, "--steps", &o.steps) && parse_i64(args, "--batch-size", &o.batch_size) &&
            parse_i64(args, "--warmup", &o.warmup) && parse_i64(args, "--n-layer", &o.n_layer) &&
            parse_i64(args, "--n-head", &o.n_head) && parse_i64(args, "--n-embd", &o.n_embd) &&
            parse_i64(args, "--block-size", &o.block_size) && parse_i64(args, "--digits", &digits) &&
            parse_i64(args, "--threads", &threads) && parse_i64(args, "--seed", &seed) &&
            parse_i64(args, "--eval-every", &eval_every) && parse_i64(args, "--sample-len", &sample_len) &&
            parse_i64(args, "--top-k", &top_k) && parse_i64(args, "--stop-at", &stop_at) &&
            parse_f64(args, "--lr", &o.lr) && parse_f64(args, "--weight-decay", &o.weight_decay) &&
            parse_f64(args, "--grad-clip", &o.grad_clip) && parse_f64(args, "--dropout", &o.dropout) &&
            parse_f64(args, "--temperature", &temperature);
  if (!ok) return kExitUsage;
  if (digits) o.digits = static_cast<int>(*digits);
  if (seed) {
    if (*seed < 0) {
      std::fprintf(stderr, "tessera train: --seed must be >= 0, got %lld\n", static_cast<long long>(*seed));
      return kExitUsage;
    }
    o.seed = static_cast<uint64_t>(*seed);
  }
  o.threads = static_cast<int>(threads.value_or(0));
  o.eval_every = eval_every.value_or(0);
  o.sample_len = sample_len.value_or(o.sample_len);
  o.top_k = top_k.value_or(o.top_k);
  o.stop_at = stop_at.value_or(0);
  o.temperature = temperature.value_or(o.temperature);
  o.text = args.value("--text");
  o.device = args.value("--device");
  o.resume = args.value("--resume");
  if (args.values.count("--out")) o.out_dir = args.value("--out");
  o.quiet = args.has("--quiet");
  if (args.values.count("--text") && o.text.empty()) {
    std::fprintf(stderr, "tessera train: --text needs a file name\n");
    return kExitUsage;
  }
  if (!(o.temperature > 0)) {
    std::fprintf(stderr, "tessera train: --temperature must be > 0\n");
    return kExitUsage;
  }

  if (o.threads < 0) {
    std::fprintf(stderr, "tessera train: --threads must be >= 0, got %d\n", o.threads);
    return kExitUsage;
  }
  tessera_train::configure_threads(o.threads);  // before the plugin loads libgomp
  RuntimeSession session;
  if (!session.open(args)) return kExitInternal;
  tsr::set_runtime(session.get());
  try {
    tessera_train::train(o, stdout, stderr);
  } catch (const tessera_train::UsageError& e) {
    tsr::set_runtime(nullptr);
    std::fprintf(stderr, "tessera train: %s\n", e.what());
    return kExitUsage;
  } catch (const tsr::Error& e) {
    tsr::set_runtime(nullptr);
    std::fprintf(stderr, "tessera train: %s\n", e.what());
    return e.code() == TSR_NOT_FOUND ? kExitUsage : kExitFailure;
  }
  tsr::set_runtime(nullptr);
  return kExitOk;
}

}  // namespace tessera_cli
