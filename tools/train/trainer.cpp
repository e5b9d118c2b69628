#include "trainer.hpp"

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "addition_task.hpp"
#include "gpt.hpp"
#include "progress.hpp"
#include "svg_plot.hpp"
#include "tessera/checkpoint.hpp"
#include "tessera/distributed/checkpoint.hpp"
#include "tessera/distributed/ddp.hpp"
#include "tessera/distributed/process_group.hpp"
#include "tessera/jit.hpp"
#include "tessera/optim.hpp"
#include "text_task.hpp"

namespace fs = std::filesystem;

namespace tessera_train {

namespace {

using Clock = std::chrono::steady_clock;

std::string fmt_double(double v) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.17g", v);  // round-trips exactly
  return buf;
}

// Task defaults, tuned so the default addition run reaches > 90% held-out exact match in
// about a minute on 2 CPU cores (docs/train.md has the measurements).
TrainConfig defaults_for(const std::string& task) {
  TrainConfig c;
  c.task = task;
  if (task == "addition") {
    c.steps = 700, c.batch_size = 256, c.warmup = 50;
    c.lr = 3e-3, c.weight_decay = 0.01, c.grad_clip = 1.0;
    c.n_layer = 2, c.n_head = 4, c.n_embd = 64, c.dropout = 0.0;
  } else {
    c.steps = 500, c.batch_size = 32, c.warmup = 50, c.block_size = 64;
    c.lr = 3e-3, c.weight_decay = 0.01, c.grad_clip = 1.0;
    c.n_layer = 3, c.n_head = 4, c.n_embd = 96, c.dropout = 0.0;
  }
  c.min_lr = c.lr / 10;
  return c;
}

void check_positive(const char* flag, int64_t v) {
  if (v < 1) throw UsageError(std::string(flag) + " must be >= 1, got " + std::to_string(v));
}

// Explicit flags over `c`. When resuming, a flag that changes what the checkpoint was trained
// with is refused (only --steps may extend the run).
void apply_flags(const TrainOptions& o, bool resuming, TrainConfig* c) {
  auto set = [&](const char* flag, auto& field, const auto& value) {
    if (!value) return;
    if (resuming && field != *value) {
      std::ostringstream m;
      m << flag << " " << *value << " differs from the checkpoint's " << field
        << " (a resumed run keeps the checkpoint's settings)";
      throw UsageError(m.str());
    }
    field = *value;
  };
  set("--digits", c->digits, o.digits);
  set("--batch-size", c->batch_size, o.batch_size);
  set("--warmup", c->warmup, o.warmup);
  set("--n-layer", c->n_layer, o.n_layer);
  set("--n-head", c->n_head, o.n_head);
  set("--n-embd", c->n_embd, o.n_embd);
  set("--block-size", c->block_size, o.block_size);
  set("--weight-decay", c->weight_decay, o.weight_decay);
  set("--grad-clip", c->grad_clip, o.grad_clip);
  set("--dropout", c->dropout, o.dropout);
  set("--seed", c->seed, o.seed);
  if (o.lr) {
    set("--lr", c->lr, o.lr);
    if (!resuming) c->min_lr = *o.lr / 10;
  }
  if (o.steps) c->steps = *o.steps;  // may extend a resumed run
  // A short run keeps a proportionate warmup unless one was asked for.
  if (!resuming && !o.warmup) c->warmup = std::min(c->warmup, std::max<int64_t>(1, c->steps / 10));
  check_positive("--steps", c->steps);
  check_positive("--batch-size", c->batch_size);
  if (c->warmup < 0) throw UsageError("--warmup must be >= 0, got " + std::to_string(c->warmup));
  if (!(c->lr > 0)) throw UsageError("--lr must be > 0, got " + fmt_double(c->lr));
  if (c->weight_decay < 0) throw UsageError("--weight-decay must be >= 0");
  if (c->grad_clip < 0) throw UsageError("--grad-clip must be >= 0 (0 disables clipping)");
}

std::unique_ptr<Task> make_task(const TrainConfig& c) {
  if (c.task == "text") return std::make_unique<TextTask>(c.text, c.block_size, c.seed);
  AdditionOptions a;
  a.digits = c.digits;
  a.seed = c.seed;
  return std::make_unique<AdditionTask>(a);
}

std::string join_history(const std::vector<StepRecord>& h, double StepRecord::*field) {
  std::string s;
  for (const StepRecord& r : h) s += (s.empty() ? "" : " ") + fmt_double(r.*field);
  return s;
}

std::vector<double> split_doubles(const std::string& s) {
  std::vector<double> v;
  std::istringstream in(s);
  for (std::string tok; in >> tok;) v.push_back(std::strtod(tok.c_str(), nullptr));
  return v;
}

void write_text(const fs::path& p, const std::string& s) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  if (f) f << s;
  if (!f || !f.flush()) throw tsr::Error(TSR_UNAVAILABLE, "cannot write " + p.string() + ": " + std::strerror(errno));
}

}  // namespace

std::map<std::string, std::string> TrainConfig::to_map() const {
  return {{"train.task", task},
          {"train.text", text},
          {"train.digits", std::to_string(digits)},
          {"train.seed", std::to_string(seed)},
          {"train.steps", std::to_string(steps)},
          {"train.batch_size", std::to_string(batch_size)},
          {"train.warmup", std::to_string(warmup)},
          {"train.lr", fmt_double(lr)},
          {"train.min_lr", fmt_double(min_lr)},
          {"train.weight_decay", fmt_double(weight_decay)},
          {"train.grad_clip", fmt_double(grad_clip)},
          {"model.n_layer", std::to_string(n_layer)},
          {"model.n_head", std::to_string(n_head)},
          {"model.n_embd", std::to_string(n_embd)},
          {"model.block_size", std::to_string(block_size)},
          {"model.dropout", fmt_double(dropout)}};
}

TrainConfig TrainConfig::from_map(const std::map<std::string, std::string>& m) {
  auto get = [&](const std::string& k) -> const std::string& {
    auto it = m.find(k);
    if (it == m.end())
      throw tsr::Error(TSR_INVALID_ARGUMENT,
                       "checkpoint: no '" + k + "' in its metadata (not written by tessera train?)");
    return it->second;
  };
  auto i64 = [&](const std::string& k) { return static_cast<int64_t>(std::stoll(get(k))); };
  auto dbl = [&](const std::string& k) { return std::strtod(get(k).c_str(), nullptr); };
  TrainConfig c;
  c.task = get("train.task");
  c.text = get("train.text");
  c.digits = static_cast<int>(i64("train.digits"));
  c.seed = std::stoull(get("train.seed"));
  c.steps = i64("train.steps"), c.batch_size = i64("train.batch_size"), c.warmup = i64("train.warmup");
  c.lr = dbl("train.lr"), c.min_lr = dbl("train.min_lr"), c.weight_decay = dbl("train.weight_decay");
  c.grad_clip = dbl("train.grad_clip");
  c.n_layer = i64("model.n_layer"), c.n_head = i64("model.n_head"), c.n_embd = i64("model.n_embd");
  c.block_size = i64("model.block_size"), c.dropout = dbl("model.dropout");
  return c;
}

namespace {
void* libgomp() { return dlopen("libgomp.so.1", RTLD_LAZY | RTLD_NOLOAD); }
}  // namespace

void configure_threads(int threads) {
  if (void* h = libgomp()) {
    if (threads > 0)
      if (auto set = reinterpret_cast<void (*)(int)>(dlsym(h, "omp_set_num_threads"))) set(threads);
    dlclose(h);
    return;
  }
  if (threads > 0) setenv("OMP_NUM_THREADS", std::to_string(threads).c_str(), 1);
  setenv("OMP_WAIT_POLICY", "passive", 0);
}

int openmp_threads() {
  void* h = libgomp();
  if (!h) return 0;
  int n = 0;
  if (auto get = reinterpret_cast<int (*)()>(dlsym(h, "omp_get_max_threads"))) n = get();
  dlclose(h);
  return n;
}

tsr::Device best_device() {
  const tsr_api_t* api = tsr::api();
  tsr_runtime_t* rt = tsr::runtime();
  for (int32_t t = 0; t < api->device_type_count(rt); ++t)
    if (t != TSR_DEVICE_TYPE_CPU && api->device_count(rt, t) > 0) return tsr::Device(tsr_device_t{t, 0});
  return tsr::Device::cpu();
}

TrainResult train(const TrainOptions& o, FILE* out, FILE* err) {
  if (o.threads < 0) throw UsageError("--threads must be >= 0, got " + std::to_string(o.threads));
  configure_threads(o.threads);
  if (o.eval_every < 0) throw UsageError("--eval-every must be >= 0");
  if (o.sample_len < 0) throw UsageError("--sample-len must be >= 0");
  if (o.stop_at < 0) throw UsageError("--stop-at must be >= 0");

  tsr::Device dev = best_device();
  if (!o.device.empty()) {
    try {
      dev = tsr::Device(o.device);
      tsr::empty({0}, TSR_F32, dev);  // parses but is not loaded -> error here, not mid-run
    } catch (const tsr::Error& e) {
      throw UsageError("--device " + o.device + ": " + e.what());
    }
  }
  // Under `tessera launch` each process trains on the GPU of its LOCAL_RANK (the NCCL engine).
  const char* launched_world = std::getenv("WORLD_SIZE");
  if (launched_world && std::atoi(launched_world) > 1 && dev.str().rfind("cuda", 0) == 0) {
    const char* local_rank = std::getenv("LOCAL_RANK");
    dev = tsr::Device("cuda:" + std::string(local_rank && *local_rank ? local_rank : "0"));
  }

  // Data parallelism when started by `tessera launch -n N` (WORLD_SIZE > 1) or by `mpirun -n N`
  // (OMPI_COMM_WORLD_SIZE > 1: the MPI engine; init_process_group reads MPI's numbering): every rank takes
  // rank 0's weights (DistributedDataParallel), trains on its slice of each global batch (the
  // batch stays --batch-size, so the run is the one-process run up to float rounding), and
  // averages gradients while backward runs. Rank 0 alone reports, evaluates and writes files, and
  // a resumed run reads rank 0's checkpoint on rank 0 only (the others receive it through the
  // group, so machines without a shared directory can resume).
  const char* world_env = std::getenv("WORLD_SIZE");
  if (!world_env) world_env = std::getenv("OMPI_COMM_WORLD_SIZE");
  const int world = world_env ? std::atoi(world_env) : 1;
  std::optional<tsr::distributed::DeviceGroup> pg;
  int rank = 0;
  if (world > 1) {
    const bool gpu = dev.str().rfind("cuda", 0) == 0;
    if (!(dev == tsr::Device::cpu()) && !gpu)
      throw UsageError("data-parallel training across processes runs on the CPU (the Gloo engine) or on GPUs (the "
                       "NCCL engine), not on " + dev.str());
    tsr::distributed::InitOptions io;
    if (gpu) {  // a build without the NCCL engine says so here
      io.backend = "nccl";
      io.device = dev;
    }
    pg.emplace(tsr::distributed::init_process_group(io));
    rank = pg->rank();
  }

  // ---- configuration: defaults < checkpoint < flags ----
  std::optional<tsr::TrainingCheckpoint> ck;
  TrainConfig cfg;
  if (!o.resume.empty()) {
    ck = pg ? tsr::distributed::load_checkpoint(*pg, dev, o.resume, dev) : tsr::load_checkpoint(o.resume, dev);
    cfg = TrainConfig::from_map(ck->extra);
    if (!o.text.empty() && o.text != cfg.text)
      throw UsageError("--text " + o.text + " differs from the checkpoint's " +
                       (cfg.text.empty() ? std::string("addition task") : cfg.text));
  } else {
    cfg = defaults_for(o.text.empty() ? "addition" : "text");
    cfg.text = o.text;
  }
  apply_flags(o, ck.has_value(), &cfg);

  std::unique_ptr<Task> task;
  try {
    task = make_task(cfg);
  } catch (const tsr::Error& e) {
    // Every task error is about a flag's value or the --text file.
    throw UsageError(e.what());
  }
  if (cfg.task == "addition") cfg.block_size = task->block_size();

  GPTConfig gc;
  gc.vocab_size = task->vocab_size();
  gc.block_size = cfg.block_size;
  gc.n_layer = cfg.n_layer, gc.n_head = cfg.n_head, gc.n_embd = cfg.n_embd, gc.dropout = cfg.dropout;
  try {
    gc.validate();
  } catch (const tsr::Error& e) {
    throw UsageError(e.what());
  }

  tsr::manual_seed(cfg.seed);
  auto model = std::make_shared<GPT>(gc);
  model->to(dev);
  model->train();

  tsr::optim::AdamWOptions ao;
  ao.lr = cfg.lr;
  ao.weight_decay = cfg.weight_decay;
  ao.betas = {0.9, 0.99};  // small models and short runs: a shorter second-moment memory
  // As GPT-2/nanoGPT: weight decay on matrices (embeddings, Linear weights) only; decaying
  // LayerNorm gains and biases toward 0 only hurts.
  std::vector<tsr::Tensor> decay, no_decay;
  for (const tsr::Tensor& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  tsr::optim::AdamW opt({tsr::optim::ParamGroup(decay), tsr::optim::ParamGroup(no_decay, {{"weight_decay", 0.0}})}, ao);
  tsr::optim::WarmupCosine sched(opt, std::min(cfg.warmup, cfg.steps), cfg.steps, cfg.min_lr / cfg.lr);

  TrainResult res;
  int64_t step = 0;
  if (ck) {
    model->load_state_dict(ck->model);
    opt.load_state_dict(ck->optimizer);
    sched.load_state_dict(ck->scheduler);
    tsr::set_rng_state(ck->rng);
    step = ck->step;
    std::vector<double> l = split_doubles(ck->extra["history.loss"]), r = split_doubles(ck->extra["history.lr"]),
                        t = split_doubles(ck->extra["history.tokens_per_s"]);
    for (size_t i = 0; i < l.size(); ++i)
      res.history.push_back({static_cast<int64_t>(i + 1), l[i], i < r.size() ? r[i] : 0, i < t.size() ? t[i] : 0});
    if (step >= cfg.steps)
      throw UsageError("the checkpoint is at step " + std::to_string(step) + ", already at --steps " +
                       std::to_string(cfg.steps) + " (pass a larger --steps to continue)");
  }
  // DistributedDataParallel over the process group made above.
  std::unique_ptr<tsr::distributed::DistributedDataParallel> ddp;
  if (pg) {
    if (cfg.batch_size % world != 0)
      throw UsageError("--batch-size " + std::to_string(cfg.batch_size) + " does not split over " +
                       std::to_string(world) + " processes");
    ddp = std::make_unique<tsr::distributed::DistributedDataParallel>(model, *pg);
    if (rank != 0) out = err = nullptr;
  }
  const int64_t local_batch = cfg.batch_size / world;
  res.config = cfg;
  res.device = dev.str();
  res.parameters = model->num_parameters();
  res.first_step = step;

  const int64_t end = o.stop_at > 0 ? std::min(o.stop_at, cfg.steps) : cfg.steps;
  const int64_t tokens_per_step = cfg.batch_size * task->block_size();
  if (err && !o.quiet) {
    std::fprintf(err, "tessera train: %s\n", task->describe().c_str());
    std::fprintf(err, "  GPT(%s): %lld parameters on %s, %d threads; %lld steps of %lld x %lld tokens, AdamW lr %g\n",
                 gc.str().c_str(), static_cast<long long>(res.parameters), res.device.c_str(), openmp_threads(),
                 static_cast<long long>(cfg.steps), static_cast<long long>(cfg.batch_size),
                 static_cast<long long>(task->block_size()), cfg.lr);
    if (ck) std::fprintf(err, "  resumed from %s at step %lld\n", o.resume.c_str(), static_cast<long long>(step));
  }

  Progress progress(err, step, cfg.steps, o.quiet || !err);
  double train_seconds = 0;
  auto run_start = Clock::now();
  for (; step < end; ++step) {
    auto t0 = Clock::now();
    Batch b = task->batch(step, cfg.batch_size, dev, rank * local_batch, local_batch);  // this rank's slice
    double lr = opt.lr();
    tsr::Tensor loss = model->loss(model->forward(b.x), b.y);
    opt.zero_grad();
    if (ddp)
      ddp->backward(loss);
    else
      loss.backward();
    // The global batch's loss, for the log: averaged over the ranks while the optimizer steps.
    tsr::distributed::Work loss_avg;
    if (pg) {
      loss = loss.detach().clone();
      loss_avg = pg->all_reduce({loss}, tsr::distributed::ReduceOp::Avg);
    }
    if (cfg.grad_clip > 0) tsr::optim::clip_grad_norm_(model->parameters(), cfg.grad_clip);
    opt.step();
    sched.step();
    loss_avg.wait();
    double loss_v = loss.item<float>();  // synchronizes: the step time below is real
    double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    train_seconds += dt;
    if (!std::isfinite(loss_v))
      throw tsr::Error(TSR_ABORTED, "tessera train: the loss became " + fmt_double(loss_v) + " at step " +
                                        std::to_string(step + 1) + " (try a lower --lr)");
    res.history.push_back({step + 1, loss_v, lr, static_cast<double>(tokens_per_step) / dt});
    progress.update(step + 1, loss_v, lr, static_cast<double>(tokens_per_step) / dt);
    if (rank == 0 && o.eval_every > 0 && (step + 1) % o.eval_every == 0 && step + 1 < cfg.steps) {
      EvalResult ev = task->evaluate(*model, dev);
      char buf[160];
      std::snprintf(buf, sizeof(buf), "step %lld: %s %.4f", static_cast<long long>(step + 1), ev.metric_name.c_str(),
                    ev.metric);
      progress.message(buf + (ev.detail.empty() ? "" : "   " + ev.detail));
    }
  }
  progress.finish();
  res.last_step = step;
  res.seconds = std::chrono::duration<double>(Clock::now() - run_start).count();
  const int64_t ran = res.last_step - res.first_step;
  res.tokens_per_s = train_seconds > 0 ? static_cast<double>(ran * tokens_per_step) / train_seconds : 0;
  res.final_loss = res.history.empty() ? NAN : res.history.back().loss;
  // Mean of the last steps: one batch's loss is noisy.
  if (!res.history.empty()) {
    size_t k = std::min<size_t>(20, res.history.size());
    double s = 0;
    for (size_t i = res.history.size() - k; i < res.history.size(); ++i) s += res.history[i].loss;
    res.final_loss = s / static_cast<double>(k);
  }

  if (rank != 0) return res;  // rank 0 evaluates, reports and writes the files
  EvalResult ev = task->evaluate(*model, dev);
  res.metric_name = ev.metric_name;
  res.metric = ev.metric;
  if (auto* text = dynamic_cast<TextTask*>(task.get()); text && o.sample_len > 0 && step >= cfg.steps)
    res.sample = text->sample(*model, dev, "", o.sample_len, o.temperature, o.top_k, cfg.seed);

  // ---- files ----
  if (!o.out_dir.empty()) {
    fs::path dir(o.out_dir);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw tsr::Error(TSR_UNAVAILABLE, "--out: cannot create " + dir.string() + ": " + ec.message());

    tsr::TrainingCheckpoint save;
    save.model = model->state_dict();
    save.optimizer = opt.state_dict();
    save.scheduler = sched.state_dict();
    save.step = step;
    save.rng = tsr::get_rng_state();
    save.extra = cfg.to_map();
    for (auto& kv : task->signature()) save.extra[kv.first] = kv.second;
    save.extra["history.loss"] = join_history(res.history, &StepRecord::loss);
    save.extra["history.lr"] = join_history(res.history, &StepRecord::lr);
    save.extra["history.tokens_per_s"] = join_history(res.history, &StepRecord::tokens_per_s);
    fs::path ckpt = dir / "checkpoint.safetensors";
    tsr::save_checkpoint(ckpt.string(), save);
    res.files.push_back(ckpt.string());

    // The deployable model: the GPT's inference graph over one full block (a causal model, so
    // a host pads a shorter prompt and reads the logits at its last position), with its weights.
    fs::path served = dir / "model.tsm";
    write_served_model(*model, gc.block_size, dev, served.string());
    res.files.push_back(served.string());

    std::ostringstream csv;
    csv << "step,loss,lr,tokens_per_s\n";
    for (const StepRecord& r : res.history)
      csv << r.step << ',' << fmt_double(r.loss) << ',' << fmt_double(r.lr) << ',' << fmt_double(r.tokens_per_s)
          << '\n';
    write_text(dir / "log.csv", csv.str());
    res.files.push_back((dir / "log.csv").string());

    nlohmann::json j;
    j["config"] = cfg.to_map();
    j["device"] = res.device;
    j["parameters"] = res.parameters;
    j["steps_this_run"] = {res.first_step, res.last_step};
    j["seconds"] = res.seconds;
    j["tokens_per_s"] = res.tokens_per_s;
    j["final_train_loss"] = res.final_loss;
    j[res.metric_name] = res.metric;
    nlohmann::json rows = nlohmann::json::array();
    for (const StepRecord& r : res.history)
      rows.push_back({{"step", r.step}, {"loss", r.loss}, {"lr", r.lr}, {"tokens_per_s", r.tokens_per_s}});
    j["log"] = rows;
    write_text(dir / "log.json", j.dump(1) + "\n");
    res.files.push_back((dir / "log.json").string());

    Series raw{"train loss", "#9ecae1", {}, {}}, smooth{"moving average (20 steps)", "#08519c", {}, {}};
    double acc = 0;
    for (size_t i = 0; i < res.history.size(); ++i) {
      raw.x.push_back(static_cast<double>(res.history[i].step));
      raw.y.push_back(res.history[i].loss);
      acc += res.history[i].loss;
      if (i >= 20) acc -= res.history[i - 20].loss;
      smooth.x.push_back(raw.x.back());
      smooth.y.push_back(acc / static_cast<double>(std::min<size_t>(i + 1, 20)));
    }
    PlotSpec spec;
    char metric[96];
    if (res.metric_name == "val loss")
      std::snprintf(metric, sizeof(metric), "%s %.4f", res.metric_name.c_str(), res.metric);
    else
      std::snprintf(metric, sizeof(metric), "%s %.1f%%", res.metric_name.c_str(), res.metric * 100);
    spec.title = "tessera train: " + task->name() + ", " + std::to_string(res.last_step) + " steps (" + metric + ")";
    spec.x_label = "step";
    spec.y_label = "cross-entropy loss";
    spec.log_y = true;
    write_svg((dir / "loss.svg").string(), spec, {raw, smooth});
    res.files.push_back((dir / "loss.svg").string());
  }

  if (out) {
    std::fprintf(out, "\nsteps          %lld..%lld of %lld (%lld this run)\n", static_cast<long long>(res.first_step),
                 static_cast<long long>(res.last_step), static_cast<long long>(cfg.steps), static_cast<long long>(ran));
    std::fprintf(out, "time           %s (%.1f s training)\n", format_duration(res.seconds).c_str(), train_seconds);
    std::fprintf(out, "throughput     %.0f tokens/s on %s\n", res.tokens_per_s, res.device.c_str());
    std::fprintf(out, "parameters     %lld\n", static_cast<long long>(res.parameters));
    std::fprintf(out, "train loss     %.4f (mean of the last %zu steps)\n", res.final_loss,
                 std::min<size_t>(20, res.history.size()));
    if (res.metric_name == "val loss")
      std::fprintf(out, "%-14s %.4f\n", res.metric_name.c_str(), res.metric);
    else
      std::fprintf(out, "%-14s %.1f%% (%s)\n", "accuracy", res.metric * 100, res.metric_name.c_str());
    if (!ev.detail.empty()) std::fprintf(out, "examples       %s\n", ev.detail.c_str());
    for (size_t i = 0; i < res.files.size(); ++i)
      std::fprintf(out, "%-14s %s\n", i == 0 ? "files" : "", res.files[i].c_str());
    if (!res.sample.empty())
      std::fprintf(out, "\nsample (temperature %g, top-k %lld):\n%s\n", o.temperature, static_cast<long long>(o.top_k),
                   res.sample.c_str());
    std::fflush(out);
  }
  return res;
}

void write_served_model(GPT& model, int64_t block_size, tsr::Device dev, const std::string& path) {
  const bool was_training = model.is_training();
  model.eval();
  tsr::jit::TraceOptions opts;
  opts.input_names = {"tokens"};
  opts.output_names = {"logits"};
  opts.dynamic = {{0, 0, "B"}, {0, 1, "T"}};  // any batch, any length up to block_size
  tsr::jit::Model m = tsr::jit::trace(model, {tsr::zeros({3, block_size}, TSR_I64, dev)}, opts);
  m.optimize("all");
  m.save(path);
  if (was_training) model.train();
}

}  // namespace tessera_train
