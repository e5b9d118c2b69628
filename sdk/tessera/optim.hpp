// Tessera SDK: optimizers, learning-rate schedulers and gradient clipping (torch.optim and
// torch.nn.utils.clip_grad_* in C++). See each header for ownership, errors and thread-safety;
// docs/frontend/optim.md for the formulas and the state_dict layout.
#pragma once

#include "tessera/optim/optimizer.hpp"
#include "tessera/optim/sgd.hpp"
#include "tessera/optim/adam.hpp"
#include "tessera/optim/rmsprop.hpp"
#include "tessera/optim/adagrad.hpp"
#include "tessera/optim/clip_grad.hpp"
#include "tessera/optim/lr_scheduler.hpp"
