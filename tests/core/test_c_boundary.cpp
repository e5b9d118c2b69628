// Misuse through the C table: NULL handles, NULL arrays, out-of-enum values and malformed
// strings get INVALID_ARGUMENT (or a documented fallback), never a crash (issue 18, items 6 and 9).
#include <gtest/gtest.h>

#include <string>

#include "tessera/tessera.hpp"

using tsr::Tensor;

namespace {

// Expects st to be a status with `code` whose message contains `needle`; frees it.
void expect_status(tsr_status_t st, tsr_code_t code, const std::string& needle) {
  const tsr_api_t* api = tsr::api();
  ASSERT_NE(st, nullptr) << "expected " << needle << " to be refused";
  EXPECT_EQ(api->status_code(st), code) << api->status_message(st);
  EXPECT_NE(std::string(api->status_message(st)).find(needle), std::string::npos) << api->status_message(st);
  api->status_free(st);
}

tsr_value_t tensor_value(const Tensor& t) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.tensor = t.get();
  return v;
}

tsr_value_t int_value(int64_t i) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_INT;
  v.u.i = i;
  return v;
}

tsr_value_t dtype_value(int32_t d) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_DTYPE;
  v.u.dtype = d;
  return v;
}

// Calls op `name` with `args`; returns the status (the output, if any, is released).
tsr_status_t call(const char* name, std::vector<tsr_value_t> args) {
  const tsr_api_t* api = tsr::api();
  tsr_op_t* op = nullptr;
  if (tsr_status_t st = api->op_find(tsr::runtime(), name, &op)) return st;
  tsr_tensor_t* out = nullptr;
  tsr_status_t st = api->op_call(op, args.data(), args.size(), &out, 1);
  api->tensor_release(out);
  return st;
}

Tensor sample() { return tsr::randn({3, 4}); }

}  // namespace

TEST(CBoundary, DtypeArgumentsOutsideTheEnumAreRefusedBeforeTheOpRuns) {
  Tensor x = sample();
  for (const char* op : {"softmax", "cumsum"})
    for (int32_t bad : {99, -1, 0}) expect_status(call(op, {tensor_value(x), int_value(1), dtype_value(bad)}),
                                                   TSR_INVALID_ARGUMENT, "is not a dtype");
  tsr_value_t none{};
  none.tag = TSR_VALUE_NONE;
  tsr_value_t keep{};
  keep.tag = TSR_VALUE_BOOL;
  expect_status(call("prod", {tensor_value(x), none, keep, dtype_value(1000)}), TSR_INVALID_ARGUMENT, "prod");
  // A valid dtype still works.
  ASSERT_EQ(call("softmax", {tensor_value(x), int_value(1), dtype_value(TSR_F64)}), nullptr);
}

TEST(CBoundary, NegativeListLengthsNullListsAndNullStringsAreRefused) {
  Tensor x = sample();
  tsr_value_t dims{};
  dims.tag = TSR_VALUE_INT_LIST;
  int64_t d0 = 0;
  dims.u.ints.data = &d0;
  dims.u.ints.len = -1;  // read as "no dims" it would return the input unreduced
  expect_status(call("sum", {tensor_value(x), dims}), TSR_INVALID_ARGUMENT, "negative list length");
  dims.u.ints.data = nullptr;
  dims.u.ints.len = 2;
  expect_status(call("sum", {tensor_value(x), dims}), TSR_INVALID_ARGUMENT, "NULL list");
  tsr_value_t str{};
  str.tag = TSR_VALUE_STRING;
  str.u.str = nullptr;
  expect_status(call("gelu", {tensor_value(x), str}), TSR_INVALID_ARGUMENT, "NULL string");
  tsr_value_t list{};
  list.tag = TSR_VALUE_TENSOR_LIST;
  list.u.tensors.len = -3;
  expect_status(call("cat", {list}), TSR_INVALID_ARGUMENT, "negative list length");
}

TEST(CBoundary, DeviceArgumentsOfUnknownTypesOrIndicesAreRefused) {
  tsr_value_t size{};
  size.tag = TSR_VALUE_INT_LIST;
  int64_t n = 3;
  size.u.ints.data = &n;
  size.u.ints.len = 1;
  tsr_value_t fill = int_value(1);
  tsr_value_t none{};
  none.tag = TSR_VALUE_NONE;
  for (tsr_device_t d : {tsr_device_t{99, 0}, tsr_device_t{-1, 0}, tsr_device_t{TSR_DEVICE_TYPE_CPU, 1 << 30}}) {
    tsr_value_t dev{};
    dev.tag = TSR_VALUE_DEVICE;
    dev.u.device = d;
    expect_status(call("full", {size, fill, none, dev}), TSR_INVALID_ARGUMENT, "full: argument 'device'");
  }
}

TEST(CBoundary, StatusCreateKeepsCodesInsideTheEnum) {
  const tsr_api_t* api = tsr::api();
  for (int code : {999, -5, 16}) {
    tsr_status_t st = api->status_create(static_cast<tsr_code_t>(code), "plugin failure");
    EXPECT_EQ(api->status_code(st), TSR_UNKNOWN);
    EXPECT_NE(std::string(api->status_message(st)).find(std::to_string(code)), std::string::npos);
    EXPECT_NE(std::string(api->status_message(st)).find("plugin failure"), std::string::npos);
    api->status_free(st);
  }
  tsr_status_t st = api->status_create(TSR_DATA_LOSS, nullptr);
  EXPECT_EQ(api->status_code(st), TSR_DATA_LOSS);
  api->status_free(st);
}

TEST(CBoundary, NullRuntimeIsRefusedByEveryEntryThatReturnsAStatus) {
  const tsr_api_t* api = tsr::api();
  tsr_device_t cpu{TSR_DEVICE_TYPE_CPU, 0};
  tsr_plugin_record_t rec{};
  rec.struct_size = sizeof(rec);
  int32_t type = 0;
  tsr_device_t d{};
  tsr_memory_stats_t stats{};
  stats.struct_size = sizeof(stats);
  char* snapshot = nullptr;
  expect_status(api->plugin_record(nullptr, 0, &rec), TSR_INVALID_ARGUMENT, "plugin_record");
  expect_status(api->device_type_lookup(nullptr, "cpu", &type), TSR_INVALID_ARGUMENT, "device_type_lookup");
  expect_status(api->device_synchronize(nullptr, cpu), TSR_INVALID_ARGUMENT, "device_synchronize");
  expect_status(api->device_parse(nullptr, "cpu", &d), TSR_INVALID_ARGUMENT, "device_parse");
  expect_status(api->memory_stats(nullptr, cpu, &stats), TSR_INVALID_ARGUMENT, "memory_stats");
  expect_status(api->memory_snapshot(nullptr, cpu, &snapshot), TSR_INVALID_ARGUMENT, "memory_snapshot");
  expect_status(api->empty_cache(nullptr, cpu), TSR_INVALID_ARGUMENT, "empty_cache");
  expect_status(api->plugin_record(tsr::runtime(), 1u << 20, &rec), TSR_INVALID_ARGUMENT, "out of range");
  // Entries without a status have a documented answer for NULL.
  EXPECT_EQ(api->plugin_count(nullptr), 0u);
  EXPECT_EQ(api->device_type_count(nullptr), 0);
  EXPECT_EQ(api->device_count(nullptr, 0), 0);
  EXPECT_EQ(api->device_type_name(nullptr, 0), nullptr);
}

TEST(CBoundary, NullShapeArraysOfViewsAreRefused) {
  const tsr_api_t* api = tsr::api();
  Tensor x = sample();
  tsr_tensor_t* out = nullptr;
  int64_t sizes[2] = {4, 3};
  expect_status(api->tensor_as_strided(x.get(), 2, sizes, nullptr, 0, &out), TSR_INVALID_ARGUMENT, "strides is NULL");
  expect_status(api->tensor_as_strided(x.get(), 2, nullptr, sizes, 0, &out), TSR_INVALID_ARGUMENT, "sizes is NULL");
  expect_status(api->tensor_view(x.get(), 2, nullptr, &out), TSR_INVALID_ARGUMENT, "sizes is NULL");
  expect_status(api->tensor_reshape(x.get(), 2, nullptr, &out), TSR_INVALID_ARGUMENT, "sizes is NULL");
  expect_status(api->tensor_permute(x.get(), 2, nullptr, &out), TSR_INVALID_ARGUMENT, "dims is NULL");
  expect_status(api->tensor_expand(x.get(), 2, nullptr, &out), TSR_INVALID_ARGUMENT, "sizes is NULL");
  EXPECT_EQ(out, nullptr);
}

TEST(CBoundary, DeviceStringsAreParsedStrictly) {
  const tsr_api_t* api = tsr::api();
  tsr_device_t d{-7, -7};
  for (const char* bad : {"cpu:4294967296", "cpu:99999999999999999999", "cpu:+0", "cpu: 0", "cpu:0x0", "cpu:", "cpu:-1"})
    expect_status(api->device_parse(tsr::runtime(), bad, &d), TSR_INVALID_ARGUMENT, "device");
  EXPECT_EQ(d.type, -7);  // nothing written on failure
  ASSERT_EQ(api->device_parse(tsr::runtime(), "cpu:0", &d), nullptr);
  EXPECT_EQ(d.type, TSR_DEVICE_TYPE_CPU);
  EXPECT_EQ(d.index, 0);
}

TEST(CBoundary, AnAllocatorConfigurationForAnUnknownDeviceTypeIsReported) {
  const tsr_api_t* api = tsr::api();
  tsr_runtime_options_t opts{};
  opts.struct_size = sizeof(opts);
  opts.alloc_conf = "nosuchdevice.limit_mb:1";
  tsr_runtime_t* rt = nullptr;
  testing::internal::CaptureStderr();
  tsr_status_t st = api->runtime_create(&opts, &rt);
  std::string err = testing::internal::GetCapturedStderr();
  ASSERT_EQ(st, nullptr) << api->status_message(st);
  EXPECT_NE(err.find("'nosuchdevice.' names no device type"), std::string::npos) << err;
  api->runtime_destroy(rt);
  // A known type, and "cuda" (a plugin record even where it was refused), are not reported.
  opts.alloc_conf = "cpu.limit_mb:64";
  testing::internal::CaptureStderr();
  ASSERT_EQ(api->runtime_create(&opts, &rt), nullptr);
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(err.find("names no device type"), std::string::npos) << err;
  api->runtime_destroy(rt);
}
