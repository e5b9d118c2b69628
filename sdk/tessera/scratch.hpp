// Tessera SDK (vendor side): temporary device memory for a kernel, from the core's allocator of the
// kernel's device.
//
//   tsr::Scratch ws(call, nbytes);   // ws.data(): nbytes on call.device(); NULL when nbytes is 0
//
// The memory is a u8 tensor allocated for the calling thread's current stream of that device
// (the stream the kernel enqueues on), so a stream-ordered caching allocator (the CUDA backend's)
// orders its reuse after the work enqueued there: releasing it right after the launch is safe.
// Keep it alive until the work using it is enqueued, no longer. An allocation failure throws
// tsr::Error with the allocator's code (RESOURCE_EXHAUSTED for out of memory), naming the op,
// the size and the device. Not copyable.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "tessera/plugin.hpp"

namespace tsr {

class Scratch {
 public:
  Scratch(const KernelCall& c, size_t nbytes) : api_(c.api()), size_(nbytes) {
    if (nbytes == 0) return;
    const int64_t sizes[1] = {static_cast<int64_t>(nbytes)};
    if (tsr_status_t st = api_->tensor_empty(c.runtime(), 1, sizes, TSR_U8, c.device(), &t_)) {
      const tsr_code_t code = api_->status_code(st);
      const std::string msg = api_->status_message(st);
      api_->status_free(st);
      const char* type = api_->device_type_name(c.runtime(), c.device().type);
      fail(code, c.op_name(), ": scratch memory of ", nbytes, " bytes on ", type ? type : "device", ":",
           c.device().index, ": ", msg);
    }
    data_ = api_->tensor_data(t_);
  }
  ~Scratch() {
    if (t_) api_->tensor_release(t_);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  void* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  const tsr_api_t* api_ = nullptr;
  tsr_tensor_t* t_ = nullptr;
  void* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tsr
