// Tessera statuses as Python exceptions. Every class derives from tessera.TesseraError (a
// RuntimeError, as PyTorch raises), and from the builtin a Python caller expects for the code:
// INVALID_ARGUMENT -> ValueError, OUT_OF_RANGE -> IndexError, NOT_FOUND -> LookupError,
// RESOURCE_EXHAUSTED (out of memory) -> MemoryError, UNIMPLEMENTED -> NotImplementedError.
// The instance carries `.code`, the canonical code's name ("INVALID_ARGUMENT").
#include "common.hpp"

namespace tsr::py {
namespace {

struct Classes {
  PyObject* base = nullptr;  // TesseraError
  PyObject* by_code[16] = {};
};
Classes& classes() {
  static Classes c;
  return c;
}

const char* code_name(tsr_code_t code) {
  static const char* names[] = {
      "OK",        "CANCELLED",      "UNKNOWN",           "INVALID_ARGUMENT",   "DEADLINE_EXCEEDED",
      "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION",
      "ABORTED",   "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",           "UNAVAILABLE",
      "DATA_LOSS"};
  return code >= 0 && code < 16 ? names[code] : "UNKNOWN";
}

// Sets the Python error indicator for (code, message).
void set_error(tsr_code_t code, const std::string& message) {
  PyObject* type = code >= 0 && code < 16 && classes().by_code[code] ? classes().by_code[code] : classes().base;
  PyObject* exc = PyObject_CallFunction(type, "s", message.c_str());
  if (exc != nullptr) {
    PyObject* name = PyUnicode_FromString(code_name(code));
    PyObject_SetAttrString(exc, "code", name);
    Py_XDECREF(name);
    PyErr_SetObject(type, exc);
    Py_DECREF(exc);
  }
}

}  // namespace

[[noreturn]] void raise(tsr_code_t code, const std::string& message) {
  set_error(code, message);
  throw pyb::error_already_set();
}

void check(tsr_status_t st) {
  if (st == nullptr) return;
  const tsr_api_t* api = tsr::api();
  tsr_code_t code = api->status_code(st);
  std::string msg = api->status_message(st);
  api->status_free(st);
  raise(code, msg);
}

void bind_errors(pyb::module_& m) {
  Classes& c = classes();
  c.base = PyErr_NewExceptionWithDoc("tessera.TesseraError",
                                     "A Tessera status that is not OK; `.code` names its canonical code.",
                                     PyExc_RuntimeError, nullptr);
  m.attr("TesseraError") = pyb::handle(c.base);
  struct Def {
    tsr_code_t code;
    const char* name;
    PyObject* builtin;
  };
  const Def defs[] = {{TSR_INVALID_ARGUMENT, "InvalidArgumentError", PyExc_ValueError},
                      {TSR_OUT_OF_RANGE, "OutOfRangeError", PyExc_IndexError},
                      {TSR_NOT_FOUND, "NotFoundError", PyExc_LookupError},
                      {TSR_RESOURCE_EXHAUSTED, "OutOfMemoryError", PyExc_MemoryError},
                      {TSR_UNIMPLEMENTED, "UnimplementedError", PyExc_NotImplementedError}};
  for (const Def& d : defs) {
    PyObject* bases = PyTuple_Pack(2, c.base, d.builtin);
    std::string qual = std::string("tessera.") + d.name;
    c.by_code[d.code] = PyErr_NewException(qual.c_str(), bases, nullptr);
    Py_DECREF(bases);
    m.attr(d.name) = pyb::handle(c.by_code[d.code]);
  }
  // C++ errors thrown by the SDK (tsr::Error) and std exceptions become the same classes.
  pyb::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tsr::Error& e) {
      set_error(e.code(), e.what());
    }
  });
}

}  // namespace tsr::py
