// The rpm database: found in the image's view and copied out here; read by librpm inside the rpm
// plugin (libkernodeck_rpm.so, rpm_plugin.cc), which this file opens with dlopen on first use so
// that a command reading no rpm database never loads librpm and its closure.
#include "kernodeck/os/rpm.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <climits>
#include <cstdio>
#include <filesystem>
#include <mutex>

#include "kernodeck/os/rpm_abi.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/self_path.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::os {

namespace {

// Where distributions keep the database; the first that holds one wins.
const char* const kDbDirs[] = {"usr/lib/sysimage/rpm", "var/lib/rpm"};
// The files of each format librpm reads here (ndb, SUSE's Packages.db, is not built into
// Debian's librpm 4.18: reported as unreadable).
const char* const kSqlite = "rpmdb.sqlite";
const char* const kBdb = "Packages";
const char* const kNdb = "Packages.db";
constexpr uint64_t kDbLimit = 1ull << 30;

namespace rp = rpmplugin;

// OpenSSL's name of rpm's digest algorithm number (PGPHASHALGO), empty for one not compared.
const char* digestName(int algo) {
  switch (algo) {
    case 1: return "md5";
    case 2: return "sha1";
    case 8: return "sha256";
    case 9: return "sha384";
    case 10: return "sha512";
    case 11: return "sha224";
    default: return "";
  }
}

std::string str(const char* s) { return s ? s : ""; }

// Where the plugin is looked for (util::pluginPaths): from the running binary alone; unlike the
// LibTorch plugin, no environment override.
std::vector<std::string> pluginCandidates() { return util::pluginPaths(rp::kFileName); }

struct Loaded {
  const rp::RpmPluginAbi* abi = nullptr;
  std::string error;
};

// The process's plugin, searched and opened once, on first use.
const Loaded& loaded() {
  static Loaded p;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates = pluginCandidates();
    for (const auto& c : candidates) {
      if (::access(c.c_str(), F_OK) != 0) continue;
      auto r = loadRpmPlugin(c);
      if (r) {
        p.abi = *r;
        p.error.clear();
        return;
      }
      if (p.error.empty()) p.error = r.error().message;
    }
    if (p.error.empty())
      p.error = std::string("this kernodeck has no rpm plugin ") + rp::kFileName + ": " +
                (candidates.empty() ? "the executable's directory is unknown"
                                    : "neither " + util::join(candidates, " nor ") + " exists") +
                " (install the kernodeck-rpm package, or build with librpm-dev); without it the OS packages of an "
                "rpm-based image (RHEL, Fedora, SUSE, Amazon Linux) are not read";
  });
  return p;
}

// What one read collects: the database, and the package whose files the plugin reports next.
struct Collect {
  PackageDatabase* db = nullptr;
  std::string package;
  bool skip = false;  // gpg-pubkey: an imported key, not a package (nor its files)
};

void onPackage(void* ctx, const rp::PackageFacts* f) {
  auto& c = *static_cast<Collect*>(ctx);
  InstalledPackage p;
  p.name = str(f->name);
  c.package = p.name;
  c.skip = p.name == "gpg-pubkey";
  if (c.skip) return;
  p.version = str(f->evr);
  p.architecture = str(f->architecture);
  p.origin = str(f->source_rpm);
  if (f->vendor) p.extra["vendor"] = f->vendor;
  // The package's own digests, kept in its header: SHA-256 of the header and MD5 of header
  // and payload (what rpm -K checks).
  if (f->sha256_header) p.extra["sha256header"] = f->sha256_header;
  if (f->sigmd5 && std::string_view(f->sigmd5).size() == 32) p.extra["sigmd5"] = f->sigmd5;
  c.db->packages.push_back(std::move(p));
}

// One file of the current package: its path is owned by the package; what rpm -V would check
// of it goes into db.files.
void onFile(void* ctx, const rp::FileFacts* f) {
  auto& c = *static_cast<Collect*>(ctx);
  if (c.skip) return;
  std::string path = str(f->path);
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  if (path.empty()) return;
  c.db->owned.insert(path);
  if (!f->verify) return;
  OwnedFile o;
  o.package = c.package;
  o.path = path;
  o.config = f->config;
  o.missingOk = f->missing_ok;
  o.kind = f->kind == 0   ? OwnedFile::Kind::File
           : f->kind == 1 ? OwnedFile::Kind::Dir
           : f->kind == 2 ? OwnedFile::Kind::Symlink
                          : OwnedFile::Kind::Other;
  if (f->has_mode) o.mode = f->mode & 07777;
  if (f->has_size) o.size = f->size;
  if (f->digest && f->digest_len) {
    o.digestAlgorithm = digestName(f->digest_algorithm);
    if (!o.digestAlgorithm.empty())
      o.digest = util::toHex(std::string_view(reinterpret_cast<const char*>(f->digest), f->digest_len));
  }
  o.linkTarget = str(f->link_target);
  c.db->files.push_back(std::move(o));
}

}  // namespace

Result<const rpmplugin::RpmPluginAbi*> loadRpmPlugin(const std::string& path) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* e = ::dlerror();
    return Error::Unsupported("the rpm plugin cannot be loaded: " + (e ? std::string(e) : path));
  }
  auto refuse = [&](std::string why) -> Result<const rp::RpmPluginAbi*> {
    ::dlclose(handle);
    return Error::Unsupported(path + ": " + why);
  };
  using Entry = const rp::RpmPluginAbi* (*)();
  auto entry = reinterpret_cast<Entry>(::dlsym(handle, rp::kEntrySymbol));
  if (!entry) return refuse(std::string("not a Kernodeck rpm plugin (no ") + rp::kEntrySymbol + " symbol)");
  const rp::RpmPluginAbi* abi = entry();
  if (!abi) return refuse("the rpm plugin returned no interface");
  // abi_version and struct_size lead the struct in every version, so they can be read first.
  if (abi->abi_version != rp::kAbiVersion || abi->struct_size != sizeof(rp::RpmPluginAbi))
    return refuse("rpm plugin ABI version " + std::to_string(abi->abi_version) + " (" +
                  std::to_string(abi->struct_size) + " bytes), this kernodeck expects version " +
                  std::to_string(rp::kAbiVersion) + " (" + std::to_string(sizeof(rp::RpmPluginAbi)) +
                  " bytes): install the plugin built with this kernodeck");
  if (!abi->read_database || !abi->librpm_version) return refuse("the rpm plugin lacks its entry points");
  return abi;
}

bool rpmSupported() { return loaded().abi != nullptr; }

std::string librpmVersion() {
  const Loaded& p = loaded();
  return p.abi ? std::string(p.abi->librpm_version) : std::string();
}

const std::string& rpmPluginError() { return loaded().error; }

std::string rpmPluginIdentity() {
  // Every candidate, not the first that exists: when the first is refused (not a library,
  // another ABI) the second is the one loaded, and a change to either must change the key.
  std::string id;
  for (const auto& c : pluginCandidates()) {
    struct stat st {};
    if (::stat(c.c_str(), &st) != 0) continue;
    id += c + " " + std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
          std::to_string(st.st_mtim.tv_nsec) + ";";
  }
  return id.empty() ? "none" : id;
}

uint64_t rpmCaptureLimit(const std::string& p) {
  for (const char* dir : kDbDirs) {
    std::string d = std::string(dir) + "/";
    if (p.rfind(d, 0) != 0) continue;
    std::string base = p.substr(d.size());
    if (base == kSqlite || base == std::string(kSqlite) + "-wal" || base == kBdb || base == kNdb) return kDbLimit;
  }
  return 0;
}

Result<PackageDatabase> readRpmDatabaseDir(const std::string& dir) {
  const Loaded& p = loaded();
  if (!p.abi) return Error::Unsupported(p.error);
  PackageDatabase db;
  db.manager = "rpm";
  db.present = true;
  Collect c;
  c.db = &db;
  rp::Sink sink{&c, &onPackage, &onFile};
  char error[4096];
  int status = p.abi->read_database(dir.c_str(), &sink, error, sizeof error);
  std::string e(util::trim(error));
  switch (status) {
    case rp::kReadOk: return db;
    case rp::kReadConfig: return Error::Unsupported("librpm could not read its configuration");
    case rp::kReadOpen: return Error::Corrupt("librpm cannot open the rpm database" + (e.empty() ? "" : ": " + e));
    default: return Error::Corrupt("librpm cannot read the rpm database: " + e);
  }
}

PackageDatabase readRpm(const oci::FsView& v, bool verify) {
  PackageDatabase db;
  db.manager = "rpm";
  for (const char* dir : kDbDirs) {
    auto resolved = v.resolve(dir);
    if (!resolved.ok()) continue;
    auto has = [&](const std::string& name) {
      auto n = v.info(*resolved + "/" + name);
      return n && (n->kind == oci::EntryKind::File || n->kind == oci::EntryKind::Hardlink);
    };
    std::vector<std::string> names;
    if (has(kSqlite)) {
      db.format = "sqlite";
      names = {kSqlite, std::string(kSqlite) + "-wal"};
    } else if (has(kBdb)) {
      db.format = "bdb";
      names = {kBdb};
    } else if (has(kNdb)) {
      db.format = "ndb";
    } else {
      continue;
    }
    db.present = true;
    db.location = dir;
    if (db.format == "ndb") {
      db.error = "/" + std::string(dir) + "/" + kNdb + " is an ndb database, which Debian's librpm cannot read";
      return db;
    }
    // Without the plugin nothing can read it: said as such (an error, never a clean image).
    if (!rpmSupported()) {
      db.error = "/" + std::string(dir) + ": " + rpmPluginError();
      db.readerUnavailable = true;
      return db;
    }
    // A private directory, readable by us alone, holding copies of the database files only.
    std::string tmpl = (std::filesystem::temp_directory_path() / "kernodeck-rpmdb-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) {
      db.error = "cannot create a temporary directory for the rpm database";
      return db;
    }
    struct Remove {
      std::string dir;
      ~Remove() {
        std::error_code ec;
        std::filesystem::remove_all(dir, ec);
      }
    } remove{tmpl};
    for (const auto& name : names) {
      std::string inImage = *resolved + "/" + name;
      if (!has(name)) continue;
      auto content = v.readResolved(inImage, kDbLimit);
      if (!content.ok()) {
        db.error = "cannot read /" + inImage + ": " + content.error().message;
        return db;
      }
      std::string out = tmpl + "/" + name;
      int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
      bool ok = fd >= 0 && ::write(fd, content->data(), content->size()) == static_cast<ssize_t>(content->size());
      if (fd >= 0) ok = (::close(fd) == 0) && ok;
      if (!ok) {
        db.error = "cannot copy /" + inImage + " to a temporary directory";
        return db;
      }
    }
    auto read = readRpmDatabaseDir(tmpl);
    if (!read.ok()) {
      db.error = "/" + std::string(dir) + ": " + read.error().message;
      return db;
    }
    std::string format = db.format, location = db.location;
    db = std::move(*read);
    db.format = format;
    db.location = location;
    if (verify) verifyOwnedFiles(v, db);
    return db;
  }
  return db;
}

}  // namespace kernodeck::os
