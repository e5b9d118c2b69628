// Module-level autograd functions (the Tensor's own gradient members are in TensorWrap).
#pragma once

#include "common.hpp"

namespace tsrnode {

Napi::Value is_grad_enabled(const Napi::CallbackInfo& info);
Napi::Value set_grad_enabled(const Napi::CallbackInfo& info);
Napi::Value is_inference_mode(const Napi::CallbackInfo& info);
Napi::Value set_inference_mode(const Napi::CallbackInfo& info);
Napi::Value autograd_grad(const Napi::CallbackInfo& info);

}  // namespace tsrnode
