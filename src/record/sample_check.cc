// kernodeck sample check: outputs reloaded from disk and checked against the reference's
// expected outputs step by step. The expected outputs are verified against the hash the
// reference recorded before anything is compared; rows are aligned by id, not by position;
// every criterion is measured and printed against its threshold. A difference in the outputs
// is a finding (exit 1); only what stops the check itself (an unreadable folder, a changed
// expected folder) fails a step (exit 3).
#include <dirent.h>
#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "kernodeck/record/criterion.h"
#include "kernodeck/record/record.h"
#include "kernodeck/record/tensor_file.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using nlohmann::json;
using report::Severity;

namespace {

struct Outputs {
  std::map<std::string, Tensor> tensors;  // "file" or "file:name"
  std::vector<std::string> ids;
  bool hasIds = false;
};

// The outputs in `dir`, their elements charged to `budget` (one for the whole command).
Result<Outputs> load(const std::string& dir, const std::string& idsFile, TensorBudget& budget) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) return Error::NotFound("cannot open output folder " + dir);
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) names.emplace_back(e->d_name);
  ::closedir(d);
  std::sort(names.begin(), names.end());
  Outputs out;
  for (const auto& n : names) {
    std::string path = dir + "/" + n;
    if (!idsFile.empty() && n == idsFile) {
      KDK_TRY_ASSIGN(std::string text, util::readFileLimited(path, 256u << 20));
      auto ids = parseIds(text, n);
      if (!ids.ok()) return Error::Invalid(path + ": " + ids.error().message);
      out.ids = *ids;
      out.hasIds = true;
      continue;
    }
    bool npy = n.ends_with(".npy"), st = n.ends_with(".safetensors"), pt = n.ends_with(".pt") || n.ends_with(".pth");
    if (!npy && !st && !pt) continue;
    KDK_TRY_ASSIGN(std::string bytes, util::readFileLimited(path, 2ull << 30));
    if (npy) {
      auto t = parseNpy(bytes, &budget);
      if (!t.ok()) return Error::Invalid(path + ": " + t.error().message);
      out.tensors[n] = *t;
    } else {
      auto ts = st ? parseSafetensors(bytes, &budget) : parsePt(bytes, &budget);
      if (!ts.ok()) return Error::Invalid(path + ": " + ts.error().message);
      for (auto& t : *ts) out.tensors[n + ":" + t.name] = t;
    }
  }
  return out;
}

std::string shapeStr(const std::vector<int64_t>& s) {
  std::string o = "(";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + (s.size() == 1 ? ",)" : ")");
}

// "a, b, c and 4 more"
std::string some(const std::vector<std::string>& v, size_t n = 5) {
  std::vector<std::string> head(v.begin(), v.begin() + static_cast<long>(std::min(n, v.size())));
  std::string s = util::join(head, ", ");
  if (v.size() > n) s += " and " + std::to_string(v.size() - n) + " more";
  return s;
}

// Row r of `t` is one sample when its first dimension counts the ids.
bool perSample(const Tensor& t, size_t ids) {
  return !t.shape.empty() && ids > 0 && t.shape[0] == static_cast<int64_t>(ids);
}

// The rows of `t` in the order `order` gives (order[i]: the row of t that is sample i).
Tensor reorder(const Tensor& t, const std::vector<size_t>& order) {
  Tensor o = t;
  size_t width = t.shape[0] ? t.values.size() / static_cast<size_t>(t.shape[0]) : 0;
  for (size_t i = 0; i < order.size(); ++i)
    std::copy_n(t.values.begin() + static_cast<long>(order[i] * width), width,
                o.values.begin() + static_cast<long>(i * width));
  return o;
}

// One sample check: the steps in order, sharing what they found. A finding that makes later
// comparisons meaningless (a missing output, other ids, another shape) stops them: they are
// skipped, naming it.
class SampleCheck {
 public:
  SampleCheck(const std::string& outDir, const Reference& ref)
      : outDir_(outDir),
        ref_(ref),
        idsFile_(ref.result.ids),
        expectedDir_(ref.resolve(ref.result.expected)),
        r_("sample check") {}

  report::Report run() {
    r_.declareSteps({"reference", "expected", "load", "count", "ids", "format", "finite", "compare"});
    r_.subject()["reference"] = outDir_;
    r_.runStep("reference", [&] { return criteria(); });
    r_.runStep("expected", [&] { return expectedUnchanged(); });
    r_.runStep("load", [&] { return loadOutputs(); });
    step("count", [&] { return count(); });
    step("ids", [&] { return ids(); });
    step("format", [&] { return format(); });
    // From here on, actual rows are in the expected samples' order.
    if (stopped_.empty() && !order_.empty())
      for (auto& [k, a] : actual_.tensors)
        if (perSample(a, order_.size())) a = reorder(a, order_);
    step("finite", [&] { return finite(); });
    step("compare", [&] { return compareAll(); });
    return std::move(r_);
  }

 private:
  void stop(const std::string& code, const std::string& msg, std::map<std::string, std::string> ev = {}) {
    r_.add(code, Severity::Error, msg, std::move(ev));
    stopped_ = msg;
  }
  void step(const std::string& name, const std::function<Status()>& fn) {
    if (!stopped_.empty())
      r_.skipStep(name, "not checked: " + stopped_);
    else
      r_.runStep(name, fn);
  }
  // The expected ids when `t` holds one row per sample, none otherwise.
  std::vector<std::string> idsOf(const Tensor& t) const {
    if (perSample(t, expected_.ids.size())) return expected_.ids;
    return std::vector<std::string>();
  }

  // reference: the declared criteria, parsed.
  Status criteria() {
    if (!ref_.result.declared || ref_.result.criteria.empty())
      return Error::Invalid(
          "the reference declares no expected outputs and criterion (reference init --expected --criterion --why)");
    json list = json::array();
    for (const auto& [text, why] : ref_.result.criteria) {
      KDK_TRY_ASSIGN(Criterion c, parseCriterion(text));
      criteria_.emplace_back(c, why);
      list.push_back({{"criterion", c.str()}, {"why", why}});
    }
    r_.subject()["criteria"] = list;
    return {};
  }

  // expected: the expected outputs still have the hash the reference recorded.
  Status expectedUnchanged() {
    auto h = hashPath(expectedDir_);
    if (!h.ok()) return Error::NotFound("the expected outputs cannot be read: " + h.error().message);
    if (h->sha256 != ref_.result.expectedSha256) {
      std::string msg = "the expected outputs in " + expectedDir_ +
                        " changed since the reference was declared (sha256 " + h->sha256.substr(0, 12) +
                        " instead of " + ref_.result.expectedSha256.substr(0, 12) +
                        "): the reference is in question, not these outputs";
      r_.add("sample.expected.changed", Severity::Error, msg, {{"path", expectedDir_}});
      return Error::Corrupt(msg);
    }
    return {};
  }

  // load: the expected outputs and the new ones, their elements charged to one budget.
  Status loadOutputs() {
    TensorBudget budget;  // both folders together
    KDK_TRY_ASSIGN(expected_, load(expectedDir_, idsFile_, budget));
    KDK_TRY_ASSIGN(actual_, load(outDir_, idsFile_, budget));
    if (!idsFile_.empty() && !expected_.hasIds) return Error::NotFound("the expected outputs have no " + idsFile_);
    return {};
  }

  // count: the same output files and tensors on both sides.
  Status count() {
    std::vector<std::string> missing, extra;
    for (const auto& [k, v] : expected_.tensors)
      if (!actual_.tensors.count(k)) missing.push_back(k);
    for (const auto& [k, v] : actual_.tensors)
      if (!expected_.tensors.count(k)) extra.push_back(k);
    if (!missing.empty() || !extra.empty()) {
      std::string msg = std::to_string(actual_.tensors.size()) + " output(s) where " +
                        std::to_string(expected_.tensors.size()) + " are expected";
      if (!missing.empty()) msg += "; missing " + some(missing);
      if (!extra.empty()) msg += "; unexpected " + some(extra);
      stop("sample.count", msg);
    }
    return {};
  }

  // ids: the same samples on both sides, each once; order_ says where each expected one is.
  Status ids() {
    if (idsFile_.empty()) {
      r_.skipStep("ids", "the reference names no ids file: rows are compared in order");
      return {};
    }
    if (!actual_.hasIds) {
      stop("sample.ids", "the outputs have no " + idsFile_ + ": rows cannot be matched to samples");
      return {};
    }
    std::map<std::string, size_t> where;
    std::vector<std::string> dup;
    for (size_t i = 0; i < actual_.ids.size(); ++i)
      if (!where.emplace(actual_.ids[i], i).second) dup.push_back(actual_.ids[i]);
    std::set<std::string> want(expected_.ids.begin(), expected_.ids.end());
    std::vector<std::string> missing, extra;
    for (const auto& id : expected_.ids)
      if (!where.count(id)) missing.push_back(id);
    for (const auto& id : actual_.ids)
      if (!want.count(id)) extra.push_back(id);
    if (!dup.empty())
      stop("sample.ids", "id(s) listed twice in the outputs: " + some(dup), {{"id", dup[0]}});
    else if (!missing.empty() || !extra.empty())
      stop("sample.ids",
           std::string("the outputs' ids differ from the reference sample's") +
               (missing.empty() ? "" : "; missing " + some(missing)) +
               (extra.empty() ? "" : "; unexpected " + some(extra)),
           {{"id", missing.empty() ? extra[0] : missing[0]}});
    else
      for (const auto& id : expected_.ids) order_.push_back(where[id]);
    bool moved = false;
    for (size_t i = 0; i < order_.size(); ++i) moved |= order_[i] != i;
    r_.section("ids") = {{"count", expected_.ids.size()}, {"reordered", moved}};
    return {};
  }

  // format: each output's dtype and shape as the reference's.
  Status format() {
    for (const auto& [k, e] : expected_.tensors) {
      const Tensor& a = actual_.tensors.at(k);
      if (a.dtype != e.dtype) {
        stop("sample.dtype", k + " is " + a.dtype + ", the reference " + e.dtype, {{"path", k}});
        return {};
      }
      if (a.shape != e.shape) {
        stop("sample.shape", k + " has shape " + shapeStr(a.shape) + ", the reference " + shapeStr(e.shape),
             {{"path", k}});
        return {};
      }
    }
    return {};
  }

  // finite: no NaN or Inf in the outputs, named by sample.
  Status finite() {
    for (const auto& [k, a] : actual_.tensors) {
      int64_t rows = a.shape.empty() ? 1 : a.shape[0];
      size_t width = rows > 0 ? a.values.size() / static_cast<size_t>(rows) : 0;
      std::vector<std::string> bad, ids = idsOf(a);
      int64_t count = 0;
      for (int64_t row = 0; row < rows; ++row) {
        int64_t n = 0;
        for (size_t i = 0; i < width; ++i) n += std::isfinite(a.values[static_cast<size_t>(row) * width + i]) ? 0 : 1;
        if (n) bad.push_back(ids.empty() ? "row " + std::to_string(row) : ids[static_cast<size_t>(row)]), count += n;
      }
      if (!bad.empty()) {
        stop("sample.nonfinite",
             k + " holds " + std::to_string(count) + " NaN/Inf value(s) in " + std::to_string(bad.size()) +
                 " sample(s): " + some(bad),
             {{"path", k}, {"id", bad[0]}});
        return {};
      }
    }
    return {};
  }

  // compare: every output under every criterion, measured against its threshold.
  Status compareAll() {
    json results = json::array();
    for (const auto& [k, e] : expected_.tensors) {
      const Tensor& a = actual_.tensors.at(k);
      for (const auto& [crit, why] : criteria_) results.push_back(compareOne(k, e, a, crit, why));
    }
    r_.section("comparison") = results;
    return {};
  }

  // One output under one criterion: its row of the comparison section, and its finding.
  json compareOne(const std::string& k, const Tensor& e, const Tensor& a, const Criterion& crit,
                  const std::string& why) {
    Comparison c = compare(crit, e, a, idsOf(e));
    json worst = json::array();
    for (const auto& w : c.worst) worst.push_back({{"id", w.id}, {"value", w.value}});
    json row = {{"output", k},
                {"criterion", crit.str()},
                {"why", why},
                {"pass", c.pass},
                {"measure", c.measure},
                {"measure_name", crit.measureName()},
                {"threshold", crit.threshold},
                {"threshold_text", crit.thresholdText},
                {"samples", c.samples},
                {"beyond", c.beyond},
                {"worst", worst},
                {"summary", c.summary}};
    if (c.pass) {
      r_.add("sample.criterion.met", Severity::Info, k + " meets " + c.summary, {{"path", k}});
      return row;
    }
    std::vector<std::string> offenders;
    for (size_t i = 0; i < std::min<size_t>(3, c.worst.size()); ++i)
      offenders.push_back(c.worst[i].id + " (" + formatAgainst(c.worst[i].value, crit.threshold, crit.digits()) + ")");
    r_.add("sample.mismatch", Severity::Error,
           k + " fails " + c.summary + (offenders.empty() ? "" : "; worst: " + util::join(offenders, ", ")),
           {{"path", k}, {"id", c.worst.empty() ? "" : c.worst[0].id}});
    return row;
  }

  const std::string& outDir_;
  const Reference& ref_;
  std::string idsFile_, expectedDir_;
  report::Report r_;
  std::vector<std::pair<Criterion, std::string>> criteria_;  // with their why
  Outputs expected_, actual_;
  std::vector<size_t> order_;  // actual row of each expected sample, when aligned by id
  std::string stopped_;        // the finding that makes later comparisons meaningless
};

}  // namespace

report::Report sampleCheck(const std::string& outDir, const Reference& ref) { return SampleCheck(outDir, ref).run(); }

}  // namespace kernodeck::record
