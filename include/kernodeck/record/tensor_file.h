// Sample outputs read back from disk, never trusted from memory: NumPy .npy
// (every common dtype, C or Fortran order) and .safetensors. Values are kept
// as doubles in C order for comparison; the dtype and shape are kept as written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::record {

// What reading tensor files may materialise, counted in elements (each kept as a double). A
// reader charges a document's elements before it allocates them, so one budget shared by every
// document a command reads bounds the command (`sample check` reads both folders through one);
// a reader given none uses a fresh one, which bounds that document alone.
class TensorBudget {
 public:
  static constexpr uint64_t kCommandElements = 1ull << 28;  // 2 GiB of doubles
  explicit TensorBudget(uint64_t elements = kCommandElements) : left_(elements), limit_(elements) {}
  // Takes n elements for `what` (a file or tensor name); an error naming the limit when fewer are left.
  Status charge(uint64_t n, std::string_view what);
  uint64_t left() const { return left_; }

 private:
  uint64_t left_, limit_;
};

struct Tensor {
  std::string name;
  std::string dtype;  // float16 bfloat16 float32 float64 int8..int64 uint8..uint64 bool
  std::vector<int64_t> shape;
  std::vector<double> values;  // C order
  int64_t elements() const;
};

// What a .npy header's Python dict literal says, read by a hand scanner linear in its length (the
// header comes from the replayed code: no regex, no recursion). Each field is the first occurrence
// of its key whose value has the expected form; absent when none has.
struct NpyHeader {
  struct Descr {
    char order = 0;    // < > | =
    char kind = 0;     // f i u b
    std::string size;  // the digits
    std::string text;  // the quoted value, as written
  };
  std::optional<Descr> descr;
  std::optional<bool> fortran;
  std::optional<std::string> shape;  // between the parentheses
};
NpyHeader scanNpyHeader(std::string_view header);

// Parses a .npy file (format versions 1 to 3). Limits: 1 GiB of data, 8 dimensions, and the budget.
Result<Tensor> parseNpy(std::string_view bytes, TensorBudget* budget = nullptr);
// Parses a .safetensors file: an 8-byte little-endian header length, a JSON header, raw data.
// Limits: a header of 100 MiB holding at most 2^20 JSON values, nested 8 deep; the budget.
Result<std::vector<Tensor>> parseSafetensors(std::string_view bytes, TensorBudget* budget = nullptr);
// Writes float64 or float32 .npy (C order), for tests and recorded outputs.
std::string writeNpy(const Tensor& t);

// Sample ids from .txt (one a line), .csv (first column; a header "id" is skipped) or .json (array).
Result<std::vector<std::string>> parseIds(std::string_view text, const std::string& fileName);

}  // namespace kernodeck::record

namespace kernodeck::record {

// Tensors saved with torch.save (a tensor, or a dict/list of tensors: a state_dict, a
// checkpoint). The zip format is read here (parseTorchZip); what it is not (the legacy format
// before torch 1.6) goes to the LibTorch plugin, an error when built without LibTorch.
Result<std::vector<Tensor>> parsePt(std::string_view bytes, TensorBudget* budget = nullptr);

// True when bytes start like a zip (torch.save's format since torch 1.6).
bool isTorchZip(std::string_view bytes);
// Reads torch.save's zip format without LibTorch: `<archive>/data.pkl` through a restricted
// pickle machine (protocols 2 to 5, the opcodes torch.save emits, the globals OrderedDict,
// _rebuild_tensor_v2, _rebuild_parameter and torch.<Dtype>Storage only), tensors rebuilt from
// `<archive>/data/<key>` (little-endian; any offset and strides inside the storage). Dict and
// list items are named as dotted keys and [i]. Limits: 1 GiB uncompressed and at most 16 times
// the file (torch.save stores, never deflates), 32 MiB of pickle, 2^20 objects and 2^20 container
// items, nesting 8 deep, 10000 tensors, 2^20 steps and 64 MiB of names to walk the object graph
// (shared references are walked each time they are named), and elements materialised (a tensor
// named twice, or with a zero stride, counts each time) at most 2^20 plus 8 per byte of storage,
// 2^27 in all, and the budget. Anything else is a one-line error.
Result<std::vector<Tensor>> parseTorchZip(std::string_view bytes, TensorBudget* budget = nullptr);

// The `<archive>/data.pkl` of a torch.save zip, its storages left unread.
Result<std::string> torchZipPickle(std::string_view bytes);

}  // namespace kernodeck::record
