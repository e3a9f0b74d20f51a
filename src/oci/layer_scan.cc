// Layer walking on three threads per layer: one inflates the blob (ISA-L for
// gzip, libarchive's "raw" reader for zstd and the rest) and hashes the
// compressed bytes; one hashes the inflated stream for the DiffID; the caller's
// thread reads the tar with libarchive from the same inflated chunks and hashes
// the files. A bounded queue with two readers joins them. See layer_scan.h.
#include "kernodeck/oci/layer_scan.h"

#include <archive.h>
#include <archive_entry.h>

#include <array>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <set>
#include <thread>

#ifdef KERNODECK_HAVE_ISAL
#include <isa-l.h>
#endif
#include <vector>

#include "kernodeck/util/file_digests.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/path.h"
#include "kernodeck/util/stage_profile.h"
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

std::string cleanEntryPath(std::string_view name, std::string& note) {
  util::RootedPath r = util::cleanRooted(name);
  note.clear();
  if (r.dotdot)
    note = "'..' in the path";
  else if (r.absolute && !r.path.empty())
    note = "absolute path";  // "/" alone is the root entry umoci writes
  return std::move(r.path);
}

static_assert(unsigned(kHashSha256) == unsigned(util::FileDigests::kSha256) &&
              unsigned(kHashMd5) == unsigned(util::FileDigests::kMd5) &&
              unsigned(kHashSha1) == unsigned(util::FileDigests::kSha1));

namespace {

constexpr size_t kChunk = 1 << 17;
constexpr size_t kInflatedChunk = 1 << 18;
constexpr size_t kInflatedChunks = 16;  // 4 MiB in flight between the threads of a layer

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

// Inflated chunks handed from the inflating thread to two readers, in order: the tar walk and
// the DiffID hasher. A fixed set of buffers cycles between a free list and the published
// queue; a chunk is free again once both readers have moved past it, so memory stays bounded.
class ChunkQueue {
 public:
  static constexpr int kReaders = 2;
  enum Reader { kTar = 0, kDiffId = 1 };

  ChunkQueue() {
    for (auto& b : buffers_) {
      b.resize(kInflatedChunk);
      free_.push_back(&b);
    }
  }

  // Producer: a free buffer, or nullptr once a reader has cancelled.
  std::vector<char>* acquire() {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return !free_.empty() || cancelled_; });
    if (cancelled_) return nullptr;
    std::vector<char>* b = free_.front();
    free_.pop_front();
    return b;
  }
  void publish(std::vector<char>* b, size_t n) {
    std::lock_guard<std::mutex> l(m_);
    published_.push_back({b, n, kReaders});
    cv_.notify_all();
  }
  void close(std::optional<std::string> error) {
    std::lock_guard<std::mutex> l(m_);
    closed_ = true;
    error_ = std::move(error);
    cv_.notify_all();
  }

  // Reader: the next chunk (n == 0 at the end, or once cancelled); false with `error` when
  // inflating failed. The reader's previous chunk is released, so it stays valid until this call.
  bool next(Reader r, const char*& data, size_t& n, std::string& error) {
    std::unique_lock<std::mutex> l(m_);
    if (holding_[r]) {
      holding_[r] = false;
      --published_[cursor_[r] - 1 - base_].pending;
      bool freed = false;
      while (!published_.empty() && published_.front().pending == 0) {
        free_.push_back(published_.front().buf);
        published_.pop_front();
        ++base_;
        freed = true;
      }
      if (freed) cv_.notify_all();
    }
    cv_.wait(l, [&] { return cursor_[r] < base_ + published_.size() || closed_ || cancelled_; });
    if (cursor_[r] >= base_ + published_.size()) {
      if (error_ && !cancelled_) {
        error = *error_;
        return false;
      }
      data = nullptr;
      n = 0;
      return true;
    }
    Slot& slot = published_[cursor_[r]++ - base_];
    holding_[r] = true;
    data = slot.buf->data();
    n = slot.n;
    return true;
  }
  // A reader stops: the producer stops inflating (it still drains the compressed input into
  // the digest) and the other reader sees the end.
  void cancel() {
    std::lock_guard<std::mutex> l(m_);
    cancelled_ = true;
    cv_.notify_all();
  }

 private:
  struct Slot {
    std::vector<char>* buf;
    size_t n;
    int pending;  // readers that have not moved past it
  };
  std::array<std::vector<char>, kInflatedChunks> buffers_;
  std::deque<std::vector<char>*> free_;
  std::deque<Slot> published_;  // published_[0] is chunk number base_
  uint64_t base_ = 0;
  uint64_t cursor_[kReaders] = {0, 0};  // the next chunk number each reader takes
  bool holding_[kReaders] = {false, false};
  bool closed_ = false, cancelled_ = false;
  std::optional<std::string> error_;
  std::mutex m_;
  std::condition_variable cv_;
};

struct Pipe {
  ByteStream* in = nullptr;
  std::string pending;  // bytes already read from `in` (the peek), served first
  util::Hasher compressed;
  bool streamHashes = false;  // `in` computes the digest itself: do not hash twice
  uint64_t compressedBytes = 0;
  std::vector<char> inBuf = std::vector<char>(kChunk);
  std::optional<Error> inError;
  bool inEof = false;

  struct archive* inflater = nullptr;
  util::Hasher uncompressed{"sha256"};
  uint64_t uncompressedBytes = 0;
  ChunkQueue queue;
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
    if (!streamHashes) {
      util::StageTimer t(util::Stage::CompressedDigest);
      compressed.update(buf, *r);
    }
    compressedBytes += *r;
    return r;
  }

  // Inflated bytes into buf; 0 at the end; -1 with `error`.
  la_ssize_t inflate(char* buf, size_t n, std::string& error) {
#ifdef KERNODECK_HAVE_ISAL
    if (isal) return isal->read(buf, n, error);
#endif
    la_ssize_t k = archive_read_data(inflater, buf, n);
    if (k < 0) {
      const char* e = archive_error_string(inflater);
      error = e ? e : "decompression failed";
    }
    return k;
  }

  // The inflating thread: inflates into the queue, then drains the rest of the compressed
  // input so that the digest covers every byte.
  void produce() {
    util::StageTimer t(util::Stage::Inflate);
    while (std::vector<char>* b = queue.acquire()) {
      std::string error;
      la_ssize_t k = inflate(b->data(), b->size(), error);
      if (k < 0) {
        queue.close(inError ? inError->message : error);
        break;
      }
      if (k == 0) {
        queue.close(std::nullopt);
        break;
      }
      uncompressedBytes += static_cast<uint64_t>(k);
      queue.publish(b, static_cast<size_t>(k));
    }
    drain();
  }

  // Reads the rest of the compressed input, so that the digest covers every byte.
  void drain() {
    util::StageTimer t(util::Stage::Inflate);
    while (!inEof && !inError) {
      auto r = pull(inBuf.data(), inBuf.size());
      if (!r.ok() || *r == 0) break;
    }
  }

  // The DiffID thread: hashes the inflated stream as the producer publishes it.
  void hashDiffId() {
    util::StageTimer t(util::Stage::DiffId);
    const char* data = nullptr;
    size_t n = 0;
    std::string error;
    while (queue.next(ChunkQueue::kDiffId, data, n, error) && n > 0) uncompressed.update(data, n);
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
      if (avail == 0)
        done_ = true;
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
  const char* data = nullptr;
  size_t n = 0;
  std::string error;
  if (!p->queue.next(ChunkQueue::kTar, data, n, error)) {
    archive_set_error(a, EIO, "%s", error.c_str());
    return -1;
  }
  *out = data;
  return static_cast<la_ssize_t>(n);
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

// Reads the tar's entries into `out`; a damaged archive stops the walk through `fail`.
template <typename Fail>
void readEntries(struct archive* tar, const ScanOptions& opts, LayerScan& out, Fail& fail) {
  std::set<std::string> seen;
  util::FileDigests digests;  // one set of contexts for every file of the layer
  uint64_t entries = 0, captured = 0;
  struct archive_entry* e = nullptr;
  // Go's archive/tar (and so containerd) takes the end of the input right after an entry's
  // data, before its padding, as the end of the archive; umoci insert writes such layers.
  bool dataComplete = false;
  auto endsAfterData = [&] {
    const char* msg = archive_error_string(tar);
    return dataComplete && msg && std::string_view(msg).find("Truncated") != std::string_view::npos;
  };
  while (true) {
    int rc = archive_read_next_header(tar, &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
      if (!endsAfterData()) fail("layer tar is damaged: " + archiveError(tar, "bad header"));
      break;
    }
    if (++entries > opts.maxEntries) {
      fail("layer holds more than " + std::to_string(opts.maxEntries) + " entries");
      break;
    }
    dataComplete = false;
    const char* rawName = archive_entry_pathname(e);
    if (!rawName) rawName = archive_entry_pathname_utf8(e);
    std::string name = rawName ? rawName : "";
    LayerEntry le;
    std::string reason, note;
    bool ok = true;
    le.path = cleanEntryPath(name, note);
    bool ignore = le.path.empty();  // the root itself: containerd skips it
    if (!ignore) ok = applyWhiteoutName(le, reason, ignore);
    le.kind = (le.kind == EntryKind::Whiteout || le.kind == EntryKind::Opaque) ? le.kind : kindOf(e);
    le.mode = archive_entry_perm(e);
    le.uid = archive_entry_uid(e);
    le.gid = archive_entry_gid(e);
    le.size = archive_entry_size_is_set(e) ? archive_entry_size(e) : 0;
    if (ok && !ignore && le.kind == EntryKind::Hardlink) {
      le.linkTarget = archive_entry_hardlink(e);
      std::string targetNote;
      (void)cleanEntryPath(le.linkTarget, targetNote);
      if (!targetNote.empty() && note.empty())
        note = "hardlink target " + util::printable(le.linkTarget) + ": " + targetNote;
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
    if (ok && !ignore && le.kind != EntryKind::Whiteout && le.kind != EntryKind::Opaque && !seen.insert(le.path).second)
      out.suspicious.push_back({util::printable(name), "duplicate entry (the later one wins)"});
    if (!ok)
      out.unsafe.push_back({util::printable(name), reason});
    else if (!note.empty())
      out.suspicious.push_back({util::printable(name), note + " (a runtime applies it inside the root)"});

    bool regular = ok && !ignore && le.kind == EntryKind::File && archive_entry_sparse_count(e) == 0;
    unsigned want = regular ? (opts.hashes ? opts.hashes(le.path) : kHashSha256 | kHashMd5) : 0;
    std::unique_ptr<PartialCapture> partial =
        regular && opts.partial ? opts.partial(le.path, static_cast<uint64_t>(le.size)) : nullptr;
    uint64_t captureLimit = regular && !partial && opts.capture ? opts.capture(le.path) : 0;
    bool captureIt = captureLimit > 0 && static_cast<uint64_t>(le.size) <= captureLimit;
    if (captureIt && static_cast<uint64_t>(le.size) > opts.maxCapturedBytes - captured) {
      fail("layer holds more than " + util::humanBytes(opts.maxCapturedBytes) +
           " of files to read (package databases, metadata), last '" + util::printable(name) + "'");
      break;
    }
    if (captureIt) captured += static_cast<uint64_t>(le.size);
    // kHash* are FileDigests' bits.
    unsigned hashing = want & (kHashSha256 | kHashMd5 | kHashSha1);
    if (hashing) digests.start(hashing);
    std::string content;
    bool readOk = true, atEnd = false;
    // Blocks straight from libarchive's buffer (no copy); offsets only jump in sparse files,
    // which are not hashed. Read even when not hashed: the input is a stream, skipping costs
    // the same, and the bytes tell a complete entry from a truncated one.
    const void* block = nullptr;
    size_t n = 0;
    la_int64_t offset = 0;
    uint64_t got = 0;
    while (true) {
      int rc = archive_read_data_block(tar, &block, &n, &offset);
      if (rc == ARCHIVE_EOF) break;
      if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
        dataComplete = le.size > 0 && got >= static_cast<uint64_t>(le.size);
        if (endsAfterData()) {
          atEnd = true;
          break;
        }
        fail("layer tar is damaged at '" + util::printable(name) + "': " + archiveError(tar, "read error"));
        readOk = false;
        break;
      }
      got += n;
      if (hashing) {
        util::StageTimer t(util::Stage::FileDigests);
        digests.update(block, n);
      }
      if (captureIt) content.append(static_cast<const char*>(block), n);
      if (partial) partial->feed(static_cast<const char*>(block), n);
    }
    if (!readOk) break;
    if (partial) {
      std::string kept = partial->finish();
      if (kept.size() > opts.maxCapturedBytes - captured) {
        fail("layer holds more than " + util::humanBytes(opts.maxCapturedBytes) +
             " of files to read (package databases, metadata), last '" + util::printable(name) + "'");
        break;
      }
      captured += kept.size();
      le.content = std::make_shared<const std::string>(std::move(kept));
    }
    dataComplete = le.size > 0 && got >= static_cast<uint64_t>(le.size);
    if (hashing) {
      util::StageTimer t(util::Stage::FileDigests);
      digests.finish(le.sha256, le.md5, le.sha1);
    }
    if (captureIt) le.content = std::make_shared<const std::string>(std::move(content));
    if (!ok || ignore) {
      if (atEnd) break;
      continue;
    }
    if (le.kind != EntryKind::Whiteout && le.kind != EntryKind::Opaque) ++out.fileCount;
    out.entries.push_back(std::move(le));
    if (atEnd) break;
  }
}

}  // namespace

LayerScan scanLayer(ByteStream& in, const ScanOptions& opts) {
  LayerScan out;
  Pipe pipe(opts.digestAlgorithm);
  pipe.in = &in;
  pipe.streamHashes = in.computesDigest(opts.digestAlgorithm);

  if (opts.hashOnly) {
    pipe.drain();
    if (pipe.inError) out.error = *pipe.inError;
    out.compressedSize = pipe.compressedBytes;
    out.digestHex = pipe.streamHashes ? in.digestHex().value_or("") : pipe.compressed.hex();
    return out;
  }
  struct archive* inflater = archive_read_new();
  archive_read_support_filter_gzip(inflater);
  archive_read_support_filter_zstd(inflater);
  archive_read_support_format_raw(inflater);
  pipe.inflater = inflater;

  // pipe.inError is the producer's until it is joined; an I/O error replaces this one then.
  auto fail = [&](std::string msg) {
    if (!out.error) out.error = Error::Corrupt(std::move(msg));
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
  bool started = false;
  if (useIsal) {
    // The inflater is ISA-L; libarchive only parses the tar.
  } else if (archive_read_open(inflater, &pipe, nullptr, readCompressed, nullptr) != ARCHIVE_OK) {
    fail("cannot read layer: " + archiveError(inflater, "unreadable stream"));
  } else if (archive_read_next_header(inflater, &rawEntry) != ARCHIVE_OK) {
    fail("cannot read layer: " + archiveError(inflater, "empty or unreadable stream"));
  }
  // Three threads per layer: one inflates, one hashes the inflated stream (DiffID) and this
  // one parses the tar and hashes files, so a large layer is not bound to one core.
  std::thread producer, hasher;
  if (!out.error) {
    if (!useIsal) switch (archive_filter_code(inflater, 0)) {
        case ARCHIVE_FILTER_GZIP: out.detected = Compression::Gzip; break;
        case ARCHIVE_FILTER_ZSTD: out.detected = Compression::Zstd; break;
        case ARCHIVE_FILTER_NONE: out.detected = Compression::None; break;
        default: out.detected = Compression::Unknown;
      }
    producer = std::thread([&pipe] { pipe.produce(); });
    hasher = std::thread([&pipe] { pipe.hashDiffId(); });
    started = true;
    struct archive* tar = archive_read_new();
    archive_read_support_format_tar(tar);
    archive_read_support_format_gnutar(tar);
    util::StageTimer tarTime(util::Stage::Tar);
    if (archive_read_open(tar, &pipe, nullptr, readInflated, nullptr) != ARCHIVE_OK) {
      fail("layer is not a tar archive: " + archiveError(tar, "unknown format"));
    } else {
      readEntries(tar, opts, out, fail);
    }
    archive_read_free(tar);
    if (out.error) {
      pipe.queue.cancel();
    } else {
      // What the tar reader left (end-of-archive padding) still belongs to the DiffID.
      const char* data = nullptr;
      size_t n = 0;
      std::string error;
      while (true) {
        if (!pipe.queue.next(ChunkQueue::kTar, data, n, error)) {
          fail("cannot inflate layer: " + util::printable(error));
          break;
        }
        if (n == 0) break;
      }
    }
  }
  if (started) {
    producer.join();
    hasher.join();
  }
  pipe.drain();                                 // the producer did, unless it never started
  if (pipe.inError) out.error = *pipe.inError;  // the cause of whatever failed after it
  archive_read_free(inflater);
  out.compressedSize = pipe.compressedBytes;
  if (pipe.streamHashes)
    out.digestHex = in.digestHex().value_or("");  // empty: the stream ended early
  else
    out.digestHex = pipe.compressed.hex();
  out.uncompressedSize = pipe.uncompressedBytes;
  out.diffIdHex = pipe.uncompressed.hex();
  return out;
}

}  // namespace kernodeck::oci
