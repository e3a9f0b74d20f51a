// Built without LibTorch: .pt files cannot be read, and the check says so.
#include "kernodeck/record/tensor_file.h"

namespace kernodeck::record {

Result<std::vector<Tensor>> parsePt(std::string_view) {
  return Error::Unsupported(".pt files need LibTorch; this kernodeck is built without it (use .npy or .safetensors)");
}

}  // namespace kernodeck::record
