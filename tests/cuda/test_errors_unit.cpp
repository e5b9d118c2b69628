// Unit tests of the CUDA backend's error bookkeeping (backends/cuda/errors.cpp compiled into the
// test): CUDA errors to statuses, op-name interning, the capture registry that refuses
// synchronizing calls. None of it needs a GPU: the CUDA runtime names errors without a driver,
// and the registry is plain bookkeeping over stream handles.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "device_internal.hpp"

using tsr::cuda::init_devices;

namespace {

cudaStream_t fake_stream(uintptr_t v) { return reinterpret_cast<cudaStream_t>(v); }

struct Caught {
  tsr_code_t code = TSR_OK;
  std::string msg;
};

template <class F>
Caught catch_error(F&& f) {
  Caught c;
  try {
    f();
  } catch (const tsr::Error& e) {
    c.code = e.code();
    c.msg = e.what();
  }
  return c;
}

class CudaErrorsUnit : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { init_devices(2); }  // bookkeeping for two (imaginary) devices
};

}  // namespace

TEST_F(CudaErrorsUnit, OutOfMemoryIsResourceExhausted) {
  const Caught c =
      catch_error([] { tsr::cuda::throw_cuda_error(cudaErrorMemoryAllocation, "empty", "cudaMalloc", 1); });
  EXPECT_EQ(c.code, TSR_RESOURCE_EXHAUSTED);
  EXPECT_NE(c.msg.find("empty: cudaMalloc failed on cuda:1: "), std::string::npos) << c.msg;
  EXPECT_NE(c.msg.find("cudaErrorMemoryAllocation"), std::string::npos) << c.msg;
  EXPECT_NE(c.msg.find(cudaGetErrorString(cudaErrorMemoryAllocation)), std::string::npos) << c.msg;
}

TEST_F(CudaErrorsUnit, OtherErrorsNameTheCall) {
  Caught c = catch_error([] { tsr::cuda::throw_cuda_error(cudaErrorInvalidValue, "softmax", "cudaMemcpyAsync", 0); });
  EXPECT_EQ(c.code, TSR_INVALID_ARGUMENT);
  EXPECT_NE(c.msg.find("softmax: cudaMemcpyAsync failed on cuda:0"), std::string::npos) << c.msg;
  c = catch_error([] { tsr::cuda::throw_cuda_error(cudaErrorNoKernelImageForDevice, "add", "kernel launch", 0); });
  EXPECT_EQ(c.code, TSR_INTERNAL);
  EXPECT_NE(c.msg.find("built for CUDA architectures"), std::string::npos) << c.msg;
  c = catch_error([] { tsr::cuda::throw_cuda_error(cudaErrorStreamCaptureUnsupported, "nonzero", "cudaMemcpy", 0); });
  EXPECT_EQ(c.code, TSR_FAILED_PRECONDITION);
  EXPECT_NE(c.msg.find("CUDA graph is being captured"), std::string::npos) << c.msg;
}

TEST_F(CudaErrorsUnit, AsynchronousFailuresNameTheLastOp) {
  Caught c =
      catch_error([] { tsr::cuda::throw_cuda_error(cudaErrorIllegalAddress, "mul", "cudaStreamSynchronize", 1); });
  EXPECT_EQ(c.code, TSR_INTERNAL);
  EXPECT_NE(c.msg.find("cuda:1: an earlier asynchronous operation failed: "), std::string::npos) << c.msg;
  EXPECT_NE(c.msg.find("no op launched"), std::string::npos) << c.msg;
  tsr::cuda::set_last_op(0, "index_select");
  c = catch_error([] { tsr::cuda::check_sync(0, cudaErrorLaunchFailure, "synchronize", "cudaDeviceSynchronize"); });
  EXPECT_EQ(c.code, TSR_INTERNAL);
  EXPECT_NE(c.msg.find("(last op launched: 'index_select')"), std::string::npos) << c.msg;
  EXPECT_NE(c.msg.find("restart the process"), std::string::npos) << c.msg;
  EXPECT_TRUE(tsr::cuda::is_async_error(cudaErrorIllegalAddress));
  EXPECT_FALSE(tsr::cuda::is_async_error(cudaErrorMemoryAllocation));
  // A successful call with no error record pending passes.
  EXPECT_NO_THROW(tsr::cuda::check_sync(0, cudaSuccess, "synchronize", "cudaDeviceSynchronize"));
}

TEST_F(CudaErrorsUnit, DeviceIndexIsChecked) {
  const Caught c = catch_error([] { tsr::cuda::check_device_index(2, "copy"); });
  EXPECT_EQ(c.code, TSR_INVALID_ARGUMENT);
  EXPECT_NE(c.msg.find("copy: cuda device index 2 is out of range (2 devices)"), std::string::npos) << c.msg;
  EXPECT_NO_THROW(tsr::cuda::check_device_index(1, "copy"));
}

TEST_F(CudaErrorsUnit, OpIdsAreInternedAcrossThreads) {
  const std::string a1 = "gather", a2 = "gather";  // same text, different addresses
  const int32_t id = tsr::cuda::error_op_id(a1.c_str());
  EXPECT_EQ(tsr::cuda::error_op_id(a2.c_str()), id);
  EXPECT_EQ(tsr::cuda::op_name_of_id(id), "gather");
  EXPECT_NE(tsr::cuda::error_op_id("scatter"), id);
  EXPECT_EQ(tsr::cuda::op_name_of_id(-5), "?");
  // A buffer reused for another name must not return the old id (the cache is keyed by pointer).
  char buf[32] = "embedding";
  const int32_t e = tsr::cuda::error_op_id(buf);
  std::snprintf(buf, sizeof(buf), "%s", "cumsum");
  EXPECT_NE(tsr::cuda::error_op_id(buf), e);
  EXPECT_EQ(tsr::cuda::op_name_of_id(tsr::cuda::error_op_id(buf)), "cumsum");
  std::vector<std::thread> ts;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; ++t)
    ts.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        const std::string n = "op" + std::to_string((i + t) % 17);
        if (tsr::cuda::op_name_of_id(tsr::cuda::error_op_id(n.c_str())) != n) ++bad;
      }
    });
  for (auto& th : ts) th.join();
  EXPECT_EQ(bad.load(), 0);
}

TEST_F(CudaErrorsUnit, CapturesRefuseSynchronizationAndRecordTheRefusal) {
  const cudaStream_t s = fake_stream(0x1230);
  EXPECT_FALSE(tsr::cuda::device_is_capturing(0));
  EXPECT_NO_THROW(tsr::cuda::refuse_if_capturing(0, "synchronize"));
  tsr::cuda::capture_started(0, s);
  EXPECT_TRUE(tsr::cuda::device_is_capturing(0));
  EXPECT_FALSE(tsr::cuda::device_is_capturing(1));
  EXPECT_TRUE(tsr::cuda::stream_is_capturing(0, s));
  EXPECT_FALSE(tsr::cuda::stream_is_capturing(0, fake_stream(0x4560)));
  // Another thread's refusal is reported to it but does not fail this capture.
  Caught other;
  std::thread([&] { other = catch_error([] { tsr::cuda::refuse_if_capturing(0, "stream_synchronize"); }); }).join();
  EXPECT_EQ(other.code, TSR_FAILED_PRECONDITION);
  EXPECT_NE(other.msg.find("cuda:0 stream_synchronize: not allowed while stream 0x1230 is capturing a CUDA graph"),
            std::string::npos)
      << other.msg;
  // The capturing thread's own refusal fails the capture.
  const Caught mine = catch_error([] { tsr::cuda::refuse_if_capturing(0, "synchronize"); });
  EXPECT_EQ(mine.code, TSR_FAILED_PRECONDITION);
  EXPECT_NE(mine.msg.find("cuda:0 synchronize: not allowed while stream 0x1230"), std::string::npos) << mine.msg;
  tsr::cuda::capture_failed(0, s, "a later failure is not the first");
  const std::string failure = tsr::cuda::capture_finished(0, s);
  EXPECT_EQ(failure, mine.msg);
  EXPECT_FALSE(tsr::cuda::device_is_capturing(0));
  EXPECT_NO_THROW(tsr::cuda::refuse_if_capturing(0, "synchronize"));
  EXPECT_EQ(tsr::cuda::capture_finished(0, s), "");  // not capturing any more
}

TEST_F(CudaErrorsUnit, LaunchFailuresFailTheirCaptureOnly) {
  const cudaStream_t s1 = fake_stream(0x1000), s2 = fake_stream(0x2000);
  tsr::cuda::capture_started(1, s1);
  tsr::cuda::capture_started(1, s2);
  tsr::cuda::capture_failed(1, s2, "softmax: kernel launch failed");
  EXPECT_EQ(tsr::cuda::capture_finished(1, s1), "");
  EXPECT_TRUE(tsr::cuda::device_is_capturing(1));
  EXPECT_EQ(tsr::cuda::capture_finished(1, s2), "softmax: kernel launch failed");
  EXPECT_FALSE(tsr::cuda::device_is_capturing(1));
}
