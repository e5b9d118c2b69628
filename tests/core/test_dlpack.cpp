// DLPack exchange through the C table (ABI 1.4): zero-copy export and import of every dtype,
// strided and empty tensors, the deleter contract on both sides, and the refusals (which leave
// the caller owning what it passed). Also op_num_args / op_arg, the schema as data.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

using tsr::Tensor;

namespace {

const tsr_api_t* api() { return tsr::api(); }

void expect_status(tsr_status_t st, tsr_code_t code, const std::string& needle) {
  ASSERT_NE(st, nullptr) << "expected " << needle << " to be refused";
  EXPECT_EQ(api()->status_code(st), code) << api()->status_message(st);
  EXPECT_NE(std::string(api()->status_message(st)).find(needle), std::string::npos) << api()->status_message(st);
  api()->status_free(st);
}

// A producer of host memory that counts its deleter calls (the foreign side of an import).
struct Producer {
  std::vector<float> data;
  std::vector<int64_t> shape, strides;
  DLManagedTensorVersioned managed{};
  DLManagedTensor legacy{};
  std::atomic<int> deleted{0};

  Producer(std::vector<float> values, std::vector<int64_t> shape_, std::vector<int64_t> strides_ = {})
      : data(std::move(values)), shape(std::move(shape_)), strides(std::move(strides_)) {
    DLTensor dl{};
    dl.data = data.data();
    dl.device = DLDevice{kDLCPU, 0};
    dl.ndim = static_cast<int32_t>(shape.size());
    dl.dtype = DLDataType{kDLFloat, 32, 1};
    dl.shape = shape.data();
    dl.strides = strides.empty() ? nullptr : strides.data();
    managed.version = DLPackVersion{1, 0};
    managed.manager_ctx = this;
    managed.deleter = [](DLManagedTensorVersioned* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
    managed.dl_tensor = dl;
    legacy.dl_tensor = dl;
    legacy.manager_ctx = this;
    legacy.deleter = [](DLManagedTensor* self) { ++static_cast<Producer*>(self->manager_ctx)->deleted; };
  }
};

Tensor adopt(tsr_tensor_t* t) { return Tensor::adopt(t); }

// Same shape and the same values (compared in float64, exact for every dtype here).
bool same(const Tensor& a, const Tensor& b) {
  return a.sizes() == b.sizes() &&
         a.to(TSR_F64).contiguous().to_vector<double>() == b.to(TSR_F64).contiguous().to_vector<double>();
}

}  // namespace

TEST(DLPack, ExportDescribesTheTensorAndHoldsItAlive) {
  Tensor x = tsr::randn({3, 5}).to(TSR_F32);
  Tensor v = x.t().slice(0, 1, 5);  // [4, 3], strides [1, 5], offset 1
  DLManagedTensorVersioned* m = nullptr;
  ASSERT_EQ(api()->tensor_to_dlpack(v.get(), &m), nullptr);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->version.major, 1u);
  EXPECT_EQ(m->flags, 0u);
  const DLTensor& dl = m->dl_tensor;
  EXPECT_EQ(dl.ndim, 2);
  EXPECT_EQ(dl.shape[0], 4);
  EXPECT_EQ(dl.shape[1], 3);
  EXPECT_EQ(dl.strides[0], 1);
  EXPECT_EQ(dl.strides[1], 5);
  EXPECT_EQ(dl.byte_offset, 0u);
  EXPECT_EQ(dl.data, v.data_ptr());
  EXPECT_EQ(dl.device.device_type, kDLCPU);
  EXPECT_EQ(dl.dtype.code, kDLFloat);
  EXPECT_EQ(dl.dtype.bits, 32);
  EXPECT_EQ(dl.dtype.lanes, 1);
  std::vector<float> expected = v.contiguous().to_vector<float>();
  x = Tensor();
  v = Tensor();  // the capsule's reference keeps the memory
  const float* p = static_cast<const float*>(dl.data);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(p[i * dl.strides[0] + j * dl.strides[1]], expected[size_t(i * 3 + j)]);
  m->deleter(m);
}

TEST(DLPack, EveryDtypeRoundTripsWithoutACopy) {
  const std::vector<tsr_dtype_t> dtypes = {TSR_BOOL, TSR_U8,  TSR_I8,   TSR_I16,       TSR_I32,     TSR_I64,
                                           TSR_F16,  TSR_BF16, TSR_F32, TSR_F64, TSR_F8_E4M3FN, TSR_F8_E5M2,
                                           TSR_F8_E8M0FNU};
  for (tsr_dtype_t dt : dtypes) {
    SCOPED_TRACE(tsr::dtype_name(dt));
    Tensor x = (tsr::randn({4, 6}) * 3.0).to(dt);
    Tensor v = x.slice(1, 1, 5, 2);  // strided
    for (bool versioned : {true, false}) {
      tsr_tensor_t* back = nullptr;
      if (versioned) {
        DLManagedTensorVersioned* m = nullptr;
        ASSERT_EQ(api()->tensor_to_dlpack(v.get(), &m), nullptr);
        ASSERT_EQ(api()->tensor_from_dlpack(tsr::runtime(), m, &back), nullptr);
      } else {
        DLManagedTensor* m = nullptr;
        ASSERT_EQ(api()->tensor_to_dlpack_legacy(v.get(), &m), nullptr);
        ASSERT_EQ(api()->tensor_from_dlpack_legacy(tsr::runtime(), m, &back), nullptr);
      }
      Tensor b = adopt(back);
      EXPECT_EQ(b.dtype(), dt);
      EXPECT_EQ(b.sizes(), v.sizes());
      EXPECT_EQ(b.strides(), v.strides());
      EXPECT_EQ(b.data_ptr(), v.data_ptr());
      EXPECT_TRUE(same(b, v));
      // A write through the import is seen by the original: the same memory.
      b.fill_(1.0);
      EXPECT_TRUE(same(v, tsr::ones(v.sizes(), dt)));
    }
  }
}

TEST(DLPack, EmptyZeroDimAndVirtualDevices) {
  for (Tensor x : {tsr::zeros({0, 3}), tsr::full({}, 2.5, TSR_F64)}) {
    DLManagedTensor* m = nullptr;
    ASSERT_EQ(api()->tensor_to_dlpack_legacy(x.get(), &m), nullptr);
    EXPECT_EQ(m->dl_tensor.ndim, x.dim());
    tsr_tensor_t* back = nullptr;
    ASSERT_EQ(api()->tensor_from_dlpack_legacy(tsr::runtime(), m, &back), nullptr);
    Tensor b = adopt(back);
    EXPECT_EQ(b.sizes(), x.sizes());
    EXPECT_TRUE(same(b, x));
  }
  // Every virtual cpu device is host memory: DLPack's cpu device 0, imported on cpu:0.
  if (api()->device_count(tsr::runtime(), TSR_DEVICE_TYPE_CPU) > 1) {
    Tensor x = tsr::randn({5}).to(tsr::Device("cpu:1"));
    DLManagedTensorVersioned* m = nullptr;
    ASSERT_EQ(api()->tensor_to_dlpack(x.get(), &m), nullptr);
    EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
    EXPECT_EQ(m->dl_tensor.device.device_id, 0);
    m->deleter(m);
  }
}

TEST(DLPack, ImportCallsTheProducersDeleterOnceWhenTheLastViewDies) {
  for (bool versioned : {true, false}) {
    Producer p({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 2}, {4, 2});  // every other column
    tsr_tensor_t* raw = nullptr;
    ASSERT_EQ(versioned ? api()->tensor_from_dlpack(tsr::runtime(), &p.managed, &raw)
                        : api()->tensor_from_dlpack_legacy(tsr::runtime(), &p.legacy, &raw),
              nullptr);
    Tensor t = adopt(raw);
    EXPECT_EQ(t.data_ptr(), static_cast<void*>(p.data.data()));
    EXPECT_EQ(t.contiguous().to_vector<float>(), (std::vector<float>{0, 2, 4, 6, 8, 10}));
    Tensor view = t.select(1, 1);
    t = Tensor();
    EXPECT_EQ(p.deleted.load(), 0) << "a view still uses the memory";
    EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{2, 6, 10}));
    view = Tensor();
    EXPECT_EQ(p.deleted.load(), 1);
  }
  // byte_offset is honoured
  Producer q({1, 2, 3, 4}, {2});
  q.managed.dl_tensor.byte_offset = 2 * sizeof(float);
  tsr_tensor_t* raw = nullptr;
  ASSERT_EQ(api()->tensor_from_dlpack(tsr::runtime(), &q.managed, &raw), nullptr);
  EXPECT_EQ(adopt(raw).to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(q.deleted.load(), 1);
}

TEST(DLPack, RefusalsNameTheFieldAndLeaveOwnershipWithTheCaller) {
  tsr_runtime_t* rt = tsr::runtime();
  tsr_tensor_t* out = nullptr;
  {
    Producer p({1, 2}, {2});
    p.managed.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "read-only");
    p.managed.flags = 0;
    p.managed.version.major = 2;
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "major version 2");
    p.managed.version.major = 1;
    p.managed.dl_tensor.dtype.lanes = 4;
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "lanes 4");
    p.managed.dl_tensor.dtype = DLDataType{kDLComplex, 64, 1};
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "dtype (code 5");
    p.managed.dl_tensor.dtype = DLDataType{kDLUInt, 16, 1};
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "bits 16");
    p.managed.dl_tensor.dtype = DLDataType{kDLFloat8_e4m3fn, 16, 1};  // float8 must say 8 bits
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "bits 16");
    p.managed.dl_tensor.dtype = DLDataType{kDLFloat4_e2m1fn, 4, 1};  // DLPack's fp4 counts values, ours pairs
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "code 17");
    p.managed.dl_tensor.dtype = DLDataType{kDLFloat, 32, 1};
    p.managed.dl_tensor.device = DLDevice{kDLMetal, 0};
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "device type 8");
    p.managed.dl_tensor.device = DLDevice{kDLCPU, 0};
    p.managed.dl_tensor.ndim = 99;
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "ndim 99");
    p.managed.dl_tensor.ndim = 1;
    int64_t neg = -1;
    p.managed.dl_tensor.strides = &neg;
    expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_INVALID_ARGUMENT, "negative stride");
    p.managed.dl_tensor.strides = nullptr;
    expect_status(api()->tensor_from_dlpack(nullptr, &p.managed, &out), TSR_INVALID_ARGUMENT, "required");
    expect_status(api()->tensor_from_dlpack(rt, nullptr, &out), TSR_INVALID_ARGUMENT, "required");
    int32_t cuda = 0;
    tsr_status_t no_cuda = api()->device_type_lookup(rt, "cuda", &cuda);
    if (no_cuda) {
      api()->status_free(no_cuda);
      p.managed.dl_tensor.device = DLDevice{kDLCUDA, 0};
      expect_status(api()->tensor_from_dlpack(rt, &p.managed, &out), TSR_NOT_FOUND, "'cuda'");
    }
    EXPECT_EQ(out, nullptr);
    EXPECT_EQ(p.deleted.load(), 0) << "a refused import must not call the producer's deleter";
  }
  expect_status(api()->tensor_to_dlpack(nullptr, nullptr), TSR_INVALID_ARGUMENT, "required");
  {  // float4_e2m1fn_x2 has no DLPack dtype (DLPack's fp4 is one value per element)
    DLManagedTensorVersioned* mv = nullptr;
    Tensor packed = tsr::empty({2, 3}, TSR_F4_E2M1FN_X2);
    expect_status(api()->tensor_to_dlpack(packed.get(), &mv), TSR_UNIMPLEMENTED, "float4_e2m1fn_x2");
    EXPECT_EQ(mv, nullptr);
  }
  DLManagedTensor* m = nullptr;
  expect_status(api()->tensor_to_dlpack_legacy(tsr::ones({2}).get(), nullptr), TSR_INVALID_ARGUMENT, "required");
  EXPECT_EQ(m, nullptr);
}

TEST(OpArgs, SchemaArgumentsAsData) {
  tsr_op_t* op = nullptr;
  ASSERT_EQ(api()->op_find(tsr::runtime(), "sum", &op), nullptr);
  ASSERT_EQ(api()->op_num_args(op), 4u);
  tsr_op_arg_t a{};
  ASSERT_EQ(api()->op_arg(op, 0, &a), nullptr);
  EXPECT_EQ(a.struct_size, sizeof(tsr_op_arg_t));
  EXPECT_STREQ(a.name, "self");
  EXPECT_EQ(a.kind, TSR_ARG_TENSOR);
  EXPECT_EQ(a.has_default, 0);
  ASSERT_EQ(api()->op_arg(op, 1, &a), nullptr);
  EXPECT_STREQ(a.name, "dim");
  EXPECT_EQ(a.kind, TSR_ARG_INT_LIST);
  EXPECT_EQ(a.optional, 1);
  EXPECT_EQ(a.has_default, 1);
  EXPECT_EQ(a.default_value.tag, TSR_VALUE_NONE);
  ASSERT_EQ(api()->op_arg(op, 2, &a), nullptr);
  EXPECT_STREQ(a.name, "keepdim");
  EXPECT_EQ(a.kind, TSR_ARG_BOOL);
  EXPECT_EQ(a.default_value.tag, TSR_VALUE_BOOL);
  EXPECT_EQ(a.default_value.u.b, 0);
  ASSERT_EQ(api()->op_arg(op, 3, &a), nullptr);
  EXPECT_EQ(a.kind, TSR_ARG_DTYPE);
  expect_status(api()->op_arg(op, 4, &a), TSR_OUT_OF_RANGE, "sum has 4 arguments");
  expect_status(api()->op_arg(nullptr, 0, &a), TSR_INVALID_ARGUMENT, "op is NULL");
  expect_status(api()->op_arg(op, 0, nullptr), TSR_INVALID_ARGUMENT, "out is NULL");

  ASSERT_EQ(api()->op_find(tsr::runtime(), "add", &op), nullptr);
  ASSERT_EQ(api()->op_arg(op, 2, &a), nullptr);
  EXPECT_STREQ(a.name, "alpha");
  EXPECT_EQ(a.kind, TSR_ARG_SCALAR);
  EXPECT_EQ(a.default_value.tag, TSR_VALUE_INT);
  EXPECT_EQ(a.default_value.u.i, 1);
  ASSERT_EQ(api()->op_find(tsr::runtime(), "gelu", &op), nullptr);
  ASSERT_EQ(api()->op_arg(op, 1, &a), nullptr);
  EXPECT_EQ(a.kind, TSR_ARG_STRING);
  EXPECT_STREQ(a.default_value.u.str, "none");
  ASSERT_EQ(api()->op_find(tsr::runtime(), "add_", &op), nullptr);
  ASSERT_EQ(api()->op_arg(op, 0, &a), nullptr);
  EXPECT_EQ(a.is_mutable, 1);
  // Every op's arguments are readable, and defaults have the kinds the ABI lists.
  for (size_t i = 0; i < api()->op_count(tsr::runtime()); ++i) {
    tsr_op_t* o = api()->op_at(tsr::runtime(), i);
    for (size_t k = 0; k < api()->op_num_args(o); ++k) {
      ASSERT_EQ(api()->op_arg(o, k, &a), nullptr) << api()->op_name(o);
      EXPECT_TRUE(a.kind >= TSR_ARG_TENSOR && a.kind <= TSR_ARG_TENSOR_LIST) << api()->op_name(o);
      if (a.has_default && a.default_value.tag == TSR_VALUE_INT_LIST)
        EXPECT_TRUE(a.default_value.u.ints.len == 0 || a.default_value.u.ints.data != nullptr);
    }
  }
}
