// The loader's fault matrix: each broken plugin sits alone in cases/NAME (see CMakeLists.txt).
// Every refusal must be recorded with a specific reason, leave nothing half-registered, and
// leave the host runtime working (checked with the good "toy" plugin, and with the cpu backend
// when it is built).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tessera/api.h"

namespace {

const tsr_api_t* api() {
  static const tsr_api_t* a = tsr_get_api(TSR_ABI_VERSION);
  return a;
}

std::string case_dir(const std::string& name) { return std::string(TSR_LOADER_CASES) + "/" + name; }
std::string good_dir() { return case_dir("good"); }

bool have_cpu() {
#ifdef TSR_HAVE_CPU
  return true;
#else
  return false;
#endif
}

std::string take_message(tsr_status_t st) {
  if (!st) return "";
  std::string m = api()->status_message(st);
  api()->status_free(st);
  return m;
}

struct Record {
  std::string name, version, path, reason;
  bool loaded = false;
  int score = 0;
};

// A runtime over exactly the given plugin path (no default plugins).
class Rt {
 public:
  explicit Rt(const std::string& plugin_path) {
    tsr_runtime_options_t o{};
    o.struct_size = TSR_STRUCT_SIZE(tsr_runtime_options_t);
    o.plugin_path = plugin_path.c_str();
    o.no_default_plugins = 1;
    std::string err = take_message(api()->runtime_create(&o, &rt_));
    EXPECT_EQ(err, "") << "runtime_create(" << plugin_path << ")";
  }
  ~Rt() { destroy(); }
  Rt(const Rt&) = delete;
  Rt& operator=(const Rt&) = delete;
  void destroy() {
    if (rt_) api()->runtime_destroy(rt_);
    rt_ = nullptr;
  }
  tsr_runtime_t* get() const { return rt_; }

  std::vector<Record> records() const {
    std::vector<Record> out;
    for (size_t i = 0; i < api()->plugin_count(rt_); ++i) {
      tsr_plugin_record_t r{};
      r.struct_size = TSR_STRUCT_SIZE(tsr_plugin_record_t);
      EXPECT_EQ(take_message(api()->plugin_record(rt_, i, &r)), "");
      out.push_back(Record{r.name, r.version, r.path, r.reason, r.loaded != 0, r.score});
    }
    return out;
  }
  std::vector<Record> records_named(const std::string& name) const {
    std::vector<Record> out;
    for (const Record& r : records())
      if (r.name == name) out.push_back(r);
    return out;
  }
  // The one record of `name`; fails the test when there is not exactly one.
  Record record(const std::string& name) const {
    std::vector<Record> rs = records_named(name);
    EXPECT_EQ(rs.size(), 1u) << "records named '" << name << "'";
    return rs.empty() ? Record{} : rs.front();
  }
  bool has_device_type(const char* name) const {
    int32_t id = -1;
    return take_message(api()->device_type_lookup(rt_, name, &id)).empty();
  }
  bool has_op(const char* name) const {
    tsr_op_t* op = nullptr;
    return take_message(api()->op_find(rt_, name, &op)).empty() && op;
  }

 private:
  tsr_runtime_t* rt_ = nullptr;
};

// Everything a runtime holds that plugins can add, as comparable text.
struct Snapshot {
  std::set<std::string> device_types, ops, kernels;
  bool operator==(const Snapshot& o) const {
    return device_types == o.device_types && ops == o.ops && kernels == o.kernels;
  }
};

Snapshot snapshot(tsr_runtime_t* rt) {
  Snapshot s;
  for (int32_t t = 0; t < api()->device_type_count(rt); ++t) {
    const char* n = api()->device_type_name(rt, t);
    int32_t id = -1;
    if (n && take_message(api()->device_type_lookup(rt, n, &id)).empty())
      s.device_types.insert(std::string(n) + "#" + std::to_string(api()->device_count(rt, t)));
  }
  for (size_t i = 0; i < api()->op_count(rt); ++i) {
    tsr_op_t* op = api()->op_at(rt, i);
    s.ops.insert(api()->op_schema(op));
    for (size_t k = 0; k < api()->op_kernel_count(op); ++k) {
      tsr_kernel_info_t info{};
      info.struct_size = TSR_STRUCT_SIZE(tsr_kernel_info_t);
      EXPECT_EQ(take_message(api()->op_kernel_info(op, k, &info)), "");
      s.kernels.insert(std::string(api()->op_name(op)) + "/" + info.kernel_name + "/" + info.plugin_name + "/" +
                       std::to_string(info.device_type) + "/" + std::to_string(info.dtype_mask));
    }
  }
  return s;
}

// Kernels any op holds that came from `plugin`.
std::vector<std::string> kernels_of_plugin(tsr_runtime_t* rt, const std::string& plugin) {
  std::vector<std::string> out;
  for (size_t i = 0; i < api()->op_count(rt); ++i) {
    tsr_op_t* op = api()->op_at(rt, i);
    for (size_t k = 0; k < api()->op_kernel_count(op); ++k) {
      tsr_kernel_info_t info{};
      info.struct_size = TSR_STRUCT_SIZE(tsr_kernel_info_t);
      EXPECT_EQ(take_message(api()->op_kernel_info(op, k, &info)), "");
      if (plugin == info.plugin_name) out.push_back(std::string(api()->op_name(op)) + ":" + info.kernel_name);
    }
  }
  return out;
}

tsr_value_t tensor_arg(tsr_tensor_t* t) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_TENSOR;
  v.u.tensor = t;
  return v;
}
tsr_value_t double_arg(double d) {
  tsr_value_t v{};
  v.tag = TSR_VALUE_DOUBLE;
  v.u.d = d;
  return v;
}

// toy::axpb on toy:1 gives a*x+b (plugin-defined op, meta function and kernel, through op_call).
void expect_toy_works(tsr_runtime_t* rt) {
  int32_t toy = -1;
  ASSERT_EQ(take_message(api()->device_type_lookup(rt, "toy", &toy)), "");
  ASSERT_EQ(api()->device_count(rt, toy), 2);
  const float x[4] = {1.f, 2.f, 3.f, 4.f};
  const int64_t sizes[2] = {2, 2};
  tsr_tensor_t* xt = nullptr;
  ASSERT_EQ(take_message(api()->tensor_from_host(rt, x, 2, sizes, TSR_F32, tsr_device_t{toy, 1}, &xt)), "");
  tsr_op_t* op = nullptr;
  ASSERT_EQ(take_message(api()->op_find(rt, "toy::axpb", &op)), "");
  tsr_value_t args[3] = {tensor_arg(xt), double_arg(3.0), double_arg(0.5)};
  tsr_tensor_t* out = nullptr;
  ASSERT_EQ(take_message(api()->op_call(op, args, 3, &out, 1)), "");
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(api()->tensor_dtype(out), TSR_F32);
  EXPECT_EQ(api()->tensor_device(out).type, toy);
  EXPECT_EQ(api()->tensor_device(out).index, 1);
  ASSERT_EQ(api()->tensor_ndim(out), 2);
  EXPECT_EQ(api()->tensor_sizes(out)[0], 2);
  EXPECT_EQ(api()->tensor_sizes(out)[1], 2);
  float y[4] = {};
  ASSERT_EQ(take_message(api()->tensor_copy_to_host(out, y, sizeof(y))), "");
  EXPECT_FLOAT_EQ(y[0], 3.5f);
  EXPECT_FLOAT_EQ(y[1], 6.5f);
  EXPECT_FLOAT_EQ(y[2], 9.5f);
  EXPECT_FLOAT_EQ(y[3], 12.5f);
  api()->tensor_release(out);
  api()->tensor_release(xt);
}

// add on cpu:0 works (only when the cpu backend is built and on the path).
void expect_cpu_works(tsr_runtime_t* rt) {
  const float a[3] = {1.f, 2.f, 3.f}, b[3] = {10.f, 20.f, 30.f};
  const int64_t n[1] = {3};
  tsr_tensor_t *at = nullptr, *bt = nullptr, *out = nullptr;
  ASSERT_EQ(take_message(api()->tensor_from_host(rt, a, 1, n, TSR_F32, tsr_device_t{0, 0}, &at)), "");
  ASSERT_EQ(take_message(api()->tensor_from_host(rt, b, 1, n, TSR_F32, tsr_device_t{0, 0}, &bt)), "");
  tsr_op_t* add = nullptr;
  ASSERT_EQ(take_message(api()->op_find(rt, "add", &add)), "");
  tsr_value_t args[2] = {tensor_arg(at), tensor_arg(bt)};
  ASSERT_EQ(take_message(api()->op_call(add, args, 2, &out, 1)), "");
  float y[3] = {};
  ASSERT_EQ(take_message(api()->tensor_copy_to_host(out, y, sizeof(y))), "");
  EXPECT_FLOAT_EQ(y[0], 11.f);
  EXPECT_FLOAT_EQ(y[2], 33.f);
  api()->tensor_release(out);
  api()->tensor_release(bt);
  api()->tensor_release(at);
}

// The path of a refusal case: the case first, then the good plugin, then the cpu backend.
std::string with_healthy(const std::string& dir) {
  std::string p = dir + ":" + good_dir();
  if (have_cpu()) p += ":" + std::string(TSR_PLUGIN_DIR);
  return p;
}

// The common assertions of a refused plugin: one record, refused, reason containing every
// fragment; the runtime holds exactly what it holds without the case directory; it works.
Record expect_refused(const std::string& dir, const std::string& name, const std::vector<std::string>& fragments) {
  Rt rt(with_healthy(dir));
  Record r = rt.record(name);
  EXPECT_FALSE(r.loaded) << name;
  EXPECT_FALSE(r.reason.empty()) << name;
  for (const std::string& f : fragments) EXPECT_NE(r.reason.find(f), std::string::npos) << "reason: " << r.reason;
  EXPECT_EQ(r.path.rfind(dir, 0), 0u) << r.path;
  EXPECT_TRUE(kernels_of_plugin(rt.get(), name).empty());
  Rt baseline(with_healthy(good_dir()));  // the same minus the case directory
  EXPECT_TRUE(snapshot(rt.get()) == snapshot(baseline.get())) << name << " left something registered";
  EXPECT_TRUE(rt.record("toy").loaded);
  expect_toy_works(rt.get());
  if (have_cpu()) {
    EXPECT_TRUE(rt.record("cpu").loaded);
    expect_cpu_works(rt.get());
  }
  return r;
}

// A per-test log file the test plugins append their lifecycle calls to.
class LogFile {
 public:
  LogFile() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = ::testing::TempDir() + "tsr_loader_" + info->name() + "_" + std::to_string(getpid()) + ".log";
    std::remove(path_.c_str());
    setenv("TSR_LOADER_TEST_LOG", path_.c_str(), 1);
  }
  ~LogFile() {
    unsetenv("TSR_LOADER_TEST_LOG");
    std::remove(path_.c_str());
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    std::ifstream in(path_);
    for (std::string l; std::getline(in, l);) out.push_back(l);
    return out;
  }

 private:
  std::string path_;
};

// chmod for the duration of a test (restored even when an assertion fails).
class ScopedMode {
 public:
  ScopedMode(const std::string& path, mode_t mode) : path_(path) {
    struct stat st;
    ok_ = ::stat(path.c_str(), &st) == 0;
    old_ = st.st_mode & 07777;
    ok_ = ok_ && ::chmod(path.c_str(), mode) == 0;
  }
  ~ScopedMode() { ::chmod(path_.c_str(), old_ & ~static_cast<mode_t>(S_IWOTH)); }
  bool ok() const { return ok_; }

 private:
  std::string path_;
  mode_t old_ = 0755;
  bool ok_ = false;
};

// ---- the healthy cases -----------------------------------------------------------------------

TEST(LoaderGood, PluginDefinedOpIsCallable) {
  Rt rt(good_dir());
  Record r = rt.record("toy");
  EXPECT_TRUE(r.loaded);
  EXPECT_EQ(r.version, "1.2.3");
  EXPECT_EQ(r.reason, "");
  EXPECT_GE(r.score, 1);
  expect_toy_works(rt.get());

  // Defaults come from the schema: a=2, b=1.
  int32_t toy = -1;
  ASSERT_EQ(take_message(api()->device_type_lookup(rt.get(), "toy", &toy)), "");
  const float x[2] = {5.f, -1.f};
  const int64_t n[1] = {2};
  tsr_tensor_t *xt = nullptr, *out = nullptr;
  ASSERT_EQ(take_message(api()->tensor_from_host(rt.get(), x, 1, n, TSR_F32, tsr_device_t{toy, 0}, &xt)), "");
  tsr_op_t* op = nullptr;
  ASSERT_EQ(take_message(api()->op_find(rt.get(), "toy::axpb", &op)), "");
  tsr_value_t args[1] = {tensor_arg(xt)};
  ASSERT_EQ(take_message(api()->op_call(op, args, 1, &out, 1)), "");
  float y[2] = {};
  ASSERT_EQ(take_message(api()->tensor_copy_to_host(out, y, sizeof(y))), "");
  EXPECT_FLOAT_EQ(y[0], 11.f);
  EXPECT_FLOAT_EQ(y[1], -1.f);
  api()->tensor_release(out);

  // The meta function rejects other dtypes with a message naming the op.
  const int64_t xi[2] = {1, 2};
  tsr_tensor_t* it = nullptr;
  ASSERT_EQ(take_message(api()->tensor_from_host(rt.get(), xi, 1, n, TSR_I64, tsr_device_t{toy, 0}, &it)), "");
  tsr_value_t bad[1] = {tensor_arg(it)};
  tsr_tensor_t* none = nullptr;
  std::string err = take_message(api()->op_call(op, bad, 1, &none, 1));
  EXPECT_NE(err.find("toy::axpb"), std::string::npos) << err;
  EXPECT_NE(err.find("float32"), std::string::npos) << err;
  EXPECT_EQ(none, nullptr);
  api()->tensor_release(it);
  api()->tensor_release(xt);

  // Introspection sees the kernel with its plugin and dtype constraint.
  ASSERT_EQ(api()->op_kernel_count(op), 1u);
  tsr_kernel_info_t info{};
  info.struct_size = TSR_STRUCT_SIZE(tsr_kernel_info_t);
  ASSERT_EQ(take_message(api()->op_kernel_info(op, 0, &info)), "");
  EXPECT_STREQ(info.plugin_name, "toy");
  EXPECT_STREQ(info.kernel_name, "toy::axpb_f32");
  EXPECT_EQ(info.device_type, toy);
  EXPECT_EQ(info.dtype_mask, TSR_DTYPE_BIT(TSR_F32));
}

TEST(LoaderGood, NewerMinorWithAppendedHeaderFieldsLoads) {
  LogFile log;
  {
    Rt rt(case_dir("newer_minor"));
    Record r = rt.record("newer");
    EXPECT_TRUE(r.loaded) << r.reason;
    EXPECT_EQ(r.version, "1.7.0");
  }
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"init newer", "shutdown newer"}));
}

TEST(LoaderGood, HostWorksWithTheCpuBackendAfterACaseDir) {
  if (!have_cpu()) GTEST_SKIP() << "the cpu backend is not built";
  Rt rt(good_dir() + ":" + TSR_PLUGIN_DIR);
  EXPECT_TRUE(rt.record("cpu").loaded);
  expect_cpu_works(rt.get());
  expect_toy_works(rt.get());
}

// ---- symbols, ABI, manifests ------------------------------------------------------------------

TEST(LoaderFault, MissingEntrySymbol) {
  expect_refused(case_dir("no_entry"), "noentry", {"missing entry symbol", "tsr_plugin_query"});
}

TEST(LoaderFault, WrongAbiMajorInPluginHeader) {
  expect_refused(case_dir("abi_header"), "future", {"built for ABI 2.0", "core speaks 1."});
}

TEST(LoaderFault, WrongAbiMajorInManifest) {
  expect_refused(case_dir("abi_manifest"), "abi2", {"manifest ABI '2.0'", "incompatible"});
}

TEST(LoaderFault, MissingManifest) {
  expect_refused(case_dir("no_manifest"), "nomanifest", {"missing manifest", "nomanifest.json"});
}

TEST(LoaderFault, MalformedManifestJson) {
  expect_refused(case_dir("bad_json"), "badjson", {"bad manifest", "badjson.json"});
}

TEST(LoaderFault, ManifestNameMismatch) { expect_refused(case_dir("name_mismatch"), "alpha", {"'beta'", "'alpha'"}); }

// ---- init, score ----------------------------------------------------------------------------

TEST(LoaderFault, InitFailureLeavesNothingRegistered) {
  Record r =
      expect_refused(case_dir("init_fails"), "ghost", {"init failed", "ghost init failed on purpose (no ectoplasm)"});
  Rt rt(with_healthy(case_dir("init_fails")));
  Rt baseline(with_healthy(good_dir()));
  EXPECT_FALSE(rt.has_op("ghost::haunt"));
  EXPECT_FALSE(rt.has_device_type("ghost"));
  EXPECT_EQ(api()->device_type_count(rt.get()), api()->device_type_count(baseline.get()));
  EXPECT_TRUE(kernels_of_plugin(rt.get(), "ghost").empty());
  // "add" is a built-in op: the staged ghost::add kernel must not have reached it.
  tsr_op_t *add = nullptr, *add0 = nullptr;
  ASSERT_EQ(take_message(api()->op_find(rt.get(), "add", &add)), "");
  ASSERT_EQ(take_message(api()->op_find(baseline.get(), "add", &add0)), "");
  EXPECT_EQ(api()->op_kernel_count(add), api()->op_kernel_count(add0));
}

// Definitions too short to hold their required fields, or without them, are refused by the
// registrar (naming plugin and op or allocator), so init fails and nothing is registered.
TEST(LoaderFault, ShortOrIncompleteDefinitionsAreRefused) {
  expect_refused(case_dir("short_kernel_size0"), "short_k0",
                 {"init failed", "plugin 'short_k0'", "register_kernel for 'short_k0::op'", "struct_size 0",
                  "tsr_kernel_def_t", "field fn"});
  expect_refused(case_dir("short_kernel_cut"), "short_kcut",
                 {"plugin 'short_kcut'", "register_kernel for 'short_kcut::op'",
                  "struct_size " + std::to_string(offsetof(tsr_kernel_def_t, fn)), "field fn"});
  expect_refused(case_dir("short_kernel_nofn"), "short_knofn",
                 {"plugin 'short_knofn'", "register_kernel for 'short_knofn::op'", "fn is NULL"});
  expect_refused(case_dir("short_alloc_size0"), "short_a0",
                 {"plugin 'short_a0'", "register_allocator 'short_a0_alloc'", "struct_size 0", "tsr_raw_allocator_t",
                  "field free"});
}

TEST(LoaderFault, InitThrowingWithoutTheSdkIsCaught) {
  expect_refused(case_dir("throws_raw"), "thrower_raw", {"exception", "boom from raw init"});
}

// A raw meta function or kernel that lets a C++ exception escape gives INTERNAL with the op, the
// kernel and the exception's what() (issue 16: it used to lose the message).
TEST(LoaderFault, RawKernelAndMetaExceptionsKeepTheirMessage) {
  if (!have_cpu()) GTEST_SKIP() << "needs the cpu plugin";
  Rt rt(with_healthy(case_dir("kernel_throws")));
  ASSERT_TRUE(rt.record("kthrow").loaded) << rt.record("kthrow").reason;
  const float x[2] = {1.f, 2.f};
  const double xd[2] = {1.0, 2.0};
  const int64_t n[1] = {2};
  tsr_tensor_t *xt = nullptr, *xdt = nullptr, *out = nullptr;
  ASSERT_EQ(take_message(api()->tensor_from_host(rt.get(), x, 1, n, TSR_F32, tsr_device_t{0, 0}, &xt)), "");
  ASSERT_EQ(take_message(api()->tensor_from_host(rt.get(), xd, 1, n, TSR_F64, tsr_device_t{0, 0}, &xdt)), "");
  auto call = [&](const char* name, tsr_tensor_t* t, tsr_code_t* code) {
    tsr_op_t* op = nullptr;
    EXPECT_EQ(take_message(api()->op_find(rt.get(), name, &op)), "");
    tsr_value_t args[1] = {tensor_arg(t)};
    tsr_status_t st = api()->op_call(op, args, 1, &out, 1);
    *code = st ? api()->status_code(st) : TSR_OK;
    return take_message(st);
  };
  tsr_code_t code = TSR_OK;
  std::string m = call("kthrow::kernel_throws", xt, &code);
  EXPECT_EQ(code, TSR_INTERNAL);
  for (const char* f : {"kthrow::kernel_throws", "kthrow::kernel_throws_cpu", "boom from raw kernel"})
    EXPECT_NE(m.find(f), std::string::npos) << m;
  m = call("kthrow::kernel_throws", xdt, &code);  // not a std::exception: no message to keep
  EXPECT_EQ(code, TSR_INTERNAL);
  EXPECT_NE(m.find("kthrow::kernel_throws_int_cpu threw a C++ exception"), std::string::npos) << m;
  m = call("kthrow::meta_throws", xt, &code);
  EXPECT_EQ(code, TSR_INTERNAL);
  for (const char* f : {"kthrow::meta_throws", "meta function", "boom from raw meta"})
    EXPECT_NE(m.find(f), std::string::npos) << m;
  EXPECT_EQ(out, nullptr);
  api()->tensor_release(xdt);
  api()->tensor_release(xt);
}

// A host asking for a device type that a refused plugin would have registered learns why
// (issue 16: it got only "is not registered").
TEST(LoaderFault, MissingDeviceTypeNamesTheRefusedPlugin) {
  Rt rt(with_healthy(case_dir("init_fails")));
  int32_t id = -1;
  tsr_status_t st = api()->device_type_lookup(rt.get(), "ghost", &id);
  ASSERT_NE(st, nullptr);
  EXPECT_EQ(api()->status_code(st), TSR_NOT_FOUND);
  std::string m = take_message(st);
  for (const char* f :
       {"device type 'ghost' is not registered", "the plugin 'ghost'", "was refused", "ghost init failed on purpose"})
    EXPECT_NE(m.find(f), std::string::npos) << m;
  // Another missing name lists the refusals instead.
  m = take_message(api()->device_type_lookup(rt.get(), "nosuch", &id));
  EXPECT_NE(m.find("'nosuch' is not registered"), std::string::npos) << m;
  EXPECT_NE(m.find("refused (tessera info lists them all):"), std::string::npos) << m;
  EXPECT_NE(m.find("ghost: init failed"), std::string::npos) << m;
  // Nothing refused: the plain message.
  Rt good(good_dir());
  m = take_message(api()->device_type_lookup(good.get(), "nosuch", &id));
  EXPECT_EQ(m, "device type 'nosuch' is not registered");
}

TEST(LoaderFault, InitThrowingThroughTheSdkIsRefused) {
  expect_refused(case_dir("throws_sdk"), "thrower_sdk", {"init failed", "boom from sdk init"});
  Rt rt(case_dir("throws_sdk"));
  EXPECT_FALSE(rt.has_op("thrower::op"));
}

TEST(LoaderFault, ScoreZeroIsRefusedWithItsReason) {
  Record r = expect_refused(case_dir("score_zero"), "picky", {"scored 0", "no frobnicator on this machine"});
  EXPECT_EQ(r.score, 0);
}

// ---- search path ----------------------------------------------------------------------------

TEST(LoaderFault, DuplicateNameFirstWinsSecondShadowed) {
  for (bool a_first : {true, false}) {
    std::string first = case_dir(a_first ? "dup_a" : "dup_b"), second = case_dir(a_first ? "dup_b" : "dup_a");
    Rt rt(first + ":" + second);
    std::vector<Record> rs = rt.records_named("dup");
    ASSERT_EQ(rs.size(), 2u);
    const Record& winner = rs[0].loaded ? rs[0] : rs[1];
    const Record& loser = rs[0].loaded ? rs[1] : rs[0];
    EXPECT_TRUE(winner.loaded);
    EXPECT_FALSE(loser.loaded);
    EXPECT_EQ(winner.path.rfind(first + "/", 0), 0u) << winner.path;
    EXPECT_EQ(loser.path.rfind(second + "/", 0), 0u) << loser.path;
    EXPECT_NE(loser.reason.find("shadowed"), std::string::npos) << loser.reason;
    EXPECT_NE(loser.reason.find(winner.path), std::string::npos) << loser.reason;
    const char* which = static_cast<const char*>(api()->get_extension(rt.get(), "dup.which"));
    ASSERT_NE(which, nullptr);
    EXPECT_STREQ(which, a_first ? "first" : "second");
  }
}

TEST(LoaderFault, WorldWritableFileIsRefused) {
  std::string so = case_dir("ww_file") + "/wwfile.so";
  ::chmod(so.c_str(), 0755);  // a previous run that died mid-test
  ScopedMode mode(so, 0757);
  ASSERT_TRUE(mode.ok()) << so;
  expect_refused(case_dir("ww_file"), "wwfile", {"world-writable"});
}

TEST(LoaderFault, WorldWritableDirectoryIsRefused) {
  std::string dir = case_dir("ww_dir");
  ::chmod(dir.c_str(), 0755);
  ScopedMode mode(dir, 0777);
  ASSERT_TRUE(mode.ok()) << dir;
  Rt rt(with_healthy(dir));
  EXPECT_TRUE(rt.records_named("wwdir").empty()) << "nothing in a refused directory is even considered";
  bool found = false;
  for (const Record& r : rt.records())
    if (r.path == dir) {
      found = true;
      EXPECT_FALSE(r.loaded);
      EXPECT_NE(r.reason.find("world-writable"), std::string::npos) << r.reason;
    }
  EXPECT_TRUE(found) << "no record for the directory " << dir;
  EXPECT_FALSE(rt.has_device_type("wwdir"));
  expect_toy_works(rt.get());
  if (have_cpu()) expect_cpu_works(rt.get());
}

// ---- dependencies and lifecycle order -----------------------------------------------------------

TEST(LoaderFault, MissingDependency) {
  expect_refused(case_dir("dep_missing"), "orphan", {"depends on 'nonexistent_dep'", "not found"});
}

TEST(LoaderFault, DependencyCycle) {
  Rt rt(with_healthy(case_dir("dep_cycle")));
  for (const char* n : {"cyc_a", "cyc_b"}) {
    Record r = rt.record(n);
    EXPECT_FALSE(r.loaded) << n;
    EXPECT_FALSE(rt.has_device_type(n));
  }
  // The first one visited names the cycle; the other names the dependency it could not load.
  Record a = rt.record("cyc_a"), b = rt.record("cyc_b");
  EXPECT_NE(a.reason.find("dependency cycle"), std::string::npos) << a.reason;
  EXPECT_NE(b.reason.find("'cyc_a'"), std::string::npos) << b.reason;
  expect_toy_works(rt.get());
}

TEST(LoaderOrder, DependencyInitRunsFirst) {
  LogFile log;
  {
    // a_consumer.so sorts before z_provider.so, but depends on it.
    Rt rt(case_dir("dep_order"));
    std::vector<Record> rs = rt.records();
    ASSERT_EQ(rs.size(), 2u);
    EXPECT_EQ(rs[0].name, "provider");
    EXPECT_EQ(rs[1].name, "consumer");
    EXPECT_TRUE(rs[0].loaded) << rs[0].reason;
    EXPECT_TRUE(rs[1].loaded) << rs[1].reason;
    EXPECT_EQ(kernels_of_plugin(rt.get(), "consumer"), (std::vector<std::string>{"provider::twice:consumer::twice"}));
  }
  EXPECT_EQ(log.lines(),
            (std::vector<std::string>{"init provider", "init consumer", "shutdown consumer", "shutdown provider"}));
}

TEST(LoaderOrder, ShutdownRunsInReverseLoadOrder) {
  LogFile log;
  Rt rt(good_dir() + ":" + case_dir("dep_order") + ":" + case_dir("newer_minor"));
  std::vector<std::string> loaded;
  for (const Record& r : rt.records())
    if (r.loaded) loaded.push_back(r.name);
  EXPECT_EQ(loaded, (std::vector<std::string>{"toy", "provider", "consumer", "newer"}));
  EXPECT_EQ(log.lines(), (std::vector<std::string>{"init toy", "init provider", "init consumer", "init newer"}));
  rt.destroy();
  EXPECT_EQ(log.lines(),
            (std::vector<std::string>{"init toy", "init provider", "init consumer", "init newer", "shutdown newer",
                                      "shutdown consumer", "shutdown provider", "shutdown toy"}));
}

// ---- files the loader reads: manifests and .so files that are not what they claim --------------

// A scratch plugin directory (mode 0700) holding a copy of the good toy plugin and, unless a test
// replaces it, its manifest; removed at the end.
class ScratchCase {
 public:
  ScratchCase() {
    std::string tmpl = ::testing::TempDir() + "tsr_loader_case_XXXXXX";
    EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::filesystem::copy_file(good_dir() + "/toy.so", so());
    write_manifest(R"({"name": "toy", "version": "1.2.3", "abi": "1.0", "depends": []})");
  }
  ~ScratchCase() {
    std::error_code ec;
    ::chmod(dir_.c_str(), 0700);
    ::chmod(manifest().c_str(), 0600);
    std::filesystem::remove_all(dir_, ec);
  }
  ScratchCase(const ScratchCase&) = delete;
  ScratchCase& operator=(const ScratchCase&) = delete;
  const std::string& dir() const { return dir_; }
  std::string so() const { return dir_ + "/toy.so"; }
  std::string manifest() const { return dir_ + "/toy.json"; }
  void write_manifest(const std::string& text) const {
    std::error_code ec;
    std::filesystem::remove_all(manifest(), ec);
    std::ofstream(manifest()) << text;
  }
  // The one record of the toy copy, from a runtime over this directory alone.
  Record toy_record() const {
    Rt rt(dir_);
    return rt.record("toy");
  }

 private:
  std::string dir_;
};

// Runs `fn` in another thread; if it has not returned after 10 s, opens `fifo` for writing
// (which releases a reader blocked on it) and fails the test instead of hanging.
template <class F>
auto without_blocking_on(const std::string& fifo, F fn) {
  auto pending = std::async(std::launch::async, fn);
  if (pending.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
    ADD_FAILURE() << "the loader blocked on the FIFO " << fifo;
    int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    if (w >= 0) ::close(w);
  }
  return pending.get();
}

TEST(LoaderFiles, ManifestAbiMustBeExactlyMajorDotMinor) {
  ScratchCase sc;
  EXPECT_TRUE(sc.toy_record().loaded) << "the control case: abi \"1.0\" loads";
  for (const char* abi : {"4294967297.0", "1.4294967296", " 1.2", "1.2 ", "1abc", "1abc.0", "+1.0", "-1.0", "1", "1.",
                          ".0", "1.0.0", "1,0", "0x1.0", ""}) {
    sc.write_manifest(std::string(R"({"name": "toy", "abi": ")") + abi + R"("})");
    Record r = sc.toy_record();
    EXPECT_FALSE(r.loaded) << "abi '" << abi << "' was accepted";
    EXPECT_NE(r.reason.find("is not MAJOR.MINOR"), std::string::npos) << abi << ": " << r.reason;
  }
  sc.write_manifest(R"({"name": "toy"})");
  EXPECT_NE(sc.toy_record().reason.find("manifest ABI '' is not MAJOR.MINOR"), std::string::npos);
  // A long one is quoted cut short.
  sc.write_manifest(R"({"name": "toy", "abi": "1.)" + std::string(5000, '0') + R"("})");
  Record r = sc.toy_record();
  EXPECT_FALSE(r.loaded);
  EXPECT_LT(r.reason.size(), 300u) << r.reason;
}

TEST(LoaderFiles, ManifestWithDuplicateKeysIsRefused) {
  ScratchCase sc;
  sc.write_manifest(R"({"name": "toy", "abi": "2.0", "abi": "1.0"})");
  Record r = sc.toy_record();
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.reason.find("bad manifest toy.json"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("duplicate key 'abi'"), std::string::npos) << r.reason;
  sc.write_manifest(R"({"name": "toy", "abi": "1.0", "depends": [], "extra": {"k": 1, "k": 2}})");
  EXPECT_NE(sc.toy_record().reason.find("duplicate key 'k'"), std::string::npos);
}

TEST(LoaderFiles, ManifestThatIsAFifoOrADirectoryIsRefusedWithoutBlocking) {
  ScratchCase sc;
  std::filesystem::remove(sc.manifest());
  ASSERT_EQ(::mkfifo(sc.manifest().c_str(), 0600), 0);
  Record r = without_blocking_on(sc.manifest(), [&] { return sc.toy_record(); });
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.reason.find("cannot read manifest toy.json: not a regular file"), std::string::npos) << r.reason;
  std::filesystem::remove(sc.manifest());
  std::filesystem::create_directory(sc.manifest());
  r = sc.toy_record();
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.reason.find("cannot read manifest toy.json: not a regular file"), std::string::npos) << r.reason;
}

TEST(LoaderFiles, UnreadableManifestIsNotReportedMissing) {
  ScratchCase sc;
  std::filesystem::remove(sc.manifest());
  std::filesystem::create_symlink("toy.json", sc.manifest());  // a loop: ELOOP, even for root
  Record r = sc.toy_record();
  EXPECT_FALSE(r.loaded);
  EXPECT_EQ(r.reason.find("missing"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("cannot read manifest toy.json: " + std::string(std::strerror(ELOOP))), std::string::npos)
      << r.reason;
  if (::geteuid() == 0) return;  // root reads any file regardless of its mode
  sc.write_manifest(R"({"name": "toy", "abi": "1.0"})");
  ASSERT_EQ(::chmod(sc.manifest().c_str(), 0), 0);
  r = sc.toy_record();
  EXPECT_NE(r.reason.find("cannot read manifest toy.json: " + std::string(std::strerror(EACCES))), std::string::npos)
      << r.reason;
}

TEST(LoaderFiles, UnreadablePluginDirectoryIsRecorded) {
  ScratchCase sc;
  const std::string loop = sc.dir() + "/loop";
  std::filesystem::create_directory_symlink("loop", loop);
  Rt rt(loop + ":" + sc.dir() + "/does_not_exist");
  std::vector<Record> rs = rt.records_named("(directory)");
  ASSERT_EQ(rs.size(), 1u) << "a directory that does not exist is no error, one that cannot be read is";
  EXPECT_EQ(rs[0].path, loop);
  EXPECT_NE(rs[0].reason.find("cannot read the plugin directory"), std::string::npos) << rs[0].reason;
  if (::geteuid() == 0) return;                   // root lists any directory regardless of its mode
  ASSERT_EQ(::chmod(sc.dir().c_str(), 0300), 0);  // searchable, not listable
  Rt rt2(sc.dir());
  rs = rt2.records_named("(directory)");
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].reason.find(std::strerror(EACCES)), std::string::npos) << rs[0].reason;
}

TEST(LoaderFiles, TruncatedOrForeignPluginFileIsRefusedBeforeDlopen) {
  ScratchCase sc;
  const std::string whole = good_dir() + "/toy.so";
  const auto size = std::filesystem::file_size(whole);
  // Cut inside the ELF header, the program headers, the loadable segments, the section headers.
  for (uintmax_t len : {uintmax_t{0}, uintmax_t{10}, uintmax_t{70}, uintmax_t{4096}, size / 2, size - 1}) {
    std::filesystem::remove(sc.so());
    std::filesystem::copy_file(whole, sc.so());
    std::filesystem::resize_file(sc.so(), len);
    Record r = sc.toy_record();  // used to die of SIGBUS inside dlopen
    EXPECT_FALSE(r.loaded) << len;
    EXPECT_NE(r.reason.find("cannot load: "), std::string::npos) << len << ": " << r.reason;
    EXPECT_NE(r.reason.find(len < 4 ? "too short for an ELF header" : "truncated"), std::string::npos)
        << len << ": " << r.reason;
  }
  {
    // Without section headers (as after some strippers) only the loadable segments tell the
    // file's length: cut inside them.
    std::filesystem::remove(sc.so());
    std::filesystem::copy_file(whole, sc.so());
    std::fstream f(sc.so(), std::ios::in | std::ios::out | std::ios::binary);
    ElfW(Ehdr) eh{};
    f.read(reinterpret_cast<char*>(&eh), sizeof eh);
    eh.e_shoff = 0;
    eh.e_shnum = 0;
    eh.e_shstrndx = 0;
    f.seekp(0);
    f.write(reinterpret_cast<const char*>(&eh), sizeof eh);
    f.close();
    std::filesystem::resize_file(sc.so(), size / 2);
    Record r = sc.toy_record();
    EXPECT_FALSE(r.loaded);
    EXPECT_NE(r.reason.find("truncated: the file has " + std::to_string(size / 2)), std::string::npos) << r.reason;
  }
  std::filesystem::remove(sc.so());
  std::ofstream(sc.so()) << "#!/bin/sh\necho not a library\n";
  EXPECT_NE(sc.toy_record().reason.find("cannot load: not an ELF file"), std::string::npos);
  std::filesystem::remove(sc.so());
  std::filesystem::create_directory(sc.so());
  EXPECT_NE(sc.toy_record().reason.find("cannot load: not a regular file"), std::string::npos);
  std::filesystem::remove(sc.so());
  ASSERT_EQ(::mkfifo(sc.so().c_str(), 0700), 0);
  Record r = without_blocking_on(sc.so(), [&] { return sc.toy_record(); });
  EXPECT_NE(r.reason.find("cannot load: not a regular file"), std::string::npos) << r.reason;
}

TEST(LoaderFiles, DlopenFailureCarriesDlopensMessageOnly) {
  Record r = expect_refused(case_dir("undefined_symbol"), "undef",
                            {"cannot load: ", "undefined symbol: tsr_loader_test_no_such_symbol"});
  EXPECT_EQ(r.reason.find(std::strerror(EBADF)), std::string::npos) << r.reason;
}

TEST(LoaderFiles, ControlCharactersInReasonsAreEscaped) {
  Record r = expect_refused(case_dir("score_ctrl"), "ctrl",
                            {"scored 0", "no device\\x0a[tessera info]", "\\x1b[2J\\x07", "caf\xc3\xa9 \\xff\\xc3("});
  for (char c : r.reason) EXPECT_FALSE(static_cast<unsigned char>(c) < 0x20 || c == 0x7f) << r.reason;
  EXPECT_NO_THROW((void)nlohmann::json(r.reason).dump()) << "`tessera info --json` could not print it";
}

// ---- everything at once ---------------------------------------------------------------------

TEST(LoaderFault, EveryBrokenPluginAtOnceLeavesTheHostWorking) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"no_entry", "noentry"},       {"abi_header", "future"},      {"abi_manifest", "abi2"},
      {"no_manifest", "nomanifest"}, {"bad_json", "badjson"},       {"name_mismatch", "alpha"},
      {"init_fails", "ghost"},       {"throws_raw", "thrower_raw"}, {"throws_sdk", "thrower_sdk"},
      {"score_zero", "picky"},       {"dep_missing", "orphan"},     {"dep_cycle", "cyc_a"},
      {"dep_cycle", "cyc_b"}};
  std::string path;
  std::set<std::string> dirs;
  for (const auto& c : cases)
    if (dirs.insert(c.first).second) path += case_dir(c.first) + ":";
  Rt rt(with_healthy(path.substr(0, path.size() - 1)));
  for (const auto& c : cases) {
    Record r = rt.record(c.second);
    EXPECT_FALSE(r.loaded) << c.second;
    EXPECT_FALSE(r.reason.empty()) << c.second;
    EXPECT_TRUE(kernels_of_plugin(rt.get(), c.second).empty()) << c.second;
  }
  Rt baseline(with_healthy(good_dir()));
  EXPECT_TRUE(snapshot(rt.get()) == snapshot(baseline.get()));
  expect_toy_works(rt.get());
  if (have_cpu()) expect_cpu_works(rt.get());
}

}  // namespace

// TESSERA_PLUGIN_PROBE=1: a plugin that segfaults in init is refused (found by a probe in a
// forked child), not fatal; the plugins beside it still load.
TEST(LoaderProbe, InitCrashIsRefusedNotFatal) {
  setenv("TESSERA_PLUGIN_PROBE", "1", 1);
  Rt rt(case_dir("crash") + ":" + good_dir());
  unsetenv("TESSERA_PLUGIN_PROBE");
  Record r = rt.record("crasher");
  EXPECT_FALSE(r.loaded);
  EXPECT_NE(r.reason.find("TESSERA_PLUGIN_PROBE=1"), std::string::npos) << r.reason;
  EXPECT_NE(r.reason.find("signal 11"), std::string::npos) << r.reason;
  EXPECT_TRUE(rt.record("toy").loaded);
  expect_toy_works(rt.get());
}
