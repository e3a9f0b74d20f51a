// Helpers for integration tests that drive the real binaries and tools.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kdktest {

struct RunResult {
  int code = -1;
  std::string out;  // stdout
  std::string err;  // stderr
};

// Runs a shell command line; returns the exit code and both streams.
RunResult run(const std::string& cmd);
// A fresh temporary directory removed at exit.
std::string tempDir(const std::string& tag);
bool haveTool(const std::string& name);
void writeFile(const std::string& path, const std::string& content);
std::string readFile(const std::string& path);
// A YAML file as a third party (python3-yaml's safe_load) reads it, as JSON; discarded when unreadable.
nlohmann::json readYamlWithPyYaml(const std::string& path);
// Runs `kernodeck audit ARGS --json` and parses the report (null on non-JSON output).
nlohmann::json auditJson(const std::string& args, int* code = nullptr, std::string* err = nullptr);
// Builds an OCI layout at DIR from a kdk-mkimage spec; returns the top digest.
std::string mkimage(const nlohmann::json& spec, const std::string& dir);
// The shell commands that build, with umoci, an image of busybox-static and an os-release
// saying ID=umocitest at LAYOUT:base, unpacking and repacking through BUNDLE.
std::string umociBusyboxCommands(const std::string& layout, const std::string& bundle);
// "umoci unpack", with --rootless when not root (the files are then the user's, the image's
// owners kept in an xattr), so the tests that build images with umoci run as any user.
std::string umociUnpack();
// Count of findings with `code` in a report.
int countFindings(const nlohmann::json& report, const std::string& code);
std::string stepStatus(const nlohmann::json& report, const std::string& step);
// A step's error text ("" when it has none or there is no such step).
std::string stepError(const nlohmann::json& report, const std::string& step);
// Whether a path exists, its last link followed (exists) or not (lexists).
bool exists(const std::string& path);
bool lexists(const std::string& path);
// The kernodeck binary started with an argv and no shell (payloads arrive intact), in `cwd`,
// with `env` added to the environment; a two-minute limit.
RunResult kdk(const std::vector<std::string>& args, const std::string& cwd,
              std::map<std::string, std::string> env = {});

// A local HTML file rendered offline by headless Chromium (needs the chromium package): a
// 1024x768 screenshot's PNG bytes and the DOM after load. workDir holds the browser profile.
struct Rendered {
  std::string png;
  std::string dom;
  std::string err;
};
Rendered renderInChromium(const std::string& htmlFile, const std::string& workDir);

}  // namespace kdktest
