// Opening the oneDNN side library (onednn_lib.hpp).
#include "onednn_lib.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "tessera/api.h"

namespace tsr::cpu {

namespace {

// cpu/tessera_cpu_onednn.so beside this plugin (which runs from a build tree or an install).
const std::string& library_path() {
  static const std::string path = [] {
    Dl_info info;
    if (!dladdr(reinterpret_cast<const void*>(&library_path), &info) || !info.dli_fname) return std::string();
    std::string p = info.dli_fname;
    return p.substr(0, p.rfind('/') + 1) + "cpu/tessera_cpu_onednn.so";
  }();
  return path;
}

}  // namespace

bool onednn_wanted() {
  static const bool wanted = [] {
    const char* e = std::getenv("TESSERA_CPU_ONEDNN");
    if (e && std::strcmp(e, "0") == 0) return false;
    struct stat st;
    return !library_path().empty() && ::stat(library_path().c_str(), &st) == 0;
  }();
  return wanted;
}

const OneDnn* onednn() {
  static const OneDnn* lib = []() -> const OneDnn* {
    if (!onednn_wanted()) return nullptr;
    void* h = dlopen(library_path().c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) return nullptr;  // libdnnl missing: OpenBLAS and im2col do the work
    static OneDnn table;
    table.sgemm = reinterpret_cast<tsr_cpu_onednn_sgemm_fn>(dlsym(h, "tsr_cpu_onednn_sgemm"));
    table.conv2d = reinterpret_cast<tsr_cpu_onednn_kernel_fn>(dlsym(h, "tsr_cpu_onednn_conv2d"));
    table.conv2d_bias = reinterpret_cast<tsr_cpu_onednn_kernel_fn>(dlsym(h, "tsr_cpu_onednn_conv2d_bias"));
    table.conv2d_backward_input =
        reinterpret_cast<tsr_cpu_onednn_kernel_fn>(dlsym(h, "tsr_cpu_onednn_conv2d_backward_input"));
    table.conv2d_backward_weight =
        reinterpret_cast<tsr_cpu_onednn_kernel_fn>(dlsym(h, "tsr_cpu_onednn_conv2d_backward_weight"));
    table.bf16_mm = reinterpret_cast<tsr_cpu_onednn_kernel_fn>(dlsym(h, "tsr_cpu_onednn_bf16_mm"));
    table.bf16_bmm = reinterpret_cast<tsr_cpu_onednn_kernel_fn>(dlsym(h, "tsr_cpu_onednn_bf16_bmm"));
    table.bf16_linear = reinterpret_cast<tsr_cpu_onednn_kernel_fn>(dlsym(h, "tsr_cpu_onednn_bf16_linear"));
    table.f32_linear = reinterpret_cast<tsr_cpu_onednn_kernel_fn>(dlsym(h, "tsr_cpu_onednn_f32_linear"));
    return table.sgemm ? &table : nullptr;
  }();
  return lib;
}

tsr_status_t onednn_missing(const tsr_kernel_call_t* c) {
  return c->api->status_create(
      TSR_UNIMPLEMENTED,
      (std::string(c->op_name) + ": the oneDNN side library (cpu/tessera_cpu_onednn.so) could not be loaded").c_str());
}

}  // namespace tsr::cpu
