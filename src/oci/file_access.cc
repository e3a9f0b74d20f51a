// FileAccess over a directory (OCI layout on disk) and over a tar archive
// (oci-archive, docker-archive). Member names are normalised ("./x" is "x");
// symlinked and hardlinked members (docker save reuses layers that way) are
// followed inside the archive only.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <vector>

#include "kernodeck/oci/archive_lib.h"
#include "kernodeck/oci/source.h"
#include "kernodeck/util/path.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

Result<size_t> MemoryStream::read(void* buf, size_t n) {
  size_t k = std::min(n, s_.size() - pos_);
  std::memcpy(buf, s_.data() + pos_, k);
  pos_ += k;
  return k;
}

Result<std::string> readAll(ByteStream& s, uint64_t limit, const std::string& what) {
  std::string out;
  char buf[65536];
  while (true) {
    KDK_TRY_ASSIGN(size_t n, s.read(buf, sizeof buf));
    if (n == 0) return out;
    if (out.size() + n > limit) return Error::Invalid(what + " is larger than " + util::humanBytes(limit));
    out.append(buf, n);
  }
}

Result<std::string> FileAccess::read(const std::string& name, uint64_t limit) {
  KDK_TRY_ASSIGN(auto s, open(name));
  return readAll(*s, limit, where(name));
}

namespace {

// A relative member name, relative to `base`, under util/path.h's Confined rule; empty
// when it is absolute, escapes or holds a NUL byte.
std::string normalizeMember(std::string_view name, std::string_view base = "") {
  if (!name.empty() && name.front() == '/') return {};
  std::string joined = base.empty() ? std::string(name) : std::string(base) + "/" + std::string(name);
  return util::cleanConfined(joined).value_or("");
}

class FdStream : public ByteStream {
 public:
  FdStream(int fd, std::string what) : fd_(fd), what_(std::move(what)) {}
  ~FdStream() override { ::close(fd_); }
  Result<size_t> read(void* buf, size_t n) override {
    while (true) {
      ssize_t r = ::read(fd_, buf, n);
      if (r >= 0) return static_cast<size_t>(r);
      if (errno == EINTR) continue;
      return Error::Io("reading " + what_ + ": " + std::strerror(errno));
    }
  }

 private:
  int fd_;
  std::string what_;
};

class DirAccess : public FileAccess {
 public:
  explicit DirAccess(std::string dir) : dir_(std::move(dir)) {}
  bool exists(const std::string& name) override {
    struct stat st {};
    return ::stat(path(name).c_str(), &st) == 0;
  }
  Result<std::unique_ptr<ByteStream>> open(const std::string& name) override {
    std::string norm = normalizeMember(name);
    if (norm.empty()) return Error::Unsafe("refusing layout path '" + util::printable(name) + "'");
    int fd = ::open(path(norm).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      if (errno == ENOENT) return Error::NotFound(where(norm) + " does not exist");
      return Error::Io("cannot open " + where(norm) + ": " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(fd);
      return Error::Invalid(where(norm) + " is not a regular file");
    }
    return std::unique_ptr<ByteStream>(new FdStream(fd, where(norm)));
  }
  int64_t size(const std::string& name) override {
    struct stat st {};
    std::string norm = normalizeMember(name);
    if (norm.empty() || ::stat(path(norm).c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return -1;
    return st.st_size;
  }
  std::string where(const std::string& name) const override { return dir_ + "/" + name; }

 private:
  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::string dir_;
};

struct Member {
  int64_t size = 0;
  std::string linkTo;  // normalised target for symlinks and hardlinks
};

class ArchiveStream : public ByteStream {
 public:
  ArchiveStream(struct archive* a, std::string what) : a_(a), what_(std::move(what)) {}
  ~ArchiveStream() override { archive_read_free(a_); }
  Result<size_t> read(void* buf, size_t n) override {
    la_ssize_t r = archive_read_data(a_, buf, n);
    if (r < 0) return Error::Io("reading " + what_ + ": " + util::printable(archive_error_string(a_)));
    return static_cast<size_t>(r);
  }

 private:
  struct archive* a_;
  std::string what_;
};

struct archive* openArchive(const std::string& file, std::string& err) {
  struct archive* a = archive_read_new();
  archive_read_support_filter_all(a);
  archive_read_support_format_tar(a);
  archive_read_support_format_gnutar(a);
  if (archive_read_open_filename(a, file.c_str(), 1 << 16) != ARCHIVE_OK) {
    err = util::printable(archive_error_string(a) ? archive_error_string(a) : "cannot open");
    archive_read_free(a);
    return nullptr;
  }
  return a;
}

class TarAccess : public FileAccess {
 public:
  TarAccess(std::string file, std::map<std::string, Member> members)
      : file_(std::move(file)), members_(std::move(members)) {}

  bool exists(const std::string& name) override { return resolve(name).ok(); }

  Result<std::unique_ptr<ByteStream>> open(const std::string& name) override {
    KDK_TRY_ASSIGN(std::string target, resolve(name));
    std::string err;
    struct archive* a = openArchive(file_, err);
    if (!a) return Error::Io("cannot open archive " + file_ + ": " + err);
    struct archive_entry* e = nullptr;
    int rc;
    while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
      const char* p = archive_entry_pathname(e);
      if (p && normalizeMember(p) == target) return std::unique_ptr<ByteStream>(new ArchiveStream(a, where(target)));
      archive_read_data_skip(a);
    }
    std::string msg = util::printable(archive_error_string(a) ? archive_error_string(a) : "not found");
    archive_read_free(a);
    return Error::Io("cannot read " + where(target) + ": " + msg);
  }

  int64_t size(const std::string& name) override {
    auto target = resolve(name);
    return target.ok() ? members_.at(*target).size : -1;
  }
  std::string where(const std::string& name) const override { return file_ + ":" + name; }

 private:
  // Follows member links (at most 8 hops); the error names what stopped it: a missing member
  // (or link target), a link out of the archive, a cycle (its members in order) or too many hops.
  Result<std::string> resolve(const std::string& name) const {
    std::string cur = normalizeMember(name);
    std::vector<std::string> chain;
    auto named = [&] {
      std::string s;
      for (const auto& c : chain) s += (s.empty() ? "" : " -> ") + util::printable(c, 120);
      return s;
    };
    for (int hop = 0; hop <= 8; ++hop) {
      if (cur == "\x01") return Error::Unsafe(where(name) + " links out of the archive (" + named() + ")");
      auto it = cur.empty() ? members_.end() : members_.find(cur);
      if (it == members_.end()) {
        if (chain.empty()) return Error::NotFound(where(name) + " does not exist");
        return Error::NotFound(where(name) + " links to " + util::printable(cur, 120) + ", which does not exist (" +
                               named() + ")");
      }
      if (std::find(chain.begin(), chain.end(), cur) != chain.end()) {
        chain.push_back(cur);
        return Error::Invalid(where(name) + " is a symlink cycle: " + named());
      }
      chain.push_back(cur);
      if (it->second.linkTo.empty()) return cur;
      cur = it->second.linkTo;
    }
    return Error::Invalid(where(name) + " follows more than 8 links: " + named());
  }

  std::string file_;
  std::map<std::string, Member> members_;
};

}  // namespace

std::unique_ptr<FileAccess> openDirAccess(const std::string& dir) { return std::make_unique<DirAccess>(dir); }

Result<std::unique_ptr<FileAccess>> openTarAccess(const std::string& file) {
  struct stat st {};
  if (::stat(file.c_str(), &st) != 0) return Error::NotFound("archive " + file + " does not exist");
  if (!S_ISREG(st.st_mode)) return Error::Invalid("archive " + file + " is not a regular file");
  std::string err;
  struct archive* a = openArchive(file, err);
  if (!a) return Error::Io("cannot open archive " + file + ": " + err);
  std::map<std::string, Member> members;
  struct archive_entry* e = nullptr;
  int rc;
  size_t count = 0;
  while ((rc = archive_read_next_header(a, &e)) == ARCHIVE_OK || rc == ARCHIVE_WARN) {
    if (++count > 1000000) break;
    const char* p = archive_entry_pathname(e);
    std::string name = p ? normalizeMember(p) : "";
    if (!name.empty()) {
      Member m;
      m.size = archive_entry_size(e);
      if (const char* hl = archive_entry_hardlink(e)) {
        m.linkTo = normalizeMember(hl);
        if (m.linkTo.empty()) m.linkTo = "\x01";  // escaping link: never resolves
      } else if (archive_entry_filetype(e) == AE_IFLNK) {
        const char* t = archive_entry_symlink(e);
        std::string dir = name.find('/') == std::string::npos ? "" : name.substr(0, name.rfind('/'));
        m.linkTo = t ? normalizeMember(t, dir) : "";
        if (m.linkTo.empty()) m.linkTo = "\x01";
      } else if (archive_entry_filetype(e) != AE_IFREG) {
        archive_read_data_skip(a);
        continue;
      }
      members[name] = m;
    }
    archive_read_data_skip(a);
  }
  if (rc != ARCHIVE_EOF) {
    std::string msg = util::printable(archive_error_string(a) ? archive_error_string(a) : "read error");
    archive_read_free(a);
    return Error::Corrupt("archive " + file + " is damaged: " + msg);
  }
  archive_read_free(a);
  return std::unique_ptr<FileAccess>(new TarAccess(file, std::move(members)));
}

}  // namespace kernodeck::oci
