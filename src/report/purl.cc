// Package URLs of the inventory's packages (purl.h), built as the purl types of the purl spec
// (deb, rpm, apk, pypi, conda) and the scanners that read them (Grype, Trivy) expect.
#include "kernodeck/report/purl.h"

#include <cctype>

#include "kernodeck/report/report.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::report {

namespace {

using nlohmann::json;

// Percent-encodes all but unreserved characters and ':' (which the spec keeps unencoded).
std::string encode(const std::string& s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '.' || c == '-' || c == '_' || c == '~' || c == ':')
      out += static_cast<char>(c);
    else
      out += std::string("%") + hex[c >> 4] + hex[c & 15];
  }
  return out;
}

// "NAME-VERSION-RELEASE.src.rpm" -> {NAME, VERSION-RELEASE}; empty when it is not that shape.
std::pair<std::string, std::string> splitSourceRpm(std::string s) {
  for (const char* suffix : {".src.rpm", ".nosrc.rpm"})
    if (s.ends_with(suffix)) {
      s.resize(s.size() - std::string_view(suffix).size());
      size_t rel = s.rfind('-');
      size_t ver = rel == std::string::npos || rel == 0 ? std::string::npos : s.rfind('-', rel - 1);
      if (ver == std::string::npos || ver == 0) return {};
      return {s.substr(0, ver), s.substr(ver + 1)};
    }
  return {};
}

// The vendor namespace: the os-release ID, as Red Hat names its own ("redhat"), or the
// manager's usual vendor when the image has no os-release.
std::string vendor(const std::string& manager, const Distro& d) {
  std::string id = util::toLower(d.id);
  if (id == "rhel") return "redhat";
  if (!id.empty()) return id;
  if (manager == "dpkg") return "debian";
  if (manager == "apk") return "alpine";
  return "";
}

}  // namespace

std::string PackageUrl::str() const {
  std::string out = "pkg:" + type + "/";
  if (!ns.empty()) out += encode(ns) + "/";
  out += encode(name);
  if (!version.empty()) out += "@" + encode(version);
  char sep = '?';
  for (const auto& [k, v] : qualifiers) {
    if (v.empty()) continue;
    out += sep + k + "=" + encode(v);
    sep = '&';
  }
  return out;
}

Distro Distro::fromOsSection(const json& os) {
  Distro d;
  if (!os.is_object()) return d;
  d.id = stringAt(os, "id");
  d.versionId = stringAt(os, "version_id");
  d.codename = stringAt(os, "version_codename");
  return d;
}

std::string Distro::qualifier() const {
  if (id.empty()) return "";
  if (!versionId.empty()) return util::toLower(id) + "-" + versionId;
  if (!codename.empty()) return util::toLower(id) + "-" + codename;
  return "";
}

PackageUrl osPackageUrl(const std::string& manager, const Distro& distro, const json& p) {
  PackageUrl u;
  u.ns = vendor(manager, distro);
  u.name = stringAt(p, "name");
  u.version = stringAt(p, "version");
  u.qualifiers["arch"] = stringAt(p, "architecture");
  u.qualifiers["distro"] = distro.qualifier();
  std::string source = stringAt(p, "source"), sourceVersion = stringAt(p, "source_version");
  if (manager == "dpkg") {
    u.type = "deb";
    u.name = util::toLower(u.name);
    if (size_t open = source.find(" ("); open != std::string::npos && source.back() == ')') {
      sourceVersion = source.substr(open + 2, source.size() - open - 3);  // "Source: NAME (VERSION)" as dpkg writes it
      source.resize(open);
    }
    if (!sourceVersion.empty() && sourceVersion != u.version)
      u.qualifiers["upstream"] = (source.empty() ? u.name : source) + "@" + sourceVersion;
    else if (!source.empty() && source != u.name)
      u.qualifiers["upstream"] = source;
  } else if (manager == "rpm") {
    u.type = "rpm";
    // rpm's EVR: the epoch is a qualifier, the version is VERSION-RELEASE.
    if (size_t colon = u.version.find(':');
        colon != std::string::npos && colon > 0 && u.version.find_first_not_of("0123456789") == colon) {
      if (u.version.substr(0, colon) != "0") u.qualifiers["epoch"] = u.version.substr(0, colon);
      u.version = u.version.substr(colon + 1);
    }
    auto [srcName, srcVersion] = splitSourceRpm(source);
    if (!srcName.empty() && (srcName != u.name || srcVersion != u.version)) u.qualifiers["upstream"] = source;
  } else {
    u.type = "apk";
    u.name = util::toLower(u.name);
    if (!source.empty() && source != stringAt(p, "name")) u.qualifiers["upstream"] = source;
  }
  return u;
}

PackageUrl pypiUrl(const std::string& name, const std::string& version) {
  PackageUrl u;
  u.type = "pypi";
  for (char c : name) {
    char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (l == '_' || l == '.' || l == '-') {
      if (u.name.empty() || u.name.back() != '-') u.name += '-';
    } else {
      u.name += l;
    }
  }
  u.version = version;
  return u;
}

PackageUrl condaUrl(const json& p) {
  PackageUrl u;
  u.type = "conda";
  u.name = stringAt(p, "name");
  u.version = stringAt(p, "version");
  std::string subdir = stringAt(p, "subdir"), channel = stringAt(p, "channel");
  while (!channel.empty() && channel.back() == '/') channel.pop_back();
  if (!subdir.empty() && channel.ends_with("/" + subdir)) channel.resize(channel.size() - subdir.size() - 1);
  if (size_t slash = channel.rfind('/'); slash != std::string::npos) channel = channel.substr(slash + 1);
  std::string file = stringAt(p, "file");
  u.qualifiers["build"] = stringAt(p, "build");
  u.qualifiers["channel"] = channel;
  u.qualifiers["subdir"] = subdir;
  u.qualifiers["type"] = file.ends_with(".conda") ? "conda" : file.ends_with(".tar.bz2") ? "tar.bz2" : "";
  return u;
}

}  // namespace kernodeck::report
