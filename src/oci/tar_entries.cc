// See tar_entries.h. No allocation per entry beyond the entry itself: the duplicate check
// keeps indices into the layer's entries, not a second copy of each path, and a captured file's
// buffer is sized once from its header.
#include "tar_entries.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "kernodeck/oci/archive_lib.h"
#include "kernodeck/util/file_digests.h"
#include "kernodeck/util/keyed_hash.h"
#include "kernodeck/util/path.h"
#include "kernodeck/util/stage_profile.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

static_assert(unsigned(kHashSha256) == unsigned(util::FileDigests::kSha256) &&
              unsigned(kHashMd5) == unsigned(util::FileDigests::kMd5) &&
              unsigned(kHashSha1) == unsigned(util::FileDigests::kSha1));

namespace {

// `name` without one leading "./" and one trailing '/' when what is left is already in normal
// form (util::isNormalPath): what util::cleanRooted would make of it. Nullopt when the name
// needs the full rule.
std::optional<std::string_view> alreadyClean(std::string_view name) {
  if (name.starts_with("./")) name.remove_prefix(2);
  if (name.ends_with('/')) name.remove_suffix(1);
  if (!util::isNormalPath(name)) return std::nullopt;
  return name;
}

}  // namespace

std::string cleanEntryPath(std::string_view name, std::string& note) {
  note.clear();
  // Most names a build tool writes are clean but for a "./" or a directory's '/' (issue 31).
  if (auto clean = alreadyClean(name)) return std::string(*clean);
  util::RootedPath r = util::cleanRooted(name);
  if (r.dotdot)
    note = "'..' in the path";
  else if (r.absolute && !r.path.empty())
    note = "absolute path";  // "/" alone is the root entry umoci writes
  return std::move(r.path);
}

std::string archiveError(struct archive* a, const char* fallback) {
  const char* e = archive_error_string(a);
  return util::printable(e ? e : fallback);
}

namespace {

EntryKind kindOf(struct archive_entry* e) {
  if (archive_entry_hardlink(e)) return EntryKind::Hardlink;
  switch (archive_entry_filetype(e)) {
    case AE_IFDIR: return EntryKind::Dir;
    case AE_IFLNK: return EntryKind::Symlink;
    case AE_IFCHR: return EntryKind::Char;
    case AE_IFBLK: return EntryKind::Block;
    case AE_IFIFO: return EntryKind::Fifo;
    default: return EntryKind::File;
  }
}

// Classifies whiteout names. Returns false (with reason) for malformed ones. Names that are not
// whiteouts (nearly all) are not copied.
bool applyWhiteoutName(LayerEntry& le, std::string& reason, bool& ignore) {
  ignore = false;
  size_t slash = le.path.rfind('/');
  std::string_view base = le.path;
  if (slash != std::string::npos) base.remove_prefix(slash + 1);
  if (!base.starts_with(".wh.")) return true;
  std::string dir = slash == std::string::npos ? "" : le.path.substr(0, slash);
  if (base == ".wh..wh..opq") {
    le.kind = EntryKind::Opaque;
    le.path = dir;
    return true;
  }
  if (base.starts_with(".wh..wh.")) {  // AUFS metadata (.wh..wh.plnk, ...): not content
    ignore = true;
    return true;
  }
  std::string target(base.substr(4));
  if (target.empty() || target == "." || target == "..") {
    reason = target.empty() ? "bare whiteout '.wh.'" : "whiteout of '" + target + "'";
    return false;
  }
  le.kind = EntryKind::Whiteout;
  le.path = dir.empty() ? target : dir + "/" + target;
  return true;
}

// The paths a layer's walk has kept so far, as indices into its entries: a duplicate entry is
// found without a second copy of every path (open addressing, at most half full). Each slot
// keeps the path's hash beside the index, so a path is hashed once (contains() then add()),
// growing never hashes again, and a probe compares strings only when the hashes agree.
class SeenPaths {
 public:
  explicit SeenPaths(const std::vector<LayerEntry>& entries) : entries_(entries) {}
  // Whether `path` is kept; remembers its hash for the add() of the same path that may follow.
  bool contains(std::string_view path) {
    hash_ = util::keyedHash(path);
    return !slots_.empty() && slots_[find(path, hash_)].index != 0;
  }
  // Adds entries_[index], whose path is not contained yet and was the last asked of contains().
  void add(size_t index) {
    if (index >= UINT32_MAX) return;  // beyond any layer ScanOptions lets through
    if (2 * (used_ + 1) > slots_.size()) grow();
    slots_[find(entries_[index].path, hash_)] = {static_cast<uint32_t>(index + 1), static_cast<uint32_t>(hash_)};
    ++used_;
  }

 private:
  struct Slot {
    uint32_t index = 0;  // into entries_, plus one; 0: empty
    uint32_t hash = 0;   // the path's hash, its low half
  };
  // The slot holding `path`, or the empty slot where it would go.
  size_t find(std::string_view path, uint64_t hash) const {
    size_t mask = slots_.size() - 1, i = static_cast<uint32_t>(hash) & mask;  // as grow() places it
    while (slots_[i].index != 0 &&
           (slots_[i].hash != static_cast<uint32_t>(hash) || entries_[slots_[i].index - 1].path != path))
      i = (i + 1) & mask;
    return i;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(std::max<size_t>(1024, 2 * old.size()), Slot{});
    size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.index == 0) continue;
      size_t i = s.hash & mask;
      while (slots_[i].index != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  const std::vector<LayerEntry>& entries_;
  std::vector<Slot> slots_;
  size_t used_ = 0;
  uint64_t hash_ = 0;  // of the path last asked of contains()
};

// One tar header, classified: the entry as a view would apply it, and whether it is refused
// (`ok` false, with `reason`), skipped (`ignore`: the root, AUFS metadata) or odd (`note`).
struct Header {
  LayerEntry le;
  std::string_view name;  // as the tar spells it: libarchive's, valid until the next header
  std::string reason, note;
  bool ok = true, ignore = false;
};

Header readHeader(struct archive_entry* e, const ScanOptions& opts) {
  Header h;
  LayerEntry& le = h.le;
  const char* rawName = archive_entry_pathname(e);
  if (!rawName) rawName = archive_entry_pathname_utf8(e);
  h.name = rawName ? std::string_view(rawName) : std::string_view();
  le.path = cleanEntryPath(h.name, h.note);
  h.ignore = le.path.empty();  // the root itself: containerd skips it
  if (!h.ignore) h.ok = applyWhiteoutName(le, h.reason, h.ignore);
  le.kind = (le.kind == EntryKind::Whiteout || le.kind == EntryKind::Opaque) ? le.kind : kindOf(e);
  le.mode = archive_entry_perm(e);
  le.uid = archive_entry_uid(e);
  le.gid = archive_entry_gid(e);
  le.size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
  if (h.ok && !h.ignore && le.kind == EntryKind::Hardlink) {
    le.linkTarget = archive_entry_hardlink(e);
    std::string targetNote;
    (void)cleanEntryPath(le.linkTarget, targetNote);
    if (!targetNote.empty() && h.note.empty())
      h.note = "hardlink target " + util::printable(le.linkTarget) + ": " + targetNote;
  }
  if (le.kind == EntryKind::Symlink) {
    const char* t = archive_entry_symlink(e);
    le.linkTarget = t ? t : "";
  }
  if (h.ok && !h.ignore && le.size < 0) {
    h.ok = false;
    h.reason = "negative size";
  }
  if (h.ok && !h.ignore && static_cast<uint64_t>(le.size) > opts.maxEntryBytes) {
    h.ok = false;
    h.reason = "claims " + util::humanBytes(static_cast<uint64_t>(le.size));
  }
  return h;
}

// What one entry's data goes to as it streams by.
struct Sinks {
  unsigned hashing = 0;  // FileDigests' bits
  bool capture = false;  // keep the whole file
  std::unique_ptr<PartialCapture> partial;
  std::string content;  // the captured bytes
};

// The walk of one layer's tar: the reader, the layer's bounds and what it found so far.
class TarWalk {
 public:
  TarWalk(struct archive* tar, const ScanOptions& opts, LayerScan& out)
      : tar_(tar), opts_(opts), out_(out), seen_(out.entries) {}

  void run() {
    while (next()) {
    }
  }

 private:
  void fail(std::string msg) {
    if (!out_.error) out_.error = Error::Corrupt(std::move(msg));
  }
  // Go's archive/tar (and so containerd) takes the end of the input right after an entry's
  // data, before its padding, as the end of the archive; umoci insert writes such layers.
  bool endsAfterData() const {
    const char* msg = archive_error_string(tar_);
    return dataComplete_ && msg && std::string_view(msg).find("Truncated") != std::string_view::npos;
  }
  void tooMuchCaptured(std::string_view name) {
    fail("layer holds more than " + util::humanBytes(opts_.maxCapturedBytes) +
         " of files to read (package databases, metadata), last '" + util::printable(name) + "'");
  }

  // Reads one entry; false when the walk ends (the archive's end, or a failure).
  bool next();
  // Which digests, capture and partial capture the entry gets; false (failed) past the bound
  // on captured bytes.
  bool chooseSinks(const Header& h, struct archive_entry* e, Sinks& s);
  // Streams the entry's data into `s`. False when the tar is damaged (failed); `atEnd` when
  // the archive ends right after this entry's data.
  bool readData(const Header& h, Sinks& s, bool& atEnd);

  struct archive* tar_;
  const ScanOptions& opts_;
  LayerScan& out_;
  SeenPaths seen_;
  util::FileDigests digests_;  // one set of contexts for every file of the layer
  uint64_t entries_ = 0, captured_ = 0;
  uint64_t readBytes_ = 0;  // of the current entry's data
  bool dataComplete_ = false;
};

bool TarWalk::next() {
  struct archive_entry* e = nullptr;
  int rc = archive_read_next_header(tar_, &e);
  if (rc == ARCHIVE_EOF) return false;
  if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
    if (!endsAfterData()) fail("layer tar is damaged: " + archiveError(tar_, "bad header"));
    return false;
  }
  if (++entries_ > opts_.maxEntries) {
    fail("layer holds more than " + std::to_string(opts_.maxEntries) + " entries");
    return false;
  }
  dataComplete_ = false;
  Header h = readHeader(e, opts_);
  LayerEntry& le = h.le;
  bool tracked = h.ok && !h.ignore && le.kind != EntryKind::Whiteout && le.kind != EntryKind::Opaque;
  bool firstOfPath = tracked && !seen_.contains(le.path);
  if (tracked && !firstOfPath)
    out_.suspicious.push_back({util::printable(h.name), "duplicate entry (the later one wins)"});
  if (!h.ok)
    out_.unsafe.push_back({util::printable(h.name), h.reason});
  else if (!h.note.empty())
    out_.suspicious.push_back({util::printable(h.name), h.note + " (a runtime applies it inside the root)"});

  Sinks s;
  if (!chooseSinks(h, e, s)) return false;
  bool atEnd = false;
  if (!readData(h, s, atEnd)) return false;
  if (s.partial) {
    std::string kept = s.partial->finish();
    if (kept.size() > opts_.maxCapturedBytes - captured_) {
      tooMuchCaptured(h.name);
      return false;
    }
    captured_ += kept.size();
    // "" keeps nothing: the entry has no content, as when nothing is captured (an ELF file
    // without GPU code, say).
    if (!kept.empty()) le.content = std::make_shared<const std::string>(std::move(kept));
  }
  dataComplete_ = le.size > 0 && readBytes_ >= static_cast<uint64_t>(le.size);
  if (s.hashing) {
    util::StageTimer t(util::Stage::FileDigests);
    unsigned char sha256[32], md5[16];
    unsigned done = digests_.finishRaw(sha256, md5, le.sha1);
    if (done & util::FileDigests::kSha256) le.sha256.assign(sha256);
    if (done & util::FileDigests::kMd5) le.md5.assign(md5);
  }
  if (s.capture) le.content = std::make_shared<const std::string>(std::move(s.content));
  if (!h.ok || h.ignore) return !atEnd;
  if (le.kind != EntryKind::Whiteout && le.kind != EntryKind::Opaque) ++out_.fileCount;
  // A quarter more at a time, not double: at a reallocation the old and the new buffer are both
  // live (3x the entries held when doubling, 2.25x here), and up to two layers grow at once.
  if (out_.entries.size() == out_.entries.capacity())
    out_.entries.reserve(out_.entries.size() + out_.entries.size() / 4 + 256);
  out_.entries.push_back(std::move(le));
  if (firstOfPath) seen_.add(out_.entries.size() - 1);
  return !atEnd;
}

bool TarWalk::chooseSinks(const Header& h, struct archive_entry* e, Sinks& s) {
  const LayerEntry& le = h.le;
  bool regular = h.ok && !h.ignore && le.kind == EntryKind::File && archive_entry_sparse_count(e) == 0;
  unsigned want = regular ? (opts_.hashes ? opts_.hashes(le.path) : kHashSha256 | kHashMd5) : 0;
  s.partial = regular && opts_.partial ? opts_.partial(le.path, static_cast<uint64_t>(le.size)) : nullptr;
  uint64_t captureLimit = regular && !s.partial && opts_.capture ? opts_.capture(le.path) : 0;
  s.capture = captureLimit > 0 && static_cast<uint64_t>(le.size) <= captureLimit;
  if (s.capture && static_cast<uint64_t>(le.size) > opts_.maxCapturedBytes - captured_) {
    tooMuchCaptured(h.name);
    return false;
  }
  if (s.capture) {
    captured_ += static_cast<uint64_t>(le.size);
    s.content.reserve(static_cast<size_t>(le.size));  // counted above: one buffer of the declared size
  }
  // kHash* are FileDigests' bits.
  s.hashing = want & (kHashSha256 | kHashMd5 | kHashSha1);
  if (s.hashing) digests_.start(s.hashing);
  return true;
}

bool TarWalk::readData(const Header& h, Sinks& s, bool& atEnd) {
  // Blocks straight from libarchive's buffer (no copy); offsets only jump in sparse files,
  // which are not hashed. Read even when not hashed: the input is a stream, skipping costs
  // the same, and the bytes tell a complete entry from a truncated one.
  const void* block = nullptr;
  size_t n = 0;
  la_int64_t offset = 0;
  readBytes_ = 0;
  while (true) {
    int rc = archive_read_data_block(tar_, &block, &n, &offset);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      dataComplete_ = h.le.size > 0 && readBytes_ >= static_cast<uint64_t>(h.le.size);
      if (endsAfterData()) {
        atEnd = true;
        break;
      }
      fail("layer tar is damaged at '" + util::printable(h.name) + "': " + archiveError(tar_, "read error"));
      return false;
    }
    readBytes_ += n;
    if (s.hashing) {
      util::StageTimer t(util::Stage::FileDigests);
      digests_.update(block, n);
    }
    if (s.capture) s.content.append(static_cast<const char*>(block), n);
    if (s.partial) s.partial->feed(static_cast<const char*>(block), n);
  }
  return true;
}

}  // namespace

void readTarEntries(struct archive* tar, const ScanOptions& opts, LayerScan& out) {
  // Not shrunk to fit after the walk: the copy would hold the entries twice at the moment the
  // other layer read at once is growing, the peak; the growth's slack is at most a quarter.
  TarWalk(tar, opts, out).run();
}

}  // namespace kernodeck::oci
