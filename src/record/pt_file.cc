// `.pt` tensors: the zip format is read without LibTorch (pt_zip.cc); the legacy format goes to
// the LibTorch plugin (pt_torch.cc), this being the plugin-free side of that call (libtorch/abi.h).
#include "kernodeck/libtorch/plugin.h"
#include "kernodeck/record/tensor_file.h"

namespace kernodeck::record {

Result<std::vector<Tensor>> parsePt(std::string_view bytes, TensorBudget* budget) {
  if (isTorchZip(bytes)) return parseTorchZip(bytes, budget);
  TensorBudget own;
  if (!budget) budget = &own;
  const libtorch::PluginAbi* abi = libtorch::plugin();
  if (!abi || !abi->parse_pt) {
    std::string why = abi ? "the LibTorch plugin was built for the probe alone" : libtorch::pluginError();
    return Error::Unsupported("this .pt file is in the legacy (pre-zip) format, which needs LibTorch (" + why +
                              "); save it again with a recent torch, or use .npy or .safetensors");
  }
  struct Out {
    std::vector<Tensor> tensors;
    std::string error;
    TensorBudget* budget;
  } out{{}, {}, budget};
  auto tensor = [](void* ctx, const libtorch::TensorRow* row) {
    Out& o = *static_cast<Out*>(ctx);
    if (!o.error.empty()) return;
    if (auto c = o.budget->charge(row->count, ".pt tensor " + std::string(row->name)); !c.ok()) {
      o.error = c.error().message;  // the plugin's later rows are dropped; the call fails below
      return;
    }
    Tensor t;
    t.name = row->name;
    t.dtype = row->dtype;
    t.shape.assign(row->shape, row->shape + row->rank);
    t.values.assign(row->values, row->values + row->count);
    o.tensors.push_back(std::move(t));
  };
  auto error = [](void* ctx, const char* s, size_t n) { static_cast<Out*>(ctx)->error.assign(s, n); };
  int rc = abi->parse_pt(bytes.data(), bytes.size(), &out, tensor, error);
  if (rc != 0 || !out.error.empty()) return Error::Invalid(out.error);
  return std::move(out.tensors);
}

}  // namespace kernodeck::record
