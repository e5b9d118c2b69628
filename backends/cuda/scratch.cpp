// Scratch: temporary device memory for kernels, as a u8 tensor from the core's allocator of the
// kernel's device. The tensor is allocated for the calling thread's current stream of that
// device (the stream the kernel enqueues on), so the caching allocator orders its reuse after
// the work enqueued there: releasing it right after the launch is safe.
#include "device_internal.hpp"

namespace tsr::cuda {

Scratch::Scratch(const KernelCall& c, size_t nbytes) : api_(c.api()), size_(nbytes) {
  if (nbytes == 0) return;  // data() stays NULL: nothing to allocate
  const int64_t sizes[1] = {static_cast<int64_t>(nbytes)};
  tsr_status_t st = api_->tensor_empty(c.runtime(), 1, sizes, TSR_U8, c.device(), &t_);
  if (st) {
    const tsr_code_t code = api_->status_code(st);
    const std::string msg = api_->status_message(st);
    api_->status_free(st);
    fail(code, c.op_name(), ": scratch memory of ", nbytes, " bytes on cuda:", c.device().index, ": ", msg);
  }
  data_ = api_->tensor_data(t_);
}

Scratch::~Scratch() {
  if (t_) api_->tensor_release(t_);
}

}  // namespace tsr::cuda
