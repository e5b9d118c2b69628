// Shared by the Python binding's sources: pybind11, the SDK (over the C ABI only), and the
// conversions every part needs (status -> Python exception, dtype and device values).
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>

#include "tessera/autograd.hpp"
#include "tessera/tessera.hpp"

namespace tsr::py {

namespace pyb = pybind11;

// Raises the Python exception for a Tessera error code (errors.cpp): ValueError, IndexError,
// MemoryError, NotImplementedError, LookupError or RuntimeError subclasses of TesseraError.
[[noreturn]] void raise(tsr_code_t code, const std::string& message);
// Throws (as above) when st is not OK; frees st.
void check(tsr_status_t st);
void bind_errors(pyb::module_& m);

// A dtype as Python sees it: tessera.float32 etc. (a small immutable class, see dtypes.cpp).
struct DType {
  tsr_dtype_t code;
};
// tessera.float32, 'float32', torch-style 'torch.float32' strings, and DType objects.
tsr_dtype_t to_dtype(const pyb::handle& h);
pyb::object dtype_object(tsr_dtype_t d);
void bind_dtypes(pyb::module_& m);

// A device as Python sees it ('cpu:0'); strings and device objects are accepted.
struct PyDevice {
  tsr_device_t d;
};
tsr_device_t to_device(const pyb::handle& h);
pyb::object device_object(tsr_device_t d);
std::string device_text(tsr_device_t d);
void bind_devices(pyb::module_& m);

// Python scalars, sequences, numpy arrays and Tensors to a Tensor (tensor.cpp).
tsr::Tensor as_tensor(const pyb::handle& h, bool wrap_scalars);

void bind_tensor(pyb::module_& m);
void bind_ops(pyb::module_& m);
void bind_dlpack(pyb::module_& m);
void bind_runtime(pyb::module_& m);

}  // namespace tsr::py
