// Tessera SDK: training checkpoints (model + optimizer + scheduler + step + RNG state) as one
// safetensors file, and the runtime's random-number state.
//
//   tsr::TrainingCheckpoint ck;
//   ck.model = model->state_dict(); ck.optimizer = opt.state_dict(); ck.step = step;
//   ck.rng = tsr::get_rng_state();
//   tsr::save_checkpoint("run.safetensors", ck);           // atomic: temp file + rename
//   ...
//   tsr::TrainingCheckpoint ck = tsr::load_checkpoint("run.safetensors");
//   model->load_state_dict(ck.model); opt.load_state_dict(ck.optimizer);
//   tsr::set_rng_state(ck.rng);                             // the next rand() repeats
//
// File layout: tensors under "model.", "optimizer." and "scheduler."; __metadata__ holds
// format=tessera.training_checkpoint, format_version, step, rng_seed, rng_offset (decimal) and
// every extra string under "extra.". Any safetensors reader can open it.
//
// Errors (tsr::Error): load_checkpoint of a file that is not a Tessera checkpoint is
// INVALID_ARGUMENT, of a newer format version UNIMPLEMENTED, of a checkpoint with malformed
// fields DATA_LOSS; file-level errors are those of serialize.hpp. Loaded tensors are new and
// independent of the file. Thread-safety: as serialize.hpp; the RNG state is per runtime, so
// get/set race with random ops running concurrently in other threads.
#pragma once

#include <charconv>
#include <cstdint>
#include <map>
#include <string>
#include <system_error>

#include "tessera/serialize.hpp"

namespace tsr {

// The whole state of a runtime's Philox generator: random ops draw counter blocks from
// `offset` on, under key `seed`.
struct RngState {
  uint64_t seed = 0;
  uint64_t offset = 0;
  bool operator==(const RngState& o) const { return seed == o.seed && offset == o.offset; }
  bool operator!=(const RngState& o) const { return !(*this == o); }
};

// rt: nullptr means tsr::runtime().
inline RngState get_rng_state(tsr_runtime_t* rt = nullptr) {
  RngState s;
  check(detail::safetensors_api("get_rng_state")->rng_get_state(rt ? rt : runtime(), &s.seed, &s.offset));
  return s;
}
inline void set_rng_state(const RngState& s, tsr_runtime_t* rt = nullptr) {
  check(detail::safetensors_api("set_rng_state")->rng_set_state(rt ? rt : runtime(), s.seed, s.offset));
}

struct TrainingCheckpoint {
  StateDict model, optimizer, scheduler;
  int64_t step = 0;
  RngState rng;
  std::map<std::string, std::string> extra;
};

// Bumped when the layout changes incompatibly; a reader refuses newer versions.
constexpr int64_t kCheckpointFormatVersion = 1;
constexpr const char* kCheckpointFormat = "tessera.training_checkpoint";

namespace detail {
template <class T>
T checkpoint_number(const std::string& path, const std::map<std::string, std::string>& meta, const char* key) {
  auto it = meta.find(key);
  T v{};
  if (it != meta.end()) {
    const char* b = it->second.data();
    const char* e = b + it->second.size();
    auto r = std::from_chars(b, e, v);
    if (r.ec == std::errc() && r.ptr == e && b != e) return v;
  }
  throw Error(TSR_DATA_LOSS, "load_checkpoint: '" + path + "': metadata '" + key + "' is " +
                                 (it == meta.end() ? std::string("missing") : "'" + it->second + "'") +
                                 ", expected a decimal integer");
}
}  // namespace detail

inline void save_checkpoint(const std::string& path, const TrainingCheckpoint& ck) {
  StateDict all;
  all.merge(ck.model, "model.");
  all.merge(ck.optimizer, "optimizer.");
  all.merge(ck.scheduler, "scheduler.");
  std::map<std::string, std::string> meta{{"format", kCheckpointFormat},
                                          {"format_version", std::to_string(kCheckpointFormatVersion)},
                                          {"step", std::to_string(ck.step)},
                                          {"rng_seed", std::to_string(ck.rng.seed)},
                                          {"rng_offset", std::to_string(ck.rng.offset)}};
  for (const auto& kv : ck.extra) meta.emplace("extra." + kv.first, kv.second);
  save_safetensors(path, all, meta);
}

inline TrainingCheckpoint load_checkpoint(const std::string& path, Device dev = Device::cpu()) {
  SafetensorsFile f(path);
  std::map<std::string, std::string> meta = f.metadata();
  auto fmt = meta.find("format");
  if (fmt == meta.end() || fmt->second != kCheckpointFormat)
    throw Error(TSR_INVALID_ARGUMENT, "load_checkpoint: '" + path +
                                          "' is not a Tessera training checkpoint (its metadata has no format=" +
                                          kCheckpointFormat + "; load a plain state_dict with load_safetensors)");
  int64_t version = detail::checkpoint_number<int64_t>(path, meta, "format_version");
  if (version > kCheckpointFormatVersion || version < 1)
    throw Error(TSR_UNIMPLEMENTED, "load_checkpoint: '" + path + "' has checkpoint format version " +
                                       std::to_string(version) + "; this build of Tessera reads versions 1.." +
                                       std::to_string(kCheckpointFormatVersion) + " (written by a newer Tessera?)");
  TrainingCheckpoint ck;
  ck.step = detail::checkpoint_number<int64_t>(path, meta, "step");
  ck.rng.seed = detail::checkpoint_number<uint64_t>(path, meta, "rng_seed");
  ck.rng.offset = detail::checkpoint_number<uint64_t>(path, meta, "rng_offset");
  const std::string extra = "extra.";
  for (const auto& kv : meta)
    if (kv.first.compare(0, extra.size(), extra) == 0) ck.extra.emplace(kv.first.substr(extra.size()), kv.second);

  static const std::pair<const char*, StateDict TrainingCheckpoint::*> kParts[] = {
      {"model.", &TrainingCheckpoint::model},
      {"optimizer.", &TrainingCheckpoint::optimizer},
      {"scheduler.", &TrainingCheckpoint::scheduler}};
  for (size_t i = 0, n = f.size(); i < n; ++i) {
    std::string name = f.entry(i).name;
    bool placed = false;
    for (const auto& part : kParts) {
      std::string prefix = part.first;
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      (ck.*(part.second)).insert(name.substr(prefix.size()), f.load(i, dev));
      placed = true;
      break;
    }
    if (!placed)
      throw Error(TSR_DATA_LOSS, "load_checkpoint: '" + path + "': entry '" + name +
                                     "' belongs to none of model., optimizer., scheduler.");
  }
  return ck;
}

}  // namespace tsr
