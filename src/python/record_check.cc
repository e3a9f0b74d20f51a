#include "kernodeck/python/record_check.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>

#include "kernodeck/oci/partial_content.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/path.h"
#include "kernodeck/util/stage_profile.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

constexpr uint64_t kRecordLimit = 16u << 20;

// The RECORD at `path`: the bytes the layer walk captured, shared with the view rather than
// copied (the RECORDs of a big image are ~80 bytes a file), else read (a directory view).
std::shared_ptr<const std::string> recordText(const oci::FsView& v, const std::string& path) {
  auto resolved = v.resolve(path, true);
  if (!resolved.ok()) return nullptr;
  if (auto n = v.stat(*resolved);
      n && n->content && (n->kind == oci::EntryKind::File || n->kind == oci::EntryKind::Hardlink))
    return n->content->size() <= kRecordLimit ? n->content : nullptr;  // as readResolved's limit
  auto t = v.readResolved(*resolved, kRecordLimit);
  return t.ok() ? std::make_shared<const std::string>(std::move(*t)) : nullptr;
}

// The files under `dir` (not .pyc, not in __pycache__) that no row lists, in the order of a walk
// of sorted names, appended to `out` as they are found: `dir` grows and shrinks as one buffer,
// and no list of every file is made. `prefix` is the length of the package directory's path and
// its '/' (what `listed` leaves out); `files` counts every file found (at most ~100,000 a
// directory of the package, and 32 levels, are walked).
void walkUnlisted(const oci::FsView& v, std::string& dir, int depth, size_t prefix, const RecordChecker::Listed& listed,
                  size_t& files, std::vector<std::string>& out) {
  if (depth > 32 || files > 100000) return;
  const size_t length = dir.size();
  for (const auto& [name, kind] : v.listKinds(dir)) {
    dir.resize(length);
    dir += '/';
    dir += name;
    if (kind == oci::EntryKind::Dir) {
      if (name != "__pycache__") walkUnlisted(v, dir, depth + 1, prefix, listed, files, out);
    } else if (!name.ends_with(".pyc")) {
      ++files;
      if (!listed.count(std::string_view(dir).substr(prefix))) out.push_back(dir);
    }
  }
  dir.resize(length);
}

size_t digestSize(std::string_view algorithm) {
  if (algorithm == "sha256") return 32;
  if (algorithm == "sha384") return 48;
  if (algorithm == "sha512") return 64;
  if (algorithm == "sha1") return 20;
  if (algorithm == "md5") return 16;
  if (algorithm == "sha224") return 28;
  return 0;
}

// Whether a digest is written in hex of the algorithm's length (decodeRecordDigest's other form).
bool hexDigestForm(std::string_view algorithm, std::string_view digest) {
  size_t n = digestSize(algorithm);
  return n && digest.size() == 2 * n && digest.find_first_not_of("0123456789abcdefABCDEF") == std::string::npos;
}

// Whether `b64` (its trailing '=' dropped) is base64, either alphabet, of the bytes `hex` spells in
// lowercase hex, decoded as util::base64Decode decodes it and compared byte by byte as they come:
// no string made for the common matching row (issue 31). False also for anything that decoder
// might refuse (a '=' inside, a stray character); the caller then takes the general path.
bool base64Spells(std::string_view b64, std::string_view hex) {
  static const char* digits = "0123456789abcdef";
  uint32_t acc = 0;
  int bits = 0;
  size_t at = 0;
  for (char c : b64) {
    int v = util::base64Sextet(c);
    if (v < 0) return false;  // not base64, or a '=' inside
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      unsigned byte = (acc >> bits) & 0xff;
      if (at + 2 > hex.size() || hex[at] != digits[byte >> 4] || hex[at + 1] != digits[byte & 15]) return false;
      at += 2;
    }
  }
  return at == hex.size() && bits < 6;
}

// The name of an algorithm whose hash the view may hold ("" for any other): a row's algorithm is
// a view, the view's calls take a string.
const std::string& viewAlgorithm(std::string_view algorithm) {
  static const std::string sha256 = "sha256", md5 = "md5", none;
  return algorithm == sha256 ? sha256 : algorithm == md5 ? md5 : none;
}

}  // namespace

std::string decodeRecordDigest(std::string_view algorithm, std::string_view digest, bool* hex) {
  *hex = false;
  if (hexDigestForm(algorithm, digest)) {
    // 2n hex characters are also valid base64 for 1.5n bytes, never n: no ambiguity.
    *hex = true;
    return util::toLower(digest);
  }
  std::string_view d = digest;
  while (!d.empty() && d.back() == '=') d.remove_suffix(1);
  std::string raw;
  if (!util::base64Decode(d, raw)) return {};
  return util::toHex(raw);
}

std::string classifyRecordQuirk(std::string_view recordPath, bool metadataFile, const std::string* content,
                                std::string_view algorithm, const std::string& expectedHex) {
  if (metadataFile)
    return "this wheel's RECORD lists a wrong hash for its own METADATA, rewritten after RECORD was written "
           "(a known build quirk, pytorch/pytorch#97153)";
  bool script = recordPath.starts_with("../") && recordPath.find("/bin/") != std::string_view::npos;
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
  scratch.prefix = dist.location + "/";
  if (!dist.record.empty() || !dist.hasRecord) {  // rows given (tests): views into them
    scratch.listed.reserve(dist.record.size());
    for (size_t i = 0; i < dist.record.size(); ++i) {
      const RecordRow& r = dist.record[i];
      checkRow(i, {r.path, r.algorithm, r.digest, r.size, r.malformed, false}, scratch);
    }
  } else if ((text_ = recordText(v, scratch.recordPath))) {
    RecordReader reader(*text_);
    size_t i = 0;
    for (RecordRowView row; reader.next(row); ++i) checkRow(i, row, scratch);
  }
  rehashed_.clear();  // only rows of other algorithms than SHA-256 use it, and none waits
  for (const auto& top : scratch.topDirs) {
    std::string dir = top;
    size_t files = 0;
    walkUnlisted(v, dir, 0, scratch.prefix.size(), scratch.listed, files, result_.unlisted);
  }
}

bool RecordChecker::pathOf(std::string_view rowPath, std::string& out) const {
  // Joined to the package directory under util/path.h's Confined rule (an absolute path, a script
  // installed elsewhere, is taken from the image root); a normal path, nearly every row, is kept
  // as joined.
  if (!rowPath.empty() && rowPath.front() == '/') {
    out.assign(rowPath);
  } else {
    out.assign(dist_->location);
    out += '/';
    out += rowPath;
  }
  if (out.find('\0') != std::string::npos || !util::isNormalPath(out)) out = util::cleanConfined(out).value_or("");
  return !out.empty();
}

RecordRowView RecordChecker::keep(const RecordRowView& row) {
  if (!row.unescaped) return row;
  auto& own = *kept_.emplace_back(std::make_unique<std::string>());
  own.append(row.path).append(row.algorithm).append(row.digest);
  std::string_view all = own;
  RecordRowView kept = row;
  kept.path = all.substr(0, row.path.size());
  kept.algorithm = all.substr(row.path.size(), row.algorithm.size());
  kept.digest = all.substr(row.path.size() + row.algorithm.size());
  kept.size = {};
  return kept;
}

void RecordChecker::checkRow(size_t index, const RecordRowView& row, RowScratch& scratch) {
  std::string& path = scratch.joined;
  if (!pathOf(row.path, path)) {
    note(index, List::Malformed, {std::string(row.path), -1, "", "", ""});
    return;
  }
  // Listed: only a path below the package directory can be one the walk for unlisted files finds.
  if (path.starts_with(scratch.prefix)) {
    std::string_view rel = std::string_view(path).substr(scratch.prefix.size());
    scratch.listed.insert(!row.unescaped && rel == row.path ? row.path : scratch.owned.emplace_back(rel));
  }
  if (row.malformed) note(index, List::Malformed, {std::string(row.path), -1, "", "", ""});
  if (row.path.ends_with(".pyc") || row.algorithm.empty()) return;
  if (path == scratch.recordPath) return;
  // First component of in-package paths: the package's own directories (a run of rows in one
  // directory inserts it once).
  if (row.path.find("..") == std::string_view::npos && row.path.find('/') != std::string_view::npos) {
    std::string_view top = row.path.substr(0, row.path.find('/'));
    if ((scratch.topDirs.empty() || top != scratch.lastTop) && !top.ends_with(".dist-info") &&
        !top.ends_with(".data") && top != "__pycache__") {
      const std::string& dir = *scratch.topDirs.insert(dist_->location + "/" + std::string(top)).first;
      scratch.lastTop = std::string_view(dir).substr(dist_->location.size() + 1);
    }
  }
  ++result_.checked;
  // One lookup of the path (FsView::facts); a path through a link is walked first.
  const std::string& algorithm = viewAlgorithm(row.algorithm);
  std::string walked;
  bool viaLink = false;
  auto facts = view_->facts(path, algorithm);
  if (!facts)
    if (auto r = view_->resolve(path, false); r.ok() && *r != path) {
      walked = std::move(*r);
      viaLink = true;
      facts = view_->facts(walked, algorithm);
    }
  // A listed file that is now a symlink is judged by what it points to, as Python reads it: a
  // wheel holds no symlinks, and a link has no hash of its own, so without this any file could be
  // put in a verified file's place (a dangling link or a loop is a missing file).
  if (facts && facts->kind == oci::EntryKind::Symlink) {
    auto target = view_->resolve(viaLink ? walked : path, true);
    facts = target.ok() ? view_->facts(*target, algorithm) : std::nullopt;
    if (target.ok()) walked = std::move(*target);
    viaLink = true;
  }
  if (!facts || facts->kind == oci::EntryKind::Dir) {
    note(index, List::Missing, {path, -1, std::string(row.digest), "", ""});
    return;
  }
  const std::string& resolved = viaLink ? walked : path;
  // Checked once the hashes are prepared: a SHA-256 row's file is prepared for it; an MD5 row
  // (recorded by the walk too) waits only, and is compared if another row's preparation gave it.
  if (!algorithm.empty() && !facts->hashKnown) {
    waiting_.push_back({index, keep(row), std::move(walked), viaLink, algorithm == "sha256", facts->layer});
    return;
  }
  std::string hex;
  if (!algorithm.empty())
    hex = std::move(facts->hash);  // empty: not a regular file (a device, a fifo), nothing to compare
  else
    rehash(row.algorithm, resolved, hex);
  if (!hex.empty()) compare(index, row, path, resolved, facts->layer, hex);
}

bool RecordChecker::rehash(std::string_view algorithm, const std::string& resolved, std::string& hex) {
  std::string key = std::string(algorithm) + ":" + resolved;
  if (auto seen = rehashed_.find(key); seen != rehashed_.end()) {
    hex = seen->second;  // rows naming one file again (or through links) cost no second read
    return true;
  }
  auto content = view_->readResolved(resolved, 64u << 20);
  if (!content.ok() || oci::isPartialContent(*content)) return false;  // kept in part: not the file's bytes
  util::Hasher hasher(algorithm);
  if (!hasher.valid()) return false;
  hasher.update(*content);
  hex = hasher.hex();
  rehashed_.emplace(std::move(key), hex);
  return true;
}

void RecordChecker::compare(size_t index, const RecordRowView& row, const std::string& path,
                            const std::string& resolved, int layer, const std::string& hex) {
  // The common case, urlsafe base64 that matches, decided with no string made.
  std::string_view digest = row.digest;
  while (!digest.empty() && digest.back() == '=') digest.remove_suffix(1);
  if (!hexDigestForm(row.algorithm, row.digest) && base64Spells(digest, hex)) return;
  bool hexDigest = false;
  std::string want = decodeRecordDigest(row.algorithm, row.digest, &hexDigest);
  if (want.empty()) {
    note(index, List::Malformed, {std::string(row.path), -1, "", "", ""});
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
  if (content.ok() && oci::isPartialContent(*content)) content = Error::Unsupported("kept in part");
  std::string quirk = classifyRecordQuirk(row.path, path == dist_->metadataDir + "/METADATA",
                                          content.ok() ? &*content : nullptr, row.algorithm, want);
  if (!quirk.empty())
    note(index, List::Quirks, {path, layer, want, hex, quirk});
  else
    note(index, List::Modified, {path, layer, want, hex, ""});
}

void RecordChecker::pendingHashes(std::vector<std::string>& out) const {
  for (const auto& w : waiting_) {
    if (!w.prepare) continue;
    if (w.viaLink) {
      out.push_back(w.resolved);
    } else if (std::string path; pathOf(w.record.path, path)) {
      out.push_back(std::move(path));
    }
  }
}

RecordCheck RecordChecker::finish() {
  std::string path;
  for (const auto& w : waiting_) {
    pathOf(w.record.path, path);  // the row's, as checkRow joined it
    const std::string& resolved = w.viaLink ? w.resolved : path;
    if (auto h = view_->hashResolved(resolved, viewAlgorithm(w.record.algorithm)); h.ok())
      compare(w.row, w.record, path, resolved, w.layer, *h);
  }
  waiting_.clear();
  kept_.clear();
  text_.reset();
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
