// Tessera SDK: data loading (torch.utils.data in C++). Includes every data header:
//   tessera/data/dataset.hpp         Dataset, Example, Subset
//   tessera/data/tensor_dataset.hpp  TensorDataset
//   tessera/data/sampler.hpp         shuffled_indices, BatchSampler (the seeded order)
//   tessera/data/pin_memory.hpp      find_pinned_host, pin (the "tessera.pinned_host" extension)
//   tessera/data/dataloader.hpp      DataLoader, DataLoaderOptions, DataLoaderState
// Ownership, errors and thread-safety are described in each header; docs/frontend/data.md is
// the guide.
#pragma once

#include "tessera/data/dataset.hpp"
#include "tessera/data/tensor_dataset.hpp"
#include "tessera/data/sampler.hpp"
#include "tessera/data/distributed_sampler.hpp"
#include "tessera/data/pin_memory.hpp"
#include "tessera/data/dataloader.hpp"
