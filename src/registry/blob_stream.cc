// See client.h. Client::blob: a blob from the verified local cache, or streamed from the registry
// through a bounded queue filled by a transfer thread, so the layer walk consumes bytes while they
// arrive and a layer is never held whole in memory or on disk first; the cache entry is linked in
// only once the bytes hash to the digest.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "client_impl.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/stage_profile.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::registry {

Result<std::string> Client::smallBlob(const oci::Descriptor& d, uint64_t limit) {
  if (d.size < 0 || static_cast<uint64_t>(d.size) > limit)
    return Error::Invalid(impl_->where("blob " + d.digest.str()) + ": " + std::to_string(d.size) +
                          " bytes, more than " + util::humanBytes(limit));
  KDK_TRY_ASSIGN(auto stream, blob(d));
  return oci::readAll(*stream, limit, impl_->where("blob " + d.digest.str()));
}

namespace {

// A blob stream fed by a transfer thread through a bounded queue.
class BlobStream : public oci::ByteStream {
 public:
  BlobStream(Client::Impl* impl, oci::Descriptor d, std::string cachePath, std::string tmpDir)
      : impl_(impl), d_(std::move(d)), cachePath_(std::move(cachePath)), tmpDir_(std::move(tmpDir)) {
    t_ = std::thread([this] { produce(); });
  }
  ~BlobStream() override {
    {
      std::lock_guard<std::mutex> l(m_);
      cancel_ = true;
    }
    cv_.notify_all();
    t_.join();
  }

  bool computesDigest(const std::string& algorithm) const override {
    return algorithm == d_.digest.algorithm && util::Hasher(algorithm).valid();
  }
  std::optional<std::string> digestHex() const override {
    std::lock_guard<std::mutex> l(m_);
    if (!done_) return std::nullopt;
    return hex_;
  }

  Result<size_t> read(void* buf, size_t n) override {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return !q_.empty() || done_; });
    if (q_.empty()) {
      if (err_) return *err_;
      return size_t(0);
    }
    std::string& front = q_.front();
    size_t k = std::min(n, front.size() - off_);
    std::memcpy(buf, front.data() + off_, k);
    off_ += k;
    if (off_ == front.size()) {
      queued_ -= front.size();
      q_.pop_front();
      off_ = 0;
      cv_.notify_all();
    }
    return k;
  }

 private:
  bool push(std::string chunk) {
    std::unique_lock<std::mutex> l(m_);
    cv_.wait(l, [&] { return queued_ < (8u << 20) || cancel_; });
    if (cancel_) return false;
    queued_ += chunk.size();
    q_.push_back(std::move(chunk));
    cv_.notify_all();
    return true;
  }

  void finish(std::optional<Error> e, std::string hex) {
    std::lock_guard<std::mutex> l(m_);
    err_ = std::move(e);
    hex_ = std::move(hex);
    done_ = true;
    cv_.notify_all();
  }

  void produce() {
    util::Hasher h(d_.digest.algorithm);
    uint64_t got = 0;
    // The cache entry is written to an anonymous O_TMPFILE and linked into place only once
    // its digest checks out: a killed audit leaves neither a torn entry nor a temp file.
    int tmpFd = -1;
    std::string tmpPath;
    if (!cachePath_.empty() && util::makeDirs(tmpDir_)) {
      tmpFd = ::open(tmpDir_.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0644);
      if (tmpFd < 0) {  // a filesystem without O_TMPFILE: a named temp file
        tmpPath = tmpDir_ + "/blob-XXXXXX";
        tmpFd = ::mkstemp(tmpPath.data());
      }
    }
    bool tooMuch = false;
    std::string batch;
    std::function<bool(const char*, size_t)> sink = [&](const char* p, size_t n) {
      if (d_.size >= 0 && got + n > static_cast<uint64_t>(d_.size)) {
        tooMuch = true;
        return false;
      }
      {
        util::StageTimer t(util::Stage::CompressedDigest);
        h.update(p, n);
      }
      got += n;
      if (tmpFd >= 0 && !util::writeAll(tmpFd, std::string_view(p, n))) {
        ::close(tmpFd);
        if (!tmpPath.empty()) ::unlink(tmpPath.c_str());
        tmpFd = -1;
      }
      if (impl_->o.progress) progress(got);
      // curl delivers 16 KiB at a time: hand the reader 256 KiB chunks, with fewer wake-ups.
      batch.append(p, n);
      if (batch.size() < (256u << 10)) return true;
      bool ok = push(std::move(batch));
      batch.clear();
      return ok;
    };
    std::string err;
    uint64_t from = 0;
    std::string what = "blob " + d_.digest.str();
    // request() retries dropped connections; each retry asks for the rest with Range.
    HttpResponse r = impl_->request("/v2/" + impl_->ref.repository + "/blobs/" + d_.digest.str(), {}, from, sink, 65536,
                                    err, [&] { from = got; });
    if (!batch.empty()) push(std::move(batch));
    std::optional<Error> failure;
    if (tooMuch)
      failure = Error::Corrupt(impl_->where(what) + ": more bytes than the descriptor's " + std::to_string(d_.size));
    else if (!err.empty())
      failure = Error::Io(impl_->where(what) + ": " + err);
    else if (d_.size >= 0 && got != static_cast<uint64_t>(d_.size))
      failure = Error::Corrupt(impl_->where(what) + ": " + std::to_string(got) + " bytes, the descriptor says " +
                               std::to_string(d_.size));
    std::string hex = h.hex();
    if (!failure && hex != d_.digest.encoded)
      failure = Error::Corrupt(impl_->where(what) + ": the bytes hash to " + d_.digest.algorithm + ":" + hex +
                               " (HTTP " + std::to_string(r.status) + ")");
    if (tmpFd >= 0) {
      // Not synced: an entry is re-hashed before every use, so a torn one is only a miss.
      bool keep = !failure;
      if (tmpPath.empty()) {
        std::string proc = "/proc/self/fd/" + std::to_string(tmpFd);
        if (keep)
          ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, cachePath_.c_str(), AT_SYMLINK_FOLLOW);  // EEXIST: already cached
        ::close(tmpFd);
      } else {
        ::close(tmpFd);
        if (!keep || ::rename(tmpPath.c_str(), cachePath_.c_str()) != 0) ::unlink(tmpPath.c_str());
      }
    }
    if (impl_->o.progress) std::fprintf(stderr, "\r\033[K");
    finish(failure, hex);
  }

  void progress(uint64_t got) {
    auto now = std::chrono::steady_clock::now();
    if (now - lastProgress_ < std::chrono::milliseconds(200)) return;
    lastProgress_ = now;
    std::fprintf(stderr, "\r\033[Kfetching %s: %s / %s", d_.digest.encoded.substr(0, 12).c_str(),
                 util::humanBytes(got).c_str(),
                 util::humanBytes(static_cast<uint64_t>(std::max<int64_t>(d_.size, 0))).c_str());
  }

  Client::Impl* impl_;
  oci::Descriptor d_;
  std::string cachePath_, tmpDir_;
  std::thread t_;
  mutable std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::string> q_;
  std::string hex_;  // of every byte received, once done_
  size_t off_ = 0, queued_ = 0;
  bool done_ = false, cancel_ = false;
  std::optional<Error> err_;
  std::chrono::steady_clock::time_point lastProgress_{};
};

// Whether a cached blob still hashes to its digest (a torn or tampered entry does not).
bool cacheEntryValid(const std::string& path, const oci::Digest& d) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  util::Hasher h(d.algorithm);
  char buf[1 << 16];
  ssize_t k;
  while ((k = ::read(fd, buf, sizeof buf)) > 0) h.update(buf, static_cast<size_t>(k));
  ::close(fd);
  return k == 0 && h.hex() == d.encoded;
}

class FileStream : public oci::ByteStream {
 public:
  FileStream(int fd, std::string what) : fd_(fd), what_(std::move(what)) {}
  ~FileStream() override { ::close(fd_); }
  Result<size_t> read(void* buf, size_t n) override {
    ssize_t k;
    do k = ::read(fd_, buf, n);
    while (k < 0 && errno == EINTR);
    if (k < 0) return Error::Io("reading " + what_ + ": " + std::strerror(errno));
    return static_cast<size_t>(k);
  }

 private:
  int fd_;
  std::string what_;
};

}  // namespace

Result<std::unique_ptr<oci::ByteStream>> Client::blob(const oci::Descriptor& d) {
  if (!d.digest.verifiable())
    return Error::Unsupported("blob " + d.digest.str() + " uses an algorithm Kernodeck cannot verify");
  KDK_TRY_ASSIGN(std::string cacheRoot, openCacheDir(impl_->o));
  std::string cachePath, tmpDir;
  if (!cacheRoot.empty()) {
    std::string dir = cacheRoot + "/blobs/" + d.digest.algorithm;
    cachePath = dir + "/" + d.digest.encoded;
    tmpDir = cacheRoot + "/tmp";
    util::makeDirs(dir);
    // Verified on read: an entry that no longer hashes to its digest is dropped and fetched again.
    if (cacheEntryValid(cachePath, d.digest)) {
      int fd = ::open(cachePath.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) return std::unique_ptr<oci::ByteStream>(new FileStream(fd, "cached blob " + d.digest.str()));
    }
    ::unlink(cachePath.c_str());
  }
  return std::unique_ptr<oci::ByteStream>(new BlobStream(impl_.get(), d, cachePath, tmpDir));
}

}  // namespace kernodeck::registry
