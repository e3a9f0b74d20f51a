#include "kernodeck/report/audit_diff.h"

#include <map>
#include <set>
#include <tuple>

namespace kernodeck::report {

namespace {

using nlohmann::json;

// (environment, package) -> version: "dpkg" for OS packages, the prefix for a Python environment.
std::map<std::pair<std::string, std::string>, std::string> packagesOf(const json& r) {
  std::map<std::pair<std::string, std::string>, std::string> out;
  if (r.contains("os_packages") && r["os_packages"].is_object() && r["os_packages"].contains("packages") &&
      r["os_packages"]["packages"].is_array())
    for (const auto& p : r["os_packages"]["packages"]) {
      std::string arch = stringAt(p, "architecture");
      out[{"dpkg", stringAt(p, "name") + (arch.empty() || arch == "all" ? "" : ":" + arch)}] = stringAt(p, "version");
    }
  if (r.contains("python") && r["python"].is_object() && r["python"].contains("environments") &&
      r["python"]["environments"].is_array())
    for (const auto& e : r["python"]["environments"]) {
      if (!e.contains("packages") || !e["packages"].is_array()) continue;
      for (const auto& p : e["packages"]) {
        auto key = std::make_pair(stringAt(e, "prefix"), stringAt(p, "name"));
        if (!out.count(key)) out[key] = stringAt(p, "version");  // the first on the path is the one imported
      }
    }
  return out;
}

// A finding as it is matched across reports: its code, package and path (or message when it has
// no path). Layer indexes and digests differ between images, so they are not part of it.
using FindingKey = std::tuple<std::string, std::string, std::string>;

std::map<FindingKey, const json*> findingsOf(const json& r) {
  std::map<FindingKey, const json*> out;
  if (!r.contains("findings") || !r["findings"].is_array()) return out;
  for (const auto& f : r["findings"]) {
    std::string path = stringAt(f, "path");
    out.emplace(FindingKey{stringAt(f, "code"), stringAt(f, "package"), path.empty() ? stringAt(f, "message") : path},
                &f);
  }
  return out;
}

std::map<std::string, std::string> evidenceOf(const json& f) {
  std::map<std::string, std::string> ev;
  for (auto it = f.begin(); it != f.end(); ++it)
    if (it.key() != "code" && it.key() != "severity" && it.key() != "message" && it.value().is_string())
      ev[it.key()] = it.value().get<std::string>();
  ev["finding"] = stringAt(f, "code");
  return ev;
}

}  // namespace

bool isAuditReport(const json& j) {
  return j.is_object() && stringAt(j, "schema") == Report::kSchema && j.contains("tool") &&
         stringAt(j["tool"], "command") == "audit";
}

Report diffAuditReports(const json& a, const json& b, const std::string& nameA, const std::string& nameB) {
  Report r("diff");
  r.subject()["reference"] = nameA + " -> " + nameB;
  r.subject()["a"] = a.contains("subject") ? a["subject"] : json(nullptr);
  r.subject()["b"] = b.contains("subject") ? b["subject"] : json(nullptr);
  r.declareSteps({"compare"});
  r.runStep("compare", [&]() -> Status {
    auto pa = packagesOf(a), pb = packagesOf(b);
    size_t added = 0, removed = 0, changed = 0;
    for (const auto& [key, va] : pa) {
      const auto& [env, name] = key;
      auto it = pb.find(key);
      if (it == pb.end()) {
        ++removed;
        r.add("diff.package.removed", Severity::Warning, name + " " + va + " (" + env + ") is only in A",
              {{"package", name}, {"environment", env}, {"version_a", va}});
      } else if (it->second != va) {
        ++changed;
        r.add("diff.package.changed", Severity::Warning,
              name + " (" + env + ") is " + va + " in A and " + it->second + " in B",
              {{"package", name}, {"environment", env}, {"version_a", va}, {"version_b", it->second}});
      }
    }
    for (const auto& [key, vb] : pb)
      if (!pa.count(key)) {
        ++added;
        r.add("diff.package.added", Severity::Warning, key.second + " " + vb + " (" + key.first + ") is only in B",
              {{"package", key.second}, {"environment", key.first}, {"version_b", vb}});
      }
    auto fa = findingsOf(a), fb = findingsOf(b);
    size_t fresh = 0, gone = 0;
    for (const auto& [key, f] : fb)
      if (!fa.count(key)) {
        ++fresh;
        Severity sev = parseSeverity(stringAt(*f, "severity")).value_or(Severity::Warning);
        r.add("diff.finding.new", sev, "new in B: " + std::get<0>(key) + ": " + stringAt(*f, "message"),
              evidenceOf(*f));
      }
    for (const auto& [key, f] : fa)
      if (!fb.count(key)) {
        ++gone;
        r.add("diff.finding.gone", Severity::Info, "gone in B: " + std::get<0>(key) + ": " + stringAt(*f, "message"),
              evidenceOf(*f));
      }
    r.section("diff") = {{"packages_a", pa.size()},     {"packages_b", pb.size()},     {"packages_added", added},
                         {"packages_removed", removed}, {"packages_changed", changed}, {"findings_new", fresh},
                         {"findings_gone", gone}};
    return {};
  });
  return r;
}

}  // namespace kernodeck::report
