// See resume_check.h: the user's training run straight, to a checkpoint, and resumed; the
// final weights compared; the checkpoint's state named.
#include "kernodeck/record/resume_check.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>

#include "kernodeck/libtorch/pickle_strings.h"
#include "kernodeck/record/resume_locate.h"
#include "kernodeck/record/tensor_file.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using nlohmann::json;
using report::Severity;

namespace {

// The pieces in the order they are reported; the first five are `resume inspect`'s names.
const std::vector<std::string> kPieces = {"model",        "optimizer state", "RNG state",
                                          "step counter", "LR scheduler",    "data order"};

// Which of dataOrderKeys() the checkpoint's pickle holds as strings: the zip's data.pkl, or the
// whole file when it is no zip (the legacy format) or its zip cannot be read.
std::set<std::string> dataOrderKeysIn(std::string_view bytes) {
  std::string pickle;
  if (isTorchZip(bytes))
    if (auto p = torchZipPickle(bytes)) pickle = std::move(*p);
  std::set<std::string> found;
  libtorch::forEachPickleString(pickle.empty() ? bytes : std::string_view(pickle), [&](std::string_view s) {
    if (std::find(dataOrderKeys().begin(), dataOrderKeys().end(), s) != dataOrderKeys().end()) found.emplace(s);
  });
  return found;
}

std::vector<std::string> stringsAt(const json& j, const char* key) {
  std::vector<std::string> out;
  if (j.is_object() && j.contains(key) && j[key].is_array())
    for (const auto& v : j[key])
      if (v.is_string()) out.push_back(v.get<std::string>());
  return out;
}

// KERNODECK_RESUME_SAVE_AT for save_at.
std::string envName(const std::string& placeholder) {
  std::string n = "KERNODECK_RESUME_";
  for (char c : placeholder) n.push_back(static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c));
  return n;
}

// Whether `rel` is a plain relative path inside {out} (no "..", not absolute).
bool plainRelative(const std::string& rel) {
  if (rel.empty() || rel[0] == '/') return false;
  for (const auto& part : util::split(rel, '/'))
    if (part == ".." || part == ".") return false;
  return true;
}

struct Run {
  std::string name;   // straight, checkpoint, resumed, repeat
  std::string label;  // "the straight run"
  int steps = 0;
  std::string resume;  // the checkpoint it continues from (resumed only)
  int saveAt = 0;      // {save_at}; 0: K
};

class Checker {
 public:
  explicit Checker(const ResumeCommandOptions& o) : o_(o), r_("resume check") {}

  report::Report run() {
    r_.declareSteps({"straight", "checkpoint", "inspect", "resumed", "compare", "repeat"});
    r_.subject()["reference"] = o_.commandText;
    r_.subject()["command"] = o_.commandText;
    r_.subject()["steps"] = o_.steps;
    r_.subject()["checkpoint_at"] = o_.at;
    r_.subject()["weights"] = o_.weights;
    r_.subject()["criterion"] = o_.criterion.str();
    r_.section("runs") = json::array();
    r_.runStep("straight", [&]() -> Status {
      KDK_TRY_STATUS(makeWorkFolder());
      return runCommand({"straight", "the straight run", o_.steps, ""}, true);
    });
    r_.runStep("checkpoint", [&]() -> Status {
      KDK_TRY_STATUS(runCommand({"checkpoint", "the run to step " + std::to_string(o_.at), o_.at, ""}, false));
      if (!std::filesystem::exists(checkpointPath()))
        return Error::NotFound(
            "the run to step " + std::to_string(o_.at) + " wrote no checkpoint at " + checkpointPath() +
            ": the command must save one at step {save_at} to {checkpoint} (or $KERNODECK_RESUME_SAVE_AT and "
            "$KERNODECK_RESUME_CHECKPOINT), or --checkpoint-name must name the file it writes in {out}");
      return {};
    });
    if (!r_.failed()) inspect();
    r_.runStep("resumed", [&]() -> Status {
      return runCommand({"resumed", "the resumed run", o_.steps, checkpointPath()}, true);
    });
    bool differ = false;
    r_.runStep("compare", [&]() -> Status {
      KDK_TRY_ASSIGN(auto a, load("straight"));
      KDK_TRY_ASSIGN(auto b, load("resumed"));
      cmp_ = compareWeights(o_.criterion, a, b);
      r_.section("compare") = comparisonJson(cmp_);
      if (cmp_.pass)
        r_.add("resume.matches", Severity::Info,
               "the resumed run's " + o_.weights + " meets " + o_.criterion.str() +
                   " against the straight run's: " + cmp_.summary,
               {{"path", o_.weights}});
      differ = !cmp_.pass;
      return {};
    });
    if (!r_.failed() && !differ) r_.skipStep("repeat", "the resumed weights match the straight run's");
    if (differ) explainDifference();
    if (!o_.keep && !work_.empty()) (void)util::removeTree(work_);
    if (o_.keep && !work_.empty()) r_.subject()["work_folder"] = work_;
    return std::move(r_);
  }

 private:
  Status makeWorkFolder() {
    std::error_code ec;
    std::string root = o_.workRoot.empty() ? std::filesystem::temp_directory_path(ec).string() : o_.workRoot;
    if (root.empty()) root = "/tmp";
    std::string tmpl = root + "/kernodeck-resume-XXXXXX";
    if (!::mkdtemp(tmpl.data())) return Error::Io("cannot create a work folder in " + root);
    work_ = tmpl;
    return {};
  }
  std::string outDir(const std::string& run) const { return work_ + "/" + run; }
  std::string checkpointPath(const std::string& run = "checkpoint") const {
    return outDir(run) + "/" + o_.checkpointName;
  }

  // Runs the command once for `run`; with `wantWeights`, the weights file must be there after.
  Status runCommand(const Run& run, bool wantWeights) {
    std::string out = outDir(run.name);
    if (!util::makeDirs(out) || !util::makeDirs(std::filesystem::path(checkpointPath(run.name)).parent_path().string()))
      return Error::Io("cannot create " + out);
    std::map<std::string, std::string> values = {{"steps", std::to_string(run.steps)},
                                                 {"save_at", std::to_string(run.saveAt ? run.saveAt : o_.at)},
                                                 {"checkpoint", checkpointPath(run.name)},
                                                 {"resume", run.resume},
                                                 {"out", out},
                                                 {"run", run.name}};
    util::ProcessSpec spec;
    spec.argv = o_.command.expand(values);
    spec.cwd = o_.cwd;
    for (const auto& [k, v] : values)
      if (k != "resume") spec.env[envName(k)] = v;
    if (run.resume.empty())
      spec.unsetEnv.push_back("KERNODECK_RESUME_FROM");
    else
      spec.env["KERNODECK_RESUME_FROM"] = run.resume;
    spec.timeoutMs = o_.timeoutSeconds * 1000u;
    spec.maxOutput = 256u << 10;
    auto pr = util::runProcess(spec);
    json row = {{"run", run.name}, {"argv", spec.argv}};
    if (!pr.ok()) {
      row["error"] = pr.error().message;
      r_.section("runs").push_back(row);
      return Error::NotFound(run.label + " could not start " + util::printable(spec.argv[0], 200) + ": " +
                             pr.error().message);
    }
    (void)util::writeFileAtomic(work_ + "/" + run.name + ".log", pr->out + pr->err, false);
    row["seconds"] = pr->seconds;
    row["status"] = pr->describe();
    r_.section("runs").push_back(row);
    if (!pr->ok()) {
      std::string last = pr->lastLine();
      return Error::Io(run.label + " (" + util::printable(util::quoteCommand(spec.argv), 300) + ") " + pr->describe() +
                       (last.empty() ? "" : ": " + last) + (o_.keep ? "" : " (--keep keeps its log)"));
    }
    if (wantWeights && !std::filesystem::is_regular_file(out + "/" + o_.weights)) {
      std::vector<std::string> files = util::listFilesRecursive(out);
      return Error::NotFound(
          run.label + " wrote no " + o_.weights + " in {out} (" + out + ")" +
          (files.empty() ? ", nothing at all" : ": it wrote " + util::printable(util::join(files, ", "), 200)));
    }
    return {};
  }

  Result<std::vector<Tensor>> load(const std::string& run) {
    auto t = readWeights(outDir(run) + "/" + o_.weights);
    if (!t.ok()) return Error::Invalid("the " + run + " run's " + o_.weights + ": " + t.error().message);
    return t;
  }

  void inspect() {
    std::string path = checkpointPath();
    bool folder = std::filesystem::is_directory(path);
    auto bytes = folder ? Result<std::string>(std::string()) : util::readFileLimited(path, 4ull << 30);
    std::optional<report::Report> inspected;
    if (o_.inspect && !folder) inspected = o_.inspect(path);
    state_ =
        assessCheckpoint(inspected ? &*inspected : nullptr, bytes.ok() ? std::string_view(*bytes) : std::string_view());
    if (folder)
      state_.why = "the checkpoint is a folder, whose files are not read";
    else if (!o_.inspect)
      state_.why = "no checkpoint reader (Kernodeck was built without LibTorch)";
    json section = {{"file", o_.checkpointName}, {"inspected", state_.inspected}, {"format", state_.format},
                    {"keys", state_.keys},       {"held", state_.held},           {"absent", state_.absent}};
    if (!state_.why.empty()) section["why"] = state_.why;
    r_.section("checkpoint") = section;
    if (!state_.inspected) {
      r_.skipStep("inspect", "which state the checkpoint holds cannot be told: " + state_.why);
      return;
    }
    r_.runStep("inspect", [&]() -> Status {
      std::vector<std::string> keys;
      for (const auto& k : state_.keys)
        if (k != "(parameters)") keys.push_back(k);
      r_.add(
          "resume.checkpoint.state", Severity::Info,
          "the checkpoint holds " +
              (state_.held.empty() ? std::string("none of the state a resume needs") : util::join(state_.held, ", ")) +
              (keys.empty() ? "" : " (keys: " + util::printable(util::join(keys, ", "), 300) + ")"),
          {{"path", o_.checkpointName}});
      for (const auto& piece : state_.absent) {
        // Without a scheduler or a saved data order a training may still resume exactly (no
        // scheduler; an order derived from the seed and the step): said, not warned about.
        bool maybeUnneeded = piece == "LR scheduler" || piece == "data order";
        r_.add(
            "resume.checkpoint.missing", maybeUnneeded ? Severity::Info : Severity::Warning,
            "the checkpoint holds no " + piece +
                (maybeUnneeded ? " (needed only if the training " +
                                     std::string(piece == "data order" ? "shuffles with a generator it does not reseed"
                                                                       : "uses an LR scheduler") +
                                     ")"
                               : ""),
            {{"piece", piece}, {"path", o_.checkpointName}});
      }
      return {};
    });
  }

  // The weights differ: a second straight run says whether the training is deterministic at
  // all; the finding names what the checkpoint lacked.
  void explainDifference() {
    bool repeatDiffers = false;
    std::string repeatSummary;
    bool repeated = r_.runStep("repeat", [&]() -> Status {
      KDK_TRY_STATUS(runCommand({"repeat", "the second straight run", o_.steps, ""}, true));
      KDK_TRY_ASSIGN(auto a, load("straight"));
      KDK_TRY_ASSIGN(auto b, load("repeat"));
      WeightsComparison c = compareWeights(o_.criterion, a, b);
      repeatDiffers = !c.pass;
      repeatSummary = c.summary;
      r_.section("repeat") = comparisonJson(c);
      return {};
    });
    if (repeated && repeatDiffers) {
      r_.add("resume.nondeterministic", Severity::Error,
             "two straight runs already end with different " + o_.weights + " (" + repeatSummary +
                 "): the training is not deterministic, so the resume cannot be judged under " + o_.criterion.str() +
                 "; fix the seeds and determinism settings (torch.use_deterministic_algorithms, thread counts) or "
                 "declare a "
                 "tolerance the runs meet (--criterion 'abs<=X')",
             {{"path", o_.weights}});
      return;
    }
    ResumeLocation where = locate();
    std::string why = explainResume(state_, where, o_.at);
    std::map<std::string, std::string> evidence = {{"path", o_.weights}};
    if (state_.inspected && !state_.absent.empty()) evidence["missing"] = util::join(state_.absent, ", ");
    std::vector<std::string> notRestored;
    for (const auto& p : where.differing)
      if (p != "model") notRestored.push_back(p);
    if (where.modelKnown && !where.modelRestored) notRestored.insert(notRestored.begin(), "model");
    if (!notRestored.empty()) evidence["not_restored"] = util::join(notRestored, ", ");
    r_.add("resume.diverged", Severity::Error,
           "the resumed run's " + o_.weights + " differs from the straight run's: " + cmp_.summary + "; " + why +
               (repeated ? " (a second straight run matches the first: the training itself is deterministic)" : ""),
           evidence);
  }

  // The probes of resume_locate.h: the resumed run stopped right after loading, and a straight
  // and a resumed run to K+1 that save a checkpoint there. A probe that cannot be made leaves
  // its part unknown; it never fails the check.
  ResumeLocation locate() {
    ResumeLocation where;
    json section = json::object();
    auto weightsOf = [&](const std::string& run) { return readWeights(outDir(run) + "/" + o_.weights); };
    if (runCommand({"reloaded", "the resumed run stopped at step " + std::to_string(o_.at), o_.at, checkpointPath()},
                   true)
            .ok()) {
      auto loaded = weightsOf("reloaded"), saved = weightsOf("checkpoint");
      if (loaded.ok() && saved.ok()) {
        WeightsComparison c = compareWeights(o_.criterion, *saved, *loaded);
        where.modelKnown = true;
        where.modelRestored = c.pass;
        section["right_after_loading"] = c.summary;
      }
    }
    int next = o_.at + 1;
    bool ranStraight =
        runCommand({"straight-next", "the straight run to step " + std::to_string(next), next, "", next}, true).ok();
    bool ranResumed = ranStraight && runCommand({"resumed-next", "the resumed run to step " + std::to_string(next),
                                                 next, checkpointPath(), next},
                                                true)
                                         .ok();
    if (ranResumed) {
      auto a = weightsOf("straight-next"), b = weightsOf("resumed-next");
      if (a.ok() && b.ok()) {
        WeightsComparison c = compareWeights(o_.criterion, *a, *b);
        where.firstKnown = true;
        where.firstDiffers = !c.pass;
        section["one_step_after"] = c.summary;
      }
      std::string x = checkpointPath("straight-next"), y = checkpointPath("resumed-next");
      if (std::filesystem::is_regular_file(x) && std::filesystem::is_regular_file(y)) {
        auto pieces = differingPieces(x, y);
        where.piecesKnown = pieces.ok();
        if (pieces.ok())
          where.differing = *pieces, section["differing_pieces"] = *pieces;
        else
          section["pieces_unread"] = pieces.error().message;
      }
    }
    r_.section("locate") = section;
    return where;
  }

  static json comparisonJson(const WeightsComparison& c) {
    json worst = json::array();
    for (const auto& w : c.worst) worst.push_back({{"tensor", w.id}, {"value", w.value}});
    return {{"pass", c.pass}, {"measure", c.measure},   {"tensors", c.tensors}, {"beyond", c.beyond},
            {"worst", worst}, {"problems", c.problems}, {"summary", c.summary}};
  }

  const ResumeCommandOptions& o_;
  report::Report r_;
  std::string work_;
  CheckpointState state_;
  WeightsComparison cmp_;
};

}  // namespace

const std::vector<std::string>& resumePlaceholders() {
  static const std::vector<std::string> names = {"steps", "save_at", "checkpoint", "resume", "out", "run"};
  return names;
}

CheckpointState assessCheckpoint(const report::Report* inspected, std::string_view bytes) {
  CheckpointState s;
  std::set<std::string> held;
  if (inspected && !inspected->failed() && inspected->sections().contains("checkpoint")) {
    const json& c = inspected->sections()["checkpoint"];
    s.inspected = true;
    s.format = report::stringAt(c, "format");
    s.keys = stringsAt(c, "keys");
    for (const auto& p : stringsAt(c, "present")) held.insert(p);
  } else if (inspected) {
    s.why = inspected->failed() ? inspected->firstError() : "the checkpoint reader said nothing about it";
  }
  std::set<std::string> scanned = dataOrderKeysIn(bytes);
  for (const auto& k : dataOrderKeys()) {
    bool found = std::find(s.keys.begin(), s.keys.end(), k) != s.keys.end();
    if (!found && scanned.count(k)) {
      found = true;
      s.keys.push_back(k);
    }
    if (found) held.insert("data order");
  }
  // Without the reader only what is held can be told, not what is absent.
  for (const auto& p : kPieces)
    if (held.count(p))
      s.held.push_back(p);
    else if (s.inspected)
      s.absent.push_back(p);
  return s;
}

WeightsComparison compareWeights(const Criterion& c, const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  WeightsComparison out;
  std::map<std::string, const Tensor*> right;
  for (const auto& t : b) right[t.name] = &t;
  std::set<std::string> seen;
  std::vector<SampleValue> per;
  bool higher = c.higherIsBetter();
  for (const auto& t : a) {
    seen.insert(t.name);
    std::string name = t.name.empty() ? "(tensor)" : t.name;
    auto it = right.find(t.name);
    if (it == right.end()) {
      out.problems.push_back(name + " is missing from the resumed run's weights");
      continue;
    }
    const Tensor& u = *it->second;
    if (t.shape != u.shape || t.values.size() != u.values.size()) {
      out.problems.push_back(name + " has another shape");
      continue;
    }
    if (t.dtype != u.dtype)
      out.problems.push_back(name + " is " + t.dtype + " in one run and " + u.dtype + " in the other");
    // NaN and Inf compared by position: the same non-finite value on both sides is equal,
    // a number on one side only is a problem (a NaN would otherwise compare as no error).
    Tensor x{name, t.dtype, {1, static_cast<int64_t>(t.values.size())}, t.values};
    Tensor y{name, u.dtype, {1, static_cast<int64_t>(u.values.size())}, u.values};
    int64_t nonfinite = 0;
    for (size_t i = 0; i < x.values.size(); ++i) {
      double p = x.values[i], q = y.values[i];
      if (std::isfinite(p) && std::isfinite(q)) continue;
      if ((std::isnan(p) && std::isnan(q)) || p == q) {
        x.values[i] = y.values[i] = 0;
      } else {
        ++nonfinite;
      }
    }
    if (nonfinite) {
      out.problems.push_back(name + " has " + std::to_string(nonfinite) +
                             " NaN/Inf value(s) where the other run has another value");
      continue;
    }
    Comparison one = compare(c, x, y, {name});
    per.push_back({name, one.measure});
    ++out.tensors;
    if (!one.pass) ++out.beyond;
  }
  for (const auto& t : b)
    if (!seen.count(t.name))
      out.problems.push_back((t.name.empty() ? "(tensor)" : t.name) + " is only in the resumed run's weights");
  std::stable_sort(per.begin(), per.end(), [&](const SampleValue& p, const SampleValue& q) {
    return higher ? p.value < q.value : p.value > q.value;
  });
  out.measure = per.empty() ? (higher ? 1 : 0) : per.front().value;
  out.pass = out.problems.empty() && out.beyond == 0 && !per.empty();
  for (size_t i = 0; i < per.size() && i < 5; ++i) out.worst.push_back(per[i]);
  double threshold = c.kind == "exact" ? 0 : c.threshold;
  bool within = higher ? out.measure >= threshold : out.measure <= threshold;
  out.summary = c.str() + ": " + c.measureName() + " " + formatAgainst(out.measure, threshold, c.digits()) +
                (within ? (higher ? " >= " : " <= ") : (higher ? " < " : " > ")) +
                (c.kind == "exact" ? std::string("0") : c.thresholdText) + " over " + std::to_string(out.tensors) +
                " tensor(s)";
  if (out.beyond) {
    std::vector<std::string> w;
    for (const auto& s : out.worst) w.push_back(s.id + " " + formatAgainst(s.value, threshold, c.digits()));
    out.summary += ", " + std::to_string(out.beyond) + " beyond (worst: " + util::join(w, ", ") + ")";
  }
  if (!out.problems.empty()) out.summary += "; " + util::join(out.problems, "; ");
  if (per.empty() && out.problems.empty()) out.summary += "; the weights file holds no tensor";
  return out;
}

Result<std::vector<Tensor>> readWeights(const std::string& path) {
  bool npy = path.ends_with(".npy"), st = path.ends_with(".safetensors"),
       pt = path.ends_with(".pt") || path.ends_with(".pth");
  if (!npy && !st && !pt)
    return Error::Invalid(path + " is not a weights file Kernodeck reads: use .pt, .pth, .safetensors or .npy");
  KDK_TRY_ASSIGN(std::string bytes, util::readFileLimited(path, 4ull << 30));
  if (npy) {
    KDK_TRY_ASSIGN(Tensor t, parseNpy(bytes));
    t.name = std::filesystem::path(path).filename().string();
    return std::vector<Tensor>{std::move(t)};
  }
  if (st) return parseSafetensors(bytes);
  auto tensors = parsePt(bytes);
  // Only the legacy (pre-zip) format reaches LibTorch, whose unpickler fails on some Python
  // objects with its own assertion text, which means nothing to a user: said in words.
  if (!tensors.ok() && tensors.error().message.find("INTERNAL ASSERT") != std::string::npos)
    return Error::Invalid(
        "LibTorch cannot rebuild what this legacy-format .pt file holds: save it again with torch.save "
        "(the zip format, torch 1.6 and later), or as .safetensors or .npy");
  return tensors;
}

Status validate(const ResumeCommandOptions& o) {
  if (o.at <= 0 || o.at >= o.steps) return Error::Invalid("--at must be between 1 and --steps - 1");
  for (const auto* p : {&o.weights, &o.checkpointName})
    if (!plainRelative(*p))
      return Error::Invalid("'" + util::printable(*p, 100) + "' must be a relative path inside {out}, without '..'");
  if (!o.weights.ends_with(".pt") && !o.weights.ends_with(".pth") && !o.weights.ends_with(".safetensors") &&
      !o.weights.ends_with(".npy"))
    return Error::Invalid("--weights " + util::printable(o.weights, 100) + ": use .pt, .pth, .safetensors or .npy");
  if (o.criterion.kind == "topk" || o.criterion.kind == "knn")
    return Error::Invalid("--criterion " + o.criterion.str() +
                          " ranks samples; weights are compared with exact, abs<=X, rel<=X or cosine>=X");
  if (o.criterion.kind.empty()) return Error::Invalid("no criterion declared");
  return {};
}

report::Report resumeCheckCommand(const ResumeCommandOptions& o) {
  if (auto st = validate(o); !st.ok()) {
    report::Report r("resume check");
    r.declareSteps({"straight"});
    r.runStep("straight", [&] { return st; });
    return r;
  }
  return Checker(o).run();
}

}  // namespace kernodeck::record
