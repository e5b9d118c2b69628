// The safetensors mutation fuzzer: random valid files (every dtype, empty and 0-d shapes, names
// that need JSON escapes, metadata, entries stored in any order) are mutated, bytewise and by
// JSON token (numbers at the int64/uint64 edges, dtype names, duplicated and dropped members,
// deep nesting, a stale or hostile header length), and opened through the C table.
//
// What must hold, beyond "no crash and no sanitizer report":
//  - every generated file opens and loads exactly the generator's names, dtypes, shapes, bytes
//    and metadata; one whose tensor bytes alone were changed loads the changed bytes;
//  - a refused file gets DATA_LOSS, UNIMPLEMENTED or RESOURCE_EXHAUSTED (never INTERNAL) with a
//    message naming the file;
//  - an accepted file agrees with an independent reading of its header (nlohmann's DOM): the
//    same entries, dtypes and shapes, each load the bytes at its data_offsets, the entries
//    covering the data section exactly, the same metadata.
//
// Seeded and bounded: TESSERA_FUZZ_SEED (default 1) and TESSERA_FUZZ_FILES (mutated files per
// test, default 8000). Files live in memory (memfd, opened by /proc/self/fd path), so a run does
// no disk I/O. A failure prints the seed, the file number and the mutations applied.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

using Bytes = std::vector<unsigned char>;
using json = nlohmann::json;

int64_t env_int(const char* name, int64_t dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoll(v, nullptr, 10) : dflt;
}

struct Entry {
  std::string name;
  tsr_dtype_t dtype;
  std::vector<int64_t> shape;
  Bytes bytes;
  size_t begin = 0;  // offset in the data section
};

// A generated valid file and what it holds.
struct Model {
  std::vector<Entry> entries;  // in header order
  std::vector<std::pair<std::string, std::string>> metadata;
  std::string header;
  Bytes data;
};

const tsr_dtype_t kDtypes[] = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32, TSR_I64,       TSR_F16,
                               TSR_BF16, TSR_F32, TSR_F64, TSR_F8_E4M3FN, TSR_F8_E5M2, TSR_F8_E8M0FNU};
const char* const kDtypeNames[] = {"BOOL", "U8",  "I8",      "I16",     "I32",    "I64",    "F16",
                                   "BF16", "F32", "F64", "F8_E4M3", "F8_E5M2", "F8_E8M0"};

const char* dtype_name(tsr_dtype_t dt) {
  for (size_t i = 0; i < std::size(kDtypes); ++i)
    if (kDtypes[i] == dt) return kDtypeNames[i];
  return "?";
}

// JSON string literal for arbitrary UTF-8 text (control characters as \u escapes).
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

Bytes with_length(const std::string& header, const Bytes& data) {
  Bytes out;
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>(n >> (8 * i)));
  out.insert(out.end(), header.begin(), header.end());
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

class Fuzzer {
 public:
  explicit Fuzzer(uint64_t seed) : rng_(seed) {}

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng_); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  template <class T>
  const T& pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(uniform(0, static_cast<int64_t>(v.size()) - 1))];
  }

  std::string name(size_t i) {
    static const std::vector<std::string> odd = {
        "w",    "layer.0.weight",         "名前",       "a\"b", "back\\slash", "tab\there",
        "nl\n", "emoji \xf0\x9f\x98\x80", "__metadata", " ",    "x/y:z"};
    std::string base = chance(0.5) ? pick(odd) : "t";
    return base + std::to_string(i);  // unique per file
  }

  Model valid_file() {
    Model m;
    const int64_t n = uniform(0, 6);
    std::string ws = chance(0.3) ? " " : "";
    for (int64_t i = 0; i < n; ++i) {
      Entry e;
      e.name = name(static_cast<size_t>(i));
      e.dtype = kDtypes[uniform(0, std::size(kDtypes) - 1)];
      int64_t ndim = uniform(0, 4), numel = 1;
      for (int64_t d = 0; d < ndim; ++d) {
        e.shape.push_back(chance(0.08) ? 0 : uniform(1, 5));
        numel *= e.shape.back();
      }
      e.bytes.resize(static_cast<size_t>(numel) * tsr::itemsize(e.dtype));
      for (unsigned char& b : e.bytes)
        b = static_cast<unsigned char>(e.dtype == TSR_BOOL ? uniform(0, 1) : uniform(0, 255));
      m.entries.push_back(std::move(e));
    }
    // Data in a random order of entries: offsets tile the section without following the header.
    std::vector<size_t> order(m.entries.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng_);
    for (size_t i : order) {
      m.entries[i].begin = m.data.size();
      m.data.insert(m.data.end(), m.entries[i].bytes.begin(), m.entries[i].bytes.end());
    }
    if (chance(0.5))
      for (int64_t k = uniform(0, 3); k > 0; --k)
        m.metadata.emplace_back(name(static_cast<size_t>(100 + k)), chance(0.5) ? "17" : "ü\"\\\x01");
    std::vector<std::string> members;
    for (const Entry& e : m.entries) {
      std::string shape;
      for (size_t d = 0; d < e.shape.size(); ++d) shape += (d ? "," + ws : "") + std::to_string(e.shape[d]);
      members.push_back(quote(e.name) + ":" + ws + "{\"dtype\":" + ws + quote(dtype_name(e.dtype)) + "," + ws +
                        "\"shape\":[" + shape + "]," + ws + "\"data_offsets\":[" + std::to_string(e.begin) + "," + ws +
                        std::to_string(e.begin + e.bytes.size()) + "]}");
    }
    if (!m.metadata.empty() || chance(0.2)) {
      std::string meta;
      for (size_t k = 0; k < m.metadata.size(); ++k)
        meta += (k ? "," : "") + quote(m.metadata[k].first) + ":" + quote(m.metadata[k].second);
      // __metadata__ anywhere among the entries (it is not an entry and does not shift them).
      members.insert(members.begin() + uniform(0, static_cast<int64_t>(members.size())),
                     "\"__metadata__\":{" + meta + "}");
    }
    m.header = "{";
    for (size_t k = 0; k < members.size(); ++k) m.header += (k ? "," + ws : "") + members[k];
    m.header += "}";
    // The format pads headers with spaces to an 8-byte multiple; readers must take both.
    if (chance(0.3))
      while (m.header.size() % 8) m.header += ' ';
    return m;
  }

  // One header mutation, described into `log`.
  void mutate_header(std::string& h, std::string& log) {
    if (h.empty()) {
      h = "{";
      return;
    }
    auto pos = [&] { return static_cast<size_t>(uniform(0, static_cast<int64_t>(h.size()) - 1)); };
    switch (uniform(0, 8)) {
      case 0: {  // a number token replaced by an edge value
        std::vector<size_t> starts;
        for (size_t i = 0; i < h.size(); ++i)
          if (std::isdigit(static_cast<unsigned char>(h[i])) &&
              (i == 0 || !std::isdigit(static_cast<unsigned char>(h[i - 1]))))
            starts.push_back(i);
        if (starts.empty()) break;
        size_t a = pick(starts), b = a;
        while (b < h.size() && std::isdigit(static_cast<unsigned char>(h[b]))) ++b;
        static const std::vector<std::string> edges = {"-1",
                                                       "0",
                                                       "1",
                                                       "7",
                                                       "9223372036854775807",
                                                       "9223372036854775808",
                                                       "18446744073709551615",
                                                       "18446744073709551616",
                                                       "4611686018427387904",
                                                       "1e400",
                                                       "1.5",
                                                       "-0",
                                                       "00",
                                                       "1e2",
                                                       "2.0",
                                                       "-9223372036854775808",
                                                       std::string(400, '9')};
        const std::string& r = pick(edges);
        log += " number@" + std::to_string(a) + "=" + r.substr(0, 24);
        h.replace(a, b - a, r);
        break;
      }
      case 1: {  // a string token replaced
        std::vector<size_t> quotes;
        for (size_t i = 0; i < h.size(); ++i)
          if (h[i] == '"' && (i == 0 || h[i - 1] != '\\')) quotes.push_back(i);
        if (quotes.size() < 2) break;
        size_t k = static_cast<size_t>(uniform(0, static_cast<int64_t>(quotes.size() / 2) - 1)) * 2;
        size_t a = quotes[k], b = quotes[k + 1];
        static const std::vector<std::string> strs = {
            "\"F32\"",     "\"BOOL\"",    "\"F8_E4M3\"",  "\"C64\"",          "\"f32\"",
            "\"\"",        "\"dtype\"",   "\"shape\"",    "\"data_offsets\"", "\"__metadata__\"",
            "\"\\u0000\"", "\"\\ud800\"", "\"\xff\xfe\"", "\"\\\"",           "\"" + std::string(100000, 'x') + "\"",
            "\"U64\"",     "\"I64\""};
        const std::string& r = pick(strs);
        log += " string@" + std::to_string(a) + "=" + r.substr(0, 16);
        h.replace(a, b - a + 1, r);
        break;
      }
      case 2: {  // a member duplicated: the first {...} object after a key, copied after itself
        size_t a = h.find("\":{", pos());
        if (a == std::string::npos) break;
        size_t start = h.rfind('"', a - 1 < h.size() ? a - 1 : 0);
        size_t end = h.find('}', a);
        if (start == std::string::npos || end == std::string::npos) break;
        std::string member = h.substr(start, end - start + 1);
        log += " duplicate@" + std::to_string(start);
        h.insert(end + 1, "," + member);
        break;
      }
      case 3: {  // a field dropped
        static const std::vector<std::string> fields = {"\"dtype\":", "\"shape\":", "\"data_offsets\":"};
        const std::string& f = pick(fields);
        size_t a = h.find(f, pos());
        if (a == std::string::npos) a = h.find(f);
        if (a == std::string::npos) break;
        size_t b = a + f.size();
        int depth = 0;
        for (; b < h.size(); ++b) {
          if (h[b] == '[' || h[b] == '{') ++depth;
          if (h[b] == ']' || h[b] == '}') {
            if (depth == 0) break;
            --depth;
          }
          if (h[b] == ',' && depth == 0) {
            ++b;
            break;
          }
        }
        log += " drop" + f;
        h.erase(a, b - a);
        break;
      }
      case 4: {  // deep nesting at a value position
        size_t a = h.find(':', pos());
        if (a == std::string::npos) break;
        int64_t depth = chance(0.5) ? uniform(2, 6) : 100000;
        log += " nest" + std::to_string(depth);
        h.insert(a + 1,
                 std::string(static_cast<size_t>(depth), '[') + std::string(static_cast<size_t>(depth), ']') + ",");
        break;
      }
      case 5: {  // a structural byte
        static const std::vector<char> structural = {'{',  '}', '[', ']', ',', ':', '"',
                                                     '\\', '-', '.', 'e', '0', ' ', '\0'};
        size_t a = pos();
        char c = pick(structural);
        log += " byte@" + std::to_string(a);
        if (chance(0.5))
          h[a] = c;
        else
          h.insert(a, 1, c);
        break;
      }
      case 6: {  // a span deleted or repeated
        size_t a = pos(), n = static_cast<size_t>(uniform(1, 16));
        log += " span@" + std::to_string(a);
        if (chance(0.5))
          h.erase(a, n);
        else
          h.insert(a, h.substr(a, n));
        break;
      }
      case 7: {  // the root replaced
        static const std::vector<std::string> roots = {"[]", "null", "\"x\"", "1", "{\"a\":1}", "{\"a\":[]}", "{}"};
        h = pick(roots);
        log += " root=" + h;
        break;
      }
      default: {  // bit flip
        size_t a = pos();
        h[a] = static_cast<char>(h[a] ^ (1 << uniform(0, 7)));
        log += " flip@" + std::to_string(a);
      }
    }
  }

  // One whole-file mutation.
  void mutate_file(Bytes& f, std::string& log) {
    switch (uniform(0, 3)) {
      case 0: {  // the header length field
        uint64_t len = 0;
        for (int i = 7; i >= 0 && f.size() >= 8; --i) len = (len << 8) | f[static_cast<size_t>(i)];
        const std::vector<uint64_t> v = {0,
                                         1,
                                         len - 1,
                                         len + 1,
                                         f.size() - 8,
                                         f.size() - 7,
                                         uint64_t{1} << 63,
                                         ~uint64_t{0},
                                         (100ull << 20) + 1,
                                         static_cast<uint64_t>(uniform(0, 1 << 20))};
        uint64_t n = pick(v);
        log += " length=" + std::to_string(n);
        for (int i = 0; i < 8 && static_cast<size_t>(i) < f.size(); ++i)
          f[static_cast<size_t>(i)] = static_cast<unsigned char>(n >> (8 * i));
        break;
      }
      case 1: {  // truncated
        size_t n = f.empty() ? 0 : static_cast<size_t>(uniform(0, static_cast<int64_t>(f.size()) - 1));
        log += " truncate=" + std::to_string(n);
        f.resize(n);
        break;
      }
      case 2: {  // extended
        size_t n = static_cast<size_t>(uniform(1, 64));
        log += " extend=" + std::to_string(n);
        for (size_t i = 0; i < n; ++i) f.push_back(static_cast<unsigned char>(uniform(0, 255)));
        break;
      }
      default: {  // a random byte anywhere
        if (f.empty()) break;
        size_t a = static_cast<size_t>(uniform(0, static_cast<int64_t>(f.size()) - 1));
        f[a] = static_cast<unsigned char>(uniform(0, 255));
        log += " set@" + std::to_string(a);
      }
    }
  }

  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

// An in-memory file reachable by path.
class MemFile {
 public:
  explicit MemFile(const Bytes& b) : fd_(memfd_create("tsr_fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) return;
    size_t off = 0;
    while (off < b.size()) {
      ssize_t w = write(fd_, b.data() + off, b.size() - off);
      if (w <= 0) break;
      off += static_cast<size_t>(w);
    }
  }
  ~MemFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

struct Opened {
  tsr_safetensors_t* file = nullptr;
  tsr_code_t code = TSR_OK;
  std::string message;
};

Opened open_bytes(const MemFile& m) {
  const tsr_api_t* api = tsr::api();
  Opened o;
  tsr_status_t st = api->safetensors_open(tsr::runtime(), m.path().c_str(), &o.file);
  if (st) {
    o.code = api->status_code(st);
    o.message = api->status_message(st);
    api->status_free(st);
    o.file = nullptr;
  }
  return o;
}

// Loads entry i; *bytes receives its contents, or the status code is returned.
tsr_code_t load_entry(tsr_safetensors_t* f, size_t i, Bytes* bytes, std::vector<int64_t>* shape, tsr_dtype_t* dtype,
                      std::string* message) {
  const tsr_api_t* api = tsr::api();
  tsr_tensor_t* t = nullptr;
  tsr_status_t st = api->safetensors_load(f, i, tsr_device_t{}, &t);
  if (st) {
    tsr_code_t code = api->status_code(st);
    *message = api->status_message(st);
    api->status_free(st);
    EXPECT_EQ(t, nullptr) << "a failed load left a tensor behind";
    return code;
  }
  tsr::Tensor r = tsr::Tensor::adopt(t);
  *shape = r.sizes();
  *dtype = r.dtype();
  bytes->assign(static_cast<size_t>(r.numel()) * tsr::itemsize(r.dtype()), 0);
  tsr::check(api->tensor_copy_to_host(r.get(), bytes->data(), bytes->size()));
  return TSR_OK;
}

// An accepted file, compared with nlohmann's DOM reading of its header.
void check_accepted(const Bytes& file, tsr_safetensors_t* f, const std::string& ctx) {
  const tsr_api_t* api = tsr::api();
  ASSERT_GE(file.size(), 8u) << ctx;
  uint64_t hlen = 0;
  for (int i = 7; i >= 0; --i) hlen = (hlen << 8) | file[static_cast<size_t>(i)];
  ASSERT_LE(hlen, file.size() - 8) << ctx;
  const unsigned char* data = file.data() + 8 + hlen;
  const uint64_t data_size = file.size() - 8 - hlen;
  json dom;
  try {
    dom = json::parse(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(hlen));
  } catch (const std::exception& e) {
    FAIL() << ctx << ": accepted a header that is not JSON: " << e.what();
  }
  ASSERT_TRUE(dom.is_object()) << ctx;
  size_t n = api->safetensors_count(f);
  ASSERT_EQ(n, dom.size() - dom.count("__metadata__")) << ctx;
  uint64_t covered = 0;
  for (size_t i = 0; i < n; ++i) {
    const char* name = nullptr;
    tsr_dtype_t dt{};
    int32_t ndim = -1;
    const int64_t* sizes = nullptr;
    ASSERT_EQ(api->safetensors_entry(f, i, &name, &dt, &ndim, &sizes), nullptr) << ctx;
    ASSERT_TRUE(dom.contains(name)) << ctx << ": entry '" << name << "' is not in the header";
    const json& v = dom[name];
    ASSERT_EQ(v.at("dtype").get<std::string>(), dtype_name(dt)) << ctx << " entry " << name;
    std::vector<int64_t> shape(sizes, sizes + ndim);
    ASSERT_EQ(v.at("shape").get<std::vector<int64_t>>(), shape) << ctx << " entry " << name;
    uint64_t b = v.at("data_offsets")[0].get<uint64_t>(), e = v.at("data_offsets")[1].get<uint64_t>();
    ASSERT_TRUE(b <= e && e <= data_size) << ctx << " entry " << name;
    covered += e - b;
    Bytes got;
    std::vector<int64_t> got_shape;
    tsr_dtype_t got_dt{};
    std::string msg;
    tsr_code_t code = load_entry(f, i, &got, &got_shape, &got_dt, &msg);
    bool bad_bool = false;
    if (dt == TSR_BOOL)
      for (uint64_t k = b; k < e; ++k) bad_bool |= data[k] > 1;
    if (bad_bool) {
      EXPECT_EQ(code, TSR_DATA_LOSS) << ctx << ": a BOOL byte other than 0/1 loaded: " << msg;
      continue;
    }
    ASSERT_EQ(code, TSR_OK) << ctx << ": " << msg;
    EXPECT_EQ(got_shape, shape) << ctx;
    EXPECT_EQ(got_dt, dt) << ctx;
    EXPECT_EQ(got, Bytes(data + b, data + e)) << ctx << ": entry " << name << " loaded other bytes";
  }
  EXPECT_EQ(covered, data_size) << ctx << ": the entries do not cover the data section exactly";
  size_t nm = api->safetensors_metadata_count(f);
  if (dom.contains("__metadata__")) {
    ASSERT_EQ(nm, dom["__metadata__"].size()) << ctx;
    for (size_t k = 0; k < nm; ++k) {
      const char *key = nullptr, *value = nullptr;
      ASSERT_EQ(api->safetensors_metadata_at(f, k, &key, &value), nullptr) << ctx;
      EXPECT_EQ(dom["__metadata__"].at(key).get<std::string>(), value) << ctx;
    }
  } else {
    EXPECT_EQ(nm, 0u) << ctx;
  }
}

void check_refused(const Opened& o, const MemFile& m, const std::string& ctx) {
  // INTERNAL would be a broken invariant or a leaked exception; INVALID_ARGUMENT is for the
  // caller's mistakes (a non-regular path), not the file's.
  EXPECT_TRUE(o.code == TSR_DATA_LOSS || o.code == TSR_UNIMPLEMENTED || o.code == TSR_RESOURCE_EXHAUSTED)
      << ctx << ": code " << o.code << ": " << o.message;
  EXPECT_NE(o.message.find(m.path()), std::string::npos)
      << ctx << ": the message does not name the file: " << o.message;
  EXPECT_LT(o.message.size(), 2000u) << ctx << ": an unbounded message";
}

struct Counts {
  int64_t files = 0, accepted = 0, refused = 0;
};

// Mutated files per test, and the seed.
int64_t files_per_test() { return env_int("TESSERA_FUZZ_FILES", 8000); }
uint64_t seed() { return static_cast<uint64_t>(env_int("TESSERA_FUZZ_SEED", 1)); }

}  // namespace

// The generator's files are valid: each opens and loads exactly what was written.
TEST(SafetensorsFuzz, GeneratedFilesLoadExactly) {
  Fuzzer g(seed());
  for (int64_t k = 0; k < files_per_test() / 4; ++k) {
    Model m = g.valid_file();
    Bytes bytes = with_length(m.header, m.data);
    MemFile mf(bytes);
    ASSERT_TRUE(mf.ok()) << std::strerror(errno);
    std::string ctx = "seed " + std::to_string(seed()) + " file " + std::to_string(k) + " header " + m.header;
    Opened o = open_bytes(mf);
    ASSERT_EQ(o.code, TSR_OK) << ctx << ": " << o.message;
    const tsr_api_t* api = tsr::api();
    ASSERT_EQ(api->safetensors_count(o.file), m.entries.size()) << ctx;
    for (size_t i = 0; i < m.entries.size(); ++i) {
      const Entry& e = m.entries[i];
      const char* name = nullptr;
      ASSERT_EQ(api->safetensors_entry(o.file, i, &name, nullptr, nullptr, nullptr), nullptr);
      EXPECT_EQ(name, e.name) << ctx;
      Bytes got;
      std::vector<int64_t> shape;
      tsr_dtype_t dt{};
      std::string msg;
      ASSERT_EQ(load_entry(o.file, i, &got, &shape, &dt, &msg), TSR_OK) << ctx << ": " << msg;
      EXPECT_EQ(shape, e.shape) << ctx;
      EXPECT_EQ(dt, e.dtype) << ctx;
      EXPECT_EQ(got, e.bytes) << ctx;
    }
    ASSERT_EQ(api->safetensors_metadata_count(o.file), m.metadata.size()) << ctx;
    for (size_t i = 0; i < m.metadata.size(); ++i) {
      const char *key = nullptr, *value = nullptr;
      ASSERT_EQ(api->safetensors_metadata_at(o.file, i, &key, &value), nullptr);
      EXPECT_EQ(key, m.metadata[i].first) << ctx;
      EXPECT_EQ(value, m.metadata[i].second) << ctx;
    }
    api->safetensors_close(o.file);
  }
}

// Changed tensor bytes are not the reader's business: the file still opens and loads them.
TEST(SafetensorsFuzz, DataSectionMutationsLoadTheMutatedBytes) {
  Fuzzer g(seed() + 1);
  const tsr_api_t* api = tsr::api();
  int64_t checked = 0;
  for (int64_t k = 0; k < files_per_test() / 4; ++k) {
    Model m = g.valid_file();
    std::vector<size_t> mutable_entries;
    for (size_t i = 0; i < m.entries.size(); ++i)
      if (m.entries[i].dtype != TSR_BOOL && !m.entries[i].bytes.empty()) mutable_entries.push_back(i);
    if (mutable_entries.empty()) continue;
    Entry& e = m.entries[g.pick(mutable_entries)];
    for (int64_t n = g.uniform(1, 4); n > 0; --n) {
      size_t at = static_cast<size_t>(g.uniform(0, static_cast<int64_t>(e.bytes.size()) - 1));
      e.bytes[at] = static_cast<unsigned char>(g.uniform(0, 255));
      m.data[e.begin + at] = e.bytes[at];
    }
    MemFile mf(with_length(m.header, m.data));
    std::string ctx = "seed " + std::to_string(seed() + 1) + " file " + std::to_string(k);
    Opened o = open_bytes(mf);
    ASSERT_EQ(o.code, TSR_OK) << ctx << ": " << o.message;
    size_t i = static_cast<size_t>(&e - m.entries.data());
    Bytes got;
    std::vector<int64_t> shape;
    tsr_dtype_t dt{};
    std::string msg;
    ASSERT_EQ(load_entry(o.file, i, &got, &shape, &dt, &msg), TSR_OK) << ctx << ": " << msg;
    EXPECT_EQ(got, e.bytes) << ctx;
    api->safetensors_close(o.file);
    ++checked;
  }
  EXPECT_GT(checked, files_per_test() / 8);
}

// Header and whole-file mutations: a status or a file that agrees with its header.
TEST(SafetensorsFuzz, MutatedFilesAreRefusedOrAgreeWithTheirHeader) {
  Fuzzer g(seed() + 2);
  Counts c;
  for (int64_t k = 0; k < files_per_test(); ++k) {
    Model m = g.valid_file();
    if (g.chance(0.1) && !m.entries.empty()) {  // splice: one file's header, another's data
      Model other = g.valid_file();
      m.data = other.data;
    }
    std::string log;
    std::string h = m.header;
    for (int64_t n = g.uniform(1, 3); n > 0; --n) g.mutate_header(h, log);
    Bytes bytes = with_length(h, m.data);  // the length field follows the header: deeper mutations
    if (g.chance(0.35)) g.mutate_file(bytes, log);
    MemFile mf(bytes);
    ASSERT_TRUE(mf.ok()) << std::strerror(errno);
    std::string ctx = "seed " + std::to_string(seed() + 2) + " file " + std::to_string(k) + " mutations" + log;
    Opened o = open_bytes(mf);
    ++c.files;
    if (o.code == TSR_OK) {
      ++c.accepted;
      check_accepted(bytes, o.file, ctx);
      tsr::api()->safetensors_close(o.file);
    } else {
      ++c.refused;
      check_refused(o, mf, ctx);
    }
    if (HasFatalFailure()) return;
  }
  // Most mutations break the header; some (a space, a renamed entry, an edge number that is
  // still right) must still be accepted, or the oracle above checked nothing.
  std::printf("[safetensors fuzzer] %lld files: %lld accepted, %lld refused\n", static_cast<long long>(c.files),
              static_cast<long long>(c.accepted), static_cast<long long>(c.refused));
  EXPECT_GT(c.refused, c.files / 2);
  EXPECT_GT(c.accepted, c.files / 50);
}
