// Registry ops exposed to index.js: the schemas as data and the two ways to call an op.
#pragma once

#include "common.hpp"

namespace tsrnode {

Napi::Value list_ops(const Napi::CallbackInfo& info);
Napi::Value call_op(const Napi::CallbackInfo& info);
Napi::Value call_op_async(const Napi::CallbackInfo& info);

}  // namespace tsrnode
