// See replay_seal.h.
#include "replay_seal.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>

#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

namespace {

// The variables a replay's commands keep from the caller's environment: where programs and
// libraries are found and how text is printed. Everything else (PIP_*, proxies, tokens, cloud
// credentials, CI secrets) is dropped; docs/record.md lists these.
const std::set<std::string>& inheritedVariables() {
  static const std::set<std::string> names = {"PATH",
                                              "LANG",
                                              "LC_ALL",
                                              "LC_CTYPE",
                                              "TZ",
                                              "TERM",
                                              "LD_LIBRARY_PATH",
                                              "NVIDIA_VISIBLE_DEVICES",
                                              "NVIDIA_DRIVER_CAPABILITIES"};
  return names;
}

}  // namespace

void sealEnvironment(util::ProcessSpec& spec, const std::string& work) {
  for (char** e = environ; e && *e; ++e) {
    std::string name(*e, std::strcspn(*e, "="));
    if (!inheritedVariables().count(name)) spec.unsetEnv.push_back(name);
  }
  std::map<std::string, std::string> sealed = {{"HOME", work + "/home"},
                                               {"TMPDIR", work + "/tmp"},
                                               {"XDG_CACHE_HOME", work + "/home/.cache"},
                                               {"XDG_CONFIG_HOME", work + "/home/.config"},
                                               {"PIP_CONFIG_FILE", "/dev/null"},
                                               {"PIP_NO_INDEX", "1"},
                                               {"PYTHONNOUSERSITE", "1"}};
  for (const auto& [k, v] : spec.env) sealed[k] = v;
  spec.env = std::move(sealed);
}

Result<std::optional<std::string>> readBeneath(const std::string& work, const std::string& rel) {
  std::string path = work;
  for (const auto& part : util::split(rel, '/')) {
    path += "/" + part;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return Error::NotFound("which does not exist in the replay folder");
    if (S_ISLNK(st.st_mode)) return Error::Unsafe("which passes through a link");
  }
  KDK_TRY_ASSIGN(std::string text, util::readFileLimited(path, 1 << 20));
  return std::optional<std::string>(std::move(text));
}

}  // namespace kernodeck::record
