// rpm -V's comparison, for any database that records digests, sizes, modes or link targets.
#include "kernodeck/os/package_db.h"

#include <set>

#include "kernodeck/util/hash.h"

namespace kernodeck::os {

namespace {

bool kindMatches(OwnedFile::Kind want, oci::EntryKind got) {
  switch (want) {
    case OwnedFile::Kind::File: return got == oci::EntryKind::File || got == oci::EntryKind::Hardlink;
    case OwnedFile::Kind::Dir: return got == oci::EntryKind::Dir;
    case OwnedFile::Kind::Symlink: return got == oci::EntryKind::Symlink;
    case OwnedFile::Kind::Other:
      return got != oci::EntryKind::File && got != oci::EntryKind::Dir && got != oci::EntryKind::Symlink;
    case OwnedFile::Kind::Any: return true;
  }
  return true;
}

}  // namespace

void verifyOwnedFiles(const oci::FsView& v, PackageDatabase& db) {
  struct Pending {
    const OwnedFile* file;
    std::string resolved;
    oci::Node node;
  };
  std::vector<Pending> pending;
  std::set<std::string> seen;
  std::map<std::string, std::vector<std::string>> byAlgorithm;  // algorithm -> resolved paths
  for (const auto& f : db.files) {
    if (!seen.insert(f.path).second) continue;
    // The last component is not followed for a symlink the database records as one.
    bool followLast = f.kind == OwnedFile::Kind::File || f.kind == OwnedFile::Kind::Dir;
    auto r = v.resolve(f.path, followLast);
    auto n = r.ok() ? v.stat(*r) : std::nullopt;
    if (!n) {
      if (!f.missingOk) db.missing.push_back({f.package, f.path, "missing", f.config, -1});
      continue;
    }
    if (!f.digest.empty() && (n->kind == oci::EntryKind::File || n->kind == oci::EntryKind::Hardlink) &&
        !v.hashKnown(*r, f.digestAlgorithm))
      byAlgorithm[f.digestAlgorithm].push_back(*r);
    pending.push_back({&f, *r, std::move(*n)});
  }
  for (const auto& [alg, paths] : byAlgorithm) v.prepareHashes(paths, alg);
  for (const auto& p : pending) {
    const OwnedFile& f = *p.file;
    const oci::Node& n = p.node;
    // rpm -V's columns: S size, M mode (type and permissions), 5 digest, L link target.
    std::string cols = "....";
    bool checkedAll = true;
    if (!kindMatches(f.kind, n.kind)) cols[1] = 'M';
    if (f.mode && (n.mode & 07777) != (*f.mode & 07777)) cols[1] = 'M';
    bool regular = n.kind == oci::EntryKind::File || n.kind == oci::EntryKind::Hardlink;
    // A hardlink's own tar entry carries no size; its digest is that of its data.
    if (f.size && n.kind == oci::EntryKind::File && n.size != *f.size) cols[0] = 'S';
    if (!f.digest.empty() && regular) {
      auto h = v.hashResolved(p.resolved, f.digestAlgorithm);
      if (!h.ok()) {
        checkedAll = false;
        ++db.unverifiable;
      } else if (*h != f.digest) {
        cols[2] = '5';
      }
    }
    if (!f.digest.empty() && f.linkDigest && n.kind == oci::EntryKind::Symlink) {
      util::Hasher h(f.digestAlgorithm);
      h.update(n.linkTarget);
      if (h.valid() && h.hex() != f.digest) cols[3] = 'L';
    }
    if (f.kind == OwnedFile::Kind::Symlink && n.kind == oci::EntryKind::Symlink && n.linkTarget != f.linkTarget)
      cols[3] = 'L';
    if (cols != "....")
      db.modified.push_back({f.package, f.path, cols, f.config, n.layer});
    else if (checkedAll)
      ++db.verified;
  }
}

}  // namespace kernodeck::os
