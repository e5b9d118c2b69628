// Tessera SDK: the C++ exception that carries a tsr_status_t's code and message.
// Exceptions exist on the C++ side only: the SDK converts statuses to tsr::Error when calling
// into the core, and converts exceptions back to statuses at every plugin boundary.
#pragma once

#include <stdexcept>
#include <string>

#include "tessera/api.h"

namespace tsr {

class Error : public std::runtime_error {
 public:
  Error(tsr_code_t code, const std::string& message) : std::runtime_error(message), code_(code) {}
  tsr_code_t code() const noexcept { return code_; }

 private:
  tsr_code_t code_;
};

// Takes ownership of `st` (frees it) and throws tsr::Error when it is not OK.
inline void check(const tsr_api_t* api, tsr_status_t st) {
  if (st == nullptr) return;
  tsr_code_t code = api->status_code(st);
  std::string msg = api->status_message(st);
  api->status_free(st);
  throw Error(code, msg);
}

// Converts the exception in flight into a status created through the core's table.
// Use inside catch(...) at an ABI boundary.
inline tsr_status_t status_from_current_exception(const tsr_api_t* api, const char* where) {
  try {
    throw;
  } catch (const Error& e) {
    return api->status_create(e.code(), e.what());
  } catch (const std::bad_alloc&) {
    return api->status_create(TSR_RESOURCE_EXHAUSTED, (std::string(where) + ": out of host memory").c_str());
  } catch (const std::exception& e) {
    return api->status_create(TSR_INTERNAL, (std::string(where) + ": " + e.what()).c_str());
  } catch (...) {
    return api->status_create(TSR_INTERNAL, (std::string(where) + ": unknown C++ exception").c_str());
  }
}

}  // namespace tsr
