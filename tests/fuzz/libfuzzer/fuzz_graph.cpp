// libFuzzer target: the graph text parser (model_parse, docs/graphs.md), as a host or a model file
// hands it text. Built by tools/fuzz.sh with clang (TESSERA_LIBFUZZER=ON), under ASan+UBSan.
//
// Beyond the sanitizers, it traps when the parser breaks what it promises: a rejection that is not
// INVALID_ARGUMENT naming "graph text line L:C", an accepted text whose printed form does not
// parse back to the same text (the round trip is exact), or a model whose signature entries fail.
// The seeded mutation fuzzer in the test suite (tests/fuzz/test_graph_fuzzer.cpp) also runs
// mutated graphs; this target is for long unattended runs.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "tessera/ext_model.h"
#include "tessera/tessera.hpp"

namespace {

void require(bool ok) {
  if (!ok) __builtin_trap();
}

const tsr_model_ext_t* ext() {
  static const auto* e = static_cast<const tsr_model_ext_t*>(tsr::api()->get_extension(tsr::runtime(), TSR_MODEL_EXTENSION));
  require(e != nullptr);
  return e;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tsr_api_t* api = tsr::api();
  std::string text(reinterpret_cast<const char*>(data), size);
  if (text.find('\0') != std::string::npos) return 0;  // C strings end there
  tsr_model_t* m = nullptr;
  tsr_status_t st = ext()->model_parse(tsr::runtime(), text.c_str(), &m);
  if (st) {
    require(api->status_code(st) == TSR_INVALID_ARGUMENT);
    require(std::strstr(api->status_message(st), "graph text line ") != nullptr);
    api->status_free(st);
    require(m == nullptr);
    return 0;
  }
  char* printed = nullptr;
  require(ext()->model_print(m, &printed) == nullptr);
  tsr_model_t* again = nullptr;
  require(ext()->model_parse(tsr::runtime(), printed, &again) == nullptr);
  char* reprinted = nullptr;
  require(ext()->model_print(again, &reprinted) == nullptr);
  require(std::strcmp(printed, reprinted) == 0);
  for (size_t i = 0; i < ext()->model_num_inputs(m); ++i) {
    tsr_model_io_t io{};
    io.struct_size = sizeof io;
    require(ext()->model_input(m, i, &io) == nullptr && io.name != nullptr);
  }
  for (size_t i = 0; i < ext()->model_num_outputs(m); ++i) {
    tsr_model_io_t io{};
    io.struct_size = sizeof io;
    require(ext()->model_output(m, i, &io) == nullptr && io.name != nullptr);
  }
  api->string_free(printed);
  api->string_free(reprinted);
  ext()->model_release(again);
  ext()->model_release(m);
  return 0;
}
