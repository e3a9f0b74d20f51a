#include "kernodeck/os/dpkg.h"

#include <fnmatch.h>

#include "kernodeck/util/strings.h"

namespace kernodeck::os {

std::vector<DpkgPackage> parseDpkgStatus(std::string_view text, bool all) {
  std::vector<DpkgPackage> out;
  DpkgPackage cur;
  std::string field;
  auto flush = [&] {
    if (!cur.name.empty() && (all || cur.status == "install ok installed" || cur.status.empty())) out.push_back(cur);
    cur = DpkgPackage{};
    field.clear();
  };
  for (const auto& raw : util::split(text, '\n')) {
    std::string line = raw;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (util::trim(line).empty()) {
      flush();
      continue;
    }
    if (line[0] == ' ' || line[0] == '\t') {
      if (field == "conffiles") {
        auto parts = util::split(std::string(util::trim(line)), ' ');
        if (parts.size() >= 2) {
          std::string p = parts[0];
          if (!p.empty() && p[0] == '/') p = p.substr(1);
          cur.conffiles[p] = parts[1];
        }
      }
      continue;
    }
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    field = util::toLower(line.substr(0, colon));
    std::string value(util::trim(std::string_view(line).substr(colon + 1)));
    if (field == "package")
      cur.name = value;
    else if (field == "version")
      cur.version = value;
    else if (field == "architecture")
      cur.architecture = value;
    else if (field == "source") {
      size_t open = value.find(" (");
      cur.source = util::trim(std::string_view(value).substr(0, open));
      if (open != std::string::npos && value.back() == ')')
        cur.sourceVersion = util::trim(std::string_view(value).substr(open + 2, value.size() - open - 3));
    } else if (field == "status")
      cur.status = value;
  }
  flush();
  return out;
}

std::map<std::string, std::string> parseMd5sums(std::string_view text) {
  std::map<std::string, std::string> out;
  for (std::string_view line : util::splitView(text, '\n')) {
    line = util::trim(line);
    if (line.size() < 34) continue;
    std::string_view path = util::trim(line.substr(32));
    if (!path.empty() && path[0] == '/') path.remove_prefix(1);
    if (!path.empty()) out.insert_or_assign(std::string(path), util::toLower(line.substr(0, 32)));
  }
  return out;
}

uint64_t dpkgCaptureLimit(const std::string& p) {
  if (p == "var/lib/dpkg/status") return 64u << 20;
  if (p.rfind("var/lib/dpkg/status.d/", 0) == 0) return 4u << 20;
  if (p.rfind("var/lib/dpkg/info/", 0) == 0) {
    if (p.ends_with(".list") || p.ends_with(".md5sums")) return 16u << 20;
  }
  return 0;
}

DpkgDatabase readDpkg(const oci::FsView& v, bool verify) {
  DpkgDatabase db;
  std::map<std::string, std::map<std::string, std::string>> sums;  // package -> md5sums
  if (auto st = v.readFile("var/lib/dpkg/status", 64u << 20); st.ok()) {
    db.present = true;
    db.packages = parseDpkgStatus(*st);
  }
  for (const auto& name : v.list("var/lib/dpkg/status.d")) {
    std::string p = "var/lib/dpkg/status.d/" + name;
    auto t = v.readFile(p, 4u << 20);
    if (!t.ok()) continue;
    db.present = true;
    if (name.size() > 8 && name.substr(name.size() - 8) == ".md5sums") {
      sums[name.substr(0, name.size() - 8)] = parseMd5sums(*t);
      continue;
    }
    for (auto& pkg : parseDpkgStatus(*t)) db.packages.push_back(pkg);
  }
  if (!db.present) return db;
  for (const auto& pkg : db.packages) {
    for (const std::string& stem : {pkg.name + ":" + pkg.architecture, pkg.name}) {
      auto list = v.readFile("var/lib/dpkg/info/" + stem + ".list", 16u << 20);
      if (list.ok()) {
        for (std::string_view p : util::splitView(*list, '\n')) {
          p = util::trim(p);
          if (p.size() > 1 && p[0] == '/') db.owned.emplace(p.substr(1));
        }
      }
      auto md5 = v.readFile("var/lib/dpkg/info/" + stem + ".md5sums", 16u << 20);
      if (md5.ok()) sums[pkg.name] = parseMd5sums(*md5);
      if (list.ok() || md5.ok()) break;
    }
  }
  if (!verify) return db;
  // path-exclude / path-include from dpkg.cfg.d (slim images drop docs and man pages).
  std::vector<std::pair<bool, std::string>> filters;  // (include, pattern)
  for (const auto& name : v.list("etc/dpkg/dpkg.cfg.d")) {
    auto t = v.readFile("etc/dpkg/dpkg.cfg.d/" + name, 1 << 20);
    if (!t.ok()) continue;
    for (const auto& raw : util::split(*t, '\n')) {
      std::string line(util::trim(raw));
      for (const char* k : {"path-exclude", "path-include"}) {
        std::string key(k);
        if (line.rfind(key, 0) != 0) continue;
        std::string pat(util::trim(std::string_view(line).substr(key.size())));
        if (!pat.empty() && (pat[0] == '=' || pat[0] == ' '))
          pat = std::string(util::trim(std::string_view(pat).substr(1)));
        if (!pat.empty() && pat[0] == '/') pat = pat.substr(1);
        if (!pat.empty()) filters.emplace_back(key == "path-include", pat);
      }
    }
  }
  auto excluded = [&](const std::string& path) {
    bool ex = false;
    for (const auto& [include, pat] : filters)
      if (::fnmatch(pat.c_str(), path.c_str(), 0) == 0) ex = !include;
    return ex;
  };
  struct ToVerify {
    const DpkgPackage* pkg;
    std::string path, md5;
    bool conffile;
    std::string resolved;
    int layer;
  };
  std::vector<ToVerify> toVerify;
  for (const auto& pkg : db.packages) {
    std::map<std::string, std::pair<std::string, bool>> files;  // path -> (md5, conffile)
    if (auto it = sums.find(pkg.name); it != sums.end())
      for (const auto& [p, m] : it->second) files[p] = {m, false};
    for (const auto& [p, m] : pkg.conffiles)
      if (m != "newconffile" && m != "obsolete") files[p] = {m, true};
    for (auto& [path, want] : files) {
      auto r = v.resolve(path, true);
      auto n = r.ok() ? v.info(*r) : std::nullopt;
      if (!n || n->kind == oci::EntryKind::Dir) {
        if (excluded(path)) continue;
        db.missing.push_back({pkg.name, path, want.second, -1});
        continue;
      }
      toVerify.push_back({&pkg, path, std::move(want.first), want.second, *r, n->layer});
    }
  }
  // All the paths at once: a view that left some unhashed reads each layer once more at most.
  std::vector<std::string> resolved;
  for (const auto& t : toVerify)
    if (!v.hashKnown(t.resolved, "md5")) resolved.push_back(t.resolved);
  v.prepareHashes(resolved, "md5");
  for (const auto& t : toVerify) {
    auto h = v.hashResolved(t.resolved, "md5");
    if (!h.ok()) continue;
    ++db.verified;
    if (*h != t.md5) db.modified.push_back({t.pkg->name, t.path, t.conffile, t.layer});
  }
  return db;
}

}  // namespace kernodeck::os
