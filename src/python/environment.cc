#include "kernodeck/python/environment.h"

#include <algorithm>
#include <cstdint>
#include <deque>
#include <cctype>
#include <set>

#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

std::string baseName(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? p : p.substr(s + 1);
}

std::string dirName(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? "" : p.substr(0, s);
}

std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "/" + b; }

bool isDir(const oci::FsView& v, const std::string& p) {
  auto r = v.resolve(p, true);
  if (!r.ok()) return false;
  auto n = v.info(*r);
  return n && n->kind == oci::EntryKind::Dir;
}

bool exists(const oci::FsView& v, const std::string& p) { return v.info(p).has_value(); }

std::optional<std::string> readText(const oci::FsView& v, const std::string& p, uint64_t limit = 16u << 20) {
  auto t = v.readFile(p, limit);
  if (!t.ok()) return std::nullopt;
  return *t;
}

// "python3.11" -> "3.11"
// (`^python([23]\.[0-9]+)$`, scanned: an image's names may be of any length.)
std::string versionOfLibDir(const std::string& name) {
  if (name.size() < 9 || !name.starts_with("python") || (name[6] != '2' && name[6] != '3') || name[7] != '.')
    return "";
  for (size_t i = 8; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return "";
  return name.substr(6);
}

std::vector<std::string> pythonLibVersions(const oci::FsView& v, const std::string& libDir) {
  std::vector<std::string> out;
  for (const auto& n : v.list(libDir)) {
    std::string ver = versionOfLibDir(n);
    if (!ver.empty() && isDir(v, join(libDir, n))) out.push_back(ver);
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return Version::parse(a)->operator<=>(*Version::parse(b)) < 0;
  });
  return out;
}

Distribution readDistribution(const oci::FsView& v, const std::string& location, const std::string& entry) {
  Distribution d;
  d.location = location;
  d.metadataDir = join(location, entry);
  d.eggInfo = entry.ends_with(".egg-info");
  std::string metaText;
  std::string metaPath;
  if (d.eggInfo) {
    auto n = v.info(d.metadataDir);
    metaPath = n && n->kind != oci::EntryKind::Dir ? d.metadataDir : join(d.metadataDir, "PKG-INFO");
  } else {
    metaPath = join(d.metadataDir, "METADATA");
  }
  if (auto t = readText(v, metaPath)) metaText = *t;
  if (auto n = v.info(metaPath)) d.layer = n->layer;
  CoreMetadata md = parseCoreMetadata(metaText);
  // Fallback to the directory name: "name-version.dist-info".
  std::string stem = entry.substr(0, entry.rfind('.'));
  size_t dash = stem.find('-');
  d.name = !md.name.empty() ? md.name : stem.substr(0, dash);
  d.version = !md.version.empty() ? md.version : (dash == std::string::npos ? "" : stem.substr(dash + 1));
  if (d.eggInfo && d.version.find('-') != std::string::npos) d.version = d.version.substr(0, d.version.find('-'));
  d.key = canonicalizeName(d.name);
  if (auto pv = Version::parse(d.version); pv.ok()) d.parsed = *pv;
  d.requiresDist = md.requiresDist;
  if (d.eggInfo) {
    if (auto t = readText(v, join(d.metadataDir, "requires.txt"))) d.requiresDist = parseRequiresTxt(*t);
    return d;
  }
  if (auto t = readText(v, join(d.metadataDir, "INSTALLER"), 4096)) d.installer = std::string(util::trim(*t));
  d.requested = exists(v, join(d.metadataDir, "REQUESTED"));
  if (auto t = readText(v, join(d.metadataDir, "direct_url.json"), 1 << 20)) {
    auto du = parseDirectUrl(*t);
    if (du.ok())
      d.directUrl = *du;
    else
      d.directUrlError = du.error().message;
  }
  d.hasRecord = readText(v, join(d.metadataDir, "RECORD")).has_value();
  if (auto t = readText(v, join(d.metadataDir, "WHEEL"), 65536)) {
    d.hasWheel = true;
    d.wheel = parseWheel(*t);
  }
  return d;
}

// Where the code of editable installs, egg links and eggs lives (environment.h's `form` and
// `codeLocation`), and the distributions only an .egg-link or an .egg names.
void inventoryLinkedCode(const oci::FsView& v, PythonEnv& env, const std::string& loc);

void inventory(const oci::FsView& v, PythonEnv& env) {
  for (const auto& loc : env.paths) {
    auto resolved = v.resolve(loc, true);
    if (!resolved.ok()) continue;
    std::vector<std::string> entries = v.list(*resolved);
    std::sort(entries.begin(), entries.end());
    std::map<std::string, std::string> seen;
    for (const auto& e : entries) {
      if (!e.ends_with(".dist-info") && !e.ends_with(".egg-info")) continue;
      Distribution d = readDistribution(v, *resolved, e);
      if (d.key.empty()) continue;
      if (seen.count(d.key)) env.duplicates.emplace_back(*resolved, d.name);
      seen[d.key] = e;
      env.distributions.push_back(std::move(d));
    }
    inventoryLinkedCode(v, env, *resolved);
  }
}

// A path written in the image's terms ("/src/app", "file:///src/app") as a view path.
std::string imagePath(std::string p) {
  if (p.rfind("file://", 0) == 0) p = p.substr(7);
  if (p.rfind("localhost/", 0) == 0) p = p.substr(9);
  while (!p.empty() && p.front() == '/') p.erase(0, 1);
  while (!p.empty() && p.back() == '/') p.pop_back();
  return p;
}

// Paths a .pth file adds to sys.path (lines that are not imports or comments).
std::vector<std::string> pthPaths(const std::string& text) {
  std::vector<std::string> out;
  for (const auto& raw : util::split(text, '\n')) {
    std::string line(util::trim(raw));
    if (line.empty() || line[0] == '#' || line.rfind("import ", 0) == 0 || line.rfind("import\t", 0) == 0) continue;
    out.push_back(line);
  }
  return out;
}

void inventoryLinkedCode(const oci::FsView& v, PythonEnv& env, const std::string& loc) {
  std::set<std::string> keys;
  for (const auto& d : env.distributions) keys.insert(d.key);
  std::vector<std::string> entries = v.list(loc);
  std::sort(entries.begin(), entries.end());
  // PEP 660 editables: direct_url.json says editable; a .pth file of the package (setuptools'
  // __editable__.NAME-VER.pth, hatchling's _NAME.pth) names the source directory when it is a path.
  for (auto& d : env.distributions) {
    if (d.location != loc || !d.directUrl || !d.directUrl->editable) continue;
    d.form = "editable";
    d.codeLocation = imagePath(d.directUrl->url);
    std::string under = util::toLower(d.name);
    for (char& c : under)
      if (c == '-' || c == '.') c = '_';
    for (const auto& e : entries) {
      if (!e.ends_with(".pth")) continue;
      std::string lower = util::toLower(e);
      for (char& c : lower)
        if (c == '-' || c == '.') c = '_';
      if (lower.find(under) == std::string::npos) continue;
      auto t = readText(v, join(loc, e), 65536);
      if (!t) continue;
      auto paths = pthPaths(*t);
      if (!paths.empty())
        d.codeLocation = paths.front()[0] == '/' ? imagePath(paths.front()) : join(loc, paths.front());
      // setuptools' finder mode: "import __editable___NAME_finder; ...", whose MAPPING names the
      // directory of each top-level package.
      // Both scanned by hand: the files are the image's, std::regex recursed per character.
      std::string first(util::trim(*t));
      if (auto module = editableFinderImport(first); !module.empty())
        if (auto finder = readText(v, join(loc, module + ".py"), 1 << 20); finder)
          if (auto dir = editableFinderMapping(*finder); !dir.empty()) d.codeLocation = imagePath(dir);
    }
  }
  for (const auto& e : entries) {
    // setup.py develop: NAME.egg-link holds the project directory, whose NAME.egg-info is the metadata.
    if (e.ends_with(".egg-link")) {
      auto t = readText(v, join(loc, e), 65536);
      if (!t) continue;
      auto lines = util::split(*t, '\n');
      std::string project = lines.empty() ? "" : imagePath(std::string(util::trim(lines[0])));
      std::string stem = e.substr(0, e.size() - 9);
      std::string infoEntry;
      for (const auto& n : v.list(project))
        if (n.ends_with(".egg-info") && canonicalizeName(n.substr(0, n.size() - 9)) == canonicalizeName(stem))
          infoEntry = n;
      Distribution d;
      if (!infoEntry.empty()) d = readDistribution(v, project, infoEntry);
      if (d.key.empty()) {
        d.name = stem;
        d.key = canonicalizeName(stem);
      }
      d.location = loc;
      d.form = "egg-link";
      d.codeLocation = project;
      if (!keys.insert(d.key).second) continue;
      env.distributions.push_back(std::move(d));
      continue;
    }
    // Eggs: NAME-VERSION(-pyX.Y)(-PLATFORM).egg, a zip file or a directory with EGG-INFO.
    if (e.ends_with(".egg")) {
      std::string stem = e.substr(0, e.size() - 4);
      auto parts = util::split(stem, '-');
      if (parts.size() < 2) continue;
      Distribution d;
      d.location = loc;
      d.metadataDir = join(loc, e);
      d.form = "egg";
      d.codeLocation = join(loc, e);
      d.eggInfo = true;
      if (auto t = readText(v, join(d.metadataDir, "EGG-INFO/PKG-INFO"))) {
        CoreMetadata md = parseCoreMetadata(*t);
        d.name = md.name;
        d.version = md.version;
        d.requiresDist = md.requiresDist;
        if (auto r = readText(v, join(d.metadataDir, "EGG-INFO/requires.txt"))) d.requiresDist = parseRequiresTxt(*r);
      }
      if (d.name.empty()) d.name = parts[0];
      if (d.version.empty()) d.version = parts[1];
      d.key = canonicalizeName(d.name);
      if (auto pv = Version::parse(d.version); pv.ok()) d.parsed = *pv;
      if (auto n = v.info(d.metadataDir)) d.layer = n->layer;
      if (!keys.insert(d.key).second) continue;
      env.distributions.push_back(std::move(d));
    }
  }
}

// conda's usual install roots and the named environments under each (`conda create -n NAME`).
std::vector<std::string> condaPrefixes(const oci::FsView& v) {
  std::vector<std::string> out;
  for (const char* root : {"opt/conda", "opt/miniconda3", "opt/miniforge3", "root/miniconda3"}) {
    out.push_back(root);
    for (const auto& env : v.list(std::string(root) + "/envs")) out.push_back(std::string(root) + "/envs/" + env);
  }
  return out;
}

// `pip install --target DIR` directories: distributions (*.dist-info) in a directory that is no
// environment's package directory, away from system trees. Their Python is the image's first.
void addTargetDirs(const oci::FsView& v, std::vector<PythonEnv>& envs) {
  std::set<std::string> known;
  for (const auto& e : envs) known.insert(e.paths.begin(), e.paths.end());
  std::set<std::string> dirs;
  for (const auto& meta :
       oci::findFiles(v, [](const std::string& n) { return n == "METADATA"; }, 5,
                      {"proc", "sys", "dev", "usr/share", "usr/include", "usr/lib", "usr/lib64", "var/lib", "var/cache",
                       "boot", "run", "tmp", "usr/local/lib", "opt/conda"},
                      {"site-packages", "dist-packages", "node_modules", "__pycache__", ".git", "envs"})) {
    std::string distInfo = dirName(meta);
    if (!distInfo.ends_with(".dist-info")) continue;
    std::string dir = dirName(distInfo);
    if (!dir.empty() && !known.count(dir)) dirs.insert(dir);
  }
  for (const auto& dir : dirs) {
    PythonEnv e;
    e.kind = "target";
    e.prefix = dir;
    e.paths = {dir};
    for (const auto& base : envs)
      if (base.kind != "target" && !base.version.empty()) {
        e.version = base.version;
        e.fullVersionKnown = base.fullVersionKnown;
        break;
      }
    inventory(v, e);
    if (!e.distributions.empty()) envs.push_back(std::move(e));
  }
}

// Directories the search for environments does not enter: virtual file systems, and trees
// that hold no environment but many directories. Reported as not searched when present.
const std::vector<std::string> kUnsearched = {"proc",
                                              "sys",
                                              "dev",
                                              "run",
                                              "boot",
                                              "tmp",
                                              "usr/share",
                                              "usr/include",
                                              "usr/src",
                                              "usr/lib/x86_64-linux-gnu",
                                              "usr/lib/aarch64-linux-gnu",
                                              "usr/lib/modules",
                                              "lib/modules",
                                              "usr/lib/firmware",
                                              "lib/firmware",
                                              "var/lib/dpkg",
                                              "var/cache",
                                              "var/lib/containers",
                                              "var/lib/docker",
                                              "snap"};
// Directory names never entered: package trees and caches, where an environment is not.
const std::vector<std::string> kUnsearchedNames = {"site-packages", "dist-packages", "node_modules", "__pycache__",
                                                   ".git"};
constexpr int kSearchDepth = 6;          // directories below the root
constexpr size_t kSearchBudget = 50000;  // directories listed in all

// Breadth-first from the root: directories holding a pyvenv.cfg (venvs), a conda-meta directory
// (conda prefixes and their envs/*), or both bin/ and lib/ (other prefixes: pyenv's versions,
// a Python built with --prefix), with what was left out in `notSearched`.
void searchPrefixes(const oci::FsView& v, std::vector<std::string>& venvs, std::vector<std::string>& condas,
                    std::vector<std::string>& prefixes, std::vector<std::string>& notSearched) {
  auto in = [](const std::vector<std::string>& list, const std::string& s) {
    return std::find(list.begin(), list.end(), s) != list.end();
  };
  std::deque<std::pair<std::string, int>> q = {{"", 0}};
  size_t visited = 0, tooDeep = 0;
  std::string firstTooDeep;
  while (!q.empty()) {
    if (visited == kSearchBudget) {
      notSearched.push_back(std::to_string(q.size()) + " directories after the first " + std::to_string(kSearchBudget) +
                            " (e.g. /" + q.front().first + ")");
      break;
    }
    auto [dir, depth] = q.front();
    q.pop_front();
    ++visited;
    bool bin = false, lib = false;
    for (const auto& name : v.list(dir)) {
      std::string p = join(dir, name);
      auto n = v.info(p);
      if (!n) continue;
      if (n->kind != oci::EntryKind::Dir) {
        if (name == "pyvenv.cfg") venvs.push_back(dir);
        continue;
      }
      if (name == "conda-meta") condas.push_back(dir);
      bin |= name == "bin";
      lib |= name == "lib";
      if (in(kUnsearched, p) || in(kUnsearchedNames, name)) {
        if (in(kUnsearched, p)) notSearched.push_back("/" + p);
        continue;
      }
      if (depth < kSearchDepth)
        q.emplace_back(p, depth + 1);
      else if (!tooDeep++)
        firstTooDeep = p;
    }
    if (bin && lib && !dir.empty() && dir != "usr" && dir != "usr/local") prefixes.push_back(dir);
  }
  if (tooDeep)
    notSearched.push_back(std::to_string(tooDeep) + " directories deeper than " + std::to_string(kSearchDepth) +
                          " levels (e.g. /" + util::printable(firstTooDeep, 60) + ")");
  std::sort(venvs.begin(), venvs.end());
  std::sort(condas.begin(), condas.end());
}

std::map<std::string, std::string> parseCfg(const std::string& text) {
  std::map<std::string, std::string> kv;
  for (const auto& line : util::split(text, '\n')) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    kv[util::toLower(util::trim(std::string_view(line).substr(0, eq)))] =
        std::string(util::trim(std::string_view(line).substr(eq + 1)));
  }
  return kv;
}

}  // namespace

const Distribution* PythonEnv::find(const std::string& key) const {
  for (const auto& d : distributions)
    if (d.key == key) return &d;
  return nullptr;
}

// What inventoryLinkedCode reads: .pth files, setuptools' editable finders, .egg-link files
// and the metadata of directory eggs.
static uint64_t linkedCodeCaptureLimit(std::string_view base, std::string_view parent) {
  if (parent.ends_with("-packages") && (base.ends_with(".pth") || base.ends_with(".egg-link") ||
                                        (base.rfind("__editable___", 0) == 0 && base.ends_with("_finder.py"))))
    return 1 << 20;
  if (parent == "EGG-INFO" && (base == "PKG-INFO" || base == "requires.txt")) return 1 << 20;
  return 0;
}

uint64_t captureLimit(const std::string& p) {
  // Asked of every file a layer holds: views into `p`, no copies (issue 31).
  size_t s = p.rfind('/');  // npos + 1 is 0: a name without '/' is all base
  std::string_view dir = s == std::string::npos ? std::string_view() : std::string_view(p).substr(0, s);
  std::string_view base = std::string_view(p).substr(s + 1), parent = dir.substr(dir.rfind('/') + 1);
  if (uint64_t l = linkedCodeCaptureLimit(base, parent)) return l;
  if (parent.ends_with(".dist-info") || parent.ends_with(".egg-info")) {
    static const std::set<std::string, std::less<>> files = {"METADATA",  "RECORD",       "WHEEL",
                                                             "INSTALLER", "REQUESTED",    "direct_url.json",
                                                             "PKG-INFO",  "requires.txt", "installed-files.txt"};
    return files.count(base) ? (16u << 20) : 0;
  }
  if (base.ends_with(".egg-info")) return 1 << 20;  // egg-info as a single file
  if (base == "pyvenv.cfg") return 65536;
  if (base == "version.py" && parent == "torch") return 65536;
  if ((base.rfind("requirements", 0) == 0 || base.rfind("constraints", 0) == 0) && base.ends_with(".txt"))
    return 1 << 20;
  if (base == "pip.conf" || base == ".netrc" || base == "pip.ini") return 65536;
  if (base == "version.json" && parent.rfind("cuda", 0) == 0) return 65536;
  return 0;
}

namespace {

// The environment builders, one per layout, shared by discovery and by --python targets.
class Builder {
 public:
  Builder(const oci::FsView& v, const std::string& hint, std::vector<PythonEnv>& envs)
      : v_(v), hint_(hint), envs_(envs) {}

  bool has(const std::string& prefix) const {
    return std::any_of(envs_.begin(), envs_.end(), [&](const PythonEnv& e) { return e.prefix == prefix; });
  }

  // Debian/Ubuntu system Python: /usr/bin/pythonX.Y with Debian's dist-packages.
  bool systemPython(const std::string& ver) {
    PythonEnv e;
    e.kind = "system";
    e.prefix = "usr";
    if (exists(v_, "usr/bin/python" + ver)) e.interpreter = "usr/bin/python" + ver;
    withVersion(e, ver);
    e.paths = {"usr/local/lib/python" + ver + "/dist-packages", "usr/lib/python3/dist-packages",
               "usr/lib/python" + ver + "/dist-packages",
               "usr/lib64/python" + ver + "/site-packages",  // RHEL: lib64 first
               "usr/lib/python" + ver + "/site-packages"};
    if (ver.rfind("2.", 0) == 0) e.paths[1] = "usr/lib/python2.7/dist-packages";
    if (e.interpreter.empty() && !isDir(v_, "usr/lib/python" + ver + "/dist-packages")) return false;
    return add(std::move(e));
  }

  // A Python built into a prefix of its own: /usr/local (the python:3.x images), conda, any other.
  bool prefixed(const std::string& kind, const std::string& prefix, const std::string& ver) {
    std::string bin = join(prefix, "bin/python" + ver), site = join(prefix, "lib/python" + ver + "/site-packages");
    if (!exists(v_, bin) && !isDir(v_, site)) return false;
    PythonEnv e;
    e.kind = kind;
    e.prefix = prefix;
    if (exists(v_, bin)) e.interpreter = bin;
    withVersion(e, ver);
    e.paths = {site};
    return add(std::move(e));
  }

  // A virtual environment: pyvenv.cfg gives the version and whether the base's packages count.
  bool venv(const std::string& dir) {
    auto cfgText = readText(v_, join(dir, "pyvenv.cfg"), 65536);
    if (!cfgText) return false;
    auto cfg = parseCfg(*cfgText);
    PythonEnv e;
    e.kind = "venv";
    e.prefix = dir;
    e.includeSystemSitePackages = util::toLower(cfg["include-system-site-packages"]) == "true";
    if (cfg.count("uv")) e.creator = "uv";
    std::string full = !cfg["version"].empty() ? cfg["version"] : cfg["version_info"];
    auto parts = util::split(full, '.');
    std::vector<std::string> libs = pythonLibVersions(v_, join(dir, "lib"));
    std::string mm = parts.size() >= 2 ? parts[0] + "." + parts[1] : (libs.empty() ? "" : libs.back());
    if (mm.empty()) return false;
    e.version = parts.size() >= 3 ? parts[0] + "." + parts[1] + "." + parts[2] : mm;
    e.fullVersionKnown = parts.size() >= 3;
    for (const char* b : {"/bin/python", "/bin/python3"})
      if (exists(v_, dir + b)) {
        e.interpreter = dir + b;
        break;
      }
    e.paths = {join(dir, "lib/python" + mm + "/site-packages")};
    if (e.includeSystemSitePackages) {
      std::string home = cfg["home"];
      if (!home.empty() && home.front() == '/') home = home.substr(1);
      for (const auto& base : envs_)
        if (base.kind != "venv" && !base.interpreter.empty() && dirName(base.interpreter) == home &&
            (base.version == mm || base.version.rfind(mm + ".", 0) == 0))
          e.paths.insert(e.paths.end(), base.paths.begin(), base.paths.end());
    }
    return add(std::move(e));
  }

  // Whatever layout `prefix` has; `ver` ("3.11") narrows it, empty takes every version there.
  bool any(const std::string& prefix, const std::string& ver) {
    if (exists(v_, join(prefix, "pyvenv.cfg"))) return venv(prefix);
    bool found = false;
    std::vector<std::string> vers = ver.empty()
                                        ? pythonLibVersions(v_, prefix == "usr" ? "usr/lib" : join(prefix, "lib"))
                                        : std::vector<std::string>{ver};
    for (const auto& x : vers) {
      if (prefix == "usr")
        found |= systemPython(x);
      else
        found |= prefixed(prefix == "usr/local"                   ? "local"
                          : isDir(v_, join(prefix, "conda-meta")) ? "conda"
                                                                  : "prefix",
                          prefix, x);
    }
    return found;
  }

 private:
  void withVersion(PythonEnv& e, const std::string& majorMinor) const {
    e.version = majorMinor;
    if (!hint_.empty() && (hint_ == majorMinor || hint_.rfind(majorMinor + ".", 0) == 0)) {
      e.version = hint_;
      e.fullVersionKnown = hint_.find('.') != hint_.rfind('.');
    }
  }

  bool add(PythonEnv e) {
    std::vector<std::string> existing;
    for (const auto& p : e.paths)
      if (isDir(v_, p)) existing.push_back(p);
    e.paths = existing;
    if (e.paths.empty() && e.interpreter.empty()) return false;
    for (const auto& have : envs_)
      if (have.prefix == e.prefix && have.version == e.version) return true;
    inventory(v_, e);
    envs_.push_back(std::move(e));
    return true;
  }

  const oci::FsView& v_;
  const std::string& hint_;
  std::vector<PythonEnv>& envs_;
};

// "opt/venv/bin/python3.11" -> "3.11"; the name of what a "python3" link points to, else "".
std::string interpreterVersion(const oci::FsView& v, const std::string& path) {
  if (auto ver = versionOfLibDir(baseName(path)); !ver.empty()) return ver;
  if (auto r = v.resolve(path, true); r.ok()) return versionOfLibDir(baseName(*r));
  return "";
}

}  // namespace

Discovery findEnvironments(const oci::FsView& v, const DiscoveryOptions& o) {
  Discovery out;
  Builder b(v, o.pythonVersionHint, out.envs);
  if (!o.targets.empty()) {
    for (const auto& target : o.targets) {
      std::string t = target;
      while (!t.empty() && t.front() == '/') t.erase(0, 1);
      while (t.size() > 1 && t.back() == '/') t.pop_back();
      auto resolved = v.resolve(t, true);
      auto node = resolved.ok() ? v.info(*resolved) : std::nullopt;
      if (!node) {
        out.errors.push_back("--python " + target + ": no such file or directory in the audited tree");
        continue;
      }
      std::string prefix = t, ver;
      if (node->kind != oci::EntryKind::Dir) {  // an interpreter: PREFIX/bin/pythonX.Y
        if (baseName(dirName(t)) != "bin") {
          out.errors.push_back("--python " + target + ": an interpreter is expected in a bin/ directory");
          continue;
        }
        prefix = dirName(dirName(t));
        ver = interpreterVersion(v, t);
      }
      if (!b.any(prefix, ver))
        out.errors.push_back("--python " + target + ": no Python environment there (no pyvenv.cfg, no lib/pythonX.Y)");
    }
    return out;
  }
  for (const auto& ver : pythonLibVersions(v, "usr/lib")) b.systemPython(ver);
  for (const auto& ver : pythonLibVersions(v, "usr/local/lib")) b.prefixed("local", "usr/local", ver);
  std::vector<std::string> venvs, condas, prefixes;
  searchPrefixes(v, venvs, condas, prefixes, out.notSearched);
  for (const std::string& prefix : condaPrefixes(v))  // the usual places and their named environments
    if (std::find(condas.begin(), condas.end(), prefix) == condas.end()) condas.push_back(prefix);
  for (const auto& prefix : condas)
    for (const auto& ver : pythonLibVersions(v, join(prefix, "lib"))) b.prefixed("conda", prefix, ver);
  for (const auto& dir : venvs) b.venv(dir);
  for (const auto& prefix : prefixes)
    if (!b.has(prefix) && std::find(venvs.begin(), venvs.end(), prefix) == venvs.end())
      for (const auto& ver : pythonLibVersions(v, join(prefix, "lib"))) b.prefixed("prefix", prefix, ver);
  addTargetDirs(v, out.envs);
  return out;
}

std::vector<PythonEnv> discoverEnvironments(const oci::FsView& v, const std::string& hint) {
  DiscoveryOptions o;
  o.pythonVersionHint = hint;
  return findEnvironments(v, o).envs;
}

}  // namespace kernodeck::python
