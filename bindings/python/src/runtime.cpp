// Runtime settings and information: seed, grad mode, threads, plugins, allocator statistics,
// safetensors save/load.
#include <omp.h>

#include "common.hpp"
#include "tessera/serialize.hpp"

namespace tsr::py {

void bind_runtime(pyb::module_& m) {
  m.def(
      "manual_seed", [](uint64_t seed) { tsr::manual_seed(seed); }, pyb::arg("seed"),
      "Seeds the runtime's counter-based generator (the same numbers on every backend).");
  m.def("is_grad_enabled", [] { return tsr::api()->grad_mode_enabled() != 0; });
  m.def(
      "set_grad_enabled", [](bool on) { tsr::api()->set_grad_mode(on ? 1 : 0); }, pyb::arg("mode"));
  // The cpu backend's OpenMP pool is the process's one libgomp: its thread count is ours to set.
  m.def(
      "set_num_threads",
      [](int n) {
        if (n < 1) raise(TSR_INVALID_ARGUMENT, "set_num_threads: n must be at least 1, got " + std::to_string(n));
        omp_set_num_threads(n);
      },
      pyb::arg("n"), "Threads of the CPU backend's kernels (OpenMP), for this process.");
  m.def("get_num_threads", [] { return omp_get_max_threads(); });
  m.def("version", [] { return std::string(tsr::api()->version_string()); });
  m.def("abi_version", [] {
    uint32_t v = tsr::api()->abi_version;
    return pyb::make_tuple(TSR_ABI_VERSION_MAJOR(v), TSR_ABI_VERSION_MINOR(v));
  });
  m.def(
      "plugins",
      [] {
        const tsr_api_t* api = tsr::api();
        tsr_runtime_t* rt = tsr::runtime();
        pyb::list out;
        for (size_t i = 0; i < api->plugin_count(rt); ++i) {
          tsr_plugin_record_t r{};
          r.struct_size = sizeof(r);
          check(api->plugin_record(rt, i, &r));
          pyb::dict d;
          d["name"] = r.name ? r.name : "";
          d["version"] = r.version ? r.version : "";
          d["path"] = r.path ? r.path : "";
          d["loaded"] = r.loaded != 0;
          d["score"] = r.score;
          d["reason"] = r.reason ? r.reason : "";
          out.append(d);
        }
        return out;
      },
      "What the plugin loader did: every plugin seen, loaded or refused, with the reason.");
  m.def(
      "devices",
      [] {
        const tsr_api_t* api = tsr::api();
        tsr_runtime_t* rt = tsr::runtime();
        pyb::list out;
        for (int32_t t = 0; t < api->device_type_count(rt); ++t)
          for (int32_t i = 0; i < api->device_count(rt, t); ++i) out.append(device_object(tsr_device_t{t, i}));
        return out;
      },
      "Every device of every loaded device type.");
  m.def(
      "memory_stats",
      [](const pyb::object& device) {
        tsr_memory_stats_t s{};
        s.struct_size = sizeof(s);
        check(tsr::api()->memory_stats(tsr::runtime(), to_device(device), &s));
        pyb::dict d;
        d["allocated_bytes"] = s.allocated_bytes;
        d["peak_allocated_bytes"] = s.peak_allocated_bytes;
        d["reserved_bytes"] = s.reserved_bytes;
        d["peak_reserved_bytes"] = s.peak_reserved_bytes;
        d["num_allocs"] = s.num_allocs;
        d["num_frees"] = s.num_frees;
        d["num_cache_hits"] = s.num_cache_hits;
        d["num_ooms"] = s.num_ooms;
        d["limit_bytes"] = s.limit_bytes;
        return d;
      },
      pyb::arg("device") = "cpu:0", "The caching allocator's statistics for a device.");
  m.def(
      "empty_cache",
      [](const pyb::object& device) { check(tsr::api()->empty_cache(tsr::runtime(), to_device(device))); },
      pyb::arg("device") = "cpu:0");
  m.def(
      "save",
      [](const pyb::dict& tensors, const std::string& path, const std::map<std::string, std::string>& metadata) {
        tsr::StateDict sd;  // in the dict's order
        for (const auto& kv : tensors) sd.insert(pyb::str(kv.first), kv.second.cast<tsr::Tensor>());
        tsr::save_safetensors(path, sd, metadata);
      },
      pyb::arg("tensors"), pyb::arg("path"), pyb::arg("metadata") = std::map<std::string, std::string>{},
      "Writes a dict of tensors to a safetensors file (atomically).");
  m.def(
      "load",
      [](const std::string& path, const pyb::object& device) {
        tsr::StateDict sd = tsr::load_safetensors(path, tsr::Device(to_device(device)));
        pyb::dict out;
        for (const auto& kv : sd) out[pyb::str(kv.first)] = kv.second;
        return out;
      },
      pyb::arg("path"), pyb::arg("device") = "cpu:0", "Reads every tensor of a safetensors file into a dict.");
  m.def(
      "load_metadata", [](const std::string& path) { return tsr::load_safetensors_metadata(path); }, pyb::arg("path"));
}

}  // namespace tsr::py
