// kernodeck diff: two references, reports or inventories, compared on the typed documents.
#include "kernodeck/record/record.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using nlohmann::json;
using report::Severity;

namespace {

// "prefix name" -> version, from pip freeze lines and dpkg packages.
std::map<std::string, std::string> packagesOf(const DiffInput& d) {
  std::map<std::string, std::string> out;
  const std::vector<Environment>& envs = d.reference ? d.reference->packages.environments : d.report->environments;
  for (const auto& e : envs)
    for (const auto& s : e.freeze) {
      size_t sep = s.find("==") != std::string::npos ? s.find("==") : s.find(" @ ");
      std::string name = util::toLower(s.substr(0, sep));
      out[e.prefix + " " + name] = sep == std::string::npos ? "" : s.substr(sep + (s[sep] == '=' ? 2 : 3));
    }
  if (d.report)
    for (const auto& [name, version] : d.report->osPackages) out["dpkg " + name] = version;
  return out;
}

// Inputs by what they are: data, weights, code revision, configs, image digest.
std::map<std::string, std::string> inputsOf(const DiffInput& d) {
  std::map<std::string, std::string> out;
  if (d.reference) {
    const Reference& r = *d.reference;
    for (const auto& in : r.data) out["data " + in.name] = in.sha256;
    for (const auto& in : r.weights) out["weights " + in.name] = in.sha256;
    if (!r.code.revision.empty()) out["code revision"] = r.code.revision;
    for (const auto& c : r.code.configs) out["config " + c.path] = c.sha256;
    if (!r.packages.manifestDigest.empty()) out["image digest"] = r.packages.manifestDigest;
  } else if (!d.report->manifestDigest.empty()) {
    out["image digest"] = d.report->manifestDigest;
  }
  return out;
}

std::string systemOf(const Reference& r) {
  if (!r.system.nvidia) return "no NVIDIA driver";
  return "driver " + (r.system.driverVersion.empty() ? std::string("?") : r.system.driverVersion) + ", " + std::to_string(r.system.gpus) + " GPU(s)";
}

}  // namespace

Result<DiffInput> parseDiffInput(const json& j) {
  DiffInput d;
  if (j.is_object() && j.contains("schema") && j.at("schema") == "kernodeck.reference/v1") {
    KDK_TRY_ASSIGN(d.reference, parseReference(j));
    return d;
  }
  auto rep = parseReportDoc(j);
  if (!rep.ok()) return Error::Invalid(rep.error().message + " (diff compares kernodeck.reference/v1, kernodeck.report/v1 and dossier inventories)");
  d.report = std::move(rep).value();
  return d;
}

report::Report diffRecords(const DiffInput& a, const DiffInput& b) {
  report::Report r("diff");
  r.declareSteps({"compare"});
  r.runStep("compare", [&]() -> Status {
    r.subject()["a"] = a.reference ? "kernodeck.reference/v1" : a.report->schema.empty() ? "inventory" : a.report->schema;
    r.subject()["b"] = b.reference ? "kernodeck.reference/v1" : b.report->schema.empty() ? "inventory" : b.report->schema;
    auto fa = packagesOf(a), fb = packagesOf(b);
    for (const auto& [k, v] : fa) {
      auto it = fb.find(k);
      if (it == fb.end()) r.add("diff.package.removed", Severity::Warning, k + " " + v + " is only in A", {{"package", k}});
      else if (it->second != v) r.add("diff.package.changed", Severity::Warning, k + " is " + v + " in A and " + it->second + " in B", {{"package", k}});
    }
    for (const auto& [k, v] : fb)
      if (!fa.count(k)) r.add("diff.package.added", Severity::Warning, k + " " + v + " is only in B", {{"package", k}});
    auto da = inputsOf(a), db = inputsOf(b);
    for (const auto& [k, v] : da)
      if (auto it = db.find(k); it != db.end() && it->second != v) r.add("diff.input.changed", Severity::Error, k + " differs", {{"name", k}});
    if (a.reference && b.reference && a.reference->system.recorded && systemOf(*a.reference) != systemOf(*b.reference))
      r.add("diff.system.changed", Severity::Warning, "system: " + systemOf(*a.reference) + " in A, " + systemOf(*b.reference) + " in B");
    r.section("diff") = {{"packages_a", fa.size()}, {"packages_b", fb.size()}};
    return {};
  });
  return r;
}

}  // namespace kernodeck::record
