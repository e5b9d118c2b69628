// Elementwise ops on the cpu device through the host SDK, against float64 references:
// every supported dtype, odd shapes, broadcasting, non-contiguous inputs and outputs.
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "op_test_util.hpp"

namespace {

using tsr::Tensor;
using tt::Kind;
using tt::Layout;
using tt::Shape;

const std::vector<Shape>& same_shapes() {
  static const std::vector<Shape> v = {{0}, {1}, {7}, {13}, {1031}, {3, 5, 7}, {2, 0, 3}, {}};
  return v;
}
const std::vector<std::pair<Shape, Shape>>& broadcast_shapes() {
  static const std::vector<std::pair<Shape, Shape>> v = {
      {{3, 1, 7}, {5, 1}}, {{4}, {2, 3, 4}}, {{13, 1}, {1, 31}}, {{}, {6, 5}}, {{2, 3, 1}, {}}};
  return v;
}

struct BinaryCase {
  const char* name;
  std::function<Tensor(const Tensor&, const Tensor&)> fn;
  std::function<double(double, double)> ref;
  std::vector<tsr_dtype_t> dtypes;
  Kind ka = Kind::Any, kb = Kind::Any;
  bool int_to_float = false;  // integer/bool inputs give float32
  bool to_bool = false;       // comparisons
};

std::vector<BinaryCase> binary_cases() {
  std::vector<BinaryCase> v;
  v.push_back({"add", [](const Tensor& a, const Tensor& b) { return tsr::add(a, b); },
               [](double a, double b) { return a + b; }, tt::all_dtypes()});
  v.push_back({"add(alpha=2)", [](const Tensor& a, const Tensor& b) { return tsr::add(a, b, 2); },
               [](double a, double b) { return a + 2 * b; }, tt::numeric_dtypes()});
  v.push_back({"add(alpha=2.5)", [](const Tensor& a, const Tensor& b) { return tsr::add(a, b, 2.5); },
               [](double a, double b) { return a + 2.5 * b; }, tt::float_dtypes()});
  v.push_back({"sub", [](const Tensor& a, const Tensor& b) { return tsr::sub(a, b); },
               [](double a, double b) { return a - b; }, tt::numeric_dtypes()});
  v.push_back({"sub(alpha=3)", [](const Tensor& a, const Tensor& b) { return tsr::sub(a, b, 3); },
               [](double a, double b) { return a - 3 * b; }, tt::numeric_dtypes()});
  v.push_back({"mul", [](const Tensor& a, const Tensor& b) { return tsr::mul(a, b); },
               [](double a, double b) { return a * b; }, tt::all_dtypes()});
  v.push_back({"div", [](const Tensor& a, const Tensor& b) { return tsr::div(a, b); },
               [](double a, double b) { return a / b; }, tt::numeric_dtypes(), Kind::Any, Kind::Positive, true});
  v.push_back({"maximum", [](const Tensor& a, const Tensor& b) { return tsr::maximum(a, b); },
               [](double a, double b) { return std::max(a, b); }, tt::all_dtypes()});
  v.push_back({"minimum", [](const Tensor& a, const Tensor& b) { return tsr::minimum(a, b); },
               [](double a, double b) { return std::min(a, b); }, tt::all_dtypes()});
  v.push_back({"pow", [](const Tensor& a, const Tensor& b) { return tsr::pow(a, b); },
               [](double a, double b) { return std::pow(a, b); }, tt::numeric_dtypes(), Kind::Any, Kind::Positive});
  const char* cmps[] = {"eq", "ne", "lt", "le", "gt", "ge"};
  std::vector<std::function<double(double, double)>> crefs = {
      [](double a, double b) { return double(a == b); }, [](double a, double b) { return double(a != b); },
      [](double a, double b) { return double(a < b); },  [](double a, double b) { return double(a <= b); },
      [](double a, double b) { return double(a > b); },  [](double a, double b) { return double(a >= b); }};
  std::vector<std::function<Tensor(const Tensor&, const Tensor&)>> cfns = {
      [](const Tensor& a, const Tensor& b) { return tsr::eq(a, b); },
      [](const Tensor& a, const Tensor& b) { return tsr::ne(a, b); },
      [](const Tensor& a, const Tensor& b) { return tsr::lt(a, b); },
      [](const Tensor& a, const Tensor& b) { return tsr::le(a, b); },
      [](const Tensor& a, const Tensor& b) { return tsr::gt(a, b); },
      [](const Tensor& a, const Tensor& b) { return tsr::ge(a, b); }};
  for (int i = 0; i < 6; ++i)
    v.push_back(
        {cmps[i], cfns[size_t(i)], crefs[size_t(i)], tt::all_dtypes(), Kind::SmallInt, Kind::SmallInt, false, true});
  return v;
}

// Float pow on negative bases is NaN; keep float pow bases positive.
Kind base_kind(const BinaryCase& c, tsr_dtype_t dt) {
  if (std::string(c.name) == "pow" && tsr::is_floating(dt)) return Kind::Positive;
  return c.ka;
}
// Integer pow: exponents 1..9 (Positive), wrapping checked exactly.

void check_binary(const BinaryCase& c, tsr_dtype_t dt, const Tensor& a, const Tensor& b) {
  const Shape out_shape = tt::broadcast(a.sizes(), b.sizes());
  const auto av = tt::values(a), bv = tt::values(b);
  std::vector<double> ref(static_cast<size_t>(tt::numel(out_shape)));
  for (int64_t i = 0; i < int64_t(ref.size()); ++i)
    ref[size_t(i)] = c.ref(av[size_t(tt::broadcast_index(out_shape, a.sizes(), i))],
                           bv[size_t(tt::broadcast_index(out_shape, b.sizes(), i))]);
  const tsr_dtype_t out_dt = c.to_bool ? TSR_BOOL : (c.int_to_float && !tsr::is_floating(dt)) ? TSR_F32 : dt;
  Tensor r = c.fn(a, b);
  tt::expect_close(r, ref, out_dt, out_shape);
}

TEST(CpuOps, BinarySameShapeAllLayouts) {
  for (const BinaryCase& c : binary_cases()) {
    for (tsr_dtype_t dt : c.dtypes) {
      std::mt19937 rng(1000 + unsigned(dt));
      for (const Shape& s : same_shapes()) {
        for (Layout la : {Layout::Contiguous, Layout::Transposed, Layout::Strided, Layout::Expanded}) {
          const Layout lb = la == Layout::Contiguous ? Layout::Contiguous : Layout((int(la) % 3) + 1);
          SCOPED_TRACE(std::string(c.name) + " " + tsr::dtype_name(dt) + " " + tt::str(s) + " a " +
                       tt::layout_name(la) + " b " + tt::layout_name(lb));
          Tensor a = tt::random_tensor(s, dt, rng, base_kind(c, dt), la);
          Tensor b = tt::random_tensor(s, dt, rng, c.kb, lb);
          check_binary(c, dt, a, b);
        }
      }
    }
  }
}

TEST(CpuOps, BinaryBroadcasting) {
  for (const BinaryCase& c : binary_cases()) {
    for (tsr_dtype_t dt : c.dtypes) {
      std::mt19937 rng(2000 + unsigned(dt));
      for (const auto& sh : broadcast_shapes()) {
        SCOPED_TRACE(std::string(c.name) + " " + tsr::dtype_name(dt) + " " + tt::str(sh.first) + " with " +
                     tt::str(sh.second));
        Tensor a = tt::random_tensor(sh.first, dt, rng, base_kind(c, dt));
        Tensor b = tt::random_tensor(sh.second, dt, rng, c.kb, Layout::Transposed);
        check_binary(c, dt, a, b);
        check_binary(c, dt, b.to(dt), tt::random_tensor(sh.first, dt, rng, c.kb));
      }
    }
  }
}

TEST(CpuOps, IntegerWrapAndExactness) {
  // int32 overflow wraps; int64 large values exact.
  Tensor a = tsr::from_vector<int32_t>({2147483647, -2147483647 - 1, 123456789}, {3});
  Tensor b = tsr::from_vector<int32_t>({1, -1, 1000}, {3});
  EXPECT_EQ((a + b).to_vector<int32_t>(), (std::vector<int32_t>{-2147483647 - 1, 2147483647, 123457789}));
  EXPECT_EQ(tsr::mul(a, b).to_vector<int32_t>()[2], int32_t(uint32_t(123456789u) * 1000u));
  Tensor c = tsr::from_vector<int64_t>({int64_t(1) << 62, 3}, {2});
  EXPECT_EQ((c + c).to_vector<int64_t>()[1], 6);
  EXPECT_EQ(tsr::pow(tsr::from_vector<int64_t>({3, -2, 2, 1, -1, -1, 5}, {7}),
                     tsr::from_vector<int64_t>({39, 63, 64, -5, -3, -4, -1}, {7}))
                .to_vector<int64_t>(),
            (std::vector<int64_t>{4052555153018976267, int64_t(uint64_t(1) << 63), 0, 1, -1, 1, 0}));
}

TEST(CpuOps, MaximumMinimumPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (tsr_dtype_t dt : tt::float_dtypes()) {
    Tensor a = tt::make({1, nan, 3, -2, nan}, {5}, dt), b = tt::make({2, 0, nan, -5, nan}, {5}, dt);
    tt::expect_close(tsr::maximum(a, b), {2, nan, nan, -2, nan}, dt, {5});
    tt::expect_close(tsr::minimum(a, b), {1, nan, nan, -5, nan}, dt, {5});
    tt::expect_close(tsr::div(tt::make({1, -1, 0}, {3}, dt), tt::make({0, 0, 0}, {3}, dt)),
                     {std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity(), nan}, dt, {3});
  }
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> fn;
  std::function<double(double)> ref;
  std::vector<tsr_dtype_t> dtypes;
  Kind kind = Kind::Any;
  bool int_to_float = false;
};

std::vector<UnaryCase> unary_cases() {
  const auto gelu = [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); };
  const auto gelu_tanh = [](double x) {
    return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
  };
  const auto sig = [](double x) { return 1 / (1 + std::exp(-x)); };
  std::vector<tsr_dtype_t> flt_and_i32 = tt::float_dtypes();
  flt_and_i32.push_back(TSR_I32);
  return {
      {"neg", [](const Tensor& a) { return tsr::neg(a); }, [](double x) { return -x; }, tt::numeric_dtypes()},
      {"abs", [](const Tensor& a) { return tsr::abs(a); }, [](double x) { return std::fabs(x); }, tt::all_dtypes()},
      {"relu", [](const Tensor& a) { return tsr::relu(a); }, [](double x) { return x > 0 ? x : 0.0; },
       tt::numeric_dtypes()},
      {"exp", [](const Tensor& a) { return tsr::exp(a); }, [](double x) { return std::exp(x); }, flt_and_i32,
       Kind::Wide, true},
      {"log", [](const Tensor& a) { return tsr::log(a); }, [](double x) { return std::log(x); }, flt_and_i32,
       Kind::Positive, true},
      {"sqrt", [](const Tensor& a) { return tsr::sqrt(a); }, [](double x) { return std::sqrt(x); }, flt_and_i32,
       Kind::Positive, true},
      {"rsqrt", [](const Tensor& a) { return tsr::rsqrt(a); }, [](double x) { return 1 / std::sqrt(x); }, flt_and_i32,
       Kind::Positive, true},
      {"tanh", [](const Tensor& a) { return tsr::tanh(a); }, [](double x) { return std::tanh(x); }, flt_and_i32,
       Kind::Wide, true},
      {"sigmoid", [](const Tensor& a) { return tsr::sigmoid(a); }, sig, flt_and_i32, Kind::Wide, true},
      {"silu", [](const Tensor& a) { return tsr::silu(a); }, [sig](double x) { return x * sig(x); }, flt_and_i32,
       Kind::Wide, true},
      {"gelu", [](const Tensor& a) { return tsr::gelu(a); }, gelu, flt_and_i32, Kind::Wide, true},
      {"gelu(tanh)", [](const Tensor& a) { return tsr::gelu(a, "tanh"); }, gelu_tanh, flt_and_i32, Kind::Wide, true},
  };
}

TEST(CpuOps, UnaryAllLayouts) {
  for (const UnaryCase& c : unary_cases()) {
    for (tsr_dtype_t dt : c.dtypes) {
      std::mt19937 rng(3000 + unsigned(dt));
      for (const Shape& s : same_shapes()) {
        for (Layout l : {Layout::Contiguous, Layout::Transposed, Layout::Strided, Layout::Expanded}) {
          SCOPED_TRACE(std::string(c.name) + " " + tsr::dtype_name(dt) + " " + tt::str(s) + " " + tt::layout_name(l));
          Tensor a = tt::random_tensor(s, dt, rng, c.kind, l);
          const auto av = tt::values(a);
          std::vector<double> ref(av.size());
          for (size_t i = 0; i < av.size(); ++i) ref[i] = c.ref(av[i]);
          const tsr_dtype_t out_dt = (c.int_to_float && !tsr::is_floating(dt)) ? TSR_F32 : dt;
          tt::expect_close(c.fn(a), ref, out_dt, s);
        }
      }
    }
  }
}

TEST(CpuOps, UnarySpecialValues) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = tt::make({nan, inf, -inf, 0.0, 88.8, -104.5, -100.0, 1e-30}, {8}, TSR_F32);
  std::vector<double> e = {nan, inf, 0, 1, inf, 0, std::exp(-100.0), 1};
  tt::expect_close(tsr::exp(x), e, TSR_F32, {8});
  tt::expect_close(tsr::relu(x), {nan, inf, 0, 0, 88.8f, 0, 0, 1e-30f}, TSR_F32, {8});
  tt::expect_close(tsr::sigmoid(x), {nan, 1, 0, 0.5, 1, 0, 0, 0.5}, TSR_F32, {8});
  tt::expect_close(tsr::abs(tt::make({-0.0, -inf, nan}, {3}, TSR_F16)), {0, inf, nan}, TSR_F16, {3});
  Tensor u = tsr::from_vector<uint8_t>({0, 5, 255}, {3});
  EXPECT_EQ(tsr::abs(u).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 5, 255}));
  EXPECT_EQ(tsr::neg(u).to_vector<uint8_t>(), (std::vector<uint8_t>{0, 251, 1}));
}

TEST(CpuOps, Clamp) {
  for (tsr_dtype_t dt : tt::float_dtypes()) {
    std::mt19937 rng(4000 + unsigned(dt));
    for (const Shape& s : {Shape{1031}, Shape{3, 5, 7}}) {
      for (Layout l : {Layout::Contiguous, Layout::Transposed}) {
        SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " " + tt::str(s) + " " + tt::layout_name(l));
        Tensor a = tt::random_tensor(s, dt, rng, Kind::Any, l);
        const auto av = tt::values(a);
        auto ref = [&](std::optional<double> lo, std::optional<double> hi) {
          std::vector<double> r(av.size());
          for (size_t i = 0; i < av.size(); ++i) {
            double v = av[i];
            if (lo) v = std::max(v, tt::cast_to(*lo, dt));
            if (hi) v = std::min(v, tt::cast_to(*hi, dt));
            r[i] = v;
          }
          return r;
        };
        tt::expect_close(tsr::clamp(a, -0.5, 0.7), ref(-0.5, 0.7), dt, s);
        tt::expect_close(tsr::clamp(a, 0.3), ref(0.3, std::nullopt), dt, s);
        tt::expect_close(tsr::clamp(a, std::nullopt, -0.25), ref(std::nullopt, -0.25), dt, s);
        tt::expect_close(tsr::clamp(a, 1.0, -1.0), std::vector<double>(av.size(), -1.0), dt, s);  // min > max
      }
    }
  }
  for (tsr_dtype_t dt : {TSR_U8, TSR_I8, TSR_I16, TSR_I32, TSR_I64}) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    std::mt19937 rng(4100 + unsigned(dt));
    Tensor a = tt::random_tensor({5, 13}, dt, rng, Kind::Any, Layout::Transposed);
    const auto av = tt::values(a);
    std::vector<double> ref(av.size());
    for (size_t i = 0; i < av.size(); ++i) ref[i] = std::min(std::max(av[i], 2.0), 5.0);
    tt::expect_close(tsr::call("clamp", {a, int64_t(2), int64_t(5)}), ref, dt, {5, 13});
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  tt::expect_close(tsr::clamp(tt::make({nan, 3, -3}, {3}, TSR_F32), -1.0, 1.0), {nan, 1, -1}, TSR_F32, {3});
}

TEST(CpuOps, WhereAllDtypesAndBroadcast) {
  for (tsr_dtype_t dt : tt::all_dtypes()) {
    std::mt19937 rng(5000 + unsigned(dt));
    for (auto shapes : {std::vector<Shape>{{1031}, {1031}, {1031}}, std::vector<Shape>{{3, 1, 7}, {5, 1}, {7}},
                        std::vector<Shape>{{}, {4, 6}, {6}}}) {
      SCOPED_TRACE(std::string(tsr::dtype_name(dt)) + " cond " + tt::str(shapes[0]));
      Tensor c = tt::random_tensor(shapes[0], TSR_BOOL, rng);
      Tensor a = tt::random_tensor(shapes[1], dt, rng, Kind::Any, Layout::Transposed);
      Tensor b = tt::random_tensor(shapes[2], dt, rng);
      const Shape out = tt::broadcast(tt::broadcast(shapes[0], shapes[1]), shapes[2]);
      const auto cv = tt::values(c), av = tt::values(a), bv = tt::values(b);
      std::vector<double> ref(static_cast<size_t>(tt::numel(out)));
      for (int64_t i = 0; i < int64_t(ref.size()); ++i)
        ref[size_t(i)] = cv[size_t(tt::broadcast_index(out, shapes[0], i))] != 0
                             ? av[size_t(tt::broadcast_index(out, shapes[1], i))]
                             : bv[size_t(tt::broadcast_index(out, shapes[2], i))];
      tt::expect_close(tsr::where(c, a, b), ref, dt, out);
    }
  }
}

TEST(CpuOps, OperatorsAndScalars) {
  std::mt19937 rng(6000);
  for (tsr_dtype_t dt : {TSR_F16, TSR_F32, TSR_I32}) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    Tensor a = tt::random_tensor({4, 9}, dt, rng, Kind::Positive), b = tt::random_tensor({9}, dt, rng, Kind::Positive);
    const auto av = tt::values(a), bv = tt::values(b);
    std::vector<double> add(av.size()), sub(av.size()), mul(av.size()), neg(av.size()), s1(av.size()), s2(av.size());
    for (size_t i = 0; i < av.size(); ++i) {
      add[i] = av[i] + bv[i % 9];
      sub[i] = av[i] - bv[i % 9];
      mul[i] = av[i] * bv[i % 9];
      neg[i] = -av[i];
      s1[i] = av[i] + 2;
      s2[i] = 3 * av[i];
    }
    tt::expect_close(a + b, add, dt, {4, 9});
    tt::expect_close(a - b, sub, dt, {4, 9});
    tt::expect_close(a * b, mul, dt, {4, 9});
    tt::expect_close(-a, neg, dt, {4, 9});
    tt::expect_close(a + 2, s1, dt, {4, 9});  // an integer scalar keeps the tensor's dtype
    tt::expect_close(3 * a, s2, dt, {4, 9});
  }
  Tensor h = tt::make({1.5, -2.0}, {2}, TSR_BF16);
  tt::expect_close(h * 0.5, {0.75, -1.0}, TSR_BF16, {2});  // a float scalar does not promote bf16
  tt::expect_close(tsr::from_vector<int32_t>({3, 4}, {2}) / 2, {1.5, 2.0}, TSR_F32, {2});
}

TEST(CpuOps, OutputIntoNonContiguousTensor) {
  std::mt19937 rng(7000);
  Tensor a = tt::random_tensor({13, 7}, TSR_F32, rng), b = tt::random_tensor({13, 7}, TSR_F32, rng);
  Tensor base = tsr::zeros({7, 13}, TSR_F32);
  Tensor out = base.t();  // [13, 7] view, not contiguous
  static const tsr::Op op("add");
  tsr::call_out(op, out, {a, b, int64_t(1)});
  const auto av = tt::values(a), bv = tt::values(b);
  std::vector<double> ref(av.size());
  for (size_t i = 0; i < av.size(); ++i) ref[i] = tt::cast_to(av[i] + bv[i], TSR_F32);
  tt::expect_close(out, ref, TSR_F32, {13, 7});
  // fill_ through a strided view
  Tensor row = base.slice(1, 0, 13, 2);
  row.fill_(2.5);
  const auto bvals = tt::values(base);
  for (int64_t r = 0; r < 7; ++r)
    for (int64_t c = 0; c < 13; ++c) {
      if (c % 2 == 0)
        ASSERT_EQ(bvals[size_t(r * 13 + c)], 2.5);
      else
        ASSERT_EQ(bvals[size_t(r * 13 + c)], ref[size_t(c * 7 + r)]);
    }
}

TEST(CpuOps, ElementwiseErrorsNameTheOp) {
  Tensor a = tsr::zeros({3}), b = tsr::zeros({4});
  tt::expect_error_naming("add", [&] { tsr::add(a, b); });
  tt::expect_error_naming("mul", [&] { tsr::mul(tsr::zeros({2, 3}), tsr::zeros({3, 2})); });
  tt::expect_error_naming("where", [&] { tsr::where(tsr::zeros({3}, TSR_BOOL), a, b); });
  tt::expect_error_naming("neg", [&] { tsr::neg(tsr::zeros({3}, TSR_BOOL)); });
  tt::expect_error_naming("gelu", [&] { tsr::gelu(a, "erf"); });
}

}  // namespace
