// The rpm database through librpm. librpm keeps global state (configuration, macros, the log),
// so every use is serialised by one mutex; its log goes to a callback, never to stderr.
#include "kernodeck/os/rpm.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <mutex>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"

#ifdef KERNODECK_HAVE_RPM
#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmfiles.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmlog.h>
#include <rpm/rpmmacro.h>
#include <rpm/rpmts.h>
#endif

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

#ifdef KERNODECK_HAVE_RPM
std::mutex& rpmMutex() {
  static std::mutex m;
  return m;
}

// The last error librpm logged, for the one-line message.
std::string& lastRpmError() {
  static std::string e;
  return e;
}

int logToString(rpmlogRec rec, rpmlogCallbackData) {
  if (rpmlogRecPriority(rec) <= RPMLOG_ERR) lastRpmError() = util::trim(rpmlogRecMessage(rec));
  return 0;  // handled: nothing printed
}

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

// One file of a package's header: its path is owned by the package; what rpm -V would check
// of it (kind, mode, size, digest, link target) goes into db.files.
void addHeaderFile(rpmfiles files, int i, const std::string& package, PackageDatabase& db) {
  char* fn = rpmfilesFN(files, i);
  std::string path = str(fn);
  free(fn);
  while (!path.empty() && path.front() == '/') path.erase(0, 1);
  if (path.empty()) return;
  db.owned.insert(path);
  rpmfileAttrs attrs = rpmfilesFFlags(files, i);
  rpmfileState state = rpmfilesFState(files, i);
  // rpm -V: files not installed (--excludedocs, tsflags=nodocs, other languages) or on a
  // shared network path are not verified; a %ghost's content is not the package's.
  if (state == RPMFILE_STATE_NOTINSTALLED || state == RPMFILE_STATE_NETSHARED || (attrs & RPMFILE_GHOST)) return;
  OwnedFile f;
  f.package = package;
  f.path = path;
  f.config = attrs & RPMFILE_CONFIG;
  f.missingOk = attrs & RPMFILE_MISSINGOK;
  rpm_mode_t mode = rpmfilesFMode(files, i);
  f.kind = S_ISREG(mode)   ? OwnedFile::Kind::File
           : S_ISDIR(mode) ? OwnedFile::Kind::Dir
           : S_ISLNK(mode) ? OwnedFile::Kind::Symlink
                           : OwnedFile::Kind::Other;
  rpmVerifyAttrs vf = rpmfilesVFlags(files, i);
  if (state == RPMFILE_STATE_REPLACED) vf = 0;  // replaced: only its existence can be checked
  if (state == RPMFILE_STATE_WRONGCOLOR) vf &= ~(RPMVERIFY_FILEDIGEST | RPMVERIFY_FILESIZE);
  if (vf & RPMVERIFY_MODE) f.mode = mode & 07777;
  if (f.kind == OwnedFile::Kind::File && (vf & RPMVERIFY_FILESIZE))
    f.size = static_cast<int64_t>(rpmfilesFSize(files, i));
  if (f.kind == OwnedFile::Kind::File && (vf & RPMVERIFY_FILEDIGEST)) {
    int algo = 0;
    size_t len = 0;
    const unsigned char* d = rpmfilesFDigest(files, i, &algo, &len);
    if (d && len) {
      f.digestAlgorithm = digestName(algo);
      f.digest = util::toHex(std::string_view(reinterpret_cast<const char*>(d), len));
      if (f.digestAlgorithm.empty()) f.digest.clear();
    }
  }
  if (f.kind == OwnedFile::Kind::Symlink && (vf & RPMVERIFY_LINKTO)) f.linkTarget = str(rpmfilesFLink(files, i));
  db.files.push_back(std::move(f));
}

// One installed package of the database, with the files its header lists (imported keys,
// gpg-pubkey, are not packages and are skipped).
void addPackage(Header h, PackageDatabase& db) {
  InstalledPackage p;
  p.name = str(headerGetString(h, RPMTAG_NAME));
  if (p.name == "gpg-pubkey") return;  // imported keys, not packages
  char* evr = headerGetAsString(h, RPMTAG_EVR);
  p.version = str(evr);
  free(evr);
  p.architecture = str(headerGetString(h, RPMTAG_ARCH));
  p.origin = str(headerGetString(h, RPMTAG_SOURCERPM));
  if (const char* vendor = headerGetString(h, RPMTAG_VENDOR)) p.extra["vendor"] = vendor;
  // The package's own digests, kept in its header: SHA-256 of the header and MD5 of header
  // and payload (what rpm -K checks).
  if (const char* sha = headerGetString(h, RPMTAG_SHA256HEADER)) p.extra["sha256header"] = sha;
  if (char* md5 = headerGetAsString(h, RPMTAG_SIGMD5)) {
    if (std::string_view(md5).size() == 32) p.extra["sigmd5"] = md5;
    free(md5);
  }
  rpmfiles files = rpmfilesNew(nullptr, h, RPMTAG_BASENAMES, RPMFI_KEEPHEADER);
  int n = files ? static_cast<int>(rpmfilesFC(files)) : 0;
  for (int i = 0; i < n; ++i) addHeaderFile(files, i, p.name, db);
  rpmfilesFree(files);
  db.packages.push_back(std::move(p));
}
#endif

}  // namespace

bool rpmSupported() {
#ifdef KERNODECK_HAVE_RPM
  return true;
#else
  return false;
#endif
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
#ifndef KERNODECK_HAVE_RPM
  return Error::Unsupported("this kernodeck was built without librpm (install librpm-dev and rebuild)");
#else
  std::lock_guard<std::mutex> lock(rpmMutex());
  static bool configured = [] {
    rpmlogSetCallback(logToString, nullptr);
    rpmlogSetMask(RPMLOG_UPTO(RPMLOG_ERR));
    return rpmReadConfigFiles(nullptr, nullptr) == 0;
  }();
  if (!configured) return Error::Unsupported("librpm could not read its configuration");
  lastRpmError().clear();
  rpmPushMacro(nullptr, "_dbpath", nullptr, dir.c_str(), RMIL_CMDLINE);
  rpmts ts = rpmtsCreate();
  rpmtsSetRootDir(ts, "/");
  // Reading is all we do: no signature or digest checks of the headers against a keyring.
  rpmtsSetVSFlags(ts, rpmtsVSFlags(ts) | RPMVSF_MASK_NODIGESTS | RPMVSF_MASK_NOSIGNATURES | RPMVSF_NOHDRCHK);
  struct Cleanup {
    rpmts ts;
    ~Cleanup() {
      rpmtsFree(ts);
      rpmPopMacro(nullptr, "_dbpath");
    }
  } cleanup{ts};
  if (rpmtsOpenDB(ts, O_RDONLY) != 0)
    return Error::Corrupt("librpm cannot open the rpm database" +
                          (lastRpmError().empty() ? "" : ": " + lastRpmError()));
  PackageDatabase db;
  db.manager = "rpm";
  db.present = true;
  rpmdbMatchIterator mi = rpmtsInitIterator(ts, RPMDBI_PACKAGES, nullptr, 0);
  if (!mi) {
    if (!lastRpmError().empty()) return Error::Corrupt("librpm cannot read the rpm database: " + lastRpmError());
    return db;  // an empty database
  }
  while (Header h = rpmdbNextIterator(mi)) addPackage(h, db);
  rpmdbFreeIterator(mi);
  return db;
#endif
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
