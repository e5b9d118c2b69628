// Bad input gives a status naming the op, the shapes and the device; nothing is written.
#include <gtest/gtest.h>

#include "tessera/tessera.hpp"

using tsr::Tensor;

template <class F>
static std::string error_of(F&& f) {
  try {
    f();
  } catch (const tsr::Error& e) {
    return e.what();
  }
  return "";
}

TEST(Errors, ShapeMismatchInMatmul) {
  Tensor a = tsr::ones({2, 3}), b = tsr::ones({4, 5});
  std::string m = error_of([&] { tsr::mm(a, b); });
  EXPECT_NE(m.find("mm"), std::string::npos) << m;
  EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
  EXPECT_NE(m.find("[4, 5]"), std::string::npos) << m;
  m = error_of([&] { tsr::matmul(a, b); });
  EXPECT_NE(m.find("matmul"), std::string::npos) << m;
}

TEST(Errors, DimOutOfRange) {
  Tensor a = tsr::ones({2, 3});
  std::string m = error_of([&] { tsr::sum(a, {2}); });
  EXPECT_NE(m.find("sum"), std::string::npos) << m;
  EXPECT_NE(m.find("out of range"), std::string::npos) << m;
  m = error_of([&] { tsr::softmax(a, -3); });
  EXPECT_NE(m.find("softmax"), std::string::npos) << m;
  m = error_of([&] { tsr::argmax(a, 5); });
  EXPECT_NE(m.find("argmax"), std::string::npos) << m;
}

TEST(Errors, WrongDtype) {
  Tensor i = tsr::from_vector(std::vector<int64_t>{1, 2});
  std::string m = error_of([&] { tsr::softmax(i, 0); });
  EXPECT_NE(m.find("softmax"), std::string::npos) << m;
  EXPECT_NE(m.find("int64"), std::string::npos) << m;
  m = error_of([&] { tsr::mean(i); });
  EXPECT_NE(m.find("mean"), std::string::npos) << m;
  Tensor b = tsr::full({2}, 1, TSR_BOOL);
  m = error_of([&] { tsr::neg(b); });
  EXPECT_NE(m.find("neg"), std::string::npos) << m;
  m = error_of([&] { tsr::mm(tsr::ones({2, 2}), tsr::ones({2, 2}, TSR_F64)); });
  EXPECT_NE(m.find("float32"), std::string::npos) << m;
  EXPECT_NE(m.find("float64"), std::string::npos) << m;
}

TEST(Errors, MixedDevicesAreRejected) {
  Tensor a = tsr::ones({3}, TSR_F32, tsr::Device::cpu(0));
  Tensor b = tsr::ones({3}, TSR_F32, tsr::Device::cpu(1));  // TESSERA_CPU_DEVICES=2 in CTest
  std::string m = error_of([&] { tsr::add(a, b); });
  EXPECT_NE(m.find("add"), std::string::npos) << m;
  EXPECT_NE(m.find("cpu:0"), std::string::npos) << m;
  EXPECT_NE(m.find("cpu:1"), std::string::npos) << m;
  // An explicit copy works, as in PyTorch.
  Tensor c = a + b.to(tsr::Device::cpu(0));
  EXPECT_EQ(c.to_vector<float>(), (std::vector<float>{2, 2, 2}));
  // A device that does not exist.
  m = error_of([&] { tsr::ones({3}, TSR_F32, tsr::Device::cpu(7)); });
  EXPECT_NE(m.find("cpu:7"), std::string::npos) << m;
}

TEST(Errors, OutTensorMismatchLeavesItUntouched) {
  Tensor a = tsr::ones({2, 3});
  Tensor out = tsr::full({3, 2}, 42.0);
  static const tsr::Op add("add");
  std::string m = error_of([&] { tsr::call_out(add, out, {a, a}); });
  EXPECT_NE(m.find("out"), std::string::npos) << m;
  for (float v : out.to_vector<float>()) EXPECT_EQ(v, 42.0f);
  // A matching out= tensor is written in place.
  Tensor good = tsr::zeros({2, 3});
  tsr::call_out(add, good, {a, a});
  for (float v : good.to_vector<float>()) EXPECT_EQ(v, 2.0f);
}

TEST(Errors, BadArgumentsToOpCall) {
  static const tsr::Op add("add");
  std::string m = error_of([&] { tsr::call(add, {1.0, 2.0}); });
  EXPECT_NE(m.find("add"), std::string::npos) << m;
  EXPECT_NE(m.find("Tensor"), std::string::npos) << m;
  m = error_of([&] { tsr::call("no_such_op", {1}); });
  EXPECT_NE(m.find("no_such_op"), std::string::npos) << m;
  m = error_of([&] { tsr::empty({2, -1}); });
  EXPECT_NE(m.find("negative"), std::string::npos) << m;
}
