// The op fuzzer: every registered op (public and internal, as op_find reaches them) is called
// through op_call with argument sets generated from its schema: mostly plausible values (random
// tensors of every dtype, odd, empty and non-contiguous shapes, small ints and dims) mixed with
// hostile ones (int64 extremes, NaN and infinities, out-of-enum dtypes, unknown devices,
// malformed strings, omitted optional arguments). A call passes when it returns OK or a status;
// a crash, a hang, or a sanitizer report fails it. One test per op, so a failure names its op.
//
// Seeded and bounded: TESSERA_FUZZ_SEED (default 1) and TESSERA_FUZZ_ITERS (calls per op,
// default 24) choose the run; a failing case prints the seed, the call number and the
// arguments, and TESSERA_FUZZ_VERBOSE=1 prints every call before it is made. The runtime caps
// its allocator (limit_mb) so that a plausible-looking huge size is an OOM status, not a
// machine out of memory.
#include <gtest/gtest.h>

#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

using tsr::Tensor;

namespace {

// ---- schema parsing --------------------------------------------------------------------------

struct ArgType {
  std::string name;
  std::string base;  // Tensor, int, float, bool, str, Scalar, ScalarType, Device, int[], Tensor[]
  bool optional = false, has_default = false, mutable_ = false;
};

struct OpInfo {
  std::string name, schema;
  std::vector<ArgType> args;
  size_t num_outputs = 0;
};

std::string trim(const std::string& s) {
  size_t a = s.find_first_not_of(' '), b = s.find_last_not_of(' ');
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<ArgType> parse_args(const std::string& schema) {
  std::vector<ArgType> out;
  size_t open = schema.find('('), close = schema.rfind(") ->");
  if (open == std::string::npos || close == std::string::npos || close <= open) return out;
  std::string inner = schema.substr(open + 1, close - open - 1);
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : inner) {
    if (c == '[' || c == '(') ++depth;
    if (c == ']' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!trim(cur).empty()) parts.push_back(trim(cur));
  for (const std::string& p : parts) {
    if (p == "*") continue;  // keyword-only marker
    ArgType a;
    std::string decl = p;
    size_t eq = decl.find('=');
    if (eq != std::string::npos) {
      a.has_default = true;
      decl = trim(decl.substr(0, eq));
    }
    size_t sp = decl.rfind(' ');
    std::string type = trim(decl.substr(0, sp));
    a.name = trim(decl.substr(sp + 1));
    if (!type.empty() && type.back() == '?') {
      a.optional = true;
      type.pop_back();
    }
    if (type.find("(a!)") != std::string::npos) {
      a.mutable_ = true;
      type = type.substr(0, type.find('('));
    }
    if (type.rfind("int[", 0) == 0) type = "int[]";
    a.base = type;
    out.push_back(a);
  }
  return out;
}

// ---- the runtime under test ------------------------------------------------------------------

tsr_runtime_t* fuzz_runtime() {
  static tsr_runtime_t* rt = [] {
    tsr_runtime_options_t o{};
    o.struct_size = sizeof(o);
    o.alloc_conf = "limit_mb:768";
    tsr_runtime_t* r = nullptr;
    tsr::check(tsr::api()->runtime_create(&o, &r));
    tsr::set_runtime(r);
    return r;
  }();
  return rt;
}

std::vector<OpInfo> all_ops() {
  const tsr_api_t* api = tsr::api();
  tsr_runtime_t* rt = fuzz_runtime();
  std::vector<OpInfo> ops;
  for (size_t i = 0; i < api->op_count(rt); ++i) {
    tsr_op_t* op = api->op_at(rt, i);
    OpInfo info;
    info.name = api->op_name(op);
    info.schema = api->op_schema(op);
    info.args = parse_args(info.schema);
    info.num_outputs = api->op_num_outputs(op);
    ops.push_back(info);
  }
  return ops;
}

const std::vector<OpInfo>& ops() {
  static const std::vector<OpInfo> v = all_ops();
  return v;
}

int64_t env_int(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoll(v, nullptr, 10) : dflt;
}

// ---- crash context ---------------------------------------------------------------------------

char g_last_call[4096];

void print_last_call() {
  const char head[] = "\n[op fuzzer] crashed in: ";
  ssize_t r = write(2, head, sizeof(head) - 1);
  r = write(2, g_last_call, strnlen(g_last_call, sizeof(g_last_call)));
  r = write(2, "\n", 1);
  (void)r;
}

extern "C" void on_fatal_signal(int sig) {
  print_last_call();
  signal(sig, SIG_DFL);
  raise(sig);
}

}  // namespace

// Sanitizers call this (when linked in) before they exit with a report.
extern "C" __attribute__((weak)) void __sanitizer_set_death_callback(void (*)(void));

namespace {

void install_crash_context() {
  static bool done = false;
  if (done) return;
  done = true;
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) signal(sig, on_fatal_signal);
  if (__sanitizer_set_death_callback) __sanitizer_set_death_callback(print_last_call);
}

// ---- argument generation ---------------------------------------------------------------------

class Generator {
 public:
  explicit Generator(uint64_t seed) : rng_(seed) {}

  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

  int64_t hostile_int() {
    static const std::vector<int64_t> v = {INT64_MIN,           INT64_MAX,          INT64_MIN + 1,
                                           int64_t{1} << 62,    -(int64_t{1} << 62), (int64_t{1} << 61) + 1,
                                           int64_t{1} << 32,    INT32_MAX,          -1000000,
                                           1000000};
    return pick(v);
  }
  int64_t small_int() { return uniform(-3, 5); }
  int64_t any_int() { return chance(0.12) ? hostile_int() : small_int(); }

  double any_double() {
    static const std::vector<double> v = {0.0,   -0.0, 1.0, -1.0, 0.5, 2.0, 1e-3, 3.5, -2.25,
                                          1e300, NAN,  INFINITY, -INFINITY, 1e-310};
    return chance(0.7) ? pick(std::vector<double>(v.begin(), v.begin() + 9)) : pick(v);
  }

  tsr_dtype_t any_dtype() {
    static const std::vector<tsr_dtype_t> v = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32,
                                               TSR_I64,  TSR_F16, TSR_BF16, TSR_F32, TSR_F64};
    return chance(0.5) ? TSR_F32 : pick(v);
  }

  std::vector<int64_t> shape() {
    int nd = static_cast<int>(uniform(0, 4));
    std::vector<int64_t> s;
    for (int d = 0; d < nd; ++d) s.push_back(chance(0.1) ? 0 : uniform(1, 5));
    return s;
  }

  // A tensor of `shape` and dtype dt with random values: small integers for integer dtypes (so
  // that index arguments are sometimes valid), normal values for floats.
  Tensor tensor(std::vector<int64_t> shape, tsr_dtype_t dt) {
    bool transposed = shape.size() >= 2 && chance(0.2);
    std::vector<int64_t> storage_shape = shape;
    if (transposed) std::swap(storage_shape[storage_shape.size() - 1], storage_shape[storage_shape.size() - 2]);
    Tensor t;
    if (dt == TSR_BOOL) {
      t = tsr::gt(tsr::rand(storage_shape), tsr::scalar_tensor(0.5));
    } else if (tsr::is_floating(dt)) {
      t = tsr::randn(storage_shape, TSR_F32).to(dt);
    } else {
      t = tsr::floor(tsr::rand(storage_shape) * tsr::scalar_tensor(8.0) - tsr::scalar_tensor(2.0)).to(dt);
    }
    if (transposed) t = t.transpose(-1, -2);
    return t;
  }

  std::vector<int64_t> int_list(const std::string& name) {
    int n = static_cast<int>(uniform(0, 3));
    std::vector<int64_t> v;
    bool is_size = name.find("size") != std::string::npos || name.find("shape") != std::string::npos;
    for (int i = 0; i < n; ++i) v.push_back(chance(0.1) ? hostile_int() : is_size ? uniform(0, 5) : small_int());
    return v;
  }

  std::string str() {
    static const std::vector<std::string> v = {
        "none", "tanh", "mean", "sum", "floor", "trunc", "valid", "same", "nearest", "bilinear", "constant",
        "reflect", "replicate", "circular", "ij->ji", "ij,jk->ik", "ii->i", "...ij->...ji", "", "bogus",
        "ij->", "->", "i,i", "\x01\x7f", "a->b->c", "..."};
    return pick(v);
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

// One generated call: the values and everything they borrow.
struct Call {
  std::vector<tsr_value_t> values;
  std::deque<Tensor> tensors;
  std::deque<std::vector<int64_t>> lists;
  std::deque<std::string> strings;
  std::deque<std::vector<tsr_tensor_t*>> tensor_lists;
  std::string text;
};

std::string shape_text(const Tensor& t) {
  std::string s = std::string(tsr::dtype_name(t.dtype())) + "[";
  for (size_t i = 0; i < t.sizes().size(); ++i) s += (i ? "," : "") + std::to_string(t.sizes()[i]);
  return s + (t.is_contiguous() ? "]" : "]nc");
}

Call make_call(Generator& g, const OpInfo& op) {
  Call c;
  // Tensors of one call share a shape more often than not, as most ops want.
  std::vector<int64_t> base = g.shape();
  tsr_dtype_t base_dt = g.any_dtype();
  size_t required = 0;
  for (size_t i = 0; i < op.args.size(); ++i)
    if (!op.args[i].has_default) required = i + 1;
  size_t n = op.args.size();
  if (n > required && g.chance(0.4)) n = static_cast<size_t>(g.uniform(static_cast<int64_t>(required), static_cast<int64_t>(n)));
  if (g.chance(0.02) && n > 0) --n;  // a required argument missing
  for (size_t i = 0; i < n; ++i) {
    const ArgType& a = op.args[i];
    tsr_value_t v{};
    std::string text;
    if (a.optional && g.chance(0.3)) {
      v.tag = TSR_VALUE_NONE;
      text = "None";
    } else if (a.base == "Tensor") {
      Tensor t = g.tensor(g.chance(0.7) ? base : g.shape(), g.chance(0.7) ? base_dt : g.any_dtype());
      c.tensors.push_back(t);
      v.tag = TSR_VALUE_TENSOR;
      v.u.tensor = c.tensors.back().get();
      text = shape_text(t);
    } else if (a.base == "Tensor[]") {
      std::vector<tsr_tensor_t*> hs;
      int k = static_cast<int>(g.uniform(0, 3));
      text = "[";
      for (int j = 0; j < k; ++j) {
        c.tensors.push_back(g.tensor(g.chance(0.7) ? base : g.shape(), g.chance(0.8) ? base_dt : g.any_dtype()));
        hs.push_back(c.tensors.back().get());
        text += (j ? "," : "") + shape_text(c.tensors.back());
      }
      text += "]";
      c.tensor_lists.push_back(hs);
      v.tag = TSR_VALUE_TENSOR_LIST;
      v.u.tensors.data = c.tensor_lists.back().data();
      v.u.tensors.len = static_cast<int64_t>(hs.size());
    } else if (a.base == "int") {
      v.tag = TSR_VALUE_INT;
      v.u.i = a.name.find("dim") != std::string::npos && g.chance(0.8) ? g.uniform(-3, 3) : g.any_int();
      text = std::to_string(v.u.i);
    } else if (a.base == "int[]") {
      c.lists.push_back(g.int_list(a.name));
      v.tag = TSR_VALUE_INT_LIST;
      v.u.ints.data = c.lists.back().data();
      v.u.ints.len = static_cast<int64_t>(c.lists.back().size());
      text = "[";
      for (size_t j = 0; j < c.lists.back().size(); ++j) text += (j ? "," : "") + std::to_string(c.lists.back()[j]);
      text += "]";
    } else if (a.base == "float") {
      v.tag = TSR_VALUE_DOUBLE;
      v.u.d = g.any_double();
      text = std::to_string(v.u.d);
    } else if (a.base == "bool") {
      v.tag = TSR_VALUE_BOOL;
      v.u.b = g.chance(0.5) ? 1 : 0;
      text = v.u.b ? "True" : "False";
    } else if (a.base == "Scalar") {
      int k = static_cast<int>(g.uniform(0, 2));
      if (k == 0) {
        v.tag = TSR_VALUE_INT;
        v.u.i = g.any_int();
        text = std::to_string(v.u.i);
      } else if (k == 1) {
        v.tag = TSR_VALUE_DOUBLE;
        v.u.d = g.any_double();
        text = std::to_string(v.u.d);
      } else {
        v.tag = TSR_VALUE_BOOL;
        v.u.b = 1;
        text = "True";
      }
    } else if (a.base == "str") {
      c.strings.push_back(g.str());
      v.tag = TSR_VALUE_STRING;
      v.u.str = c.strings.back().c_str();
      text = "'" + c.strings.back() + "'";
    } else if (a.base == "ScalarType") {
      v.tag = TSR_VALUE_DTYPE;
      v.u.dtype = g.chance(0.1) ? static_cast<int32_t>(g.pick(std::vector<int64_t>{0, -1, 11, 31, 99})) : g.any_dtype();
      text = "dtype " + std::to_string(v.u.dtype);
    } else if (a.base == "Device") {
      v.tag = TSR_VALUE_DEVICE;
      v.u.device = g.chance(0.8) ? tsr_device_t{TSR_DEVICE_TYPE_CPU, 0}
                                 : tsr_device_t{static_cast<int32_t>(g.uniform(-1, 40)), static_cast<int32_t>(g.uniform(-1, 3))};
      text = "device " + std::to_string(v.u.device.type) + ":" + std::to_string(v.u.device.index);
    } else {
      ADD_FAILURE() << op.name << ": the fuzzer does not know the schema type '" << a.base << "'";
      v.tag = TSR_VALUE_NONE;
    }
    // Now and then a value of the wrong kind altogether.
    if (g.chance(0.02)) {
      v = tsr_value_t{};
      v.tag = static_cast<int32_t>(g.uniform(0, 10));
      v.u.i = 0;
      text = "wrong-kind tag " + std::to_string(v.tag);
    }
    c.values.push_back(v);
    c.text += (i ? ", " : "") + a.name + "=" + text;
  }
  return c;
}

class OpFuzz : public testing::TestWithParam<size_t> {};

TEST_P(OpFuzz, EveryCallReturnsOkOrAStatus) {
  install_crash_context();
  const tsr_api_t* api = tsr::api();
  tsr_runtime_t* rt = fuzz_runtime();
  const OpInfo& info = ops()[GetParam()];
  tsr_op_t* op = nullptr;
  ASSERT_EQ(api->op_find(rt, info.name.c_str(), &op), nullptr);
  const uint64_t seed = static_cast<uint64_t>(env_int("TESSERA_FUZZ_SEED", 1));
  const int64_t iters = env_int("TESSERA_FUZZ_ITERS", 24);
  const bool verbose = env_int("TESSERA_FUZZ_VERBOSE", 0) != 0;
  Generator g(seed ^ (std::hash<std::string>{}(info.name) * 0x9E3779B97F4A7C15ull));
  int ok = 0, refused = 0;
  for (int64_t it = 0; it < iters; ++it) {
    Call c = make_call(g, info);
    std::snprintf(g_last_call, sizeof(g_last_call), "%s(%s) seed %llu call %lld", info.name.c_str(), c.text.c_str(),
                  static_cast<unsigned long long>(seed), static_cast<long long>(it));
    if (verbose) std::fprintf(stderr, "%s\n", g_last_call);
    std::vector<tsr_tensor_t*> outs(info.num_outputs, nullptr);
    tsr_status_t st = api->op_call(op, c.values.data(), c.values.size(), outs.data(), outs.size());
    if (st) {
      ++refused;
      tsr_code_t code = api->status_code(st);
      std::string msg = api->status_message(st);
      EXPECT_NE(code, TSR_OK) << g_last_call;
      // An INTERNAL status means a broken invariant; bad arguments must be refused as such,
      // with Tessera's words rather than a C++ library's (issue 18, item 10).
      EXPECT_NE(code, TSR_INTERNAL) << g_last_call << ": " << msg;
      EXPECT_FALSE(msg.empty()) << g_last_call << ": a status without a message";
      for (tsr_tensor_t* o : outs) EXPECT_EQ(o, nullptr) << g_last_call << ": an output was left behind with " << msg;
      api->status_free(st);
    } else {
      ++ok;
      for (tsr_tensor_t*& o : outs) {
        if (!o) continue;
        int32_t nd = api->tensor_ndim(o);
        EXPECT_TRUE(nd >= 0 && nd <= TSR_MAX_DIMS) << g_last_call;
        // The result is readable end to end (a wrong size or stride shows here under ASan).
        Tensor r = Tensor::adopt(o);
        o = nullptr;
        if (r.numel() > 0 && r.numel() < (1 << 20)) (void)r.contiguous();
      }
    }
    for (tsr_tensor_t* o : outs) api->tensor_release(o);
  }
  RecordProperty("ok", ok);
  RecordProperty("refused", refused);
  g_last_call[0] = '\0';
}

std::string op_test_name(const testing::TestParamInfo<size_t>& p) {
  std::string n = ops()[p.param].name;
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

INSTANTIATE_TEST_SUITE_P(AllOps, OpFuzz, testing::Range<size_t>(0, ops().size()), op_test_name);

}  // namespace
