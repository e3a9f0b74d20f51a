// kernodeck.exceptions/v1: findings a team knows and accepts for a while, each with a reason and
// an expiry date (docs/exceptions.md). One typed reader (parseExceptions, from the document as
// JSON: YAML is read into JSON first by hook::parseYaml) and one writer (exceptionsJson).
//
//   schema: kernodeck.exceptions/v1
//   exceptions:
//     - code: python.pin.mismatch            # required: a finding code, exact
//       package: model-server                # optional: a package name, or a purl
//       path: "app/requirements.txt*"        # optional: a glob on the finding's path
//       image: "registry.example.com/team/*" # optional: a glob on the image's repository
//       reason: "0.3.0 is the tested build"  # required
//       expires: 2027-03-01                  # required: a date, at most a year ahead
//
// Applying the entries to a report (applyExceptions) marks each finding an entry matches as
// suppressed (it stays in every output, with the entry's reason and expiry; the verdict and
// --fail-on count only the others) and adds exception.expired (error: an entry past its date,
// which suppresses nothing), exception.unused (info: an entry that matched nothing) and
// exception.refused (error: an entry naming a code that cannot be waived).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/report/report.h"
#include "kernodeck/util/result.h"

namespace kernodeck::report {

struct ExceptionEntry {
  std::string code, package, path, image, reason;
  std::string expires;  // YYYY-MM-DD, the last day the entry applies
};

struct ExceptionsFile {
  static constexpr const char* kSchema = "kernodeck.exceptions/v1";
  std::string name;    // the file as named on the command line
  std::string sha256;  // hex digest of its bytes
  std::vector<ExceptionEntry> entries;
};

// The codes no entry can waive: the image is not what its digests say, or a path escapes the
// root; and the exception findings themselves.
const std::vector<std::string>& unwaivableCodes();
bool isUnwaivable(std::string_view code);

// "YYYY-MM-DD" of today, UTC.
std::string todayUtc();

// Reads the document `doc` of the file `name` (hashed `sha256`), checked against `today`
// (YYYY-MM-DD): Invalid naming the file and the entry (exceptions[N], its code) for an unknown
// field, a missing or empty code, reason or expires, a date that is not YYYY-MM-DD or not a
// real day, or one more than a year after today. A date already past is read: it becomes an
// exception.expired finding where it is applied.
Result<ExceptionsFile> parseExceptions(const nlohmann::json& doc, const std::string& name, const std::string& sha256,
                                       std::string_view today);
// The writer: the file as kernodeck.exceptions/v1 JSON (reads back to the same entries).
nlohmann::json exceptionsJson(const ExceptionsFile& f);

// Whether `e` matches the finding `f` of a report whose subject is `subject`: the code exactly;
// the package by name (PEP 503 normalised) or purl (pkg:TYPE/NAME[@VERSION], the version
// compared with the finding's installed version when it has one); the path as an fnmatch glob
// (with or without the leading "/"); the image as a glob on the subject's registry/repository
// (or its repository, or its reference).
bool exceptionMatches(const ExceptionEntry& e, const Finding& f, const nlohmann::json& subject);

// Applies every entry of `files` to `r` (see the top of this file) and records what was applied
// in the report's `exceptions` section (each file's name and sha256, each entry with its status
// and the count it matched, the suppressed findings counted by severity).
void applyExceptions(Report& r, const std::vector<ExceptionsFile>& files, std::string_view today);

// What a signed predicate records of a kernodeck.report/v1 JSON report's exceptions: each
// suppressed finding (code, severity, the entry's reason and expiry, file and entry), the
// suppressed findings counted by severity and each exceptions file's sha256. Null when the report
// was audited without exceptions. Bounded: at most 64 findings listed (`findings_omitted` counts
// the rest; the counts by severity are whole), each string cut at 256 bytes.
nlohmann::json exceptionsSummary(const nlohmann::json& report);
// exceptionsSummary as lines for people, each starting with `indent`: the suppressed counts and
// files, then each suppressed finding with its reason and expiry. Empty for null.
std::string exceptionsSummaryText(const nlohmann::json& summary, const std::string& indent = "  ");

}  // namespace kernodeck::report
