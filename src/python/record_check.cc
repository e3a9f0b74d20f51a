#include "kernodeck/python/record_check.h"

#include <set>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

// Joins a RECORD path to the package directory, lexically; empty when it climbs out of the root.
std::string joinInside(const std::string& base, const std::string& rel) {
  std::vector<std::string> parts;
  if (!rel.empty() && rel.front() == '/') {
    // Absolute paths in RECORD (scripts installed elsewhere): inside the image root.
  } else {
    parts = util::split(base, '/');
  }
  for (const auto& c : util::split(rel, '/')) {
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (parts.empty()) return {};
      parts.pop_back();
      continue;
    }
    parts.push_back(c);
  }
  return util::join(parts, "/");
}

void walkFiles(const oci::FsView& v, const std::string& dir, std::vector<std::string>& out, int depth) {
  if (depth > 32 || out.size() > 100000) return;
  for (const auto& name : v.list(dir)) {
    std::string p = dir + "/" + name;
    auto n = v.info(p);
    if (!n) continue;
    if (n->kind == oci::EntryKind::Dir) {
      if (name != "__pycache__") walkFiles(v, p, out, depth + 1);
    } else if (!name.ends_with(".pyc")) {
      out.push_back(p);
    }
  }
}

}  // namespace

void recordHashedPaths(const oci::FsView& v, const Distribution& dist, std::vector<std::string>& out) {
  for (const auto& row : dist.record) {
    if (row.algorithm != "sha256" || row.path.ends_with(".pyc")) continue;
    std::string path = joinInside(dist.location, row.path);
    if (path.empty() || path == dist.metadataDir + "/RECORD") continue;
    if (auto resolved = v.resolve(path, false); resolved.ok()) out.push_back(*resolved);
  }
}

RecordCheck checkRecord(const oci::FsView& v, const Distribution& dist) {
  RecordCheck rc;
  std::set<std::string> listed;
  std::set<std::string> topDirs;
  for (const auto& row : dist.record) {
    std::string path = joinInside(dist.location, row.path);
    if (path.empty()) {
      rc.malformedRows.push_back(row.path);
      continue;
    }
    listed.insert(path);
    if (row.malformed) rc.malformedRows.push_back(row.path);
    if (row.path.ends_with(".pyc") || row.algorithm.empty()) continue;
    if (path == dist.metadataDir + "/RECORD") continue;
    // First component of in-package paths: the package's own directories.
    if (row.path.find("..") == std::string::npos && row.path.find('/') != std::string::npos) {
      std::string top = row.path.substr(0, row.path.find('/'));
      if (!top.ends_with(".dist-info") && !top.ends_with(".data") && top != "__pycache__") topDirs.insert(dist.location + "/" + top);
    }
    ++rc.checked;
    auto resolved = v.resolve(path, false);
    auto node = resolved.ok() ? v.info(*resolved) : std::nullopt;
    if (!node || node->kind == oci::EntryKind::Dir) {
      rc.missing.push_back({path, -1, row.digest, ""});
      continue;
    }
    std::string hex;
    if (row.algorithm == "sha256" || row.algorithm == "md5") {  // recorded by the walk
      auto h = v.hashResolved(*resolved, row.algorithm);
      if (!h.ok()) continue;  // not hashable (e.g. a symlink): nothing to compare
      hex = *h;
    } else {
      auto content = v.readResolved(*resolved, 64u << 20);
      if (!content.ok()) continue;
      util::Hasher hasher(row.algorithm);
      if (!hasher.valid()) continue;
      hasher.update(*content);
      hex = hasher.hex();
    }
    std::string want;
    std::string digest = row.digest;
    while (!digest.empty() && digest.back() == '=') digest.pop_back();
    std::string raw;
    if (!util::base64Decode(digest, raw)) {
      rc.malformedRows.push_back(row.path);
      continue;
    }
    want = util::toHex(raw);
    if (want != hex) rc.modified.push_back({path, node->layer, want, hex});
  }
  for (const auto& dir : topDirs) {
    std::vector<std::string> files;
    walkFiles(v, dir, files, 0);
    for (const auto& f : files)
      if (!listed.count(f)) rc.unlisted.push_back(f);
  }
  return rc;
}

}  // namespace kernodeck::python
