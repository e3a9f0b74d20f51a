// kernodeck diff: two references, reports or inventories, compared on the typed documents.
#include <algorithm>
#include <set>
#include <tuple>

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
    for (const auto& p : d.report->osPackages)
      out.dpkg[p.name + (p.architecture.empty() || p.architecture == "all" ? "" : ":" + p.architecture)] = p.version;
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
            {{"package", k}, {"environment", where}, {"version_a", v}});
    } else if (it->second != v) {
      n.changed++;
      r.add("diff.package.changed", Severity::Warning,
            shown(shownA, k) + " (" + where + ") is " + v + " in A and " + it->second + " in B",
            {{"package", k}, {"environment", where}, {"version_a", v}, {"version_b", it->second}});
    } else {
      n.same++;
    }
  }
  for (const auto& [k, v] : vb)
    if (!va.count(k)) {
      n.onlyB++;
      r.add("diff.package.added", Severity::Warning, shown(shownB, k) + " " + v + " (" + where + ") is only in B",
            {{"package", k}, {"environment", where}, {"version_b", v}});
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

// A list member's key: the name, criterion text, path or prefix that says which one it is
// (so that reordering is no difference), else its position; a plain string is its own key.
std::string memberKey(const json& e, size_t i) {
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object())
    for (const char* k : {"name", "text", "path", "prefix", "uuid"})
      if (e.contains(k) && e.at(k).is_string()) return e.at(k).get<std::string>();
  return "#" + std::to_string(i);
}

// Every field of a reference as a path the user reads in the file ("code.entry_point",
// "result.criteria[abs<=1e-06].why", "packages.requirements.lines[scipy==1.10.1]") and its
// value as text. A list member is also a leaf of its own ("(listed)"), so that one present on
// one side only is one difference. Left out: the schema and timestamps (when, not what), the
// revisions (compared on their own), the Python environments (compared as packages) and the
// hashes `inputsOf` compares.
void flatten(const json& j, const std::string& path, std::map<std::string, std::string>& out) {
  static const std::set<std::string> skipped = {"schema",
                                                "created",
                                                "first_checked",
                                                "revisions",
                                                "packages.environments",
                                                "code.revision",
                                                "packages.manifest_digest"};
  if (skipped.count(path)) return;
  if (j.is_object()) {
    for (auto it = j.begin(); it != j.end(); ++it) {
      std::string sub = path.empty() ? it.key() : path + "." + it.key();
      bool inputHash =
          it.key() == "sha256" &&
          (path.starts_with("data[") || path.starts_with("weights[") || path.starts_with("code.configs[")) &&
          path.find("].files[") == std::string::npos;
      if (!inputHash) flatten(it.value(), sub, out);
    }
  } else if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      std::string sub = path + "[" + memberKey(j[i], i) + "]";
      out[sub] = "(listed)";
      if (!j[i].is_string()) flatten(j[i], sub, out);
    }
  } else {
    out[path] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

// How much a difference in a reference field matters: the system it ran on may differ
// (warning), a path names a place on one machine (info), anything else changes what is
// reproduced (error).
Severity fieldSeverity(const std::string& k) {
  if (k.starts_with("system.")) return Severity::Warning;
  if (k.ends_with(".path") || k == "code.repo" || k == "code.outputs" || k == "result.expected" ||
      k == "packages.source" || k == "packages.python.interpreter" || k == "code.dirty")
    return Severity::Info;
  return Severity::Error;
}

// Two references field by field, then their revisions.
void diffReferences(const Reference& a, const Reference& b, report::Report& r) {
  std::map<std::string, std::string> ra, rb;
  flatten(a.json, "", ra);
  flatten(b.json, "", rb);
  auto shown = [](const std::string& k) {
    return k.starts_with("result.criteria[") && k.back() == ']' ? "criterion " + k.substr(16, k.size() - 17) : k;
  };
  // A member present on one side only is one difference, not one per field inside it.
  std::string gone;
  auto inside = [&](const std::string& k) {
    return !gone.empty() && k.size() > gone.size() && k.starts_with(gone) &&
           (k[gone.size()] == '.' || k[gone.size()] == '[');
  };
  auto onlyOne = [&](const std::map<std::string, std::string>& mine, const std::map<std::string, std::string>& theirs,
                     const char* side, const char* other) {
    gone.clear();
    for (const auto& [k, v] : mine) {
      if (inside(k) || theirs.count(k)) continue;
      if (v == "(listed)") {
        gone = k;
        r.add("diff.reference.changed", fieldSeverity(k), shown(k) + " is only in " + side, {{"name", k}});
      } else {
        r.add("diff.reference.not_recorded", Severity::Info, k + " is not recorded in " + other, {{"name", k}});
      }
    }
  };
  for (const auto& [k, v] : ra)
    if (auto it = rb.find(k); it != rb.end() && it->second != v)
      r.add("diff.reference.changed", fieldSeverity(k), k + ": '" + v + "' in A, '" + it->second + "' in B",
            {{"name", k}});
  onlyOne(ra, rb, "A", "B");
  onlyOne(rb, ra, "B", "A");
  // Revisions: the earlier criteria one side replaced, and why.
  auto key = [](const Reference::Revision& v) { return v.revised + "\n" + v.why; };
  std::set<std::string> inA, inB;
  for (const auto& v : a.revisions) inA.insert(key(v));
  for (const auto& v : b.revisions) inB.insert(key(v));
  for (const auto* side : {&a, &b})
    for (const auto& v : side->revisions) {
      if ((side == &a ? inB : inA).count(key(v))) continue;
      std::string crits;
      for (const auto& [text, why] : v.criteria) crits += (crits.empty() ? "" : ", ") + text;
      r.add("diff.reference.revised", Severity::Error,
            std::string(side == &a ? "A" : "B") + " revised its criteria on " + v.revised + " because: " + v.why +
                " (they were " + (crits.empty() ? std::string("none") : crits) + ", declared " + v.created +
                (v.firstChecked.empty() ? ", never checked" : ", first checked " + v.firstChecked) + ")",
            {{"name", "revisions"}});
    }
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

// Two audits' findings: the drift. A finding is matched by its code, package and path (or its
// message when it has no path), not by layer: the same finding in another layer is the same.
struct Drift {
  size_t fresh = 0, gone = 0;
};
Drift diffAuditFindings(const ReportDoc& a, const ReportDoc& b, report::Report& r) {
  using Key = std::tuple<std::string, std::string, std::string>;
  auto keyed = [](const ReportDoc& d) {
    std::map<Key, const ReportDoc::Finding*> out;
    for (const auto& f : d.findings) out.emplace(Key{f.code, f.package, f.path.empty() ? f.message : f.path}, &f);
    return out;
  };
  auto fa = keyed(a), fb = keyed(b);
  Drift n;
  auto evidence = [](const ReportDoc::Finding& f) {
    auto ev = f.evidence;
    ev["finding"] = f.code;
    return ev;
  };
  for (const auto& [key, f] : fb)
    if (!fa.count(key)) {
      ++n.fresh;
      // One an exception waived in B is shown as such, as info: no verdict counts it.
      r.add("diff.finding.new",
            f->suppressed ? Severity::Info : report::parseSeverity(f->severity).value_or(Severity::Warning),
            "new in B: " + f->code + ": " + f->message +
                (f->suppressed ? " (suppressed: " + f->suppressedReason + ", expires " + f->suppressedExpires + ")"
                               : ""),
            evidence(*f));
    }
  for (const auto& [key, f] : fa)
    if (!fb.count(key)) {
      ++n.gone;
      r.add("diff.finding.gone", Severity::Info, "gone in B: " + f->code + ": " + f->message, evidence(*f));
    }
  return n;
}

// The torch build and CUDA toolkit of two audits: a change is one finding naming both sides.
void diffTorch(const ReportDoc& a, const ReportDoc& b, report::Report& r) {
  auto build = [](const ReportDoc& d) {
    if (d.torchVersion.empty() && d.cudaToolkit.empty()) return std::string("none");
    return (d.torchVersion.empty() ? std::string("no torch") : "torch " + d.torchVersion) +
           " (torch.version.cuda " + (d.torchCuda.empty() ? "None" : d.torchCuda) + ", hip " +
           (d.torchHip.empty() ? "None" : d.torchHip) + "), CUDA toolkit " +
           (d.cudaToolkit.empty() ? "none" : d.cudaToolkit);
  };
  std::string ba = build(a), bb = build(b);
  if (ba != bb)
    r.add("diff.torch.changed", Severity::Warning, "torch/CUDA build: " + ba + " in A, " + bb + " in B",
          {{"package", "torch"}, {"version_a", a.torchVersion}, {"version_b", b.torchVersion}});
}

// The exceptions two audits ran with, entry by entry (code, package, path, image): an entry new
// in B, and one that expired in B (refused and unused ones are findings of B already).
void diffExceptions(const ReportDoc& a, const ReportDoc& b, report::Report& r) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, const ReportDoc::Exception*> ea;
  for (const auto& x : a.exceptions) ea.emplace(Key{x.code, x.package, x.path, x.image}, &x);
  for (const auto& x : b.exceptions) {
    auto it = ea.find(Key{x.code, x.package, x.path, x.image});
    std::string what = x.code + (x.package.empty() ? "" : " package " + x.package) +
                       (x.path.empty() ? "" : " path " + x.path) + (x.image.empty() ? "" : " image " + x.image);
    std::map<std::string, std::string> ev = {{"name", x.code}, {"file", x.file}, {"expires", x.expires}};
    if (it == ea.end())
      r.add("diff.exception.added", Severity::Warning,
            "exception added in B: " + what + ": " + x.reason + " (expires " + x.expires + ", " + x.status + ")", ev);
    if (x.status == "expired" && (it == ea.end() || it->second->status != "expired"))
      r.add("diff.exception.expired", Severity::Error, "exception expired in B: " + what + " (on " + x.expires + ")",
            ev);
  }
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
    if (a.reference && b.reference) diffReferences(*a.reference, *b.reference, r);
    bool audits = a.report && b.report && !a.report->schema.empty() && a.report->command == "audit" &&
                  !b.report->schema.empty() && b.report->command == "audit";
    Drift drift;
    if (audits) {
      diffTorch(*a.report, *b.report, r);
      drift = diffAuditFindings(*a.report, *b.report, r);
      diffExceptions(*a.report, *b.report, r);
    }
    else if (a.report && b.report && !a.report->schema.empty() && !b.report->schema.empty())
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
                           {"environments_not_recorded", counts.notRecorded}}},
                         {"packages_added", counts.onlyB},
                         {"packages_removed", counts.onlyA},
                         {"packages_changed", counts.changed}};
    if (audits) r.section("diff")["findings_new"] = drift.fresh, r.section("diff")["findings_gone"] = drift.gone;
    return {};
  });
  return r;
}

}  // namespace kernodeck::record
