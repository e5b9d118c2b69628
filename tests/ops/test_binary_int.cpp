// Binary family, integer and bool semantics: rounded division, remainder/fmod, pow, bitwise,
// shifts and logical ops for every integer dtype, integer division by zero, in-place variants,
// operators, isclose, and error messages.
#include <cmath>
#include <cstdint>
#include <limits>

#include "binary_test_util.hpp"

using namespace tsr;
using namespace tsr::optest;
using namespace tsr::binarytest;

namespace {

const std::vector<tsr_dtype_t> kInts = {TSR_U8, TSR_I8, TSR_I16, TSR_I32, TSR_I64};

int64_t bits_of(tsr_dtype_t dt) {
  switch (dt) {
    case TSR_U8:
    case TSR_I8:
      return 8;
    case TSR_I16:
      return 16;
    case TSR_I32:
      return 32;
    default:
      return 64;
  }
}

// v wrapped into dt's range (two's complement), as a double.
double wrap_to(double v, tsr_dtype_t dt) {
  int64_t x = static_cast<int64_t>(v);
  switch (dt) {
    case TSR_U8:
      return static_cast<uint8_t>(x);
    case TSR_I8:
      return static_cast<int8_t>(x);
    case TSR_I16:
      return static_cast<int16_t>(x);
    case TSR_I32:
      return static_cast<int32_t>(x);
    default:
      return static_cast<double>(x);
  }
}

int64_t floordiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t pymod(int64_t a, int64_t b) {
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Integer inputs for dt: dividends in a signed/unsigned range, divisors never zero.
Tensor ints(const Shape& s, uint64_t seed, tsr_dtype_t dt, bool nonzero) {
  bool u = dt == TSR_U8;
  Tensor t = randint(s, seed, u ? 1 : -60, 60);
  if (nonzero) {
    std::vector<double> v = values(t);
    for (double& x : v)
      if (x == 0) x = 7;
    t = from_vector(v, s).to(TSR_I64);
  }
  return t.to(dt);
}

void check_int_binary(const char* name, const std::function<Tensor(const Tensor&, const Tensor&)>& fn,
                      const std::function<double(int64_t, int64_t, tsr_dtype_t)>& ref, bool nonzero_b) {
  uint64_t seed = 40;
  for (tsr_dtype_t dt : kInts) {
    for (const auto& sp : shape_pairs()) {
      SCOPED_TRACE(std::string(name) + " " + dtype_name(dt));
      Tensor a = ints(sp.first, ++seed, dt, false), b = ints(sp.second, ++seed, dt, nonzero_b);
      Shape shape;
      std::vector<double> e = ref_nary(
          {a, b},
          [&](const std::vector<double>& x) { return ref(static_cast<int64_t>(x[0]), static_cast<int64_t>(x[1]), dt); },
          &shape);
      Tensor r = fn(a, b);
      EXPECT_EQ(r.dtype(), dt);
      EXPECT_TRUE(close(r, e, shape, 0, 0));
      if (a.dim() >= 1 && b.dim() >= 1) {
        EXPECT_TRUE(close(fn(noncontig(a), noncontig(b)), e, shape, 0, 0));
      }
      Tensor out = full(shape, 3.0, dt);
      call_multi(op_named(name), {a, b}, {out});
      EXPECT_TRUE(close(out, e, shape, 0, 0));
    }
  }
}

}  // namespace

TEST(BinaryOps, IntegerRoundedDivisionRemainderFmod) {
  check_int_binary(
      "floor_divide", [](const Tensor& a, const Tensor& b) { return floor_divide(a, b); },
      [](int64_t a, int64_t b, tsr_dtype_t dt) { return wrap_to(double(floordiv(a, b)), dt); }, true);
  check_int_binary(
      "remainder", [](const Tensor& a, const Tensor& b) { return remainder(a, b); },
      [](int64_t a, int64_t b, tsr_dtype_t) { return double(pymod(a, b)); }, true);
  check_int_binary(
      "fmod", [](const Tensor& a, const Tensor& b) { return fmod(a, b); },
      [](int64_t a, int64_t b, tsr_dtype_t) { return double(a % b); }, true);
  Tensor a = randint({9}, 1, -60, 60), b = ints({9}, 2, TSR_I64, true);
  std::vector<double> av = values(a), bv = values(b), t = values(div(a, b, "trunc"));
  for (size_t i = 0; i < av.size(); ++i) EXPECT_EQ(t[i], double(int64_t(av[i]) / int64_t(bv[i])));
  EXPECT_EQ(div(a, b, "trunc").dtype(), TSR_I64);
  EXPECT_EQ(div(a, b).dtype(), TSR_F32);
  EXPECT_EQ(true_divide(a, b).dtype(), TSR_F32);
  EXPECT_EQ(floor_divide(a.to(TSR_I32), 2.5).dtype(), TSR_F32);
  EXPECT_EQ(floor_divide(a.to(TSR_I8), 2).dtype(), TSR_I8);
  EXPECT_EQ(remainder(a.to(TSR_U8), a.to(TSR_I8)).dtype(), TSR_I16);
}

TEST(BinaryOps, IntegerMinOverMinusOneDoesNotTrap) {
  const int64_t mn = std::numeric_limits<int64_t>::min();
  Tensor a = from_vector<int64_t>({mn, mn, 7}), m1 = from_vector<int64_t>({-1, -1, -1});
  EXPECT_EQ(a.to(TSR_I64).to_vector<int64_t>()[0], mn);
  EXPECT_EQ(floor_divide(a, m1).to_vector<int64_t>(), (std::vector<int64_t>{mn, mn, -7}));
  EXPECT_EQ(div(a, m1, "trunc").to_vector<int64_t>(), (std::vector<int64_t>{mn, mn, -7}));
  EXPECT_EQ(remainder(a, m1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(fmod(a, m1).to_vector<int64_t>(), (std::vector<int64_t>{0, 0, 0}));
  Tensor a32 = from_vector<int32_t>({std::numeric_limits<int32_t>::min()});
  EXPECT_EQ(floor_divide(a32, from_vector<int32_t>({-1})).to_vector<int32_t>()[0], std::numeric_limits<int32_t>::min());
}

TEST(BinaryOps, IntegerDivisionByZeroIsAnErrorWithoutPartialWrite) {
  for (tsr_dtype_t dt : kInts) {
    Tensor a = ints({4}, 3, dt, false), b = from_vector<int64_t>({1, 2, 0, 3}).to(dt);
    for (const char* name : {"floor_divide", "remainder", "fmod"}) {
      Tensor out = full({4}, 5.0, dt);
      EXPECT_TRUE(throws_with([&] { call_multi(op_named(name), {a, b}, {out}); }, {name, "ZeroDivisionError"}));
      EXPECT_EQ(values(out), (std::vector<double>(4, 5.0)));
    }
    EXPECT_TRUE(throws_with([&] { div(a, b, "trunc"); }, {"div_mode", "ZeroDivisionError"}));
    EXPECT_TRUE(throws_with([&] { remainder(a, 0); }, {"remainder", "ZeroDivisionError"}));
  }
  // Plain div promotes integers to float: x / 0 is inf or nan.
  std::vector<double> r = values(div(from_vector<int64_t>({1, 0}), from_vector<int64_t>({0, 0})));
  EXPECT_TRUE(std::isinf(r[0]) && std::isnan(r[1]));
  EXPECT_TRUE(throws_with([] { remainder(from_bools({true}, {1}), from_bools({true}, {1})); }, {"remainder", "bool"}));
}

TEST(BinaryOps, IntegerPow) {
  Tensor b = from_vector<int64_t>({2, -2, 1, -1, 0, 3});
  EXPECT_TRUE(throws_with([&] { pow(b, -1); }, {"pow", "Integers to negative integer powers are not allowed"}));
  EXPECT_TRUE(
      throws_with([&] { pow_tensor_scalar(b.to(TSR_I8), -2); }, {"pow_tensor_scalar", "negative integer powers"}));
  EXPECT_EQ(pow(b, 3).to_vector<int64_t>(), (std::vector<int64_t>{8, -8, 1, -1, 0, 27}));
  EXPECT_EQ(pow(b, 3).dtype(), TSR_I64);
  EXPECT_EQ(pow(b.to(TSR_I16), 2).dtype(), TSR_I16);
  // A float exponent promotes; a tensor of negative exponents follows integer power rules.
  EXPECT_TRUE(
      close(pow(b, -1.0), {0.5, -0.5, 1, -1, std::numeric_limits<double>::infinity(), 1.0 / 3}, {6}, 1e-6, 1e-7));
  EXPECT_EQ(pow(b, from_vector<int64_t>({-1, -1, -3, -3, 2, 0})).to_vector<int64_t>(),
            (std::vector<int64_t>{0, 0, 1, -1, 0, 1}));
  EXPECT_EQ(pow(2, from_vector<int64_t>({0, 3, 10})).to_vector<int64_t>(), (std::vector<int64_t>{1, 8, 1024}));
  EXPECT_TRUE(close(pow_tensor_scalar(randu({3}, 1, 0.5, 2), 0.5),
                    {std::sqrt(values(randu({3}, 1, 0.5, 2))[0]), std::sqrt(values(randu({3}, 1, 0.5, 2))[1]),
                     std::sqrt(values(randu({3}, 1, 0.5, 2))[2])},
                    {3}, 1e-12, 0));
}

// The SDK's add/sub pass alpha as an int when it is integral (an int tensor stays int) and as
// a float otherwise, including NaN, infinity and values no int64 holds.
TEST(BinaryOps, SdkAlphaKeepsIntegerTensorsIntegral) {
  Tensor a = from_vector<int64_t>({1, -2, 3}), b = from_vector<int64_t>({10, 20, -30});
  EXPECT_EQ(add(a, b, 2).dtype(), TSR_I64);
  EXPECT_EQ(add(a, b, 2).to_vector<int64_t>(), (std::vector<int64_t>{21, 38, -57}));
  EXPECT_EQ(sub(a, b, -3).to_vector<int64_t>(), (std::vector<int64_t>{31, 58, -87}));
  Tensor x = from_vector<float>({1.5f, -2.0f}), y = from_vector<float>({0.5f, 4.0f});
  EXPECT_EQ(add(x, y, 2.5).to_vector<float>(), (std::vector<float>{2.75f, 8.0f}));
  EXPECT_TRUE(std::isnan(add(x, y, std::nan("")).to_vector<float>()[0]));
  EXPECT_TRUE(std::isinf(add(x, y, std::numeric_limits<double>::infinity()).to_vector<float>()[0]));
  // A float alpha on integer tensors is refused, as in PyTorch: 2^63 and -1e300 are floats
  // (converting them to int64 would be undefined, and was INT64_MIN on x86).
  for (double f : {2.5, 9223372036854775808.0, -1e300, std::numeric_limits<double>::infinity()})
    EXPECT_TRUE(throws_with([&] { add(a, b, f); }, {"alpha must not be a floating point number"})) << f;
}

TEST(BinaryOps, BitwiseOps) {
  uint64_t seed = 70;
  for (tsr_dtype_t dt : kInts) {
    Tensor a = randint({5, 3}, ++seed, 0, 127).to(dt), b = randint({3}, ++seed, 0, 127).to(dt);
    if (dt != TSR_U8) a = sub(a, 60).to(dt);
    Shape s;
    auto e = [&](auto f) {
      return ref_nary(
          {a, b}, [&](const std::vector<double>& x) { return double(f(int64_t(x[0]), int64_t(x[1]))); }, &s);
    };
    std::vector<double> ea = e([](int64_t x, int64_t y) { return x & y; });
    EXPECT_TRUE(close(bitwise_and(a, b), ea, s, 0, 0));
    EXPECT_TRUE(close(a & b, ea, s, 0, 0));
    EXPECT_TRUE(close(bitwise_or(noncontig(a), b), e([](int64_t x, int64_t y) { return x | y; }), s, 0, 0));
    EXPECT_TRUE(close(a ^ b, e([](int64_t x, int64_t y) { return x ^ y; }), s, 0, 0));
    std::vector<double> en;
    for (double x : values(a)) en.push_back(wrap_to(double(~int64_t(x)), dt));
    EXPECT_TRUE(close(~a, en, a.sizes(), 0, 0));
    EXPECT_EQ(bitwise_and(a, b).dtype(), dt);
  }
  Tensor t = from_bools({true, true, false, false}, {4}), f = from_bools({true, false, true, false}, {4});
  EXPECT_EQ(values(t & f), (std::vector<double>{1, 0, 0, 0}));
  EXPECT_EQ(values(t | f), (std::vector<double>{1, 1, 1, 0}));
  EXPECT_EQ(values(t ^ f), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(values(~t), (std::vector<double>{0, 0, 1, 1}));
  EXPECT_EQ((t & f).dtype(), TSR_BOOL);
  EXPECT_EQ((t & from_vector<int64_t>({3, 3, 3, 3})).dtype(), TSR_I64);
  EXPECT_TRUE(throws_with(
      [] {
        bitwise_and(randu({2, 3}, 1, -1, 1, TSR_F32), randint({3}, 2, 0, 5));
      },
      {"bitwise_and", "only integer and bool", "[2, 3] float32"}));
  EXPECT_TRUE(throws_with([] { bitwise_not(randu({2}, 1)); }, {"bitwise_not", "float64"}));
  EXPECT_TRUE(throws_with([] { bitwise_xor(randint({2}, 1, 0, 4), 1.5); }, {"bitwise_xor", "float"}));
}

TEST(BinaryOps, ShiftsOutOfRangeLikePyTorch) {
  for (tsr_dtype_t dt : kInts) {
    SCOPED_TRACE(dtype_name(dt));
    const int64_t bits = bits_of(dt);
    std::vector<int64_t> av = {1, 5, 3, 100, 1, 1, 7};
    std::vector<int64_t> sv = {0, 1, bits - 1, 2, bits, bits + 3, -1};
    if (dt != TSR_U8) av[3] = -100;
    Tensor a = from_vector(av).to(dt), s = from_vector(sv).to(dt);
    std::vector<double> el, er;
    for (size_t i = 0; i < av.size(); ++i) {
      double sh = values(s)[i], x = values(a)[i];
      int64_t n = static_cast<int64_t>(sh);
      if (dt == TSR_U8 && n >= 128) n -= 256;  // counts read as signed
      bool out_l = n < 0 || n >= bits;
      el.push_back(out_l ? 0 : wrap_to(double(static_cast<int64_t>(static_cast<uint64_t>(int64_t(x)) << n)), dt));
      int64_t max_r = dt == TSR_U8 ? bits : bits - 1;
      if (n < 0 || n >= max_r)
        er.push_back(dt == TSR_U8 ? 0 : (x < 0 ? -1 : 0));
      else
        er.push_back(std::floor(x / std::ldexp(1.0, int(n))));
    }
    EXPECT_TRUE(close(a << s, el, {7}, 0, 0));
    EXPECT_TRUE(close(a >> s, er, {7}, 0, 0));
    EXPECT_TRUE(close(bitwise_right_shift(noncontig(a), noncontig(s)), er, {7}, 0, 0));
  }
  EXPECT_TRUE(throws_with([] { randint({2}, 1, 0, 3) << randu({2}, 2); }, {"bitwise_left_shift", "float64"}));
  EXPECT_TRUE(throws_with([] { from_bools({true}, {1}) >> from_bools({true}, {1}); }, {"bitwise_right_shift", "bool"}));
}

TEST(BinaryOps, LogicalOpsAnyDtype) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor a = from_vector<double>({0, 1, nan, -2, 0}), b = from_vector<int64_t>({0, 0, 3, 1, 5});
  EXPECT_EQ(values(logical_and(a, b)), (std::vector<double>{0, 0, 1, 1, 0}));
  EXPECT_EQ(values(logical_or(a, b)), (std::vector<double>{0, 1, 1, 1, 1}));
  EXPECT_EQ(values(logical_xor(a, b)), (std::vector<double>{0, 1, 0, 0, 1}));
  EXPECT_EQ(values(logical_not(a)), (std::vector<double>{1, 0, 0, 0, 1}));
  EXPECT_EQ(logical_and(a, b).dtype(), TSR_BOOL);
  EXPECT_EQ(logical_not(b).dtype(), TSR_BOOL);
  for (tsr_dtype_t dt : {TSR_F16, TSR_BF16, TSR_F32, TSR_U8, TSR_I32, TSR_BOOL}) {
    Tensor x = randint({4, 3}, 3, 0, 2).to(dt), y = randint({3}, 4, 0, 2).to(dt);
    Shape s;
    std::vector<double> e = ref_nary(
        {x, y}, [](const std::vector<double>& v) { return double(v[0] != 0 && v[1] != 0); }, &s);
    EXPECT_TRUE(close(logical_and(noncontig(x), y), e, s, 0, 0));
  }
  Tensor out = full({0}, 0.0, TSR_BOOL);
  EXPECT_EQ(logical_or(full({0}, 1.0), full({0}, 1.0)).numel(), 0);
}

TEST(BinaryOps, ComparisonOperators) {
  Tensor a = from_vector<double>({1, 2, 3}), b = from_vector<double>({3, 2, 1});
  EXPECT_EQ(values(a == b), (std::vector<double>{0, 1, 0}));
  EXPECT_EQ(values(a != b), (std::vector<double>{1, 0, 1}));
  EXPECT_EQ(values(a < b), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(values(a <= 2), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(values(2 > a), (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(values(a >= b), (std::vector<double>{0, 1, 1}));
  EXPECT_EQ((a == b).dtype(), TSR_BOOL);
  // An int tensor against a float scalar compares in float (2 < 2.5).
  EXPECT_EQ(values(from_vector<int64_t>({2, 3}) < 2.5), (std::vector<double>{1, 0}));
  EXPECT_EQ(values(from_vector<int64_t>({-7, 7}) % 3), (std::vector<double>{2, 1}));
}

TEST(BinaryOps, InplaceVariants) {
  Tensor x = randu({3, 4}, 1), y = randu({4}, 2);
  std::vector<double> xv = values(x), yv = values(y);
  Tensor same = x;
  add_(x, y, 2);
  EXPECT_TRUE(x.shares_storage(same));
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_DOUBLE_EQ(values(x)[i], xv[i] + 2 * yv[i % 4]);
  mul_(x, 0.5);
  div_(x, 2);
  sub_(x, y);
  for (size_t i = 0; i < xv.size(); ++i) EXPECT_NEAR(values(x)[i], (xv[i] + 2 * yv[i % 4]) / 4 - yv[i % 4], 1e-12);
  clamp_(x, -0.5, 0.5);
  for (double v : values(x)) EXPECT_TRUE(v >= -0.5 && v <= 0.5);
  // Non-contiguous self is written through the view.
  Tensor base = randu({4, 3}, 3);
  Tensor view = base.t();
  std::vector<double> before = values(view);
  pow_(view, 2);
  std::vector<double> after = values(base.t());
  for (size_t i = 0; i < before.size(); ++i) EXPECT_NEAR(after[i], before[i] * before[i], 1e-12);
  // Integer self keeps its dtype; a float result cannot be cast into it.
  Tensor i = from_vector<int64_t>({7, -7, 9});
  floor_divide_(i, 2);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{3, -4, 4}));
  remainder_(i, 3);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 2, 1}));
  bitwise_left_shift_(i, 2);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 8, 4}));
  EXPECT_TRUE(
      throws_with([&] { div_(i, 2); }, {"div_", "result type float32 can't be cast to the desired output type int64"}));
  EXPECT_TRUE(throws_with([&] { add_(i, 1.5); }, {"add_", "can't be cast", "int64"}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{0, 8, 4}));
  // Broadcasting may not grow self.
  Tensor small = randu({4}, 4);
  EXPECT_TRUE(throws_with([&] { mul_(small, randu({3, 4}, 5)); }, {"mul_", "[4]", "[3, 4]"}));
  // Comparisons in place write 0/1 in self's dtype.
  Tensor c = from_vector<double>({1, 5, 3});
  call(op_named("lt_"), {c, wrap_scalar(3, c.runtime())});
  EXPECT_EQ(values(c), (std::vector<double>{1, 0, 0}));
  Tensor l = randu({5}, 6), e = randu({5}, 7);
  std::vector<double> lv = values(l), ev = values(e);
  lerp_(l, e, 0.25);
  for (size_t k = 0; k < 5; ++k) EXPECT_NEAR(values(l)[k], lv[k] + 0.25 * (ev[k] - lv[k]), 1e-12);
  Tensor m = randu({5}, 8);
  std::vector<double> mv = values(m);
  addcmul_(m, l, e, 2);
  for (size_t k = 0; k < 5; ++k) EXPECT_NEAR(values(m)[k], mv[k] + 2 * values(l)[k] * ev[k], 1e-12);
  Tensor bl = from_bools({true, false}, {2});
  logical_xor_(bl, from_bools({true, true}, {2}));
  EXPECT_EQ(values(bl), (std::vector<double>{0, 1}));
}

TEST(BinaryOps, InplaceAutogradMovesHistory) {
  Tensor a = randu({3}, 1).requires_grad_(true);
  Tensor y = mul(a, 2.0);
  mul_(y, a);  // y = 2 a^2
  std::vector<Tensor> g = autograd::grad({y}, {a}, {full({3}, 1.0, TSR_F64)});
  std::vector<double> av = values(a), gv = values(g[0]);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(gv[i], 4 * av[i], 1e-12);
  EXPECT_TRUE(throws_with([&] { add_(a, 1.0); }, {"add_"}));
}

TEST(BinaryOps, Isclose) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  Tensor a = from_vector<double>({1, 1, nan, inf, inf, 1e-9, 100});
  Tensor b = from_vector<double>({1 + 1e-6, 1.1, nan, inf, -inf, 0, 100.0009});
  EXPECT_EQ(values(isclose(a, b)), (std::vector<double>{1, 0, 0, 1, 0, 1, 1}));
  EXPECT_EQ(values(isclose(a, b, 1e-5, 1e-8, true)), (std::vector<double>{1, 0, 1, 1, 0, 1, 1}));
  EXPECT_EQ(values(isclose(a, b, 0, 0)), (std::vector<double>{0, 0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(isclose(a, b).dtype(), TSR_BOOL);
  Tensor i = from_vector<int64_t>({10, 10, 10}), j = from_vector<int64_t>({10, 11, 13});
  EXPECT_EQ(values(isclose(i, j, 0.1, 0)), (std::vector<double>{1, 1, 0}));
  EXPECT_EQ(values(isclose(randu({3, 1}, 1), randu({4}, 2))).size(), 12u);
  EXPECT_TRUE(throws_with([&] { isclose(a, a.to(TSR_F32)); }, {"isclose", "same dtype", "float32"}));
  EXPECT_TRUE(throws_with([&] { isclose(a, b, -1); }, {"isclose", "rtol", "-1"}));
}

TEST(BinaryOps, ErrorsNameOpAndShapes) {
  Tensor a = randu({2, 3}, 1), b = randu({4}, 2);
  for (auto f : {+[](const Tensor&x, const Tensor&y) { return atan2(x, y); },
                 +[](const Tensor&x, const Tensor&y) { return remainder(x, y); },
                 +[](const Tensor&x, const Tensor&y) { return logical_and(x, y); },
                 +[](const Tensor&x, const Tensor&y) { return lerp(x, y, 0.5); }}) {
    EXPECT_TRUE(throws_with([&] { f(a, b); }, {"[2, 3]", "[4]"}));
  }
  EXPECT_TRUE(throws_with([&] { atan2(a, b); }, {"atan2"}));
  // out= with the wrong dtype or shape is refused and left untouched.
  Tensor out = full({2, 3}, 9.0, TSR_F32);
  EXPECT_TRUE(throws_with([&] { call_multi(op_named("hypot"), {a, a}, {out}); }, {"hypot"}));
  EXPECT_EQ(values(out), std::vector<double>(6, 9.0));
}

TEST(BinaryOps, MixedDtypePromotion) {
  Tensor h = randu({3}, 1, 0.5, 2, TSR_F16), i = randint({3}, 2, 1, 4, TSR_I32);
  EXPECT_EQ(atan2(h, i).dtype(), TSR_F16);
  EXPECT_EQ(remainder(i, h).dtype(), TSR_F16);
  EXPECT_EQ(fmax(i, 2.5).dtype(), TSR_F32);
  EXPECT_EQ(fmin(i.to(TSR_U8), i.to(TSR_I8)).dtype(), TSR_I16);
  EXPECT_EQ(xlogy(i, i).dtype(), TSR_F32);
  EXPECT_EQ(hypot(h, 2.0).dtype(), TSR_F16);
  // 0-dim tensors weigh less than dimensioned ones of the same category.
  EXPECT_EQ(fmod(randu({3}, 3, -1, 1, TSR_F32), randu({}, 4, 1, 2)).dtype(), TSR_F32);
  EXPECT_EQ(bitwise_or(randint({3}, 3, 0, 4, TSR_I8), randint({}, 4, 0, 4)).dtype(), TSR_I8);
}

TEST(BinaryOps, WhereScalarBranchesAndFloatPowerInplace) {
  Tensor c = from_bools({true, false, true}, {3});
  Tensor x = randu({3}, 1, -1, 1, TSR_F32);
  Tensor r = where(c, x, 2.5);
  EXPECT_EQ(r.dtype(), TSR_F32);
  EXPECT_EQ(values(r)[1], 2.5);
  EXPECT_EQ(values(where(c, -1, from_vector<int64_t>({4, 5, 6}))), (std::vector<double>{-1, 5, -1}));
  Tensor d = from_vector<double>({2, 3});
  float_power_(d, from_vector<int64_t>({3, 2}));
  EXPECT_EQ(values(d), (std::vector<double>{8, 9}));
  Tensor f = from_vector<float>({2, 3});
  EXPECT_TRUE(throws_with([&] { float_power_(f, 2); }, {"float_power_", "float32", "float64"}));
  EXPECT_EQ(values(f), (std::vector<double>{2, 3}));
}

TEST(BinaryOps, IntegerClampVariantsKeepDtype) {
  Tensor i = from_vector<int64_t>({-5, 0, 5, 9}).to(TSR_I16);
  Tensor lo = clamp_min(i, 1), hi = clamp_max(i, 4);
  EXPECT_EQ(lo.dtype(), TSR_I16);
  EXPECT_EQ(values(lo), (std::vector<double>{1, 1, 5, 9}));
  EXPECT_EQ(values(hi), (std::vector<double>{-5, 0, 4, 4}));
  EXPECT_EQ(clamp_min(i, 0.5).dtype(), TSR_F32);  // a float bound promotes, as PyTorch
  Tensor t = clamp(i, from_vector<int64_t>({0, 0, 0, 0}).to(TSR_I16), from_vector<int64_t>({3, 3, 3, 10}).to(TSR_I16));
  EXPECT_EQ(values(t), (std::vector<double>{0, 0, 3, 9}));
  clamp_(i, -1, 6);
  EXPECT_EQ(values(i), (std::vector<double>{-1, 0, 5, 6}));
  EXPECT_TRUE(throws_with([&] { clamp_(i, 0.5, std::nullopt); }, {"clamp_", "can't be cast", "int16"}));
  EXPECT_TRUE(throws_with([] { clamp_min(from_bools({true}, {1}), 0); }, {"clamp_min", "bool"}));
}

TEST(BinaryOps, InplaceReducedPrecisionAndEmpty) {
  for (tsr_dtype_t dt : {TSR_F16, TSR_BF16}) {
    Tensor x = randu({3, 5}, 1, 0.5, 2, dt), y = randu({5}, 2, 0.5, 2, dt);
    std::vector<double> xv = values(x), yv = values(y);
    atan2_(x, y);
    EXPECT_EQ(x.dtype(), dt);
    std::vector<double> e;
    for (size_t k = 0; k < xv.size(); ++k) e.push_back(std::atan2(xv[k], yv[k % 5]));
    auto tol = default_tol(dt);
    EXPECT_TRUE(close(x, e, {3, 5}, tol.first, tol.second));
  }
  Tensor empty_t = full({0, 4}, 1.0);
  hypot_(empty_t, randu({4}, 3));
  EXPECT_EQ(empty_t.sizes(), (Shape{0, 4}));
  Tensor z = randu({}, 4);
  double zv = values(z)[0];
  copysign_(z, -1.0);
  EXPECT_EQ(values(z)[0], -std::fabs(zv));
}
