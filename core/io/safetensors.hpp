// safetensors inside the core: the open-file object behind tsr_safetensors_t and the C entry
// points the api table exposes (io/safetensors_read.cpp validates and loads, io/safetensors_write.cpp
// saves). Every entry point returns a status and never throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "tessera/api.h"

namespace tsr::core::st {

struct Entry {
  std::string name;
  tsr_dtype_t dtype = TSR_DTYPE_UNDEFINED;
  int32_t ndim = 0;
  int64_t sizes[TSR_MAX_DIMS] = {};
  uint64_t begin = 0, end = 0;  // byte offsets in the data section
};

// The safetensors dtype names Tessera can hold, and back.
const char* dtype_to_name(tsr_dtype_t dt);  // nullptr for a dtype safetensors cannot name
tsr_dtype_t dtype_from_name(const std::string& name);

}  // namespace tsr::core::st

struct tsr_safetensors_s {
  tsr_runtime_t* runtime = nullptr;
  std::string path;
  const unsigned char* map = nullptr;  // the whole file (nullptr for an empty data section)
  size_t map_size = 0;
  const unsigned char* data = nullptr;  // start of the data section
  std::vector<tsr::core::st::Entry> entries;
  std::unordered_map<std::string, size_t> index;
  std::vector<std::pair<std::string, std::string>> metadata;
  ~tsr_safetensors_s();
};

namespace tsr::core::st {

tsr_status_t save(tsr_runtime_t* rt, const char* path, size_t n, const char* const* names, tsr_tensor_t* const* tensors,
                  size_t nmeta, const char* const* keys, const char* const* values);
tsr_status_t open(tsr_runtime_t* rt, const char* path, tsr_safetensors_t** out);
void close(tsr_safetensors_t* f);
size_t count(const tsr_safetensors_t* f);
tsr_status_t entry(const tsr_safetensors_t* f, size_t i, const char** name, tsr_dtype_t* dtype, int32_t* ndim,
                   const int64_t** sizes);
tsr_status_t find(const tsr_safetensors_t* f, const char* name, size_t* index);
tsr_status_t load(const tsr_safetensors_t* f, size_t i, tsr_device_t device, tsr_tensor_t** out);
size_t metadata_count(const tsr_safetensors_t* f);
tsr_status_t metadata_at(const tsr_safetensors_t* f, size_t i, const char** key, const char** value);
const char* metadata_get(const tsr_safetensors_t* f, const char* key);

}  // namespace tsr::core::st
