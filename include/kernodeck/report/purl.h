// Package URLs (purl, ECMA-427) for the SBOM formats, as vulnerability scanners match them:
// deb, rpm and apk purls name the vendor, the architecture, the distribution release
// (`distro=debian-12`, from the image's os-release as `ID-VERSION_ID`) and, where the source
// package differs from the binary one, the source (`upstream=`), which Debian's and Alpine's
// security data are keyed by; pypi and conda names are normalised as their purl types say.
#pragma once

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace kernodeck::report {

struct PackageUrl {
  std::string type, ns, name, version;
  std::map<std::string, std::string> qualifiers;  // empty values are left out

  // The canonical string: components percent-encoded (':' kept), qualifiers sorted by key.
  std::string str() const;
};

// The distribution a report's `os` section names (its os-release fields).
struct Distro {
  std::string id, versionId, codename;

  static Distro fromOsSection(const nlohmann::json& os);
  // "debian-12", "rhel-9.4", "alpine-3.19.1"; the codename when there is no VERSION_ID
  // ("debian-trixie"); empty when the image has no os-release.
  std::string qualifier() const;
};

// The purl of one entry of an `os_packages` section (`name`, `version`, `architecture`,
// `source`, `source_version`) of the package manager `manager` ("dpkg", "rpm" or "apk").
PackageUrl osPackageUrl(const std::string& manager, const Distro& distro, const nlohmann::json& package);
// pkg:pypi, the name normalised as PEP 503 says (runs of "-", "_", "." are one "-", lower case).
PackageUrl pypiUrl(const std::string& name, const std::string& version);
// pkg:conda from an entry of a `python.conda[].packages` section: build, channel (its name),
// subdir and archive type as qualifiers.
PackageUrl condaUrl(const nlohmann::json& package);

}  // namespace kernodeck::report
