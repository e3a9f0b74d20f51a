// See pylock.h. TOML is read with toml++ (Debian's libtomlplusplus-dev, linked into kdk_python_lock
// only: never the hook or the static probe), then turned into JSON for the lock's reader.
#include "kernodeck/python/pylock.h"

#include <toml++/toml.h>
#include <algorithm>
#include <regex>
#include <sstream>

#include "kernodeck/python/marker.h"
#include "kernodeck/python/specifier.h"
#include "kernodeck/python/version.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

using nlohmann::json;

namespace {

// A TOML node as JSON: tables as objects, arrays as arrays, strings, integers, floats and booleans
// as themselves, dates and times as their TOML text (2024-01-02T03:04:05Z). toml++ bounds the
// nesting it reads, and so this recursion.
json tomlToJson(const toml::node& n) {
  if (const auto* t = n.as_table()) {
    json o = json::object();
    for (const auto& [k, v] : *t) o[std::string(k.str())] = tomlToJson(v);
    return o;
  }
  if (const auto* a = n.as_array()) {
    json arr = json::array();
    for (const auto& v : *a) arr.push_back(tomlToJson(v));
    return arr;
  }
  if (const auto* v = n.as_string()) return v->get();
  if (const auto* v = n.as_integer()) return v->get();
  if (const auto* v = n.as_floating_point()) return v->get();
  if (const auto* v = n.as_boolean()) return v->get();
  std::ostringstream text;
  if (const auto* v = n.as_date_time()) text << *v;
  if (const auto* v = n.as_date()) text << *v;
  if (const auto* v = n.as_time()) text << *v;
  return text.str();
}

// A string field of a table: "" when absent, Corrupt naming it when not a string.
Result<std::string> strField(const json& j, const char* k, const std::string& where) {
  if (!j.is_object() || !j.contains(k)) return std::string();
  if (!j.at(k).is_string()) return Error::Corrupt(where + k + " is not a string");
  return j.at(k).get<std::string>();
}

// An array of strings: empty when absent, Corrupt naming it otherwise.
Result<std::vector<std::string>> strArray(const json& j, const char* k, const std::string& where) {
  std::vector<std::string> out;
  if (!j.contains(k)) return out;
  if (!j.at(k).is_array()) return Error::Corrupt(where + k + " is not an array");
  for (const auto& v : j.at(k)) {
    if (!v.is_string()) return Error::Corrupt(where + k + " holds something that is not a string");
    out.push_back(v.get<std::string>());
  }
  return out;
}

// The lengths in hex of the digests hashlib guarantees; another algorithm's digest must still be hex.
size_t hexLength(const std::string& algorithm) {
  static const std::map<std::string, size_t> lengths = {
      {"md5", 32},      {"sha1", 40},     {"sha224", 56},   {"sha256", 64},      {"sha384", 96},
      {"sha512", 128},  {"sha3_224", 56}, {"sha3_256", 64}, {"sha3_384", 96},    {"sha3_512", 128},
      {"blake2b", 128}, {"blake2s", 64}};
  auto it = lengths.find(algorithm);
  return it == lengths.end() ? 0 : it->second;
}

bool isLowerHex(const std::string& s) {
  return !s.empty() && s.size() % 2 == 0 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

// A hashes table: algorithm -> lower-case hex of that algorithm's length.
Result<std::map<std::string, std::string>> hashTable(const json& w, const std::string& where) {
  std::map<std::string, std::string> out;
  if (!w.contains("hashes")) return out;
  if (!w.at("hashes").is_object()) return Error::Corrupt(where + "hashes is not a table");
  for (const auto& [alg, v] : w.at("hashes").items()) {
    std::string a = util::printable(alg, 40);
    if (!v.is_string()) return Error::Corrupt(where + "hashes." + a + " is not a string");
    std::string hex = v.get<std::string>();
    size_t want = hexLength(alg);
    if (!isLowerHex(hex) || (want && hex.size() != want))
      return Error::Corrupt(where + "hashes." + a + " is not " +
                            (want ? std::to_string(want) + " lower-case hex digits" : std::string("lower-case hex")) +
                            " (it has " + std::to_string(hex.size()) + " characters)");
    out[alg] = hex;
  }
  return out;
}

Status checkMarker(const std::string& m, const std::string& where) {
  if (m.empty()) return {};
  auto p = Marker::parse(m);
  if (!p.ok()) return Error::Corrupt(where + " is not a marker: " + p.error().message);
  return {};
}

Status checkSpecifiers(const std::string& s, const std::string& where) {
  if (s.empty()) return {};
  auto p = SpecifierSet::parse(s);
  if (!p.ok()) return Error::Corrupt(where + " is not a version specifier: " + p.error().message);
  return {};
}

std::vector<std::string> normalised(std::vector<std::string> names) {
  for (auto& n : names) n = canonicalizeName(n);
  return names;
}

}  // namespace

Result<json> parseToml(std::string_view text) {
  if (text.size() > (16u << 20)) return Error::Corrupt("larger than 16 MiB");
  try {
    return tomlToJson(toml::parse(text));
  } catch (const toml::parse_error& e) {
    return Error::Corrupt("line " + std::to_string(e.source().begin.line) + ": " +
                          util::printable(std::string(e.description()), 200));
  }
}

bool wheelNameVersion(const std::string& file, std::string& name, std::string& version, std::string* tags) {
  static const std::regex whl(
      R"(([A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?)-([0-9][A-Za-z0-9.!+_]*)(-[0-9][^-]*)?-([^-]+-[^-]+-[^-]+)\.whl)");
  std::smatch m;
  if (!std::regex_match(file, m, whl)) return false;
  name = m[1].str(), version = m[2].str();
  if (tags) *tags = m[4].str();
  return true;
}

Result<Lock> parsePylock(std::string_view text) {
  KDK_TRY_ASSIGN(json doc, parseToml(text));
  Lock lock;
  KDK_TRY_ASSIGN(lock.lockVersion, strField(doc, "lock-version", ""));
  if (lock.lockVersion.empty() || !lock.lockVersion.starts_with("1."))
    return Error::Corrupt("lock-version is '" + util::printable(lock.lockVersion, 20) + "', not 1.x");
  KDK_TRY_ASSIGN(lock.requiresPython, strField(doc, "requires-python", ""));
  KDK_TRY_STATUS(checkSpecifiers(lock.requiresPython, "requires-python"));
  KDK_TRY_ASSIGN(lock.environments, strArray(doc, "environments", ""));
  for (size_t i = 0; i < lock.environments.size(); ++i)
    KDK_TRY_STATUS(checkMarker(lock.environments[i], "environments[" + std::to_string(i) + "]"));
  KDK_TRY_ASSIGN(auto extras, strArray(doc, "extras", ""));
  KDK_TRY_ASSIGN(auto groups, strArray(doc, "dependency-groups", ""));
  KDK_TRY_ASSIGN(auto defaults, strArray(doc, "default-groups", ""));
  lock.extras = normalised(extras), lock.dependencyGroups = normalised(groups), lock.defaultGroups = normalised(defaults);
  if (doc.contains("packages") && !doc.at("packages").is_array()) return Error::Corrupt("packages is not an array");
  static const std::regex plainName(R"([A-Za-z0-9][A-Za-z0-9._-]*)");
  for (const auto& p : doc.value("packages", json::array())) {
    if (!p.is_object()) return Error::Corrupt("packages holds something that is not a table");
    LockedPackage pkg;
    KDK_TRY_ASSIGN(pkg.name, strField(p, "name", "a package's "));
    if (pkg.name.empty() || !std::regex_match(pkg.name, plainName))
      return Error::Corrupt("a package has no name, or not a plain one");
    std::string where = "package " + pkg.name + ": ";
    KDK_TRY_ASSIGN(pkg.version, strField(p, "version", where));
    if (pkg.version.empty()) return Error::Corrupt("package " + pkg.name + " has no version: a lock pins each");
    KDK_TRY_ASSIGN(pkg.marker, strField(p, "marker", where));
    KDK_TRY_STATUS(checkMarker(pkg.marker, where + "marker"));
    KDK_TRY_ASSIGN(pkg.requiresPython, strField(p, "requires-python", where));
    KDK_TRY_STATUS(checkSpecifiers(pkg.requiresPython, where + "requires-python"));
    KDK_TRY_ASSIGN(pkg.index, strField(p, "index", where));
    if (p.contains("wheels") && !p.at("wheels").is_array())
      return Error::Corrupt(pkg.name + ": wheels is not an array");
    for (const auto& w : p.value("wheels", json::array())) {
      if (!w.is_object()) return Error::Corrupt(where + "wheels holds something that is not a table");
      LockedWheel lw;
      KDK_TRY_ASSIGN(lw.path, strField(w, "path", where + "wheel "));
      KDK_TRY_ASSIGN(lw.url, strField(w, "url", where + "wheel "));
      KDK_TRY_ASSIGN(lw.name, strField(w, "name", where + "wheel "));
      if (lw.name.empty())
        lw.name = (lw.path.empty() ? lw.url : lw.path).substr((lw.path.empty() ? lw.url : lw.path).rfind('/') + 1);
      KDK_TRY_ASSIGN(lw.hashes, hashTable(w, where + "wheel " + util::printable(lw.name, 120) + ": "));
      if (lw.hashes.count("sha256")) lw.sha256 = lw.hashes.at("sha256");
      if (lw.sha256.empty())
        return Error::Corrupt(pkg.name + ": wheel " + util::printable(lw.name, 120) + " has no sha256 hash");
      std::string n, v;
      if (!wheelNameVersion(lw.name, n, v))
        return Error::Corrupt(pkg.name + ": '" + util::printable(lw.name, 120) + "' is not a wheel's file name");
      pkg.wheels.push_back(lw);
    }
    pkg.sdistOnly = pkg.wheels.empty() &&
                    (p.contains("sdist") || p.contains("archive") || p.contains("vcs") || p.contains("directory"));
    if (pkg.wheels.empty() && !pkg.sdistOnly) return Error::Corrupt(pkg.name + " has no distribution in the lock");
    lock.packages.push_back(std::move(pkg));
  }
  return lock;
}

Result<Lock> lockFromRequirements(const RequirementsFile& file) {
  if (!file.errors.empty()) return Error::Corrupt(util::printable(file.errors.front(), 200));
  Lock lock;
  for (const auto& line : file.lines) {
    std::string where = line.file + " line " + std::to_string(line.line);
    if (line.constraint) continue;
    if (!line.req) return Error::Corrupt(where + ": " + util::printable(line.error, 160));
    const Requirement& r = *line.req;
    if (!r.url.empty() || !isPinned(r))
      return Error::Corrupt(where + ": " + util::printable(r.name, 80) +
                            " is not pinned with ==, as a lock pins each distribution");
    LockedPackage p;
    p.name = r.name, p.version = r.specifier.specs()[0].version(), p.anyOfHashes = true;
    if (r.marker) p.marker = r.marker->str();
    for (const auto& h : line.hashes) {
      auto colon = h.find(':');
      std::string alg = h.substr(0, colon), hex = colon == std::string::npos ? "" : h.substr(colon + 1);
      size_t want = hexLength(alg);
      if (!isLowerHex(hex) || (want && hex.size() != want))
        return Error::Corrupt(where + ": --hash=" + util::printable(h, 80) + " is not " + alg + " in hex");
      if (alg != "sha256") continue;
      LockedWheel w;
      w.sha256 = hex, w.hashes = {{"sha256", hex}};
      p.wheels.push_back(w);
    }
    lock.packages.push_back(std::move(p));
  }
  return lock;
}

std::string writePylock(const Lock& lock) {
  // A JSON string is a TOML basic string (bytes that are not UTF-8 replaced rather than thrown on).
  auto q = [](const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); };
  auto list = [&](const std::vector<std::string>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + q(v[i]);
    return s + "]";
  };
  std::string out = "lock-version = \"1.0\"\ncreated-by = \"kernodeck\"\n";
  if (!lock.requiresPython.empty()) out += "requires-python = " + q(lock.requiresPython) + "\n";
  if (!lock.environments.empty()) out += "environments = " + list(lock.environments) + "\n";
  if (!lock.extras.empty()) out += "extras = " + list(lock.extras) + "\n";
  if (!lock.dependencyGroups.empty()) out += "dependency-groups = " + list(lock.dependencyGroups) + "\n";
  if (!lock.defaultGroups.empty()) out += "default-groups = " + list(lock.defaultGroups) + "\n";
  for (const auto& p : lock.packages) {
    out += "\n[[packages]]\nname = " + q(p.name) + "\nversion = " + q(p.version) + "\n";
    if (!p.marker.empty()) out += "marker = " + q(p.marker) + "\n";
    if (!p.requiresPython.empty()) out += "requires-python = " + q(p.requiresPython) + "\n";
    if (!p.index.empty()) out += "index = " + q(p.index) + "\n";
    for (const auto& w : p.wheels) {
      out += "\n[[packages.wheels]]\nname = " + q(w.name) + "\npath = " + q(w.path) + "\nhashes = { ";
      auto hashes = w.hashes;
      hashes["sha256"] = w.sha256;
      bool first = true;
      for (const auto& [alg, hex] : hashes) {
        // A bare key where TOML allows one (sha256 = "..."), as other writers do; quoted otherwise.
        bool bare = !alg.empty() && std::all_of(alg.begin(), alg.end(), [](char c) {
          return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        });
        out += (first ? "" : ", ") + (bare ? alg : q(alg)) + " = " + q(hex), first = false;
      }
      out += " }\n";
    }
  }
  return out;
}

std::string lockRequirements(const Lock& lock) {
  std::string out = "# from pylock.toml: every distribution pinned by its sha256\n";
  for (const auto& p : lock.packages) {
    out += p.name + "==" + p.version;
    for (const auto& w : p.wheels) out += " \\\n    --hash=sha256:" + w.sha256;
    out += "\n";
  }
  return out;
}

}  // namespace kernodeck::python
