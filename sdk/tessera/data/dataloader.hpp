// Tessera SDK: DataLoader, batches of a Dataset in a seeded order, optionally produced ahead by
// background worker threads (torch.utils.data.DataLoader in C++).
//
//   tsr::data::DataLoaderOptions o;
//   o.batch_size = 32; o.shuffle = true; o.seed = 1; o.num_workers = 2;
//   tsr::data::DataLoader loader(dataset, o);
//   for (int epoch = 0; epoch < 10; ++epoch)
//     for (const tsr::data::Example& batch : loader) train_step(batch[0], batch[1]);
//
// Order. Epoch e visits the dataset in shuffled_indices(n, seed, e) order (identity without
// shuffle), cut into batches of batch_size (the short last batch is dropped with drop_last).
// Batches are delivered in that order whatever the number of workers.
//
// Position. The loader is a resumable stream over (seed, epoch, next_batch):
//  - each batch delivered advances next_batch; delivering an epoch's last batch moves to
//    (epoch + 1, 0), so consecutive loops see consecutive epochs, each with its own shuffle;
//  - a loop left early (break, exception) leaves the position after the last batch delivered,
//    and the next loop continues from there: call set_epoch(e) to restart an epoch;
//  - state() / load_state() (or state_dict() / load_state_dict() for a checkpoint file) save
//    and restore the position. Inside a loop body state() already names the batch after the
//    current one, so a checkpoint written there resumes without repeating the current batch.
//  Datasets whose size changes between epochs are re-read at the start of every loop.
//
// Workers. num_workers = 0 collates batches in the consuming thread. With num_workers = W > 0,
// batch b is built by worker b % W, which runs at most `prefetch` batches ahead (W * prefetch
// batches in memory at most), so delivery in order needs no reordering. Workers run in the
// loader's runtime (tsr::RuntimeScope) with autograd off (tsr::NoGradGuard). They are started
// by begin() and joined when the loop finishes, when its iterator is destroyed, when another
// loop (or set_epoch, skip_to, load_state) begins, and when the loader is destroyed, including
// while they are blocked on a full queue. Only one loop is active per loader: an iterator of a
// superseded loop throws CANCELLED when advanced.
//
// Pinned memory. With pin_memory = true each tensor of a batch is copied by the worker into
// page-locked host memory from the "tessera.pinned_host" extension table that a device backend
// publishes (abi/tessera/ext_pinned_host.h), so the training loop's copy to the device is
// fast. When no backend offers it (the CPU backend does not: its device memory is host memory),
// pin_memory is a no-op; pinning() tells which applies.
//
// Ownership: the loader shares the dataset (std::shared_ptr<const Dataset>); a batch holds
// its own tensors (index_select / stack results), valid after the loop and the loader end.
// Errors: tsr::Error. Bad options (batch_size < 1, num_workers < 0, prefetch < 1, a null
// dataset) are INVALID_ARGUMENT at construction. An exception thrown while building batch b
// (in a worker or not) is rethrown in the consuming thread when batch b is due, as tsr::Error
// with the original code (UNKNOWN for non-tessera exceptions) and a message naming the batch
// and its dataset indices; the position stays at batch b, so a new loop retries it.
// Thread-safety: one DataLoader is used from one thread (the consumer); the dataset must allow
// concurrent get()/get_batch() calls when num_workers > 0.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "tessera/autograd.hpp"
#include "tessera/data/dataset.hpp"
#include "tessera/data/pin_memory.hpp"
#include "tessera/data/sampler.hpp"
#include "tessera/nn/state_dict.hpp"
#include "tessera/tessera.hpp"

namespace tsr::data {

struct DataLoaderOptions {
  int64_t batch_size = 1;
  bool shuffle = false;
  uint64_t seed = 0;
  bool drop_last = false;
  int num_workers = 0;  // 0: batches are built in the consuming thread
  int prefetch = 2;     // batches each worker may run ahead
  bool pin_memory = false;
  // The pinned-host table to stage batches with; nullptr looks it up in the runtime. Lets a
  // host (or a test) supply its own page-locked allocator.
  const tsr_pinned_host_t* pinned_host = nullptr;
  // The runtime workers run in; nullptr: tsr::runtime() of the thread constructing the loader.
  tsr_runtime_t* runtime = nullptr;
};

// Where the loader stands: the next loop delivers batch next_batch of epoch `epoch`.
struct DataLoaderState {
  uint64_t seed = 0;
  uint64_t epoch = 0;
  int64_t next_batch = 0;
  bool operator==(const DataLoaderState& o) const {
    return seed == o.seed && epoch == o.epoch && next_batch == o.next_batch;
  }
  bool operator!=(const DataLoaderState& o) const { return !(*this == o); }
};

namespace detail {

struct LoaderShared {
  std::shared_ptr<const Dataset> dataset;
  DataLoaderOptions opt;
  tsr_runtime_t* rt = nullptr;
  const tsr_pinned_host_t* pinned = nullptr;
  std::mutex mu;  // guards the position (a pass's consumer updates it)
  uint64_t epoch = 0;
  int64_t next_batch = 0;
};

inline std::string indices_str(const std::vector<int64_t>& idx) {
  std::string s = "[";
  for (size_t i = 0; i < idx.size() && i < 8; ++i) s += (i ? ", " : "") + std::to_string(idx[i]);
  if (idx.size() > 8) s += ", ... (" + std::to_string(idx.size()) + " indices)";
  return s + "]";
}

// One loop over batches [first, end) of one epoch, with its worker threads.
class Pass {
 public:
  Pass(std::shared_ptr<LoaderShared> shared, BatchSampler sampler, int64_t first, int64_t end)
      : shared_(std::move(shared)), sampler_(std::move(sampler)), first_(first), end_(end) {
    const int w = shared_->opt.num_workers;
    if (w == 0 || first_ >= end_) return;
    // More workers than batches would only idle.
    const int64_t nworkers = std::min<int64_t>(w, end_ - first_);
    queues_.resize(static_cast<size_t>(nworkers));
    try {
      for (int64_t i = 0; i < nworkers; ++i) threads_.emplace_back([this, i] { worker_main(i); });
    } catch (const std::system_error& e) {
      shutdown();
      throw Error(TSR_RESOURCE_EXHAUSTED, std::string("DataLoader: cannot start a worker thread: ") + e.what());
    }
  }
  Pass(const Pass&) = delete;
  Pass& operator=(const Pass&) = delete;
  ~Pass() { shutdown(); }

  int64_t first() const { return first_; }
  int64_t end() const { return end_; }

  // Batch b (called with first, first + 1, ... in order) and the position moved past it.
  Example fetch(int64_t b) {
    Example batch;
    if (threads_.empty()) {
      {
        std::lock_guard<std::mutex> lk(mu_);
        if (stop_) throw cancelled();
      }
      try {
        batch = produce(b);
      } catch (...) {
        rethrow(b, -1, std::current_exception());
      }
    } else {
      const size_t w = static_cast<size_t>((b - first_) % static_cast<int64_t>(queues_.size()));
      Slot slot;
      {
        std::unique_lock<std::mutex> lk(mu_);
        ready_.wait(lk, [&] { return stop_ || !queues_[w].empty(); });
        if (stop_) throw cancelled();
        slot = std::move(queues_[w].front());
        queues_[w].pop_front();
      }
      space_.notify_all();
      if (slot.index != b)
        throw Error(TSR_INTERNAL, "DataLoader: worker " + std::to_string(w) + " delivered batch " +
                                      std::to_string(slot.index) + " when batch " + std::to_string(b) + " was due");
      if (slot.error) rethrow(b, static_cast<int64_t>(w), slot.error);
      batch = std::move(slot.batch);
    }
    std::lock_guard<std::mutex> lk(shared_->mu);
    if (b + 1 >= sampler_.num_batches()) {
      shared_->epoch = sampler_.epoch() + 1;
      shared_->next_batch = 0;
    } else {
      shared_->epoch = sampler_.epoch();
      shared_->next_batch = b + 1;
    }
    return batch;
  }

  // Stops and joins the workers; batches not yet delivered are dropped. Idempotent.
  void shutdown() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      stop_ = true;
    }
    space_.notify_all();
    ready_.notify_all();
    for (std::thread& t : threads_)
      if (t.joinable()) t.join();
    threads_.clear();
    std::lock_guard<std::mutex> lk(mu_);
    queues_.clear();
  }

 private:
  struct Slot {
    int64_t index = -1;
    Example batch;
    std::exception_ptr error;
  };

  Example produce(int64_t b) const {
    RuntimeScope scope(shared_->rt);
    NoGradGuard no_grad;
    Example batch = shared_->dataset->get_batch(sampler_.batch(b));
    if (shared_->pinned)
      for (Tensor& t : batch) t = pin(t, shared_->pinned);
    return batch;
  }

  void worker_main(int64_t w) {
    const int64_t stride = static_cast<int64_t>(queues_.size());
    const size_t q = static_cast<size_t>(w);
    for (int64_t b = first_ + w; b < end_; b += stride) {
      {
        std::unique_lock<std::mutex> lk(mu_);
        space_.wait(lk, [&] { return stop_ || queues_[q].size() < static_cast<size_t>(shared_->opt.prefetch); });
        if (stop_) return;
      }
      Slot slot;
      slot.index = b;
      try {
        slot.batch = produce(b);
      } catch (...) {
        slot.error = std::current_exception();
      }
      const bool failed = slot.error != nullptr;
      {
        std::lock_guard<std::mutex> lk(mu_);
        if (stop_) return;  // slot (and its tensors) released here, outside the lock
        queues_[q].push_back(std::move(slot));
      }
      ready_.notify_all();
      // Later batches of this worker would never be delivered: the consumer stops at this one.
      if (failed) return;
    }
  }

  [[noreturn]] void rethrow(int64_t b, int64_t worker, std::exception_ptr e) const {
    std::string where = "DataLoader: batch " + std::to_string(b) + " of epoch " + std::to_string(sampler_.epoch());
    try {
      where += " (dataset indices " + indices_str(sampler_.batch(b)) + ")";
    } catch (...) {
    }
    where += worker >= 0 ? " failed in worker " + std::to_string(worker) + ": " : " failed: ";
    try {
      std::rethrow_exception(e);
    } catch (const Error& err) {
      throw Error(err.code(), where + err.what());
    } catch (const std::exception& err) {
      throw Error(TSR_UNKNOWN, where + err.what());
    } catch (...) {
      throw Error(TSR_UNKNOWN, where + "unknown exception");
    }
  }

  static Error cancelled() {
    return Error(TSR_CANCELLED,
                 "DataLoader: this loop was stopped (the loader was destroyed, or another loop, set_epoch, skip_to "
                 "or load_state began)");
  }

  std::shared_ptr<LoaderShared> shared_;
  BatchSampler sampler_;
  int64_t first_, end_;
  std::mutex mu_;
  std::condition_variable space_, ready_;
  std::vector<std::deque<Slot>> queues_;
  std::vector<std::thread> threads_;
  bool stop_ = false;
};

}  // namespace detail

class DataLoader {
 public:
  // An input iterator over one loop's batches; the end iterator is default-constructed.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Example;
    using difference_type = std::ptrdiff_t;
    using pointer = const Example*;
    using reference = const Example&;

    Iterator() = default;
    const Example& operator*() const { return current_; }
    const Example* operator->() const { return &current_; }
    // The index of the current batch within its epoch.
    int64_t batch_index() const { return b_; }
    Iterator& operator++() {
      if (!pass_) throw Error(TSR_OUT_OF_RANGE, "DataLoader: iterator advanced past the end");
      current_.clear();
      if (++b_ < pass_->end()) {
        current_ = pass_->fetch(b_);
      } else {
        pass_.reset();  // joins the (finished) workers now rather than at the next loop
      }
      return *this;
    }
    // Only meaningful against end(): true when both are finished.
    bool operator==(const Iterator& o) const { return !pass_ == !o.pass_; }
    bool operator!=(const Iterator& o) const { return !(*this == o); }

   private:
    friend class DataLoader;
    Iterator(std::shared_ptr<detail::Pass> pass) : pass_(std::move(pass)), b_(pass_->first()) {
      current_ = pass_->fetch(b_);
    }
    std::shared_ptr<detail::Pass> pass_;
    int64_t b_ = 0;
    Example current_;
  };

  explicit DataLoader(std::shared_ptr<const Dataset> dataset, DataLoaderOptions opt = {})
      : shared_(std::make_shared<detail::LoaderShared>()) {
    if (!dataset) throw Error(TSR_INVALID_ARGUMENT, "DataLoader: null dataset");
    if (opt.batch_size < 1)
      throw Error(TSR_INVALID_ARGUMENT, "DataLoader: batch_size must be >= 1, got " + std::to_string(opt.batch_size));
    if (opt.num_workers < 0)
      throw Error(TSR_INVALID_ARGUMENT, "DataLoader: num_workers must be >= 0, got " + std::to_string(opt.num_workers));
    if (opt.prefetch < 1)
      throw Error(TSR_INVALID_ARGUMENT, "DataLoader: prefetch must be >= 1, got " + std::to_string(opt.prefetch));
    if (opt.pinned_host && (!TSR_PINNED_HOST_HAS(opt.pinned_host, tensor_empty) || !opt.pinned_host->tensor_empty))
      throw Error(TSR_INVALID_ARGUMENT, "DataLoader: the pinned_host table given has no tensor_empty");
    shared_->dataset = std::move(dataset);
    shared_->opt = opt;
    shared_->rt = opt.runtime ? opt.runtime : tsr::runtime();
    if (opt.pin_memory) shared_->pinned = opt.pinned_host ? opt.pinned_host : find_pinned_host(shared_->rt);
  }
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;
  DataLoader(DataLoader&&) = default;
  DataLoader& operator=(DataLoader&& o) {
    if (this != &o) {
      stop_active();
      shared_ = std::move(o.shared_);
      active_ = std::move(o.active_);
    }
    return *this;
  }
  ~DataLoader() { stop_active(); }

  // Starts a loop at the current position (see the top of this file).
  Iterator begin() {
    stop_active();
    const detail::LoaderShared& s = shared();
    const size_t n = s.dataset->size();
    const int64_t end = BatchSampler::count(n, s.opt.batch_size, s.opt.drop_last);
    int64_t first;
    uint64_t epoch;
    {
      std::lock_guard<std::mutex> lk(shared_->mu);
      // skip_to(size()) or a dataset that shrank: this epoch has nothing left.
      if (shared_->next_batch >= end && end > 0) {
        shared_->epoch += 1;
        shared_->next_batch = 0;
      }
      first = shared_->next_batch;
      epoch = shared_->epoch;
    }
    if (first >= end) return Iterator();
    BatchSampler sampler(n, s.opt.batch_size, s.opt.shuffle, s.opt.seed, s.opt.drop_last, epoch);
    auto pass = std::make_shared<detail::Pass>(shared_, std::move(sampler), first, end);
    active_ = pass;
    return Iterator(std::move(pass));
  }
  Iterator end() { return Iterator(); }

  // Batches per epoch for the dataset's current size.
  int64_t size() const {
    const detail::LoaderShared& s = shared();
    return BatchSampler::count(s.dataset->size(), s.opt.batch_size, s.opt.drop_last);
  }
  const Dataset& dataset() const { return *shared().dataset; }
  const DataLoaderOptions& options() const { return shared().opt; }
  // True when batches are staged in pinned memory (pin_memory and a table was found).
  bool pinning() const { return shared().pinned != nullptr; }

  uint64_t epoch() const { return state().epoch; }
  // Restarts at the first batch of epoch e (its order depends only on seed and e).
  void set_epoch(uint64_t e) { load_state({shared().opt.seed, e, 0}); }
  // Continues the current epoch at batch b (0 <= b <= size(); size() means the next epoch).
  void skip_to(int64_t b) { load_state({shared().opt.seed, epoch(), b}); }

  DataLoaderState state() const {
    std::lock_guard<std::mutex> lk(shared().mu);
    return {shared_->opt.seed, shared_->epoch, shared_->next_batch};
  }
  // The seed must match the loader's (another seed is another data order, not a position).
  void load_state(const DataLoaderState& s) {
    const int64_t nb = size();
    if (s.seed != shared().opt.seed)
      throw Error(TSR_INVALID_ARGUMENT, "DataLoader::load_state: state has seed " + std::to_string(s.seed) +
                                            ", this loader was built with seed " + std::to_string(shared_->opt.seed));
    if (s.next_batch < 0 || s.next_batch > nb)
      throw Error(TSR_OUT_OF_RANGE, "DataLoader::load_state: batch " + std::to_string(s.next_batch) +
                                        " out of range (" + std::to_string(nb) + " batches per epoch)");
    stop_active();
    std::lock_guard<std::mutex> lk(shared_->mu);
    shared_->epoch = s.epoch;
    shared_->next_batch = s.next_batch;
  }

  // The state as 0-dim int64 tensors "seed", "epoch", "next_batch" (the seed's and epoch's
  // bits reinterpreted as signed), for a checkpoint's StateDict.
  StateDict state_dict() const {
    DataLoaderState s = state();
    StateDict sd;
    RuntimeScope scope(shared_->rt);
    sd.insert("seed", from_vector(std::vector<int64_t>{static_cast<int64_t>(s.seed)}, {}));
    sd.insert("epoch", from_vector(std::vector<int64_t>{static_cast<int64_t>(s.epoch)}, {}));
    sd.insert("next_batch", from_vector(std::vector<int64_t>{s.next_batch}, {}));
    return sd;
  }
  void load_state_dict(const StateDict& sd) {
    DataLoaderState s;
    const char* keys[] = {"seed", "epoch", "next_batch"};
    int64_t v[3];
    for (int i = 0; i < 3; ++i) {
      if (!sd.contains(keys[i]))
        throw Error(TSR_NOT_FOUND, std::string("DataLoader::load_state_dict: missing key '") + keys[i] + "'");
      const Tensor& t = sd.at(keys[i]);
      if (t.numel() != 1 || t.dtype() != TSR_I64)
        throw Error(TSR_INVALID_ARGUMENT, std::string("DataLoader::load_state_dict: '") + keys[i] +
                                              "' must be one int64 value, got " + describe(t));
      v[i] = t.item<int64_t>();
    }
    s.seed = static_cast<uint64_t>(v[0]);
    s.epoch = static_cast<uint64_t>(v[1]);
    s.next_batch = v[2];
    load_state(s);
  }

 private:
  detail::LoaderShared& shared() const {
    if (!shared_) throw Error(TSR_FAILED_PRECONDITION, "DataLoader: use of a moved-from loader");
    return *shared_;
  }
  void stop_active() {
    if (auto p = active_.lock()) p->shutdown();
    active_.reset();
  }

  std::shared_ptr<detail::LoaderShared> shared_;
  std::weak_ptr<detail::Pass> active_;
};

}  // namespace tsr::data
