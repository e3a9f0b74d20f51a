// torch.save's zip format read without LibTorch: the zip through libarchive (pt_archive.cc),
// `<archive>/data.pkl` through a restricted pickle machine (pt_pickle.cc: only what torch.save
// emits, only allowlisted globals), and here the tensors it rebuilt named as pt_torch.cc names
// them. Every limit is checked before use.
#include <cstdint>
#include <string>
#include <vector>

#include "kernodeck/record/tensor_file.h"
#include "pt_archive.h"
#include "pt_pickle.h"

namespace kernodeck::record {

namespace {

using pt::Node;
using pt::PtArchive;
using pt::Value;

// The walk that names the tensors is bounded like the machine: a memo reference may name a
// whole subtree again.
constexpr uint64_t kMaxWalkSteps = 1ull << 20;   // objects visited naming the tensors
constexpr uint64_t kMaxNameBytes = 64ull << 20;  // bytes of names built on that walk
constexpr int kMaxDepth = 8;                     // nesting of dicts and lists named in the result (as pt_torch.cc)
constexpr size_t kMaxTensors = 10000;

// Names the tensors under a pickle's root as pt_torch.cc's collect names them: dotted dict keys,
// [i] for list and tuple items; an int key is written as its number. The memo lets one subtree be
// named from many places, so the walk is a tree walk of a graph: its steps and the bytes of the
// names it builds are bounded, and a tensor named again is a copy charged like a new one.
class Collector {
 public:
  Collector(const PtArchive& ar, uint64_t allowance, uint64_t values)
      : ar_(ar), allowance_(allowance), values_(values) {}

  Status walk(const Value& v, const std::string& name, int depth) {
    if (depth > kMaxDepth || out.size() >= kMaxTensors || v.kind != Value::Ref) return {};
    if (++steps_ > kMaxWalkSteps)
      return Error::Invalid(".pt data.pkl shares its objects so often that naming the tensors takes more than " +
                            std::to_string(kMaxWalkSteps) + " steps");
    names_ += name.size();
    if (names_ > kMaxNameBytes)
      return Error::Invalid(".pt data.pkl shares its objects so often that the tensors' names exceed " +
                            std::to_string(kMaxNameBytes >> 20) + " MiB");
    Node& n = *v.n;
    if (n.kind == Node::TensorVal) return take(n, name);
    if (n.kind == Node::Dict) {
      for (const auto& [k, item] : n.entries) {
        std::string key = k.kind == Value::Ref && k.n->kind == Node::Str ? k.n->text
                          : k.kind == Value::Int                         ? std::to_string(k.i)
                                                                         : "?";
        KDK_TRY_STATUS(walk(item, name.empty() ? key : name + "." + key, depth + 1));
      }
    } else if (n.kind == Node::List || n.kind == Node::Tuple) {
      for (size_t i = 0; i < n.items.size(); ++i)
        KDK_TRY_STATUS(walk(n.items[i], name + "[" + std::to_string(i) + "]", depth + 1));
    }
    return {};
  }

  uint64_t values() const { return values_; }
  std::vector<Tensor> out;

 private:
  // The tensor itself the first time it is named, a copy (charged) every later time.
  Status take(Node& n, const std::string& name) {
    if (n.collected == SIZE_MAX) {
      n.collected = out.size();
      out.push_back(std::move(*n.tensor));
    } else {
      Tensor copy = out[n.collected];
      if (copy.values.size() > allowance_ - values_)
        return pt::tooManyValues(values_ + copy.values.size(), allowance_, ar_);
      values_ += copy.values.size();
      out.push_back(std::move(copy));
    }
    out.back().name = name;
    return {};
  }

  const PtArchive& ar_;
  uint64_t allowance_, values_;
  uint64_t steps_ = 0, names_ = 0;
};

}  // namespace

bool isTorchZip(std::string_view bytes) { return bytes.substr(0, 4) == std::string_view("PK\x03\x04", 4); }

Result<std::string> torchZipPickle(std::string_view bytes) {
  auto ar = pt::readArchive(bytes, false);
  if (!ar) return ar.error();
  return std::move(ar->pickle);
}

Result<std::vector<Tensor>> parseTorchZip(std::string_view bytes, TensorBudget* budget) {
  TensorBudget own;
  if (!budget) budget = &own;
  auto ar = pt::readArchive(bytes);
  if (!ar) return ar.error();
  uint64_t allowance = pt::valueAllowance(*ar, budget->left());
  auto pickled = pt::unpickle(*ar, allowance);
  if (!pickled) return pickled.error();
  Collector c(*ar, allowance, pickled->values);
  KDK_TRY_STATUS(c.walk(pickled->root, "", 0));
  if (c.out.empty()) return Error::Invalid(".pt file holds no tensor");
  KDK_TRY_STATUS(budget->charge(c.values(), ".pt tensors"));
  return std::move(c.out);
}

}  // namespace kernodeck::record
