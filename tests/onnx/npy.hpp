// Reads the .npy files tests/onnx/export_models.py writes (NumPy's format 1.0/2.0, C order,
// little-endian float32/float64/int64/int32/bool) into Tessera CPU tensors.
#pragma once

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tessera/tessera.hpp"

namespace npy {

inline tsr::Tensor load(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (all.compare(0, 6, "\x93NUMPY") != 0) throw std::runtime_error(path + ": not a .npy file");
  const int major = static_cast<unsigned char>(all[6]);
  size_t header_len, start;
  if (major == 1) {
    header_len = static_cast<unsigned char>(all[8]) | static_cast<unsigned char>(all[9]) << 8;
    start = 10;
  } else {
    header_len = 0;
    for (int k = 0; k < 4; ++k) header_len |= static_cast<size_t>(static_cast<unsigned char>(all[8 + k])) << (8 * k);
    start = 12;
  }
  const std::string header = all.substr(start, header_len);
  auto field = [&](const std::string& key) {
    size_t p = header.find("'" + key + "':");
    if (p == std::string::npos) throw std::runtime_error(path + ": no " + key);
    return header.substr(p + key.size() + 3);
  };
  if (field("fortran_order").find("False") != 1 && field("fortran_order").find("False") != 0)
    throw std::runtime_error(path + ": Fortran order");
  std::string descr = field("descr");
  descr = descr.substr(descr.find('\'') + 1);
  descr = descr.substr(0, descr.find('\''));
  tsr_dtype_t dt = descr == "<f4" ? TSR_F32 : descr == "<f8" ? TSR_F64 : descr == "<i8" ? TSR_I64
                   : descr == "<i4" ? TSR_I32 : descr == "|b1" ? TSR_BOOL : TSR_DTYPE_UNDEFINED;
  if (dt == TSR_DTYPE_UNDEFINED) throw std::runtime_error(path + ": dtype " + descr);
  std::string shape = field("shape");
  shape = shape.substr(shape.find('(') + 1, shape.find(')') - shape.find('(') - 1);
  std::vector<int64_t> dims;
  std::stringstream ss(shape);
  std::string part;
  while (std::getline(ss, part, ','))
    if (part.find_first_of("0123456789") != std::string::npos) dims.push_back(std::stoll(part));
  tsr_tensor_t* out = nullptr;
  tsr::check(tsr::api()->tensor_from_host(tsr::runtime(), all.data() + start + header_len, static_cast<int32_t>(dims.size()),
                                          dims.data(), dt, tsr::Device::cpu().d, &out));
  return tsr::Tensor::adopt(out);
}

}  // namespace npy
