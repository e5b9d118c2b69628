#include "addition_task.hpp"

#include <algorithm>
#include <unordered_set>

#include "gpt.hpp"
#include "tessera/autograd.hpp"

namespace tessera_train {

AdditionTask::AdditionTask(const AdditionOptions& o) : d_(o.digits), seed_(o.seed) {
  // 9 digits keep a+b and the code a*10^d+b inside 64 bits.
  if (o.digits < 1 || o.digits > 9)
    throw tsr::Error(TSR_INVALID_ARGUMENT, "addition: --digits must be in 1..9, got " + std::to_string(o.digits));
  if (o.train_size < 1 || o.heldout_size < 1)
    throw tsr::Error(TSR_INVALID_ARGUMENT, "addition: train and held-out sizes must be >= 1, got " +
                                               std::to_string(o.train_size) + " and " + std::to_string(o.heldout_size));
  base_ = 1;
  for (int i = 0; i < d_; ++i) base_ *= 10;
  const uint64_t space = base_ * base_;
  const uint64_t n_held = std::min<uint64_t>(static_cast<uint64_t>(o.heldout_size), std::max<uint64_t>(1, space / 5));
  const uint64_t n_train = std::min<uint64_t>(static_cast<uint64_t>(o.train_size), space - n_held);

  SplitMix rng(mix64(seed_ ^ 0xADD1710Full));
  std::unordered_set<uint64_t> held;
  while (held.size() < n_held) {
    uint64_t code = rng.below(space);
    if (held.insert(code).second) heldout_.emplace_back(code / base_, code % base_);
  }
  if (n_train * 4 >= space) {
    // Dense: enumerate what is left and take a shuffled prefix.
    std::vector<uint64_t> rest;
    rest.reserve(space - n_held);
    for (uint64_t c = 0; c < space; ++c)
      if (!held.count(c)) rest.push_back(c);
    for (uint64_t i = 0; i < n_train; ++i) std::swap(rest[i], rest[i + rng.below(rest.size() - i)]);
    for (uint64_t i = 0; i < n_train; ++i) train_.emplace_back(rest[i] / base_, rest[i] % base_);
  } else {
    std::unordered_set<uint64_t> taken;
    taken.reserve(n_train * 2);
    while (train_.size() < n_train) {
      uint64_t code = rng.below(space);
      if (!held.count(code) && taken.insert(code).second) train_.emplace_back(code / base_, code % base_);
    }
  }
}

std::vector<int64_t> AdditionTask::encode(uint64_t a, uint64_t b) const {
  std::vector<int64_t> t;
  t.reserve(static_cast<size_t>(seq_len()));
  auto digits_msd_first = [&](uint64_t v, int n) {
    std::vector<int64_t> ds(static_cast<size_t>(n));
    for (int i = n - 1; i >= 0; --i, v /= 10) ds[static_cast<size_t>(i)] = static_cast<int64_t>(v % 10);
    return ds;
  };
  for (int64_t x : digits_msd_first(a, d_)) t.push_back(x);
  t.push_back(kPlus);
  for (int64_t x : digits_msd_first(b, d_)) t.push_back(x);
  t.push_back(kEquals);
  uint64_t s = a + b;
  for (int i = 0; i <= d_; ++i, s /= 10) t.push_back(static_cast<int64_t>(s % 10));  // least significant first
  return t;
}

std::string AdditionTask::render(const std::vector<int64_t>& tokens) {
  std::string s;
  for (int64_t t : tokens)
    s += t < 10 && t >= 0 ? static_cast<char>('0' + t) : t == kPlus ? '+' : t == kEquals ? '=' : '?';
  return s;
}

const std::vector<int64_t>& AdditionTask::epoch_order(int64_t epoch) const {
  if (epoch != cached_epoch_) {
    order_.resize(train_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int64_t>(i);
    SplitMix rng(mix64(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(epoch)));
    for (size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng.below(i)]);
    cached_epoch_ = epoch;
  }
  return order_;
}

Batch AdditionTask::batch(int64_t step, int64_t batch_size, tsr::Device dev, int64_t first, int64_t rows) const {
  if (batch_size < 1)
    throw tsr::Error(TSR_INVALID_ARGUMENT, "addition: batch size must be >= 1, got " + std::to_string(batch_size));
  if (rows < 0) rows = batch_size - first;
  if (first < 0 || rows < 1 || first + rows > batch_size)
    throw tsr::Error(TSR_INVALID_ARGUMENT, "addition: rows " + std::to_string(first) + ".." +
                                               std::to_string(first + rows - 1) + " are not in a batch of " +
                                               std::to_string(batch_size));
  // Epochs without replacement; a batch may straddle two epochs when N % B != 0.
  const int64_t N = static_cast<int64_t>(train_.size()), T = block_size();
  std::vector<int64_t> x, y;
  x.reserve(static_cast<size_t>(rows * T));
  y.reserve(x.capacity());
  for (int64_t i = first; i < first + rows; ++i) {
    int64_t pos = step * batch_size + i;
    const auto& p = train_[static_cast<size_t>(epoch_order(pos / N)[static_cast<size_t>(pos % N)])];
    std::vector<int64_t> seq = encode(p.first, p.second);
    for (int64_t j = 0; j < T; ++j) {
      x.push_back(seq[static_cast<size_t>(j)]);
      // Position j predicts token j+1; only the answer (after '=') is learned.
      y.push_back(j + 1 >= prompt_len() ? seq[static_cast<size_t>(j + 1)] : -100);
    }
  }
  return {tsr::from_vector<int64_t>(x, {rows, T}, dev), tsr::from_vector<int64_t>(y, {rows, T}, dev)};
}

double AdditionTask::accuracy(GPT& model, tsr::Device dev, const std::vector<std::pair<uint64_t, uint64_t>>& problems,
                              std::string* examples) const {
  const auto& probs = problems.empty() ? heldout_ : problems;
  const bool was_training = model.is_training();
  model.eval();
  tsr::NoGradGuard no_grad;
  int64_t correct = 0;
  const int64_t P = prompt_len(), A = d_ + 1;
  const size_t chunk = 512;
  for (size_t start = 0; start < probs.size(); start += chunk) {
    size_t n = std::min(chunk, probs.size() - start);
    std::vector<int64_t> prompt;
    std::vector<std::vector<int64_t>> full;
    for (size_t i = 0; i < n; ++i) {
      full.push_back(encode(probs[start + i].first, probs[start + i].second));
      prompt.insert(prompt.end(), full.back().begin(), full.back().begin() + P);
    }
    tsr::Tensor x = tsr::from_vector<int64_t>(prompt, {static_cast<int64_t>(n), P}, dev);
    for (int64_t k = 0; k < A; ++k) {
      tsr::Tensor logits = model.forward(x);
      tsr::Tensor next = tsr::argmax(logits.select(1, logits.size(1) - 1), 1, /*keepdim=*/true);
      x = tsr::cat({x, next}, 1);
    }
    std::vector<int64_t> out = x.to_vector<int64_t>();
    for (size_t i = 0; i < n; ++i) {
      bool ok = std::equal(full[i].begin() + P, full[i].end(), out.begin() + static_cast<int64_t>(i) * (P + A) + P);
      correct += ok;
      if (examples && start == 0 && i < 4) {
        std::vector<int64_t> got(out.begin() + static_cast<int64_t>(i) * (P + A),
                                 out.begin() + static_cast<int64_t>(i + 1) * (P + A));
        std::string s = render(got), ans = s.substr(static_cast<size_t>(P));
        std::reverse(ans.begin(), ans.end());  // shown the usual way round
        *examples +=
            (examples->empty() ? "" : "  ") + s.substr(0, static_cast<size_t>(P)) + ans + (ok ? " ok" : " wrong");
      }
    }
  }
  if (was_training) model.train();
  return probs.empty() ? 0.0 : static_cast<double>(correct) / static_cast<double>(probs.size());
}

EvalResult AdditionTask::evaluate(GPT& model, tsr::Device dev) const {
  EvalResult r;
  r.metric_name = "held-out exact match";
  r.metric = accuracy(model, dev, {}, &r.detail);
  return r;
}

std::map<std::string, std::string> AdditionTask::signature() const {
  return {{"task", "addition"},
          {"task.digits", std::to_string(d_)},
          {"task.seed", std::to_string(seed_)},
          {"task.train_size", std::to_string(train_.size())},
          {"task.heldout_size", std::to_string(heldout_.size())}};
}

std::string AdditionTask::describe() const {
  return std::to_string(d_) + "-digit addition, answer reversed (e.g. " +
         render(encode(base_ / 2 + 23 % base_, base_ - 1)) + "), " + std::to_string(train_.size()) + " train / " +
         std::to_string(heldout_.size()) + " held-out problems";
}

}  // namespace tessera_train
