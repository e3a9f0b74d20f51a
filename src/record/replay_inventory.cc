// See replay_inventory.h. The venv is read as `audit --python` reads an environment (the
// python module's discovery over a directory view), never by running pip in it: what the
// dossier's code could have changed in pip does not decide what the replay reports.
#include "replay_inventory.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <set>

#include "kernodeck/audit/lock_audit.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/python/contract.h"
#include "kernodeck/python/environment.h"
#include "kernodeck/python/requirement.h"
#include "kernodeck/record/requirements_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using report::Severity;

namespace {

// The requirements of the recorded requirements lines, read as pip reads them
// (scanRequirements: continuations joined, comments and per-line options such as --hash cut);
// includes are not followed, and no option is refused for what it would install (the replay
// refused those before pip ran). Lines the scan refuses outright declare nothing: a replay
// stops at its environment step before it gets here.
std::vector<std::string> recordedRequirements(const Reference& ref) {
  RequirementsScanOptions scan;
  scan.allowSdist = true;
  scan.read = [](const std::string&) -> Result<std::optional<std::string>> { return std::optional<std::string>(); };
  auto scanned = scanRequirements("requirements.txt", util::join(ref.packages.requirementsLines, "\n"), scan);
  std::vector<std::string> out;
  if (scanned.ok())
    for (const auto& s : *scanned) out.push_back(s.requirement);
  return out;
}

struct Declared {
  std::vector<DeclaredPackage> list;
  std::map<std::string, size_t> byKey;
  std::map<std::string, std::vector<python::Requirement>> parsed;  // by key, parallel to specifiers

  void add(const python::Requirement& req, const std::string& source) {
    auto [it, fresh] = byKey.try_emplace(req.key, list.size());
    if (fresh) list.push_back({req.name, req.key, {}, {}});
    list[it->second].specifiers.push_back(req.text);
    list[it->second].sources.push_back(source);
    parsed[req.key].push_back(req);
  }
};

Declared collect(const Reference& ref, const std::optional<python::Lock>& carried, const python::MarkerEnv& markers) {
  Declared d;
  auto addText = [&](const std::string& text, const std::string& source) {
    auto req = python::Requirement::parse(text);
    if (!req.ok()) return;  // the requirements scan refused what pip could not read
    if (req->marker && req->marker->evaluate(markers, "") == Tri::False) return;
    d.add(*req, source);
  };
  for (const auto& req : recordedRequirements(ref)) addText(req, "requirements");
  // Freeze lines: a package recorded in several environments counts once, as the first has it.
  std::set<std::string> seen;
  for (const auto& env : ref.packages.environments)
    for (const auto& line : env.freeze) {
      auto req = python::Requirement::parse(line);
      if (!req.ok() || !seen.insert(req->key).second) continue;
      d.add(*req, "environment " + env.prefix);
    }
  auto addLock = [&](const python::Lock& lock, const std::string& source) {
    for (const auto& p : lock.packages) addText(p.name + "==" + p.version, source);
  };
  if (ref.packages.lock) addLock(*ref.packages.lock, "the reference's lock " + ref.packages.lockPath);
  if (carried) addLock(*carried, "the dossier's pylock.toml");
  return d;
}

// The keys of the declared packages and everything their Requires-Dist pull in (markers
// that hold or cannot be decided, with the extras each declaration asks for).
std::set<std::string> closure(const python::PythonEnv& env, const Declared& d, const python::MarkerEnv& markers) {
  std::set<std::string> out;
  std::vector<std::pair<std::string, std::vector<std::string>>> todo;
  for (const auto& [key, reqs] : d.parsed) {
    std::vector<std::string> extras;
    for (const auto& r : reqs) extras.insert(extras.end(), r.extras.begin(), r.extras.end());
    todo.push_back({key, extras});
  }
  while (!todo.empty()) {
    auto [key, extras] = todo.back();
    todo.pop_back();
    if (!out.insert(key).second) continue;
    const python::Distribution* dist = env.find(key);
    if (!dist) continue;
    for (const auto& text : dist->requiresDist) {
      auto req = python::Requirement::parse(text);
      if (!req.ok()) continue;
      bool holds = !req->marker || req->marker->evaluate(markers, "") != Tri::False;
      for (const auto& e : extras) holds = holds || req->marker->evaluate(markers, e) != Tri::False;
      if (holds) todo.push_back({req->key, req->extras});
    }
  }
  return out;
}

}  // namespace

std::vector<DeclaredPackage> declaredPackages(const Reference& ref, const std::optional<python::Lock>& carried,
                                              const std::string& pythonVersion) {
  return collect(ref, carried, python::imageMarkerEnv(pythonVersion, oci::hostPlatform().architecture)).list;
}

namespace {

// The environment at `target` in `view` (the tree at `root`), read together with the base
// prefix `base` ("usr" for /usr/bin/python3) so that a venv's system site packages are found;
// an error saying why when there is none.
Result<python::PythonEnv> readEnvironment(const oci::FsView& view, const std::string& root, const std::string& base,
                                          const std::string& target) {
  python::DiscoveryOptions dopts;
  if (!base.empty() && base != target) dopts.targets.push_back(base);
  dopts.targets.push_back(target);
  python::Discovery found = python::findEnvironments(view, dopts);
  for (auto& env : found.envs)
    if (env.prefix == target) return std::move(env);
  return Error::Corrupt(target + " in " + root +
                        " could not be read as a Python environment: " + util::join(found.errors, "; "));
}

// The prefix of an interpreter path: /usr/bin/python3 → usr.
std::string prefixOf(const std::string& interpreter) {
  std::string p = std::filesystem::path(interpreter).parent_path().parent_path().string();
  while (!p.empty() && p.front() == '/') p.erase(0, 1);
  return p;
}

// The rebuilt venv seen as the replay's processes see it with --image: its own paths (`venv`,
// relative to this host's root) from this host's root, everything else (the base interpreter's
// site packages, an absolute link) from the image's.
class ReplayEnvView : public oci::FsView {
 public:
  ReplayEnvView(const oci::FsView& host, const oci::FsView& image, std::string venv)
      : host_(host), image_(image), venv_(std::move(venv)) {}
  std::optional<oci::Node> stat(const std::string& path) const override { return side(path).stat(path); }
  std::vector<std::string> list(const std::string& dir) const override { return side(dir).list(dir); }
  Result<std::string> readResolved(const std::string& path, uint64_t limit) const override {
    return side(path).readResolved(path, limit);
  }
  Result<std::string> hashResolved(const std::string& path, const std::string& algorithm) const override {
    return side(path).hashResolved(path, algorithm);
  }

 private:
  const oci::FsView& side(const std::string& path) const {
    return path == venv_ || path.starts_with(venv_ + "/") ? host_ : image_;
  }
  const oci::FsView& host_;
  const oci::FsView& image_;
  std::string venv_;
};

// The rebuilt venv, with the views it was read through: this host's root, and with --image the
// image's root and the view joining the two (ReplayEnvView).
struct RebuiltEnv {
  std::unique_ptr<oci::FsView> host, image, joined;
  python::PythonEnv env;
  const oci::FsView& view() const { return joined ? *joined : *host; }
};

Result<RebuiltEnv> readRebuilt(const std::string& venv, const std::string& imageRoot, const Reference& ref) {
  RebuiltEnv out;
  std::string rel = venv.substr(1);
  std::string basePrefix = prefixOf(ref.packages.interpreter);
  KDK_TRY_ASSIGN(out.host, oci::openDirView("/"));
  KDK_TRY_ASSIGN(out.env, readEnvironment(*out.host, "/", imageRoot.empty() ? basePrefix : "", rel));
  if (imageRoot.empty()) return out;
  // The venv's own distributions, then the image's interpreter's, in path order.
  KDK_TRY_ASSIGN(out.image, oci::openDirView(imageRoot));
  KDK_TRY_ASSIGN(python::PythonEnv base, readEnvironment(*out.image, imageRoot, "", basePrefix));
  std::vector<python::Distribution> dists;
  for (auto& d : out.env.distributions)
    if (d.location.starts_with(rel + "/")) dists.push_back(std::move(d));
  for (auto& d : base.distributions) dists.push_back(std::move(d));
  out.env.distributions = std::move(dists);
  if (out.env.version.empty()) out.env.version = base.version;
  out.joined = std::make_unique<ReplayEnvView>(*out.host, *out.image, rel);
  return out;
}

// The reference's lock (reference init --lock) against the rebuilt venv, by `audit --lock`'s own
// check: python.lock.missing, .version, .extra (the venv's own distributions: its base
// interpreter's are no lock's) and, against the wheels the replay placed under `wheels` by their
// hashes, .file, with the audit's evidence. Each error's package goes into `differs`; returns the
// lock's section for the report (null without a lock).
nlohmann::json checkRecordedLock(const RebuiltEnv& rebuilt, const Reference& ref, const std::string& wheels,
                                 report::Report& r, std::vector<std::string>& differs) {
  if (!ref.packages.lock) return nullptr;
  audit::LockOptions o;
  o.locks.push_back({.environment = "",
                     .file = ref.packages.lockPath,
                     .format = "pylock",
                     .sha256 = ref.packages.lockSha256,
                     .lock = *ref.packages.lock});
  struct stat st {};
  if (::stat(wheels.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) o.wheelsDir = wheels;
  o.extraOwnOnly = true;
  nlohmann::json envs = nlohmann::json::array({nlohmann::json::object()});
  size_t before = r.findings().size();
  audit::auditLocks(rebuilt.view(), {rebuilt.env}, oci::hostPlatform().architecture, o, r, envs);
  for (size_t i = before; i < r.findings().size(); ++i) {
    const report::Finding& f = r.findings()[i];
    std::string what = f.evidenceOf("package").empty() ? f.evidenceOf("path") : f.evidenceOf("package");
    if (f.severity == Severity::Error) differs.push_back(what + " (" + f.code.substr(std::string("python.").size()) + ")");
  }
  return envs[0].value("locks", nlohmann::json());
}

}  // namespace

Status checkRebuiltEnvironment(const std::string& venv, const std::string& imageRoot, const Reference& ref,
                               const std::optional<python::Lock>& carried, const std::string& wheels,
                               report::Report& r) {
  std::string rel = venv.substr(1);
  KDK_TRY_ASSIGN(RebuiltEnv rebuilt, readRebuilt(venv, imageRoot, ref));
  const python::PythonEnv& env = rebuilt.env;
  std::string version = ref.packages.interpreterVersion.empty() ? env.version : ref.packages.interpreterVersion;
  python::MarkerEnv markers = python::imageMarkerEnv(version, oci::hostPlatform().architecture);
  Declared d = collect(ref, carried, markers);

  std::vector<std::string> differs;
  auto differ = [&](const std::string& package, const std::string& what, const std::string& message) {
    differs.push_back(package + " (" + what + ")");
    r.add("replay.inventory.differs", Severity::Error, message,
          {{"package", package}, {"difference", what}, {"layer", "environment"}});
  };
  for (const auto& p : d.list) {
    const python::Distribution* dist = env.find(p.key);
    if (!dist) {
      differ(p.name, "missing",
             p.name + " is declared (" + util::join(p.specifiers, ", ") +
                 "), but the rebuilt environment has no distribution of it");
      continue;
    }
    const auto& reqs = d.parsed.at(p.key);
    for (size_t i = 0; i < reqs.size(); ++i)
      if (!python::satisfies(*dist, reqs[i])) {
        differ(p.name, "version",
               p.name + " " + dist->version + " is installed, but " + p.sources[i] + " declares " + p.specifiers[i] +
                   ": the environment is not the recorded one");
        break;
      }
  }
  // Distributions installed into the venv itself: each must be declared or required by one that is.
  std::set<std::string> needed = closure(env, d, markers);
  std::set<std::string> own;
  nlohmann::json installed = nlohmann::json::array();
  std::set<std::string> listed;
  for (const auto& dist : env.distributions) {
    if (!listed.insert(dist.key).second) continue;  // shadowed further down the path
    bool inVenv = dist.location.starts_with(rel + "/");
    installed.push_back({{"name", dist.name}, {"version", dist.version}, {"location", "/" + dist.location}});
    if (!inVenv) continue;
    own.insert(dist.key);
    if (!needed.count(dist.key))
      differ(dist.name, "extra",
             dist.name + " " + dist.version +
                 " is installed in the rebuilt venv, but the reference declares neither it nor a package that "
                 "requires it");
  }
  // The dependency contract of what the project uses (Debian's own unrelated packages aside).
  nlohmann::json contract = nlohmann::json::array();
  for (const auto& issue : python::checkContract(env, markers)) {
    std::string key = python::canonicalizeName(issue.package);
    if (issue.kind == python::ContractIssue::Undecidable || (!needed.count(key) && !own.count(key))) continue;
    std::string why = issue.kind == python::ContractIssue::Missing    ? "which is not installed"
                      : issue.kind == python::ContractIssue::Conflict ? "but " + issue.installed + " is installed"
                                                                      : "which is not a valid requirement";
    contract.push_back({{"package", issue.package}, {"requirement", issue.requirement}, {"problem", why}});
    differs.push_back(issue.package + " (requires " + issue.requirement + ")");
    r.add("replay.contract.broken", Severity::Error,
          issue.package + " " + issue.version + " requires " + issue.requirement + ", " + why +
              ": pip check would fail in the rebuilt environment",
          {{"package", issue.package}, {"layer", "environment"}});
  }
  nlohmann::json locks = checkRecordedLock(rebuilt, ref, wheels, r, differs);
  nlohmann::json declared = nlohmann::json::array();
  for (const auto& p : d.list) declared.push_back({{"name", p.name}, {"specifiers", p.specifiers}});
  r.section("environment") = {{"venv", venv},         {"python", version},    {"installed", installed},
                              {"declared", declared}, {"contract", contract}, {"differs", differs.size()}};
  if (!locks.is_null()) r.section("environment")["locks"] = locks;
  if (!differs.empty())
    return Error::Invalid("the rebuilt environment is not the one the reference declares: " +
                          util::join(differs, ", "));
  r.add("replay.inventory.matches", Severity::Info,
        "the rebuilt environment has each of the " + std::to_string(d.list.size()) +
            " declared packages at a declared version, nothing undeclared in the venv, and its dependency contract "
            "holds" +
            (ref.packages.lock ? "; the reference's lock " + ref.packages.lockPath + " finds nothing wrong with it"
                               : std::string()),
        {{"layer", "environment"}});
  return {};
}

}  // namespace kernodeck::record
