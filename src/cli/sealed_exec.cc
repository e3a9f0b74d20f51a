// sealedExec and its probe. The namespace is entered here, in a process of our own, rather
// than through unshare(1) and ip(8): nothing from the dossier is ever passed to a program
// other than the one it names, and the loopback interface is brought up with one ioctl.
#include "sealed_exec.h"

#include <fcntl.h>
#include <net/if.h>
#include <pwd.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kernodeck/util/process.h"

namespace kernodeck::cli {

namespace {

bool writeProc(const char* path, const std::string& text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  return ok;
}

}  // namespace

int sealedExec(const std::vector<std::string>& argv) {
  if (argv.empty()) {
    std::fprintf(stderr, "kernodeck dossier _sealed: a program is required\n");
    return 2;
  }
  uid_t uid = ::geteuid();
  gid_t gid = ::getegid();
  if (::unshare(CLONE_NEWNET) != 0) {
    int first = errno;
    if (::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0) {
      std::fprintf(stderr, "kernodeck dossier _sealed: no network namespace: %s; %s\n", std::strerror(first),
                   std::strerror(errno));
      return 125;
    }
    // The same user inside as outside: the code runs as the caller, not as a mapped root.
    if (!writeProc("/proc/self/setgroups", "deny") ||
        !writeProc("/proc/self/uid_map", std::to_string(uid) + " " + std::to_string(uid) + " 1\n") ||
        !writeProc("/proc/self/gid_map", std::to_string(gid) + " " + std::to_string(gid) + " 1\n")) {
      std::fprintf(stderr, "kernodeck dossier _sealed: cannot map the user namespace: %s\n", std::strerror(errno));
      return 125;
    }
  }
  int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  struct ifreq ifr {};
  std::strncpy(ifr.ifr_name, "lo", IFNAMSIZ - 1);
  bool up = fd >= 0 && ::ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
  ifr.ifr_flags = static_cast<short>(ifr.ifr_flags | IFF_UP | IFF_RUNNING);
  if (!up || ::ioctl(fd, SIOCSIFFLAGS, &ifr) != 0) {
    std::fprintf(stderr, "kernodeck dossier _sealed: cannot bring loopback up: %s\n", std::strerror(errno));
    return 125;
  }
  ::close(fd);
  Error e = util::replaceProcess(argv);
  std::fprintf(stderr, "kernodeck dossier _sealed: %s\n", e.message.c_str());
  return 127;
}

Sealing probeSealing(const std::string& self) {
  Sealing s;
  uid_t uid = ::geteuid();
  const struct passwd* pw = ::getpwuid(uid);
  s.user = std::string(pw ? pw->pw_name : "?") + " (uid " + std::to_string(uid) + ")";
  util::ProcessSpec spec;
  spec.argv = {self, "dossier", "_sealed", "true"};
  spec.timeoutMs = 10000;
  auto pr = util::runProcess(spec);
  if (pr.ok() && pr->ok()) {
    s.prefix = {self, "dossier", "_sealed"};
    s.network = "without network: pip and the entry point ran in a new network namespace with only loopback";
  } else {
    s.reason = "the kernel refused a new network namespace (" + (pr.ok() ? pr->lastLine() : pr.error().message) + ")";
    s.network = "WITH this host's network: " + s.reason;
  }
  return s;
}

}  // namespace kernodeck::cli
