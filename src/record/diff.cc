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

// Every field of a reference a reproduction depends on, by the name a user reads in the file.
// Paths are left out: they name places on one machine, the hashes say what is there.
std::map<std::string, std::string> fieldsOf(const Reference& r) {
  std::map<std::string, std::string> m;
  m["code.entry_point"] = r.code.entryPoint;
  m["code.preprocessing"] = r.code.preprocessing;
  for (const auto& [k, v] : r.code.parameters) m["code.parameters." + k] = v;
  m["result.expected_sha256"] = r.result.expectedSha256;
  m["result.ids"] = r.result.ids;
  for (const auto& [text, why] : r.result.criteria) m["result.criteria " + text] = why;
  for (const auto& o : r.outputs) {
    std::string shape;
    for (auto d : o.shape) shape += (shape.empty() ? "" : "x") + std::to_string(d);
    m["result.outputs." + o.name] = o.dtype + " " + shape;
  }
  for (const auto& [k, v] : r.seeds) m["seeds." + k] = v;
  for (const auto& [k, v] : r.determinism) m["determinism." + k] = v;
  for (const auto& [k, v] : r.environment) m["environment." + k] = v;
  m["system.os"] = r.system.os;
  m["system.architecture"] = r.system.architecture;
  if (r.system.threads)
    m["system.cpu"] = r.system.cpuModel + " (" + std::to_string(r.system.cores) + " cores, " + std::to_string(r.system.threads) + " threads)";
  m["system.accelerator"] = r.system.accelerator;
  for (auto it = m.begin(); it != m.end();) it = it->second.empty() && it->first.rfind("result.criteria ", 0) != 0 ? m.erase(it) : std::next(it);
  return m;
}

// Two reports step by step (status and first error) and finding by finding (counts per code).
void diffReports(const ReportDoc& a, const ReportDoc& b, report::Report& r) {
  if (a.command != b.command)
    r.add("diff.report.kind", Severity::Warning, "A is a '" + a.command + "' report, B a '" + b.command + "' report");
  std::map<std::string, const ReportDoc::Step*> sb;
  for (const auto& s : b.steps) sb[s.name] = &s;
  for (const auto& s : a.steps) {
    auto it = sb.find(s.name);
    if (it == sb.end()) {
      r.add("diff.step.not_recorded", Severity::Info, "step " + s.name + " is not recorded in B", {{"name", s.name}});
      continue;
    }
    if (it->second->status != s.status)
      r.add("diff.step.changed", Severity::Warning,
            "step " + s.name + ": " + s.status + " in A, " + it->second->status + " in B" + (it->second->error.empty() ? "" : " (" + it->second->error + ")"),
            {{"name", s.name}});
  }
  std::map<std::string, std::pair<int, int>> counts;
  for (const auto& f : a.findings) counts[f.code].first++;
  for (const auto& f : b.findings) counts[f.code].second++;
  for (const auto& [code, c] : counts)
    if (c.first != c.second)
      r.add("diff.finding.changed", Severity::Warning, code + ": " + std::to_string(c.first) + " in A, " + std::to_string(c.second) + " in B",
            {{"name", code}});
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
    if (a.reference && b.reference) {
      auto ra = fieldsOf(*a.reference), rb = fieldsOf(*b.reference);
      for (const auto& [k, v] : ra) {
        auto it = rb.find(k);
        bool criterion = k.rfind("result.criteria ", 0) == 0;
        if (it == rb.end())
          r.add(criterion ? "diff.reference.changed" : "diff.reference.not_recorded", criterion ? Severity::Error : Severity::Info,
                criterion ? "criterion " + k.substr(16) + " is only in A" : k + " is not recorded in B", {{"name", k}});
        else if (it->second != v)
          r.add("diff.reference.changed", k.rfind("system.", 0) == 0 ? Severity::Warning : Severity::Error,
                criterion ? "criterion " + k.substr(16) + " has another why" : k + ": '" + v + "' in A, '" + it->second + "' in B", {{"name", k}});
      }
      for (const auto& [k, v] : rb)
        if (!ra.count(k))
          r.add(k.rfind("result.criteria ", 0) == 0 ? "diff.reference.changed" : "diff.reference.not_recorded",
                k.rfind("result.criteria ", 0) == 0 ? Severity::Error : Severity::Info,
                k.rfind("result.criteria ", 0) == 0 ? "criterion " + k.substr(16) + " is only in B" : k + " is not recorded in A", {{"name", k}});
    }
    if (a.report && b.report && !a.report->schema.empty() && !b.report->schema.empty()) diffReports(*a.report, *b.report, r);
    std::map<std::string, int> bySeverity;
    for (const auto& f : r.findings()) bySeverity[report::toString(f.severity)]++;
    r.section("diff") = {{"packages_a", fa.size()}, {"packages_b", fb.size()}, {"differences", bySeverity}};
    return {};
  });
  return r;
}

}  // namespace kernodeck::record
