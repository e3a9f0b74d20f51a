// See lock_audit.h. The image's files are not read again here: the layer walk hashed every file
// of pip's territory (site-packages, environments' bin directories) with SHA-256 in its single
// pass (packagesHashPolicy), and python::compareWithWheel takes those hashes from the view; a
// file the walk guessed wrong about costs one more read of its layer (FsView::prepareHashes), as
// the RECORD check does. The wheels are read once each, on this machine, whatever number of
// environments or locks name them.
#include "kernodeck/audit/lock_audit.h"

#include <dirent.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "kernodeck/python/contract.h"
#include "kernodeck/python/lock_check.h"
#include "kernodeck/python/marker.h"
#include "kernodeck/python/pins.h"
#include "kernodeck/python/version.h"
#include "kernodeck/python/wheel_file.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::audit {

using nlohmann::json;
using report::Severity;

namespace {

constexpr size_t kMaxLockBytes = 16u << 20;

std::string lockLayerOf(int layer) { return layer < 0 ? "" : std::to_string(layer); }

// The tags a wheel's file name stands for, its compressed sets expanded ("py2.py3-none-any").
std::vector<std::string> expandTags(const std::string& compressed) {
  auto parts = util::split(compressed, '-');
  std::vector<std::string> out;
  if (parts.size() != 3) return out;
  for (const auto& py : util::split(parts[0], '.'))
    for (const auto& abi : util::split(parts[1], '.'))
      for (const auto& plat : util::split(parts[2], '.')) out.push_back(py + "-" + abi + "-" + plat);
  return out;
}

bool sameVersion(const std::string& a, const std::string& b) {
  auto va = python::Version::parse(a), vb = python::Version::parse(b);
  if (va.ok() && vb.ok()) return *va == *vb;
  return a == b;
}

// The regular files of the --wheels folder (names only), read once.
std::vector<std::string> wheelFiles(const std::string& dir) {
  std::vector<std::string> out;
  std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
  if (!d) return out;
  while (auto* e = ::readdir(d.get())) {
    std::string n = e->d_name;
    if (n.ends_with(".whl")) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class LockAudit {
 public:
  LockAudit(const oci::FsView& v, const std::vector<python::PythonEnv>& envs, const std::string& arch,
            const LockOptions& o, report::Report& r, json& envsJson)
      : v_(v), envs_(envs), arch_(arch), o_(o), r_(r), envsJson_(envsJson) {
    if (!o_.wheelsDir.empty()) dirWheels_ = wheelFiles(o_.wheelsDir);
  }

  void run() {
    for (const auto& l : o_.locks) checkLock(l);
  }

 private:
  // The environment a lock is for: ENV when given, else the only one, else the one holding most
  // of the lock's names (the first of equals). -1 with a finding when none.
  int environmentOf(const LockInput& l) {
    if (!l.environment.empty()) {
      for (size_t i = 0; i < envs_.size(); ++i)
        if ("/" + envs_[i].prefix == l.environment || "/" + envs_[i].interpreter == l.environment)
          return static_cast<int>(i);
      r_.add("python.lock.environment", Severity::Error,
             "--lock " + l.environment + "=" + l.file + ": the image has no Python environment at " + l.environment,
             {{"path", l.file}, {"environment", l.environment}});
      return -1;
    }
    if (envs_.empty()) {
      r_.add("python.lock.environment", Severity::Error,
             "--lock " + l.file + ": the image has no Python environment to check against it", {{"path", l.file}});
      return -1;
    }
    int best = 0;
    size_t bestCount = 0;
    for (size_t i = 0; i < envs_.size(); ++i) {
      size_t n = 0;
      for (const auto& p : l.lock.packages)
        if (envs_[i].find(python::canonicalizeName(p.name))) ++n;
      if (n > bestCount) best = static_cast<int>(i), bestCount = n;
    }
    return best;
  }

  void checkLock(const LockInput& l) {
    int ei = environmentOf(l);
    if (ei < 0) return;
    const python::PythonEnv& e = envs_[ei];
    std::string where = "/" + e.prefix;
    python::LockTarget target;
    target.markers = python::imageMarkerEnv(e.version, arch_);
    if (!e.fullVersionKnown) target.markers.erase("python_full_version"), target.markers.erase("implementation_version");
    target.markers.erase("platform_release"), target.markers.erase("platform_version");
    target.groups = o_.groups;
    python::LockSelection sel = python::selectLocked(l.lock, target);
    json lj = {{"file", l.file}, {"format", l.format}, {"sha256", l.sha256}, {"applies", sel.applies}};
    if (!o_.groups.empty()) lj["groups"] = o_.groups;
    if (!o_.wheelsDir.empty()) lj["wheels"] = o_.wheelsDir;
    json& envJson = envsJson_[ei];
    if (!envJson.contains("locks")) envJson["locks"] = json::array();
    if (!sel.applies) {
      lj["why"] = sel.why;
      envJson["locks"].push_back(lj);
      r_.add("python.lock.platform", Severity::Error,
             l.file + " does not apply to the environment " + where + ": " + sel.why +
                 "; an installer would refuse it, so the environment was not installed from it",
             {{"path", l.file}, {"environment", where}, {"evidence", "lock"}});
      return;
    }
    std::set<std::string> named, selected;
    for (const auto& p : l.lock.packages) named.insert(python::canonicalizeName(p.name));
    json undecided = json::array();
    for (const auto* p : sel.undecided) undecided.push_back(p->name);
    lj["packages"] = sel.packages.size();
    if (!undecided.empty()) lj["undecided"] = undecided;
    for (const auto* p : sel.packages) {
      std::string key = python::canonicalizeName(p->name);
      selected.insert(key);
      const python::Distribution* d = e.find(key);
      std::map<std::string, std::string> ev = {
          {"package", p->name}, {"path", l.file}, {"environment", where}, {"evidence", "lock"}};
      if (!d) {
        r_.add("python.lock.missing", Severity::Error,
               p->name + " " + p->version + " is locked by " + l.file + " but not installed in " + where, ev);
        continue;
      }
      json* pj = packageJson(envJson, *d);
      json src = sourceOf(l, *p);
      if (!sameVersion(d->version, p->version)) {
        ev["installed"] = d->version;
        r_.add("python.lock.version", Severity::Error,
               p->name + " is locked at " + p->version + " by " + l.file + " but " + d->version + " is installed in " +
                   where,
               ev);
        src["version_matches"] = false;
      } else {
        src["version_matches"] = true;
        checkFiles(l, e, *p, *d, src);
      }
      if (pj) (*pj)["lock"] = src;
    }
    std::set<std::string> seen;
    for (const auto& d : e.distributions) {
      if (!seen.insert(d.key).second || selected.count(d.key)) continue;
      bool bootstrap = e.kind == "venv" && (d.key == "pip" || d.key == "setuptools" || d.key == "wheel");
      if (bootstrap && !named.count(d.key)) continue;
      if (o_.extraOwnOnly && !d.location.starts_with(e.prefix + "/")) continue;
      r_.add("python.lock.extra", Severity::Warning,
             d.name + " " + d.version + " is installed in " + where + " but " + l.file +
                 (named.count(d.key) ? " does not select it for this environment" : " does not lock it"),
             {{"package", d.name}, {"path", l.file}, {"environment", where}, {"evidence", "lock"}});
    }
    envJson["locks"].push_back(lj);
  }

  static json* packageJson(json& envJson, const python::Distribution& d) {
    if (!envJson.contains("packages")) return nullptr;
    for (auto& p : envJson["packages"])
      if (p.value("metadata", "") == "/" + d.metadataDir) return &p;
    return nullptr;
  }

  // The lock's source for a package: index, wheels (name, URL, hashes), for the inventory.
  static json sourceOf(const LockInput& l, const python::LockedPackage& p) {
    json wheels = json::array();
    for (const auto& w : p.wheels) {
      json jw = {{"hashes", w.hashes}};
      if (!w.name.empty()) jw["name"] = w.name;
      if (!w.url.empty()) jw["url"] = w.url;
      wheels.push_back(jw);
    }
    json s = {{"file", l.file}, {"version", p.version}, {"wheels", wheels}};
    if (!p.index.empty()) s["index"] = p.index;
    if (!p.marker.empty()) s["marker"] = p.marker;
    if (p.sdistOnly) s["sdist_only"] = true;
    s["files_evidence"] = "image RECORD";
    return s;
  }

  // A verified wheel of the package from --wheels, or null (findings for those that fail).
  const python::WheelFile* verifiedWheel(const LockInput& l, const python::LockedPackage& p,
                                         const python::Distribution& d, std::string& chosen) {
    std::vector<std::pair<std::string, std::vector<std::string>>> candidates;  // file, accepted hashes
    if (p.anyOfHashes) {
      std::vector<std::string> hashes;
      for (const auto& w : p.wheels) hashes.push_back(w.sha256);
      for (const auto& f : dirWheels_) {
        std::string n, v;
        if (python::wheelNameVersion(f, n, v) && python::canonicalizeName(n) == d.key && sameVersion(v, p.version))
          candidates.push_back({f, hashes});
      }
    } else {
      for (const auto& w : p.wheels)
        if (std::find(dirWheels_.begin(), dirWheels_.end(), w.name) != dirWheels_.end())
          candidates.push_back({w.name, {w.sha256}});
    }
    const python::WheelFile* pick = nullptr;
    for (const auto& [file, hashes] : candidates) {
      std::string path = o_.wheelsDir + "/" + file;
      std::string cacheKey = path + "\n" + util::join(hashes, ",");
      auto it = wheels_.find(cacheKey);
      if (it == wheels_.end()) {
        auto w = python::readWheelFile(path, hashes);
        if (!w.ok())
          r_.add("python.lock.wheel", Severity::Error,
                 w.error().message + (w.error().is(ErrorKind::Corrupt) ? " (" + l.file + "): the wheel is not used"
                                                                        : ": the wheel is not used"),
                 {{"package", p.name}, {"path", path}, {"evidence", "lock"}});
        it = wheels_.emplace(cacheKey, w.ok() ? std::optional<python::WheelFile>(std::move(*w)) : std::nullopt).first;
      }
      if (!it->second) continue;
      std::string n, v, tags;
      python::wheelNameVersion(file, n, v, &tags);
      bool installedTags = false;
      for (const auto& t : expandTags(tags))
        if (std::find(d.wheel.tags.begin(), d.wheel.tags.end(), t) != d.wheel.tags.end()) installedTags = true;
      if (!pick || installedTags) pick = &*it->second, chosen = file;
      if (installedTags) break;
    }
    return pick;
  }

  void checkFiles(const LockInput& l, const python::PythonEnv& e, const python::LockedPackage& p,
                  const python::Distribution& d, json& src) {
    if (o_.wheelsDir.empty()) return;
    std::string chosen;
    const python::WheelFile* w = verifiedWheel(l, p, d, chosen);
    if (!w) {
      r_.add("python.lock.unchecked", Severity::Info,
             p.name + " " + p.version + ": no wheel in " + o_.wheelsDir + " matches " + l.file +
                 ", so its files in /" + e.prefix + " are judged by the image's RECORD alone",
             {{"package", p.name}, {"path", l.file}, {"environment", "/" + e.prefix}, {"evidence", "image RECORD"}});
      return;
    }
    python::WheelComparison c = python::compareWithWheel(v_, e, d, *w);
    src["files_evidence"] = "wheel";
    src["wheel"] = chosen;
    src["files_checked"] = c.checked;
    if (!c.notChecked.empty()) src["not_checked"] = c.notChecked;
    if (!w->unrecorded.empty()) src["wheel_unrecorded"] = w->unrecorded;
    for (const auto& i : c.issues) {
      std::string path = "/" + i.path, msg;
      switch (i.kind) {
        case python::WheelFileIssue::Changed:
          msg = path + " of " + d.name + " " + d.version + " is not the file of the locked wheel " + chosen +
                " (sha256 " + i.actual + ", the wheel's " + i.expected + ")";
          break;
        case python::WheelFileIssue::Missing:
          msg = path + " of the locked wheel " + chosen + " is not in the image";
          break;
        case python::WheelFileIssue::Added:
          msg = path + " is in the folders of " + d.name + " " + d.version + " but not in its locked wheel " + chosen;
          break;
      }
      static const char* kinds[] = {"changed", "missing", "added"};
      r_.add("python.lock.file", Severity::Error, msg,
             {{"package", d.name},
              {"path", path},
              {"layer", lockLayerOf(i.layer)},
              {"change", kinds[i.kind]},
              {"wheel", chosen},
              {"evidence", "wheel"}});
    }
  }

  const oci::FsView& v_;
  const std::vector<python::PythonEnv>& envs_;
  const std::string& arch_;
  const LockOptions& o_;
  report::Report& r_;
  json& envsJson_;
  std::vector<std::string> dirWheels_;
  std::map<std::string, std::optional<python::WheelFile>> wheels_;  // path and hashes -> verified wheel
};

}  // namespace

Result<LockInput> readLockFile(const std::string& spec) {
  LockInput in;
  in.file = spec;
  size_t eq = spec.find('=');
  if (eq != std::string::npos && spec.starts_with("/")) {
    in.environment = spec.substr(0, eq), in.file = spec.substr(eq + 1);
    while (in.environment.size() > 1 && in.environment.ends_with("/")) in.environment.pop_back();
  }
  std::string shown = util::printable(in.file, 200);
  auto text = util::readFileLimited(in.file, kMaxLockBytes);
  if (!text.ok()) return text.error().context("lock " + shown);
  in.sha256 = util::sha256Hex(*text);
  if (in.file.ends_with(".toml")) {
    in.format = "pylock";
    auto lock = python::parsePylock(*text);
    if (!lock.ok()) return Error::Corrupt(shown + " is not a PEP 751 lock: " + lock.error().message);
    in.lock = std::move(*lock);
    return in;
  }
  in.format = "requirements";
  std::string first = *text;
  auto read = [&](const std::string& p) -> std::optional<std::string> {
    if (p == in.file) return first;
    auto t = util::readFileLimited(p, kMaxLockBytes);
    return t.ok() ? std::optional<std::string>(*t) : std::nullopt;
  };
  auto lock = python::lockFromRequirements(python::loadRequirements(in.file, read));
  if (!lock.ok()) return Error::Corrupt(shown + " is not a lock (a requirements file pinning each package with ==): " +
                                        lock.error().message);
  in.lock = std::move(*lock);
  return in;
}

Status checkLockGroups(const LockOptions& o) {
  for (const auto& g : o.groups) {
    bool known = false;
    for (const auto& l : o.locks)
      if (python::unknownLockGroups(l.lock, {g}).empty()) known = true;
    if (!known)
      return Error::Invalid("--lock-group " + util::printable(g, 80) +
                            ": no lock given lists it among its extras or dependency-groups");
  }
  return {};
}

void auditLocks(const oci::FsView& view, const std::vector<python::PythonEnv>& envs, const std::string& architecture,
                const LockOptions& o, report::Report& r, json& envsJson) {
  LockAudit(view, envs, architecture, o, r, envsJson).run();
}

}  // namespace kernodeck::audit
