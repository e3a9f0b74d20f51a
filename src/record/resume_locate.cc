// See resume_locate.h.
#include "kernodeck/record/resume_locate.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "kernodeck/record/tensor_file.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

namespace {

// The pieces in the order they are reported (resume_check.cc's kPieces).
const std::vector<std::string> kOrder = {"model",        "optimizer state", "RNG state",
                                         "step counter", "LR scheduler",    "data order"};

// The names projects give each piece at the top of a checkpoint (`resume inspect`'s, and the
// data order's, which `resume inspect` does not look for).
const std::map<std::string, std::vector<std::string>>& keysByPiece() {
  static const std::map<std::string, std::vector<std::string>> m = {
      {"model", {"model", "model_state_dict", "state_dict", "net"}},
      {"optimizer state", {"optimizer", "optimizer_state_dict", "optim"}},
      {"RNG state",
       {"rng_state", "rng", "torch_rng_state", "torch_rng", "cuda_rng_state", "cuda_rng", "numpy_rng",
        "numpy_rng_state", "np_rng", "py_rng", "python_rng", "python_rng_state", "random_state", "rng_states"}},
      {"step counter", {"step", "global_step", "epoch", "iteration"}},
      {"LR scheduler", {"scheduler", "lr_scheduler", "scheduler_state_dict"}},
      {"data order", dataOrderKeys()}};
  return m;
}

std::string listed(const std::vector<std::string>& v, const std::string& sep = ", ") { return util::join(v, sep); }

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// A tensor's identity and values, NaN equal to NaN, for comparing two checkpoints' pieces.
bool sameTensor(const Tensor& a, const Tensor& b) {
  if (a.dtype != b.dtype || a.shape != b.shape || a.values.size() != b.values.size()) return false;
  for (size_t i = 0; i < a.values.size(); ++i)
    if (a.values[i] != b.values[i] && !(std::isnan(a.values[i]) && std::isnan(b.values[i]))) return false;
  return true;
}

}  // namespace

const std::vector<std::string>& dataOrderKeys() {
  static const std::vector<std::string> keys = {"data_rng",         "data_rng_state", "data_generator", "generator",
                                                "sampler",          "sampler_state",  "data_order",     "dataloader",
                                                "dataloader_state", "loader_state",   "shuffle_rng",    "epoch_perm",
                                                "permutation",      "perm",           "batch_sampler"};
  return keys;
}

std::string pieceOfKey(const std::string& key) {
  for (const auto& [piece, keys] : keysByPiece())
    if (has(keys, key)) return piece;
  return "";
}

Result<std::vector<std::string>> differingPieces(const std::string& a, const std::string& b) {
  std::map<std::string, std::vector<Tensor>> sides[2];
  for (int i = 0; i < 2; ++i) {
    const std::string& path = i ? b : a;
    KDK_TRY_ASSIGN(std::string bytes, util::readFileLimited(path, 4ull << 30));
    auto tensors = parsePt(bytes);
    if (!tensors.ok()) return Error::Invalid(path + ": " + tensors.error().message);
    for (auto& t : *tensors) {
      std::string top = t.name.substr(0, t.name.find_first_of(".["));
      sides[i][pieceOfKey(top)].push_back(std::move(t));
    }
  }
  std::vector<std::string> out;
  for (const auto& piece : kOrder) {
    auto x = sides[0].find(piece), y = sides[1].find(piece);
    if (x == sides[0].end() && y == sides[1].end()) continue;
    bool same = x != sides[0].end() && y != sides[1].end() && x->second.size() == y->second.size();
    for (size_t i = 0; same && i < x->second.size(); ++i)
      same = x->second[i].name == y->second[i].name && sameTensor(x->second[i], y->second[i]);
    if (!same) out.push_back(piece);
  }
  return out;
}

std::string explainResume(const CheckpointState& state, const ResumeLocation& where, int at) {
  const std::string k = std::to_string(at);
  if (where.modelKnown && !where.modelRestored) {
    std::string shown =
        "stopped at step " + k + " right after loading, its weights differ from those the run to step " + k + " saved";
    if (!state.inspected) return "the resumed run did not restore the model: " + shown;
    return has(state.held, "model") ? "the checkpoint holds the model, but the resumed run did not restore it: " + shown
                                    : "the checkpoint holds no model, so the resumed run starts from fresh weights";
  }
  // What every step uses: held and shown not restored (a piece found in the checkpoints the
  // runs to K+1 saved is one the script saves), or missing from the checkpoint.
  std::vector<std::string> notRestored, lacking, later;
  if (where.piecesKnown)
    for (const auto& p : where.differing)
      if (p != "model") notRestored.push_back(p);
  if (notRestored.empty() && !state.inspected)
    return "which state the checkpoint lacks cannot be told (" + state.why + ")";
  for (const auto& p : state.absent) (p == "LR scheduler" || p == "data order" ? later : lacking).push_back(p);
  if (!notRestored.empty()) {
    std::string s = "the checkpoint holds " + listed(notRestored, " and ") + ", but the resumed run did not restore " +
                    (notRestored.size() == 1 ? "it" : "them") + ": one step after resuming, " +
                    (notRestored.size() == 1 ? "it differs" : "they differ") + " from the straight run's";
    if (!lacking.empty()) s += "; it also holds no " + listed(lacking, ", no ");
    return s;
  }
  if (!lacking.empty())
    return "the checkpoint holds no " + listed(lacking, ", no ") +
           (has(lacking, "optimizer state")
                ? ", so the resumed run restarts the optimizer (its momentum, Adam's moments)"
                : "");
  std::string when = !where.firstKnown    ? ""
                     : where.firstDiffers ? "the first step after resuming already differs"
                                          : "the first step after resuming matches, and the runs part later";
  // Only now, with nothing else to explain it, what a training may or may not use.
  if (!later.empty())
    return (when.empty() ? "" : when + "; ") + "the checkpoint holds no " + listed(later, ", no ") +
           " (needed if the training uses " + (later.size() == 1 ? "one" : "them") + ")";
  return "the checkpoint holds " + listed(state.held) + (when.empty() ? "" : "; " + when) +
         ", so the script does not restore all of it, or depends on state it does not save";
}

}  // namespace kernodeck::record
