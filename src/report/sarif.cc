// SARIF 2.1.0 (OASIS) as GitHub code scanning accepts it (sarif-multitool's "Sarif;Gh" rules):
// one rule per finding code, its description and help from the findings tables of docs/findings.md
// (rules.h), `security-severity` on security findings; one result per finding group (group.h)
// with every path of the group as a location relative to the audited root filesystem (uriBaseId
// ROOTFS), cut into parts of at most 1,000 locations (GitHub refuses more), and the image or tree
// itself as the location of a finding about no file. A "FILE:LINE" path (requirement files)
// becomes a region. partialFingerprints name the group, so an alert keeps its identity across
// runs. A group an exception waived carries `suppressions` (external, accepted, the entry's
// reason as justification).
#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <utility>

#include "kernodeck/report/formats.h"
#include "kernodeck/report/group.h"
#include "kernodeck/report/rules.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/version.h"

namespace kernodeck::report {

namespace {

using nlohmann::json;

const char* level(Severity s) {
  switch (s) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Info: return "note";
  }
  return "none";
}

// An RFC 3986 relative reference for a path in the audited tree.
std::string uriOf(const std::string& path) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  size_t i = 0;
  while (i < path.size() && path[i] == '/') ++i;
  for (; i < path.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(path[i]);
    if (std::isalnum(c) || c == '/' || c == '.' || c == '-' || c == '_' || c == '~')
      out += static_cast<char>(c);
    else
      out += std::string("%") + hex[c >> 4] + hex[c & 15];
  }
  return out;
}

// A file of the audited tree, "FILE:LINE" for a line of it (requirement files).
json fileLocation(const std::string& path) {
  std::string file = path;
  long line = 0;
  if (size_t colon = path.rfind(':'); colon != std::string::npos && colon + 1 < path.size() &&
                                      path.find_first_not_of("0123456789", colon + 1) == std::string::npos &&
                                      path.size() - colon <= 10) {
    file = path.substr(0, colon);
    line = std::stol(path.substr(colon + 1));
  }
  json phys = {{"artifactLocation", {{"uri", uriOf(file)}, {"uriBaseId", "ROOTFS"}}}};
  if (line > 0) phys["region"] = {{"startLine", line}};
  return {{"physicalLocation", phys}};
}

// The audited image or tree itself, for a finding about no file (a config variable, a
// manifest): its reference as a relative URI, as image scanners (Trivy, Grype) locate theirs.
json subjectLocation(const std::string& subject) {
  return {{"physicalLocation", {{"artifactLocation", {{"uri", uriOf(subject)}}}}}};
}

// The package or layer a group is about, as a logical location beside the physical one.
void addLogical(json& loc, const FindingGroup& g) {
  if (g.package.empty() && g.layer.empty()) return;
  loc["logicalLocations"] = json::array(
      {{{"name", g.package.empty() ? g.layer : g.package}, {"kind", g.package.empty() ? "module" : "package"}}});
}

json ruleOf(const std::string& code) {
  RuleText t = ruleText(code);
  json rule = {{"id", code},
               {"name", t.name},
               {"shortDescription", {{"text", t.shortText}}},
               {"fullDescription", {{"text", t.fullText}}},
               {"help", {{"text", t.helpText}, {"markdown", t.helpMarkdown}}},
               {"defaultConfiguration", {{"level", t.defaultLevel}}}};
  json props = {{"tags", json::array({code.substr(0, code.find('.'))})}};
  if (t.securitySeverity > 0) {
    char score[16];
    std::snprintf(score, sizeof score, "%.1f", t.securitySeverity);
    props["tags"].push_back("security");
    props["security-severity"] = score;
  }
  rule["properties"] = props;
  return rule;
}

// One part of a group: at most kSarifMaxLocations of its members with a path, or its members
// without one.
struct Part {
  std::vector<const Finding*> members;
  std::vector<std::string> paths;
};

// A group cut into parts of at most kSarifMaxLocations locations, its paths sorted so that each
// part is one range of the tree; members without a path go with the first part.
std::vector<Part> partsOf(const FindingGroup& g) {
  std::vector<std::pair<std::string, const Finding*>> withPath;
  std::vector<const Finding*> without;
  for (const Finding* f : g.members) {
    if (std::string path = f->evidenceOf("path"); !path.empty())
      withPath.emplace_back(std::move(path), f);
    else
      without.push_back(f);
  }
  std::stable_sort(withPath.begin(), withPath.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Part> parts;
  for (size_t i = 0; i < withPath.size(); i += kSarifMaxLocations) {
    Part p;
    for (size_t j = i; j < std::min(withPath.size(), i + kSarifMaxLocations); ++j) {
      p.paths.push_back(withPath[j].first);
      p.members.push_back(withPath[j].second);
    }
    parts.push_back(std::move(p));
  }
  if (parts.empty()) parts.emplace_back();
  parts.front().members.insert(parts.front().members.end(), without.begin(), without.end());
  return parts;
}

// Stable across runs: the group's identity (code, package or layer) and the part's number,
// never the subject's digest or the message.
std::string fingerprint(const FindingGroup& g, size_t part, size_t parts) {
  std::string key = g.code + '\0' + toString(g.severity) + '\0' + g.package + '\0' + g.layer;
  // A group waived by an exception is told apart from the live rest of the same findings.
  if (g.suppression) key += "\0suppressed\0" + g.suppression->file + '\0' + std::to_string(g.suppression->entry);
  if (parts > 1) key += '\0' + std::to_string(part);
  return util::sha256Hex(key).substr(0, 32);
}

}  // namespace

json toSarif(const Report& r) {
  std::string subject = stringAt(r.subject(), "reference");
  if (subject.empty()) subject = r.tool();
  json rules = json::array();
  std::map<std::string, size_t> ruleIndex;
  json results = json::array();
  for (const auto& g : groupFindings(r.findings())) {
    auto [it, fresh] = ruleIndex.emplace(g.code, rules.size());
    if (fresh) rules.push_back(ruleOf(g.code));
    std::vector<Part> parts = partsOf(g);
    for (size_t k = 0; k < parts.size(); ++k) {
      const Part& part = parts[k];
      std::string text = g.code + ": " + g.headline();
      if (parts.size() > 1)
        text += " (part " + std::to_string(k + 1) + " of " + std::to_string(parts.size()) + ": " +
                std::to_string(part.paths.size()) + " paths from " + part.paths.front() + " to " + part.paths.back() +
                ")";
      json res = {
          {"ruleId", g.code}, {"ruleIndex", it->second}, {"level", level(g.severity)}, {"message", {{"text", text}}}};
      json locs = json::array();
      for (const auto& p : part.paths) locs.push_back(fileLocation(p));
      if (locs.empty()) locs.push_back(subjectLocation(subject));
      addLogical(locs[0], g);
      res["locations"] = locs;
      res["partialFingerprints"] = {{"kernodeckGroup/v1", fingerprint(g, k, parts.size())}};
      // An exception waived it: GitHub shows the alert as dismissed with the entry's reason.
      if (g.suppression)
        res["suppressions"] = json::array({{{"kind", "external"},
                                            {"status", "accepted"},
                                            {"justification", g.suppression->reason + " (expires " +
                                                                  g.suppression->expires + "; " + g.suppression->file +
                                                                  " exceptions[" +
                                                                  std::to_string(g.suppression->entry) + "])"}}});
      json props = {{"count", part.members.size()}};
      if (parts.size() > 1) props["group_count"] = g.count();
      if (!g.package.empty()) props["package"] = g.package;
      if (!g.layer.empty()) props["layer"] = g.layer;
      if (part.members.size() > 1) {
        json messages = json::array();
        for (const Finding* f : part.members) messages.push_back(f->message);
        props["messages"] = messages;
      }
      res["properties"] = props;
      results.push_back(res);
    }
  }
  json invocation = {{"executionSuccessful", !r.failed()}};
  if (r.failed())
    invocation["toolExecutionNotifications"] =
        json::array({{{"level", "error"}, {"message", {{"text", r.firstError()}}}}});
  json run = {
      {"tool",
       {{"driver", {{"name", "kernodeck"}, {"version", kVersion}, {"semanticVersion", kVersion}, {"rules", rules}}}}},
      {"originalUriBaseIds", {{"ROOTFS", {{"description", {{"text", "the root filesystem of " + subject}}}}}}},
      {"invocations", json::array({invocation})},
      {"results", results},
      {"properties", {{"subject", r.subject()}}}};
  return {
      {"$schema", "https://json.schemastore.org/sarif-2.1.0.json"}, {"version", "2.1.0"}, {"runs", json::array({run})}};
}

}  // namespace kernodeck::report
