// The addon's entry point: per-environment data and the native functions index.js builds on.
#include <cstdlib>

#include "autograd.hpp"
#include "blob.hpp"
#include "convert.hpp"
#include "ops.hpp"
#include "runtime.hpp"
#include "tensor.hpp"
#include "tidy.hpp"

namespace tsrnode {

AddonData& addon_data(Napi::Env env) { return *env.GetInstanceData<AddonData>(); }

Napi::Object init(Napi::Env env, Napi::Object exports) {
  // libgomp threads that spin between parallel regions steal the cores of the event loop and
  // of libuv's workers: ask for passive waiting unless the user chose a policy. It must be set
  // before the CPU backend (and its OpenMP runtime) is loaded by the first runtime() call.
  setenv("OMP_WAIT_POLICY", "passive", 0);
  guard(env, [&] {
    tsr::runtime();  // loads the plugins: errors here are the user's first clue
    op_table();
  });

  auto* data = new AddonData();
  data->tensor_ctor = Napi::Persistent(TensorWrap::define(env));
  data->releases = ReleaseQueue::create(env);
  env.SetInstanceData(data);  // deleted with the environment

  exports.Set("Tensor", data->tensor_ctor.Value());
  auto fn = [&](const char* name, Napi::Value (*f)(const Napi::CallbackInfo&)) {
    exports.Set(name, Napi::Function::New(env, f, name));
  };
  fn("listOps", list_ops);
  fn("callOp", call_op);
  fn("callOpAsync", call_op_async);
  fn("fromTypedArray", from_typed_array);
  fn("empty", empty);
  fn("manualSeed", manual_seed);
  fn("devices", devices);
  fn("plugins", plugins);
  fn("save", save);
  fn("load", load);
  fn("isGradEnabled", is_grad_enabled);
  fn("setGradEnabled", set_grad_enabled);
  fn("isInferenceMode", is_inference_mode);
  fn("setInferenceMode", set_inference_mode);
  fn("autogradGrad", autograd_grad);
  fn("tidyBegin", tidy_begin);
  fn("tidyEnd", tidy_end);
  fn("keep", keep);
  exports.Set("syncFinalizers", Napi::Boolean::New(env, kSyncFinalizers));
  exports.Set("version", Napi::String::New(env, tsr::api()->version_string()));
  uint32_t abi = tsr::api()->abi_version;
  exports.Set("abiVersion", Napi::String::New(env, std::to_string(TSR_ABI_VERSION_MAJOR(abi)) + "." +
                                                       std::to_string(TSR_ABI_VERSION_MINOR(abi))));
  return exports;
}

}  // namespace tsrnode

// NODE_API_MODULE pastes the function's name into an identifier: it must be unqualified.
static Napi::Object InitTessera(Napi::Env env, Napi::Object exports) { return tsrnode::init(env, exports); }
NODE_API_MODULE(tessera, InitTessera)
