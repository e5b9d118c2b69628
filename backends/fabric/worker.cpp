// Work handles' shared outcome and the communication thread of groups whose engine blocks on
// other processes (group.hpp): with it a rank's all-reduce of one gradient bucket runs while
// backward computes the next, as ProcessGroupGloo's work queue does for PyTorch.
#include <chrono>

#include "group.hpp"

namespace fabric {

void WorkState::finish(tsr_code_t c, std::string m) {
  {
    std::lock_guard<std::mutex> lock(mu);
    code = c;
    message = std::move(m);
    done = true;
  }
  cv.notify_all();
}

bool WorkState::query() {
  std::unique_lock<std::mutex> lock(mu);
  if (done) return true;
  if (!completion) return false;
  lock.unlock();  // a stream completion may take a while to ask the device
  try {
    if (!completion->query()) return false;
    finish(TSR_OK, "");
  } catch (const Failure& f) {
    finish(f.code, f.message);
  }
  return true;
}

bool WorkState::wait(double timeout_seconds) {
  if (completion) {
    if (query()) return true;
    try {
      if (!completion->wait(timeout_seconds)) return false;
      finish(TSR_OK, "");
    } catch (const Failure& f) {
      finish(f.code, f.message);
    }
    return true;
  }
  std::unique_lock<std::mutex> lock(mu);
  if (timeout_seconds < 0) {
    cv.wait(lock, [&] { return done; });
    return true;
  }
  return cv.wait_for(lock, std::chrono::duration<double>(timeout_seconds), [&] { return done; });
}

struct Worker::Job {
  tsr_collective_args_t args{};
  std::vector<tsr_tensor_t*> inputs, outputs;  // the caller's arrays, copied
  std::shared_ptr<WorkState> state = std::make_shared<WorkState>();
};

Worker::Worker(Engine* engine) : engine_(engine), thread_([this] { loop(); }) {}

Worker::~Worker() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

std::shared_ptr<WorkState> Worker::enqueue(const tsr_collective_args_t& a) {
  auto job = std::make_unique<Job>();
  job->args = a;
  job->args.struct_size = sizeof(tsr_collective_args_t);
  const size_t n = a.num_tensors > 0 ? static_cast<size_t>(a.num_tensors) : 0;
  if (a.inputs) job->inputs.assign(a.inputs, a.inputs + n);
  if (a.outputs) job->outputs.assign(a.outputs, a.outputs + n);
  job->args.inputs = a.inputs ? job->inputs.data() : nullptr;
  job->args.outputs = a.outputs ? job->outputs.data() : nullptr;
  std::shared_ptr<WorkState> state = job->state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(job));
  }
  cv_.notify_one();
  return state;
}

void Worker::loop() {
  for (;;) {
    std::unique_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything queued has run
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    tsr_status_t st = guarded(kind_name(job->args.kind), [&] { engine_->run(job->args); });
    if (!st) {
      job->state->finish(TSR_OK, "");
    } else {
      job->state->finish(api()->status_code(st), api()->status_message(st));
      api()->status_free(st);
    }
  }
}

}  // namespace fabric
