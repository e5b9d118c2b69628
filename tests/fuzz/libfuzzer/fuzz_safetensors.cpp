// libFuzzer target: the safetensors reader (safetensors_open and everything an accepted file
// hands out: entries, metadata, loads). Built by tools/fuzz.sh with clang (TESSERA_LIBFUZZER=ON),
// under ASan+UBSan; runs for as long as asked. The input is the whole file, put in memory
// (memfd) and opened by its /proc/self/fd path, as safetensors_open reads a path.
//
// Beyond the sanitizers, it traps when an accepted file breaks what the reader promises: a load
// that fails for anything but a BOOL byte other than 0/1, a tensor whose dtype, shape or bytes
// differ from its entry's, or entries that do not add up to the data section. The seeded
// mutation fuzzer in the test suite (tests/fuzz/test_safetensors_fuzzer.cpp) checks more
// against an independent header reading; this target is for long unattended runs.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace {

const tsr_api_t* api() { return tsr::api(); }

void require(bool ok) {
  if (!ok) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static int fd = memfd_create("tsr_fuzz_safetensors", MFD_CLOEXEC);
  require(fd >= 0);
  static const std::string path = "/proc/self/fd/" + std::to_string(fd);
  require(ftruncate(fd, 0) == 0);
  for (size_t off = 0; off < size;) {
    ssize_t w = pwrite(fd, data + off, size - off, static_cast<off_t>(off));
    require(w > 0);
    off += static_cast<size_t>(w);
  }
  tsr_safetensors_t* f = nullptr;
  tsr_status_t st = api()->safetensors_open(tsr::runtime(), path.c_str(), &f);
  if (st) {
    tsr_code_t code = api()->status_code(st);
    require(code == TSR_DATA_LOSS || code == TSR_UNIMPLEMENTED || code == TSR_RESOURCE_EXHAUSTED);
    require(std::strstr(api()->status_message(st), path.c_str()) != nullptr);
    api()->status_free(st);
    require(f == nullptr);
    return 0;
  }
  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | data[i];
  const uint64_t data_size = size - 8 - header_len;
  uint64_t total = 0;
  for (size_t i = 0; i < api()->safetensors_count(f); ++i) {
    const char* name = nullptr;
    tsr_dtype_t dtype{};
    int32_t ndim = -1;
    const int64_t* sizes = nullptr;
    require(api()->safetensors_entry(f, i, &name, &dtype, &ndim, &sizes) == nullptr);
    require(ndim >= 0 && ndim <= TSR_MAX_DIMS && std::strlen(name) < size);
    size_t index = SIZE_MAX;
    require(api()->safetensors_find(f, name, &index) == nullptr && index == i);
    uint64_t numel = 1;
    for (int32_t d = 0; d < ndim; ++d) numel *= static_cast<uint64_t>(sizes[d]);
    total += numel * tsr::itemsize(dtype);
    tsr_tensor_t* t = nullptr;
    st = api()->safetensors_load(f, i, tsr_device_t{}, &t);
    if (st) {
      require(dtype == TSR_BOOL && api()->status_code(st) == TSR_DATA_LOSS && t == nullptr);
      api()->status_free(st);
      continue;
    }
    tsr::Tensor r = tsr::Tensor::adopt(t);
    require(r.dtype() == dtype && r.sizes() == std::vector<int64_t>(sizes, sizes + ndim));
    std::vector<unsigned char> bytes(static_cast<size_t>(numel) * tsr::itemsize(dtype));
    require(api()->tensor_copy_to_host(r.get(), bytes.data(), bytes.size()) == nullptr);
    // The bytes are somewhere in the data section (which entry owns which range is the test
    // suite's fuzzer's business; here: a load never invents bytes).
    if (!bytes.empty()) require(memmem(data + 8 + header_len, data_size, bytes.data(), bytes.size()) != nullptr);
  }
  require(total == data_size);
  for (size_t i = 0; i < api()->safetensors_metadata_count(f); ++i) {
    const char *key = nullptr, *value = nullptr;
    require(api()->safetensors_metadata_at(f, i, &key, &value) == nullptr);
    require(api()->safetensors_metadata_get(f, key) != nullptr);
  }
  api()->safetensors_close(f);
  return 0;
}
