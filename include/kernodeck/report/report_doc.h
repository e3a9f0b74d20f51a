// kernodeck.report/v1 read back: the one typed reader of a report document someone wrote
// (`diff`, `dossier build`, `reference init --packages-from`, `fleet summary`, the attached
// reports a gate judges). Report::toJson (report.h) is its writer.
//
// A report read back is untrusted (a dossier is handed around, an attached report is pushed
// by whoever can push), so it is parsed once, here, through util::JsonReader: a value of the
// wrong type or a missing required field is an Error naming the field's path, and no caller
// indexes the JSON itself. The free-form sections (python, os_packages) are kept as JSON beside
// the typed fields their readers need. Parsers are pure.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "kernodeck/util/json_read.h"
#include "kernodeck/util/result.h"

namespace kernodeck::report {

// One Python environment's `pip freeze`-style lines (python.environments of a report; a
// reference records the same shape).
struct PythonEnvironment {
  std::string prefix;
  std::vector<std::string> freeze;
  std::string interpreter;  // the environment's interpreter, when the report records it
};
// The `environments` array of `parent` (absent: none), each with its prefix.
Result<std::vector<PythonEnvironment>> parsePythonEnvironments(const util::JsonReader& parent);

// A report's summary as a verdict reads it: complete, and the findings counted by severity.
// Read leniently (summaryOf): an absent or malformed summary reads as incomplete, an absent or
// malformed count as 0, so a damaged summary can only make a verdict stricter.
struct ReportSummary {
  bool complete = false;
  int64_t info = 0, warning = 0, error = 0;
};
ReportSummary summaryOf(const nlohmann::json& report);
// "pass", "fail" (a count at or above `failOn`; -1: never) or "incomplete", from the summary.
std::string verdictOf(const ReportSummary& s, int failOn = 2);

// kernodeck.report/v1, the parts Kernodeck reads back. An inventory.json (a dossier's: only
// python and os_packages) parses as a report with no schema, tool, steps or findings.
struct ReportDoc {
  std::string schema;   // kernodeck.report/v1, or empty for an inventory
  std::string command;  // tool.command: "audit", "probe", "sample check"...
  // When and on which machine the report was written ("" when an older report did not say).
  std::string created, hostname;
  struct Step {
    std::string name, status, error;
  };
  std::vector<Step> steps;
  std::string firstError;
  struct Finding {
    std::string code, severity, message, layer;
    std::string package, name;  // the evidence fields that say what the finding is about ("" when absent)
    std::string path;
    std::map<std::string, std::string> evidence;  // every evidence field (all strings), by name
    // `suppression` (exceptions.h): the entry that waived the finding; no verdict counts it.
    bool suppressed = false;
    std::string suppressedReason, suppressedExpires, suppressedFile;
  };
  std::vector<Finding> findings;
  // subject.reference, .manifest_digest, .registry and .repository ("" when absent).
  std::string subjectReference, manifestDigest, subjectRegistry, subjectRepository;
  ReportSummary summary;  // summaryOf the document
  bool hasPython = false, hasOsPackages = false;
  std::vector<PythonEnvironment> environments;  // python.environments
  struct OsPackage {
    std::string name, version, architecture;
  };
  std::vector<OsPackage> osPackages;  // os_packages.packages
  // The `exceptions` section of an audit run with --exceptions: each entry of each file and what
  // became of it (status: applied, unused, expired, refused).
  struct Exception {
    std::string file, sha256, code, package, path, image, reason, expires, status;
  };
  std::vector<Exception> exceptions;
  // python.torch's version, cuda and hip, python.cuda_toolkit ("" when absent).
  std::string torchVersion, torchCuda, torchHip, cudaToolkit;
  nlohmann::json python, os;          // the raw sections, copied into a dossier's inventory
  nlohmann::json json;                // the document as read
  bool failed() const { return !firstError.empty(); }
};
Result<ReportDoc> parseReportDoc(const nlohmann::json& j);

}  // namespace kernodeck::report
