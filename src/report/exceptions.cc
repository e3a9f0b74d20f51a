// See exceptions.h. The reader is strict (an exceptions file decides what a verdict counts, so a
// typo must not widen or silently drop a waiver), the matching is exact where it can be.
#include "kernodeck/report/exceptions.h"

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <set>

#include "kernodeck/report/redact.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::report {

using nlohmann::json;

namespace {

constexpr const char* kFields[] = {"code", "package", "path", "image", "reason", "expires"};

// YYYY-MM-DD as a day, or nullopt when it is not one (2027-02-30 included).
std::optional<std::chrono::sys_days> parseDay(std::string_view s) {
  using namespace std::chrono;
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return std::nullopt;
  int y = std::stoi(std::string(s.substr(0, 4)));
  unsigned m = std::stoul(std::string(s.substr(5, 2))), d = std::stoul(std::string(s.substr(8, 2)));
  year_month_day ymd{year{y}, month{m}, day{d}};
  if (!ymd.ok()) return std::nullopt;
  return sys_days{ymd};
}

std::string dayString(std::chrono::sys_days d) {
  std::chrono::year_month_day ymd{d};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()));
  return buf;
}

// The same day a year later (28 February for 29 February).
std::chrono::sys_days aYearAfter(std::chrono::sys_days d) {
  using namespace std::chrono;
  year_month_day ymd{d};
  year_month_day next{ymd.year() + years{1}, ymd.month(), ymd.day()};
  if (!next.ok()) next = year_month_day{ymd.year() + years{1}, ymd.month(), day{28}};
  return sys_days{next};
}

// PEP 503: lower case, runs of -_. as one "-".
std::string normalName(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '-' || c == '_' || c == '.') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  return out;
}

bool glob(const std::string& pattern, const std::string& text) {
  return !text.empty() && ::fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// "pkg:TYPE/[NAMESPACE/]NAME[@VERSION][?...][#...]" -> name and version (percent-decoding left
// out: package names need none).
void purlParts(std::string_view purl, std::string& name, std::string& version) {
  std::string_view rest = purl.substr(4);
  rest = rest.substr(0, std::min(rest.find('?'), rest.find('#')));
  if (size_t at = rest.rfind('@'); at != std::string_view::npos) {
    version = std::string(rest.substr(at + 1));
    rest = rest.substr(0, at);
  }
  name = std::string(rest.substr(rest.rfind('/') + 1));
}

bool packageMatches(const std::string& want, const Finding& f) {
  std::string pkg = f.evidenceOf("package");
  if (pkg.empty()) pkg = f.evidenceOf("name");
  if (pkg.empty()) return false;
  if (!want.starts_with("pkg:")) return normalName(want) == normalName(pkg);
  std::string name, version;
  purlParts(want, name, version);
  if (normalName(name) != normalName(pkg)) return false;
  if (version.empty()) return true;
  std::string installed = f.evidenceOf("installed");
  if (installed.empty()) installed = f.evidenceOf("version");
  return installed == version;
}

bool pathMatches(const std::string& pattern, const Finding& f) {
  std::string p = f.evidenceOf("path");
  if (p.empty()) return false;
  std::string bare = p;
  while (!bare.empty() && bare[0] == '/') bare.erase(0, 1);
  return glob(pattern, p) || glob(pattern, bare);
}

bool imageMatches(const std::string& pattern, const json& subject) {
  std::string registry = stringAt(subject, "registry"), repo = stringAt(subject, "repository");
  if (!registry.empty() && !repo.empty() && glob(pattern, registry + "/" + repo)) return true;
  return glob(pattern, repo) || glob(pattern, stringAt(subject, "reference"));
}

std::string entryName(const std::string& file, size_t i, const ExceptionEntry& x) {
  return file + ": exceptions[" + std::to_string(i) + "]" + (x.code.empty() ? "" : " (" + x.code + ")");
}

}  // namespace

const std::vector<std::string>& unwaivableCodes() {
  static const std::vector<std::string> codes = {
      "blob.digest.mismatch",    "blob.digest.unverifiable", "blob.missing",          "layer.path.unsafe",
      "manifest.schema.invalid", "index.schema.invalid",     "config.schema.invalid", "layout.schema.invalid",
      "exception.expired",       "exception.refused"};
  return codes;
}

bool isUnwaivable(std::string_view code) {
  const auto& c = unwaivableCodes();
  return std::find(c.begin(), c.end(), code) != c.end();
}

std::string todayUtc() {
  return dayString(std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now()));
}

Result<ExceptionsFile> parseExceptions(const json& doc, const std::string& name, const std::string& sha256,
                                       std::string_view today) {
  ExceptionsFile out;
  out.name = name;
  out.sha256 = sha256;
  auto fail = [&](const std::string& what) { return Error::Invalid(name + ": " + what); };
  if (!doc.is_object()) return fail("not a kernodeck.exceptions/v1 document (expected a mapping)");
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "schema" && it.key() != "exceptions")
      return fail("unknown field '" + util::printable(it.key(), 60) + "' (schema and exceptions are read)");
  util::JsonReader root(doc);
  std::string schema;
  if (auto st = root.get("schema", schema); !st.ok()) return fail(st.error().message);
  if (schema != ExceptionsFile::kSchema)
    return fail("schema is '" + util::printable(schema, 60) + "', expected " + ExceptionsFile::kSchema);
  auto entries = root.array("exceptions");
  if (!entries.ok()) return fail(entries.error().message);
  auto todayDay = parseDay(today);
  if (!todayDay) return Error::Invalid("today is not YYYY-MM-DD: " + std::string(today));
  std::chrono::sys_days latest = aYearAfter(*todayDay);
  for (size_t i = 0; i < entries->size(); ++i) {
    const util::JsonReader& r = (*entries)[i];
    ExceptionEntry x;
    if (!r.json().is_object()) return fail("exceptions[" + std::to_string(i) + "] is not a mapping");
    // The code first, so that every later error names it.
    (void)r.getOpt("code", x.code);
    std::string where = entryName(name, i, x);
    for (auto it = r.json().begin(); it != r.json().end(); ++it)
      if (std::find(std::begin(kFields), std::end(kFields), it.key()) == std::end(kFields))
        return Error::Invalid(where + ": unknown field '" + util::printable(it.key(), 60) +
                              "' (code, package, path, image, reason, expires)");
    std::string* fields[] = {&x.code, &x.package, &x.path, &x.image, &x.reason, &x.expires};
    for (size_t k = 0; k < std::size(kFields); ++k) {
      bool required = k == 0 || k == 4 || k == 5;
      if (!r.has(kFields[k])) {
        if (required) return Error::Invalid(where + ": '" + kFields[k] + "' is required");
        continue;
      }
      if (!r.json()[kFields[k]].is_string())
        return Error::Invalid(where + ": '" + kFields[k] + "' is not a string" +
                              (k == 5 ? " (write the date as YYYY-MM-DD)" : ""));
      *fields[k] = r.json()[kFields[k]].get<std::string>();
      if (std::string(util::trim(*fields[k])).empty())
        return Error::Invalid(where + ": '" + kFields[k] + "' is empty");
    }
    auto day = parseDay(x.expires);
    if (!day) return Error::Invalid(where + ": expires '" + util::printable(x.expires, 40) + "' is not a date YYYY-MM-DD");
    if (*day > latest)
      return Error::Invalid(where + ": expires " + x.expires + " is more than a year ahead (at most " +
                            dayString(latest) + ")");
    out.entries.push_back(std::move(x));
  }
  return out;
}

json exceptionsJson(const ExceptionsFile& f) {
  json entries = json::array();
  for (const auto& x : f.entries) {
    json j = {{"code", x.code}};
    if (!x.package.empty()) j["package"] = x.package;
    if (!x.path.empty()) j["path"] = x.path;
    if (!x.image.empty()) j["image"] = x.image;
    j["reason"] = x.reason;
    j["expires"] = x.expires;
    entries.push_back(j);
  }
  return {{"schema", ExceptionsFile::kSchema}, {"exceptions", entries}};
}

bool exceptionMatches(const ExceptionEntry& x, const Finding& f, const json& subject) {
  if (x.code != f.code) return false;
  if (!x.package.empty() && !packageMatches(x.package, f)) return false;
  if (!x.path.empty() && !pathMatches(x.path, f)) return false;
  if (!x.image.empty() && !imageMatches(x.image, subject)) return false;
  return true;
}

void applyExceptions(Report& r, const std::vector<ExceptionsFile>& files, std::string_view today) {
  json section = {{"files", json::array()}};
  std::vector<Finding>& findings = r.mutableFindings();
  const size_t original = findings.size();  // the exception findings added below are not matched
  std::vector<Finding> added;
  for (const auto& file : files) {
    json jf = {{"file", file.name}, {"sha256", file.sha256}, {"entries", json::array()}};
    for (size_t i = 0; i < file.entries.size(); ++i) {
      const ExceptionEntry& x = file.entries[i];
      std::string where = entryName(file.name, i, x);
      bool expired = x.expires < std::string(today);  // both YYYY-MM-DD
      bool refused = isUnwaivable(x.code);
      int matched = 0;
      for (size_t k = 0; k < original; ++k) {
        Finding& f = findings[k];
        if (!exceptionMatches(x, f, r.subject())) continue;
        ++matched;
        // The first entry that matches a finding waives it.
        if (!expired && !refused && !f.suppression)
          f.suppression = Suppression{redactText(x.reason), x.expires, file.name, static_cast<int>(i)};
      }
      std::map<std::string, std::string> ev = {{"file", file.name},
                                               {"entry", std::to_string(i)},
                                               {"exception_code", x.code},
                                               {"expires", x.expires},
                                               {"matched", std::to_string(matched)}};
      std::string status = "applied";
      if (refused) {
        status = "refused";
        added.push_back(Finding{"exception.refused", Severity::Error,
                                where + " is refused: " + x.code +
                                    " cannot be waived (the image is not what its digests say, or a path escapes); " +
                                    std::to_string(matched) + " finding(s) stay",
                                ev});
      } else if (expired) {
        status = "expired";
        added.push_back(Finding{"exception.expired", Severity::Error,
                                where + " expired on " + x.expires + "; " + std::to_string(matched) +
                                    " finding(s) it matches count again",
                                ev});
      } else if (matched == 0) {
        status = "unused";
        added.push_back(Finding{"exception.unused", Severity::Info,
                                where + " matched no finding: remove it or check its fields", ev});
      }
      json je = exceptionsJson(ExceptionsFile{"", "", {x}})["exceptions"][0];
      je["reason"] = redactText(x.reason);
      je["status"] = status;
      je["matched"] = matched;
      jf["entries"].push_back(je);
    }
    section["files"].push_back(jf);
  }
  for (auto& f : added) r.add(std::move(f));
  json counts = {{"info", 0}, {"warning", 0}, {"error", 0}};
  for (const auto& f : r.findings())
    if (f.suppressed()) counts[toString(f.severity)] = counts[toString(f.severity)].get<int>() + 1;
  section["suppressed"] = counts;
  r.section("exceptions") = section;
}

namespace {
// What one predicate carries of the suppressed findings: 64 of them, each field cut at 256 bytes
// (about 40 KiB at most, well under the envelope's bound).
constexpr size_t kMaxSummaryFindings = 64;
constexpr size_t kMaxSummaryField = 256;
}  // namespace

json exceptionsSummary(const json& report) {
  if (!report.is_object() || !report.contains("exceptions") || !report["exceptions"].is_object()) return nullptr;
  const json& sec = report["exceptions"];
  json out = {{"files", json::array()}, {"suppressed", {{"info", 0}, {"warning", 0}, {"error", 0}}},
              {"findings", json::array()}};
  if (sec.contains("files") && sec["files"].is_array())
    for (const auto& f : sec["files"])
      out["files"].push_back({{"file", stringAt(f, "file")}, {"sha256", stringAt(f, "sha256")}});
  if (report.contains("findings") && report["findings"].is_array())
    for (const auto& f : report["findings"]) {
      if (!f.is_object() || !f.contains("suppression") || !f["suppression"].is_object()) continue;
      const json& s = f["suppression"];
      std::string sev = stringAt(f, "severity");
      if (out["suppressed"].contains(sev)) out["suppressed"][sev] = out["suppressed"][sev].get<int64_t>() + 1;
      json e = {{"code", stringAt(f, "code")},    {"severity", sev},
                {"reason", stringAt(s, "reason")}, {"expires", stringAt(s, "expires")},
                {"file", stringAt(s, "file")},     {"entry", s.contains("entry") && s["entry"].is_number_integer()
                                                                 ? s["entry"].get<int64_t>()
                                                                 : -1}};
      for (const char* k : {"package", "path"})
        if (!stringAt(f, k).empty()) e[k] = stringAt(f, k);
      // Bounded, as the signed envelope that carries it is (attest::kMaxReportEnvelopeBytes): the whole
      // list is in the report, whose digest the predicate signs.
      if (out["findings"].size() >= kMaxSummaryFindings) {
        out["findings_omitted"] = out.value("findings_omitted", 0) + 1;
        continue;
      }
      for (auto& [k, v] : e.items())
        if (v.is_string() && v.get_ref<const std::string&>().size() > kMaxSummaryField)
          v = v.get<std::string>().substr(0, kMaxSummaryField) + "...";
      out["findings"].push_back(e);
    }
  return out;
}

std::string exceptionsSummaryText(const json& summary, const std::string& indent) {
  if (!summary.is_object()) return "";
  auto count = [&](const char* sev) {
    const json& s = summary.contains("suppressed") ? summary["suppressed"] : json();
    return s.is_object() && s.contains(sev) && s[sev].is_number_integer() ? s[sev].get<int64_t>() : 0;
  };
  std::string out = indent + "exceptions: " + std::to_string(count("error")) + " error, " +
                    std::to_string(count("warning")) + " warning, " + std::to_string(count("info")) +
                    " info suppressed\n";
  if (summary.contains("files") && summary["files"].is_array())
    for (const auto& f : summary["files"])
      out += indent + "  file " + util::printable(stringAt(f, "file"), 200) + " sha256:" + stringAt(f, "sha256") + "\n";
  if (summary.contains("findings") && summary["findings"].is_array())
    for (const auto& f : summary["findings"])
      out += indent + "  " + stringAt(f, "severity") + " " + stringAt(f, "code") +
             (stringAt(f, "package").empty() ? "" : " [" + stringAt(f, "package") + "]") + ": " +
             util::printable(stringAt(f, "reason"), 300) + " (expires " + stringAt(f, "expires") + ")\n";
  if (summary.contains("findings_omitted") && summary["findings_omitted"].is_number_integer())
    out += indent + "  ... and " + std::to_string(summary["findings_omitted"].get<int64_t>()) +
           " more suppressed finding(s), listed in the report\n";
  return out;
}

}  // namespace kernodeck::report
