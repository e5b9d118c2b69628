#include "text_task.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "gpt.hpp"
#include "tessera/autograd.hpp"

namespace tessera_train {

TextTask::TextTask(const std::string& path, int64_t block_size, uint64_t seed)
    : path_(path), block_(block_size), seed_(seed) {
  if (block_size < 1)
    throw tsr::Error(TSR_INVALID_ARGUMENT, "--text: block size must be >= 1, got " + std::to_string(block_size));
  std::ifstream f(path, std::ios::binary);
  if (!f) throw tsr::Error(TSR_NOT_FOUND, "--text: cannot open " + path + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string text = ss.str();
  // Both splits need at least one full window of block_size + 1 bytes.
  const int64_t n = static_cast<int64_t>(text.size()), need = 10 * (block_ + 1) + 1;
  if (n < need)
    throw tsr::Error(TSR_INVALID_ARGUMENT, "--text: " + path + " has " + std::to_string(n) +
                                               " bytes; a block size of " + std::to_string(block_) +
                                               " needs at least " + std::to_string(need) + " (10 windows)");
  bool seen[256] = {};
  for (unsigned char c : text) seen[c] = true;
  std::fill(std::begin(id_of_), std::end(id_of_), -1);
  for (int c = 0; c < 256; ++c)
    if (seen[c]) {
      id_of_[c] = static_cast<int>(vocab_.size());
      vocab_ += static_cast<char>(c);
    }
  const int64_t split = n * 9 / 10;
  for (int64_t i = 0; i < n; ++i)
    (i < split ? train_ : val_).push_back(id_of_[static_cast<unsigned char>(text[static_cast<size_t>(i)])]);
}

Batch TextTask::batch(int64_t step, int64_t batch_size, tsr::Device dev, int64_t first, int64_t rows) const {
  if (batch_size < 1)
    throw tsr::Error(TSR_INVALID_ARGUMENT, "--text: batch size must be >= 1, got " + std::to_string(batch_size));
  if (rows < 0) rows = batch_size - first;
  if (first < 0 || rows < 1 || first + rows > batch_size)
    throw tsr::Error(TSR_INVALID_ARGUMENT, "--text: rows " + std::to_string(first) + ".." +
                                               std::to_string(first + rows - 1) + " are not in a batch of " +
                                               std::to_string(batch_size));
  SplitMix rng(mix64(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(step)));
  const uint64_t starts = train_.size() - static_cast<size_t>(block_);
  for (int64_t b = 0; b < first; ++b) rng.below(starts);  // the rows before ours, as a whole batch draws them
  std::vector<int64_t> x, y;
  x.reserve(static_cast<size_t>(rows * block_));
  y.reserve(x.capacity());
  for (int64_t b = 0; b < rows; ++b) {
    auto o = train_.begin() + static_cast<int64_t>(rng.below(starts));
    x.insert(x.end(), o, o + block_);
    y.insert(y.end(), o + 1, o + block_ + 1);
  }
  return {tsr::from_vector<int64_t>(x, {rows, block_}, dev), tsr::from_vector<int64_t>(y, {rows, block_}, dev)};
}

EvalResult TextTask::evaluate(GPT& model, tsr::Device dev) const {
  const bool was_training = model.is_training();
  model.eval();
  tsr::NoGradGuard no_grad;
  // Evenly spaced windows: the same ones at every evaluation.
  const int64_t windows = std::min<int64_t>(64, static_cast<int64_t>(val_.size()) - block_);
  const int64_t stride = (static_cast<int64_t>(val_.size()) - block_ - 1) / std::max<int64_t>(windows, 1);
  std::vector<int64_t> x, y;
  for (int64_t w = 0; w < windows; ++w) {
    auto o = val_.begin() + w * stride;
    x.insert(x.end(), o, o + block_);
    y.insert(y.end(), o + 1, o + block_ + 1);
  }
  tsr::Tensor xt = tsr::from_vector<int64_t>(x, {windows, block_}, dev);
  tsr::Tensor yt = tsr::from_vector<int64_t>(y, {windows, block_}, dev);
  EvalResult r;
  r.metric_name = "val loss";
  r.metric = model.loss(model.forward(xt), yt).item<float>();
  if (was_training) model.train();
  return r;
}

std::string TextTask::sample(GPT& model, tsr::Device dev, const std::string& prompt, int64_t n, double temperature,
                             int64_t top_k, uint64_t seed) const {
  if (!(temperature > 0))
    throw tsr::Error(TSR_INVALID_ARGUMENT, "sample: temperature must be > 0, got " + std::to_string(temperature));
  const bool was_training = model.is_training();
  model.eval();
  tsr::NoGradGuard no_grad;
  std::vector<int64_t> ctx;
  for (unsigned char c : prompt)
    if (id_of_[c] >= 0) ctx.push_back(id_of_[c]);
  if (ctx.empty()) ctx.push_back(train_.front());
  SplitMix rng(mix64(seed ^ 0x5A3D1E));
  std::string out;
  const int64_t V = vocab_size();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t T = std::min<int64_t>(block_, static_cast<int64_t>(ctx.size()));
    std::vector<int64_t> window(ctx.end() - T, ctx.end());
    tsr::Tensor logits = model.forward(tsr::from_vector<int64_t>(window, {1, T}, dev));
    std::vector<float> last = logits.select(1, T - 1).to_vector<float>();
    // Softmax of the top-k logits at this temperature, drawn on the host.
    std::vector<int64_t> ids(static_cast<size_t>(V));
    for (int64_t v = 0; v < V; ++v) ids[static_cast<size_t>(v)] = v;
    int64_t k = top_k > 0 ? std::min(top_k, V) : V;
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), [&](int64_t a, int64_t b) {
      return last[static_cast<size_t>(a)] > last[static_cast<size_t>(b)];
    });
    double mx = last[static_cast<size_t>(ids[0])], total = 0;
    std::vector<double> p(static_cast<size_t>(k));
    for (int64_t j = 0; j < k; ++j)
      total += p[static_cast<size_t>(j)] =
          std::exp((last[static_cast<size_t>(ids[static_cast<size_t>(j)])] - mx) / temperature);
    double u = rng.uniform() * total;
    int64_t pick = ids[static_cast<size_t>(k - 1)];
    for (int64_t j = 0; j < k; ++j) {
      u -= p[static_cast<size_t>(j)];
      if (u <= 0) {
        pick = ids[static_cast<size_t>(j)];
        break;
      }
    }
    ctx.push_back(pick);
    out += vocab_[static_cast<size_t>(pick)];
  }
  if (was_training) model.train();
  return out;
}

std::map<std::string, std::string> TextTask::signature() const {
  return {{"task", "text"},
          {"task.path", path_},
          {"task.vocab_size", std::to_string(vocab_.size())},
          {"task.bytes", std::to_string(train_.size() + val_.size())},
          {"task.seed", std::to_string(seed_)}};
}

std::string TextTask::describe() const {
  return "character-level model of " + path_ + " (" + std::to_string(train_.size() + val_.size()) + " bytes, " +
         std::to_string(vocab_.size()) + " distinct, 90/10 train/val split)";
}

}  // namespace tessera_train
