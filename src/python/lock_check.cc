// See lock_check.h.
#include "kernodeck/python/lock_check.h"

#include <algorithm>
#include <set>

#include "kernodeck/python/specifier.h"
#include "kernodeck/python/version.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

bool has(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

// Whether a requires-python specifier admits the target's Python: Unknown when either cannot be read.
Tri pythonAdmitted(const std::string& spec, const MarkerEnv& m) {
  if (spec.empty()) return Tri::True;
  auto s = SpecifierSet::parse(spec);
  auto it = m.find("python_full_version");
  if (it == m.end()) it = m.find("python_version");
  if (!s.ok() || it == m.end()) return Tri::Unknown;
  auto v = Version::parse(it->second);
  if (!v.ok()) return Tri::Unknown;
  return s->contains(*v, true) ? Tri::True : Tri::False;
}

Tri markerHolds(const std::string& text, const MarkerEnv& m) {
  if (text.empty()) return Tri::True;
  auto marker = Marker::parse(text);
  return marker.ok() ? marker->evaluate(m) : Tri::Unknown;
}

std::string describe(const MarkerEnv& m) {
  auto get = [&](const char* k) { return m.count(k) ? m.at(k) : std::string("?"); };
  std::string py = m.count("python_full_version") ? get("python_full_version") : get("python_version");
  return "Python " + py + ", " + get("sys_platform") + " " + get("platform_machine");
}

std::string join(const std::string& dir, const std::string& rel) { return dir.empty() ? rel : dir + "/" + rel; }

// Files in the package's own folders that the wheel does not hold, into `out`. A folder the
// wheel gives no __init__.py may be a namespace package other distributions share: only its own
// files are compared there, and the folder is named as not searched.
void addedFiles(const oci::FsView& view, const Distribution& dist, const WheelFile& wheel,
                const std::set<std::string>& tops, const std::set<std::string>& expected, WheelComparison& out) {
  std::vector<std::string> searched = {join(dist.location, wheel.distInfo)};
  for (const auto& t : tops) {
    if (t == wheel.distInfo) continue;
    if (expected.count(join(dist.location, t + "/__init__.py")))
      searched.push_back(join(dist.location, t));
    else
      out.notChecked.push_back("/" + join(dist.location, t) + "/: a namespace folder, not searched for added files");
  }
  const std::set<std::string> installerFiles = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"};
  size_t budget = 1000000;
  std::vector<std::pair<std::string, int>> stack;
  for (auto it = searched.rbegin(); it != searched.rend(); ++it) stack.push_back({*it, 0});
  while (!stack.empty() && budget) {
    auto [dir, depth] = stack.back();
    stack.pop_back();
    bool distInfo = dir == searched[0];
    auto entries = view.listKinds(dir);
    for (auto it = entries.rbegin(); it != entries.rend(); ++it) {
      if (!budget--) break;
      const auto& [name, kind] = *it;
      std::string path = dir + "/" + name;
      if (kind == oci::EntryKind::Dir) {
        if (depth < 32) stack.push_back({path, depth + 1});
        continue;
      }
      if (expected.count(path)) continue;
      if (distInfo && depth == 0 && installerFiles.count(name)) continue;
      if (name.ends_with(".pyc") && dir.ends_with("/__pycache__")) continue;
      auto info = view.info(path);
      out.issues.push_back({WheelFileIssue::Added, path, "", "", info ? info->layer : -1});
    }
  }
}

}  // namespace

std::vector<std::string> unknownLockGroups(const Lock& lock, const std::vector<std::string>& groups) {
  std::vector<std::string> out;
  for (const auto& g : groups) {
    std::string n = canonicalizeName(g);
    if (!has(lock.extras, n) && !has(lock.dependencyGroups, n)) out.push_back(g);
  }
  return out;
}

LockSelection selectLocked(const Lock& lock, const LockTarget& target) {
  LockSelection sel;
  if (pythonAdmitted(lock.requiresPython, target.markers) == Tri::False) {
    sel.applies = false;
    sel.why = "its requires-python " + lock.requiresPython + " excludes " + describe(target.markers);
    return sel;
  }
  if (!lock.environments.empty()) {
    bool possible = false;
    for (const auto& env : lock.environments)
      if (markerHolds(env, target.markers) != Tri::False) possible = true;
    if (!possible) {
      sel.applies = false;
      sel.why = "none of its environments (" + util::join(lock.environments, "; ") + ") holds for " +
                describe(target.markers);
      return sel;
    }
  }
  // The chosen names: extras the lock lists, dependency groups it lists; default-groups unless
  // --lock-group chose.
  std::vector<std::string> extras, groups;
  for (const auto& g : target.groups) {
    std::string n = canonicalizeName(g);
    if (has(lock.extras, n)) extras.push_back(n);
    if (has(lock.dependencyGroups, n)) groups.push_back(n);
  }
  if (target.groups.empty()) groups = lock.defaultGroups;
  MarkerEnv m = target.markers;
  m["extras"] = util::join(extras, ",");
  m["dependency_groups"] = util::join(groups, ",");
  for (const auto& p : lock.packages) {
    Tri marker = markerHolds(p.marker, m);
    Tri python = pythonAdmitted(p.requiresPython, target.markers);
    if (marker == Tri::False || python == Tri::False) continue;
    sel.packages.push_back(&p);
    if (marker == Tri::Unknown || python == Tri::Unknown) sel.undecided.push_back(&p);
  }
  return sel;
}

WheelComparison compareWithWheel(const oci::FsView& view, const PythonEnv& env, const Distribution& dist,
                                 const WheelFile& wheel) {
  WheelComparison out;
  std::string stem = wheel.distInfo.substr(0, wheel.distInfo.size() - std::string(".dist-info").size());
  std::string dataDir = stem + ".data";
  // Where pip puts each member, and what it should hash to ("" when not compared).
  struct Placed {
    std::string path, sha256, resolved;
    bool known = false;
  };
  std::vector<Placed> placed;
  std::set<std::string> expected;  // every image path the wheel installs
  std::set<std::string> tops;      // the package's own folders below its package directory
  for (const auto& m : wheel.members) {
    std::string rel = m.path, image;
    size_t slash = rel.find('/');
    std::string top = slash == std::string::npos ? "" : rel.substr(0, slash);
    if (top == dataDir) {
      std::string rest = rel.substr(slash + 1);
      size_t s2 = rest.find('/');
      std::string scheme = s2 == std::string::npos ? "" : rest.substr(0, s2), file = rest.substr(s2 + 1);
      if (scheme == "purelib" || scheme == "platlib") {
        image = join(dist.location, file);
        size_t s3 = file.find('/');
        if (s3 != std::string::npos) tops.insert(file.substr(0, s3));
      } else if (scheme == "scripts") {
        image = join(env.prefix, "bin/" + file);
        if (m.pythonShebang) {
          expected.insert(image);
          out.notChecked.push_back("/" + image + ": a script whose #!python line pip rewrites");
          continue;
        }
      } else if (scheme == "data") {
        image = join(env.prefix, file);
      } else {
        out.notChecked.push_back(m.path + ": the wheel's " + scheme + " are not compared");
        continue;
      }
    } else {
      if (rel == wheel.distInfo + "/RECORD") continue;  // pip writes its own
      image = join(dist.location, rel);
      if (!top.empty()) tops.insert(top);
    }
    expected.insert(image);
    placed.push_back({image, m.sha256, "", false});
  }
  // The hashes the walk took, and one more read for those it did not (FsView::prepareHashes).
  std::vector<std::string> prepare;
  for (auto& p : placed) {
    auto f = view.facts(p.path, "sha256");
    if (!f) continue;
    p.resolved = p.path;
    if (f->kind == oci::EntryKind::Symlink) {
      auto r = view.resolve(p.path);
      if (!r.ok()) continue;
      p.resolved = *r;
      f = view.facts(p.resolved, "sha256");
      if (!f) continue;
    }
    p.known = f->hashKnown;
    if (!p.known && (f->kind == oci::EntryKind::File || f->kind == oci::EntryKind::Hardlink))
      prepare.push_back(p.resolved);
  }
  view.prepareHashes(prepare, "sha256");
  for (const auto& p : placed) {
    auto f = p.resolved.empty() ? std::nullopt : view.facts(p.resolved, "sha256");
    if (!f) {
      out.issues.push_back({WheelFileIssue::Missing, p.path, p.sha256, "", -1});
      continue;
    }
    std::string actual;
    if (f->kind == oci::EntryKind::File || f->kind == oci::EntryKind::Hardlink) {
      if (f->hashKnown && !f->hash.empty()) {
        actual = f->hash;
      } else {
        auto h = view.hashResolved(p.resolved, "sha256");
        actual = h.ok() ? *h : "";
      }
    }
    ++out.checked;
    if (actual != p.sha256)
      out.issues.push_back({WheelFileIssue::Changed, p.path, p.sha256,
                            actual.empty() ? std::string("not a readable regular file") : actual, f->layer});
  }
  addedFiles(view, dist, wheel, tops, expected, out);
  return out;
}

}  // namespace kernodeck::python
