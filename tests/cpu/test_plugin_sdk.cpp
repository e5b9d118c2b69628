// sdk/tessera/plugin.hpp against a stand-in core table: KernelCall accessors, kernel wrappers
// (exceptions -> statuses), Registrar, and TSR_DEFINE_PLUGIN. No core needed.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "mock_api.hpp"
#include "tessera/plugin.hpp"

namespace {

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
tsr_value_t v_bool(bool b) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_BOOL;
  v.u.b = b;
  return v;
}
tsr_value_t v_str(const char* s) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_STRING;
  v.u.str = s;
  return v;
}

tsr_kernel_call_t make_call(const char* op, const tsr_value_t* args, size_t nargs) {
  tsr_kernel_call_t c{};
  c.struct_size = sizeof(c);
  c.api = mock::api();
  c.op_name = op;
  c.dtype = TSR_F32;
  c.args = args;
  c.nargs = nargs;
  return c;
}

TEST(KernelCall, Accessors) {
  const int64_t dims[] = {1, -2, 3};
  tsr_value_t args[7] = {v_int(7), v_double(2.5), v_bool(true), v_str("tanh"), tsr_value_t{}, v_int(-3), {}};
  args[6].tag = TSR_VALUE_INT_LIST;
  args[6].u.ints.data = dims;
  args[6].u.ints.len = 3;
  tsr_kernel_call_t raw = make_call("myop", args, 7);
  float in_data[2] = {1, 2};
  const int64_t sz[] = {2}, st[] = {1};
  tsr_tensor_view_t views[1] = {{in_data, TSR_F32, 1, {0, 0}, sz, st}};
  raw.inputs = views;
  raw.ninputs = 1;
  tsr::KernelCall c(&raw);
  EXPECT_STREQ(c.op_name(), "myop");
  EXPECT_EQ(c.dtype(), TSR_F32);
  EXPECT_EQ(c.arg_int(0), 7);
  EXPECT_EQ(c.arg_double(1), 2.5);
  EXPECT_EQ(c.arg_double(0), 7.0);  // int widens to double
  EXPECT_TRUE(c.arg_bool(2));
  EXPECT_STREQ(c.arg_str(3), "tanh");
  EXPECT_TRUE(c.arg_is_none(4));
  EXPECT_TRUE(c.arg_is_none(99));
  EXPECT_FALSE(c.arg_is_none(0));
  EXPECT_EQ(c.arg_scalar<float>(1), 2.5f);
  EXPECT_EQ(c.arg_scalar<int32_t>(1), 2);
  EXPECT_EQ(c.arg_scalar<uint8_t>(0), 7);
  EXPECT_EQ(c.arg_scalar<bool>(5), true);
  EXPECT_EQ(float(c.arg_scalar<tsr::Half>(1)), 2.5f);
  EXPECT_EQ(c.arg_scalar<double>(2), 1.0);
  auto l = c.arg_ints(6);
  ASSERT_EQ(l.size(), 3);
  EXPECT_EQ(l[1], -2);
  EXPECT_EQ(c.input(0).data, in_data);
  try {
    c.arg_str(0);
    FAIL();
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(e.what()).find("myop"), std::string::npos) << e.what();
  }
  EXPECT_THROW(c.arg(7), tsr::Error);
  EXPECT_THROW(c.input(1), tsr::Error);
  EXPECT_THROW(c.output(0), tsr::Error);
  EXPECT_THROW(c.iter(), tsr::Error);
  EXPECT_THROW(c.arg_scalar<float>(3), tsr::Error);
}

void ok_kernel(tsr::KernelCall& c) { EXPECT_EQ(c.arg_int(0), 1); }
void throwing_kernel(tsr::KernelCall& c) { tsr::fail(TSR_OUT_OF_RANGE, c.op_name(), ": index ", 5, " out of range"); }
void std_throwing_kernel(tsr::KernelCall&) { throw std::runtime_error("boom"); }
void alloc_throwing_kernel(tsr::KernelCall&) { throw std::bad_alloc(); }
void unsupported_kernel(tsr::KernelCall& c) { c.unsupported_dtype(); }

TEST(MakeKernel, ExceptionsBecomeStatuses) {
  tsr_value_t args[1] = {v_int(1)};
  tsr_kernel_call_t raw = make_call("opname", args, 1);
  EXPECT_EQ(mock::take(TSR_KERNEL(ok_kernel)(&raw)), "");
  EXPECT_EQ(mock::take(tsr::make_kernel<&throwing_kernel>()(&raw)), "11: opname: index 5 out of range");
  EXPECT_EQ(mock::take(TSR_KERNEL(std_throwing_kernel)(&raw)), "13: opname: boom");
  EXPECT_EQ(mock::take(TSR_KERNEL(alloc_throwing_kernel)(&raw)), "8: opname: out of host memory");
  EXPECT_EQ(mock::take(TSR_KERNEL(unsupported_kernel)(&raw)), "12: opname: unsupported dtype float32");
}

TEST(Registrar, RegistersAndThrowsOnFailure) {
  tsr_registrar_s reg;
  tsr::Registrar r(mock::api(), nullptr, &reg);
  tsr_device_type_def_t dt{};
  dt.name = "cpu";
  dt.device_count = 2;
  EXPECT_EQ(r.device_type(dt), 0);
  ASSERT_EQ(reg.device_types.size(), 1u);
  EXPECT_EQ(reg.device_types[0].def.struct_size, sizeof(tsr_device_type_def_t));
  try {
    r.device_type(dt);
    FAIL();
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_ALREADY_EXISTS);
  }
  r.kernel("add", "test::add", 0, TSR_DTYPE_BIT(TSR_F32), TSR_KERNEL(ok_kernel), 5);
  ASSERT_EQ(reg.kernels.size(), 1u);
  EXPECT_EQ(reg.kernels[0].def.priority, 5);
  EXPECT_EQ(reg.kernels[0].def.struct_size, sizeof(tsr_kernel_def_t));
  EXPECT_EQ(reg.find("add", TSR_F32)->name, "test::add");
  EXPECT_EQ(reg.find("add", TSR_F64), nullptr);
  reg.fail_kernels = true;
  try {
    r.kernel("nope", "test::nope", 0, 0, TSR_KERNEL(ok_kernel));
    FAIL();
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_NOT_FOUND);
    EXPECT_EQ(std::string(e.what()), "no op named 'nope'");
  }
  r.op("test::foo(Tensor a) -> Tensor", nullptr);
  EXPECT_EQ(reg.op_schemas.at(0), "test::foo(Tensor a) -> Tensor");
}

// ---- TSR_DEFINE_PLUGIN in this executable ------------------------------------------------------

int g_mode = 0;  // 0 ok, 1 init throws, 2 score throws
int g_shutdowns = 0;

int32_t test_score(const tsr_api_t*, std::string& reason) {
  if (g_mode == 2) throw std::runtime_error("no device here");
  reason = "fine";
  return 7;
}
void* test_init(tsr::Registrar& r) {
  if (g_mode == 1) tsr::fail(TSR_FAILED_PRECONDITION, "sdktest: driver too old");
  r.extension("sdktest.table", &g_mode);
  return &g_shutdowns;
}
void test_shutdown(const tsr_api_t*, void* state) {
  ++*static_cast<int*>(state);
  throw std::runtime_error("ignored");
}

}  // namespace

TSR_DEFINE_PLUGIN("sdktest", "1.2.3", "SDK test plugin", test_score, test_init, test_shutdown)

namespace {

TEST(DefinePlugin, QueryScoreInitShutdown) {
  EXPECT_EQ(tsr_plugin_query(TSR_ABI_VERSION + (1u << 16)), nullptr);  // other major
  const tsr_plugin_t* p = tsr_plugin_query(TSR_ABI_VERSION + 5);       // newer minor is fine
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->struct_size, sizeof(tsr_plugin_t));
  EXPECT_EQ(p->abi_version, TSR_ABI_VERSION);
  EXPECT_STREQ(p->name, "sdktest");
  EXPECT_STREQ(p->version, "1.2.3");
  EXPECT_STREQ(p->description, "SDK test plugin");
  char reason[64] = "x";
  g_mode = 0;
  EXPECT_EQ(p->score(mock::api(), reason, sizeof reason), 7);
  EXPECT_STREQ(reason, "fine");
  g_mode = 2;
  EXPECT_EQ(p->score(mock::api(), reason, sizeof reason), 0);
  EXPECT_STREQ(reason, "no device here");
  EXPECT_EQ(p->score(mock::api(), nullptr, 0), 0);

  tsr_registrar_s reg;
  void* state = nullptr;
  g_mode = 1;
  EXPECT_EQ(mock::take(p->init(mock::api(), nullptr, &reg, &state)), "9: sdktest: driver too old");
  g_mode = 0;
  EXPECT_EQ(mock::take(p->init(mock::api(), nullptr, &reg, &state)), "");
  EXPECT_EQ(state, &g_shutdowns);
  EXPECT_EQ(reg.extensions.count("sdktest.table"), 1u);
  p->shutdown(mock::api(), state);  // throws inside: swallowed
  EXPECT_EQ(g_shutdowns, 1);
}

}  // namespace
