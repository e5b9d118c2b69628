// Tessera SDK: the C++ frontend's neural-network library in one include (torch.nn): Module and
// StateDict, init functions, and every layer. See docs/frontend/nn.md and
// docs/frontend/sequence-layers.md.
#pragma once

#include "tessera/nn/module.hpp"
#include "tessera/nn/state_dict.hpp"
#include "tessera/nn/init.hpp"
#include "tessera/nn/activation.hpp"
#include "tessera/nn/batchnorm.hpp"
#include "tessera/nn/container.hpp"
#include "tessera/nn/conv.hpp"
#include "tessera/nn/dropout.hpp"
#include "tessera/nn/embedding.hpp"
#include "tessera/nn/flatten.hpp"
#include "tessera/nn/linear.hpp"
#include "tessera/nn/normalization.hpp"
#include "tessera/nn/pooling.hpp"

// Sequence layers: MultiheadAttention, TransformerEncoderLayer/TransformerEncoder, LSTM, GRU.
#include "tessera/nn/attention.hpp"
#include "tessera/nn/rnn.hpp"
#include "tessera/nn/transformer.hpp"
