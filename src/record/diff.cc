// kernodeck diff: two references, reports or inventories, compared on the typed documents.
#include <algorithm>

#include "kernodeck/python/version.h"
#include "kernodeck/record/record.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using nlohmann::json;
using report::Severity;

namespace {

// One side's packages: each Python environment's freeze lines by PEP 503 name, and the OS
// packages when the document records them.
struct Packages {
  struct Env {
    std::string prefix, interpreter;
    std::map<std::string, std::string> versions;  // normalised name -> version ("" for a URL line)
    std::map<std::string, std::string> shown;     // normalised name -> the name as the line spells it
  };
  std::vector<Env> envs;
  bool os = false;
  std::map<std::string, std::string> dpkg;
  size_t count() const {
    size_t n = dpkg.size();
    for (const auto& e : envs) n += e.versions.size();
    return n;
  }
};

Packages packagesOf(const DiffInput& d) {
  Packages out;
  const std::vector<Environment>& envs = d.reference ? d.reference->packages.environments : d.report->environments;
  for (const auto& e : envs) {
    Packages::Env env{e.prefix, e.interpreter, {}, {}};
    for (const auto& s : e.freeze) {
      if (s.empty() || s[0] == '#' || s[0] == '-') continue;  // comments and pip options name no package
      size_t sep = s.find("==") != std::string::npos ? s.find("==") : s.find(" @ ");
      std::string name(util::trim(s.substr(0, sep))), key = python::canonicalizeName(name);
      env.versions[key] =
          sep == std::string::npos ? "" : std::string(util::trim(s.substr(sep + (s[sep] == '=' ? 2 : 3))));
      env.shown[key] = name;
    }
    out.envs.push_back(std::move(env));
  }
  if (d.report && d.report->hasOsPackages) {
    out.os = true;
    for (const auto& [name, version] : d.report->osPackages) out.dpkg[name] = version;
  }
  return out;
}

// Whether prefix a names the same place as b seen from another root: a dir:/ audit of a mounted
// tree reports "/mnt/root/usr/local" where the image's audit reports "/usr/local".
bool samePlace(const std::string& a, const std::string& b) {
  auto endsWith = [](const std::string& s, const std::string& tail) {
    return tail.size() > 1 && s.size() > tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0 &&
           s[s.size() - tail.size() - 1] != '/' && tail[0] == '/';
  };
  return endsWith(a, b) || endsWith(b, a);
}

// Pairs each environment of A with the environment of B it is to be compared with: the same
// prefix; else the same place under another root; else the same interpreter; else, when one
// environment is left on each side, those two. -1 when B has none to compare with.
std::vector<int> pairEnvironments(const Packages& a, const Packages& b) {
  std::vector<int> pair(a.envs.size(), -1);
  std::vector<bool> used(b.envs.size(), false);
  auto match = [&](auto&& same) {
    for (size_t i = 0; i < a.envs.size(); ++i)
      for (size_t j = 0; pair[i] < 0 && j < b.envs.size(); ++j)
        if (!used[j] && same(a.envs[i], b.envs[j])) pair[i] = static_cast<int>(j), used[j] = true;
  };
  match([](const Packages::Env& x, const Packages::Env& y) { return x.prefix == y.prefix; });
  match([](const Packages::Env& x, const Packages::Env& y) { return samePlace(x.prefix, y.prefix); });
  match([](const Packages::Env& x, const Packages::Env& y) {
    return !x.interpreter.empty() && (x.interpreter == y.interpreter || samePlace(x.interpreter, y.interpreter));
  });
  if (std::count(pair.begin(), pair.end(), -1) == 1 && std::count(used.begin(), used.end(), false) == 1)
    pair[std::find(pair.begin(), pair.end(), -1) - pair.begin()] =
        static_cast<int>(std::find(used.begin(), used.end(), false) - used.begin());
  return pair;
}

// Counts of the package comparison, for the summary line.
struct PackageCounts {
  int same = 0, changed = 0, onlyA = 0, onlyB = 0, notRecorded = 0;
};

// One set of packages against another of the same environment, by normalised name.
void comparePackages(const std::string& where, const std::map<std::string, std::string>& va,
                     const std::map<std::string, std::string>& vb, const std::map<std::string, std::string>& shownA,
                     const std::map<std::string, std::string>& shownB, PackageCounts& n, report::Report& r) {
  auto shown = [](const std::map<std::string, std::string>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? k : it->second;
  };
  for (const auto& [k, v] : va) {
    auto it = vb.find(k);
    if (it == vb.end()) {
      n.onlyA++;
      r.add("diff.package.removed", Severity::Warning, shown(shownA, k) + " " + v + " (" + where + ") is only in A",
            {{"package", k}, {"environment", where}});
    } else if (it->second != v) {
      n.changed++;
      r.add("diff.package.changed", Severity::Warning,
            shown(shownA, k) + " (" + where + ") is " + v + " in A and " + it->second + " in B",
            {{"package", k}, {"environment", where}});
    } else {
      n.same++;
    }
  }
  for (const auto& [k, v] : vb)
    if (!va.count(k)) {
      n.onlyB++;
      r.add("diff.package.added", Severity::Warning, shown(shownB, k) + " " + v + " (" + where + ") is only in B",
            {{"package", k}, {"environment", where}});
    }
}

// Like with like: each environment against its pair, the OS packages only when both sides
// record them; an environment or OS inventory one side did not record is one "not recorded"
// line, not a line per package.
PackageCounts diffPackages(const Packages& a, const Packages& b, report::Report& r) {
  PackageCounts n;
  std::vector<int> pair = pairEnvironments(a, b);
  std::vector<bool> used(b.envs.size(), false);
  for (size_t i = 0; i < a.envs.size(); ++i) {
    const auto& ea = a.envs[i];
    if (pair[i] < 0) {
      n.notRecorded++;
      r.add("diff.environment.not_recorded", Severity::Info,
            "environment " + ea.prefix + " (" + std::to_string(ea.versions.size()) + " packages) is not recorded in B",
            {{"environment", ea.prefix}});
      continue;
    }
    const auto& eb = b.envs[pair[i]];
    used[pair[i]] = true;
    comparePackages(ea.prefix == eb.prefix ? ea.prefix : ea.prefix + " / " + eb.prefix, ea.versions, eb.versions,
                    ea.shown, eb.shown, n, r);
  }
  for (size_t j = 0; j < b.envs.size(); ++j)
    if (!used[j]) {
      n.notRecorded++;
      r.add("diff.environment.not_recorded", Severity::Info,
            "environment " + b.envs[j].prefix + " (" + std::to_string(b.envs[j].versions.size()) +
                " packages) is not recorded in A",
            {{"environment", b.envs[j].prefix}});
    }
  if (a.os && b.os) {
    comparePackages("dpkg", a.dpkg, b.dpkg, {}, {}, n, r);
  } else if (a.os != b.os) {
    n.notRecorded++;
    r.add("diff.environment.not_recorded", Severity::Info,
          "the OS packages (" + std::to_string(a.os ? a.dpkg.size() : b.dpkg.size()) + ") are not recorded in " +
              (a.os ? "B" : "A"),
          {{"environment", "dpkg"}});
  }
  return n;
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
  return "driver " + (r.system.driverVersion.empty() ? std::string("?") : r.system.driverVersion) + ", " +
         std::to_string(r.system.gpus) + " GPU(s)";
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
    m["system.cpu"] = r.system.cpuModel + " (" + std::to_string(r.system.cores) + " cores, " +
                      std::to_string(r.system.threads) + " threads)";
  m["system.accelerator"] = r.system.accelerator;
  for (auto it = m.begin(); it != m.end();)
    it = it->second.empty() && it->first.rfind("result.criteria ", 0) != 0 ? m.erase(it) : std::next(it);
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
            "step " + s.name + ": " + s.status + " in A, " + it->second->status + " in B" +
                (it->second->error.empty() ? "" : " (" + it->second->error + ")"),
            {{"name", s.name}});
  }
  std::map<std::string, std::pair<int, int>> counts;
  for (const auto& f : a.findings) counts[f.code].first++;
  for (const auto& f : b.findings) counts[f.code].second++;
  for (const auto& [code, c] : counts)
    if (c.first != c.second)
      r.add("diff.finding.changed", Severity::Warning,
            code + ": " + std::to_string(c.first) + " in A, " + std::to_string(c.second) + " in B", {{"name", code}});
}

}  // namespace

Result<DiffInput> parseDiffInput(const json& j) {
  DiffInput d;
  if (j.is_object() && j.contains("schema") && j.at("schema") == "kernodeck.reference/v1") {
    KDK_TRY_ASSIGN(d.reference, parseReference(j));
    return d;
  }
  auto rep = parseReportDoc(j);
  if (!rep.ok())
    return Error::Invalid(rep.error().message +
                          " (diff compares kernodeck.reference/v1, kernodeck.report/v1 and dossier inventories)");
  d.report = std::move(rep).value();
  return d;
}

report::Report diffRecords(const DiffInput& a, const DiffInput& b) {
  report::Report r("diff");
  r.declareSteps({"compare"});
  r.runStep("compare", [&]() -> Status {
    r.subject()["a"] = a.reference                ? "kernodeck.reference/v1"
                       : a.report->schema.empty() ? "inventory"
                                                  : a.report->schema;
    r.subject()["b"] = b.reference                ? "kernodeck.reference/v1"
                       : b.report->schema.empty() ? "inventory"
                                                  : b.report->schema;
    Packages fa = packagesOf(a), fb = packagesOf(b);
    PackageCounts counts = diffPackages(fa, fb, r);
    auto da = inputsOf(a), db = inputsOf(b);
    for (const auto& [k, v] : da)
      if (auto it = db.find(k); it != db.end() && it->second != v)
        r.add("diff.input.changed", Severity::Error, k + " differs", {{"name", k}});
    if (a.reference && b.reference && a.reference->system.recorded && systemOf(*a.reference) != systemOf(*b.reference))
      r.add("diff.system.changed", Severity::Warning,
            "system: " + systemOf(*a.reference) + " in A, " + systemOf(*b.reference) + " in B");
    if (a.reference && b.reference) {
      auto ra = fieldsOf(*a.reference), rb = fieldsOf(*b.reference);
      for (const auto& [k, v] : ra) {
        auto it = rb.find(k);
        bool criterion = k.rfind("result.criteria ", 0) == 0;
        if (it == rb.end())
          r.add(criterion ? "diff.reference.changed" : "diff.reference.not_recorded",
                criterion ? Severity::Error : Severity::Info,
                criterion ? "criterion " + k.substr(16) + " is only in A" : k + " is not recorded in B", {{"name", k}});
        else if (it->second != v)
          r.add("diff.reference.changed", k.rfind("system.", 0) == 0 ? Severity::Warning : Severity::Error,
                criterion ? "criterion " + k.substr(16) + " has another why"
                          : k + ": '" + v + "' in A, '" + it->second + "' in B",
                {{"name", k}});
      }
      for (const auto& [k, v] : rb)
        if (!ra.count(k))
          r.add(k.rfind("result.criteria ", 0) == 0 ? "diff.reference.changed" : "diff.reference.not_recorded",
                k.rfind("result.criteria ", 0) == 0 ? Severity::Error : Severity::Info,
                k.rfind("result.criteria ", 0) == 0 ? "criterion " + k.substr(16) + " is only in B"
                                                    : k + " is not recorded in A",
                {{"name", k}});
    }
    if (a.report && b.report && !a.report->schema.empty() && !b.report->schema.empty())
      diffReports(*a.report, *b.report, r);
    std::map<std::string, int> bySeverity;
    for (const auto& f : r.findings()) bySeverity[report::toString(f.severity)]++;
    r.section("diff") = {{"packages_a", fa.count()},
                         {"packages_b", fb.count()},
                         {"differences", bySeverity},
                         {"packages",
                          {{"same", counts.same},
                           {"changed", counts.changed},
                           {"only_a", counts.onlyA},
                           {"only_b", counts.onlyB},
                           {"environments_not_recorded", counts.notRecorded}}}};
    return {};
  });
  return r;
}

}  // namespace kernodeck::record
