// The text rendering of a report: what people read on a terminal. A summary block first (the
// verdict, counts by severity and code, what the audit found: OS, Python environments, torch and
// CUDA), then the steps, then the findings grouped (group.h) with large groups cut to their
// first few members: a machine with one heavily modified package still fits a screen. Findings an
// exception suppressed come last, in a section of their own with the entry's reason and expiry.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "kernodeck/report/group.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::report {

namespace {

// Members of a group printed before "and N more".
constexpr size_t kShownPerGroup = 3;

// "  label     value" with the label column fixed.
void field(std::ostringstream& o, const char* label, const std::string& value) {
  char head[32];
  std::snprintf(head, sizeof head, "  %-10s", label);
  o << head << value << "\n";
}

// Words joined with ", " and wrapped under a 12-column indent.
void wrapped(std::ostringstream& o, const char* label, const std::vector<std::string>& items) {
  std::string line;
  bool first = true;
  for (const auto& it : items) {
    if (!line.empty() && line.size() + it.size() > 84) {
      field(o, first ? label : "", line + ",");
      first = false;
      line.clear();
    }
    line += (line.empty() ? "" : ", ") + it;
  }
  if (!line.empty()) field(o, first ? label : "", line);
}

// What the image's GPU code runs on (audit/gpu_support.h), per GPU generation: one line.
void describeGpuSupport(std::ostringstream& o, const nlohmann::json& sections) {
  if (!sections.contains("gpu_support") || !sections["gpu_support"].is_object()) return;
  const auto& g = sections["gpu_support"];
  if (!g.contains("generations") || !g["generations"].is_array()) return;
  std::map<std::string, std::vector<std::string>> byFit;
  for (const auto& gen : g["generations"]) {
    std::string name = stringAt(gen, "generation"), fit = stringAt(gen, "fit");
    if (fit == "partial" && gen.contains("capabilities") && gen["capabilities"].is_object()) {
      std::vector<std::string> not_;
      for (auto it = gen["capabilities"].begin(); it != gen["capabilities"].end(); ++it)
        if (it.value() == "none") not_.push_back(it.key());
      name += " (not " + util::join(not_, ", ") + ")";
    }
    byFit[fit].push_back(name);
  }
  std::vector<std::string> parts;
  auto part = [&](const char* fit, const char* what) {
    if (byFit.count(fit)) parts.push_back(what + util::join(byFit[fit], ", "));
  };
  part("sass", "runs on ");
  part("ptx", "only through PTX JIT on ");
  part("partial", "partly on ");
  part("none", "cannot run on ");
  part("unknown", "unknown on ");
  std::string n = g.contains("libraries") && g["libraries"].is_number() ? std::to_string(g["libraries"].get<long long>()) : "?";
  field(o, "gpu code", n + " librar" + (n == "1" ? "y" : "ies") + ": " + util::join(parts, "; "));
}

// What an audit found, from its sections: OS, Python environments, torch, CUDA; for a diff of
// two audits, the drift counted.
void describeFound(std::ostringstream& o, const nlohmann::json& sections) {
  if (sections.contains("diff") && sections["diff"].is_object() && sections["diff"].contains("packages_added")) {
    const auto& d = sections["diff"];
    auto n = [&](const char* k) {
      return d.contains(k) && d[k].is_number() ? std::to_string(d[k].get<long long>()) : "0";
    };
    long long notRecorded = 0;
    if (d.contains("packages") && d["packages"].is_object() && d["packages"].contains("environments_not_recorded") &&
        d["packages"]["environments_not_recorded"].is_number())
      notRecorded = d["packages"]["environments_not_recorded"].get<long long>();
    field(o, "packages",
          n("packages_added") + " added, " + n("packages_removed") + " removed, " + n("packages_changed") +
              " changed (" + n("packages_a") + " in A, " + n("packages_b") + " in B)" +
              (notRecorded ? "; " + std::to_string(notRecorded) + " environment(s) recorded on one side only" : ""));
    if (d.contains("findings_new"))
      field(o, "drift", n("findings_new") + " findings new in B, " + n("findings_gone") + " gone from A");
  }
  if (sections.contains("os") && sections["os"].is_object()) {
    const auto& os = sections["os"];
    std::string name = stringAt(os, "pretty_name");
    if (name.empty()) name = (stringAt(os, "id") + " " + stringAt(os, "version_id"));
    if (name == " ") name = "unknown (no os-release)";
    std::string arch = stringAt(os, "architecture");
    field(o, "os", name + (arch.empty() ? "" : ", " + arch));
  }
  if (sections.contains("os_packages") && sections["os_packages"].is_object()) {
    const auto& p = sections["os_packages"];
    // Labelled by the database that was read (dpkg, rpm, apk); reports from before the field say dpkg.
    std::string manager = stringAt(p, "manager");
    if (p.contains("count") && p["count"].is_number())
      field(o, manager.empty() ? "dpkg" : manager.c_str(),
            std::to_string(p["count"].get<long long>()) + " packages, " +
                std::to_string(p.value("files_verified", 0LL)) + " files verified, " +
                std::to_string(p.value("modified", 0LL)) + " modified, " + std::to_string(p.value("missing", 0LL)) +
                " missing");
  }
  describeGpuSupport(o, sections);
  if (!sections.contains("python") || !sections["python"].is_object()) return;
  const auto& py = sections["python"];
  bool first = true;
  if (py.contains("environments") && py["environments"].is_array()) {
    for (const auto& e : py["environments"]) {
      std::string interp = stringAt(e, "interpreter");
      size_t n = e.contains("packages") && e["packages"].is_array() ? e["packages"].size() : 0;
      field(o, first ? "python" : "",
            stringAt(e, "kind") + " " + stringAt(e, "prefix") + "  Python " + stringAt(e, "python_version") + "  " +
                (interp.empty() ? "no interpreter" : interp) + "  " + std::to_string(n) + " packages");
      first = false;
    }
  }
  if (first) field(o, "python", "no Python environment found");
  if (py.contains("not_searched") && py["not_searched"].is_array() && !py["not_searched"].empty()) {
    std::vector<std::string> places;
    for (const auto& p : py["not_searched"])
      if (p.is_string()) places.push_back(p.get<std::string>());
    wrapped(o, "skipped", places);
  }
  if (py.contains("torch") && py["torch"].is_object()) {
    const auto& t = py["torch"];
    auto orNone = [&](const char* k) { return stringAt(t, k).empty() ? std::string("None") : stringAt(t, k); };
    field(o, "torch",
          stringAt(t, "version") + "  torch.version.cuda " + orNone("cuda") + ", torch.version.hip " + orNone("hip") +
              "  (" + stringAt(t, "location") + ")");
  }
  std::string toolkit = stringAt(py, "cuda_toolkit");
  size_t wheels = py.contains("nvidia_wheels") && py["nvidia_wheels"].is_object() ? py["nvidia_wheels"].size() : 0;
  if (!toolkit.empty() || wheels)
    field(o, "cuda",
          (toolkit.empty() ? "no toolkit in /usr/local/cuda*" : "toolkit " + toolkit) +
              (wheels ? ", " + std::to_string(wheels) + " nvidia-* wheels" : ""));
  else if (py.contains("torch") && py["torch"].is_object())
    field(o, "cuda", "none in the image");
}

// The libraries with NVIDIA GPU code (the audit's gpu_code section): one line each, its path,
// then its SASS and PTX as cuobjdump names them.
void describeGpuCode(std::ostringstream& o, const nlohmann::json& sections) {
  if (!sections.contains("gpu_code") || !sections["gpu_code"].is_object()) return;
  const auto& libs = sections["gpu_code"].value("libraries", nlohmann::json::array());
  if (!libs.is_array()) return;
  bool first = true;
  for (const auto& l : libs) {
    if (!l.is_object()) continue;
    auto names = [&](const char* k) {
      std::string out;
      if (l.contains(k) && l[k].is_array())
        for (const auto& n : l[k])
          if (n.is_string()) out += (out.empty() ? "" : " ") + n.get<std::string>();
      return out.empty() ? std::string("none") : out;
    };
    field(o, first ? "gpu code" : "",
          stringAt(l, "library") + "  SASS " + names("sass") + "  PTX " + names("ptx") +
              (l.value("compressed", false) ? "  (compressed)" : ""));
    first = false;
  }
}

// The summary's counts: live findings by severity and by code, then those suppressed.
void countLines(std::ostringstream& o, const std::vector<Finding>& findings, const std::vector<FindingGroup>& groups,
                const std::vector<FindingGroup>& waived) {
  std::map<std::string, int> bySeverity, byCode, suppressed;
  size_t live = 0;
  for (const auto& f : findings) {
    if (f.suppressed()) {
      suppressed[toString(f.severity)]++;
      continue;
    }
    ++live;
    bySeverity[toString(f.severity)]++;
    byCode[f.code]++;
  }
  if (live == 0) {
    field(o, "findings", "none");
  } else {
    std::string counts;
    for (const char* s : {"error", "warning", "info"})
      if (bySeverity[s]) counts += (counts.empty() ? "" : ", ") + std::to_string(bySeverity[s]) + " " + s;
    field(o, "findings", counts + " in " + std::to_string(groups.size()) + " group" + (groups.size() == 1 ? "" : "s"));
    std::vector<std::pair<std::string, int>> codes(byCode.begin(), byCode.end());
    std::stable_sort(codes.begin(), codes.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::vector<std::string> items;
    for (const auto& [c, n] : codes) items.push_back(std::to_string(n) + " " + c);
    wrapped(o, "by code", items);
  }
  if (!waived.empty()) {
    std::string counts;
    for (const char* sv : {"error", "warning", "info"})
      if (suppressed[sv]) counts += (counts.empty() ? "" : ", ") + std::to_string(suppressed[sv]) + " " + sv;
    field(o, "waived", counts + " suppressed by exceptions (not counted in the verdict)");
  }
}

// The groups an exception suppressed, after the live ones: each with the entry's reason and expiry.
void suppressedSection(std::ostringstream& o, const std::vector<FindingGroup>& waived) {
  if (waived.empty()) return;
  size_t n = 0;
  for (const auto& gr : waived) n += gr.count();
  o << "\nSuppressed by exceptions (" << n << ")\n";
  for (const auto& gr : waived) {
    const Suppression& s = *gr.suppression;
    o << "  " << toString(gr.severity) << " " << gr.code << ": " << gr.headline() << "\n"
      << "    reason: " << s.reason << " (expires " << s.expires << "; " << s.file << " exceptions[" << s.entry
      << "])\n";
  }
}

}  // namespace

std::string Report::toText(int failOn) const {
  std::ostringstream o;
  o << "kernodeck " << tool_;
  if (subject_.contains("reference") && subject_["reference"].is_string())
    o << ": " << redactText(subject_["reference"].get<std::string>());
  o << "\n";
  if (subject_.contains("manifest_digest") && subject_["manifest_digest"].is_string())
    field(o, "digest", subject_["manifest_digest"].get<std::string>());
  if (subject_.contains("platform") && subject_["platform"].is_string())
    field(o, "platform", subject_["platform"].get<std::string>());

  // Summary.
  std::string v = verdict(failOn);
  std::string threshold = failOn < 0 ? "none" : toString(static_cast<Severity>(failOn));
  field(o, "verdict",
        v == "pass"   ? "PASS (no finding at or above --fail-on " + threshold + ")"
        : v == "fail" ? "FAIL (findings at or above --fail-on " + threshold + ")"
                      : "INCOMPLETE: " + first_error_);
  std::vector<FindingGroup> groups, waived;  // live groups; those an exception suppressed
  for (auto& g : groupFindings(findings_)) (g.suppression ? waived : groups).push_back(std::move(g));
  countLines(o, findings_, groups, waived);
  describeFound(o, sections_);
  describeGpuCode(o, sections_);

  o << "\nSteps\n";
  for (const auto& s : steps_) {
    char line[160];
    std::snprintf(line, sizeof line, "  %-12s %-22s %6lld ms", toString(s.status), s.name.c_str(),
                  static_cast<long long>(s.duration_ms));
    o << line;
    if (s.cached) o << "  (cached)";
    if (!s.error.empty()) o << "  " << s.error;
    o << "\n";
  }
  bool cut = false;  // a group was shortened
  for (Severity sev : {Severity::Error, Severity::Warning, Severity::Info}) {
    size_t n = 0, g = 0;
    for (const auto& gr : groups)
      if (gr.severity == sev) n += gr.count(), ++g;
    if (!n) continue;
    o << "\n" << (sev == Severity::Error ? "Errors" : sev == Severity::Warning ? "Warnings" : "Info") << " (" << n;
    if (g != n) o << " in " << g << " groups";
    o << ")\n";
    for (const auto& gr : groups) {
      if (gr.severity != sev) continue;
      if (gr.count() == 1) {
        const Finding* f = gr.members.front();
        o << "  " << f->code << ": " << f->message;
        std::string ev;
        for (const auto& [k, val] : f->evidence) {
          if (k == "layer" || k == "path" || k == "digest" || k == "package") {
            if (!ev.empty()) ev += ", ";
            ev += k + "=" + val;
          }
        }
        if (!ev.empty()) o << " [" << ev << "]";
        o << "\n";
        continue;
      }
      o << "  " << gr.code << ": " << gr.headline() << "\n";
      // What to act on comes first: a large info group stays one line; a small one (a pass's
      // measured values, say) is shown whole.
      if (sev == Severity::Info && gr.count() > kShownPerGroup) {
        cut = true;
        continue;
      }
      if (gr.count() > kShownPerGroup) cut = true;
      for (size_t i = 0; i < gr.members.size() && i < kShownPerGroup; ++i)
        o << "    " << gr.members[i]->message << "\n";
      if (gr.count() > kShownPerGroup) o << "    and " << gr.count() - kShownPerGroup << " more\n";
    }
  }
  suppressedSection(o, waived);
  if (cut) o << "\nEvery finding, with every path: --format json (or html).\n";
  if (failed()) o << "\nIncomplete: " << first_error_ << "\n";
  return o.str();
}

}  // namespace kernodeck::report
