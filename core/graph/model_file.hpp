// Model files (one safetensors file: weights + the graph's text in its metadata) and weight
// binding. Every entry returns a status and never throws.
#pragma once

#include <memory>

#include "graph/graph.hpp"

namespace tsr::core::graph {

// Gives the param or stored const `name` its tensor (one new reference; the old one is
// released). It must match the declared dtype and shape and be on the graph's device.
tsr_status_t bind(Graph& g, const std::string& name, Tensor* weight);

// Writes the graph and its weights to `path`; every weight must be bound.
tsr_status_t save(const Graph& g, const char* path);

// Reads a model file; with `device`, its weights are loaded there and its device arguments
// moved there. Validates the text, every weight's dtype and shape, and that the file holds no
// tensor the graph does not use.
tsr_status_t load(Runtime* rt, const char* path, const tsr_device_t* device, std::unique_ptr<tsr_model_s>* out);

}  // namespace tsr::core::graph
