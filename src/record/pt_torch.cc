// Reading .pt files needs LibTorch; this file is in the LibTorch library.
#include <torch/script.h>
#include <torch/serialize.h>

#include "kernodeck/libtorch/abi.h"
#include "kernodeck/record/tensor_file.h"

namespace kernodeck::record::torchimpl {

namespace {

void collect(const c10::IValue& v, const std::string& name, std::vector<Tensor>& out, int depth) {
  if (depth > 8 || out.size() > 10000) return;
  if (v.isTensor()) {
    at::Tensor t = v.toTensor().detach().to(at::kCPU).contiguous();
    Tensor r;
    r.name = name;
    std::string dt = c10::toString(t.scalar_type());
    static const std::map<std::string, std::string> names = {
        {"Float", "float32"}, {"Double", "float64"}, {"Half", "float16"}, {"BFloat16", "bfloat16"}, {"Int", "int32"},
        {"Long", "int64"},    {"Short", "int16"},    {"Char", "int8"},    {"Byte", "uint8"},        {"Bool", "bool"}};
    r.dtype = names.count(dt) ? names.at(dt) : dt;
    for (int64_t d : t.sizes()) r.shape.push_back(d);
    at::Tensor d = t.to(at::kDouble).contiguous();
    r.values.assign(d.data_ptr<double>(), d.data_ptr<double>() + d.numel());
    out.push_back(std::move(r));
  } else if (v.isGenericDict()) {
    for (const auto& kv : v.toGenericDict())
      collect(kv.value(),
              name.empty() ? kv.key().toStringRef() : name + "." + (kv.key().isString() ? kv.key().toStringRef() : "?"),
              out, depth + 1);
  } else if (v.isList() || v.isTuple()) {
    auto items = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
    for (size_t i = 0; i < items.size(); ++i) collect(items[i], name + "[" + std::to_string(i) + "]", out, depth + 1);
  }
}

}  // namespace

Result<std::vector<Tensor>> parsePt(std::string_view bytes) {
  try {
    std::vector<char> data(bytes.begin(), bytes.end());
    c10::IValue v = torch::pickle_load(data);
    std::vector<Tensor> out;
    collect(v, "", out, 0);
    if (out.empty()) return Error::Invalid(".pt file holds no tensor");
    return out;
  } catch (const std::exception& e) {
    std::string msg = e.what();
    return Error::Invalid(".pt file cannot be read by LibTorch: " + msg.substr(0, msg.find('\n')));
  }
}

}  // namespace kernodeck::record::torchimpl

// The plugin's entry point for .pt files (see libtorch/abi.h).
namespace kernodeck::libtorch::entry {

int parsePt(const char* bytes, size_t size, void* ctx, TensorSink tensor, StringSink error) {
  auto r = record::torchimpl::parsePt(std::string_view(bytes, size));
  if (!r) {
    const std::string& m = r.error().message;
    error(ctx, m.data(), m.size());
    return 1;
  }
  for (const auto& t : *r) {
    TensorRow row{t.name.c_str(), t.dtype.c_str(), t.shape.data(), t.shape.size(), t.values.data(), t.values.size()};
    tensor(ctx, &row);
  }
  return 0;
}

}  // namespace kernodeck::libtorch::entry
