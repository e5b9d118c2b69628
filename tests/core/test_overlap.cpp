// Overlapping memory (issue 18, item 4): every tensor an op writes (an in-place self, an out=
// tensor, copy_'s destination) is checked by the dispatcher, as PyTorch's MemoryOverlap does.
//  - A written tensor in which several elements share one memory location (a stride-0 dim of
//    size > 1, overlapping windows) is refused: the result would depend on which write wins.
//  - A written tensor that partially overlaps an input (same memory, not the identical view) is
//    refused: the kernel would read elements it has already overwritten.
//  - Full overlap (the identical view: add_(x, x), add(x, x, out=x), x.copy_(x)) is allowed,
//    and so are views of one storage that share no memory (x[:2] and x[2:]).
// A refused call is INVALID_ARGUMENT naming the op, and writes nothing.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tessera/tessera.hpp"

using tsr::Tensor;

namespace {

// Runs f, which must throw INVALID_ARGUMENT naming `op` and the overlap; returns the message.
template <class F>
std::string expect_overlap_error(const char* op, F&& f) {
  try {
    f();
  } catch (const tsr::Error& e) {
    std::string msg = e.what();
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT) << msg;
    EXPECT_EQ(msg.rfind(std::string(op) + ":", 0), 0u) << "the message should start with '" << op << ":': " << msg;
    EXPECT_NE(msg.find("unsupported operation"), std::string::npos) << msg;
    EXPECT_NE(msg.find("refer"), std::string::npos) << msg;
    EXPECT_NE(msg.find("clone()"), std::string::npos) << msg;
    return msg;
  }
  ADD_FAILURE() << op << ": expected an overlap error, the call succeeded";
  return {};
}

std::vector<float> twice(const std::vector<float>& v) {
  std::vector<float> r(v);
  for (float& x : r) x *= 2;
  return r;
}

static const tsr::Op op_add("add"), op_neg("neg"), op_mm("mm"), op_cat("cat");

}  // namespace

// dst = x[1:], src = x[:-1] over 1M elements: the copy read elements it had already written
// (and called memcpy with overlapping ranges).
TEST(Overlap, CopyShiftedByOneIsRefused) {
  tsr::manual_seed(1);
  const int64_t n = 1 << 20;
  Tensor x = tsr::randn({n});
  std::vector<float> before = x.to_vector<float>();
  Tensor dst = x.slice(0, 1, n), src = x.slice(0, 0, n - 1);
  std::string msg = expect_overlap_error("copy_", [&] { dst.copy_(src); });
  EXPECT_NE(msg.find("some elements of the input tensor and the written-to tensor refer to a single memory location"),
            std::string::npos)
      << msg;
  EXPECT_EQ(x.to_vector<float>(), before);  // nothing written
  // The other direction too.
  expect_overlap_error("copy_", [&] { src.copy_(dst); });
  EXPECT_EQ(x.to_vector<float>(), before);
}

// add(x, x, out=y) with y a view overlapping x: the kernel read the sums it had written.
TEST(Overlap, OutPartiallyOverlappingAnInputIsRefused) {
  tsr::manual_seed(2);
  Tensor x = tsr::randn({6});
  std::vector<float> before = x.to_vector<float>();
  Tensor in = x.slice(0, 0, 4), out = x.slice(0, 2, 6);
  std::string msg = expect_overlap_error("add", [&] { tsr::call_out(op_add, out, {in, in, 1}); });
  EXPECT_NE(msg.find("some elements of the input tensor and the written-to tensor refer to a single memory location"),
            std::string::npos)
      << msg;
  EXPECT_EQ(x.to_vector<float>(), before);
  // The same for other kinds of op: a unary kernel, a matrix product, a list input.
  expect_overlap_error("neg", [&] { tsr::call_out(op_neg, out, {in}); });
  Tensor m = tsr::randn({4, 4});
  std::vector<float> mbefore = m.to_vector<float>();
  Tensor a = m.slice(0, 0, 2).slice(1, 0, 2), mo = m.slice(0, 1, 3).slice(1, 1, 3);
  expect_overlap_error("mm", [&] { tsr::call_out(op_mm, mo, {a, a}); });
  expect_overlap_error("cat", [&] {
    tsr::call_out(op_cat, out, {std::vector<Tensor>{x.slice(0, 0, 2), x.slice(0, 4, 6)}, 0});
  });
  EXPECT_EQ(x.to_vector<float>(), before);
  EXPECT_EQ(m.to_vector<float>(), mbefore);
  // Strided views shifted by one step share all but one element.
  Tensor y = tsr::randn({10});
  std::vector<float> ybefore = y.to_vector<float>();
  Tensor ys = y.slice(0, 0, 8, 2), yd = y.slice(0, 2, 10, 2);
  expect_overlap_error("add", [&] { tsr::call_out(op_add, yd, {ys, ys, 1}); });
  expect_overlap_error("copy_", [&] { yd.copy_(ys); });
  EXPECT_EQ(y.to_vector<float>(), ybefore);
}

// add_ into an expanded view: every row is the same memory, the last row won.
TEST(Overlap, WritingASelfOverlappingTensorIsRefused) {
  tsr::manual_seed(3);
  Tensor base = tsr::randn({1, 3});
  std::vector<float> before = base.to_vector<float>();
  Tensor e = base.expand({4, 3});
  Tensor other = tsr::randn({4, 3});
  std::string msg = expect_overlap_error("add_", [&] { tsr::add_(e, other); });
  EXPECT_NE(msg.find("more than one element of the written-to tensor refers to a single memory location"),
            std::string::npos)
      << msg;
  EXPECT_EQ(base.to_vector<float>(), before);
  // As an out= tensor, and as copy_'s destination.
  expect_overlap_error("add", [&] { tsr::call_out(op_add, e, {other, other, 1}); });
  expect_overlap_error("copy_", [&] { e.copy_(other); });
  // Overlapping windows (stride 1 in both dims) overlap without any stride 0.
  Tensor w = tsr::randn({4});
  std::vector<float> wbefore = w.to_vector<float>();
  Tensor win = w.as_strided({2, 3}, {1, 1}, 0);
  expect_overlap_error("add_", [&] { tsr::add_(win, 1.0); });
  EXPECT_EQ(base.to_vector<float>(), before);
  EXPECT_EQ(w.to_vector<float>(), wbefore);
}

// The identical view on both sides is the ordinary in-place case.
TEST(Overlap, FullOverlapIsAllowed) {
  tsr::manual_seed(4);
  Tensor x = tsr::randn({5, 7});
  std::vector<float> v = x.to_vector<float>();
  tsr::add_(x, x);
  EXPECT_EQ(x.to_vector<float>(), twice(v));
  v = x.to_vector<float>();
  tsr::call_out(op_add, x, {x, x, 1});
  EXPECT_EQ(x.to_vector<float>(), twice(v));
  v = x.to_vector<float>();
  x.copy_(x);
  EXPECT_EQ(x.to_vector<float>(), v);
  // Two distinct handles of the same view are the same memory too.
  Tensor y = x.slice(0, 0, 5);
  tsr::call_out(op_add, y, {x, x, 1});
  EXPECT_EQ(x.to_vector<float>(), twice(v));
  // A strided view written in place.
  Tensor b = tsr::randn({4, 6});
  std::vector<float> bv = b.to_vector<float>();
  Tensor col = b.slice(1, 1, 6, 2);
  tsr::add_(col, col);
  std::vector<float> got = b.to_vector<float>();
  for (int i = 0; i < 24; ++i) EXPECT_EQ(got[i], (i % 6) % 2 == 1 ? 2 * bv[i] : bv[i]) << i;
}

// Views of one storage that share no memory may be read and written in one call.
TEST(Overlap, DisjointViewsOfOneStorageAreAllowed) {
  tsr::manual_seed(5);
  Tensor x = tsr::randn({4});
  std::vector<float> v = x.to_vector<float>();
  Tensor lo = x.slice(0, 0, 2), hi = x.slice(0, 2, 4);
  tsr::call_out(op_add, hi, {lo, lo, 1});
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{v[0], v[1], 2 * v[0], 2 * v[1]}));
  tsr::add_(lo, hi);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{3 * v[0], 3 * v[1], 2 * v[0], 2 * v[1]}));
  hi.copy_(lo);
  EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{3 * v[0], 3 * v[1], 3 * v[0], 3 * v[1]}));
  // Interleaved views (even and odd elements) span the same bytes but share no element.
  Tensor y = tsr::randn({8});
  std::vector<float> yv = y.to_vector<float>();
  Tensor even = y.slice(0, 0, 8, 2), odd = y.slice(0, 1, 8, 2);
  tsr::call_out(op_add, odd, {even, even, 1});
  std::vector<float> got = y.to_vector<float>();
  for (int i = 0; i < 8; ++i) EXPECT_EQ(got[i], i % 2 ? 2 * yv[i - 1] : yv[i]) << i;
  odd.copy_(even);
  got = y.to_vector<float>();
  for (int i = 0; i < 8; i += 2) EXPECT_EQ(got[i + 1], got[i]) << i;
}

// Reading a self-overlapping tensor is fine, and so is filling one (every write is the same value).
TEST(Overlap, SelfOverlappingInputsAndFillAreAllowed) {
  tsr::manual_seed(6);
  Tensor row = tsr::randn({1, 3});
  std::vector<float> r = row.to_vector<float>();
  Tensor e = row.expand({2, 3});
  Tensor out = tsr::zeros({2, 3});
  tsr::call_out(op_add, out, {e, e, 1});
  std::vector<float> got = out.to_vector<float>();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], 2 * r[i % 3]) << i;
  Tensor c = tsr::zeros({2, 3});
  c.copy_(e);
  got = c.to_vector<float>();
  for (int i = 0; i < 6; ++i) EXPECT_EQ(got[i], r[i % 3]) << i;
  e.fill_(1.5);
  EXPECT_EQ(row.to_vector<float>(), (std::vector<float>{1.5f, 1.5f, 1.5f}));
}
