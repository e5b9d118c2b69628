// View operations behind the tensor_* entries of the api table.
#pragma once

#include "tensor/tensor.hpp"

namespace tsr::core {

tsr_status_t view_as_strided(Tensor* t, int ndim, const int64_t* sizes, const int64_t* strides, int64_t offset,
                             Tensor** out);
tsr_status_t view_shape(Tensor* t, int ndim, const int64_t* sizes, Tensor** out);
tsr_status_t reshape(Tensor* t, int ndim, const int64_t* sizes, Tensor** out);
tsr_status_t permute(Tensor* t, int ndim, const int64_t* dims, Tensor** out);
tsr_status_t transpose(Tensor* t, int64_t d0, int64_t d1, Tensor** out);
tsr_status_t expand(Tensor* t, int ndim, const int64_t* sizes, Tensor** out);
tsr_status_t slice(Tensor* t, int64_t dim, int64_t start, int64_t end, int64_t step, Tensor** out);
tsr_status_t narrow(Tensor* t, int64_t dim, int64_t start, int64_t length, Tensor** out);
tsr_status_t select(Tensor* t, int64_t dim, int64_t index, Tensor** out);
tsr_status_t squeeze(Tensor* t, int64_t dim, Tensor** out);
tsr_status_t unsqueeze(Tensor* t, int64_t dim, Tensor** out);

}  // namespace tsr::core
