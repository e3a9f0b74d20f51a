// SARIF 2.1.0 (OASIS), what code-scanning services read: one rule per finding code, one result
// per finding group (group.h) with every path of the group as a location, relative to the
// audited root filesystem (uriBaseId ROOTFS). A "FILE:LINE" path (requirement files) becomes a
// region. Findings about no path name their layer or package as a logical location.
#include <cctype>
#include <map>

#include "kernodeck/report/formats.h"
#include "kernodeck/report/group.h"
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

json location(const std::string& path) {
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

}  // namespace

json toSarif(const Report& r) {
  json rules = json::array();
  std::map<std::string, size_t> ruleIndex;
  json results = json::array();
  for (const auto& g : groupFindings(r.findings())) {
    auto [it, fresh] = ruleIndex.emplace(g.code, rules.size());
    if (fresh)
      rules.push_back({{"id", g.code},
                       {"shortDescription", {{"text", g.code}}},
                       {"fullDescription", {{"text", g.members.front()->message}}},
                       {"defaultConfiguration", {{"level", level(g.severity)}}}});
    json res = {{"ruleId", g.code},
                {"ruleIndex", it->second},
                {"level", level(g.severity)},
                {"message", {{"text", g.code + ": " + g.headline()}}}};
    json locs = json::array();
    for (const auto& p : g.paths()) locs.push_back(location(p));
    if (locs.empty() && (!g.package.empty() || !g.layer.empty()))
      locs.push_back({{"logicalLocations", json::array({{{"name", g.package.empty() ? g.layer : g.package},
                                                         {"kind", g.package.empty() ? "module" : "package"}}})}});
    if (!locs.empty()) res["locations"] = locs;
    json props = {{"count", g.count()}};
    if (!g.package.empty()) props["package"] = g.package;
    if (!g.layer.empty()) props["layer"] = g.layer;
    if (g.count() > 1) {
      json messages = json::array();
      for (const Finding* f : g.members) messages.push_back(f->message);
      props["messages"] = messages;
    }
    res["properties"] = props;
    results.push_back(res);
  }
  json invocation = {{"executionSuccessful", !r.failed()}};
  if (r.failed())
    invocation["toolExecutionNotifications"] =
        json::array({{{"level", "error"}, {"message", {{"text", r.firstError()}}}}});
  std::string subject = stringAt(r.subject(), "reference");
  if (subject.empty()) subject = r.tool();
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
