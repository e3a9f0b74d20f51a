// The formats a report is written in (`--format`): text and kernodeck.report/v1 JSON for people
// and Kernodeck itself, and the formats other tools read: SARIF 2.1.0 (code scanning; rules from
// the finding codes, locations as paths), CycloneDX 1.5 and SPDX 2.3 JSON (SBOM platforms: the
// OS, its packages, the Python environments and their packages, with hashes where the image
// holds them and the verification result as properties), and a standalone HTML page.
// Each renderer is a pure function of the report.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/report/report.h"
#include "kernodeck/util/result.h"

namespace kernodeck::report {

enum class Format { Text, Json, Sarif, CycloneDx, Spdx, Html, Markdown };

// "text", "json", "sarif", "cyclonedx", "spdx", "html", "markdown"; anything else is a usage error.
Result<Format> parseFormat(std::string_view name);
// --format and its --json alias together: json when only --json is given, text when neither,
// a usage error when they disagree.
Result<Format> parseFormatOptions(std::string_view format, bool jsonAlias);
// The names parseFormat takes, for help texts and errors.
const char* formatNames();

// The report in `format`, ending with a newline; `failOn` decides the verdict it states.
std::string render(const Report& r, Format format, int failOn);

// One thing an SBOM lists: the audited image or tree, its OS, a package (dpkg, rpm, apk, Python,
// conda), a Python interpreter.
struct Component {
  std::string ref;   // unique in the inventory
  std::string type;  // "container", "operating-system", "os-package", "python", "python-package", "conda-package"
  std::string name, version, purl, description;
  std::map<std::string, std::string> hashes;  // "SHA-256" -> lower-case hex
  // The audit's verdict on this component: "verified", "findings: CODE=N, ..." (worst first),
  // or empty when nothing was checked.
  std::string verification;
  std::string worstSeverity;  // of its findings ("error", "warning", "info"), empty when none
  std::vector<std::pair<std::string, std::string>> properties;  // "kernodeck:..." -> value
};

// The components of an audit report (its subject first), read from its sections and findings.
std::vector<Component> inventoryOf(const Report& r, int failOn);

// GitHub code scanning refuses a SARIF result with more locations: toSarif cuts a larger group.
constexpr size_t kSarifMaxLocations = 1000;

nlohmann::json toSarif(const Report& r);
nlohmann::json toCycloneDx(const Report& r, int failOn);
nlohmann::json toSpdx(const Report& r, int failOn);
std::string toHtml(const Report& r, int failOn);

// GitHub refuses a pull-request comment longer than this (and a job summary step's is 1 MiB).
constexpr size_t kMarkdownMaxChars = 65536;
// Markdown for a CI job summary or a pull-request comment (GitHub and GitLab render it): the
// verdict, the subject and its digest, counts by severity (suppressed apart), the findings grouped
// as the text groups them, those an exception suppressed with reason and expiry; for a `diff`
// report, what a reviewer of an image bump needs (packages added, removed and changed, OS and
// Python apart; the torch/CUDA build; findings new and fixed; exceptions added and expired). At
// most `maxChars` characters: past it, whole lines are left out and a last line says how many.
std::string toMarkdown(const Report& r, int failOn, size_t maxChars = kMarkdownMaxChars);

// A stable RFC 4122-shaped UUID derived from `seed`.
std::string uuidFrom(const std::string& seed);
// The UUID of the report's content (SBOM serial numbers and namespaces): from its JSON without
// the time it is written at ("created"), so the same report gives the same UUID a second later.
std::string reportUuid(const Report& r, int failOn);

}  // namespace kernodeck::report
