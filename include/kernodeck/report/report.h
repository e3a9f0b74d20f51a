// The report contract shared by every subcommand: kernodeck.report/v1.
//
// A report says what was examined (subject), which steps ran and how they
// ended (passed / failed / skipped / not_reached, with the first error kept),
// every finding with its evidence, and one JSON section per inspected area.
// Findings are data, not errors: an audit collects all of them and renders once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::report {

enum class Severity { Info = 0, Warning = 1, Error = 2 };
enum class StepStatus { Passed, Failed, Skipped, NotReached };

const char* toString(Severity s);
const char* toString(StepStatus s);
// Inverse of toString(Severity); nullopt for anything else.
std::optional<Severity> parseSeverity(std::string_view s);
// Parses "info", "warning", "error" (also "none", meaning never fail on findings).
Result<int> parseFailOn(std::string_view s);
// j[key] when j is an object holding a string there, else "": reading reports back (renderers, diff).
std::string stringAt(const nlohmann::json& j, const char* key);

// The exceptions entry that waived a finding (exceptions.h): the finding stays in every output,
// marked with it, and no verdict counts it.
struct Suppression {
  std::string reason, expires;  // the entry's reason and expiry date (YYYY-MM-DD)
  std::string file;             // the exceptions file as named
  int entry = 0;                // its position in the file's `exceptions` list, from 0
};

// {"reason", "expires", "file", "entry"}: a suppressed finding's `suppression` in JSON.
nlohmann::json suppressionJson(const Suppression& s);

struct Finding {
  std::string code;  // stable dotted id, e.g. "blob.digest.mismatch"
  Severity severity = Severity::Warning;
  std::string message;
  // Evidence fields: layer, path, digest, package, ... Rendered as top-level keys.
  std::map<std::string, std::string> evidence;
  std::optional<Suppression> suppression = std::nullopt;  // set by applyExceptions
  bool suppressed() const { return suppression.has_value(); }
  // The evidence field `key`, or "" where the finding has none.
  std::string evidenceOf(const std::string& key) const {
    auto it = evidence.find(key);
    return it == evidence.end() ? std::string() : it->second;
  }
};

struct Step {
  std::string name;
  StepStatus status = StepStatus::NotReached;
  std::string error;  // the first error of this step, empty unless failed/skipped
  int64_t duration_ms = 0;
  bool cached = false;  // the outcome was replayed from a content-addressed cache, not run now
};

// Documented exit codes of every subcommand.
enum ExitCode : int { kExitOk = 0, kExitFindings = 1, kExitUsage = 2, kExitIncomplete = 3 };

// The exit code of a command stopped by `e`, derived from its kind here and nowhere else:
// kExitUsage (2) when the input was read but is not what the command takes (Invalid, Corrupt,
// Unsafe: garbage JSON, a field of the wrong type, a hostile path), kExitIncomplete (3) when the
// work could not be done (NotFound, Io, Auth, Unreachable, Timeout, Signature, Failed,
// Unsupported). Where a command's exit code depends on the step that failed rather than on the
// error, the step decides (a flag is a usage error whatever its parser says).
ExitCode exitCodeOf(const Error& e);

class Report {
 public:
  static constexpr const char* kSchema = "kernodeck.report/v1";

  explicit Report(std::string tool) : tool_(std::move(tool)) {}

  // Declares the steps in order; all start as not_reached.
  void declareSteps(const std::vector<std::string>& names);
  // Runs a declared step unless an earlier step failed (then it stays not_reached).
  // Returns true when the step passed.
  bool runStep(const std::string& name, const std::function<Status()>& fn);
  void skipStep(const std::string& name, const std::string& reason);
  // Sets a step's outcome from an earlier run of the same analysis on the same content
  // (passed or skipped only), marked as cached.
  void restoreStep(const std::string& name, StepStatus status, const std::string& reason);
  bool failed() const { return !first_error_.empty(); }
  const std::string& firstError() const { return first_error_; }
  const std::vector<Step>& steps() const { return steps_; }

  void add(Finding f);
  void add(std::string code, Severity sev, std::string message, std::map<std::string, std::string> evidence = {});
  const std::vector<Finding>& findings() const { return findings_; }
  std::vector<Finding>& mutableFindings() { return findings_; }  // applyExceptions marks them
  bool hasFinding(std::string_view code) const;

  const std::string& tool() const { return tool_; }
  nlohmann::json& subject() { return subject_; }
  const nlohmann::json& subject() const { return subject_; }
  // A section per inspected area: "image", "layers", "os", "python", "host"...
  nlohmann::json& section(const std::string& name) { return sections_[name]; }
  const nlohmann::json& sections() const { return sections_; }

  // 0 when every step passed and no finding is at or above failOn (-1: never),
  // 1 on findings at or above it, 3 when a step failed. Suppressed findings do not count.
  int exitCode(int failOn) const;
  // The one-word outcome for people and dashboards: "pass", "fail" (findings at or above
  // failOn) or "incomplete" (a step failed), matching exitCode.
  const char* verdict(int failOn) const;

  // Every finding, each with its own evidence (and `suppression` when an exception waived it),
  // plus `groups` (see group.h) and a summary (verdict under failOn, counts by severity and by
  // code of the findings not suppressed; `suppressed`, by severity, when some are).
  nlohmann::json toJson(int failOn = 2) const;
  // For people (src/report/text.cc): a summary block (verdict, counts, what was found), the
  // steps, then the findings grouped, each large group cut to its first few members.
  std::string toText(int failOn = 2) const;

 private:
  Step* find(const std::string& name);

  std::string tool_;
  nlohmann::json subject_ = nlohmann::json::object();
  nlohmann::json sections_ = nlohmann::json::object();
  std::vector<Step> steps_;
  std::vector<Finding> findings_;
  std::string first_error_;
};

}  // namespace kernodeck::report
