// tessera train: the training loop behind `tessera train` (and the GPT benchmark).
//
//   resolve the configuration (task defaults < checkpoint < explicit flags) -> build the task
//   and the GPT -> AdamW + warmup/cosine schedule + gradient clipping -> steps with a progress
//   display -> periodic held-out evaluation -> checkpoint.safetensors, log.csv, log.json,
//   loss.svg in the output directory -> summary (and a text sample with --text).
//
// Resuming: the checkpoint holds the model, optimizer and scheduler state, the step, the
// runtime RNG state (dropout), the resolved configuration and the loss history. Batches are
// a function of (seed, step), so `--resume` continues with exactly the losses an uninterrupted
// run would have printed (same device and thread count).
//
// Errors: tsr::Error with a message naming the flag or file; UsageError (a tsr::Error) for
// flag values that are invalid on their face, so the CLI can answer with its usage exit code.
// Thread-safety: one training run per process at a time (it sets the runtime seed and the
// OpenMP thread count).
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpt.hpp"
#include "tessera/tessera.hpp"

namespace tessera_train {

// A bad flag value (negative steps, unknown device, conflicting resume flags).
class UsageError : public tsr::Error {
 public:
  explicit UsageError(const std::string& m) : tsr::Error(TSR_INVALID_ARGUMENT, m) {}
};

// What the user asked for; unset fields take the task's defaults (or the checkpoint's).
struct TrainOptions {
  std::string text;  // empty: the addition task
  std::optional<int> digits;
  std::optional<int64_t> steps, batch_size, warmup, n_layer, n_head, n_embd, block_size;
  std::optional<double> lr, weight_decay, grad_clip, dropout;
  std::optional<uint64_t> seed;
  std::string device;                         // "" = the best loaded device
  int threads = 0;                            // 0 = the runtime's default
  std::string out_dir = "tessera-train-out";  // "" = write nothing
  std::string resume;
  int64_t stop_at = 0;     // stop (and checkpoint) after this step, as if interrupted; 0 = run to the end
  int64_t eval_every = 0;  // 0 = only at the end
  bool quiet = false;
  int64_t sample_len = 400;
  double temperature = 0.8;
  int64_t top_k = 10;
};

// The resolved settings a run used (stored in the checkpoint as strings).
struct TrainConfig {
  std::string task = "addition", text;
  int digits = 3;
  uint64_t seed = 1337;
  int64_t steps = 0, batch_size = 0, warmup = 0;
  double lr = 0, min_lr = 0, weight_decay = 0, grad_clip = 0;
  int64_t n_layer = 0, n_head = 0, n_embd = 0, block_size = 0;
  double dropout = 0;

  std::map<std::string, std::string> to_map() const;
  static TrainConfig from_map(const std::map<std::string, std::string>& m);  // throws on missing keys
};

struct StepRecord {
  int64_t step = 0;  // 1-based: the loss of the step that made `step` steps done
  double loss = 0, lr = 0, tokens_per_s = 0;
};

struct TrainResult {
  TrainConfig config;
  std::string device;
  int64_t first_step = 0, last_step = 0;  // steps run in this process: (first_step, last_step]
  double seconds = 0, tokens_per_s = 0, final_loss = 0;
  std::string metric_name;
  double metric = 0;
  int64_t parameters = 0;
  std::vector<StepRecord> history;  // every step since step 1 (a resumed run includes the earlier ones)
  std::vector<std::string> files;
  std::string sample;
};

// Runs training; progress goes to `err`, the summary to `out` (either may be null).
TrainResult train(const TrainOptions& opts, FILE* out, FILE* err);

// Thread settings of the CPU backend's OpenMP runtime (libgomp, loaded with the plugin).
// Call before the runtime is created (before the plugin loads libgomp): sets OMP_NUM_THREADS
// when threads > 0, and OMP_WAIT_POLICY=passive unless the user chose a policy, because
// OpenMP's default spin-waiting makes every op ~10x slower when the cores are shared with
// other processes (measured: 1.15 s vs 0.11 s per step on 2 busy cores). When libgomp is
// already loaded it sets the thread count through omp_set_num_threads instead.
void configure_threads(int threads);
// The OpenMP thread count kernels will use (0 when libgomp is not loaded).
int openmp_threads();

// The best device the runtime has loaded: the first non-CPU device if any, else cpu:0.
tsr::Device best_device();

// The deployable model `tessera train` writes beside its checkpoint (model.tsm): model.forward
// traced (tsr::jit) in eval mode on token ids int64 [B, T] with dynamic batch B and length
// T <= block_size, optimized, saved to `path` (examples/serve_gpt serves it from C).
void write_served_model(GPT& model, int64_t block_size, tsr::Device dev, const std::string& path);

}  // namespace tessera_train
