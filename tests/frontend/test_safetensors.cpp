// safetensors: bit-exact round trips of every dtype and shape kind, files written by hand from
// the spec, the header text we write, SafetensorsFile browsing, save errors and atomicity.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <thread>

#include "op_test.hpp"
#include "safetensors_test_util.hpp"
#include "tessera/serialize.hpp"

namespace {

using sttest::Bytes;
using tsr::optest::throws_with;

const tsr_dtype_t kAllDtypes[] = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16, TSR_I32,
                                  TSR_I64,  TSR_F16, TSR_BF16, TSR_F32, TSR_F64};

// Random bytes of n elements of dt (any pattern for numbers: NaN payloads, subnormals, -0).
Bytes random_bytes(tsr_dtype_t dt, int64_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  Bytes b(static_cast<size_t>(n) * tsr::itemsize(dt));
  for (auto& x : b) x = static_cast<unsigned char>(dt == TSR_BOOL ? g() & 1 : g());
  return b;
}

TEST(Safetensors, EveryDtypeAndShapeKindRoundTripsBitExact) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {0}, {3, 0, 2}, {7}, {2, 3, 5}, {1, 1, 1, 1, 3}};
  tsr::StateDict sd;
  std::vector<Bytes> expect;
  uint64_t seed = 11;
  for (tsr_dtype_t dt : kAllDtypes)
    for (const auto& shape : shapes) {
      Bytes b = random_bytes(dt, tsr::optest::numel_of(shape), seed++);
      sd.insert(std::string(tsr::dtype_name(dt)) + "/" + std::to_string(expect.size()), sttest::from_raw(b, shape, dt));
      expect.push_back(b);
    }
  std::string path = sttest::scratch("dtypes");
  tsr::save_safetensors(path, sd, {{"k", "v"}});
  tsr::StateDict back = tsr::load_safetensors(path);
  ASSERT_EQ(back.keys(), sd.keys());  // file order is the order we saved in
  size_t i = 0;
  for (const auto& kv : sd) {
    const tsr::Tensor& t = back.at(kv.first);
    EXPECT_EQ(t.dtype(), kv.second.dtype()) << kv.first;
    EXPECT_EQ(t.sizes(), kv.second.sizes()) << kv.first;
    EXPECT_TRUE(t.is_contiguous());
    EXPECT_FALSE(t.shares_storage(kv.second));
    EXPECT_EQ(sttest::raw(t), expect[i++]) << kv.first;
  }
  std::remove(path.c_str());
}

TEST(Safetensors, NonContiguousTensorsAreWrittenRowMajor) {
  std::vector<int32_t> base(24);
  for (int k = 0; k < 24; ++k) base[static_cast<size_t>(k)] = 1000 * k - 7777;
  tsr::Tensor b = tsr::from_vector(base, {4, 6});
  tsr::Tensor view = b.transpose(0, 1).slice(0, 1, 6, 2);  // [3, 4]: view[i][j] = base[j][1 + 2i]
  ASSERT_FALSE(view.is_contiguous());
  tsr::Tensor expanded = tsr::from_vector(std::vector<double>{1.5, -2.25}, {2, 1}).expand({2, 3});
  tsr::StateDict sd;
  sd.insert("view", view);
  sd.insert("expanded", expanded);
  std::string path = sttest::scratch("strided");
  tsr::save_safetensors(path, sd);
  tsr::StateDict back = tsr::load_safetensors(path);
  std::vector<int32_t> got = back.at("view").to_vector<int32_t>();
  ASSERT_EQ(back.at("view").sizes(), (std::vector<int64_t>{3, 4}));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j)
      EXPECT_EQ(got[static_cast<size_t>(i * 4 + j)], base[static_cast<size_t>(j * 6 + 1 + 2 * i)]) << i << "," << j;
  EXPECT_EQ(back.at("expanded").to_vector<double>(), (std::vector<double>{1.5, 1.5, 1.5, -2.25, -2.25, -2.25}));
  std::remove(path.c_str());
}

// Saving gathers each tensor to the host in bounded pieces (runs of rows, recursing into rows
// larger than a piece). With pieces shrunk to a few bytes, every split (rows grouped, a row
// split, a view with an offset and odd strides, a 0-dim tensor) must give the same bytes as the
// whole-tensor save.
TEST(Safetensors, SavingInPiecesGivesTheSameFile) {
  std::vector<double> base(7 * 9 * 5);
  std::mt19937_64 g(5);
  for (auto& x : base) x = std::uniform_real_distribution<double>(-3, 3)(g);
  tsr::Tensor b = tsr::from_vector(base, {7, 9, 5});
  tsr::StateDict sd;
  sd.insert("strided", b.permute({2, 0, 1}).slice(1, 1, 7, 2));  // [5, 3, 9], offset 45
  sd.insert("dense", b);
  sd.insert("scalar", tsr::full({}, -1.25, TSR_F64));
  sd.insert("empty", tsr::zeros({3, 0, 4}));
  sd.insert("bytes", tsr::from_vector(std::vector<int32_t>{1, 2, 3, 4, 5, 6, 7}, {7}).to(TSR_U8));
  std::string whole = sttest::scratch("whole"), pieces = sttest::scratch("pieces");
  tsr::save_safetensors(whole, sd);
  for (const char* piece : {"16", "24", "100", "1000"}) {
    ASSERT_EQ(setenv("TESSERA_SAVE_PIECE_BYTES", piece, 1), 0);
    tsr::save_safetensors(pieces, sd);
    unsetenv("TESSERA_SAVE_PIECE_BYTES");
    EXPECT_EQ(sttest::read_file(pieces), sttest::read_file(whole)) << "pieces of " << piece << " bytes";
  }
  tsr::StateDict back = tsr::load_safetensors(pieces);
  EXPECT_EQ(back.at("strided").to_vector<double>(), sd.at("strided").contiguous().to_vector<double>());
  std::remove(whole.c_str());
  std::remove(pieces.c_str());
}

// The C table hands metadata out in file order (io.h), not sorted as a JSON object would hold it
// (found by tests/fuzz/test_safetensors_fuzzer.cpp).
TEST(Safetensors, MetadataKeepsTheFilesOrder) {
  std::string path = sttest::scratch("metaorder");
  sttest::write_file(path, sttest::make_file(R"({"__metadata__":{"zeta":"1","alpha":"2","mid":"3"}})", {}));
  tsr_safetensors_t* f = nullptr;
  tsr::check(tsr::api()->safetensors_open(tsr::runtime(), path.c_str(), &f));
  std::vector<std::string> keys, values;
  for (size_t i = 0; i < tsr::api()->safetensors_metadata_count(f); ++i) {
    const char *k = nullptr, *v = nullptr;
    tsr::check(tsr::api()->safetensors_metadata_at(f, i, &k, &v));
    keys.push_back(k);
    values.push_back(v);
  }
  tsr::api()->safetensors_close(f);
  EXPECT_EQ(keys, (std::vector<std::string>{"zeta", "alpha", "mid"}));
  EXPECT_EQ(values, (std::vector<std::string>{"1", "2", "3"}));
  std::remove(path.c_str());
}

// A file assembled byte by byte from the spec: foreign key order, an empty entry, padding.
TEST(Safetensors, ReadsAFileWrittenByHandFromTheSpec) {
  Bytes data;
  sttest::put<double>(data, 3.25);                                                     // "a" at [0, 8)
  for (int16_t v : {int16_t{-3}, int16_t{300}, int16_t{32767}}) sttest::put(data, v);  // "b" at [8, 14)
  data.push_back(1);                                                                   // "c" at [14, 16): bool [2]
  data.push_back(0);
  std::string header = R"({"b":{"dtype":"I16","shape":[3],"data_offsets":[8,14]},)"
                       R"("__metadata__":{"format":"pt","note":"h\u00e9"},)"
                       R"("e":{"shape":[2,0],"dtype":"F32","data_offsets":[16,16]},)"
                       R"("a":{"data_offsets":[0,8],"dtype":"F64","shape":[]},)"
                       R"("c":{"dtype":"BOOL","shape":[2],"data_offsets":[14,16]}}   )";
  std::string path = sttest::scratch("byhand");
  sttest::write_file(path, sttest::make_file(header, data));

  tsr::SafetensorsFile f(path);
  EXPECT_EQ(f.names(), (std::vector<std::string>{"b", "e", "a", "c"}));
  EXPECT_EQ(f.entry("b").dtype, TSR_I16);
  EXPECT_EQ(f.shape("e"), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(f.shape("a"), std::vector<int64_t>{});
  EXPECT_TRUE(f.contains("c"));
  EXPECT_FALSE(f.contains("__metadata__"));
  EXPECT_EQ(f.load("a").item<double>(), 3.25);
  EXPECT_EQ(f.load("a").dim(), 0);
  EXPECT_EQ(f.load("b").to_vector<int16_t>(), (std::vector<int16_t>{-3, 300, 32767}));
  EXPECT_EQ(f.load("c").to_vector<uint8_t>(), (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(f.load("e").numel(), 0);
  EXPECT_EQ(f.metadata(), (std::map<std::string, std::string>{{"format", "pt"}, {"note", "h\xc3\xa9"}}));
  EXPECT_EQ(f.metadata("format"), std::optional<std::string>("pt"));
  EXPECT_EQ(f.metadata("absent"), std::nullopt);
  EXPECT_EQ(tsr::load_safetensors_metadata(path).at("note"), "h\xc3\xa9");
  std::remove(path.c_str());
}

// What we write is what the spec says: length, JSON header (padded to 8), raw bytes in order.
TEST(Safetensors, WrittenFileFollowsTheSpecByteForByte) {
  tsr::StateDict sd;
  sd.insert("w", tsr::from_vector(std::vector<float>{1, 2, 3, 4, 5, -6.5f}, {2, 3}));
  sd.insert("n", tsr::from_vector(std::vector<int64_t>{-9}, {}));
  sd.insert("z", tsr::empty({0, 4}, TSR_BF16));
  std::string path = sttest::scratch("spec");
  tsr::save_safetensors(path, sd, {{"author", "tessera \"test\""}});
  Bytes file = sttest::read_file(path);
  ASSERT_GE(file.size(), 8u);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | file[static_cast<size_t>(i)];
  ASSERT_EQ(n % 8, 0u);
  ASSERT_EQ(file.size(), 8 + n + 24 + 8);
  std::string header(file.begin() + 8, file.begin() + 8 + static_cast<std::ptrdiff_t>(n));
  std::string trimmed = header.substr(0, header.find_last_not_of(' ') + 1);
  EXPECT_EQ(trimmed, R"({"__metadata__":{"author":"tessera \"test\""},)"
                     R"("w":{"data_offsets":[0,24],"dtype":"F32","shape":[2,3]},)"
                     R"("n":{"data_offsets":[24,32],"dtype":"I64","shape":[]},)"
                     R"("z":{"data_offsets":[32,32],"dtype":"BF16","shape":[0,4]}})");
  Bytes data(file.begin() + 8 + static_cast<std::ptrdiff_t>(n), file.end());
  Bytes expect;
  for (float v : {1.f, 2.f, 3.f, 4.f, 5.f, -6.5f}) sttest::put(expect, v);
  sttest::put<int64_t>(expect, -9);
  EXPECT_EQ(data, expect);
  std::remove(path.c_str());
}

TEST(Safetensors, EmptyStateDictAndMetadataOnly) {
  std::string path = sttest::scratch("empty");
  tsr::save_safetensors(path, tsr::StateDict{});
  EXPECT_EQ(tsr::load_safetensors(path).size(), 0u);
  tsr::save_safetensors(path, tsr::StateDict{}, {{"only", "meta"}});
  tsr::SafetensorsFile f(path);
  EXPECT_EQ(f.size(), 0u);
  EXPECT_EQ(f.metadata("only"), std::optional<std::string>("meta"));
  std::remove(path.c_str());
}

TEST(Safetensors, LoadedTensorsOutliveTheFileAndFileMoves) {
  std::string path = sttest::scratch("outlive");
  tsr::StateDict sd;
  sd.insert("x", tsr::optest::randu({5}, 3));
  tsr::save_safetensors(path, sd);
  tsr::Tensor x;
  {
    tsr::SafetensorsFile f(path);
    tsr::SafetensorsFile g(std::move(f));
    x = g.load(0);
    EXPECT_TRUE(throws_with([&] { f.size(); }, {"moved-from"}));
  }
  std::remove(path.c_str());
  EXPECT_EQ(x.to_vector<double>(), sd.at("x").to_vector<double>());
}

TEST(Safetensors, OneOpenFileServesSeveralThreads) {
  std::string path = sttest::scratch("threads");
  tsr::StateDict sd;
  for (int k = 0; k < 8; ++k) sd.insert("t" + std::to_string(k), tsr::optest::randu({16, 3}, 100 + k));
  tsr::save_safetensors(path, sd);
  tsr::SafetensorsFile f(path);
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int w = 0; w < 4; ++w)
    threads.emplace_back([&, w] {
      for (int rep = 0; rep < 10; ++rep)
        for (const auto& kv : sd)
          if (f.load(kv.first).to_vector<double>() != kv.second.to_vector<double>())
            ++mismatches[static_cast<size_t>(w)];
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches, std::vector<int>(4, 0));
  std::remove(path.c_str());
}

TEST(Safetensors, LookupAndDeviceErrorsNameTheEntry) {
  std::string path = sttest::scratch("lookup");
  tsr::StateDict sd;
  sd.insert("layer.weight", tsr::optest::randu({2, 2}, 5));
  tsr::save_safetensors(path, sd);
  tsr::SafetensorsFile f(path);
  EXPECT_TRUE(throws_with([&] { f.load("layer.bias"); }, {"no entry 'layer.bias'", path}));
  EXPECT_TRUE(throws_with([&] { f.entry(7); }, {"index 7", "1 entries"}));
  EXPECT_TRUE(throws_with([&] { f.load(0, tsr::Device(tsr_device_t{TSR_DEVICE_TYPE_CPU, 99})); }, {"layer.weight"}));
  try {
    f.load("nope");
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_NOT_FOUND);
  }
  std::remove(path.c_str());
}

TEST(Safetensors, SaveRejectsBadArgumentsWithoutTouchingTheTarget) {
  std::string path = sttest::scratch("badsave");
  tsr::StateDict good;
  good.insert("keep", tsr::from_vector(std::vector<float>{4.f, 2.f}));
  tsr::save_safetensors(path, good);
  Bytes before = sttest::read_file(path);

  tsr::StateDict undefined_entry;
  undefined_entry.insert("w", tsr::Tensor());
  EXPECT_TRUE(throws_with([&] { tsr::save_safetensors(path, undefined_entry); }, {"'w'", "undefined"}));
  tsr::StateDict reserved;
  reserved.insert("__metadata__", tsr::ones({1}));
  EXPECT_TRUE(throws_with([&] { tsr::save_safetensors(path, reserved); }, {"reserved"}));
  tsr::StateDict bad_utf8;
  bad_utf8.insert("w\xff", tsr::ones({1}));
  EXPECT_TRUE(throws_with([&] { tsr::save_safetensors(path, bad_utf8); }, {"UTF-8"}));
  EXPECT_TRUE(throws_with([&] { tsr::save_safetensors(path, good, {{"k", "\xc3"}}); }, {"UTF-8", "'k'"}));
  EXPECT_EQ(sttest::read_file(path), before);

  // Duplicate names cannot come from a StateDict: through the C ABI.
  tsr::Tensor t = tsr::ones({1});
  const char* names[] = {"a", "a"};
  tsr_tensor_t* ts[] = {t.get(), t.get()};
  EXPECT_TRUE(throws_with(
      [&] {
        tsr::check(tsr::api()->safetensors_save(tsr::runtime(), path.c_str(), 2, names, ts, 0, nullptr, nullptr));
      },
      {"duplicate tensor name 'a'"}));
  EXPECT_EQ(sttest::read_file(path), before);

  std::string missing_dir = ::testing::TempDir() + "tsr_no_such_dir_" + std::to_string(::getpid()) + "/x.safetensors";
  try {
    tsr::save_safetensors(missing_dir, good);
    ADD_FAILURE() << "saved into a missing directory";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find("tsr_no_such_dir_"), std::string::npos) << e.what();
  }
  std::remove(path.c_str());
}

TEST(Safetensors, SaveReplacesAtomicallyAndLeavesNoTemporaryFiles) {
  namespace fs = std::filesystem;
  std::string path = sttest::scratch("atomic");
  tsr::StateDict a, b;
  a.insert("x", tsr::optest::randu({3}, 1));
  b.insert("y", tsr::optest::randu({4}, 2, -1, 1, TSR_F32));
  tsr::save_safetensors(path, a);
  tsr::SafetensorsFile old(path);  // a reader of the old file keeps seeing it after the rename
  tsr::save_safetensors(path, b);
  EXPECT_EQ(old.names(), std::vector<std::string>{"x"});
  EXPECT_EQ(old.load("x").to_vector<double>(), a.at("x").to_vector<double>());
  EXPECT_EQ(tsr::load_safetensors(path).keys(), std::vector<std::string>{"y"});
  std::string stem = fs::path(path).filename().string();
  for (const auto& e : fs::directory_iterator(fs::path(path).parent_path())) {
    std::string name = e.path().filename().string();
    EXPECT_FALSE(name != stem && name.compare(0, stem.size(), stem) == 0) << "left behind: " << name;
  }
  std::remove(path.c_str());
}

TEST(Safetensors, OpenErrorsForMissingFilesAndDirectories) {
  std::string missing = sttest::scratch("missing");
  try {
    tsr::SafetensorsFile f(missing);
    ADD_FAILURE() << "opened a missing file";
  } catch (const tsr::Error& e) {
    EXPECT_EQ(e.code(), TSR_NOT_FOUND);
    EXPECT_NE(std::string(e.what()).find(missing), std::string::npos);
  }
  EXPECT_TRUE(throws_with([] { tsr::SafetensorsFile f(::testing::TempDir()); }, {"not a regular file"}));
}

}  // namespace
