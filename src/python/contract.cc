#include "kernodeck/python/contract.h"

#include <map>
#include <regex>

#include "kernodeck/python/requirement.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

bool satisfies(const Distribution& installed, const Requirement& req) {
  if (installed.parsed) return req.specifier.contains(*installed.parsed, true);
  bool ok = req.specifier.empty();  // a legacy, non-PEP 440 version: only === can match it
  for (const auto& s : req.specifier.specs()) ok = s.containsString(installed.version);
  return ok;
}

std::vector<ContractIssue> checkContract(const PythonEnv& env, const MarkerEnv& markers) {
  std::vector<ContractIssue> out;
  // pip builds its package set from every distribution on the path.
  std::map<std::string, const Distribution*> installed;
  for (const auto& d : env.distributions)
    if (!installed.count(d.key)) installed[d.key] = &d;
  for (const auto& [key, dist] : installed) {
    for (const auto& text : dist->requiresDist) {
      auto req = Requirement::parse(text);
      if (!req.ok()) {
        out.push_back({ContractIssue::Invalid, dist->name, dist->version, text, "", ""});
        continue;
      }
      if (req->marker) {
        Tri t = req->marker->evaluate(markers, "");
        if (t == Tri::False) continue;
        if (t == Tri::Unknown) {
          out.push_back({ContractIssue::Undecidable, dist->name, dist->version, text, req->key, ""});
          continue;
        }
      }
      auto it = installed.find(req->key);
      if (it == installed.end()) {
        out.push_back({ContractIssue::Missing, dist->name, dist->version, text, req->key, ""});
        continue;
      }
      const Distribution* dep = it->second;
      if (!satisfies(*dep, *req))
        out.push_back({ContractIssue::Conflict, dist->name, dist->version, text, req->key, dep->version});
    }
  }
  return out;
}

bool wheelTagsSupported(const std::vector<std::string>& tags, const std::string& pythonVersion, const std::string& arch,
                        std::string* why) {
  if (tags.empty()) return true;
  auto pv = util::split(pythonVersion, '.');
  if (pv.size() < 2) return true;
  int major = std::atoi(pv[0].c_str()), minor = std::atoi(pv[1].c_str());
  std::string machine = arch == "amd64" ? "x86_64" : arch == "arm64" ? "aarch64" : arch == "386" ? "i686" : arch;
  static const std::regex pyTag(R"(^(py|cp|pp)(\d)(\d*)$)");
  static const std::regex abiTag(R"(^cp(\d)(\d+)[dmu]*$)");
  auto pythonOk = [&](const std::string& t) {
    std::smatch m;
    if (t.size() > 16 || !std::regex_match(t, m, pyTag)) return false;  // bounded: an image's tag
    int tmaj = std::atoi(m[2].str().c_str());
    if (tmaj != major) return false;
    if (m[3].str().empty()) return m[1] == "py";
    int tmin = std::atoi(m[3].str().c_str());
    return m[1] == "py" ? tmin <= minor : m[1] == "cp" && tmin <= minor;
  };
  auto abiOk = [&](const std::string& a, const std::string& py) {
    if (a == "none") return true;
    if (a == "abi3") return py.rfind("cp", 0) == 0;
    std::smatch m;
    if (a.size() > 16 || !std::regex_match(a, m, abiTag)) return false;
    return std::atoi(m[1].str().c_str()) == major && std::atoi(m[2].str().c_str()) == minor;
  };
  auto platformOk = [&](const std::string& p) {
    if (p == "any") return true;
    if (p.rfind("musllinux", 0) == 0) return false;  // Debian-family images are glibc
    if (p.rfind("linux_", 0) != 0 && p.rfind("manylinux", 0) != 0) return false;
    std::string suffix = "_" + machine;
    return p.size() > suffix.size() && p.compare(p.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  std::vector<std::string> seen;
  for (const auto& tag : tags) {
    auto parts = util::split(tag, '-');
    if (parts.size() != 3) continue;
    for (const auto& py : util::split(parts[0], '.'))
      for (const auto& abi : util::split(parts[1], '.'))
        for (const auto& plat : util::split(parts[2], '.')) {
          if (pythonOk(py) && abiOk(abi, py) && platformOk(plat)) return true;
          seen.push_back(py + "-" + abi + "-" + plat);
        }
  }
  if (why) *why = "tags " + util::join(seen, ", ") + " do not fit CPython " + pv[0] + "." + pv[1] + " on " + machine;
  return false;
}

}  // namespace kernodeck::python
