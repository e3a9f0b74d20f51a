#include "kernodeck/util/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sys/statfs.h>
#include <sys/syscall.h>

#include <climits>
#include <utility>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kernodeck/util/strings.h"

namespace kernodeck::util {

bool writeAll(int fd, std::string_view content) {
  size_t off = 0;
  while (off < content.size()) {
    ssize_t n = ::write(fd, content.data() + off, content.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<size_t>(n);
  }
  return true;
}

Status writeBeneath(const std::string& root, const std::string& rel, std::string_view content, unsigned mode,
                    Replace replace) {
  int dir = ::open(root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return Error::Io("cannot open " + root + ": " + std::strerror(errno));
  auto parts = split(rel, '/');
  std::string name;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& c = parts[i];
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      ::close(dir);
      return Error::Unsafe("refusing '..' in " + rel);
    }
    if (i + 1 == parts.size()) {
      name = c;
      break;
    }
    ::mkdirat(dir, c.c_str(), 0755);
    int next = ::openat(dir, c.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    ::close(dir);
    if (next < 0)
      return Error::Io("cannot open " + root + "/" + c + " without following links: " + std::strerror(errno));
    dir = next;
  }
  if (name.empty()) {
    ::close(dir);
    return Error::Invalid("no file name in " + rel);
  }
  std::string tmp = "." + name + ".tmp." + std::to_string(::getpid());
  int fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
  if (fd < 0) {
    int e = errno;
    ::close(dir);
    return Error::Io("cannot create " + root + "/" + rel + ": " + std::strerror(e));
  }
  bool ok = writeAll(fd, content);
  ok = ::close(fd) == 0 && ok;
  if (ok && replace == Replace::UnlinkFirst) ::unlinkat(dir, name.c_str(), 0);  // absent or a directory: rename says
  if (!ok || ::renameat(dir, tmp.c_str(), dir, name.c_str()) != 0) {
    int e = errno;
    ::unlinkat(dir, tmp.c_str(), 0);
    ::close(dir);
    return Error::Io("cannot write " + root + "/" + rel + ": " + std::strerror(e));
  }
  ::close(dir);
  return {};
}

Status writeFileAtomic(const std::string& path, std::string_view content, bool sync) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return Error::Io("cannot write " + path + ": " + std::strerror(errno));
  bool ok = writeAll(fd, content);
  int e = errno;
  if (ok && ((sync && ::fsync(fd) != 0) || ::close(fd) != 0))
    ok = false, e = errno;
  else if (!ok)
    ::close(fd);
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    if (ok) e = errno;
    ::unlink(tmp.c_str());
    return Error::Io("cannot write " + path + ": " + std::strerror(e));
  }
  return {};
}

namespace {

using Fd = UniqueFd;

// A directory others can write: group or world write permission (sticky or not).
bool othersCanWrite(const struct stat& dir) { return (dir.st_mode & (S_IWGRP | S_IWOTH)) != 0; }

bool onProcfs(int fd) {
  struct statfs fs {};
  return ::fstatfs(fd, &fs) == 0 && fs.f_type == PROC_SUPER_MAGIC;
}

// Why the link at NAME in directory DIR (stat `dst`), owned by `linkUid`, must not be followed;
// empty when it may be. The kernel's protected_symlinks rule, stricter and whatever the sysctl:
// a link is followed only when the caller or root owns it, and in a directory others can write
// only when the caller owns it.
std::string linkRefusal(const struct stat& dst, uid_t linkUid) {
  const uid_t me = ::geteuid();
  if (linkUid != me && linkUid != 0) return "a link owned by uid " + std::to_string(linkUid) + ", not by this user";
  if (linkUid != me && othersCanWrite(dst)) return "a link in a directory other users can write";
  return "";
}

}  // namespace

Result<ResolvedOutput> resolveOutputPath(const std::string& path) {
  if (path.empty()) return Error::Invalid("empty output path");
  std::vector<std::string> todo;  // the components still to walk, last first
  auto push = [&](const std::string& p) {
    auto parts = split(p, '/');
    for (auto it = parts.rbegin(); it != parts.rend(); ++it)
      if (!it->empty() && *it != ".") todo.push_back(*it);
  };
  Fd cur(::open(path.starts_with("/") ? "/" : ".", O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (cur.fd < 0) return Error::Io("cannot open the directory of " + path + ": " + std::strerror(errno));
  push(path);
  if (todo.empty()) return Error::Invalid(path + " names a directory, not a file");
  int links = 0;
  while (!todo.empty()) {
    std::string c = todo.back();
    todo.pop_back();
    const bool last = todo.empty();
    struct stat st {};
    if (::fstatat(cur.fd, c.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT && last) return ResolvedOutput{std::move(cur), c, false};
      return Error::Io("cannot write " + path + ": " + c + ": " + std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
      Fd link(::openat(cur.fd, c.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
      struct stat lst {
      }, dst{};
      if (link.fd < 0 || ::fstat(link.fd, &lst) != 0 || ::fstat(cur.fd, &dst) != 0)
        return Error::Io("cannot write " + path + ": " + c + ": " + std::strerror(errno));
      if (!S_ISLNK(lst.st_mode)) {  // replaced since: walk it as what it is now
        todo.push_back(c);
        continue;
      }
      if (++links > 40) return Error::Unsafe("cannot write " + path + ": too many levels of links");
      if (auto why = linkRefusal(dst, lst.st_uid); !why.empty())
        return Error::Unsafe("refusing to write " + path + ": " + c + " is " + why);
      if (onProcfs(cur.fd)) {
        // /proc/self, /proc/self/fd/N (what /dev/stdout names): the kernel's own links, which
        // may name no path (a pipe); the kernel follows them.
        if (last) return ResolvedOutput{std::move(cur), c, true};
        Fd next(::openat(cur.fd, c.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (next.fd < 0) return Error::Io("cannot write " + path + ": " + c + ": " + std::strerror(errno));
        cur = std::move(next);
        continue;
      }
      char buf[PATH_MAX];
      ssize_t n = ::readlinkat(link.fd, "", buf, sizeof buf);
      if (n < 0 || static_cast<size_t>(n) >= sizeof buf)
        return Error::Io("cannot read the link " + c + " in " + path + ": " + std::strerror(errno));
      std::string target(buf, static_cast<size_t>(n));
      if (target.starts_with("/")) {
        Fd root(::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC));
        if (root.fd < 0) return Error::Io(std::string("cannot open /: ") + std::strerror(errno));
        cur = std::move(root);
      }
      size_t before = todo.size();
      push(target);
      if (todo.size() == before && last) return Error::Invalid(path + " names a directory, not a file");
      continue;
    }
    if (last) {
      if (S_ISDIR(st.st_mode)) return Error::Invalid("cannot write " + path + ": it is a directory");
      return ResolvedOutput{std::move(cur), c, false};
    }
    Fd next(::openat(cur.fd, c.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (next.fd < 0) return Error::Io("cannot write " + path + ": " + c + ": " + std::strerror(errno));
    cur = std::move(next);
  }
  return Error::Invalid(path + " names a directory, not a file");
}

Status checkOutputFolder(const std::string& path) {
  // Walked as a file beneath it would be: every component up to the first absent one.
  auto r = resolveOutputPath((path.empty() ? std::string(".") : path) + "/.kernodeck-folder-check");
  if (!r.ok() && r.error().kind == ErrorKind::Unsafe) return r.error();
  return {};
}

namespace {

// Writes `content` into the regular file NAME of directory DIR in place (truncated, same inode),
// or a new one. An existing file is opened first (no O_CREAT, no O_TRUNC) and judged by what was
// opened (fstat), never by a name checked before: refused when another user owns it and it has
// more than one link (a hard link into that user's file elsewhere), or sits in a sticky
// directory others can write and is owned neither by this user nor by the directory's owner (the
// kernel's protected_regular rule, whatever the sysctl). Only then is it truncated and written.
Status writeInPlace(int dir, const char* name, const std::string& path, std::string_view content) {
  struct stat dst {};
  if (::fstat(dir, &dst) != 0) return Error::Io("cannot write " + path + ": " + std::strerror(errno));
  const uid_t me = ::geteuid();
  for (int attempt = 0; attempt < 8; ++attempt) {
    bool created = false;
    int fd = ::openat(dir, name, O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT) {
      fd = ::openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0644);
      if (fd < 0 && errno == EEXIST) continue;  // planted between the two opens: judge it
      created = fd >= 0;
    }
    if (fd < 0) {
      if (errno == ELOOP) return Error::Unsafe("refusing to write " + path + ": it became a link");
      return Error::Io("cannot write " + path + ": " + std::strerror(errno));
    }
    struct stat st {};
    std::string refusal;
    if (::fstat(fd, &st) != 0) {
      refusal = std::strerror(errno);
    } else if (!created && !S_ISREG(st.st_mode)) {
      refusal = "it is no longer a regular file";
    } else if (!created && st.st_uid != me && st.st_nlink > 1) {
      refusal = "a file of uid " + std::to_string(st.st_uid) + " with " + std::to_string(st.st_nlink) +
                " links (a hard link to another user's file)";
    } else if (!created && st.st_uid != me && st.st_uid != dst.st_uid && (dst.st_mode & S_ISVTX) &&
               othersCanWrite(dst)) {
      refusal = "a file of uid " + std::to_string(st.st_uid) + " in a sticky directory other users can write";
    }
    if (!refusal.empty()) {
      ::close(fd);
      return Error::Unsafe("refusing to write " + path + ": " + refusal);
    }
    bool ok = (created || ::ftruncate(fd, 0) == 0) && writeAll(fd, content);
    int e = errno;
    if (::close(fd) != 0 && ok) ok = false, e = errno;
    if (!ok) return Error::Io("cannot write " + path + ": " + std::strerror(e));
    return {};
  }
  return Error::Unsafe("refusing to write " + path + ": it keeps being replaced");
}

}  // namespace

Result<int> openInRoot(int rootFd, const std::string& rel, int flags) {
  std::string path;
  for (const auto& c : split(rel, '/')) {
    if (c.empty() || c == ".") continue;
    if (c == "..") return Error::Unsafe("refusing '..' in " + rel);
    path += (path.empty() ? "" : "/") + c;
  }
  if (path.empty()) path = ".";
#ifdef SYS_openat2
  struct open_how how {};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  long fd = ::syscall(SYS_openat2, rootFd, path.c_str(), &how, sizeof how);
  if (fd >= 0) return static_cast<int>(fd);
  if (errno != ENOSYS && errno != EPERM)  // EPERM: a seccomp filter that refuses the call
    return Error::Io("cannot open " + rel + " in the container's root: " + std::strerror(errno));
#endif
  int cur = ::fcntl(rootFd, F_DUPFD_CLOEXEC, 0);
  if (cur < 0) return Error::Io(std::string("cannot open the container's root: ") + std::strerror(errno));
  auto parts = split(path, '/');
  for (size_t i = 0; i < parts.size(); ++i) {
    bool last = i + 1 == parts.size();
    int next = ::openat(cur, parts[i].c_str(),
                        last ? (flags | O_NOFOLLOW | O_CLOEXEC) : (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    int e = errno;
    ::close(cur);
    if (next < 0) {
      if (e == ELOOP || e == ENOTDIR)
        return Error::Unsafe("refusing to open " + rel + ": " + parts[i] + " is a link or not a directory");
      return Error::Io("cannot open " + rel + " in the container's root: " + std::strerror(e));
    }
    cur = next;
  }
  return cur;
}

Status writeOutputFile(const std::string& path, std::string_view content, OutputWrite how) {
  KDK_TRY_ASSIGN(ResolvedOutput at, resolveOutputPath(path));
  const int dir = at.dir.fd;
  const char* name = at.name.c_str();
  auto into = [&](int flags) -> Status {
    int fd = ::openat(dir, name, flags | O_WRONLY | O_NOCTTY | O_CLOEXEC, 0644);
    if (fd < 0) return Error::Io("cannot write " + path + ": " + std::strerror(errno));
    bool ok = writeAll(fd, content);
    int e = errno;
    if (::close(fd) != 0 && ok) ok = false, e = errno;
    if (!ok) return Error::Io("cannot write " + path + ": " + std::strerror(e));
    return {};
  };
  if (at.kernelLink) return into(0);
  struct stat st {
  }, dst{};
  const bool exists = ::fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
  if (exists && S_ISLNK(st.st_mode))  // planted since it was walked
    return Error::Unsafe("refusing to write " + path + ": it became a link");
  if (exists && !S_ISREG(st.st_mode)) {
    // A FIFO, a device, a socket: written into, as a shell's `>` would, unless another user
    // planted it where others can write (the kernel's protected_fifos rule, whatever the sysctl).
    if (::fstat(dir, &dst) != 0) return Error::Io("cannot write " + path + ": " + std::strerror(errno));
    if (st.st_uid != ::geteuid() && st.st_uid != 0 && othersCanWrite(dst))
      return Error::Unsafe("refusing to write " + path + ": a file of uid " + std::to_string(st.st_uid) +
                           " in a directory other users can write");
    return into(O_NOFOLLOW);
  }
  if (how == OutputWrite::InPlace) return writeInPlace(dir, name, path, content);
  std::string tmp = "." + at.name + ".tmp." + std::to_string(::getpid());
  int fd = ::openat(dir, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return Error::Io("cannot write " + path + ": " + std::strerror(errno));
  bool ok = writeAll(fd, content);
  int e = errno;
  if (ok && (::fsync(fd) != 0 || ::close(fd) != 0))
    ok = false, e = errno;
  else if (!ok)
    ::close(fd);
  if (!ok || ::renameat(dir, tmp.c_str(), dir, name) != 0) {
    if (ok) e = errno;
    ::unlinkat(dir, tmp.c_str(), 0);
    return Error::Io("cannot write " + path + ": " + std::strerror(e));
  }
  return {};
}

namespace {

void walk(const std::string& root, const std::string& rel, std::vector<std::string>& out, int depth) {
  if (depth > 32 || out.size() >= 200000) return;
  DIR* d = ::opendir((root + (rel.empty() ? "" : "/" + rel)).c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") names.push_back(n);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  for (const auto& n : names) {
    std::string r = rel.empty() ? n : rel + "/" + n;
    struct stat st {};
    if (::lstat((root + "/" + r).c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode))
      walk(root, r, out, depth + 1);
    else if (out.size() < 200000)
      out.push_back(r);
  }
}

}  // namespace

std::vector<std::string> listFilesRecursive(const std::string& root) {
  std::vector<std::string> out;
  walk(root, "", out, 0);
  return out;
}

Result<std::string> readFileLimited(const std::string& path, size_t limit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Error::Io("cannot open " + path + ": " + std::strerror(errno));
  std::string out;
  char buf[65536];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int e = errno;
      ::close(fd);
      return Error::Io("cannot read " + path + ": " + std::strerror(e));
    }
    if (n == 0) break;
    if (out.size() + static_cast<size_t>(n) > limit) {
      ::close(fd);
      return Error::Invalid(path + " is larger than " + humanBytes(limit));
    }
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

bool makeDirs(const std::string& path) {
  // A relative path stays relative: each prefix is made as written ("a", "a/b", "../c").
  std::string cur = path.starts_with("/") ? "/" : "";
  for (const auto& part : split(path, '/')) {
    if (part.empty()) continue;
    cur += (cur.empty() || cur == "/" ? "" : "/") + part;
    if (::mkdir(cur.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

}  // namespace kernodeck::util
