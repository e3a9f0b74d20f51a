// Layer walking: two chained libarchive readers. The first ("raw" format,
// gzip/zstd filters) inflates the blob; its read callback hashes the
// compressed bytes. The second (tar format) reads the inflated stream through a
// callback that hashes it for the DiffID. See layer_scan.h.
#include "kernodeck/oci/layer_scan.h"

#include <archive.h>
#include <archive_entry.h>

#include <set>
#include <vector>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

const char* toString(EntryKind k) {
  switch (k) {
    case EntryKind::File: return "file";
    case EntryKind::Dir: return "dir";
    case EntryKind::Symlink: return "symlink";
    case EntryKind::Hardlink: return "hardlink";
    case EntryKind::Char: return "char";
    case EntryKind::Block: return "block";
    case EntryKind::Fifo: return "fifo";
    case EntryKind::Whiteout: return "whiteout";
    case EntryKind::Opaque: return "opaque";
  }
  return "?";
}

bool normalizeEntryPath(std::string_view name, std::string& out, std::string& reason) {
  out.clear();
  if (!name.empty() && name.front() == '/') {
    reason = "absolute path";
    return false;
  }
  std::vector<std::string> parts;
  for (const auto& p : util::split(name, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      reason = "path climbs with '..'";
      return false;
    }
    parts.push_back(p);
  }
  out = util::join(parts, "/");
  return true;
}

namespace {

constexpr size_t kChunk = 1 << 17;

struct Pipe {
  ByteStream* in = nullptr;
  util::Hasher compressed;
  uint64_t compressedBytes = 0;
  std::vector<char> inBuf = std::vector<char>(kChunk);
  std::optional<Error> inError;
  bool inEof = false;

  struct archive* inflater = nullptr;
  util::Hasher uncompressed{"sha256"};
  uint64_t uncompressedBytes = 0;
  std::vector<char> tarBuf = std::vector<char>(kChunk);
  bool inflaterEof = false;

  explicit Pipe(const std::string& alg) : compressed(alg) {}
};

la_ssize_t readCompressed(struct archive* a, void* ud, const void** out) {
  auto* p = static_cast<Pipe*>(ud);
  auto r = p->in->read(p->inBuf.data(), p->inBuf.size());
  if (!r.ok()) {
    p->inError = r.error();
    archive_set_error(a, EIO, "%s", r.error().message.c_str());
    return -1;
  }
  if (*r == 0) p->inEof = true;
  p->compressed.update(p->inBuf.data(), *r);
  p->compressedBytes += *r;
  *out = p->inBuf.data();
  return static_cast<la_ssize_t>(*r);
}

la_ssize_t readInflated(struct archive* a, void* ud, const void** out) {
  auto* p = static_cast<Pipe*>(ud);
  la_ssize_t n = archive_read_data(p->inflater, p->tarBuf.data(), p->tarBuf.size());
  if (n < 0) {
    const char* e = archive_error_string(p->inflater);
    archive_set_error(a, EIO, "%s", e ? e : "decompression failed");
    return -1;
  }
  if (n == 0) p->inflaterEof = true;
  p->uncompressed.update(p->tarBuf.data(), static_cast<size_t>(n));
  p->uncompressedBytes += static_cast<uint64_t>(n);
  *out = p->tarBuf.data();
  return n;
}

std::string archiveError(struct archive* a, const char* fallback) {
  const char* e = archive_error_string(a);
  return util::printable(e ? e : fallback);
}

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

// Classifies whiteout names. Returns false (with reason) for malformed ones.
bool applyWhiteoutName(LayerEntry& le, std::string& reason, bool& ignore) {
  ignore = false;
  size_t slash = le.path.rfind('/');
  std::string dir = slash == std::string::npos ? "" : le.path.substr(0, slash);
  std::string base = slash == std::string::npos ? le.path : le.path.substr(slash + 1);
  if (base.rfind(".wh.", 0) != 0) return true;
  if (base == ".wh..wh..opq") {
    le.kind = EntryKind::Opaque;
    le.path = dir;
    return true;
  }
  if (base.rfind(".wh..wh.", 0) == 0) {  // AUFS metadata (.wh..wh.plnk, ...): not content
    ignore = true;
    return true;
  }
  std::string target = base.substr(4);
  if (target.empty() || target == "." || target == "..") {
    reason = target.empty() ? "bare whiteout '.wh.'" : "whiteout of '" + target + "'";
    return false;
  }
  le.kind = EntryKind::Whiteout;
  le.path = dir.empty() ? target : dir + "/" + target;
  return true;
}

}  // namespace

LayerScan scanLayer(ByteStream& in, const ScanOptions& opts) {
  LayerScan out;
  Pipe pipe(opts.digestAlgorithm);
  pipe.in = &in;

  struct archive* inflater = archive_read_new();
  archive_read_support_filter_gzip(inflater);
  archive_read_support_filter_zstd(inflater);
  archive_read_support_format_raw(inflater);
  pipe.inflater = inflater;
  struct archive* tar = nullptr;

  auto fail = [&](std::string msg) {
    if (!out.error) out.error = pipe.inError ? *pipe.inError : Error::Corrupt(std::move(msg));
  };

  struct archive_entry* rawEntry = nullptr;
  if (archive_read_open(inflater, &pipe, nullptr, readCompressed, nullptr) != ARCHIVE_OK) {
    fail("cannot read layer: " + archiveError(inflater, "unreadable stream"));
  } else if (archive_read_next_header(inflater, &rawEntry) != ARCHIVE_OK) {
    fail("cannot read layer: " + archiveError(inflater, "empty or unreadable stream"));
  } else {
    switch (archive_filter_code(inflater, 0)) {
      case ARCHIVE_FILTER_GZIP: out.detected = Compression::Gzip; break;
      case ARCHIVE_FILTER_ZSTD: out.detected = Compression::Zstd; break;
      case ARCHIVE_FILTER_NONE: out.detected = Compression::None; break;
      default: out.detected = Compression::Unknown;
    }
    tar = archive_read_new();
    archive_read_support_format_tar(tar);
    archive_read_support_format_gnutar(tar);
    if (archive_read_open(tar, &pipe, nullptr, readInflated, nullptr) != ARCHIVE_OK) {
      fail("layer is not a tar archive: " + archiveError(tar, "unknown format"));
    } else {
      std::set<std::string> seen;
      std::vector<char> buf(kChunk);
      struct archive_entry* e = nullptr;
      while (true) {
        int rc = archive_read_next_header(tar, &e);
        if (rc == ARCHIVE_EOF) break;
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
          fail("layer tar is damaged: " + archiveError(tar, "bad header"));
          break;
        }
        const char* rawName = archive_entry_pathname(e);
        if (!rawName) rawName = archive_entry_pathname_utf8(e);
        std::string name = rawName ? rawName : "";
        LayerEntry le;
        std::string reason;
        bool ok = normalizeEntryPath(name, le.path, reason);
        bool ignore = false;
        if (ok && le.path.empty()) ignore = true;  // the root itself
        if (ok && !ignore) ok = applyWhiteoutName(le, reason, ignore);
        le.kind = (le.kind == EntryKind::Whiteout || le.kind == EntryKind::Opaque) ? le.kind : kindOf(e);
        le.mode = archive_entry_perm(e);
        le.uid = archive_entry_uid(e);
        le.gid = archive_entry_gid(e);
        le.size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
        if (ok && !ignore && le.kind == EntryKind::Hardlink) {
          std::string target;
          if (!normalizeEntryPath(archive_entry_hardlink(e), target, reason) || target.empty()) {
            ok = false;
            reason = "hardlink target " + util::printable(archive_entry_hardlink(e)) + ": " +
                     (reason.empty() ? "empty" : reason);
          }
          le.linkTarget = target;
        }
        if (le.kind == EntryKind::Symlink) {
          const char* t = archive_entry_symlink(e);
          le.linkTarget = t ? t : "";
        }
        if (ok && !ignore && le.size < 0) {
          ok = false;
          reason = "negative size";
        }
        if (ok && !ignore && static_cast<uint64_t>(le.size) > opts.maxEntryBytes) {
          ok = false;
          reason = "claims " + util::humanBytes(static_cast<uint64_t>(le.size));
        }
        if (ok && !ignore && le.kind != EntryKind::Whiteout && le.kind != EntryKind::Opaque &&
            !seen.insert(le.path).second)
          out.unsafe.push_back({util::printable(name), "duplicate entry (the later one wins)"});
        if (!ok) out.unsafe.push_back({util::printable(name), reason});

        bool hashIt = ok && !ignore && le.kind == EntryKind::File && archive_entry_sparse_count(e) == 0;
        uint64_t captureLimit = hashIt && opts.capture ? opts.capture(le.path) : 0;
        bool captureIt = captureLimit > 0 && static_cast<uint64_t>(le.size) <= captureLimit;
        if (hashIt) {
          util::Hasher h("sha256");
          std::optional<util::Hasher> m5;
          if (opts.md5) m5.emplace("md5");
          std::string captured;
          bool readOk = true;
          while (true) {
            la_ssize_t n = archive_read_data(tar, buf.data(), buf.size());
            if (n < 0) {
              fail("layer tar is damaged at '" + util::printable(name) + "': " + archiveError(tar, "read error"));
              readOk = false;
              break;
            }
            if (n == 0) break;
            h.update(buf.data(), static_cast<size_t>(n));
            if (m5) m5->update(buf.data(), static_cast<size_t>(n));
            if (captureIt) captured.append(buf.data(), static_cast<size_t>(n));
          }
          if (!readOk) break;
          le.sha256 = h.hex();
          if (m5) le.md5 = m5->hex();
          if (captureIt) le.content = std::make_shared<const std::string>(std::move(captured));
        } else if (archive_read_data_skip(tar) != ARCHIVE_OK) {
          fail("layer tar is damaged at '" + util::printable(name) + "': " + archiveError(tar, "read error"));
          break;
        }
        if (!ok || ignore) continue;
        if (le.kind != EntryKind::Whiteout && le.kind != EntryKind::Opaque) ++out.fileCount;
        out.entries.push_back(std::move(le));
      }
      // Drain what the tar reader left (end-of-archive padding) into the DiffID.
      while (!out.error && !pipe.inflaterEof) {
        const void* dummy;
        if (readInflated(tar, &pipe, &dummy) < 0) {
          fail("cannot inflate layer: " + archiveError(tar, "decompression failed"));
          break;
        }
      }
    }
  }
  // Drain the rest of the compressed input so the digest covers every byte.
  while (!pipe.inEof && !pipe.inError) {
    auto r = in.read(pipe.inBuf.data(), pipe.inBuf.size());
    if (!r.ok()) {
      pipe.inError = r.error();
      fail(r.error().message);
      break;
    }
    if (*r == 0) break;
    pipe.compressed.update(pipe.inBuf.data(), *r);
    pipe.compressedBytes += *r;
  }
  if (pipe.inError && !out.error) out.error = *pipe.inError;
  if (tar) archive_read_free(tar);
  archive_read_free(inflater);
  out.compressedSize = pipe.compressedBytes;
  out.digestHex = pipe.compressed.hex();
  out.uncompressedSize = pipe.uncompressedBytes;
  out.diffIdHex = pipe.uncompressed.hex();
  return out;
}

}  // namespace kernodeck::oci
