// See self_path.h.
#include "kernodeck/util/self_path.h"

#include <limits.h>
#include <unistd.h>

namespace kernodeck::util {

std::string executablePath() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

std::vector<std::string> pluginPaths(const std::string& fileName) {
  std::string self = executablePath();
  if (self.empty()) return {};
  std::string dir = self.substr(0, self.rfind('/'));
  return {dir + "/" + fileName, dir + "/../lib/kernodeck/" + fileName};
}

}  // namespace kernodeck::util
