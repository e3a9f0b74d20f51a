// The components of an audit report, for the SBOM formats: read back from the report's own
// sections (subject, os, os_packages, python) and findings, so the SBOMs say exactly what the
// JSON report says.
#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "kernodeck/report/formats.h"

namespace kernodeck::report {

namespace {

using nlohmann::json;

// Package URL component encoding: everything but unreserved characters is percent-encoded.
std::string purlEncode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '.' || c == '-' || c == '_' || c == '~')
      out += static_cast<char>(c);
    else
      out += std::string("%") + hex[c >> 4] + hex[c & 15];
  }
  return out;
}

// PEP 503 normalisation, as the pypi purl type asks.
std::string pypiName(const std::string& n) {
  std::string out;
  for (char c : n) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (l == '_' || l == '.' || l == '-') {
      if (out.empty() || out.back() != '-') out += '-';
    } else {
      out += l;
    }
  }
  return out;
}

// Per package name, the findings about it: codes with counts and the worst severity.
struct Verdicts {
  std::map<std::string, std::map<std::string, int>> codes;
  std::map<std::string, int> worst;

  Verdicts(const std::vector<Finding>& findings, const char* prefix) {
    for (const auto& f : findings) {
      auto it = f.evidence.find("package");
      if (it == f.evidence.end() || f.code.rfind(prefix, 0) != 0) continue;
      codes[it->second][f.code]++;
      int& w = worst.try_emplace(it->second, -1).first->second;
      w = std::max(w, static_cast<int>(f.severity));
    }
  }

  void apply(Component& c, const std::string& package, bool checked) const {
    auto it = codes.find(package);
    if (it == codes.end()) {
      c.verification = checked ? "verified" : "";
      return;
    }
    std::string v = "findings: ";
    bool first = true;
    for (const auto& [code, n] : it->second) {
      v += (first ? "" : ", ") + code + "=" + std::to_string(n);
      first = false;
    }
    c.verification = v;
    c.worstSeverity = toString(static_cast<Severity>(worst.at(package)));
  }
};

}  // namespace

std::vector<Component> inventoryOf(const Report& r, int failOn) {
  std::vector<Component> out;
  std::set<std::string> refs;  // bom-refs are unique in a document
  const json& subject = r.subject();
  const json& sections = r.sections();
  Component top;
  top.ref = "subject";
  top.type = stringAt(subject, "transport") == "dir" ? "filesystem" : "container";
  top.name = stringAt(subject, "reference");
  if (top.name.empty()) top.name = r.tool();
  std::string digest = stringAt(subject, "manifest_digest");
  if (digest.rfind("sha256:", 0) == 0) {
    top.hashes["SHA-256"] = digest.substr(7);
    top.version = digest;
  }
  top.verification = r.verdict(failOn);
  top.properties.push_back({"kernodeck:verdict", r.verdict(failOn)});
  if (auto p = stringAt(subject, "platform"); !p.empty()) top.properties.push_back({"kernodeck:platform", p});
  out.push_back(top);

  std::string osId = "unknown";
  if (sections.contains("os") && sections["os"].is_object() && !stringAt(sections["os"], "id").empty()) {
    const json& os = sections["os"];
    osId = stringAt(os, "id");
    Component c;
    c.ref = "os";
    c.type = "operating-system";
    c.name = osId;
    c.version = stringAt(os, "version_id");
    c.description = stringAt(os, "pretty_name");
    if (auto a = stringAt(os, "architecture"); !a.empty()) c.properties.push_back({"kernodeck:architecture", a});
    out.push_back(c);
  }

  if (sections.contains("os_packages") && sections["os_packages"].is_object()) {
    const json& op = sections["os_packages"];
    Verdicts verdicts(r.findings(), "os.package.");
    bool verified = op.value("files_verified", 0) > 0;
    if (op.contains("packages") && op["packages"].is_array())
      for (const auto& p : op["packages"]) {
        Component c;
        c.type = "os-package";
        c.name = stringAt(p, "name");
        c.version = stringAt(p, "version");
        std::string arch = stringAt(p, "architecture");
        c.ref = "deb:" + c.name + ":" + arch;
        c.purl = "pkg:deb/" + purlEncode(osId) + "/" + purlEncode(c.name) + "@" + purlEncode(c.version) +
                 (arch.empty() ? "" : "?arch=" + purlEncode(arch));
        if (auto src = stringAt(p, "source"); !src.empty() && src != c.name)
          c.properties.push_back({"kernodeck:source", src});
        verdicts.apply(c, c.name, verified);
        if (refs.insert(c.ref).second) out.push_back(c);
      }
  }

  if (sections.contains("python") && sections["python"].is_object() && sections["python"].contains("environments") &&
      sections["python"]["environments"].is_array()) {
    Verdicts verdicts(r.findings(), "python.");
    for (const auto& e : sections["python"]["environments"]) {
      std::string prefix = stringAt(e, "prefix");
      Component py;
      py.ref = "python:" + prefix;
      py.type = "python";
      py.name = "python";
      py.version = stringAt(e, "python_version");
      py.description = stringAt(e, "kind") + " environment at " + prefix;
      py.properties = {{"kernodeck:environment", prefix}, {"kernodeck:kind", stringAt(e, "kind")}};
      if (auto i = stringAt(e, "interpreter"); !i.empty()) py.properties.push_back({"kernodeck:interpreter", i});
      if (refs.insert(py.ref).second) out.push_back(py);
      if (!e.contains("packages") || !e["packages"].is_array()) continue;
      for (const auto& p : e["packages"]) {
        Component c;
        c.type = "python-package";
        c.name = stringAt(p, "name");
        c.version = stringAt(p, "version");
        c.ref = "pypi:" + prefix + ":" + stringAt(p, "location") + ":" + c.name;
        if (!refs.insert(c.ref).second) continue;
        c.purl = "pkg:pypi/" + purlEncode(pypiName(c.name)) + "@" + purlEncode(c.version);
        if (p.contains("archive_hashes") && p["archive_hashes"].is_object())
          for (auto it = p["archive_hashes"].begin(); it != p["archive_hashes"].end(); ++it) {
            static const std::map<std::string, std::string> names = {
                {"sha256", "SHA-256"}, {"sha384", "SHA-384"}, {"sha512", "SHA-512"}, {"sha1", "SHA-1"}, {"md5", "MD5"}};
            if (auto n = names.find(it.key()); n != names.end() && it.value().is_string())
              c.hashes[n->second] = it.value();
          }
        c.properties = {{"kernodeck:environment", prefix}, {"kernodeck:location", stringAt(p, "location")}};
        if (auto inst = stringAt(p, "installer"); !inst.empty()) c.properties.push_back({"kernodeck:installer", inst});
        verdicts.apply(c, c.name, p.value("record", false));
        out.push_back(c);
      }
    }
  }
  return out;
}

}  // namespace kernodeck::report
