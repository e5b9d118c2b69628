// The Python DLPack protocol over the ABI's zero-copy exchange (tensor.h, ABI 1.4):
// Tensor.__dlpack__ / __dlpack_device__ and tessera.from_dlpack, so torch.from_dlpack(t),
// np.from_dlpack(t) and tessera.from_dlpack(torch_or_numpy) share memory both ways.
//
// Capsules follow the protocol: "dltensor" (pre-1.0, what PyTorch 1.x and NumPy 1.2x speak) or
// "dltensor_versioned" (when the consumer passes max_version >= (1, 0)); a consumer renames the
// capsule to "used_..." and takes over the deleter, otherwise the capsule's destructor calls it.
// Imported tensors wrap the producer's deleter so that it runs with the GIL held, whichever
// thread drops the last reference.
#include "common.hpp"

namespace tsr::py {
namespace {

using tsr::Tensor;

template <class M>
struct GilWrapped {
  M managed;
  M* original;
  static void deleter(M* self) {
    auto* w = static_cast<GilWrapped*>(self->manager_ctx);
    if (w->original->deleter && Py_IsInitialized()) {
      PyGILState_STATE s = PyGILState_Ensure();
      w->original->deleter(w->original);
      PyGILState_Release(s);
    }
    delete w;
  }
};

template <class M>
void unused_capsule_destructor(PyObject* cap, const char* name) {
  if (!PyCapsule_IsValid(cap, name)) return;  // consumed (renamed "used_...")
  auto* m = static_cast<M*>(PyCapsule_GetPointer(cap, name));
  if (m && m->deleter) m->deleter(m);
}

// Ordering for asynchronous devices: the consumer passes the stream it will read on; without a
// way to name that stream through the ABI, the producer waits for its own work to finish
// (stronger than the protocol asks, never weaker).
void order_for_consumer(const Tensor& t, const pyb::object& stream) {
  if (t.device().d.type == TSR_DEVICE_TYPE_CPU) return;
  if (!stream.is_none() && pyb::isinstance<pyb::int_>(stream) && stream.cast<int64_t>() == -1) return;
  check(tsr::api()->device_synchronize(tsr::runtime(), t.device().d));
}

pyb::object to_capsule(const Tensor& t, const pyb::object& stream, const pyb::object& max_version) {
  order_for_consumer(t, stream);
  bool versioned = false;
  if (!max_version.is_none()) versioned = max_version.cast<pyb::tuple>()[0].cast<int64_t>() >= 1;
  if (versioned) {
    DLManagedTensorVersioned* m = nullptr;
    check(tsr::api()->tensor_to_dlpack(t.get(), &m));
    PyObject* cap = PyCapsule_New(m, "dltensor_versioned", [](PyObject* c) {
      unused_capsule_destructor<DLManagedTensorVersioned>(c, "dltensor_versioned");
    });
    if (!cap) {
      m->deleter(m);
      throw pyb::error_already_set();
    }
    return pyb::reinterpret_steal<pyb::object>(cap);
  }
  DLManagedTensor* m = nullptr;
  check(tsr::api()->tensor_to_dlpack_legacy(t.get(), &m));
  PyObject* cap =
      PyCapsule_New(m, "dltensor", [](PyObject* c) { unused_capsule_destructor<DLManagedTensor>(c, "dltensor"); });
  if (!cap) {
    m->deleter(m);
    throw pyb::error_already_set();
  }
  return pyb::reinterpret_steal<pyb::object>(cap);
}

template <class M>
Tensor import_capsule(PyObject* cap, const char* name, const char* used,
                      tsr_status_t (*tsr_api_t::*entry)(tsr_runtime_t*, M*, tsr_tensor_t**)) {
  auto* original = static_cast<M*>(PyCapsule_GetPointer(cap, name));
  if (!original) throw pyb::error_already_set();
  auto* w = new GilWrapped<M>{*original, original};
  w->managed.manager_ctx = w;
  w->managed.deleter = &GilWrapped<M>::deleter;
  tsr_tensor_t* out = nullptr;
  tsr_status_t st = (tsr::api()->*entry)(tsr::runtime(), &w->managed, &out);
  if (st) {
    delete w;  // the capsule still owns the producer's tensor
    check(st);
  }
  PyCapsule_SetName(cap, used);
  return Tensor::adopt(out);
}

Tensor from_capsule(const pyb::object& capsule) {
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, "dltensor_versioned"))
    return import_capsule<DLManagedTensorVersioned>(cap, "dltensor_versioned", "used_dltensor_versioned",
                                                    &tsr_api_t::tensor_from_dlpack);
  if (PyCapsule_IsValid(cap, "dltensor"))
    return import_capsule<DLManagedTensor>(cap, "dltensor", "used_dltensor", &tsr_api_t::tensor_from_dlpack_legacy);
  PyErr_Clear();
  raise(TSR_INVALID_ARGUMENT,
        "from_dlpack: expected an object with __dlpack__ or an unused DLPack capsule "
        "('dltensor' or 'dltensor_versioned'; a capsule can be consumed once)");
}

}  // namespace

void bind_dlpack(pyb::module_& m) {
  auto tensor = pyb::reinterpret_borrow<pyb::object>(m.attr("Tensor"));
  pyb::cpp_function dlpack(
      [](const Tensor& t, const pyb::object& stream, const pyb::object& max_version, const pyb::object& dl_device,
         const pyb::object& copy) {
        if (!copy.is_none() && copy.cast<bool>())
          raise(TSR_UNIMPLEMENTED, "__dlpack__(copy=True) is not supported; call .clone() first");
        (void)dl_device;
        return to_capsule(t, stream, max_version);
      },
      pyb::name("__dlpack__"), pyb::is_method(tensor), pyb::sibling(pyb::getattr(tensor, "__dlpack__", pyb::none())),
      pyb::arg("stream") = pyb::none(), pyb::kw_only(), pyb::arg("max_version") = pyb::none(),
      pyb::arg("dl_device") = pyb::none(), pyb::arg("copy") = pyb::none());
  tensor.attr("__dlpack__") = dlpack;
  pyb::cpp_function device(
      [](const Tensor& t) {
        const char* type = tsr::api()->device_type_name(tsr::runtime(), t.device().d.type);
        std::string name = type ? type : "";
        if (name == "cpu") return pyb::make_tuple(static_cast<int>(kDLCPU), 0);
        if (name == "cuda") return pyb::make_tuple(static_cast<int>(kDLCUDA), t.device().d.index);
        raise(TSR_UNIMPLEMENTED, "DLPack has no device for " + name);
      },
      pyb::name("__dlpack_device__"), pyb::is_method(tensor));
  tensor.attr("__dlpack_device__") = device;

  m.def(
      "from_dlpack",
      [](const pyb::object& obj) {
        if (PyCapsule_CheckExact(obj.ptr())) return from_capsule(obj);
        if (!pyb::hasattr(obj, "__dlpack__"))
          raise(TSR_INVALID_ARGUMENT,
                "from_dlpack: " + std::string(pyb::str(obj.get_type().attr("__name__"))) + " has no __dlpack__");
        pyb::object cap;
        try {
          cap = obj.attr("__dlpack__")(pyb::arg("max_version") = pyb::make_tuple(1, 0));
        } catch (const pyb::error_already_set& e) {
          if (!e.matches(PyExc_TypeError)) throw;
          cap = obj.attr("__dlpack__")();  // a producer before the 2023 protocol (PyTorch 1.x, NumPy 1.2x)
        }
        return from_capsule(cap);
      },
      pyb::arg("obj"),
      "A tensor sharing the memory of `obj` (anything with __dlpack__, or a DLPack capsule): no copy.");
}

}  // namespace tsr::py
