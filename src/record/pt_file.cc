// `.pt` tensors: the zip format is read without LibTorch (pt_zip.cc); the legacy format goes to
// the LibTorch plugin (pt_torch.cc), this being the plugin-free side of that call (libtorch/abi.h).
#include "kernodeck/libtorch/plugin.h"
#include "kernodeck/record/tensor_file.h"

namespace kernodeck::record {

Result<std::vector<Tensor>> parsePt(std::string_view bytes) {
  if (isTorchZip(bytes)) return parseTorchZip(bytes);
  const libtorch::PluginAbi* abi = libtorch::plugin();
  if (!abi || !abi->parse_pt) {
    std::string why = abi ? "the LibTorch plugin was built for the probe alone" : libtorch::pluginError();
    return Error::Unsupported("this .pt file is in the legacy (pre-zip) format, which needs LibTorch (" + why +
                              "); save it again with a recent torch, or use .npy or .safetensors");
  }
  struct Out {
    std::vector<Tensor> tensors;
    std::string error;
  } out;
  auto tensor = [](void* ctx, const libtorch::TensorRow* row) {
    Tensor t;
    t.name = row->name;
    t.dtype = row->dtype;
    t.shape.assign(row->shape, row->shape + row->rank);
    t.values.assign(row->values, row->values + row->count);
    static_cast<Out*>(ctx)->tensors.push_back(std::move(t));
  };
  auto error = [](void* ctx, const char* s, size_t n) { static_cast<Out*>(ctx)->error.assign(s, n); };
  int rc = abi->parse_pt(bytes.data(), bytes.size(), &out, tensor, error);
  if (rc != 0) return Error::Invalid(out.error);
  return std::move(out.tensors);
}

}  // namespace kernodeck::record
