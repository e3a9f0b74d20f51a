// The components of an audit report, for the SBOM formats: read back from the report's own
// sections (subject, os, os_packages with its other databases, python with its conda
// environments) and findings, so the SBOMs say exactly what the JSON report says. Package URLs
// come from purl.h.
#include <algorithm>
#include <map>
#include <set>

#include "kernodeck/report/formats.h"
#include "kernodeck/report/purl.h"

namespace kernodeck::report {

namespace {

using nlohmann::json;

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

const std::map<std::string, std::string> kHashNames = {
    {"sha256", "SHA-256"}, {"sha384", "SHA-384"}, {"sha512", "SHA-512"}, {"sha1", "SHA-1"}, {"md5", "MD5"}};

// The packages of one OS package database section (dpkg, rpm or apk).
void addOsPackages(const json& db, const Distro& distro, const Verdicts& verdicts, std::set<std::string>& refs,
                   std::vector<Component>& out) {
  std::string manager = stringAt(db, "manager");
  if ((manager != "dpkg" && manager != "rpm" && manager != "apk") || !db.contains("packages") ||
      !db["packages"].is_array())
    return;
  bool verified = db.value("files_verified", 0) > 0;
  for (const auto& p : db["packages"]) {
    if (!p.is_object()) continue;
    Component c;
    c.type = "os-package";
    c.name = stringAt(p, "name");
    c.version = stringAt(p, "version");
    std::string arch = stringAt(p, "architecture");
    PackageUrl purl = osPackageUrl(manager, distro, p);
    c.ref = purl.type + ":" + c.name + ":" + arch + (manager == "rpm" ? "@" + c.version : "");
    c.purl = purl.str();
    c.properties.push_back({"kernodeck:manager", manager});
    if (auto src = stringAt(p, "source"); !src.empty() && src != c.name)
      c.properties.push_back({"kernodeck:source", src});
    // What the database holds of the package's own digests: rpm's header digests, apk's
    // checksum of the package's control segment (not hashes of a package file, which the image
    // does not hold).
    for (const char* k : {"sha256header", "sigmd5", "checksum"})
      if (auto v = stringAt(p, k); !v.empty()) c.properties.push_back({"kernodeck:" + manager + ":" + k, v});
    verdicts.apply(c, c.name, verified);
    if (refs.insert(c.ref).second) out.push_back(c);
  }
}

// The conda packages of each conda environment (`python.conda`), with the hashes of the
// archives conda installed them from.
void addCondaPackages(const json& envs, const Report& r, std::set<std::string>& refs, std::vector<Component>& out) {
  Verdicts verdicts(r.findings(), "conda.");
  for (const auto& e : envs) {
    if (!e.is_object() || !e.contains("packages") || !e["packages"].is_array()) continue;
    std::string prefix = stringAt(e, "prefix");
    bool verified = e.value("files_verified", 0) > 0;
    for (const auto& p : e["packages"]) {
      if (!p.is_object()) continue;
      Component c;
      c.type = "conda-package";
      c.name = stringAt(p, "name");
      c.version = stringAt(p, "version");
      c.ref = "conda:" + prefix + ":" + c.name;
      if (!refs.insert(c.ref).second) continue;
      c.purl = condaUrl(p).str();
      for (const char* h : {"sha256", "md5"})
        if (auto v = stringAt(p, h); !v.empty()) c.hashes[kHashNames.at(h)] = v;
      c.properties = {{"kernodeck:environment", prefix}};
      verdicts.apply(c, c.name, verified);
      out.push_back(c);
    }
  }
}

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

  Distro distro;
  if (sections.contains("os") && sections["os"].is_object() && !stringAt(sections["os"], "id").empty()) {
    const json& os = sections["os"];
    distro = Distro::fromOsSection(os);
    Component c;
    c.ref = "os";
    c.type = "operating-system";
    c.name = distro.id;
    c.version = distro.versionId;
    c.description = stringAt(os, "pretty_name");
    if (auto a = stringAt(os, "architecture"); !a.empty()) c.properties.push_back({"kernodeck:architecture", a});
    out.push_back(c);
  }

  // The OS package databases: the section itself (dpkg, or the rpm or apk database of a system
  // without dpkg) and the others it lists.
  if (sections.contains("os_packages") && sections["os_packages"].is_object()) {
    const json& op = sections["os_packages"];
    std::vector<const json*> dbs = {&op};
    if (op.contains("other") && op["other"].is_array())
      for (const auto& o : op["other"]) dbs.push_back(&o);
    Verdicts verdicts(r.findings(), "os.package.");
    for (const json* db : dbs) addOsPackages(*db, distro, verdicts, refs, out);
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
        c.purl = pypiUrl(c.name, c.version).str();
        if (p.contains("archive_hashes") && p["archive_hashes"].is_object())
          for (auto it = p["archive_hashes"].begin(); it != p["archive_hashes"].end(); ++it)
            if (auto n = kHashNames.find(it.key()); n != kHashNames.end() && it.value().is_string())
              c.hashes[n->second] = it.value();
        c.properties = {{"kernodeck:environment", prefix}, {"kernodeck:location", stringAt(p, "location")}};
        if (auto inst = stringAt(p, "installer"); !inst.empty()) c.properties.push_back({"kernodeck:installer", inst});
        verdicts.apply(c, c.name, p.value("record", false));
        out.push_back(c);
      }
    }
  }
  if (sections.contains("python") && sections["python"].is_object() && sections["python"].contains("conda") &&
      sections["python"]["conda"].is_array())
    addCondaPackages(sections["python"]["conda"], r, refs, out);
  return out;
}

}  // namespace kernodeck::report
