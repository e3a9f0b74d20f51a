#include "kernodeck/report/report.h"

#include <unistd.h>

#include <algorithm>

#include "kernodeck/report/group.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

namespace kernodeck::report {

const char* toString(Severity s) {
  switch (s) {
    case Severity::Info: return "info";
    case Severity::Warning: return "warning";
    case Severity::Error: return "error";
  }
  return "?";
}

std::optional<Severity> parseSeverity(std::string_view s) {
  for (Severity v : {Severity::Info, Severity::Warning, Severity::Error})
    if (s == toString(v)) return v;
  return std::nullopt;
}

const char* toString(StepStatus s) {
  switch (s) {
    case StepStatus::Passed: return "passed";
    case StepStatus::Failed: return "failed";
    case StepStatus::Skipped: return "skipped";
    case StepStatus::NotReached: return "not_reached";
  }
  return "?";
}

Result<int> parseFailOn(std::string_view s) {
  if (s == "info") return 0;
  if (s == "warning") return 1;
  if (s == "error") return 2;
  if (s == "none") return -1;
  return Error::Invalid("--fail-on takes info, warning, error or none, not '" + std::string(s) + "'");
}

std::string stringAt(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

void Report::declareSteps(const std::vector<std::string>& names) {
  for (const auto& n : names) steps_.push_back(Step{n, StepStatus::NotReached, "", 0});
}

Step* Report::find(const std::string& name) {
  for (auto& s : steps_)
    if (s.name == name) return &s;
  steps_.push_back(Step{name, StepStatus::NotReached, "", 0});
  return &steps_.back();
}

bool Report::runStep(const std::string& name, const std::function<Status()>& fn) {
  Step* step = find(name);
  if (failed()) return false;
  auto t0 = std::chrono::steady_clock::now();
  Status st = fn();
  step = find(name);  // fn may have declared more steps
  step->duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
  if (st.ok()) {
    if (step->status != StepStatus::Skipped) step->status = StepStatus::Passed;
    return true;
  }
  step->status = StepStatus::Failed;
  step->error = redactText(st.error().message);
  if (first_error_.empty()) first_error_ = step->error;
  return false;
}

void Report::skipStep(const std::string& name, const std::string& reason) {
  Step* step = find(name);
  if (failed()) return;
  step->status = StepStatus::Skipped;
  step->error = reason;
}

void Report::restoreStep(const std::string& name, StepStatus status, const std::string& reason) {
  Step* step = find(name);
  if (failed() || (status != StepStatus::Passed && status != StepStatus::Skipped)) return;
  step->status = status;
  step->error = status == StepStatus::Skipped ? reason : "";
  step->duration_ms = 0;
  step->cached = true;
}

void Report::add(Finding f) {
  f.message = redactText(f.message);
  for (auto it = f.evidence.begin(); it != f.evidence.end();)
    it = it->second.empty() ? f.evidence.erase(it) : std::next(it);
  for (auto& [k, v] : f.evidence) v = redactText(v);
  findings_.push_back(std::move(f));
}

void Report::add(std::string code, Severity sev, std::string message, std::map<std::string, std::string> evidence) {
  add(Finding{std::move(code), sev, std::move(message), std::move(evidence)});
}

bool Report::hasFinding(std::string_view code) const {
  return std::any_of(findings_.begin(), findings_.end(), [&](const Finding& f) { return f.code == code; });
}

const char* Report::verdict(int failOn) const {
  switch (exitCode(failOn)) {
    case kExitOk: return "pass";
    case kExitFindings: return "fail";
    default: return "incomplete";
  }
}

ExitCode exitCodeOf(const Error& e) {
  switch (e.kind) {
    case ErrorKind::Invalid:
    case ErrorKind::Corrupt:
    case ErrorKind::Unsafe: return kExitUsage;
    case ErrorKind::NotFound:
    case ErrorKind::Io:
    case ErrorKind::Unsupported:
    case ErrorKind::Auth:
    case ErrorKind::Unreachable:
    case ErrorKind::Timeout:
    case ErrorKind::Signature:
    case ErrorKind::Failed: return kExitIncomplete;
  }
  return kExitIncomplete;
}

int Report::exitCode(int failOn) const {
  if (failed()) return kExitIncomplete;
  if (failOn >= 0)
    for (const auto& f : findings_)
      if (!f.suppressed() && static_cast<int>(f.severity) >= failOn) return kExitFindings;
  return kExitOk;
}

namespace {

// Every string of a JSON value, redacted (subjects and sections can carry user input).
nlohmann::json redacted(const nlohmann::json& in) {
  if (in.is_string()) return redactText(in.get<std::string>());
  if (!in.is_structured()) return in;
  nlohmann::json out = in;
  for (auto it = out.begin(); it != out.end(); ++it) it.value() = redacted(it.value());
  return out;
}

}  // namespace

nlohmann::json suppressionJson(const Suppression& s) {
  return {{"reason", s.reason}, {"expires", s.expires}, {"file", s.file}, {"entry", s.entry}};
}

nlohmann::json Report::toJson(int failOn) const {
  nlohmann::json j;
  j["schema"] = kSchema;
  j["tool"] = {{"name", "kernodeck"}, {"command", tool_}, {"version", kVersion}};
  // When and where the report was written, so that two runs of one command are told apart.
  j["created"] = util::utcTimestamp();
  char name[256] = {};
  j["hostname"] = ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
  j["subject"] = redacted(subject_);
  j["steps"] = nlohmann::json::array();
  for (const auto& s : steps_) {
    nlohmann::json js = {{"name", s.name}, {"status", toString(s.status)}, {"duration_ms", s.duration_ms}};
    js["error"] = s.error.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.error);
    if (s.cached) js["cached"] = true;
    j["steps"].push_back(js);
  }
  j["first_error"] = first_error_.empty() ? nlohmann::json(nullptr) : nlohmann::json(first_error_);
  j["findings"] = nlohmann::json::array();
  for (const auto& f : findings_) {
    nlohmann::json jf = {{"code", f.code}, {"severity", toString(f.severity)}, {"message", f.message}};
    for (const auto& [k, v] : f.evidence) jf[k] = v;
    if (f.suppression) jf["suppression"] = suppressionJson(*f.suppression);
    j["findings"].push_back(jf);
  }
  std::map<std::string, int> counts = {{"info", 0}, {"warning", 0}, {"error", 0}};
  std::map<std::string, int> suppressed = counts;
  std::map<std::string, int> byCode;
  bool anySuppressed = false;
  for (const auto& f : findings_) {
    if (f.suppressed()) {
      suppressed[toString(f.severity)]++;
      anySuppressed = true;
      continue;
    }
    counts[toString(f.severity)]++;
    byCode[f.code]++;
  }
  j["groups"] = nlohmann::json::array();
  for (const auto& g : groupFindings(findings_)) {
    nlohmann::json jg = {{"code", g.code},
                         {"severity", toString(g.severity)},
                         {"count", g.count()},
                         {"message", g.headline()},
                         {"paths", g.paths()}};
    if (!g.package.empty()) jg["package"] = g.package;
    if (!g.layer.empty()) jg["layer"] = g.layer;
    if (g.suppression) jg["suppression"] = suppressionJson(*g.suppression);
    j["groups"].push_back(jg);
  }
  j["summary"] = {
      {"findings", counts},           {"by_code", byCode},
      {"groups", j["groups"].size()}, {"complete", !failed()},
      {"verdict", verdict(failOn)},   {"fail_on", failOn < 0 ? "none" : toString(static_cast<Severity>(failOn))}};
  // Only reports with exceptions applied say so: the others are as they were.
  if (anySuppressed || sections_.contains("exceptions")) j["summary"]["suppressed"] = suppressed;
  for (auto it = sections_.begin(); it != sections_.end(); ++it) j[it.key()] = it.value();
  return j;
}

}  // namespace kernodeck::report
