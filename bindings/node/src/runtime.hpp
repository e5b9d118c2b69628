// Module functions over the runtime: seed, devices, plugins, empty tensors, safetensors files.
#pragma once

#include "common.hpp"

namespace tsrnode {

Napi::Value manual_seed(const Napi::CallbackInfo& info);
Napi::Value devices(const Napi::CallbackInfo& info);
Napi::Value plugins(const Napi::CallbackInfo& info);
Napi::Value empty(const Napi::CallbackInfo& info);
Napi::Value save(const Napi::CallbackInfo& info);
Napi::Value load(const Napi::CallbackInfo& info);

}  // namespace tsrnode
