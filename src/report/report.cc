#include "kernodeck/report/report.h"

#include <algorithm>
#include <sstream>

#include "kernodeck/report/redact.h"
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
  step->duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - t0).count();
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
  for (auto it = f.evidence.begin(); it != f.evidence.end();) it = it->second.empty() ? f.evidence.erase(it) : std::next(it);
  for (auto& [k, v] : f.evidence) v = redactText(v);
  findings_.push_back(std::move(f));
}

void Report::add(std::string code, Severity sev, std::string message,
                 std::map<std::string, std::string> evidence) {
  add(Finding{std::move(code), sev, std::move(message), std::move(evidence)});
}

bool Report::hasFinding(std::string_view code) const {
  return std::any_of(findings_.begin(), findings_.end(),
                     [&](const Finding& f) { return f.code == code; });
}

int Report::exitCode(int failOn) const {
  if (failed()) return kExitIncomplete;
  if (failOn >= 0)
    for (const auto& f : findings_)
      if (static_cast<int>(f.severity) >= failOn) return kExitFindings;
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

nlohmann::json Report::toJson() const {
  nlohmann::json j;
  j["schema"] = kSchema;
  j["tool"] = {{"name", "kernodeck"}, {"command", tool_}, {"version", kVersion}};
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
    j["findings"].push_back(jf);
  }
  std::map<std::string, int> counts = {{"info", 0}, {"warning", 0}, {"error", 0}};
  for (const auto& f : findings_) counts[toString(f.severity)]++;
  j["summary"] = {{"findings", counts}, {"complete", !failed()}};
  for (auto it = sections_.begin(); it != sections_.end(); ++it) j[it.key()] = it.value();
  return j;
}

std::string Report::toText() const {
  std::ostringstream o;
  o << "kernodeck " << tool_;
  if (subject_.contains("reference") && subject_["reference"].is_string())
    o << ": " << redactText(subject_["reference"].get<std::string>());
  o << "\n";
  if (subject_.contains("manifest_digest") && subject_["manifest_digest"].is_string())
    o << "  digest   " << subject_["manifest_digest"].get<std::string>() << "\n";
  if (subject_.contains("platform") && subject_["platform"].is_string())
    o << "  platform " << subject_["platform"].get<std::string>() << "\n";
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
  for (Severity sev : {Severity::Error, Severity::Warning, Severity::Info}) {
    std::vector<const Finding*> group;
    for (const auto& f : findings_)
      if (f.severity == sev) group.push_back(&f);
    if (group.empty()) continue;
    o << "\n" << (sev == Severity::Error ? "Errors" : sev == Severity::Warning ? "Warnings" : "Info")
      << " (" << group.size() << ")\n";
    for (const Finding* f : group) {
      o << "  " << f->code << ": " << f->message;
      std::string ev;
      for (const auto& [k, v] : f->evidence) {
        if (k == "layer" || k == "path" || k == "digest" || k == "package") {
          if (!ev.empty()) ev += ", ";
          ev += k + "=" + v;
        }
      }
      if (!ev.empty()) o << " [" << ev << "]";
      o << "\n";
    }
  }
  if (findings_.empty()) o << "\nNo findings.\n";
  if (failed()) o << "\nIncomplete: " << first_error_ << "\n";
  return o.str();
}

}  // namespace kernodeck::report
