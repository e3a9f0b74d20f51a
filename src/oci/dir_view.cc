// FsView over an unpacked root filesystem (dir:PATH). Every lookup opens the
// path one component at a time from a descriptor on the root, with O_NOFOLLOW,
// so no symlink in the tree is ever followed by the kernel: links are resolved
// by FsView::resolve, inside the root.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::oci {
namespace {

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(Fd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  Fd& operator=(Fd&& o) noexcept {
    std::swap(fd_, o.fd_);
    return *this;
  }
  Fd(const Fd&) = delete;
  int get() const { return fd_; }
  int release() {
    int f = fd_;
    fd_ = -1;
    return f;
  }

 private:
  int fd_;
};

EntryKind kindOf(mode_t m) {
  if (S_ISDIR(m)) return EntryKind::Dir;
  if (S_ISLNK(m)) return EntryKind::Symlink;
  if (S_ISCHR(m)) return EntryKind::Char;
  if (S_ISBLK(m)) return EntryKind::Block;
  if (S_ISFIFO(m)) return EntryKind::Fifo;
  return EntryKind::File;
}

class DirView : public FsView {
 public:
  explicit DirView(Fd root, std::string rootPath) : root_(std::move(root)), rootPath_(std::move(rootPath)) {}

  std::optional<Node> stat(const std::string& path) const override {
    std::string base;
    Fd parent = openParent(path, base);
    if (parent.get() < 0) return std::nullopt;
    struct stat st {};
    int rc =
        base.empty() ? ::fstat(parent.get(), &st) : ::fstatat(parent.get(), base.c_str(), &st, AT_SYMLINK_NOFOLLOW);
    if (rc != 0) return std::nullopt;
    Node n;
    n.kind = kindOf(st.st_mode);
    n.mode = st.st_mode & 07777;
    n.size = st.st_size;
    if (n.kind == EntryKind::Symlink) {
      char buf[4096];
      ssize_t k = ::readlinkat(parent.get(), base.c_str(), buf, sizeof buf);
      if (k > 0) n.linkTarget.assign(buf, static_cast<size_t>(k));
    }
    return n;
  }

  std::vector<std::string> list(const std::string& dir) const override {
    std::vector<std::string> out;
    Fd d = openDir(dir);
    if (d.get() < 0) return out;
    DIR* dp = ::fdopendir(d.release());
    if (!dp) return out;
    while (struct dirent* de = ::readdir(dp)) {
      if (std::strcmp(de->d_name, ".") == 0 || std::strcmp(de->d_name, "..") == 0) continue;
      out.emplace_back(de->d_name);
    }
    ::closedir(dp);
    return out;
  }

  Result<std::string> hashResolved(const std::string& path, const std::string& algorithm) const override {
    util::Hasher h(algorithm);
    if (!h.valid()) return Error::Unsupported("unknown hash algorithm '" + algorithm + "'");
    KDK_TRY_STATUS(readChunks(path, UINT64_MAX, [&](const char* p, size_t n) { h.update(p, n); }));
    return h.hex();
  }

  Result<std::string> readResolved(const std::string& path, uint64_t limit) const override {
    std::string out;
    KDK_TRY_STATUS(readChunks(path, limit, [&](const char* p, size_t n) { out.append(p, n); }));
    return out;
  }

 private:
  // Feeds the regular file at a resolved path to `sink`, opened without following a link.
  Status readChunks(const std::string& path, uint64_t limit,
                    const std::function<void(const char*, size_t)>& sink) const {
    std::string base;
    Fd parent = openParent(path, base);
    std::string where = rootPath_ + "/" + util::printable(path);
    if (parent.get() < 0 || base.empty())
      return Error::NotFound("'" + util::printable(path) + "' is not in " + rootPath_);
    Fd f(::openat(parent.get(), base.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
    if (f.get() < 0) return Error::Io("cannot open " + where + ": " + std::strerror(errno));
    struct stat st {};
    if (::fstat(f.get(), &st) != 0 || !S_ISREG(st.st_mode)) return Error::Invalid(where + " is not a regular file");
    if (static_cast<uint64_t>(st.st_size) > limit) return Error::Invalid(where + " is too large");
    char buf[1 << 16];
    uint64_t total = 0;
    while (true) {
      ssize_t k = ::read(f.get(), buf, sizeof buf);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) return Error::Io("reading " + where + ": " + std::strerror(errno));
      if (k == 0) return {};
      total += static_cast<uint64_t>(k);
      if (total > limit) return Error::Invalid(where + " is too large");
      sink(buf, static_cast<size_t>(k));
    }
  }

  // Opens the directory `dir` (normalised, no links) component by component.
  Fd openDir(const std::string& dir) const {
    // A description of its own: a dup() would share the root's offset, and a second list("")
    // would start where the first one's readdir() stopped (at the end: nothing).
    Fd cur(::openat(root_.get(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    for (const auto& c : util::split(dir, '/')) {
      if (c.empty() || c == ".") continue;
      if (c == "..") return Fd();
      Fd next(::openat(cur.get(), c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (next.get() < 0) return Fd();
      cur = std::move(next);
    }
    return cur;
  }

  Fd openParent(const std::string& path, std::string& base) const {
    size_t s = path.rfind('/');
    base = s == std::string::npos ? path : path.substr(s + 1);
    if (base == "..") return Fd();
    return openDir(s == std::string::npos ? "" : path.substr(0, s));
  }

  Fd root_;
  std::string rootPath_;
};

}  // namespace

Result<std::unique_ptr<FsView>> openDirView(const std::string& root) {
  Fd fd(::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (fd.get() < 0) return Error::NotFound("cannot open root filesystem " + root + ": " + std::strerror(errno));
  return std::unique_ptr<FsView>(new DirView(std::move(fd), root));
}

}  // namespace kernodeck::oci
