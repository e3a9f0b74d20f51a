// Layer walking on three threads per layer: one inflates the blob (ISA-L for
// gzip, libarchive's "raw" reader for zstd and the rest) and hashes the
// compressed bytes; one hashes the inflated stream for the DiffID; the caller's
// thread reads the tar with libarchive from the same inflated chunks and hashes
// the files. A bounded queue with two readers joins them. See layer_scan.h.
#include "kernodeck/oci/layer_scan.h"

#include <array>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>

#ifdef KERNODECK_HAVE_ISAL
#include <isa-l.h>
#endif
#include <vector>

#include "kernodeck/oci/archive_lib.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/stage_profile.h"
#include "kernodeck/util/strings.h"
#include "tar_entries.h"

namespace kernodeck::oci {

namespace {

// Fails the scan with the first error met (a later one is a consequence of it).
void fail(LayerScan& out, std::string msg) {
  if (!out.error) out.error = Error::Corrupt(std::move(msg));
}

constexpr size_t kChunk = 1 << 17;
constexpr size_t kInflatedChunk = 1 << 18;
constexpr size_t kInflatedChunks = 4;  // 1 MiB in flight between the threads of a layer, each layer read at once

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

// Sets up the inflater: gzip goes to ISA-L when built with it (the first bytes are peeked),
// the rest to libarchive's raw reader. Sets `out.detected`; a stream libarchive cannot open
// fails the scan through `out.error`.
void openInflater(Pipe& pipe, LayerScan& out) {
  struct archive* inflater = archive_read_new();
  archive_read_support_filter_gzip(inflater);
  archive_read_support_filter_zstd(inflater);
  archive_read_support_format_raw(inflater);
  pipe.inflater = inflater;
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
  if (useIsal) return;  // the inflater is ISA-L; libarchive only parses the tar
  struct archive_entry* rawEntry = nullptr;
  if (archive_read_open(inflater, &pipe, nullptr, readCompressed, nullptr) != ARCHIVE_OK) {
    fail(out, "cannot read layer: " + archiveError(inflater, "unreadable stream"));
  } else if (archive_read_next_header(inflater, &rawEntry) != ARCHIVE_OK) {
    fail(out, "cannot read layer: " + archiveError(inflater, "empty or unreadable stream"));
  } else {
    switch (archive_filter_code(inflater, 0)) {
      case ARCHIVE_FILTER_GZIP: out.detected = Compression::Gzip; break;
      case ARCHIVE_FILTER_ZSTD: out.detected = Compression::Zstd; break;
      case ARCHIVE_FILTER_NONE: out.detected = Compression::None; break;
      default: out.detected = Compression::Unknown;
    }
  }
}

// This thread's part, beside the inflating and DiffID threads: parses the tar from the
// inflated chunks (readTarEntries), then reads what the tar reader left (the end-of-archive
// padding still belongs to the DiffID), or cancels the producer when the walk failed.
void parseTar(Pipe& pipe, const ScanOptions& opts, LayerScan& out) {
  struct archive* tar = archive_read_new();
  archive_read_support_format_tar(tar);
  archive_read_support_format_gnutar(tar);
  util::StageTimer tarTime(util::Stage::Tar);
  if (archive_read_open(tar, &pipe, nullptr, readInflated, nullptr) != ARCHIVE_OK) {
    fail(out, "layer is not a tar archive: " + archiveError(tar, "unknown format"));
  } else {
    readTarEntries(tar, opts, out);
  }
  archive_read_free(tar);
  if (out.error) {
    pipe.queue.cancel();
    return;
  }
  const char* data = nullptr;
  size_t n = 0;
  std::string error;
  while (true) {
    if (!pipe.queue.next(ChunkQueue::kTar, data, n, error)) {
      fail(out, "cannot inflate layer: " + util::printable(error));
      break;
    }
    if (n == 0) break;
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
  // pipe.inError is the producer's until it is joined; an I/O error replaces out.error then.
  openInflater(pipe, out);
  if (!out.error) {
    // Three threads per layer: one inflates, one hashes the inflated stream (DiffID) and this
    // one parses the tar and hashes files, so a large layer is not bound to one core.
    std::thread producer([&pipe] { pipe.produce(); });
    std::thread hasher([&pipe] { pipe.hashDiffId(); });
    parseTar(pipe, opts, out);
    producer.join();
    hasher.join();
  }
  pipe.drain();                                 // the producer did, unless it never started
  if (pipe.inError) out.error = *pipe.inError;  // the cause of whatever failed after it
  archive_read_free(pipe.inflater);
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
