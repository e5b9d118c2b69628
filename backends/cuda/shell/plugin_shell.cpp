// The "cuda" plugin the loader sees: a thin shell linked against the CUDA runtime only
// (tessera/plugin_shell.hpp says why). It scores the machine with cudaGetDeviceCount (probe.cpp)
// and, only when there is a device and the loader chooses the plugin, loads the backend library
// cuda/tessera_cuda_backend.so beside this file (cuBLAS, cuBLASLt, cuSOLVER, cuDNN: 160 ms of
// loading on the development machine, paid only by processes that use a GPU).
#include "../probe.hpp"
#include "tessera/plugin_shell.hpp"

#ifndef TSR_CUDA_PLUGIN_VERSION
#define TSR_CUDA_PLUGIN_VERSION "0.0.0"
#endif

TSR_DEFINE_PLUGIN_SHELL("cuda", TSR_CUDA_PLUGIN_VERSION,
                        "Tessera CUDA backend: CUDA kernels, cuBLAS/cuBLASLt, cuDNN, streams, events, graphs",
                        tsr::cuda::score, "cuda/tessera_cuda_backend.so")
