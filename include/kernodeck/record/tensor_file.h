// Sample outputs read back from disk, never trusted from memory: NumPy .npy
// (every common dtype, C or Fortran order) and .safetensors. Values are kept
// as doubles in C order for comparison; the dtype and shape are kept as written.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::record {

struct Tensor {
  std::string name;
  std::string dtype;  // float16 bfloat16 float32 float64 int8..int64 uint8..uint64 bool
  std::vector<int64_t> shape;
  std::vector<double> values;  // C order
  int64_t elements() const;
};

// Parses a .npy file (format versions 1 to 3). Limits: 1 GiB of data, 8 dimensions.
Result<Tensor> parseNpy(std::string_view bytes);
// Parses a .safetensors file: an 8-byte little-endian header length, a JSON header, raw data.
Result<std::vector<Tensor>> parseSafetensors(std::string_view bytes);
// Writes float64 or float32 .npy (C order), for tests and recorded outputs.
std::string writeNpy(const Tensor& t);

// Sample ids from .txt (one a line), .csv (first column; a header "id" is skipped) or .json (array).
Result<std::vector<std::string>> parseIds(std::string_view text, const std::string& fileName);

}  // namespace kernodeck::record

namespace kernodeck::record {

// Tensors saved with torch.save (a tensor, or a dict/list of tensors: a state_dict, a
// checkpoint). The zip format is read here (parseTorchZip); what it is not (the legacy format
// before torch 1.6) goes to the LibTorch plugin, an error when built without LibTorch.
Result<std::vector<Tensor>> parsePt(std::string_view bytes);

// True when bytes start like a zip (torch.save's format since torch 1.6).
bool isTorchZip(std::string_view bytes);
// Reads torch.save's zip format without LibTorch: `<archive>/data.pkl` through a restricted
// pickle machine (protocols 2 to 5, the opcodes torch.save emits, the globals OrderedDict,
// _rebuild_tensor_v2, _rebuild_parameter and torch.<Dtype>Storage only), tensors rebuilt from
// `<archive>/data/<key>` (little-endian; any offset and strides inside the storage). Dict and
// list items are named as dotted keys and [i]. Limits: 1 GiB uncompressed, 32 MiB of pickle,
// 2^27 values, nesting 8 deep, 10000 tensors; anything else is a one-line error.
Result<std::vector<Tensor>> parseTorchZip(std::string_view bytes);

// The `<archive>/data.pkl` of a torch.save zip, its storages left unread.
Result<std::string> torchZipPickle(std::string_view bytes);

}  // namespace kernodeck::record
