// OS packages from dpkg's database (var/lib/dpkg/status, or status.d/ as in
// distroless images), which package owns which file (info/*.list), and file
// verification against dpkg's md5sums, as debsums does.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/util/keyed_hash.h"

namespace kernodeck::os {

struct DpkgPackage {
  std::string name, version, architecture, status;
  // The source package, from "Source: NAME" or "Source: NAME (VERSION)": dpkg writes the field
  // only when the source's name differs from the package's, and the version only when it
  // differs from the package's (a binNMU, a package versioned apart). Empty when not written.
  std::string source, sourceVersion;
  std::map<std::string, std::string> conffiles;  // path (no leading '/') -> md5
};

// Paragraphs of a status file; only installed packages ("install ok installed") are kept
// unless `all` is set.
std::vector<DpkgPackage> parseDpkgStatus(std::string_view text, bool all = false);
// md5sums lines: "<md5>  <path>" -> path (no leading '/') -> md5.
std::map<std::string, std::string> parseMd5sums(std::string_view text);

struct DpkgIssue {
  std::string package, path;
  bool conffile = false;
  int layer = -1;
};

struct DpkgDatabase {
  bool present = false;
  std::vector<DpkgPackage> packages;
  std::unordered_set<std::string, util::KeyedHash> owned;  // every path a package lists (no leading '/')
  std::vector<DpkgIssue> modified, missing;
  size_t verified = 0;

  bool owns(const std::string& path) const { return owned.count(path) > 0; }
};

// Size limits for the dpkg files the layer walk should keep (0: none).
uint64_t dpkgCaptureLimit(const std::string& path);

DpkgDatabase readDpkg(const oci::FsView& view, bool verify = true);

}  // namespace kernodeck::os
