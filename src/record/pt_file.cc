// `.pt` tensors are read by the LibTorch plugin (pt_torch.cc); this is the
// plugin-free side of that call.
#include <optional>

#include "kernodeck/libtorch/plugin.h"
#include "kernodeck/record/tensor_file.h"

namespace kernodeck::record {

Result<std::vector<Tensor>> parsePt(std::string_view bytes) {
  using Out = std::optional<Result<std::vector<Tensor>>>;
  if (auto* f = reinterpret_cast<void (*)(const std::string_view*, Out*)>(libtorch::pluginSymbol("kdk_parse_pt"))) {
    Out out;
    f(&bytes, &out);
    if (out) return std::move(*out);
  }
  return Error::Unsupported(".pt files need LibTorch (" + libtorch::pluginError() + "); use .npy or .safetensors");
}

}  // namespace kernodeck::record
