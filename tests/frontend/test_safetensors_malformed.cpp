// safetensors: malformed, truncated and hostile files are refused with a status and a message
// naming the problem; a fuzz loop truncates and corrupts a valid file at every position.
// (Run under ASan/UBSan by the sanitized CI subset: any out-of-bounds read would show there.)
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <future>
#include <random>

#include "op_test.hpp"
#include "safetensors_test_util.hpp"
#include "tessera/serialize.hpp"

namespace {

using sttest::Bytes;

struct Outcome {
  bool ok = false;
  tsr_code_t code = TSR_OK;
  std::string message;
};

// Opens the file and loads every entry; reports the first error.
Outcome open_and_load(const std::string& path) {
  Outcome r;
  try {
    tsr::SafetensorsFile f(path);
    for (size_t i = 0; i < f.size(); ++i) {
      tsr::SafetensorsEntry e = f.entry(i);
      tsr::Tensor t = f.load(i);
      // A successful load must agree with the header it came from.
      if (t.sizes() != e.shape || t.dtype() != e.dtype) throw std::logic_error("loaded tensor disagrees with header");
      (void)f.metadata();
    }
    r.ok = true;
  } catch (const tsr::Error& e) {
    r.code = e.code();
    r.message = e.what();
  }
  return r;
}

// A header + data file must be refused with `code` and a message containing each of `parts`.
void expect_refused(const std::string& header, const Bytes& data, const std::vector<std::string>& parts,
                    tsr_code_t code = TSR_DATA_LOSS) {
  std::string path = sttest::scratch("bad");
  sttest::write_file(path, sttest::make_file(header, data));
  Outcome r = open_and_load(path);
  EXPECT_FALSE(r.ok) << "accepted header: " << header;
  EXPECT_EQ(r.code, code) << r.message;
  EXPECT_NE(r.message.find(path), std::string::npos) << r.message;
  for (const std::string& p : parts)
    EXPECT_NE(r.message.find(p), std::string::npos) << "\"" << r.message << "\" lacks \"" << p << "\"";
  std::remove(path.c_str());
}

Bytes zeros(size_t n) { return Bytes(n, 0); }

TEST(SafetensorsMalformed, FileShorterThanTheLengthField) {
  for (size_t n : {0, 1, 5, 7}) {
    std::string path = sttest::scratch("short");
    sttest::write_file(path, Bytes(n, '{'));
    Outcome r = open_and_load(path);
    EXPECT_EQ(r.code, TSR_DATA_LOSS) << r.message;
    EXPECT_NE(r.message.find("shorter than the 8-byte header length"), std::string::npos) << r.message;
    std::remove(path.c_str());
  }
}

TEST(SafetensorsMalformed, HeaderLengthBeyondTheFile) {
  std::string path = sttest::scratch("hlen");
  Bytes b = sttest::make_file("{}", {});
  b[0] = 3;  // claims 3 bytes, file has 2 after the length
  sttest::write_file(path, b);
  EXPECT_NE(open_and_load(path).message.find("header length 3 exceeds the 2 bytes"), std::string::npos);
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = 0xff;  // 2^64 - 1: no wrap-around
  sttest::write_file(path, b);
  EXPECT_NE(open_and_load(path).message.find("header length 18446744073709551615 exceeds"), std::string::npos);
  std::remove(path.c_str());
}

TEST(SafetensorsMalformed, HeaderNotJsonOrNotAnObject) {
  expect_refused("{not json", {}, {"not valid JSON"});
  expect_refused("", {}, {"not valid JSON"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}} trailing)", zeros(4), {"not valid JSON"});
  expect_refused("[1, 2]", {}, {"header is JSON array, not an object"});
  expect_refused("42", {}, {"not an object"});
  expect_refused(R"({"a":[1]})", {}, {"entry 'a'", "not an object"});
  expect_refused(R"({"a":7})", {}, {"entry 'a' is JSON number, not an object"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[[[1]]],"data_offsets":[0,4]}})", zeros(4), {"nests deeper"});
}

TEST(SafetensorsMalformed, UnknownAndUnsupportedDtypes) {
  expect_refused(R"({"a":{"dtype":"F7","shape":[1],"data_offsets":[0,4]}})", zeros(4),
                 {"entry 'a'", "unknown dtype 'F7'"});
  expect_refused(R"({"a":{"dtype":"f32","shape":[1],"data_offsets":[0,4]}})", zeros(4), {"unknown dtype 'f32'"});
  expect_refused(R"({"a":{"dtype":7,"shape":[1],"data_offsets":[0,4]}})", zeros(4), {"dtype is JSON number"});
  // Single e2m1 values (safetensors' F4) are not float4_e2m1fn_x2's packed pairs.
  expect_refused(R"({"a":{"dtype":"F4","shape":[4],"data_offsets":[0,2]}})", zeros(2),
                 {"F4 has no Tessera equivalent"}, TSR_UNIMPLEMENTED);
  expect_refused(R"({"a":{"dtype":"F6_E2M3","shape":[4],"data_offsets":[0,3]}})", zeros(3),
                 {"F6_E2M3 has no Tessera equivalent"}, TSR_UNIMPLEMENTED);
}

TEST(SafetensorsMalformed, BadShapes) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", zeros(4),
                 {"entry 'a'", "shape[0] = -1 is not a non-negative"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[2.5],"data_offsets":[0,4]}})", zeros(4), {"shape[0] = 2.5"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1e30],"data_offsets":[0,4]}})", zeros(4), {"shape[0]"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[18446744073709551615],"data_offsets":[0,4]}})", zeros(4),
                 {"shape[0]"});
  expect_refused(R"({"a":{"dtype":"F32","shape":"1","data_offsets":[0,4]}})", zeros(4), {"shape is JSON string"});
  // The byte size wraps to 0 in 64 bits: must not pass as an empty tensor.
  expect_refused(R"({"a":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", {}, {"overflows"});
  // Zero elements, but strides of a [0, 2^62, 2^62] tensor overflow.
  expect_refused(R"({"a":{"dtype":"U8","shape":[0,4611686018427387904,4611686018427387904],"data_offsets":[0,0]}})", {},
                 {"overflows"});
  expect_refused(R"({"a":{"dtype":"U8","shape":[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1],"data_offsets":[0,1]}})", zeros(1),
                 {"17 dims"});
}

TEST(SafetensorsMalformed, BadOffsets) {
  expect_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,1000]}})", zeros(8),
                 {"entry 'a'", "[0, 1000]", "past the data section of 8 bytes"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[8,4]}})", zeros(8), {"begin > end"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})", zeros(4),
                 {"hold 4 bytes but shape [2] of F32 needs 8"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[-4,0]}})", zeros(4), {"data_offsets"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}})", zeros(8), {"[begin, end]"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":{"b":0}}})", zeros(4), {"[begin, end]"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,18446744073709551615]}})", zeros(4),
                 {"data_offsets"});
}

TEST(SafetensorsMalformed, OverlapsHolesAndTrailingBytes) {
  expect_refused(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      zeros(8), {"entry 'b'", "overlaps entry 'a'"});
  expect_refused(
      R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})",
      zeros(8), {"overlaps"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})", zeros(8),
                 {"bytes 0..4 belong to no entry"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", zeros(8),
                 {"8 bytes but the entries cover 4"});
}

TEST(SafetensorsMalformed, DuplicateNamesAndFields) {
  expect_refused(
      R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"a":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
      zeros(8), {"duplicate entry 'a'"});
  expect_refused(R"({"a":{"dtype":"F32","dtype":"F64","shape":[1],"data_offsets":[0,4]}})", zeros(4),
                 {"duplicate field 'dtype'"});
  expect_refused(R"({"__metadata__":{},"__metadata__":{}})", {}, {"duplicate entry '__metadata__'"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4],"extra":1}})", zeros(4),
                 {"unknown field 'extra'"});
  expect_refused(R"({"a":{"dtype":"F32","shape":[1]}})", zeros(4), {"needs the fields"});
  expect_refused(R"({"a\u0000b":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", zeros(4), {"NUL"});
}

TEST(SafetensorsMalformed, MetadataMustBeStrings) {
  expect_refused(R"({"__metadata__":{"k":1}})", {}, {"__metadata__ 'k' is JSON number, not a string"});
  expect_refused(R"({"__metadata__":{"k":{"x":"y"}}})", {}, {"__metadata__ 'k'", "not a string"});
  expect_refused(R"({"__metadata__":["k"]})", {}, {"__metadata__ is JSON array"});
  expect_refused(R"({"__metadata__":{"k":"a\u0000b"}})", {}, {"NUL"});
}

TEST(SafetensorsMalformed, BoolBytesOtherThanZeroOrOne) {
  expect_refused(R"({"m":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})", Bytes{1, 0, 2},
                 {"entry 'm'", "BOOL element 2 is byte 2"});
}

TEST(SafetensorsMalformed, TruncatedDataSection) {
  tsr::StateDict sd;
  sd.insert("a", tsr::optest::randu({3, 2}, 9));
  sd.insert("b", tsr::optest::randint({5}, 4, -100, 100, TSR_I32));
  std::string path = sttest::scratch("trunc");
  tsr::save_safetensors(path, sd);
  Bytes full = sttest::read_file(path);
  full.resize(full.size() - 3);
  sttest::write_file(path, full);
  Outcome r = open_and_load(path);
  EXPECT_EQ(r.code, TSR_DATA_LOSS);
  EXPECT_NE(r.message.find("entry 'b'"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("file truncated?"), std::string::npos) << r.message;
  std::remove(path.c_str());
}

// A header of many entries opens with every entry in file order (the header parse was quadratic
// in the number of entries: 50k took seconds, 100k minutes).
TEST(SafetensorsMalformed, ManyEntriesOpenInFileOrder) {
  constexpr size_t kEntries = 50000;
  std::string header = "{";
  Bytes data(kEntries);
  for (size_t i = 0; i < kEntries; ++i) {
    // Names out of lexical order ("w10" before "w9"), so file order is what is checked.
    header += (i ? ",\"w" : "\"w") + std::to_string(i) + R"(":{"dtype":"U8","shape":[1],"data_offsets":[)" +
              std::to_string(i) + "," + std::to_string(i + 1) + "]}";
    data[i] = static_cast<unsigned char>(i * 7 + 3);
  }
  header += "}";
  std::string path = sttest::scratch("many");
  sttest::write_file(path, sttest::make_file(header, data));
  tsr::SafetensorsFile f(path);
  ASSERT_EQ(f.size(), kEntries);
  for (size_t i : {size_t{0}, size_t{9}, size_t{10}, size_t{12345}, kEntries - 1}) {
    tsr::SafetensorsEntry e = f.entry(i);
    EXPECT_EQ(e.name, "w" + std::to_string(i));
    EXPECT_EQ(e.dtype, TSR_U8);
    EXPECT_EQ(e.shape, std::vector<int64_t>{1});
    EXPECT_EQ(sttest::raw(f.load(e.name)), Bytes{static_cast<unsigned char>(i * 7 + 3)}) << e.name;
  }
  EXPECT_FALSE(f.contains("w50000"));
  std::remove(path.c_str());
}

// Tokens the file supplies (a 100 KB number, string or key) are quoted cut short, not whole.
TEST(SafetensorsMalformed, LongTokensAreCutShortInMessages) {
  const std::string digits(100000, '9'), letters(100000, 'x');
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({"a":{"dtype":"F32","shape":[)" + digits + R"(],"data_offsets":[0,4]}})", "number overflow"},
      {R"({"a":{"dtype":"F32","shape":[)" + digits + "x", "not valid JSON"},
      {R"({"a":{"dtype":"F32","shape":[")" + letters + R"("],"data_offsets":[0,4]}})", "shape[0] = \"xxx"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,")" + letters + R"("]}})", "data_offsets [0,\"xxx"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[")" + letters + R"("]}})", "[begin, end], found"},
      {R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},")" + letters, "not valid JSON"},
      {R"({"a":{"dtype":")" + letters + R"(","shape":[1],"data_offsets":[0,4]}})", "unknown dtype 'xxx"},
  };
  for (const auto& [header, part] : cases) {
    std::string path = sttest::scratch("long");
    sttest::write_file(path, sttest::make_file(header, zeros(4)));
    Outcome r = open_and_load(path);
    EXPECT_EQ(r.code, TSR_DATA_LOSS) << r.message.substr(0, 300);
    EXPECT_NE(r.message.find(part), std::string::npos) << r.message.substr(0, 300);
    EXPECT_NE(r.message.find("..."), std::string::npos) << r.message.substr(0, 300);
    EXPECT_LT(r.message.size(), 400u) << r.message.substr(0, 300);
    std::remove(path.c_str());
  }
}

// A FIFO, a directory or a device is refused at once (opening a FIFO used to block until a
// writer came, forever).
TEST(SafetensorsMalformed, NonRegularFilesAreRefusedWithoutBlocking) {
  std::string fifo = sttest::scratch("fifo"), dir = sttest::scratch("dir");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  for (const std::string& path : {fifo, dir, std::string("/dev/null")}) {
    auto pending = std::async(std::launch::async, [&] { return open_and_load(path); });
    if (pending.wait_for(std::chrono::seconds(10)) != std::future_status::ready) {
      // Release the blocked open so the test fails instead of hanging.
      int w = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
      if (w >= 0) ::close(w);
      ADD_FAILURE() << "safetensors_open blocked on " << path;
    }
    Outcome r = pending.get();
    EXPECT_FALSE(r.ok) << path;
    EXPECT_EQ(r.code, TSR_INVALID_ARGUMENT) << r.message;
    EXPECT_NE(r.message.find("is not a regular file"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find(path), std::string::npos) << r.message;
  }
  std::remove(fifo.c_str());
  ::rmdir(dir.c_str());
}

// Every truncation of a valid file is refused; every corruption of one byte (a few masks at
// every position) is either refused with a status or loads tensors that match their header.
TEST(SafetensorsMalformed, FuzzTruncationsAndByteFlips) {
  tsr::StateDict sd;
  sd.insert("w", tsr::optest::randu({3, 4}, 21, -2, 2, TSR_F32));
  sd.insert("m", tsr::optest::randmask({5}, 22));
  sd.insert("i", tsr::optest::randint({2, 2}, 23, -50, 50, TSR_I16));
  sd.insert("s", tsr::optest::randu({}, 24, -2, 2, TSR_BF16));
  std::string src = sttest::scratch("fuzzsrc"), path = sttest::scratch("fuzz");
  tsr::save_safetensors(src, sd, {{"step", "17"}});
  const Bytes good = sttest::read_file(src);
  ASSERT_TRUE(open_and_load(src).ok);

  size_t refused = 0, accepted = 0;
  for (size_t len = 0; len < good.size(); ++len) {
    sttest::write_file(path, Bytes(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(len)));
    Outcome r = open_and_load(path);
    EXPECT_FALSE(r.ok) << "a file truncated to " << len << " bytes was accepted";
    EXPECT_FALSE(r.message.empty());
  }
  std::mt19937 g(5);
  for (size_t pos = 0; pos < good.size(); ++pos)
    for (unsigned char mask : {0x01, 0x20, 0x80, 0xff, static_cast<int>(g() | 1) & 0xff}) {
      Bytes b = good;
      b[pos] ^= mask;
      sttest::write_file(path, b);
      Outcome r = open_and_load(path);
      if (r.ok) {
        ++accepted;
      } else {
        ++refused;
        EXPECT_NE(r.code, TSR_OK);
        EXPECT_FALSE(r.message.empty()) << "at byte " << pos;
      }
    }
  // Flips in the header are refused (mostly); flips in number bytes load (different values).
  EXPECT_GT(refused, 100u);
  EXPECT_GT(accepted, 50u);
  std::remove(src.c_str());
  std::remove(path.c_str());
}

}  // namespace
