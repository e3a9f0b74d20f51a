// See private_dir.h. Checked with lstat() on each open, as OpenSSH checks ~/.ssh: the test is
// cheap, and a directory made group-writable or handed to another user after it was created is
// then refused the next time rather than trusted for good.
#include "kernodeck/util/private_dir.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kernodeck/util/safe_file.h"

namespace kernodeck::util {

namespace {

std::string octal(unsigned mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", mode);
  return buf;
}

}  // namespace

Status openPrivateDir(const std::string& given, const std::string& what) {
  // "dir/" would make lstat() follow a link named dir: the trailing slashes go first.
  std::string path = given;
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  if (path.empty()) return Error::Invalid(what + ": an empty path");
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) {
    if (errno != ENOENT) return Error::Io(what + " " + path + ": " + std::strerror(errno));
    size_t slash = path.find_last_of('/');
    if (slash != std::string::npos && slash > 0) makeDirs(path.substr(0, slash));
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST)
      return Error::Io("cannot create " + what + " " + path + ": " + std::strerror(errno));
    if (::lstat(path.c_str(), &st) != 0) return Error::Io(what + " " + path + ": " + std::strerror(errno));
    // The umask may have taken bits; one we made ourselves is set to exactly 0700.
    if (S_ISDIR(st.st_mode) && st.st_uid == ::geteuid() && (st.st_mode & 0777) != 0700 &&
        ::chmod(path.c_str(), 0700) == 0)
      st.st_mode = (st.st_mode & ~07777u) | 0700;
  }
  std::string fix = "; use a directory of your own with mode 0700 (--cache-dir DIR) or --no-cache";
  if (S_ISLNK(st.st_mode)) return Error::Unsafe(what + " " + path + " is a symbolic link, not a directory" + fix);
  if (!S_ISDIR(st.st_mode)) return Error::Unsafe(what + " " + path + " is not a directory" + fix);
  if (st.st_uid != ::geteuid())
    return Error::Unsafe(what + " " + path + " is owned by uid " + std::to_string(st.st_uid) +
                         ", not by this user (uid " + std::to_string(::geteuid()) +
                         "), so its entries cannot be trusted" + fix);
  if ((st.st_mode & 0777) != 0700)
    return Error::Unsafe(what + " " + path + " has mode " + octal(st.st_mode & 0777) +
                         ", not 0700, so others may write its entries; chmod 700 it" + fix);
  return {};
}

}  // namespace kernodeck::util
