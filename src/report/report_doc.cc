// See report_doc.h. Every field is read through util::JsonReader: a wrong type or a missing
// required field is an error naming the field's path, never a json exception.
#include "kernodeck/report/report_doc.h"

#include "kernodeck/report/report.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::report {

using nlohmann::json;
using util::JsonReader;

namespace {

int64_t countOf(const json& findings, const char* severity) {
  if (!findings.is_object() || !findings.contains(severity)) return 0;
  const json& n = findings[severity];
  return n.is_number_integer() ? n.get<int64_t>() : 0;
}

Status checkReportSchema(const JsonReader& root) {
  std::string schema;
  KDK_TRY_STATUS(root.get("schema", schema));
  if (schema != Report::kSchema)
    return Error::Invalid(root.fieldPath("schema") + " is '" + util::printable(schema, 80) + "', expected \"" +
                          Report::kSchema + "\"");
  return {};
}

Status parseSteps(const JsonReader& root, ReportDoc& d) {
  KDK_TRY_ASSIGN(auto steps, root.array("steps"));
  for (const auto& s : steps) {
    ReportDoc::Step st;
    KDK_TRY_STATUS(s.expectObject());
    KDK_TRY_STATUS(s.get("name", st.name));
    KDK_TRY_STATUS(s.get("status", st.status));
    KDK_TRY_STATUS(s.getOpt("error", st.error, true));
    d.steps.push_back(std::move(st));
  }
  return {};
}

Status parseFindings(const JsonReader& root, ReportDoc& d) {
  KDK_TRY_ASSIGN(auto findings, root.array("findings"));
  for (const auto& f : findings) {
    ReportDoc::Finding fd;
    KDK_TRY_STATUS(f.expectObject());
    KDK_TRY_STATUS(f.get("code", fd.code));
    KDK_TRY_STATUS(f.get("severity", fd.severity));
    KDK_TRY_STATUS(f.get("message", fd.message));
    KDK_TRY_STATUS(f.getOpt("layer", fd.layer));
    KDK_TRY_STATUS(f.getOpt("package", fd.package, true));
    KDK_TRY_STATUS(f.getOpt("name", fd.name, true));
    KDK_TRY_STATUS(f.getOpt("path", fd.path, true));
    KDK_TRY_ASSIGN(auto sup, f.optObject("suppression"));
    if (sup) {
      fd.suppressed = true;
      KDK_TRY_STATUS(sup->get("reason", fd.suppressedReason));
      KDK_TRY_STATUS(sup->get("expires", fd.suppressedExpires));
      KDK_TRY_STATUS(sup->getOpt("file", fd.suppressedFile));
    }
    // Every other member is evidence, and evidence is text.
    for (auto it = f.json().begin(); it != f.json().end(); ++it) {
      if (it.key() == "code" || it.key() == "severity" || it.key() == "message" || it.key() == "suppression" ||
          it.value().is_null())
        continue;
      std::string v;
      KDK_TRY_STATUS(f.get(it.key(), v));
      fd.evidence[it.key()] = v;
    }
    d.findings.push_back(std::move(fd));
  }
  return {};
}

// The exceptions section an audit with --exceptions writes (applyExceptions).
Status parseExceptionsSection(const JsonReader& root, ReportDoc& d) {
  KDK_TRY_ASSIGN(auto sec, root.optObject("exceptions"));
  if (!sec) return {};
  KDK_TRY_ASSIGN(auto files, sec->optArray("files"));
  for (const auto& f : files) {
    ReportDoc::Exception base;
    KDK_TRY_STATUS(f.expectObject());
    KDK_TRY_STATUS(f.get("file", base.file));
    KDK_TRY_STATUS(f.getOpt("sha256", base.sha256));
    KDK_TRY_ASSIGN(auto entries, f.optArray("entries"));
    for (const auto& e : entries) {
      ReportDoc::Exception x = base;
      KDK_TRY_STATUS(e.expectObject());
      KDK_TRY_STATUS(e.get("code", x.code));
      KDK_TRY_STATUS(e.getOpt("package", x.package));
      KDK_TRY_STATUS(e.getOpt("path", x.path));
      KDK_TRY_STATUS(e.getOpt("image", x.image));
      KDK_TRY_STATUS(e.getOpt("reason", x.reason));
      KDK_TRY_STATUS(e.getOpt("expires", x.expires));
      KDK_TRY_STATUS(e.getOpt("status", x.status));
      d.exceptions.push_back(std::move(x));
    }
  }
  return {};
}

// The sections an inventory shares with a report: python (its environments) and os_packages.
Status parseInventorySections(const JsonReader& root, ReportDoc& d) {
  KDK_TRY_ASSIGN(auto python, root.optObject("python"));
  if (python) {
    d.hasPython = true;
    d.python = python->json();
    KDK_TRY_ASSIGN(d.environments, parsePythonEnvironments(*python));
    KDK_TRY_STATUS(python->getOpt("cuda_toolkit", d.cudaToolkit, true));
    // torch is null when the image has none.
    std::optional<JsonReader> torch;
    if (python->has("torch") && !python->json()["torch"].is_null()) {
      KDK_TRY_ASSIGN(torch, python->optObject("torch"));
    }
    if (torch) {
      KDK_TRY_STATUS(torch->getOpt("version", d.torchVersion, true));
      KDK_TRY_STATUS(torch->getOpt("cuda", d.torchCuda, true));
      KDK_TRY_STATUS(torch->getOpt("hip", d.torchHip, true));
    }
  }
  KDK_TRY_ASSIGN(auto os, root.optObject("os_packages"));
  if (os) {
    d.hasOsPackages = true;
    d.os = os->json();
    KDK_TRY_ASSIGN(auto pkgs, os->optArray("packages"));
    for (const auto& p : pkgs) {
      ReportDoc::OsPackage pkg;
      KDK_TRY_STATUS(p.expectObject());
      KDK_TRY_STATUS(p.get("name", pkg.name));
      KDK_TRY_STATUS(p.get("version", pkg.version));
      KDK_TRY_STATUS(p.getOpt("architecture", pkg.architecture, true));
      d.osPackages.push_back(std::move(pkg));
    }
  }
  return {};
}

}  // namespace

ReportSummary summaryOf(const json& r) {
  ReportSummary s;
  if (!r.is_object() || !r.contains("summary") || !r["summary"].is_object()) return s;
  const json& sum = r["summary"];
  s.complete = sum.contains("complete") && sum["complete"].is_boolean() && sum["complete"].get<bool>();
  if (sum.contains("findings")) {
    s.info = countOf(sum["findings"], "info");
    s.warning = countOf(sum["findings"], "warning");
    s.error = countOf(sum["findings"], "error");
  }
  return s;
}

std::string verdictOf(const ReportSummary& s, int failOn) {
  if (!s.complete) return "incomplete";
  const int64_t counts[] = {s.info, s.warning, s.error};
  for (int sev = failOn < 0 ? 3 : failOn; sev <= 2; ++sev)
    if (counts[sev] > 0) return "fail";
  return "pass";
}

Result<std::vector<PythonEnvironment>> parsePythonEnvironments(const JsonReader& parent) {
  KDK_TRY_ASSIGN(auto envs, parent.optArray("environments"));
  std::vector<PythonEnvironment> out(envs.size());
  for (size_t i = 0; i < envs.size(); ++i) {
    KDK_TRY_STATUS(envs[i].expectObject());
    KDK_TRY_STATUS(envs[i].get("prefix", out[i].prefix));
    KDK_TRY_STATUS(envs[i].getOpt("freeze", out[i].freeze));
    KDK_TRY_STATUS(envs[i].getOpt("interpreter", out[i].interpreter, true));
  }
  return out;
}

Result<ReportDoc> parseReportDoc(const json& j) {
  JsonReader root(j);
  KDK_TRY_STATUS(root.expectObject());
  ReportDoc d;
  d.json = j;
  if (!root.has("schema")) {
    // A dossier's inventory.json: only the inventory sections.
    if (!root.has("python") && !root.has("os_packages"))
      return Error::Invalid("the document has no schema and is not an inventory (no python or os_packages section)");
  } else {
    KDK_TRY_STATUS(checkReportSchema(root));
    d.schema = Report::kSchema;
    KDK_TRY_ASSIGN(JsonReader tool, root.object("tool"));
    KDK_TRY_STATUS(tool.get("command", d.command));
    KDK_TRY_STATUS(root.getOpt("created", d.created));
    KDK_TRY_STATUS(root.getOpt("hostname", d.hostname));
    KDK_TRY_ASSIGN(JsonReader subject, root.object("subject"));
    KDK_TRY_STATUS(subject.getOpt("reference", d.subjectReference));
    KDK_TRY_STATUS(subject.getOpt("manifest_digest", d.manifestDigest, true));
    KDK_TRY_STATUS(subject.getOpt("registry", d.subjectRegistry, true));
    KDK_TRY_STATUS(subject.getOpt("repository", d.subjectRepository, true));
    KDK_TRY_STATUS(parseSteps(root, d));
    KDK_TRY_STATUS(root.getOpt("first_error", d.firstError, true));
    KDK_TRY_STATUS(parseFindings(root, d));
    KDK_TRY_STATUS(parseExceptionsSection(root, d));
    d.summary = summaryOf(j);
  }
  KDK_TRY_STATUS(parseInventorySections(root, d));
  return d;
}

}  // namespace kernodeck::report
