#include "commands.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "kernodeck/report/report.h"
#include "kernodeck/version.h"

namespace kernodeck::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"audit", "audit an image or root filesystem without running it", runAudit},
      {"host", "print this node's GPU facts (driver, GPUs, device nodes, MIG, ROCm)", runHost},
      {"version", "print the version of kernodeck and its components", runVersion},
  };
  return table;
}

int emit(const std::string& text, const std::string& outFile) {
  if (outFile.empty() || outFile == "-") {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return 0;
  }
  std::string tmp = outFile + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    std::fprintf(stderr, "kernodeck: cannot write %s: %s\n", outFile.c_str(), std::strerror(errno));
    return report::kExitIncomplete;
  }
  size_t off = 0;
  while (off < text.size()) {
    ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      ::unlink(tmp.c_str());
      std::fprintf(stderr, "kernodeck: cannot write %s: %s\n", outFile.c_str(), std::strerror(errno));
      return report::kExitIncomplete;
    }
    off += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0 || ::rename(tmp.c_str(), outFile.c_str()) != 0) {
    ::unlink(tmp.c_str());
    std::fprintf(stderr, "kernodeck: cannot write %s: %s\n", outFile.c_str(), std::strerror(errno));
    return report::kExitIncomplete;
  }
  return 0;
}

}  // namespace kernodeck::cli
