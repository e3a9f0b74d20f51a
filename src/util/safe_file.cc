#include "kernodeck/util/safe_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

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

Status writeOutputFile(const std::string& path, std::string_view content) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode))
    return writeFileAtomic(path, content);
  int fd = ::open(path.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return Error::Io("cannot write " + path + ": " + std::strerror(errno));
  bool ok = writeAll(fd, content);
  int e = errno;
  if (::close(fd) != 0 && ok) ok = false, e = errno;
  if (!ok) return Error::Io("cannot write " + path + ": " + std::strerror(e));
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
