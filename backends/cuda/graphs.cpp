// "tessera.graphs.cuda": CUDA graph capture and replay (see abi/tessera/ext_graphs.h).
//
// capture_begin: the graph's private memory pool (api->memory_pool_create, or a shared one),
// memory_pool_begin for the stream, then cudaStreamBeginCapture in thread-local mode (only the
// capturing thread is barred from unsafe CUDA calls; other threads keep working). While the
// capture runs, synchronizing calls on the device are refused (errors.cpp), and a refusal or a
// failed launch made by the capturing thread fails the capture: capture_end reports it and makes
// no graph. capture_end: cudaStreamEndCapture + cudaGraphInstantiate + memory_pool_end.
// graph_replay: cudaGraphLaunch, then an event marks the end of the last replay. graph_release:
// the executable graph may be destroyed with replays in flight (CUDA frees it when they finish),
// but the pool's memory must not return to the cache before then: the release waits for the
// last replay, or, when a capture is running on the device (no waiting allowed), is deferred to
// the next synchronizing call or graph call outside a capture.
#include <memory>

#include "device_internal.hpp"
#include "tessera/ext_graphs.h"

struct tsr_graph_s {
  const tsr_api_t* api = nullptr;
  tsr_runtime_t* runtime = nullptr;
  tsr_device_t device{};
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  uint64_t pool = 0;
  // Claims on the pool the graph drops on release: the core counts one per memory_pool_create
  // and one per memory_pool_begin (pool_end keeps it), so 2 for a pool the capture made, 1 for
  // a shared one.
  int claims = 0;
  int64_t nodes = 0;
  cudaEvent_t done = nullptr;  // recorded after each replay
};

namespace tsr::cuda {
namespace {

struct CaptureInfo {
  tsr_runtime_t* runtime;
  int device;
  cudaStream_t stream;
  uint64_t pool;
  int claims;
};

std::mutex g_mu;
std::vector<CaptureInfo>* g_captures = nullptr;   // captures in flight (leaked)
std::vector<tsr_graph_s*>* g_deferred = nullptr;  // releases waiting for no capture (leaked)

const tsr_api_t* api_with_pools(const char* what) {
  const tsr_api_t* api = core_api();
  if (!api || !TSR_HAS_FIELD(api, tsr_api_t, memory_pool_release) || !api->memory_pool_create)
    fail(TSR_UNIMPLEMENTED, what, ": the core lacks memory pools (ABI 1.2)");
  return api;
}

int graph_device(tsr_runtime_t* runtime, tsr_device_t device, const char* what) {
  const tsr_api_t* api = core_api();
  const char* name = api ? api->device_type_name(runtime, device.type) : nullptr;
  if (!name || std::string(name) != "cuda") fail(TSR_INVALID_ARGUMENT, what, ": device is not a cuda device");
  check_device_index(device.index, what);
  return device.index;
}

void release_pool(tsr_graph_s* g) {
  for (; g->claims > 0; --g->claims)
    if (tsr_status_t st = g->api->memory_pool_release(g->runtime, g->device, g->pool)) g->api->status_free(st);
}

// Waits for the last replay, then frees everything. Not during a capture of the device.
void destroy_graph(tsr_graph_s* g) {
  {
    DeviceGuard guard(g->device.index);
    if (g->done) {
      if (cudaEventSynchronize(g->done) != cudaSuccess) (void)cudaGetLastError();
      (void)cudaEventDestroy(g->done);
    }
    if (g->exec) (void)cudaGraphExecDestroy(g->exec);
    if (g->graph) (void)cudaGraphDestroy(g->graph);
    (void)cudaGetLastError();
  }
  release_pool(g);
  delete g;
}

tsr_status_t capture_begin(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream, uint64_t pool) {
  return guarded("cuda graph capture_begin", [&] {
    const int dev = graph_device(runtime, device, "capture_begin");
    if (!stream)
      fail(TSR_INVALID_ARGUMENT, "cuda:", dev,
           " capture_begin: the default stream cannot capture; create a stream and make it current");
    const cudaStream_t s = as_cuda(stream);
    if (stream_is_capturing(dev, s))
      fail(TSR_FAILED_PRECONDITION, "cuda:", dev, " capture_begin: the stream is already capturing");
    const tsr_api_t* api = api_with_pools("capture_begin");
    graphs_process_deferred();
    DeviceGuard guard(dev);
    // Work enqueued before the capture must not be captured, nor still run on memory the pool
    // may hand out: CUDA requires nothing special here, the stream orders it.
    bool owns = false;
    if (pool == 0) {
      check(api, api->memory_pool_create(runtime, device, &pool));
      owns = true;
    }
    auto undo_pool = [&] {
      if (owns) {
        if (tsr_status_t st = api->memory_pool_release(runtime, device, pool)) api->status_free(st);
      }
    };
    if (tsr_status_t st = api->memory_pool_begin(runtime, device, pool, stream)) {
      undo_pool();
      check(api, st);
    }
    const cudaError_t err = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    if (err != cudaSuccess) {
      if (tsr_status_t st = api->memory_pool_end(runtime, device, pool, stream)) api->status_free(st);
      if (tsr_status_t st = api->memory_pool_release(runtime, device, pool)) api->status_free(st);  // begin's claim
      undo_pool();
      throw_cuda_error(err, "capture_begin", "cudaStreamBeginCapture", dev);
    }
    {
      std::lock_guard<std::mutex> lock(g_mu);
      if (!g_captures) g_captures = new std::vector<CaptureInfo>();
      g_captures->push_back(CaptureInfo{runtime, dev, s, pool, owns ? 2 : 1});
    }
    capture_started(dev, s);
  });
}

tsr_status_t capture_end(tsr_runtime_t* runtime, tsr_device_t device, tsr_stream_t* stream, tsr_graph_t** out) {
  return guarded("cuda graph capture_end", [&] {
    const int dev = graph_device(runtime, device, "capture_end");
    const cudaStream_t s = as_cuda(stream);
    CaptureInfo info{};
    bool found = false;
    {
      std::lock_guard<std::mutex> lock(g_mu);
      if (g_captures) {
        for (auto it = g_captures->begin(); it != g_captures->end(); ++it) {
          if (it->device == dev && it->stream == s && it->runtime == runtime) {
            info = *it;
            g_captures->erase(it);
            found = true;
            break;
          }
        }
      }
    }
    if (!found)
      fail(TSR_FAILED_PRECONDITION, "cuda:", dev,
           " capture_end: the stream is not capturing (call capture_begin first)");
    const tsr_api_t* api = core_api();
    DeviceGuard guard(dev);
    cudaGraph_t graph = nullptr;
    const cudaError_t err = cudaStreamEndCapture(s, &graph);
    const std::string failure = capture_finished(dev, s);
    if (tsr_status_t st = api->memory_pool_end(runtime, device, info.pool, stream)) api->status_free(st);

    std::unique_ptr<tsr_graph_s> g(new tsr_graph_s());
    g->api = api;
    g->runtime = runtime;
    g->device = device;
    g->graph = graph;
    g->pool = info.pool;
    g->claims = info.claims;
    auto give_up = [&](tsr_code_t code, const std::string& msg) {
      if (g->graph) (void)cudaGraphDestroy(g->graph);
      g->graph = nullptr;
      (void)cudaGetLastError();
      release_pool(g.get());
      fail(code, msg);
    };
    if (!failure.empty())
      give_up(TSR_FAILED_PRECONDITION, str_cat("cuda:", dev, " capture_end: the capture failed: ", failure));
    if (err != cudaSuccess || !graph)
      give_up(is_async_error(err) ? TSR_INTERNAL : TSR_FAILED_PRECONDITION,
              str_cat("cuda:", dev, " capture_end: cudaStreamEndCapture failed: ", cudaGetErrorString(err), " (",
                      cudaGetErrorName(err), "); was a call not allowed during capture made on the capturing stream?"));
    size_t nodes = 0;
    if (cudaGraphGetNodes(graph, nullptr, &nodes) != cudaSuccess) (void)cudaGetLastError();
    g->nodes = static_cast<int64_t>(nodes);
    const cudaError_t ierr = cudaGraphInstantiate(&g->exec, graph, 0);
    if (ierr != cudaSuccess)
      give_up(TSR_INTERNAL,
              str_cat("cuda:", dev, " capture_end: cudaGraphInstantiate failed: ", cudaGetErrorString(ierr)));
    *out = g.release();
    graphs_process_deferred();
  });
}

int32_t is_capturing(tsr_runtime_t*, tsr_device_t device, tsr_stream_t* stream) {
  try {
    return stream_is_capturing(device.index, as_cuda(stream)) ? 1 : 0;
  } catch (...) {
    return 0;
  }
}

tsr_status_t graph_replay(tsr_graph_t* graph, tsr_stream_t* stream) {
  return guarded("cuda graph replay", [&] {
    if (!graph || !graph->exec) fail(TSR_INVALID_ARGUMENT, "graph_replay: graph is NULL");
    const int dev = graph->device.index;
    DeviceGuard guard(dev);
    const cudaStream_t s = as_cuda(stream);
    const cudaError_t err = cudaGraphLaunch(graph->exec, s);
    if (err != cudaSuccess) throw_cuda_error_on(s, err, "graph_replay", "cudaGraphLaunch", dev);
    set_last_op(dev, "graph_replay");
    if (!graph->done)
      TSR_CUDA_CHECK(cudaEventCreateWithFlags(&graph->done, cudaEventDisableTiming), "graph_replay", dev);
    TSR_CUDA_CHECK(cudaEventRecord(graph->done, s), "graph_replay", dev);
  });
}

uint64_t graph_pool(const tsr_graph_t* graph) { return graph ? graph->pool : 0; }

int64_t graph_node_count(const tsr_graph_t* graph) { return graph ? graph->nodes : 0; }

void graph_release(tsr_graph_t* graph) {
  if (!graph) return;
  try {
    if (device_is_capturing(graph->device.index)) {
      std::lock_guard<std::mutex> lock(g_mu);
      if (!g_deferred) g_deferred = new std::vector<tsr_graph_s*>();
      g_deferred->push_back(graph);
      return;
    }
    destroy_graph(graph);
    graphs_process_deferred();
  } catch (...) {
  }
}

const tsr_graphs_t kGraphs = {sizeof(tsr_graphs_t), 0u,          &capture_begin,    &capture_end,  &is_capturing,
                              &graph_replay,        &graph_pool, &graph_node_count, &graph_release};

}  // namespace

void graphs_process_deferred() {
  std::vector<tsr_graph_s*> ready;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_deferred || g_deferred->empty()) return;
    std::vector<tsr_graph_s*> keep;
    for (tsr_graph_s* g : *g_deferred) (device_is_capturing(g->device.index) ? keep : ready).push_back(g);
    g_deferred->swap(keep);
  }
  for (tsr_graph_s* g : ready) {
    try {
      destroy_graph(g);
    } catch (...) {
    }
  }
}

void register_graphs(Registrar& r) { r.extension(TSR_GRAPHS_EXTENSION_PREFIX "cuda", &kGraphs); }

}  // namespace tsr::cuda
