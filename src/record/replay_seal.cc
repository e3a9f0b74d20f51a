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

using report::Severity;

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

namespace {

// PEP 503 normalisation: runs of -, _ and . become one -, lower case.
std::string normalise(const std::string& name) {
  std::string out;
  for (char c : name) {
    bool sep = c == '-' || c == '_' || c == '.';
    if (sep) {
      if (out.empty() || out.back() != '-') out.push_back('-');
    } else {
      out.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
    }
  }
  return out;
}

}  // namespace

Status compareInventory(const std::string& python, const std::vector<std::string>& isolate, const std::string& work,
                        const Lock& lock, report::Report& r) {
  util::ProcessSpec spec;
  spec.argv = isolate;
  for (const char* a : {"-m", "pip", "list", "--format=json", "--disable-pip-version-check", "--isolated"})
    spec.argv.push_back(a);
  spec.argv.insert(spec.argv.begin() + static_cast<long>(isolate.size()), python);
  spec.cwd = work;
  spec.timeoutMs = 120000;
  sealEnvironment(spec, work);
  auto pr = util::runProcess(spec);
  if (!pr.ok()) return Error::Io("pip list: " + pr.error().message);
  if (!pr->ok()) return Error::Invalid("pip list " + pr->describe() + ": " + pr->lastLine());
  auto listed = nlohmann::json::parse(pr->out, nullptr, false);
  if (!listed.is_array()) return Error::Corrupt("pip list --format=json did not print a JSON array");
  std::map<std::string, std::string> installed;
  for (const auto& e : listed)
    if (e.is_object() && e.contains("name") && e.contains("version") && e.at("name").is_string() &&
        e.at("version").is_string())
      installed[normalise(e.at("name").get<std::string>())] = e.at("version").get<std::string>();
  nlohmann::json rows = nlohmann::json::array();
  int differs = 0;
  for (const auto& p : lock.packages) {
    auto it = installed.find(normalise(p.name));
    std::string now = it == installed.end() ? "" : it->second;
    rows.push_back({{"name", p.name}, {"locked", p.version}, {"installed", now}});
    if (now == p.version) continue;
    ++differs;
    r.add("replay.inventory.differs", Severity::Error,
          p.name + " " + p.version + " is locked, but the rebuilt environment has " +
              (now.empty() ? std::string("none") : now) + ": the environment is not the recorded one",
          {{"package", p.name}, {"layer", "environment"}});
  }
  r.section("inventory") = {{"installed", installed.size()}, {"locked", rows}};
  if (!differs)
    r.add("replay.inventory.matches", Severity::Info,
          "the rebuilt environment has each of the " + std::to_string(lock.packages.size()) +
              " locked packages at its locked version",
          {{"layer", "environment"}});
  return {};
}

}  // namespace kernodeck::record
