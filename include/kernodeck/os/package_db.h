// What an OS or environment package manager other than dpkg records, in one shape: the
// installed packages, the files each owns with what the manager recorded about them, and the
// verification of those files against an image's view, as `rpm -V` does (digest, size, mode,
// link target). rpm, apk and conda fill it; packages_audit turns it into findings.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/util/keyed_hash.h"

namespace kernodeck::os {

struct InstalledPackage {
  std::string name, version, architecture;
  std::string origin;                        // rpm: source rpm; apk: origin; conda: channel
  std::map<std::string, std::string> extra;  // manager-specific facts (build, vendor, ...)
};

// One file as a package database records it. Paths are normalised (no leading '/').
struct OwnedFile {
  std::string package, path;
  // Any: the database does not say (apk); the path is then taken as it is, link or not.
  enum class Kind { File, Dir, Symlink, Other, Any } kind = Kind::File;
  std::optional<uint32_t> mode;  // permission bits (07777) when recorded
  std::optional<int64_t> size;   // regular files, when recorded
  std::string digestAlgorithm;   // OpenSSL name ("sha256", "md5", "sha1"), or empty
  std::string digest;            // lower-case hex, or empty (nothing to compare)
  std::string linkTarget;        // symlinks, when recorded
  bool config = false;           // a configuration file: changes are expected (info)
  bool missingOk = false;        // absence is not a finding (rpm's missingok)
  bool linkDigest = false;       // apk: a symlink's digest is that of its target text
};

// A verification problem with one owned file. `detail` is rpm -V's column string when the
// file differs ("S.5....." : size, mode, digest, link), or what is missing.
struct FileIssue {
  std::string package, path, detail;
  bool config = false;
  int layer = -1;
};

struct PackageDatabase {
  std::string manager;   // "rpm", "apk", "conda"
  std::string location;  // where the database is in the image (no leading '/')
  std::string format;    // e.g. "sqlite", "bdb", "installed"
  bool present = false;
  std::string error;  // set when the database exists but could not be read
  // With error: no reader for this database in this installation (rpm: the plugin is missing
  // or refused), rather than a database the reader could not make sense of.
  bool readerUnavailable = false;
  std::vector<InstalledPackage> packages;
  std::vector<OwnedFile> files;
  std::unordered_set<std::string, util::KeyedHash> owned;  // every owned path, as recorded
  std::vector<FileIssue> modified, missing;
  size_t verified = 0;      // files whose recorded facts were all compared
  size_t unverifiable = 0;  // files with a digest this view cannot compute

  bool owns(const std::string& path) const { return owned.count(path) > 0; }
};

// Compares every owned file with the view and fills modified, missing, verified and
// unverifiable. A path owned by several packages is checked and reported once. Digests are
// asked for in one batch (FsView::prepareHashes), so a layered view reads each layer once more
// at most. Symlinks on the way to a path are followed inside the image, as rpm does on a root.
void verifyOwnedFiles(const oci::FsView& view, PackageDatabase& db);

}  // namespace kernodeck::os
