#include "kernodeck/python/environment.h"

#include <cstdint>
#include <algorithm>
#include <deque>
#include <regex>
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
std::string versionOfLibDir(const std::string& name) {
  static const std::regex re(R"(^python([23]\.[0-9]+)$)");
  std::smatch m;
  return std::regex_match(name, m, re) ? m[1].str() : "";
}

std::vector<std::string> pythonLibVersions(const oci::FsView& v, const std::string& libDir) {
  std::vector<std::string> out;
  for (const auto& n : v.list(libDir)) {
    std::string ver = versionOfLibDir(n);
    if (!ver.empty() && isDir(v, join(libDir, n))) out.push_back(ver);
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) { return Version::parse(a)->operator<=>(*Version::parse(b)) < 0; });
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
    if (du.ok()) d.directUrl = *du;
    else d.directUrlError = du.error().message;
  }
  if (auto t = readText(v, join(d.metadataDir, "RECORD"))) {
    d.hasRecord = true;
    d.record = parseRecord(*t);
  }
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
      if (!paths.empty()) d.codeLocation = paths.front()[0] == '/' ? imagePath(paths.front()) : join(loc, paths.front());
      // setuptools' finder mode: "import __editable___NAME_finder; ...", whose MAPPING names the
      // directory of each top-level package.
      static const std::regex finderImport(R"(^import (__editable___[A-Za-z0-9_]+_finder);)");
      static const std::regex mapping(R"(MAPPING\s*(?::[^=]*)?=\s*\{\s*'[^']*'\s*:\s*'([^']+)')");
      std::smatch fm, mm;
      std::string first(util::trim(*t));
      if (std::regex_search(first, fm, finderImport))
        if (auto finder = readText(v, join(loc, fm[1].str() + ".py"), 1 << 20); finder && std::regex_search(*finder, mm, mapping))
          d.codeLocation = imagePath(mm[1].str());
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
        if (n.ends_with(".egg-info") && canonicalizeName(n.substr(0, n.size() - 9)) == canonicalizeName(stem)) infoEntry = n;
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
  for (const auto& meta : oci::findFiles(v, [](const std::string& n) { return n == "METADATA"; }, 5,
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

// Directories that hold a virtual environment (a pyvenv.cfg), away from system trees.
std::vector<std::string> findVenvs(const oci::FsView& v) {
  std::vector<std::string> out;
  for (const auto& cfg : oci::findFiles(v, [](const std::string& n) { return n == "pyvenv.cfg"; }, 4,
                                        {"proc", "sys", "dev", "usr/share", "usr/include", "usr/lib/x86_64-linux-gnu",
                                         "usr/lib/aarch64-linux-gnu", "var/lib/dpkg", "var/cache", "boot", "run", "tmp"},
                                        {"site-packages", "dist-packages", "node_modules", "__pycache__"}))
    out.push_back(dirName(cfg));
  return out;
}

std::map<std::string, std::string> parseCfg(const std::string& text) {
  std::map<std::string, std::string> kv;
  for (const auto& line : util::split(text, '\n')) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    kv[util::toLower(util::trim(std::string_view(line).substr(0, eq)))] = std::string(util::trim(std::string_view(line).substr(eq + 1)));
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
static uint64_t linkedCodeCaptureLimit(const std::string& base, const std::string& parent) {
  if (parent.ends_with("-packages") && (base.ends_with(".pth") || base.ends_with(".egg-link") ||
                                        (base.rfind("__editable___", 0) == 0 && base.ends_with("_finder.py"))))
    return 1 << 20;
  if (parent == "EGG-INFO" && (base == "PKG-INFO" || base == "requires.txt")) return 1 << 20;
  return 0;
}

uint64_t captureLimit(const std::string& p) {
  std::string base = baseName(p);
  std::string parent = baseName(dirName(p));
  if (uint64_t l = linkedCodeCaptureLimit(base, parent)) return l;
  if (parent.ends_with(".dist-info") || parent.ends_with(".egg-info")) {
    static const std::set<std::string> files = {"METADATA", "RECORD", "WHEEL", "INSTALLER", "REQUESTED",
                                                "direct_url.json", "PKG-INFO", "requires.txt", "installed-files.txt"};
    return files.count(base) ? (16u << 20) : 0;
  }
  if (base.ends_with(".egg-info")) return 1 << 20;  // egg-info as a single file
  if (base == "pyvenv.cfg") return 65536;
  if (base == "version.py" && parent == "torch") return 65536;
  if ((base.rfind("requirements", 0) == 0 || base.rfind("constraints", 0) == 0) && base.ends_with(".txt")) return 1 << 20;
  if (base == "pip.conf" || base == ".netrc" || base == "pip.ini") return 65536;
  if (base == "version.json" && parent.rfind("cuda", 0) == 0) return 65536;
  return 0;
}

std::vector<PythonEnv> discoverEnvironments(const oci::FsView& v, const std::string& hint) {
  std::vector<PythonEnv> envs;
  auto withVersion = [&](PythonEnv& e, const std::string& majorMinor) {
    e.version = majorMinor;
    if (!hint.empty() && (hint == majorMinor || hint.rfind(majorMinor + ".", 0) == 0)) {
      e.version = hint;
      e.fullVersionKnown = hint.find('.') != hint.rfind('.');
    }
  };
  auto addIfAny = [&](PythonEnv e) {
    std::vector<std::string> existing;
    for (const auto& p : e.paths)
      if (isDir(v, p)) existing.push_back(p);
    e.paths = existing;
    if (e.paths.empty() && e.interpreter.empty()) return;
    inventory(v, e);
    envs.push_back(std::move(e));
  };
  // Debian/Ubuntu (and RHEL/Fedora) system Python.
  for (const auto& ver : pythonLibVersions(v, "usr/lib")) {
    PythonEnv e;
    e.kind = "system";
    e.prefix = "usr";
    if (exists(v, "usr/bin/python" + ver)) e.interpreter = "usr/bin/python" + ver;
    withVersion(e, ver);
    e.paths = {"usr/local/lib/python" + ver + "/dist-packages", "usr/lib/python3/dist-packages",
               "usr/lib/python" + ver + "/dist-packages", "usr/lib64/python" + ver + "/site-packages",  // RHEL: lib64 first
               "usr/lib/python" + ver + "/site-packages"};
    if (ver.rfind("2.", 0) == 0) e.paths[1] = "usr/lib/python2.7/dist-packages";
    if (!e.interpreter.empty() || isDir(v, "usr/lib/python" + ver + "/dist-packages")) addIfAny(std::move(e));
  }
  // A Python built into /usr/local (the python:3.x images).
  for (const auto& ver : pythonLibVersions(v, "usr/local/lib")) {
    if (!exists(v, "usr/local/bin/python" + ver) && !isDir(v, "usr/local/lib/python" + ver + "/site-packages")) continue;
    PythonEnv e;
    e.kind = "local";
    e.prefix = "usr/local";
    if (exists(v, "usr/local/bin/python" + ver)) e.interpreter = "usr/local/bin/python" + ver;
    withVersion(e, ver);
    e.paths = {"usr/local/lib/python" + ver + "/site-packages"};
    addIfAny(std::move(e));
  }
  // Conda.
  for (const std::string& prefix : condaPrefixes(v)) {
    for (const auto& ver : pythonLibVersions(v, std::string(prefix) + "/lib")) {
      PythonEnv e;
      e.kind = "conda";
      e.prefix = prefix;
      if (exists(v, std::string(prefix) + "/bin/python" + ver)) e.interpreter = std::string(prefix) + "/bin/python" + ver;
      withVersion(e, ver);
      e.paths = {std::string(prefix) + "/lib/python" + ver + "/site-packages"};
      addIfAny(std::move(e));
    }
  }
  // Virtual environments.
  for (const auto& dir : findVenvs(v)) {
    auto cfgText = readText(v, join(dir, "pyvenv.cfg"), 65536);
    if (!cfgText) continue;
    auto cfg = parseCfg(*cfgText);
    PythonEnv e;
    e.kind = "venv";
    e.prefix = dir;
    e.includeSystemSitePackages = util::toLower(cfg["include-system-site-packages"]) == "true";
    if (cfg.count("uv")) e.creator = "uv";
    std::string full = !cfg["version"].empty() ? cfg["version"] : cfg["version_info"];
    auto parts = util::split(full, '.');
    std::vector<std::string> libs = pythonLibVersions(v, join(dir, "lib"));
    std::string mm = parts.size() >= 2 ? parts[0] + "." + parts[1] : (libs.empty() ? "" : libs.back());
    if (mm.empty()) continue;
    e.version = parts.size() >= 3 ? parts[0] + "." + parts[1] + "." + parts[2] : mm;
    e.fullVersionKnown = parts.size() >= 3;
    for (const char* b : {"/bin/python", "/bin/python3"})
      if (exists(v, dir + b)) {
        e.interpreter = dir + b;
        break;
      }
    e.paths = {join(dir, "lib/python" + mm + "/site-packages")};
    if (e.includeSystemSitePackages) {
      std::string home = cfg["home"];
      if (!home.empty() && home.front() == '/') home = home.substr(1);
      for (const auto& base : envs)
        if (base.kind != "venv" && !base.interpreter.empty() && dirName(base.interpreter) == home &&
            (base.version == mm || base.version.rfind(mm + ".", 0) == 0))
          e.paths.insert(e.paths.end(), base.paths.begin(), base.paths.end());
    }
    addIfAny(std::move(e));
  }
  addTargetDirs(v, envs);
  return envs;
}

}  // namespace kernodeck::python
