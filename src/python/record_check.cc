#include "kernodeck/python/record_check.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/path.h"
#include "kernodeck/util/stage_profile.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

// Joins a RECORD path to the package directory under util/path.h's Confined rule (an
// absolute path, a script installed elsewhere, is taken from the image root); empty when
// it climbs out of the root.
std::string joinInside(const std::string& base, const std::string& rel) {
  return util::cleanConfined(!rel.empty() && rel.front() == '/' ? rel : base + "/" + rel).value_or("");
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

// The rows of `dist`'s RECORD: those it holds, else parsed now from the view into `storage`.
const std::vector<RecordRow>& rowsOf(const oci::FsView& v, const Distribution& dist, std::vector<RecordRow>& storage) {
  if (!dist.record.empty() || !dist.hasRecord) return dist.record;
  if (auto t = v.readFile(dist.metadataDir + "/RECORD", 16u << 20); t.ok()) storage = parseRecord(*t);
  return storage;
}

size_t digestSize(const std::string& algorithm) {
  if (algorithm == "sha256") return 32;
  if (algorithm == "sha384") return 48;
  if (algorithm == "sha512") return 64;
  if (algorithm == "sha1") return 20;
  if (algorithm == "md5") return 16;
  if (algorithm == "sha224") return 28;
  return 0;
}

}  // namespace

std::string decodeRecordDigest(const std::string& algorithm, const std::string& digest, bool* hex) {
  *hex = false;
  size_t n = digestSize(algorithm);
  if (n && digest.size() == 2 * n && digest.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos) {
    // 2n hex characters are also valid base64 for 1.5n bytes, never n: no ambiguity.
    *hex = true;
    return util::toLower(digest);
  }
  std::string d = digest;
  while (!d.empty() && d.back() == '=') d.pop_back();
  std::string raw;
  if (!util::base64Decode(d, raw)) return {};
  return util::toHex(raw);
}

std::string classifyRecordQuirk(const std::string& recordPath, bool metadataFile, const std::string* content,
                                const std::string& algorithm, const std::string& expectedHex) {
  if (metadataFile)
    return "this wheel's RECORD lists a wrong hash for its own METADATA, rewritten after RECORD was written "
           "(a known build quirk, pytorch/pytorch#97153)";
  bool script = recordPath.rfind("../", 0) == 0 && recordPath.find("/bin/") != std::string::npos;
  if (!script) return "";
  // Without the content nothing is confirmed: the change stays a change.
  if (!content || content->rfind("#!", 0) != 0) return "";
  size_t eol = content->find('\n');
  std::string first = content->substr(0, eol);
  if (first.find("python") == std::string::npos && first.find("/bin/sh") == std::string::npos) return "";
  std::string body = eol == std::string::npos ? "" : content->substr(eol);
  for (const char* shebang :
       {"#!python", "#!/usr/bin/python", "#!/usr/bin/python3", "#!/usr/bin/env python", "#!/usr/bin/env python3"}) {
    util::Hasher h(algorithm);
    if (!h.valid()) break;
    h.update(shebang);
    h.update(body);
    if (h.hex() == expectedHex)
      return std::string("the shebang was rewritten after install; with the wheel's own '") + shebang +
             "' line the script matches RECORD (pypa/pip#10744)";
  }
  return "";
}

uint64_t recordCaptureLimit(const std::string& p) {
  size_t bin = p.find("/bin/");
  if (bin == std::string::npos || p.find('/', bin + 5) != std::string::npos) return 0;
  for (const char* system : {"usr/bin/", "usr/sbin/", "bin/", "sbin/", "usr/lib/", "usr/libexec/"})
    if (p.rfind(system, 0) == 0) return 0;
  return 64u << 10;
}

RecordChecker::RecordChecker(const oci::FsView& v, const Distribution& dist) : view_(&v), dist_(&dist) {
  RowScratch scratch;
  scratch.recordPath = dist.metadataDir + "/RECORD";
  std::vector<RecordRow> storage;
  const auto& rows = rowsOf(v, dist, storage);
  scratch.listed.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) checkRow(i, rows[i], scratch);
  rehashed_.clear();  // only rows of other algorithms than SHA-256 use it, and none waits
  for (const auto& dir : scratch.topDirs) {
    std::vector<std::string> files;
    walkFiles(v, dir, files, 0);
    for (const auto& f : files)
      if (!scratch.listed.count(f)) result_.unlisted.push_back(f);
  }
}

void RecordChecker::checkRow(size_t index, const RecordRow& row, RowScratch& scratch) {
  const Distribution& dist = *dist_;
  std::string path = joinInside(dist.location, row.path);
  if (path.empty()) {
    note(index, List::Malformed, {row.path, -1, "", "", ""});
    return;
  }
  scratch.listed.insert(path);
  if (row.malformed) note(index, List::Malformed, {row.path, -1, "", "", ""});
  if (row.path.ends_with(".pyc") || row.algorithm.empty()) return;
  if (path == scratch.recordPath) return;
  // First component of in-package paths: the package's own directories (a run of rows in one
  // directory inserts it once).
  if (row.path.find("..") == std::string::npos && row.path.find('/') != std::string::npos) {
    std::string_view top = std::string_view(row.path).substr(0, row.path.find('/'));
    if ((scratch.topDirs.empty() || top != scratch.lastTop) && !top.ends_with(".dist-info") &&
        !top.ends_with(".data") && top != "__pycache__") {
      scratch.topDirs.insert(dist.location + "/" + std::string(top));
      scratch.lastTop = top;
    }
  }
  ++result_.checked;
  auto resolved = view_->resolve(path, false);
  auto node = resolved.ok() ? view_->info(*resolved) : std::nullopt;
  if (!node || node->kind == oci::EntryKind::Dir) {
    note(index, List::Missing, {path, -1, row.digest, "", ""});
    return;
  }
  // Checked once the hashes are prepared: a SHA-256 row's file is prepared for it; an MD5 row
  // (recorded by the walk too) waits only, and is compared if another row's preparation gave it.
  if ((row.algorithm == "sha256" || row.algorithm == "md5") && !view_->hashKnown(*resolved, row.algorithm)) {
    waiting_.push_back({index, row, path, *resolved, node->layer, row.algorithm == "sha256"});
    return;
  }
  std::string hex;
  if (digestOf(row, *resolved, hex)) compare(index, row, path, *resolved, node->layer, hex);
}

bool RecordChecker::digestOf(const RecordRow& row, const std::string& resolved, std::string& hex) {
  if (row.algorithm == "sha256" || row.algorithm == "md5") {  // recorded by the walk
    auto h = view_->hashResolved(resolved, row.algorithm);
    if (!h.ok()) return false;  // not hashable (e.g. a symlink): nothing to compare
    hex = *h;
    return true;
  }
  if (auto seen = rehashed_.find(row.algorithm + ":" + resolved); seen != rehashed_.end()) {
    hex = seen->second;  // rows naming one file again (or through links) cost no second read
    return true;
  }
  auto content = view_->readResolved(resolved, 64u << 20);
  if (!content.ok()) return false;
  util::Hasher hasher(row.algorithm);
  if (!hasher.valid()) return false;
  hasher.update(*content);
  hex = hasher.hex();
  rehashed_.emplace(row.algorithm + ":" + resolved, hex);
  return true;
}

void RecordChecker::compare(size_t index, const RecordRow& row, const std::string& path, const std::string& resolved,
                            int layer, const std::string& hex) {
  bool hexDigest = false;
  std::string want = decodeRecordDigest(row.algorithm, row.digest, &hexDigest);
  if (want.empty()) {
    note(index, List::Malformed, {row.path, -1, "", "", ""});
    return;
  }
  if (want == hex) {
    if (hexDigest)
      note(index, List::Quirks,
           {path, layer, want, hex,
            "the RECORD digest is hex rather than urlsafe base64, as some build backends write it "
            "(astral-sh/uv#15398); the file matches it"});
    return;
  }
  auto content = view_->readResolved(resolved, 64u << 10);
  std::string quirk = classifyRecordQuirk(row.path, path == dist_->metadataDir + "/METADATA",
                                          content.ok() ? &*content : nullptr, row.algorithm, want);
  if (!quirk.empty())
    note(index, List::Quirks, {path, layer, want, hex, quirk});
  else
    note(index, List::Modified, {path, layer, want, hex, ""});
}

void RecordChecker::pendingHashes(std::vector<std::string>& out) const {
  for (const auto& w : waiting_)
    if (w.prepare) out.push_back(w.resolved);
}

RecordCheck RecordChecker::finish() {
  for (const auto& w : waiting_) {
    std::string hex;
    if (digestOf(w.record, w.resolved, hex)) compare(w.row, w.record, w.path, w.resolved, w.layer, hex);
  }
  waiting_.clear();
  // A waiting row's issues were noted after later rows': back into row order (stable, so the
  // issues of one row keep theirs).
  std::stable_sort(noted_.begin(), noted_.end(), [](const Noted& a, const Noted& b) { return a.row < b.row; });
  for (auto& n : noted_) {
    switch (n.list) {
      case List::Modified: result_.modified.push_back(std::move(n.issue)); break;
      case List::Missing: result_.missing.push_back(std::move(n.issue)); break;
      case List::Quirks: result_.quirks.push_back(std::move(n.issue)); break;
      case List::Malformed: result_.malformedRows.push_back(std::move(n.issue.path)); break;
    }
  }
  noted_.clear();
  return std::move(result_);
}

std::vector<RecordChecker> startRecordCheckers(const oci::FsView& v, const std::vector<const Distribution*>& dists,
                                               unsigned threads) {
  std::vector<std::optional<RecordChecker>> started(dists.size());
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex failureLock;
  auto work = [&] {
    util::StageTimer time(util::Stage::Packages);  // a helper's CPU is the package analysis' too
    try {
      for (size_t i; (i = next++) < dists.size();) started[i].emplace(v, *dists[i]);
    } catch (...) {  // bad_alloc: rethrown on the caller's thread, as one thread would have thrown it
      std::lock_guard<std::mutex> l(failureLock);
      if (!failure) failure = std::current_exception();
      next = dists.size();
    }
  };
  size_t helpers = std::min<size_t>(std::max(threads, 1u), dists.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < helpers; ++t) {
    try {
      pool.emplace_back(work);
    } catch (const std::system_error&) {  // no thread to be had (a limit): fewer helpers, same checkers
      break;
    }
  }
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  std::vector<RecordChecker> out;
  out.reserve(started.size());
  for (auto& c : started) out.push_back(std::move(*c));
  return out;
}

RecordCheck checkRecord(const oci::FsView& v, const Distribution& dist) {
  RecordChecker checker(v, dist);
  std::vector<std::string> paths;
  checker.pendingHashes(paths);
  v.prepareHashes(paths, "sha256");
  return checker.finish();
}

}  // namespace kernodeck::python
