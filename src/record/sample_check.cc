// kernodeck sample check: outputs reloaded from disk, checked against the
// reference's expected outputs step by step (load, count, format, finite, ids,
// compare); the first error is kept and later steps are not reached.
#include <algorithm>
#include <cmath>
#include <dirent.h>
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

Result<Outputs> load(const std::string& dir, const std::string& idsFile) {
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
      auto t = parseNpy(bytes);
      if (!t.ok()) return Error::Invalid(path + ": " + t.error().message);
      out.tensors[n] = *t;
    } else {
      auto ts = st ? parseSafetensors(bytes) : parsePt(bytes);
      if (!ts.ok()) return Error::Invalid(path + ": " + ts.error().message);
      for (auto& t : *ts) out.tensors[n + ":" + t.name] = t;
    }
  }
  return out;
}

std::string shapeStr(const std::vector<int64_t>& s) {
  std::string o = "(";
  for (size_t i = 0; i < s.size(); ++i) o += (i ? ", " : "") + std::to_string(s[i]);
  return o + ")";
}

}  // namespace

report::Report sampleCheck(const std::string& outDir, const Reference& ref) {
  report::Report r("sample check");
  r.declareSteps({"reference", "load", "count", "format", "finite", "ids", "compare"});
  r.subject()["reference"] = outDir;
  Criterion crit;
  Outputs expected, actual;
  std::string idsFile;
  r.runStep("reference", [&]() -> Status {
    if (!ref.result.declared)
      return Error::Invalid("the reference declares no expected outputs and criterion (reference init --expected --criterion --why)");
    KDK_TRY_ASSIGN(crit, parseCriterion(ref.result.criterion));
    idsFile = ref.result.ids;
    r.subject()["criterion"] = crit.str();
    r.subject()["why"] = ref.result.why;
    return {};
  });
  r.runStep("load", [&]() -> Status {
    KDK_TRY_ASSIGN(expected, load(ref.result.expected, idsFile));
    KDK_TRY_ASSIGN(actual, load(outDir, idsFile));
    return {};
  });
  r.runStep("count", [&]() -> Status {
    std::vector<std::string> missing, extra;
    for (const auto& [k, v] : expected.tensors)
      if (!actual.tensors.count(k)) missing.push_back(k);
    for (const auto& [k, v] : actual.tensors)
      if (!expected.tensors.count(k)) extra.push_back(k);
    if (!missing.empty() || !extra.empty()) {
      std::string msg = std::to_string(actual.tensors.size()) + " output(s) where " + std::to_string(expected.tensors.size()) + " are expected";
      if (!missing.empty()) msg += "; missing " + util::join(missing, ", ");
      if (!extra.empty()) msg += "; unexpected " + util::join(extra, ", ");
      r.add("sample.count", Severity::Error, msg);
      return Error::Invalid(msg);
    }
    return {};
  });
  r.runStep("format", [&]() -> Status {
    for (const auto& [k, e] : expected.tensors) {
      const Tensor& a = actual.tensors.at(k);
      if (a.shape != e.shape) {
        std::string msg = k + " has shape " + shapeStr(a.shape) + ", the reference " + shapeStr(e.shape);
        r.add("sample.shape", Severity::Error, msg, {{"path", k}});
        return Error::Invalid(msg);
      }
      if (a.dtype != e.dtype) {
        std::string msg = k + " is " + a.dtype + ", the reference " + e.dtype;
        r.add("sample.dtype", Severity::Error, msg, {{"path", k}});
        return Error::Invalid(msg);
      }
    }
    return {};
  });
  r.runStep("finite", [&]() -> Status {
    for (const auto& [k, a] : actual.tensors) {
      int64_t bad = std::count_if(a.values.begin(), a.values.end(), [](double v) { return !std::isfinite(v); });
      if (bad) {
        std::string msg = k + " holds " + std::to_string(bad) + " NaN/Inf value(s)";
        r.add("sample.nonfinite", Severity::Error, msg, {{"path", k}});
        return Error::Invalid(msg);
      }
    }
    return {};
  });
  r.runStep("ids", [&]() -> Status {
    if (idsFile.empty()) {
      r.skipStep("ids", "the reference names no ids file");
      return {};
    }
    if (!actual.hasIds) {
      r.add("sample.ids", Severity::Error, "the outputs have no " + idsFile);
      return Error::Invalid("the outputs have no " + idsFile);
    }
    std::set<std::string> seen;
    for (const auto& id : actual.ids)
      if (!seen.insert(id).second) {
        r.add("sample.ids", Severity::Error, "id '" + id + "' appears twice in the outputs");
        return Error::Invalid("duplicate id '" + id + "'");
      }
    if (actual.ids != expected.ids) {
      bool sameSet = std::set<std::string>(expected.ids.begin(), expected.ids.end()) == seen;
      std::string msg = sameSet ? "the outputs' ids are the reference's in another order: the id correspondence is broken"
                                : "the outputs' ids differ from the reference sample's";
      r.add("sample.ids", Severity::Error, msg);
      return Error::Invalid(msg);
    }
    return {};
  });
  r.runStep("compare", [&]() -> Status {
    json results = json::array();
    bool allPass = true;
    for (const auto& [k, e] : expected.tensors) {
      Comparison c = compare(crit, e, actual.tensors.at(k), expected.ids);
      json worst = json::array();
      for (const auto& w : c.worst) worst.push_back({{"id", w.id}, {"error", w.error}});
      results.push_back({{"output", k}, {"pass", c.pass}, {"measure", c.measure}, {"worst", worst}, {"summary", c.summary}});
      if (!c.pass) {
        allPass = false;
        std::string offenders;
        for (size_t i = 0; i < std::min<size_t>(3, c.worst.size()); ++i)
          offenders += (i ? ", " : "") + c.worst[i].id + " (" + std::to_string(c.worst[i].error) + ")";
        r.add("sample.mismatch", Severity::Error, k + " fails " + c.summary + "; worst: " + offenders, {{"path", k}});
      }
    }
    r.section("comparison") = results;
    if (!allPass) return Error::Invalid("outputs differ from the reference beyond " + crit.str());
    return {};
  });
  return r;
}

}  // namespace kernodeck::record
