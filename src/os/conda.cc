#include "kernodeck/os/conda.h"

#include <nlohmann/json.hpp>

#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::os {

namespace {

const char* const kRoots[] = {"opt/conda",      "opt/miniconda3", "opt/miniconda",   "opt/miniforge3",
                              "opt/mambaforge", "opt/anaconda3",  "root/miniconda3", "root/miniforge3",
                              "root/anaconda3", "usr/local/conda"};

bool isDir(const oci::FsView& v, const std::string& p) {
  auto r = v.resolve(p);
  auto n = r.ok() ? v.info(*r) : std::nullopt;
  return n && n->kind == oci::EntryKind::Dir;
}

std::string join(const std::string& prefix, const std::string& rel) {
  return prefix.empty() ? rel : prefix + "/" + rel;
}

}  // namespace

uint64_t condaCaptureLimit(const std::string& p) {
  size_t at = p.rfind("/conda-meta/");
  if ((at == std::string::npos && p.rfind("conda-meta/", 0) != 0) || !p.ends_with(".json")) return 0;
  std::string_view rest = std::string_view(p).substr(at == std::string::npos ? 11 : at + 12);
  return rest.find('/') == std::string_view::npos ? (64u << 20) : 0;
}

Status parseCondaMeta(std::string_view text, const std::string& prefix, PackageDatabase& db) {
  KDK_TRY_STATUS(util::checkJsonNesting(text, "conda-meta record"));
  auto j = util::parseUntrustedJson(text);
  if (j.is_discarded() || !j.is_object()) return Error::Invalid("not a JSON object");
  auto str = [&](const nlohmann::json& o, const char* k) {
    auto it = o.find(k);
    return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  InstalledPackage p;
  p.name = str(j, "name");
  p.version = str(j, "version");
  if (p.name.empty() || p.version.empty()) return Error::Invalid("no name or version");
  p.architecture = str(j, "subdir");
  p.origin = str(j, "channel");
  if (auto b = str(j, "build"); !b.empty()) p.extra["build"] = b;
  if (auto u = str(j, "url"); !u.empty()) p.extra["url"] = u;
  // The hashes of the package archive conda installed from (what an SBOM lists as its hashes).
  for (const char* h : {"sha256", "md5"})
    if (auto v = util::toLower(str(j, h)); !v.empty() && v.find_first_not_of("0123456789abcdef") == std::string::npos)
      p.extra[h] = v;
  auto pd = j.find("paths_data");
  bool detailed = pd != j.end() && pd->is_object() && pd->contains("paths") && (*pd)["paths"].is_array();
  if (detailed) {
    for (const auto& e : (*pd)["paths"]) {
      if (!e.is_object()) continue;
      std::string rel = str(e, "_path");
      if (rel.empty() || rel.front() == '/' || rel.find("..") != std::string::npos) continue;
      OwnedFile f;
      f.package = p.name;
      f.path = join(prefix, rel);
      std::string type = str(e, "path_type");
      f.kind = type == "softlink"    ? OwnedFile::Kind::Symlink
               : type == "directory" ? OwnedFile::Kind::Dir
                                     : OwnedFile::Kind::File;
      // A prefix placeholder is rewritten at install: the package's sha256 and size are those of
      // the file before; sha256_in_prefix (recent conda) is the installed file's.
      bool rewritten = e.contains("prefix_placeholder");
      std::string inPrefix = str(e, "sha256_in_prefix"), sha = str(e, "sha256");
      if (f.kind == OwnedFile::Kind::File) {
        if (!inPrefix.empty())
          f.digest = util::toLower(inPrefix);
        else if (!rewritten)
          f.digest = util::toLower(sha);
        if (!f.digest.empty()) f.digestAlgorithm = "sha256";
        if (!rewritten && e.contains("size_in_bytes") && e["size_in_bytes"].is_number_integer())
          f.size = e["size_in_bytes"].get<int64_t>();
      }
      db.owned.insert(f.path);
      db.files.push_back(std::move(f));
    }
  } else if (auto files = j.find("files"); files != j.end() && files->is_array()) {
    for (const auto& e : *files)
      if (e.is_string() && !e.get<std::string>().empty()) {
        OwnedFile f;
        f.package = p.name;
        f.path = join(prefix, e.get<std::string>());
        f.kind = OwnedFile::Kind::Any;
        db.owned.insert(f.path);
        db.files.push_back(std::move(f));
      }
  }
  db.packages.push_back(std::move(p));
  return {};
}

std::vector<std::string> findCondaPrefixes(const oci::FsView& v) {
  std::vector<std::string> out;
  auto consider = [&](const std::string& prefix) {
    if (isDir(v, prefix + "/conda-meta")) out.push_back(prefix);
  };
  std::vector<std::string> roots(std::begin(kRoots), std::end(kRoots));
  for (const auto& home : v.list("home"))
    for (const char* d : {"/miniconda3", "/miniforge3", "/anaconda3", "/conda"}) roots.push_back("home/" + home + d);
  for (const auto& root : roots) {
    consider(root);
    for (const auto& env : v.list(root + "/envs")) consider(root + "/envs/" + env);
  }
  return out;
}

PackageDatabase readConda(const oci::FsView& v, const std::string& prefix, std::vector<std::string>& errors,
                          bool verify) {
  PackageDatabase db;
  db.manager = "conda";
  db.format = "conda-meta";
  db.location = prefix + "/conda-meta";
  for (const auto& name : v.list(db.location)) {
    if (!name.ends_with(".json")) continue;
    std::string p = db.location + "/" + name;
    db.present = true;
    auto t = v.readFile(p, 64u << 20);
    Status st = t.ok() ? parseCondaMeta(*t, prefix, db) : Status(t.error());
    if (!st.ok()) errors.push_back("/" + p + ": " + st.error().message);
  }
  if (verify) verifyOwnedFiles(v, db);
  return db;
}

}  // namespace kernodeck::os
