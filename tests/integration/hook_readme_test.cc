// hooks/README.md's CDI recipe, run as written (issue 29 §1: "hooks/README's CDI recipe creates
// every directory it names"): each line of the shell block that injects the hook, with its
// absolute paths moved under a fresh root, `nvidia-ctk cdi generate --output=FILE` standing in as
// the writing of an NVIDIA spec to FILE (its directory is not made for it), the build's binary
// named by --binary (the recipe follows its install) and the podman line left out, must succeed from an empty root, and
// leave the spec with our hook.
#include <gtest/gtest.h>

#include <regex>
#include <sstream>

#include "support.h"

namespace integration_hook_readme_test {

using nlohmann::json;
using namespace kdktest;

namespace {

// The ```sh block of hooks/README.md that holds `cdi inject`.
std::vector<std::string> recipe() {
  std::string text = readFile(std::string(SOURCE_DIR) + "/hooks/README.md");
  size_t inject = text.find("kernodeck-hook cdi inject");
  size_t begin = text.rfind("```sh\n", inject), end = text.find("```", inject);
  std::vector<std::string> lines;
  if (inject == std::string::npos || begin == std::string::npos || end == std::string::npos) return lines;
  std::istringstream in(text.substr(begin + 6, end - begin - 6));
  for (std::string line; std::getline(in, line);) {
    line = line.substr(0, line.find(" #"));
    if (line.find_first_not_of(' ') != std::string::npos) lines.push_back(line);
  }
  return lines;
}

}  // namespace

TEST(HookReadme, TheCdiRecipeCreatesEveryDirectoryItNames) {
  std::vector<std::string> lines = recipe();
  ASSERT_GE(lines.size(), 3u) << "the CDI recipe was not found in hooks/README.md";
  std::string root = tempDir("readme-recipe");
  const std::string spec =
      "cdiVersion: 0.5.0\nkind: nvidia.com/gpu\ndevices:\n- name: \"0\"\n  containerEdits:\n"
      "    deviceNodes:\n    - path: /dev/nvidia0\n";
  writeFile(root + ".spec", spec);
  std::string written;
  for (std::string line : lines) {
    if (line.starts_with("podman ")) continue;
    line = std::regex_replace(line, std::regex(R"(([ =])/(etc|var|run)/)"), "$1" + root + "/$2/");
    std::smatch m;
    if (std::regex_search(line, m, std::regex(R"(^nvidia-ctk cdi generate --output=(\S+))"))) {
      written = m[1];
      line = "cp " + root + ".spec " + written;  // fails when the recipe did not make the directory
    }
    // The binary is installed before the recipe (hooks/install); here it is the build's.
    if (line.starts_with("kernodeck-hook "))
      line = std::string(HOOK_BIN) + line.substr(14) + " --binary " + std::string(HOOK_BIN);
    RunResult r = run(line);
    EXPECT_EQ(r.code, 0) << line << "\n" << r.err;
  }
  ASSERT_FALSE(written.empty()) << "the recipe writes no spec";
  std::string after = readFile(written);
  EXPECT_NE(after.find("kernodeck-hook"), std::string::npos) << after;
}

}  // namespace integration_hook_readme_test
