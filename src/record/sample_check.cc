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

}  // namespace

report::Report sampleCheck(const std::string& outDir, const Reference& ref) {
  report::Report r("sample check");
  r.declareSteps({"reference", "expected", "load", "count", "ids", "format", "finite", "compare"});
  r.subject()["reference"] = outDir;
  std::vector<std::pair<Criterion, std::string>> criteria;  // with their why
  Outputs expected, actual;
  std::string idsFile = ref.result.ids, expectedDir = ref.resolve(ref.result.expected);
  std::vector<size_t> order;  // actual row of each expected sample, when aligned by id
  std::string stopped;        // the finding that makes later comparisons meaningless
  auto stop = [&](const std::string& code, const std::string& msg, std::map<std::string, std::string> ev = {}) {
    r.add(code, Severity::Error, msg, std::move(ev));
    stopped = msg;
  };
  auto step = [&](const std::string& name, const std::function<Status()>& fn) {
    if (!stopped.empty())
      r.skipStep(name, "not checked: " + stopped);
    else
      r.runStep(name, fn);
  };
  r.runStep("reference", [&]() -> Status {
    if (!ref.result.declared || ref.result.criteria.empty())
      return Error::Invalid(
          "the reference declares no expected outputs and criterion (reference init --expected --criterion --why)");
    json list = json::array();
    for (const auto& [text, why] : ref.result.criteria) {
      KDK_TRY_ASSIGN(Criterion c, parseCriterion(text));
      criteria.emplace_back(c, why);
      list.push_back({{"criterion", c.str()}, {"why", why}});
    }
    r.subject()["criteria"] = list;
    return {};
  });
  r.runStep("expected", [&]() -> Status {
    auto h = hashPath(expectedDir);
    if (!h.ok()) return Error::NotFound("the expected outputs cannot be read: " + h.error().message);
    if (h->sha256 != ref.result.expectedSha256) {
      std::string msg = "the expected outputs in " + expectedDir +
                        " changed since the reference was declared (sha256 " + h->sha256.substr(0, 12) +
                        " instead of " + ref.result.expectedSha256.substr(0, 12) +
                        "): the reference is in question, not these outputs";
      r.add("sample.expected.changed", Severity::Error, msg, {{"path", expectedDir}});
      return Error::Corrupt(msg);
    }
    return {};
  });
  r.runStep("load", [&]() -> Status {
    TensorBudget budget;  // both folders together
    KDK_TRY_ASSIGN(expected, load(expectedDir, idsFile, budget));
    KDK_TRY_ASSIGN(actual, load(outDir, idsFile, budget));
    if (!idsFile.empty() && !expected.hasIds) return Error::NotFound("the expected outputs have no " + idsFile);
    return {};
  });
  step("count", [&]() -> Status {
    std::vector<std::string> missing, extra;
    for (const auto& [k, v] : expected.tensors)
      if (!actual.tensors.count(k)) missing.push_back(k);
    for (const auto& [k, v] : actual.tensors)
      if (!expected.tensors.count(k)) extra.push_back(k);
    if (!missing.empty() || !extra.empty()) {
      std::string msg = std::to_string(actual.tensors.size()) + " output(s) where " +
                        std::to_string(expected.tensors.size()) + " are expected";
      if (!missing.empty()) msg += "; missing " + some(missing);
      if (!extra.empty()) msg += "; unexpected " + some(extra);
      stop("sample.count", msg);
    }
    return {};
  });
  step("ids", [&]() -> Status {
    if (idsFile.empty()) {
      r.skipStep("ids", "the reference names no ids file: rows are compared in order");
      return {};
    }
    if (!actual.hasIds) {
      stop("sample.ids", "the outputs have no " + idsFile + ": rows cannot be matched to samples");
      return {};
    }
    std::map<std::string, size_t> where;
    std::vector<std::string> dup;
    for (size_t i = 0; i < actual.ids.size(); ++i)
      if (!where.emplace(actual.ids[i], i).second) dup.push_back(actual.ids[i]);
    std::set<std::string> want(expected.ids.begin(), expected.ids.end());
    std::vector<std::string> missing, extra;
    for (const auto& id : expected.ids)
      if (!where.count(id)) missing.push_back(id);
    for (const auto& id : actual.ids)
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
      for (const auto& id : expected.ids) order.push_back(where[id]);
    bool moved = false;
    for (size_t i = 0; i < order.size(); ++i) moved |= order[i] != i;
    r.section("ids") = {{"count", expected.ids.size()}, {"reordered", moved}};
    return {};
  });
  step("format", [&]() -> Status {
    for (const auto& [k, e] : expected.tensors) {
      const Tensor& a = actual.tensors.at(k);
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
  });
  // From here on, actual rows are in the expected samples' order.
  if (stopped.empty() && !order.empty())
    for (auto& [k, a] : actual.tensors)
      if (perSample(a, order.size())) a = reorder(a, order);
  auto idsOf = [&](const Tensor& t) {
    if (perSample(t, expected.ids.size())) return expected.ids;
    return std::vector<std::string>();
  };
  step("finite", [&]() -> Status {
    for (const auto& [k, a] : actual.tensors) {
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
  });
  step("compare", [&]() -> Status {
    json results = json::array();
    for (const auto& [k, e] : expected.tensors) {
      const Tensor& a = actual.tensors.at(k);
      for (const auto& [crit, why] : criteria) {
        Comparison c = compare(crit, e, a, idsOf(e));
        json worst = json::array();
        for (const auto& w : c.worst) worst.push_back({{"id", w.id}, {"value", w.value}});
        results.push_back({{"output", k},
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
                           {"summary", c.summary}});
        if (c.pass) {
          r.add("sample.criterion.met", Severity::Info, k + " meets " + c.summary, {{"path", k}});
          continue;
        }
        std::vector<std::string> offenders;
        for (size_t i = 0; i < std::min<size_t>(3, c.worst.size()); ++i)
          offenders.push_back(c.worst[i].id + " (" + formatAgainst(c.worst[i].value, crit.threshold, crit.digits()) +
                              ")");
        r.add("sample.mismatch", Severity::Error,
              k + " fails " + c.summary + (offenders.empty() ? "" : "; worst: " + util::join(offenders, ", ")),
              {{"path", k}, {"id", c.worst.empty() ? "" : c.worst[0].id}});
      }
    }
    r.section("comparison") = results;
    return {};
  });
  return r;
}

}  // namespace kernodeck::record
