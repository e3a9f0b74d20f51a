// See pylock.h. TOML is read with toml++ (Debian's libtomlplusplus-dev, linked into this module
// only: never the hook or the static probe), then turned into JSON for the lock's reader.
#include "kernodeck/record/pylock.h"

#include <toml++/toml.h>
#include <regex>
#include <sstream>

#include "kernodeck/util/strings.h"

namespace kernodeck::record {

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

std::string str(const json& j, const char* k) {
  return j.contains(k) && j.at(k).is_string() ? j.at(k).get<std::string>() : "";
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

bool wheelNameVersion(const std::string& file, std::string& name, std::string& version) {
  static const std::regex whl(
      R"(([A-Za-z0-9](?:[A-Za-z0-9._]*[A-Za-z0-9])?)-([0-9][A-Za-z0-9.!+_]*)(-[0-9][^-]*)?-[^-]+-[^-]+-[^-]+\.whl)");
  std::smatch m;
  if (!std::regex_match(file, m, whl)) return false;
  name = m[1].str(), version = m[2].str();
  return true;
}

Result<Lock> parsePylock(std::string_view text) {
  KDK_TRY_ASSIGN(json doc, parseToml(text));
  Lock lock;
  lock.lockVersion = str(doc, "lock-version");
  if (lock.lockVersion.empty() || !lock.lockVersion.starts_with("1."))
    return Error::Corrupt("lock-version is '" + util::printable(lock.lockVersion, 20) + "', not 1.x");
  if (doc.contains("packages") && !doc.at("packages").is_array()) return Error::Corrupt("packages is not an array");
  static const std::regex hex(R"([0-9a-f]{64})");
  for (const auto& p : doc.value("packages", json::array())) {
    LockedPackage pkg;
    pkg.name = str(p, "name"), pkg.version = str(p, "version");
    if (pkg.name.empty() || !std::regex_match(pkg.name, std::regex(R"([A-Za-z0-9][A-Za-z0-9._-]*)")))
      return Error::Corrupt("a package has no name, or not a plain one");
    if (pkg.version.empty()) return Error::Corrupt("package " + pkg.name + " has no version: a lock pins each");
    if (p.contains("wheels") && !p.at("wheels").is_array())
      return Error::Corrupt(pkg.name + ": wheels is not an array");
    for (const auto& w : p.value("wheels", json::array())) {
      LockedWheel lw;
      lw.path = str(w, "path");
      std::string url = str(w, "url");
      lw.name = str(w, "name");
      if (lw.name.empty())
        lw.name = (lw.path.empty() ? url : lw.path).substr((lw.path.empty() ? url : lw.path).rfind('/') + 1);
      if (w.contains("hashes") && w.at("hashes").is_object()) lw.sha256 = str(w.at("hashes"), "sha256");
      if (!std::regex_match(lw.sha256, hex))
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

std::string writePylock(const Lock& lock) {
  // A JSON string is a TOML basic string (bytes that are not UTF-8 replaced rather than thrown on).
  auto q = [](const std::string& s) { return json(s).dump(-1, ' ', false, json::error_handler_t::replace); };
  std::string out = "lock-version = \"1.0\"\ncreated-by = \"kernodeck\"\n";
  for (const auto& p : lock.packages) {
    out += "\n[[packages]]\nname = " + q(p.name) + "\nversion = " + q(p.version) + "\n";
    for (const auto& w : p.wheels)
      out += "\n[[packages.wheels]]\nname = " + q(w.name) + "\npath = " + q(w.path) +
             "\nhashes = { sha256 = " + q(w.sha256) + " }\n";
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

}  // namespace kernodeck::record
