// See dossier_carry.h.
#include "dossier_carry.h"

#include <sys/stat.h>

#include <filesystem>
#include <map>

#include "code_archive.h"
#include "dossier_layout.h"
#include "kernodeck/python/version.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using report::Severity;

namespace {

// The folders a path the reference names may lie in: the code root (the recorded repository,
// else the reference's folder) and each --input-root, links resolved.
std::vector<std::filesystem::path> allowedRoots(const DossierOptions& o) {
  const Reference& ref = o.reference;
  std::vector<std::string> given = o.inputRoots;
  given.push_back(ref.code.repo.empty() ? (ref.baseDir.empty() ? "." : ref.baseDir) : ref.fromReference(ref.code.repo));
  std::vector<std::filesystem::path> roots;
  for (const auto& g : given) {
    std::error_code ec;
    auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(g, ec), ec);
    if (!ec) roots.push_back(p);
  }
  return roots;
}

// `path` (as the reference names it, resolved) when it lies inside one of `roots`, links
// followed; an Unsafe error naming it otherwise.
Result<std::string> confined(const DossierOptions& o, const std::vector<std::filesystem::path>& roots,
                             const std::string& what, const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(o.reference.resolve(path), ec), ec);
  if (!ec)
    for (const auto& root : roots) {
      auto rel = p.lexically_relative(root);
      if (!rel.empty() && *rel.begin() != "..") return p.string();
    }
  return Error::Unsafe(what + ": '" + util::printable(path, 200) +
                       "' lies outside the code root and every --input-root: it is not carried");
}

// A carried wheel against the reference's lock (reference init --lock): a wheel the lock names
// with another hash, or a wheel of a locked package that the lock does not name (another
// version or build), is a dossier.wheel.changed error naming it.
void checkAgainstReferenceLock(const Reference& ref, const std::string& file, const std::string& name,
                               const std::string& sha, report::Report& r) {
  if (!ref.packages.lock) return;
  std::string key = python::canonicalizeName(name);
  const python::LockedPackage* locked = nullptr;
  for (const auto& p : ref.packages.lock->packages) {
    if (python::canonicalizeName(p.name) == key) locked = &p;
    for (const auto& w : p.wheels) {
      if (w.name != file) continue;
      if (w.sha256 != sha)
        r.add("dossier.wheel.changed", Severity::Error,
              "wheel " + file + " has sha256 " + sha.substr(0, 12) + ", but the reference's lock (" +
                  ref.packages.lockPath + ") names it with sha256 " + w.sha256.substr(0, 12) +
                  ": it is not the distribution the reference was made with",
              {{"name", file}, {"package", p.name}, {"path", "wheels/" + file}});
      return;
    }
  }
  if (locked)
    r.add("dossier.wheel.changed", Severity::Error,
          "wheel " + file + " is not one the reference's lock (" + ref.packages.lockPath + ") names for " +
              locked->name + " " + locked->version + ": it is not the distribution the reference was made with",
          {{"name", file}, {"package", locked->name}, {"path", "wheels/" + file}});
}

// --wheels DIR: each wheel of the folder (regular files named as wheels; anything else is an
// error) carried under wheels/, and pylock.toml listing each with its sha256.
Status carryWheels(const std::string& dir, const std::string& dossier, const Reference& ref, report::Report& r) {
  python::Lock lock;
  lock.lockVersion = "1.0";
  std::map<std::pair<std::string, std::string>, python::LockedPackage> packages;
  std::vector<std::string> files;
  for (const auto& f : util::listFilesRecursive(dir))
    if (f.ends_with(".whl")) files.push_back(f);
  if (files.empty()) return Error::NotFound("--wheels " + dir + " holds no wheel (*.whl)");
  for (const auto& f : files) {
    std::string name, version;
    if (f.find('/') != std::string::npos || !python::wheelNameVersion(f, name, version))
      return Error::Invalid("--wheels: " + f + " is not a wheel's file name (NAME-VERSION-TAGS.whl at the top)");
    KDK_TRY_STATUS(copyBeneath(dir + "/" + f, dossier, "wheels/" + f));
    std::string sha = fileSha(dossier + "/wheels/" + f);
    checkAgainstReferenceLock(ref, f, name, sha, r);
    python::LockedPackage& p = packages[{name, version}];
    p.name = name, p.version = version;
    python::LockedWheel w;
    w.name = f, w.path = "wheels/" + f, w.sha256 = sha;
    p.wheels.push_back(std::move(w));
  }
  for (auto& [k, p] : packages) lock.packages.push_back(std::move(p));
  r.section("wheels") = {{"count", files.size()}, {"lock", "pylock.toml"}};
  return util::writeBeneath(dossier, "pylock.toml", python::writePylock(lock));
}

}  // namespace

Status carry(const DossierOptions& o, report::Report& r) {
  const Reference& ref = o.reference;
  for (const auto& c : ref.code.configs) {
    std::string base = c.path.substr(c.path.rfind('/') + 1);
    if (base.empty() || base == "." || base == "..") continue;
    KDK_TRY_ASSIGN(std::string path, confined(o, allowedRoots(o), "config", c.path));
    auto t = util::readFileLimited(path, 16u << 20);
    if (t.ok()) KDK_TRY_STATUS(util::writeBeneath(o.dir, "config/" + base, report::redactText(*t)));
  }
  const std::vector<std::filesystem::path> roots = allowedRoots(o);
  if (!ref.code.repo.empty()) {
    std::string repo = ref.fromReference(ref.code.repo);
    if (Status st = archiveRevision(repo, ref.code.revision, o.dir + "/code.tar"); !st.ok())
      r.add("dossier.code.not_carried", Severity::Warning,
            "the code is not carried (" + st.error().message + "): a replay clones it with --repo PATH",
            {{"path", repo}});
  }
  for (const auto* list : {&ref.data, &ref.weights}) {
    std::string kind = list == &ref.data ? "data" : "weights";
    for (const auto& in : *list) {
      std::string what = kind + " '" + in.name + "' (" + in.path + ")";
      if (!plainName(in.name))
        return Error::Invalid(what + ": the name is not a plain file name, so it cannot be carried");
      KDK_TRY_ASSIGN(std::string src, confined(o, roots, what, in.path));
      KDK_TRY_STATUS(copyBeneath(src, o.dir, carriedInput(kind, in.name)));
      auto h = hashPath(o.dir + "/" + carriedInput(kind, in.name));
      if (!h.ok() || h->sha256 != in.sha256)
        r.add("dossier.input.changed", Severity::Error,
              what +
                  " no longer has the reference's hash: the dossier carries it as it is now, and a replay will stop at "
                  "placing it",
              {{"path", in.path}, {"name", in.name}});
    }
  }
  if (ref.result.declared) {
    KDK_TRY_ASSIGN(std::string expected, confined(o, roots, "the expected outputs", ref.result.expected));
    KDK_TRY_STATUS(copyBeneath(expected, o.dir, "expected"));
  }
  if (!o.wheels.empty()) KDK_TRY_STATUS(carryWheels(o.wheels, o.dir, ref, r));
  for (const auto& inc : o.includes) {
    std::string base = std::filesystem::path(inc).lexically_normal().filename().string();
    if (base.empty()) base = std::filesystem::path(inc).lexically_normal().parent_path().filename().string();
    if (base.empty() || base == "." || base == "..") return Error::Invalid("--include " + inc + " names no file");
    KDK_TRY_STATUS(copyBeneath(inc, o.dir, "files/" + base));
  }
  return {};
}

std::string fileSha(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  auto h = hashPath(path);
  return h.ok() ? h->sha256 : "";
}

Status copyBeneath(const std::string& src, const std::string& root, const std::string& rel) {
  struct stat st {};
  if (::lstat(src.c_str(), &st) != 0) return Error::NotFound(src + " does not exist");
  std::vector<std::string> files;
  if (S_ISREG(st.st_mode))
    files.push_back("");
  else if (S_ISDIR(st.st_mode))
    files = util::listFilesRecursive(src);
  else
    return Error::Invalid(src + " is neither a file nor a folder");
  for (const auto& f : files) {
    std::string from = f.empty() ? src : src + "/" + f;
    struct stat fs {};
    if (::lstat(from.c_str(), &fs) != 0 || !S_ISREG(fs.st_mode)) return Error::Invalid(from + " is not a regular file");
    KDK_TRY_ASSIGN(std::string bytes, util::readFileLimited(from, 8ull << 30));
    KDK_TRY_STATUS(util::writeBeneath(root, f.empty() ? rel : rel + "/" + f, bytes, fs.st_mode & 0755));
  }
  return {};
}

}  // namespace kernodeck::record
