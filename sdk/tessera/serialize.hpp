// Tessera SDK: safetensors files (https://github.com/huggingface/safetensors), the format of
// state_dicts and checkpoints.
//
//   tsr::save_safetensors(path, sd, {{"note", "..."}});   // atomic: temp file + rename
//   tsr::StateDict sd = tsr::load_safetensors(path);        // file order, onto any device
//   tsr::SafetensorsFile f(path);                           // browse, load single entries
//
// Files are written by the core (any device, any strides; tensors are copied to host) and read
// through a memory mapping whose header the core validates completely before anything is
// loaded. A malformed, truncated or hostile file is a tsr::Error (DATA_LOSS; UNIMPLEMENTED for
// a dtype Tessera lacks) whose message names the path and the entry, never a crash.
// Other errors: NOT_FOUND / PERMISSION_DENIED for the file system, INVALID_ARGUMENT for
// undefined tensors, duplicate or reserved names ("__metadata__") and non-UTF-8 strings.
//
// Ownership: loaded tensors are new, contiguous and independent of the file (they outlive the
// SafetensorsFile). A SafetensorsFile is immutable once opened: several threads may load from
// one concurrently. It must not outlive the runtime it was opened in.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/nn/state_dict.hpp"
#include "tessera/tessera.hpp"

namespace tsr {

namespace detail {
// The core's table, provided it has the 1.1 entries (a host may dlopen an older core).
inline const tsr_api_t* safetensors_api(const char* what) {
  const tsr_api_t* a = api();
  if (!TSR_HAS_FIELD(a, tsr_api_t, safetensors_metadata_get))
    throw Error(TSR_UNIMPLEMENTED, std::string(what) + ": the loaded Tessera core predates ABI 1.1 (no safetensors)");
  return a;
}
}  // namespace detail

// Name, dtype and shape of one entry, read from the header alone.
struct SafetensorsEntry {
  std::string name;
  tsr_dtype_t dtype = TSR_DTYPE_UNDEFINED;
  std::vector<int64_t> shape;
};

// An open safetensors file (RAII over the core's handle). Move-only.
class SafetensorsFile {
 public:
  // Opens and validates `path` in `rt` (nullptr: tsr::runtime()).
  explicit SafetensorsFile(const std::string& path, tsr_runtime_t* rt = nullptr) : path_(path) {
    const tsr_api_t* a = detail::safetensors_api("SafetensorsFile");
    check(a->safetensors_open(rt ? rt : runtime(), path.c_str(), &f_));
  }
  SafetensorsFile(SafetensorsFile&& o) noexcept : path_(std::move(o.path_)), f_(o.f_) { o.f_ = nullptr; }
  SafetensorsFile& operator=(SafetensorsFile&& o) noexcept {
    if (this != &o) {
      close();
      path_ = std::move(o.path_);
      f_ = o.f_;
      o.f_ = nullptr;
    }
    return *this;
  }
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;
  ~SafetensorsFile() { close(); }

  const std::string& path() const { return path_; }
  size_t size() const { return api()->safetensors_count(h()); }
  // Entry names in file order.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (size_t i = 0, n = size(); i < n; ++i) out.push_back(entry(i).name);
    return out;
  }
  bool contains(const std::string& name) const {
    size_t i = 0;
    tsr_status_t st = api()->safetensors_find(h(), name.c_str(), &i);
    if (!st) return true;
    api()->status_free(st);
    return false;
  }
  SafetensorsEntry entry(size_t i) const {
    const char* name = nullptr;
    tsr_dtype_t dt = TSR_DTYPE_UNDEFINED;
    int32_t ndim = 0;
    const int64_t* sizes = nullptr;
    check(api()->safetensors_entry(h(), i, &name, &dt, &ndim, &sizes));
    return SafetensorsEntry{name, dt, std::vector<int64_t>(sizes, sizes + ndim)};
  }
  // Throws NOT_FOUND naming the entry and the file.
  SafetensorsEntry entry(const std::string& name) const { return entry(index(name)); }
  tsr_dtype_t dtype(const std::string& name) const { return entry(name).dtype; }
  std::vector<int64_t> shape(const std::string& name) const { return entry(name).shape; }

  // Copies one entry onto `dev`.
  Tensor load(size_t i, Device dev = Device::cpu()) const {
    tsr_tensor_t* out = nullptr;
    check(api()->safetensors_load(h(), i, dev.d, &out));
    return Tensor::adopt(out);
  }
  Tensor load(const std::string& name, Device dev = Device::cpu()) const { return load(index(name), dev); }
  // Every entry, in file order.
  StateDict load_all(Device dev = Device::cpu()) const {
    StateDict sd;
    for (size_t i = 0, n = size(); i < n; ++i) sd.insert(entry(i).name, load(i, dev));
    return sd;
  }

  std::map<std::string, std::string> metadata() const {
    std::map<std::string, std::string> out;
    for (size_t i = 0, n = api()->safetensors_metadata_count(h()); i < n; ++i) {
      const char* k = nullptr;
      const char* v = nullptr;
      check(api()->safetensors_metadata_at(h(), i, &k, &v));
      out.emplace(k, v);
    }
    return out;
  }
  std::optional<std::string> metadata(const std::string& key) const {
    const char* v = api()->safetensors_metadata_get(h(), key.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  }

 private:
  tsr_safetensors_t* h() const {
    if (!f_) throw Error(TSR_FAILED_PRECONDITION, "SafetensorsFile: use of a moved-from file");
    return f_;
  }
  size_t index(const std::string& name) const {
    size_t i = 0;
    check(api()->safetensors_find(h(), name.c_str(), &i));
    return i;
  }
  void close() {
    if (f_) api()->safetensors_close(f_);
    f_ = nullptr;
  }
  std::string path_;
  tsr_safetensors_t* f_ = nullptr;
};

// Writes every entry of sd (in its order) and the metadata strings to `path`, atomically.
inline void save_safetensors(const std::string& path, const StateDict& sd,
                             const std::map<std::string, std::string>& metadata = {}) {
  const tsr_api_t* a = detail::safetensors_api("save_safetensors");
  std::vector<const char*> names, keys, values;
  std::vector<tsr_tensor_t*> tensors;
  tsr_runtime_t* rt = nullptr;
  for (const auto& kv : sd) {
    if (!kv.second.defined())
      throw Error(TSR_INVALID_ARGUMENT, "save_safetensors: entry '" + kv.first + "' is an undefined tensor");
    if (!rt) rt = kv.second.runtime();
    names.push_back(kv.first.c_str());
    tensors.push_back(kv.second.get());
  }
  for (const auto& kv : metadata) {
    keys.push_back(kv.first.c_str());
    values.push_back(kv.second.c_str());
  }
  check(a->safetensors_save(rt ? rt : runtime(), path.c_str(), names.size(), names.data(), tensors.data(), keys.size(),
                            keys.data(), values.data()));
}

inline StateDict load_safetensors(const std::string& path, Device dev = Device::cpu()) {
  return SafetensorsFile(path).load_all(dev);
}

inline std::map<std::string, std::string> load_safetensors_metadata(const std::string& path) {
  return SafetensorsFile(path).metadata();
}

}  // namespace tsr
