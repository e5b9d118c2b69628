// The CPU plugin loaded with dlopen into a stand-in core table (tests/cpu/mock_api.hpp): entry
// point, registrations, TESSERA_CPU_DEVICES, allocator, device copy, and kernels called directly
// with hand-built iterations. Needs no libtessera.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "mock_api.hpp"
#include "tessera/dtype.hpp"
#include "tessera/philox.h"
#include "tessera/plugin.h"

namespace {

struct Loaded {
  void* handle = nullptr;
  const tsr_plugin_t* plugin = nullptr;
  tsr_registrar_s reg;
  Loaded() {
    handle = dlopen(TSR_CPU_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
    if (!handle) return;
    auto q = reinterpret_cast<tsr_plugin_query_fn_t>(dlsym(handle, TSR_PLUGIN_QUERY_SYMBOL));
    if (!q) return;
    plugin = q(TSR_ABI_VERSION);
    void* state = nullptr;
    if (plugin) {
      std::string err = mock::take(plugin->init(mock::api(), nullptr, &reg, &state));
      if (!err.empty()) plugin = nullptr;
    }
  }
};

Loaded& cpu() {
  static Loaded l;
  return l;
}

tsr_kernel_fn_t kernel(const char* op, int32_t dtype) {
  const auto* k = cpu().reg.find(op, dtype);
  return k ? k->def.fn : nullptr;
}

tsr_value_t v_int(int64_t i) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}
tsr_value_t v_double(double d) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}
tsr_value_t v_none() { return tsr_value_t{}; }

// Runs an elementwise/reduction kernel on an iteration; returns the status as a string.
std::string run_iter(const char* op, int32_t dtype, tsr_iter_t& it, std::vector<tsr_value_t> args = {}) {
  tsr_kernel_fn_t fn = kernel(op, dtype);
  if (!fn) return std::string("no kernel for ") + op;
  tsr_kernel_call_t c{};
  c.struct_size = sizeof(c);
  c.api = mock::api();
  c.op_name = op;
  c.dtype = dtype;
  c.args = args.data();
  c.nargs = args.size();
  c.iter = &it;
  return mock::take(fn(&c));
}

struct View {
  std::vector<int64_t> sizes, strides;
  tsr_tensor_view_t v;
  View(void* data, int32_t dtype, std::vector<int64_t> sz, std::vector<int64_t> st = {}) : sizes(sz), strides(st) {
    if (strides.empty()) {
      strides.resize(sizes.size());
      int64_t s = 1;
      for (size_t d = sizes.size(); d-- > 0;) {
        strides[d] = s;
        s *= sizes[d];
      }
    }
    v = tsr_tensor_view_t{data, dtype, int32_t(sizes.size()), {0, 0}, sizes.data(), strides.data()};
  }
};

std::string run_views(const char* op, int32_t dtype, std::vector<View*> ins, std::vector<View*> outs,
                      std::vector<tsr_value_t> args = {}) {
  tsr_kernel_fn_t fn = kernel(op, dtype);
  if (!fn) return std::string("no kernel for ") + op;
  std::vector<tsr_tensor_view_t> iv, ov;
  for (View* v : ins) iv.push_back(v->v);
  for (View* v : outs) ov.push_back(v->v);
  tsr_kernel_call_t c{};
  c.struct_size = sizeof(c);
  c.api = mock::api();
  c.op_name = op;
  c.dtype = dtype;
  c.args = args.data();
  c.nargs = args.size();
  c.inputs = iv.data();
  c.ninputs = iv.size();
  c.outputs = ov.data();
  c.noutputs = ov.size();
  return mock::take(fn(&c));
}

// A 1-D contiguous iteration over n elements of each operand.
tsr_iter_t flat_iter(int64_t n, std::vector<void*> data, std::vector<int32_t> dtypes) {
  tsr_iter_t it{};
  it.struct_size = sizeof(it);
  it.ndim = 1;
  it.noperands = int32_t(data.size());
  it.noutputs = 1;
  it.contiguous = 1;
  it.numel = n;
  it.sizes[0] = n;
  for (size_t k = 0; k < data.size(); ++k) {
    it.data[k] = static_cast<char*>(data[k]);
    it.dtypes[k] = dtypes[k];
    it.strides[k][0] = int64_t(tsr::itemsize(dtypes[k]));
  }
  return it;
}

std::vector<float> randf(size_t n, unsigned seed, float lo = -2, float hi = 2) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(CpuPlugin, QueryAndRegistrations) {
  ASSERT_NE(cpu().handle, nullptr) << dlerror();
  ASSERT_NE(cpu().plugin, nullptr);
  auto q = reinterpret_cast<tsr_plugin_query_fn_t>(dlsym(cpu().handle, TSR_PLUGIN_QUERY_SYMBOL));
  EXPECT_EQ(q(TSR_ABI_VERSION + (1u << 16)), nullptr);
  EXPECT_STREQ(cpu().plugin->name, "cpu");
  char reason[32];
  EXPECT_GT(cpu().plugin->score(mock::api(), reason, sizeof reason), 0);
  const auto& reg = cpu().reg;
  ASSERT_EQ(reg.device_types.size(), 1u);
  EXPECT_EQ(reg.device_types[0].name, "cpu");
  EXPECT_EQ(reg.device_types[0].def.device_count, 1);
  ASSERT_EQ(reg.allocators.size(), 1u);
  EXPECT_STREQ(reg.allocators[0].name, "cpu");
  struct Want {
    const char* op;
    std::vector<int32_t> dtypes;
  };
  const std::vector<int32_t> all = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32,
                                    TSR_I64,  TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
  const std::vector<int32_t> num = {TSR_U8, TSR_I8, TSR_I16, TSR_I32, TSR_I64, TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
  const std::vector<int32_t> flt = {TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
  const std::vector<Want> want = {
      {"add", all},   {"sub", num},    {"mul", all},     {"div", flt},     {"maximum", all},     {"minimum", all},
      {"pow", num},   {"eq", all},     {"ne", all},      {"lt", all},      {"le", all},          {"gt", all},
      {"ge", all},    {"neg", num},    {"abs", all},     {"exp", flt},     {"log", flt},         {"sqrt", flt},
      {"rsqrt", flt}, {"tanh", flt},   {"sigmoid", flt}, {"silu", flt},    {"gelu", flt},        {"relu", num},
      {"clamp", num}, {"where", all},  {"_copy", all},   {"_fill", all},   {"sum", num},         {"mean", flt},
      {"amax", all},  {"amin", all},   {"argmax", all},  {"softmax", flt}, {"log_softmax", flt}, {"mm", all},
      {"bmm", all},   {"arange", num}, {"rand", flt},    {"randn", flt}};
  for (const Want& w : want)
    for (int32_t d : w.dtypes) {
      const auto* k = reg.find(w.op, d);
      ASSERT_NE(k, nullptr) << w.op << " " << tsr::dtype_name(d);
      EXPECT_EQ(k->def.device_type, 0);
      const std::string op = w.op;
      // bf16 products go first to the oneDNN overrides where they are registered (matmul_onednn.cpp).
      if (d == TSR_BF16 && (op == "mm" || op == "bmm") && k->name == "cpu::dnnl_" + op + "_bf16") continue;
      EXPECT_EQ(k->name, "cpu::" + (op[0] == '_' ? op.substr(1) : op));
    }
}

TEST(CpuPlugin, DeviceCountFromEnvironment) {
  const tsr_plugin_t* p = cpu().plugin;
  ASSERT_NE(p, nullptr);
  auto init_with = [&](const char* value, tsr_registrar_s& reg) {
    setenv("TESSERA_CPU_DEVICES", value, 1);
    void* state = nullptr;
    std::string r = mock::take(p->init(mock::api(), nullptr, &reg, &state));
    unsetenv("TESSERA_CPU_DEVICES");
    return r;
  };
  {
    tsr_registrar_s reg;
    EXPECT_EQ(init_with("3", reg), "");
    EXPECT_EQ(reg.device_types.at(0).def.device_count, 3);
  }
  {
    tsr_registrar_s reg;
    EXPECT_EQ(init_with("64", reg), "");
    EXPECT_EQ(reg.device_types.at(0).def.device_count, 64);
  }
  for (const char* bad : {"0", "65", "abc", "2x", "-1"}) {
    tsr_registrar_s reg;
    const std::string r = init_with(bad, reg);
    EXPECT_EQ(r.rfind("3: ", 0), 0u) << r;
    EXPECT_NE(r.find("TESSERA_CPU_DEVICES"), std::string::npos) << r;
    EXPECT_NE(r.find(bad), std::string::npos) << r;
  }
}

TEST(CpuPlugin, AllocatorCopyDescribe) {
  const tsr_raw_allocator_t& a = cpu().reg.allocators.at(0);
  const tsr_device_t dev{0, 0};
  for (size_t n : {size_t(1), size_t(100), size_t(4096), size_t(2) << 20, (size_t(5) << 20) + 3}) {
    void* p = nullptr;
    ASSERT_EQ(mock::take(a.alloc(a.self, dev, n, &p)), "");
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
    if (n >= (size_t(2) << 20)) {
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size_t(2) << 20), 0u);
    }
    std::memset(p, 0xab, n);
    a.free(a.self, dev, p, n);
  }
  void* p = nullptr;
#if !defined(__SANITIZE_ADDRESS__)  // ASan aborts on absurd sizes instead of returning null
  const std::string oom = mock::take(a.alloc(a.self, dev, size_t(1) << 62, &p));
  EXPECT_EQ(oom.rfind("8: ", 0), 0u) << oom;
  EXPECT_EQ(p, nullptr);
#endif

  const tsr_device_type_def_t& d = cpu().reg.device_types.at(0).def;
  EXPECT_EQ(d.synchronize, nullptr);
  char buf[64];
  d.describe(d.self, tsr_device_t{0, 2}, buf, sizeof buf);
  EXPECT_EQ(std::string(buf).rfind("cpu:2 (", 0), 0u) << buf;
  EXPECT_NE(std::string(buf).find("threads)"), std::string::npos) << buf;
  std::vector<char> src(3 << 20), dst(3 << 20);
  for (size_t i = 0; i < src.size(); ++i) src[i] = char(i * 7);
  ASSERT_EQ(mock::take(d.copy(d.self, dev, dst.data(), tsr_device_t{TSR_DEVICE_TYPE_HOST, 0}, src.data(), src.size(),
                              nullptr)),
            "");
  EXPECT_EQ(src, dst);
}

TEST(CpuKernels, AddAlphaAndHalf) {
  const int64_t n = 1031;
  auto a = randf(n, 1), b = randf(n, 2);
  std::vector<float> out(n);
  tsr_iter_t it = flat_iter(n, {out.data(), a.data(), b.data()}, {TSR_F32, TSR_F32, TSR_F32});
  ASSERT_EQ(run_iter("add", TSR_F32, it, {v_none(), v_none(), v_double(2.0)}), "");
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] + 2.0f * b[i]);
  ASSERT_EQ(run_iter("sub", TSR_F32, it, {v_none(), v_none(), v_int(1)}), "");
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out[i], a[i] - b[i]);
  std::vector<tsr::Half> ha(n), hb(n), ho(n);
  for (int64_t i = 0; i < n; ++i) ha[i] = a[i], hb[i] = b[i];
  tsr_iter_t ih = flat_iter(n, {ho.data(), ha.data(), hb.data()}, {TSR_F16, TSR_F16, TSR_F16});
  ASSERT_EQ(run_iter("mul", TSR_F16, ih), "");
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(ho[i].x, tsr::Half(float(ha[i]) * float(hb[i])).x);
  std::vector<int32_t> ia(n, 1 << 30), ib(n, 3), io(n);
  tsr_iter_t ii = flat_iter(n, {io.data(), ia.data(), ib.data()}, {TSR_I32, TSR_I32, TSR_I32});
  ASSERT_EQ(run_iter("add", TSR_I32, ii, {v_none(), v_none(), v_int(2)}), "");
  EXPECT_EQ(io[0], (1 << 30) + 6);
  ASSERT_EQ(run_iter("mul", TSR_I32, ii), "");  // wraps
  EXPECT_EQ(io[0], int32_t(uint32_t(1u << 30) * 3u));
  EXPECT_NE(run_iter("div", TSR_I32, ii).find("div"), std::string::npos);
}

TEST(CpuKernels, UnaryMath) {
  const int64_t n = 4099;
  auto a = randf(n, 3, -90, 90);
  a[0] = std::numeric_limits<float>::quiet_NaN();
  a[1] = std::numeric_limits<float>::infinity();
  a[2] = -std::numeric_limits<float>::infinity();
  a[3] = 88.8f;
  a[4] = -104.5f;
  a[5] = -100.0f;  // denormal result
  a[6] = 0.0f;
  std::vector<float> out(n);
  tsr_iter_t it = flat_iter(n, {out.data(), a.data()}, {TSR_F32, TSR_F32});
  ASSERT_EQ(run_iter("exp", TSR_F32, it), "");
  EXPECT_TRUE(std::isnan(out[0]));
  for (int64_t i = 1; i < n; ++i) {
    const double ref = std::exp(double(a[i]));
    if (std::isinf(ref) || ref > std::numeric_limits<float>::max()) {
      ASSERT_TRUE(std::isinf(out[i])) << a[i];
    } else if (ref < std::numeric_limits<float>::min()) {
      ASSERT_NEAR(out[i], ref, 2e-45) << a[i];
    } else {
      ASSERT_NEAR(out[i], ref, 3e-7 * ref) << a[i];
    }
  }
  ASSERT_EQ(run_iter("sigmoid", TSR_F32, it), "");
  for (int64_t i = 1; i < n; ++i) ASSERT_NEAR(out[i], 1 / (1 + std::exp(-double(a[i]))), 1e-6) << a[i];
  ASSERT_EQ(run_iter("gelu", TSR_F32, it,
                     {v_none(),
                      [] {
                        tsr_value_t v{};
                        v.tag = TSR_VALUE_STRING;
                        v.u.str = "tanh";
                        return v;
                      }()}),
            "");
  EXPECT_NEAR(out[6], 0.0, 1e-7);
  std::vector<int8_t> ia = {-128, -5, 0, 7}, io(4);
  tsr_iter_t ii = flat_iter(4, {io.data(), ia.data()}, {TSR_I8, TSR_I8});
  ASSERT_EQ(run_iter("abs", TSR_I8, ii), "");
  EXPECT_EQ(io, (std::vector<int8_t>{-128, 5, 0, 7}));
  ASSERT_EQ(run_iter("neg", TSR_I8, ii), "");
  EXPECT_EQ(io, (std::vector<int8_t>{-128, 5, 0, -7}));
}

TEST(CpuKernels, PowMaxMinClampWhere) {
  std::vector<int64_t> base = {2, -3, 1, -1, -1, 5, 0, 3}, ex = {10, 3, -4, -3, -2, -1, 0, 40}, out(8);
  tsr_iter_t it = flat_iter(8, {out.data(), base.data(), ex.data()}, {TSR_I64, TSR_I64, TSR_I64});
  ASSERT_EQ(run_iter("pow", TSR_I64, it), "");
  EXPECT_EQ(out, (std::vector<int64_t>{1024, -27, 1, -1, 1, 0, 1, int64_t(12157665459056928801ull) /* 3^40 wraps */}));
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = {1, nan, 3, -2}, b = {2, 0, nan, -5}, o(4);
  tsr_iter_t f = flat_iter(4, {o.data(), a.data(), b.data()}, {TSR_F32, TSR_F32, TSR_F32});
  ASSERT_EQ(run_iter("maximum", TSR_F32, f), "");
  EXPECT_EQ(o[0], 2);
  EXPECT_TRUE(std::isnan(o[1]) && std::isnan(o[2]));
  EXPECT_EQ(o[3], -2);
  ASSERT_EQ(run_iter("minimum", TSR_F32, f), "");
  EXPECT_EQ(o[3], -5);
  EXPECT_TRUE(std::isnan(o[1]) && std::isnan(o[2]));
  tsr_iter_t u = flat_iter(4, {o.data(), a.data()}, {TSR_F32, TSR_F32});
  ASSERT_EQ(run_iter("clamp", TSR_F32, u, {v_none(), v_double(0.5), v_int(2)}), "");
  EXPECT_EQ(o[0], 1);
  EXPECT_TRUE(std::isnan(o[1]));
  EXPECT_EQ(o[2], 2);
  EXPECT_EQ(o[3], 0.5);
  ASSERT_EQ(run_iter("clamp", TSR_F32, u, {v_none(), v_int(3), v_int(1)}), "");  // min > max -> max
  EXPECT_EQ(o[0], 1);
  ASSERT_EQ(run_iter("clamp", TSR_F32, u, {v_none(), v_none(), v_int(0)}), "");
  EXPECT_EQ(o[2], 0);
  EXPECT_EQ(o[3], -2);
  std::vector<uint8_t> cond = {1, 0, 0, 1};
  tsr_iter_t w = flat_iter(4, {o.data(), cond.data(), a.data(), b.data()}, {TSR_F32, TSR_BOOL, TSR_F32, TSR_F32});
  ASSERT_EQ(run_iter("where", TSR_F32, w), "");
  EXPECT_EQ(o[0], 1);
  EXPECT_EQ(o[1], 0);
  EXPECT_TRUE(std::isnan(o[2]));
  EXPECT_EQ(o[3], -2);
  std::vector<uint8_t> cmp(4);
  tsr_iter_t c = flat_iter(4, {cmp.data(), a.data(), b.data()}, {TSR_BOOL, TSR_F32, TSR_F32});
  ASSERT_EQ(run_iter("lt", TSR_F32, c), "");
  EXPECT_EQ(cmp, (std::vector<uint8_t>{1, 0, 0, 0}));
  ASSERT_EQ(run_iter("ne", TSR_F32, c), "");
  EXPECT_EQ(cmp, (std::vector<uint8_t>{1, 1, 1, 1}));
}

TEST(CpuKernels, CopyConvertFillArange) {
  std::vector<float> src = {-2.7f, -0.0f, 0.5f, 3.9f, 1e4f};
  std::vector<int32_t> dst(5);
  tsr_iter_t it = flat_iter(5, {dst.data(), src.data()}, {TSR_I32, TSR_F32});
  ASSERT_EQ(run_iter("_copy", TSR_I32, it), "");
  EXPECT_EQ(dst, (std::vector<int32_t>{-2, 0, 0, 3, 10000}));
  std::vector<uint8_t> bd(5);
  tsr_iter_t ib = flat_iter(5, {bd.data(), src.data()}, {TSR_BOOL, TSR_F32});
  ASSERT_EQ(run_iter("_copy", TSR_BOOL, ib), "");
  EXPECT_EQ(bd, (std::vector<uint8_t>{1, 0, 1, 1, 1}));
  std::vector<tsr::BFloat16> bf(5);
  tsr_iter_t ibf = flat_iter(5, {bf.data(), bd.data()}, {TSR_BF16, TSR_BOOL});
  ASSERT_EQ(run_iter("_copy", TSR_BF16, ibf), "");
  EXPECT_EQ(float(bf[1]), 0.0f);
  EXPECT_EQ(float(bf[2]), 1.0f);
  // strided transpose copy f64 -> f64 (3x4 -> its transpose, contiguous out)
  std::vector<double> m(12), t(12);
  for (int i = 0; i < 12; ++i) m[i] = i;
  tsr_iter_t tr{};
  tr.struct_size = sizeof(tr);
  tr.ndim = 2;
  tr.noperands = 2;
  tr.noutputs = 1;
  tr.numel = 12;
  tr.sizes[0] = 3;  // out fastest dim: j in [0,3) (out is [4][3])
  tr.sizes[1] = 4;
  tr.strides[0][0] = 8, tr.strides[0][1] = 24;
  tr.strides[1][0] = 32, tr.strides[1][1] = 8;
  tr.data[0] = reinterpret_cast<char*>(t.data());
  tr.data[1] = reinterpret_cast<char*>(m.data());
  tr.dtypes[0] = tr.dtypes[1] = TSR_F64;
  ASSERT_EQ(run_iter("_copy", TSR_F64, tr), "");
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) ASSERT_EQ(t[i * 3 + j], m[j * 4 + i]);
  std::vector<tsr::Half> h(100000);
  tsr_iter_t fi = flat_iter(100000, {h.data()}, {TSR_F16});
  tsr_value_t bv{};
  bv.tag = TSR_VALUE_BOOL;
  bv.u.b = 1;
  ASSERT_EQ(run_iter("_fill", TSR_F16, fi, {v_none(), v_double(0.1)}), "");
  EXPECT_EQ(h[99999].x, tsr::Half(0.1f).x);
  ASSERT_EQ(run_iter("_fill", TSR_F16, fi, {v_none(), bv}), "");
  EXPECT_EQ(float(h[5]), 1.0f);
  std::vector<double> ar(7);
  View av(ar.data(), TSR_F64, {7});
  ASSERT_EQ(run_views("arange", TSR_F64, {}, {&av}, {v_double(1.5), v_int(5), v_double(-0.25)}), "");
  EXPECT_EQ(ar[6], 1.5 - 6 * 0.25);
  std::vector<int16_t> ai(5);
  View aiv(ai.data(), TSR_I16, {5});
  ASSERT_EQ(run_views("arange", TSR_I16, {}, {&aiv}, {v_int(-3), v_int(100), v_int(4)}), "");
  EXPECT_EQ(ai, (std::vector<int16_t>{-3, 1, 5, 9, 13}));
}

// Reduction iteration: input [rows][cols] row-major, reducing over cols (inner) or rows (outer).
tsr_iter_t reduce_iter(void* out, int32_t odt, const void* in, int32_t idt, int64_t rows, int64_t cols,
                       bool over_rows) {
  tsr_iter_t it{};
  it.struct_size = sizeof(it);
  it.ndim = 2;
  it.noperands = 2;
  it.noutputs = 1;
  it.nreduce = 1;
  it.numel = rows * cols;
  const int64_t is = int64_t(tsr::itemsize(idt)), os = int64_t(tsr::itemsize(odt));
  if (!over_rows) {
    it.sizes[0] = cols, it.sizes[1] = rows;
    it.strides[0][0] = 0, it.strides[0][1] = os;
    it.strides[1][0] = is, it.strides[1][1] = is * cols;
  } else {
    it.sizes[0] = rows, it.sizes[1] = cols;
    it.strides[0][0] = 0, it.strides[0][1] = os;
    it.strides[1][0] = is * cols, it.strides[1][1] = is;
  }
  it.data[0] = static_cast<char*>(out);
  it.data[1] = static_cast<char*>(const_cast<void*>(in));
  it.dtypes[0] = odt, it.dtypes[1] = idt;
  return it;
}

TEST(CpuKernels, SumLargeIsAccurate) {
  const int64_t n = int64_t(1) << 24;  // 16M
  std::vector<float> x = randf(size_t(n), 42, 0.0f, 1.0f);
  double ref = 0;
  for (float v : x) ref += v;
  float out = 0;
  tsr_iter_t it = reduce_iter(&out, TSR_F32, x.data(), TSR_F32, 1, n, false);
  ASSERT_EQ(run_iter("sum", TSR_F32, it), "");
  EXPECT_NEAR(out, ref, 1e-6 * ref);
  float mean = 0;
  it.data[0] = reinterpret_cast<char*>(&mean);
  ASSERT_EQ(run_iter("mean", TSR_F32, it), "");
  EXPECT_NEAR(mean, ref / double(n), 1e-7);
}

TEST(CpuKernels, SumMaxArgmaxRowsAndColumns) {
  for (auto shape : {std::pair<int64_t, int64_t>{7, 13}, {1031, 3}, {3, 1031}, {2, 300000}, {300, 1000}}) {
    const int64_t R = shape.first, C = shape.second;
    std::vector<float> x = randf(size_t(R * C), unsigned(R * 31 + C));
    for (bool over_rows : {false, true}) {
      const int64_t nout = over_rows ? C : R, blk = over_rows ? R : C;
      auto at = [&](int64_t o, int64_t k) { return over_rows ? x[size_t(k * C + o)] : x[size_t(o * C + k)]; };
      std::vector<float> out(static_cast<size_t>(nout));
      tsr_iter_t it = reduce_iter(out.data(), TSR_F32, x.data(), TSR_F32, R, C, over_rows);
      ASSERT_EQ(run_iter("sum", TSR_F32, it), "");
      for (int64_t o = 0; o < nout; ++o) {
        double ref = 0;
        for (int64_t k = 0; k < blk; ++k) ref += at(o, k);
        ASSERT_NEAR(out[size_t(o)], ref, 1e-5 * (1 + std::sqrt(double(blk)))) << R << "x" << C << " " << over_rows;
      }
      ASSERT_EQ(run_iter("amin", TSR_F32, it), "");
      for (int64_t o = 0; o < nout; ++o) {
        float ref = at(o, 0);
        for (int64_t k = 0; k < blk; ++k) ref = std::min(ref, at(o, k));
        ASSERT_EQ(out[size_t(o)], ref);
      }
      std::vector<int64_t> idx(static_cast<size_t>(nout));
      tsr_iter_t ai = reduce_iter(idx.data(), TSR_I64, x.data(), TSR_F32, R, C, over_rows);
      ASSERT_EQ(run_iter("argmax", TSR_F32, ai), "");
      for (int64_t o = 0; o < nout; ++o) {
        int64_t bi = 0;
        for (int64_t k = 0; k < blk; ++k)
          if (at(o, k) > at(o, bi)) bi = k;
        ASSERT_EQ(idx[size_t(o)], bi);
      }
    }
  }
}

TEST(CpuKernels, ReductionNaNEmptyAndInts) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> x = {1, 5, nan, 5, 2, 9};
  float m = 0;
  tsr_iter_t it = reduce_iter(&m, TSR_F32, x.data(), TSR_F32, 1, 6, false);
  ASSERT_EQ(run_iter("amax", TSR_F32, it), "");
  EXPECT_TRUE(std::isnan(m));
  int64_t idx = -1;
  tsr_iter_t ai = reduce_iter(&idx, TSR_I64, x.data(), TSR_F32, 1, 6, false);
  ASSERT_EQ(run_iter("argmax", TSR_F32, ai), "");
  EXPECT_EQ(idx, 2);
  x[2] = 9;
  ASSERT_EQ(run_iter("argmax", TSR_F32, ai), "");
  EXPECT_EQ(idx, 2);  // first maximum
  std::vector<float> e;
  float s[3] = {7, 7, 7};
  tsr_iter_t ie = reduce_iter(s, TSR_F32, e.data(), TSR_F32, 3, 0, false);
  ASSERT_EQ(run_iter("sum", TSR_F32, ie), "");
  EXPECT_EQ(s[0], 0);
  EXPECT_EQ(s[2], 0);
  ASSERT_EQ(run_iter("mean", TSR_F32, ie), "");
  EXPECT_TRUE(std::isnan(s[1]));
  std::vector<int64_t> xi = {INT64_MAX, 1, 5};
  int64_t si = 0;
  tsr_iter_t ii = reduce_iter(&si, TSR_I64, xi.data(), TSR_I64, 1, 3, false);
  ASSERT_EQ(run_iter("sum", TSR_I64, ii), "");
  EXPECT_EQ(si, int64_t(uint64_t(INT64_MAX) + 6));
  std::vector<tsr::BFloat16> xb(1000, tsr::BFloat16(0.01f));
  tsr::BFloat16 sb;
  tsr_iter_t ib = reduce_iter(&sb, TSR_BF16, xb.data(), TSR_BF16, 1, 1000, false);
  ASSERT_EQ(run_iter("sum", TSR_BF16, ib), "");
  EXPECT_NEAR(float(sb), 1000 * float(tsr::BFloat16(0.01f)), 0.05);
}

void naive_mm(const std::vector<double>& a, const std::vector<double>& b, std::vector<double>& c, int64_t m, int64_t n,
              int64_t k) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p) s += a[size_t(i * k + p)] * b[size_t(p * n + j)];
      c[size_t(i * n + j)] = s;
    }
}

TEST(CpuKernels, MatmulLayoutsAndDtypes) {
  const int64_t m = 33, k = 17, n = 29;
  auto af = randf(size_t(m * k), 5), bf = randf(size_t(k * n), 6);
  std::vector<double> a(af.begin(), af.end()), b(bf.begin(), bf.end()), ref(static_cast<size_t>(m * n));
  naive_mm(a, b, ref, m, n, k);
  // B given column-major (a transposed view of a [n][k] buffer).
  std::vector<float> bt(static_cast<size_t>(k * n));
  for (int64_t p = 0; p < k; ++p)
    for (int64_t j = 0; j < n; ++j) bt[size_t(j * k + p)] = bf[size_t(p * n + j)];
  std::vector<float> out(static_cast<size_t>(m * n));
  View A(af.data(), TSR_F32, {m, k}), B(bt.data(), TSR_F32, {k, n}, {1, k}), O(out.data(), TSR_F32, {m, n});
  ASSERT_EQ(run_views("mm", TSR_F32, {&A, &B}, {&O}), "");
  for (size_t i = 0; i < out.size(); ++i) ASSERT_NEAR(out[i], ref[i], 1e-4);
  // f64, A column-major
  std::vector<double> at(static_cast<size_t>(m * k)), od(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) at[size_t(p * m + i)] = a[size_t(i * k + p)];
  View Ad(at.data(), TSR_F64, {m, k}, {1, m}), Bd(b.data(), TSR_F64, {k, n}), Od(od.data(), TSR_F64, {m, n});
  ASSERT_EQ(run_views("mm", TSR_F64, {&Ad, &Bd}, {&Od}), "");
  for (size_t i = 0; i < od.size(); ++i) ASSERT_NEAR(od[i], ref[i], 1e-12);
  // bf16
  std::vector<tsr::BFloat16> ab(af.begin(), af.end()), bb(bf.begin(), bf.end()), ob(static_cast<size_t>(m * n));
  std::vector<double> a2(ab.begin(), ab.end()), b2(bb.begin(), bb.end()), ref2(static_cast<size_t>(m * n));
  naive_mm(a2, b2, ref2, m, n, k);
  View Ab(ab.data(), TSR_BF16, {m, k}), Bb(bb.data(), TSR_BF16, {k, n}), Ob(ob.data(), TSR_BF16, {m, n});
  ASSERT_EQ(run_views("mm", TSR_BF16, {&Ab, &Bb}, {&Ob}), "");
  for (size_t i = 0; i < ob.size(); ++i) ASSERT_NEAR(float(ob[i]), ref2[i], 1e-2 * (1 + std::fabs(ref2[i])));
  // int32 exact, with a stride-0 (expanded) operand that BLAS could not take
  std::vector<int32_t> ai(static_cast<size_t>(m * k)), bi(static_cast<size_t>(n)), oi(static_cast<size_t>(m * n));
  for (size_t i = 0; i < ai.size(); ++i) ai[i] = int32_t(i % 11) - 5;
  for (size_t i = 0; i < bi.size(); ++i) bi[i] = int32_t(i % 7) - 3;
  View Ai(ai.data(), TSR_I32, {m, k}), Bi(bi.data(), TSR_I32, {k, n}, {0, 1}), Oi(oi.data(), TSR_I32, {m, n});
  ASSERT_EQ(run_views("mm", TSR_I32, {&Ai, &Bi}, {&Oi}), "");
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      int64_t s = 0;
      for (int64_t p = 0; p < k; ++p) s += int64_t(ai[size_t(i * k + p)]) * bi[size_t(j)];
      ASSERT_EQ(oi[size_t(i * n + j)], s);
    }
  // k == 0 gives zeros
  std::vector<float> z(6, 5.0f);
  View Az(nullptr, TSR_F32, {2, 0}), Bz(nullptr, TSR_F32, {0, 3}), Oz(z.data(), TSR_F32, {2, 3});
  ASSERT_EQ(run_views("mm", TSR_F32, {&Az, &Bz}, {&Oz}), "");
  EXPECT_EQ(z, std::vector<float>(6, 0.0f));
}

TEST(CpuKernels, Bmm) {
  const int64_t batch = 5, m = 4, k = 6, n = 3;
  auto a = randf(size_t(batch * m * k), 8), b = randf(size_t(batch * k * n), 9);
  std::vector<float> o(static_cast<size_t>(batch * m * n));
  View A(a.data(), TSR_F32, {batch, m, k}), B(b.data(), TSR_F32, {batch, k, n}), O(o.data(), TSR_F32, {batch, m, n});
  ASSERT_EQ(run_views("bmm", TSR_F32, {&A, &B}, {&O}), "");
  for (int64_t t = 0; t < batch; ++t)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p) s += double(a[size_t((t * m + i) * k + p)]) * b[size_t((t * k + p) * n + j)];
        ASSERT_NEAR(o[size_t((t * m + i) * n + j)], s, 1e-4);
      }
}

TEST(CpuKernels, RandFollowsPhiloxMapping) {
  const int64_t n = 1031;
  const uint64_t seed = 0x1234567890ull, offset = 17;
  std::vector<float> f(n);
  View V(f.data(), TSR_F32, {n});
  const std::vector<tsr_value_t> args = {v_none(), v_none(), v_none(), v_int(int64_t(seed)), v_int(int64_t(offset))};
  ASSERT_EQ(run_views("rand", TSR_F32, {}, {&V}, args), "");
  for (int64_t i = 0; i < n; ++i) {
    const tsr_philox4x32_t r = tsr_philox_block(seed, offset + uint64_t(i / 4));
    ASSERT_EQ(f[i], tsr_philox_uniform_f32(r.v[i % 4]));
  }
  std::vector<double> d(n);
  View Vd(d.data(), TSR_F64, {n});
  ASSERT_EQ(run_views("rand", TSR_F64, {}, {&Vd}, args), "");
  for (int64_t i = 0; i < n; ++i) {
    const tsr_philox4x32_t r = tsr_philox_block(seed, offset + uint64_t(i / 2));
    ASSERT_EQ(d[i], tsr_philox_uniform_f64(r.v[2 * (i % 2)], r.v[2 * (i % 2) + 1]));
  }
  ASSERT_EQ(run_views("randn", TSR_F32, {}, {&V}, args), "");
  for (int64_t i = 0; i < n; ++i) {
    float z[4];
    tsr_philox_normal4_f32(tsr_philox_block(seed, offset + uint64_t(i / 4)), z);
    ASSERT_EQ(f[i], z[i % 4]);
  }
}

TEST(CpuKernels, SoftmaxRowsAndColumns) {
  for (auto dims : {std::vector<int64_t>{7, 13}, {5, 1031}, {3, 300, 7}, {2, 4, 1000}}) {
    for (int64_t dim = 0; dim < int64_t(dims.size()); ++dim) {
      int64_t numel = 1, outer = 1, inner = 1;
      for (size_t d = 0; d < dims.size(); ++d) {
        numel *= dims[d];
        if (int64_t(d) < dim) outer *= dims[d];
        if (int64_t(d) > dim) inner *= dims[d];
      }
      const int64_t D = dims[size_t(dim)];
      auto x = randf(size_t(numel), unsigned(numel + dim), -20, 20);
      std::vector<float> y(static_cast<size_t>(numel)), ly(static_cast<size_t>(numel));
      View X(x.data(), TSR_F32, dims), Y(y.data(), TSR_F32, dims), LY(ly.data(), TSR_F32, dims);
      ASSERT_EQ(run_views("softmax", TSR_F32, {&X}, {&Y}, {v_none(), v_int(dim)}), "");
      ASSERT_EQ(run_views("log_softmax", TSR_F32, {&X}, {&LY}, {v_none(), v_int(dim)}), "");
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < inner; ++j) {
          double mx = -1e300, s = 0;
          for (int64_t d = 0; d < D; ++d) mx = std::max(mx, double(x[size_t((o * D + d) * inner + j)]));
          for (int64_t d = 0; d < D; ++d) s += std::exp(double(x[size_t((o * D + d) * inner + j)]) - mx);
          for (int64_t d = 0; d < D; ++d) {
            const size_t idx = size_t((o * D + d) * inner + j);
            const double l = double(x[idx]) - mx - std::log(s);
            ASSERT_NEAR(y[idx], std::exp(l), 1e-6 + 1e-5 * std::exp(l));
            ASSERT_NEAR(ly[idx], l, 1e-5 * (1 + std::fabs(l)));
          }
        }
    }
  }
}

}  // namespace
