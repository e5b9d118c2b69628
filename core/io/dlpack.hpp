// DLPack exchange (ABI 1.4, tensor.h): zero-copy export of a tensor as a DLManagedTensor
// (versioned or legacy) that holds a reference to it, and import of one as a tensor whose
// storage calls the producer's deleter when its last view dies (over tensor_from_blob).
#pragma once

#include "tessera/api.h"

namespace tsr::core {

tsr_status_t tensor_to_dlpack(tsr_tensor_t* t, DLManagedTensorVersioned** out);
tsr_status_t tensor_to_dlpack_legacy(tsr_tensor_t* t, DLManagedTensor** out);
tsr_status_t tensor_from_dlpack(tsr_runtime_t* rt, DLManagedTensorVersioned* src, tsr_tensor_t** out);
tsr_status_t tensor_from_dlpack_legacy(tsr_runtime_t* rt, DLManagedTensor* src, tsr_tensor_t** out);

}  // namespace tsr::core
