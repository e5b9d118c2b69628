// tessera._C: the compiled half of the Python package (tessera/__init__.py is the other).
#include "common.hpp"

PYBIND11_MODULE(_C, m) {
  m.doc() = "Tessera's C ABI for Python (the compiled part of the tessera package).";
  tsr::py::bind_errors(m);
  tsr::py::bind_dtypes(m);
  tsr::py::bind_devices(m);
  tsr::py::bind_tensor(m);
  tsr::py::bind_ops(m);
  tsr::py::bind_dlpack(m);
  tsr::py::bind_runtime(m);
}
