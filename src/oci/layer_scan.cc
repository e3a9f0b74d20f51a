// Layer walking: two chained libarchive readers. The first ("raw" format,
// gzip/zstd filters) inflates the blob; its read callback hashes the
// compressed bytes. The second (tar format) reads the inflated stream through a
// callback that hashes it for the DiffID. See layer_scan.h.
#include "kernodeck/oci/layer_scan.h"

#include <archive.h>
#include <archive_entry.h>

#include <cstring>
#include <set>

#ifdef KERNODECK_HAVE_ISAL
#include <isa-l.h>
#endif
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

struct Pipe;

#ifdef KERNODECK_HAVE_ISAL
// gzip through ISA-L's igzip (several times faster than zlib); multi-member streams
// are followed member by member. zstd and plain tar stay with libarchive.
class IsalGzip {
 public:
  explicit IsalGzip(Pipe* p) : p_(p) {
    isal_inflate_init(&st_);
    st_.crc_flag = ISAL_GZIP;
  }
  // Inflated bytes into buf; 0 at the end; -1 on a damaged or truncated stream.
  la_ssize_t read(char* buf, size_t n, std::string& error);

 private:
  Pipe* p_;
  struct inflate_state st_ {};
  bool done_ = false;
};
#endif

struct Pipe {
  ByteStream* in = nullptr;
  std::string pending;  // bytes already read from `in` (the peek), served first
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
#ifdef KERNODECK_HAVE_ISAL
  std::unique_ptr<IsalGzip> isal;
#endif

  explicit Pipe(const std::string& alg) : compressed(alg) {}

  // Next compressed bytes (hashed and counted); 0 at the end.
  Result<size_t> pull(char* buf, size_t n) {
    if (!pending.empty()) {
      size_t k = std::min(n, pending.size());
      std::memcpy(buf, pending.data(), k);
      pending.erase(0, k);
      return k;
    }
    auto r = in->read(buf, n);
    if (!r.ok()) {
      inError = r.error();
      return r;
    }
    if (*r == 0) inEof = true;
    compressed.update(buf, *r);
    compressedBytes += *r;
    return r;
  }
};

#ifdef KERNODECK_HAVE_ISAL
la_ssize_t IsalGzip::read(char* buf, size_t n, std::string& error) {
  while (!done_) {
    if (st_.avail_in == 0 && !p_->inEof) {
      auto r = p_->pull(p_->inBuf.data(), p_->inBuf.size());
      if (!r.ok()) {
        error = r.error().message;
        return -1;
      }
      st_.next_in = reinterpret_cast<uint8_t*>(p_->inBuf.data());
      st_.avail_in = static_cast<uint32_t>(*r);
    }
    st_.next_out = reinterpret_cast<uint8_t*>(buf);
    st_.avail_out = static_cast<uint32_t>(n);
    int ret = isal_inflate(&st_);
    if (ret < 0) {
      error = "gzip stream is damaged (ISA-L error " + std::to_string(ret) + ")";
      return -1;
    }
    size_t produced = n - st_.avail_out;
    if (st_.block_state == ISAL_BLOCK_FINISH) {
      // End of a member: another may follow (concatenated gzip), else the stream is done.
      uint8_t* next = st_.next_in;
      uint32_t avail = st_.avail_in;
      if (avail == 0 && !p_->inEof) {
        auto r = p_->pull(p_->inBuf.data(), p_->inBuf.size());
        if (!r.ok()) {
          error = r.error().message;
          return -1;
        }
        next = reinterpret_cast<uint8_t*>(p_->inBuf.data());
        avail = static_cast<uint32_t>(*r);
      }
      if (avail == 0) done_ = true;
      else {
        isal_inflate_reset(&st_);
        st_.crc_flag = ISAL_GZIP;
        st_.next_in = next;
        st_.avail_in = avail;
      }
    } else if (st_.avail_in == 0 && p_->inEof && produced == 0) {
      error = "gzip stream ends early (truncated)";
      return -1;
    }
    if (produced > 0) return static_cast<la_ssize_t>(produced);
  }
  return 0;
}
#endif

la_ssize_t readCompressed(struct archive* a, void* ud, const void** out) {
  auto* p = static_cast<Pipe*>(ud);
  auto r = p->pull(p->inBuf.data(), p->inBuf.size());
  if (!r.ok()) {
    archive_set_error(a, EIO, "%s", r.error().message.c_str());
    return -1;
  }
  *out = p->inBuf.data();
  return static_cast<la_ssize_t>(*r);
}

la_ssize_t readInflated(struct archive* a, void* ud, const void** out) {
  auto* p = static_cast<Pipe*>(ud);
#ifdef KERNODECK_HAVE_ISAL
  if (p->isal) {
    std::string error;
    la_ssize_t k = p->isal->read(p->tarBuf.data(), p->tarBuf.size(), error);
    if (k < 0) {
      archive_set_error(a, EIO, "%s", error.c_str());
      return -1;
    }
    if (k == 0) p->inflaterEof = true;
    p->uncompressed.update(p->tarBuf.data(), static_cast<size_t>(k));
    p->uncompressedBytes += static_cast<uint64_t>(k);
    *out = p->tarBuf.data();
    return k;
  }
#endif
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
  bool useIsal = false;
#ifdef KERNODECK_HAVE_ISAL
  {
    // Peek at the first bytes: gzip goes to ISA-L.
    char head[2];
    size_t got = 0;
    while (got < 2) {
      auto r = pipe.pull(head + got, 2 - got);
      if (!r.ok() || *r == 0) break;
      got += *r;
    }
    pipe.pending.assign(head, got);
    useIsal = got == 2 && static_cast<unsigned char>(head[0]) == 0x1f && static_cast<unsigned char>(head[1]) == 0x8b;
    if (useIsal) {
      pipe.isal = std::make_unique<IsalGzip>(&pipe);
      out.detected = Compression::Gzip;
    }
  }
#endif
  if (useIsal) {
    // The inflater is ISA-L; libarchive only parses the tar.
  } else if (archive_read_open(inflater, &pipe, nullptr, readCompressed, nullptr) != ARCHIVE_OK) {
    fail("cannot read layer: " + archiveError(inflater, "unreadable stream"));
  } else if (archive_read_next_header(inflater, &rawEntry) != ARCHIVE_OK) {
    fail("cannot read layer: " + archiveError(inflater, "empty or unreadable stream"));
  }
  if (!out.error) {
    if (!useIsal) switch (archive_filter_code(inflater, 0)) {
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
