// Test helper: a fake host tree from tests/fixtures/hosts, with its device
// nodes created (mknod needs root; callers skip when not root).
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace kdktest {

inline bool isRoot() { return ::geteuid() == 0; }

// Returns the materialised root, or "" on failure. Removed at exit.
inline std::string hostFixture(const std::string& name) {
  static std::vector<std::string> made;
  static bool registered = false;
  if (!registered) {
    registered = true;
    std::atexit([] {
      for (const auto& d : made) std::system(("rm -rf '" + d + "'").c_str());
    });
  }
  char tmpl[] = "/tmp/kdk-host-XXXXXX";
  if (!mkdtemp(tmpl)) return {};
  std::string dest = std::string(tmpl) + "/" + name;
  made.push_back(tmpl);
  std::string cmd = std::string(SOURCE_DIR) + "/tests/fixtures/hosts/materialize " + name + " " + dest;
  return std::system(cmd.c_str()) == 0 ? dest : std::string();
}

}  // namespace kdktest
