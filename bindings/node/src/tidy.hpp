// Scoped disposal of tensors (ts.tidy, ts.keep), as TensorFlow.js does.
#pragma once

#include "common.hpp"

namespace tsrnode {

Napi::Value tidy_begin(const Napi::CallbackInfo& info);
Napi::Value tidy_end(const Napi::CallbackInfo& info);
Napi::Value keep(const Napi::CallbackInfo& info);

}  // namespace tsrnode
