// The "sm100" plugin the loader sees: a thin shell linked against the CUDA runtime only, like the
// cuda plugin's (tessera/plugin_shell.hpp says why). It scores the machine (probe.cpp: 0 unless a
// compute capability 10.x GPU is present) and, only when the loader chooses it, loads the backend
// library sm100/tessera_sm100_backend.so beside this file, which links cuBLASLt.
#include "../probe.hpp"
#include "tessera/plugin_shell.hpp"

#ifndef TSR_SM100_PLUGIN_VERSION
#define TSR_SM100_PLUGIN_VERSION "0.0.0"
#endif

TSR_DEFINE_PLUGIN_SHELL("sm100", TSR_SM100_PLUGIN_VERSION,
                        "Tessera Blackwell (compute capability 10.x) kernels overriding generic cuda ones: block-scaled "
                        "MXFP8/NVFP4 and fp8 scaled_mm through cuBLASLt, quantize_mxfp8/quantize_nvfp4 for sm_100a",
                        tsr::sm100::score, "sm100/tessera_sm100_backend.so")
