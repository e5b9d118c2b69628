// Shape family tests: cat/stack/..., split/chunk/unbind, flatten/movedim, flip, roll, repeat,
// tile, repeat_interleave. Data movement is exact, so results are compared with tolerance 0
// against references computed here from the input's values by index arithmetic.
#include "shape_test_util.hpp"

namespace tsr::optest {
namespace {

TEST(ShapeOps, CatValuesDimsAndDtypes) {
  for (tsr_dtype_t dt : all_dtypes()) {
    Tensor a = sample({2, 3, 4}, dt, 1), b = sample({2, 1, 4}, dt, 2), c = sample({2, 0, 4}, dt, 3);
    for (int64_t dim : {1, -2}) {
      Tensor r = cat({a, b, c}, dim);
      EXPECT_EQ(r.dtype(), dt);
      EXPECT_TRUE(close(r, ref_cat({a, b, c}, 1), {2, 4, 4}, 0, 0)) << dtype_name(dt);
    }
    Tensor a0 = sample({3, 2}, dt, 4), b0 = sample({5, 2}, dt, 5);
    EXPECT_TRUE(close(cat({a0, b0}, 0), ref_cat({a0, b0}, 0), {8, 2}, 0, 0));
    EXPECT_TRUE(close(cat({a0, noncontig(b0)}, 0), ref_cat({a0, b0}, 0), {8, 2}, 0, 0));
    Tensor a2 = sample({3, 7}, dt, 6);
    EXPECT_TRUE(close(cat({noncontig(a0), a2}, -1), ref_cat({a0, a2}, 1), {3, 9}, 0, 0));
  }
}

TEST(ShapeOps, CatPromotionLegacyEmptyAndOut) {
  Tensor i = sample({2, 2}, TSR_I32, 1), f = sample({2, 3}, TSR_F32, 2), h = sample({2, 1}, TSR_F16, 3);
  Tensor r = cat({i, f, h}, 1);
  EXPECT_EQ(r.dtype(), TSR_F32);
  EXPECT_TRUE(close(r, ref_cat({i, f, h}, 1), {2, 6}, 0, 0));
  EXPECT_EQ(cat({sample({2}, TSR_BOOL, 1), sample({3}, TSR_U8, 2)}).dtype(), TSR_U8);
  EXPECT_EQ(cat({sample({2}, TSR_I8, 1), sample({3}, TSR_U8, 2)}).dtype(), TSR_I16);
  // 1-D empty tensors are skipped whatever the other shapes (still promote).
  Tensor e = empty({0}, TSR_F64);
  Tensor x = sample({2, 3}, TSR_F32, 4);
  Tensor y = cat({e, x, e}, 1);
  EXPECT_EQ(y.dtype(), TSR_F64);
  EXPECT_TRUE(close(y, values(x), {2, 3}, 0, 0));
  EXPECT_EQ(cat({e, e}).sizes(), Shape({0}));
  // out=: written in place; a wrong shape is rejected before anything is written.
  Tensor out = full({2, 6}, 7.0, TSR_F32);
  static const Op op("cat");
  call_out(op, out, {std::vector<Tensor>{i, f, h}, int64_t{1}});
  EXPECT_TRUE(close(out, ref_cat({i, f, h}, 1), {2, 6}, 0, 0));
  Tensor bad = full({2, 5}, 7.0, TSR_F32);
  EXPECT_TRUE(throws_with([&] { call_out(op, bad, {std::vector<Tensor>{i, f, h}, int64_t{1}}); }, {"cat"}));
  EXPECT_TRUE(close(bad, std::vector<double>(10, 7.0), {2, 5}, 0, 0));
}

// Inputs that are contiguous blocks of the output (cat along dim 0, or along a later dim when
// the dims before it have one element) take one raw copy each: every dtype, zero-size and 1-D
// empty inputs among them, against the reference.
TEST(ShapeOps, CatOfContiguousBlocks) {
  for (tsr_dtype_t dt : all_dtypes()) {
    Tensor a = sample({1, 2, 3}, dt, 7), b = sample({1, 4, 3}, dt, 8), z = sample({1, 0, 3}, dt, 9);
    Tensor e = empty({0}, dt);
    EXPECT_TRUE(close(cat({e, a, z, b, e}, 1), ref_cat({a, z, b}, 1), {1, 6, 3}, 0, 0)) << dtype_name(dt);
    Tensor p = sample({3, 5}, dt, 10), q = sample({0, 5}, dt, 11), r = sample({2, 5}, dt, 12);
    EXPECT_TRUE(close(cat({p, q, r, p}, 0), ref_cat({p, q, r, p}, 0), {8, 5}, 0, 0)) << dtype_name(dt);
    // A view that is contiguous but starts inside its storage.
    Tensor tail = r.narrow(0, 1, 1);
    EXPECT_TRUE(close(cat({tail, p}, 0), ref_cat({tail, p}, 0), {4, 5}, 0, 0)) << dtype_name(dt);
  }
}

TEST(ShapeOps, CatErrors) {
  Tensor a = sample({2, 3}, TSR_F32, 1), b = sample({2, 4}, TSR_F32, 2), c = sample({3, 4}, TSR_F32, 3);
  EXPECT_TRUE(throws_with([&] { cat({a, b, c}, 1); }, {"cat", "tensor 2", "[3, 4]", "[2, 3]", "dimension 1"}));
  EXPECT_TRUE(throws_with([&] { cat({a, sample({2, 3, 1}, TSR_F32, 4)}, 0); }, {"cat", "tensor 1", "[2, 3, 1]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        cat({a, scalar_tensor(1.0, TSR_F32, false)}, 0);
      },
      {"cat", "zero-dimensional", "position 1"}));
  EXPECT_TRUE(throws_with([&] { cat({}, 0); }, {"cat", "non-empty"}));
  EXPECT_TRUE(throws_with([&] { cat({a, a}, 2); }, {"cat", "out of range", "2"}));
}

TEST(ShapeOps, CatGradients) {
  Tensor a = randu({2, 3}, 1), b = randu({2, 2}, 2), c = randu({2, 1}, 3);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return cat({in[0], in[1], in[2]}, 1); }, {a, b, c}));
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) {
        return cat({in[0], noncontig(in[1]), in[0]}, -1);
      },
      {a, b}));
  // An integer input takes no gradient; the float ones still do.
  Tensor i = sample({2, 2}, TSR_I64, 4);
  EXPECT_TRUE(gradcheck([&](const std::vector<Tensor>& in) { return cat({in[0], i}, 1); }, {a}));
}

TEST(ShapeOps, StackFamily) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_BOOL, TSR_BF16, TSR_I64}) {
    Tensor a = sample({2, 3}, dt, 1), b = sample({2, 3}, dt, 2);
    for (int64_t d : {0, 1, 2, -1}) {
      int64_t w = d < 0 ? d + 3 : d;
      Tensor r = stack({a, noncontig(b)}, d);
      EXPECT_TRUE(close(r, ref_cat({a.unsqueeze(w), b.unsqueeze(w)}, w), r.sizes(), 0, 0));
      EXPECT_EQ(r.dim(), 3);
      EXPECT_EQ(r.size(w), 2);
    }
  }
  Tensor a = randu({2, 3}, 1), b = randu({2, 3}, 2), v = randu({3}, 3), w = randu({4}, 4);
  EXPECT_TRUE(throws_with([&] { stack({a, v}); }, {"stack", "[2, 3]", "[3]", "entry 1"}));
  EXPECT_TRUE(close(hstack({v, w}), ref_cat({v, w}, 0), {7}, 0, 0));
  EXPECT_TRUE(close(hstack({a, b}), ref_cat({a, b}, 1), {2, 6}, 0, 0));
  EXPECT_TRUE(close(vstack({v, v}), ref_cat({v.unsqueeze(0), v.unsqueeze(0)}, 0), {2, 3}, 0, 0));
  EXPECT_TRUE(close(vstack({a, v}), ref_cat({a, v.unsqueeze(0)}, 0), {3, 3}, 0, 0));
  EXPECT_TRUE(close(dstack({a, b}), ref_cat({a.unsqueeze(2), b.unsqueeze(2)}, 2), {2, 3, 2}, 0, 0));
  EXPECT_EQ(dstack({v, v}).sizes(), Shape({1, 3, 2}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return stack({in[0], in[1]}, 1); }, {a, b}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return vstack({in[0], in[1]}); }, {a, v}));
}

TEST(ShapeOps, SplitChunkUnbind) {
  Tensor x = randu({7, 4}, 1);
  std::vector<Tensor> p = split(x, 3, 0);
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[2].sizes(), Shape({1, 4}));
  EXPECT_TRUE(close(cat(p, 0), values(x), {7, 4}, 0, 0));
  std::vector<Tensor> q = split_with_sizes(x, {1, 2, 1}, -1);
  ASSERT_EQ(q.size(), 3u);
  EXPECT_TRUE(close(q[1], values(x.narrow(1, 1, 2)), {7, 2}, 0, 0));
  EXPECT_TRUE(throws_with([&] { split_with_sizes(x, {1, 2}, 1); }, {"split_with_sizes", "4", "3"}));
  EXPECT_TRUE(throws_with([&] { split(x, 0, 0); }, {"split", "split_size"}));
  std::vector<Tensor> c = chunk(x, 3, 0);  // ceil(7/3) = 3 -> 3, 3, 1
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].size(0), 3);
  EXPECT_EQ(chunk(randu({6}, 2), 4).size(), 3u);  // 2, 2, 2 as torch
  std::vector<Tensor> u = unbind(x, 1);
  ASSERT_EQ(u.size(), 4u);
  EXPECT_TRUE(close(u[2], values(x.select(1, 2)), {7}, 0, 0));
  std::vector<Tensor> t = tensor_split(x, 3, 0);  // 3, 2, 2
  EXPECT_EQ(t[0].size(0), 3);
  EXPECT_EQ(t[2].size(0), 2);
  std::vector<Tensor> ti = tensor_split_indices(x, {2, 9}, 0);  // [0:2], [2:7], [7:]
  ASSERT_EQ(ti.size(), 3u);
  EXPECT_EQ(ti[1].size(0), 5);
  EXPECT_EQ(ti[2].size(0), 0);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return split(in[0], 3, 0)[1]; }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return unbind(in[0], 1)[3]; }, {x}));
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) {
        std::vector<Tensor> parts = chunk(in[0], 2, 1);
        return cat({parts[1], parts[0]}, 1);
      },
      {x}));
}

TEST(ShapeOps, FlattenUnflattenMovedimSwapaxes) {
  Tensor x = sample({2, 3, 5}, TSR_I32, 1);
  EXPECT_EQ(flatten(x).sizes(), Shape({30}));
  EXPECT_EQ(flatten(x, 1).sizes(), Shape({2, 15}));
  EXPECT_EQ(flatten(x, 0, -2).sizes(), Shape({6, 5}));
  EXPECT_TRUE(close(flatten(noncontig(x)), values(x), {30}, 0, 0));
  EXPECT_EQ(flatten(scalar_tensor(2.0, TSR_F32, false)).sizes(), Shape({1}));
  EXPECT_TRUE(throws_with([&] { flatten(x, 2, 1); }, {"flatten", "start_dim"}));
  EXPECT_EQ(unflatten(x, 2, {5, 1}).sizes(), Shape({2, 3, 5, 1}));
  EXPECT_EQ(unflatten(x, -2, {-1, 1}).sizes(), Shape({2, 3, 1, 5}));
  EXPECT_TRUE(throws_with([&] { unflatten(x, 1, {2, 2}); }, {"unflatten", "[2, 2]", "3"}));
  Tensor m = movedim(x, 0, -1);
  EXPECT_EQ(m.sizes(), Shape({3, 5, 2}));
  EXPECT_TRUE(close(m, values(x.permute({1, 2, 0}).contiguous()), {3, 5, 2}, 0, 0));
  EXPECT_EQ(movedim(x, std::vector<int64_t>{0, 1}, std::vector<int64_t>{2, 0}).sizes(), Shape({3, 5, 2}));
  EXPECT_TRUE(throws_with(
      [&] {
        movedim(x, std::vector<int64_t>{0, 0}, std::vector<int64_t>{1, 2});
      },
      {"movedim", "repeated"}));
  EXPECT_TRUE(close(swapaxes(x, 0, 2), values(x.transpose(0, 2).contiguous()), {5, 3, 2}, 0, 0));
  EXPECT_TRUE(close(swapdims(x, -1, 1), values(x.transpose(1, 2).contiguous()), {2, 5, 3}, 0, 0));
  EXPECT_TRUE(close(moveaxis(x, {2}, {0}), values(x.permute({2, 0, 1}).contiguous()), {5, 2, 3}, 0, 0));
  EXPECT_TRUE(throws_with([&] { swapaxes(x, 0, 3); }, {"swapaxes", "out of range", "3"}));
  Tensor f = randu({2, 3, 4}, 2);
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return flatten(noncontig(in[0]), 1); }, {f}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return movedim(in[0], 2, 0); }, {f}));
}

TEST(ShapeOps, Flip) {
  for (tsr_dtype_t dt : all_dtypes()) {
    Tensor x = sample({3, 4, 5}, dt, 7);
    for (const Shape& dims : {Shape{0}, Shape{2}, Shape{-1, 0}, Shape{0, 1, 2}, Shape{}}) {
      std::vector<bool> fl(3, false);
      for (int64_t d : dims) fl[static_cast<size_t>(d < 0 ? d + 3 : d)] = true;
      auto ref = ref_map(x, {3, 4, 5}, [&](std::vector<int64_t>& i) {
        for (size_t d = 0; d < 3; ++d)
          if (fl[d]) i[d] = x.size(static_cast<int64_t>(d)) - 1 - i[d];
        return true;
      });
      EXPECT_TRUE(close(flip(x, dims), ref, {3, 4, 5}, 0, 0)) << dtype_name(dt);
      EXPECT_TRUE(close(flip(noncontig(x), dims), ref, {3, 4, 5}, 0, 0)) << dtype_name(dt);
    }
  }
  Tensor v = randu({5}, 3);
  std::vector<double> rv = values(v);
  std::reverse(rv.begin(), rv.end());
  EXPECT_TRUE(close(flip(noncontig(v), {0}), rv, {5}, 0, 0));
  EXPECT_EQ(flip(empty({0, 3}), {0, 1}).sizes(), Shape({0, 3}));
  Tensor m = randu({3, 4}, 4);
  EXPECT_TRUE(close(fliplr(m), values(flip(m, {1})), {3, 4}, 0, 0));
  EXPECT_TRUE(close(flipud(m), values(flip(m, {0})), {3, 4}, 0, 0));
  EXPECT_TRUE(throws_with([&] { flip(m, {0, -2}); }, {"flip", "multiple times"}));
  EXPECT_TRUE(throws_with([&] { fliplr(v); }, {"fliplr", "[5]"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return flip(in[0], {0, 1}); }, {m}));
}

TEST(ShapeOps, Roll) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F16, TSR_BOOL, TSR_I8}) {
    Tensor x = sample({3, 5}, dt, 2);
    auto ref = [&](int64_t s0, int64_t s1) {
      return ref_map(x, {3, 5}, [&](std::vector<int64_t>& i) {
        i[0] = (((i[0] - s0) % 3) + 3) % 3;
        i[1] = (((i[1] - s1) % 5) + 5) % 5;
        return true;
      });
    };
    EXPECT_TRUE(close(roll(x, {2}, {1}), ref(0, 2), {3, 5}, 0, 0));
    EXPECT_TRUE(close(roll(noncontig(x), {-1, 7}, {0, -1}), ref(-1, 7), {3, 5}, 0, 0));
    EXPECT_TRUE(close(roll(x, {0}, {0}), ref(0, 0), {3, 5}, 0, 0));
    std::vector<double> flat = values(x), rolled(15);
    for (int64_t i = 0; i < 15; ++i) rolled[static_cast<size_t>((i + 4) % 15)] = flat[static_cast<size_t>(i)];
    EXPECT_TRUE(close(roll(x, {4}), rolled, {3, 5}, 0, 0));
  }
  Tensor x = randu({3, 4}, 5);
  EXPECT_FALSE(roll(x, {0}, {0}).shares_storage(x));
  EXPECT_TRUE(throws_with([&] { roll(x, {1, 2}, {0}); }, {"roll", "[1, 2]", "[0]"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return roll(in[0], {1, -3}, {0, 1}); }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return roll(in[0], {5}); }, {x}));
}

TEST(ShapeOps, RepeatAndTile) {
  for (tsr_dtype_t dt : {TSR_F32, TSR_BF16, TSR_BOOL, TSR_I16}) {
    Tensor x = sample({2, 3}, dt, 3);
    auto r = repeat(noncontig(x), {2, 1, 3});
    auto ref = ref_map(x, {2, 2, 9}, [&](std::vector<int64_t>& i) {
      i = {i[1] % 2, i[2] % 3};
      return true;
    });
    EXPECT_TRUE(close(r, ref, {2, 2, 9}, 0, 0)) << dtype_name(dt);
    EXPECT_TRUE(close(tile(x, {3}), values(repeat(x, {1, 3})), {2, 9}, 0, 0));
  }
  Tensor x = randu({2, 3}, 4);
  EXPECT_EQ(repeat(x, {0, 2}).sizes(), Shape({0, 6}));
  EXPECT_FALSE(repeat(x, {1, 1}).shares_storage(x));
  EXPECT_TRUE(throws_with([&] { repeat(x, {2}); }, {"repeat", "[2]", "[2, 3]"}));
  EXPECT_TRUE(throws_with([&] { repeat(x, {2, -1}); }, {"repeat", "negative"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return repeat(in[0], {2, 1, 2}); }, {x}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return tile(in[0], {2}); }, {x}));
}

TEST(ShapeOps, RepeatInterleave) {
  for (tsr_dtype_t dt : {TSR_F64, TSR_F16, TSR_BOOL, TSR_U8}) {
    Tensor x = sample({3, 2}, dt, 5);
    auto ref = ref_map(x, {6, 2}, [](std::vector<int64_t>& i) {
      i[0] /= 2;
      return true;
    });
    EXPECT_TRUE(close(repeat_interleave(x, 2, 0), ref, {6, 2}, 0, 0));
    Tensor reps = from_vector<int64_t>({1, 0, 3});
    const int64_t map[4] = {0, 2, 2, 2};
    auto ref2 = ref_map(x, {4, 2}, [&](std::vector<int64_t>& i) {
      i[0] = map[i[0]];
      return true;
    });
    EXPECT_TRUE(close(repeat_interleave(noncontig(x), reps, 0), ref2, {4, 2}, 0, 0));
    EXPECT_TRUE(close(repeat_interleave(x, 2), values(repeat_interleave(flatten(x), 2, 0)), {12}, 0, 0));
  }
  EXPECT_TRUE(close(repeat_interleave(from_vector<int64_t>({2, 0, 1})), {0, 0, 2}, {3}, 0, 0));
  EXPECT_EQ(repeat_interleave(from_vector<int32_t>({2, 1})).dtype(), TSR_I32);
  Tensor x = randu({3, 2}, 6);
  EXPECT_TRUE(throws_with(
      [&] {
        repeat_interleave(x, from_vector<int64_t>({1, 2}), 0);
      },
      {"repeat_interleave", "[2]", "[3, 2]"}));
  EXPECT_TRUE(throws_with(
      [&] {
        repeat_interleave(x, from_vector<int64_t>({1, -2, 1}), 0);
      },
      {"repeat_interleave", "-2"}));
  EXPECT_TRUE(throws_with([&] { repeat_interleave(x, 2, 0, 5); }, {"repeat_interleave", "output_size", "6"}));
  EXPECT_TRUE(gradcheck([](const std::vector<Tensor>& in) { return repeat_interleave(in[0], 3, 1); }, {x}));
  EXPECT_TRUE(gradcheck(
      [](const std::vector<Tensor>& in) {
        return repeat_interleave(in[0], from_vector<int64_t>({2, 0, 1}), 0);
      },
      {x}));
}

TEST(ShapeOps, EmptyInputs) {
  Tensor e = sample({2, 0, 3}, TSR_F32, 1);
  EXPECT_EQ(cat({e, e}, 1).sizes(), Shape({2, 0, 3}));
  EXPECT_EQ(cat({e, sample({2, 4, 3}, TSR_F32, 2)}, 1).sizes(), Shape({2, 4, 3}));
  EXPECT_EQ(stack({e, e}, 0).sizes(), Shape({2, 2, 0, 3}));
  EXPECT_EQ(flip(e, {0, 1, 2}).sizes(), Shape({2, 0, 3}));
  EXPECT_EQ(roll(e, {1, 2}, {1, 2}).sizes(), Shape({2, 0, 3}));
  EXPECT_EQ(repeat(e, {2, 2, 2}).sizes(), Shape({4, 0, 6}));
  EXPECT_EQ(tile(e, {3}).sizes(), Shape({2, 0, 9}));
  EXPECT_EQ(repeat_interleave(e, 2, 1).sizes(), Shape({2, 0, 3}));
  EXPECT_EQ(flatten(e, 1).sizes(), Shape({2, 0}));
  EXPECT_EQ(movedim(e, 1, 0).sizes(), Shape({0, 2, 3}));
  EXPECT_EQ(split(e, 2, 1).size(), 1u);
  EXPECT_EQ(unbind(e, 1).size(), 0u);
  EXPECT_EQ(chunk(e, 3, 1).size(), 3u);
}

TEST(ShapeOps, GradientEdgeCases) {
  // A skipped legacy-empty input that requires grad gets an empty gradient.
  Tensor e = empty({0}, TSR_F64).requires_grad_();
  Tensor x = randu({2, 3}, 1).requires_grad_();
  Tensor y = cat({e, x}, 1);
  std::vector<Tensor> g = autograd::grad({y}, {e, x}, {randu({2, 3}, 2)}, false, false, true);
  EXPECT_EQ(g[0].sizes(), Shape({0}));
  EXPECT_EQ(g[1].sizes(), Shape({2, 3}));
  // Integer inputs of cat are simply not differentiated; the float result still records.
  Tensor i = sample({2, 1}, TSR_I32, 3);
  Tensor z = cat({x, i}, 1);
  EXPECT_EQ(z.dtype(), TSR_F64);
  EXPECT_TRUE(z.requires_grad());
  // create_graph: the gradient of a flip/cat chain is itself differentiable (w.r.t. the cotangent).
  Tensor cot = randu({2, 6}, 4).requires_grad_();
  std::vector<Tensor> g1 = autograd::grad({flip(cat({x, x}, 1), {1})}, {x}, {cot}, false, true, true);
  EXPECT_TRUE(g1[0].requires_grad());
  std::vector<double> cv = values(cot), gv = values(g1[0]);
  for (int64_t r = 0; r < 2; ++r)
    for (int64_t c = 0; c < 3; ++c)
      EXPECT_DOUBLE_EQ(gv[static_cast<size_t>(r * 3 + c)],
                       cv[static_cast<size_t>(r * 6 + 5 - c)] + cv[static_cast<size_t>(r * 6 + 2 - c)]);
  // out= with an input that requires grad is refused.
  Tensor out = empty({2, 6}, TSR_F64);
  static const Op op("cat");
  EXPECT_TRUE(throws_with([&] { call_out(op, out, {std::vector<Tensor>{x, x}, int64_t{1}}); }, {"cat", "out="}));
}

TEST(ShapeOps, NarrowCopy) {
  Tensor x = sample({4, 5}, TSR_I64, 1);
  Tensor y = narrow_copy(x, 1, 1, 3);
  EXPECT_FALSE(y.shares_storage(x));
  EXPECT_TRUE(close(y, values(x.narrow(1, 1, 3)), {4, 3}, 0, 0));
  EXPECT_TRUE(throws_with([&] { narrow_copy(x, 0, 2, 3); }, {"narrow_copy", "exceeds", "[4, 5]"}));
}

}  // namespace
}  // namespace tsr::optest
