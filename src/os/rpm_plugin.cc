// libkernodeck_rpm.so: the part of the rpm reader that calls librpm (see rpm_abi.h), loaded by
// rpm.cc with dlopen when an image has an rpm database. librpm keeps global state
// (configuration, macros, the log), so every use is serialised by one mutex; its log goes to a
// callback, never to stderr.
#include <fcntl.h>
#include <rpm/header.h>
#include <rpm/rpmdb.h>
#include <rpm/rpmfiles.h>
#include <rpm/rpmlib.h>
#include <rpm/rpmlog.h>
#include <rpm/rpmmacro.h>
#include <rpm/rpmts.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "kernodeck/os/rpm_abi.h"

namespace kernodeck::os::rpmplugin {

namespace {

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
  if (rpmlogRecPriority(rec) <= RPMLOG_ERR) {
    std::string m = rpmlogRecMessage(rec);
    while (!m.empty() && (m.back() == '\n' || m.back() == ' ' || m.back() == '\t')) m.pop_back();
    lastRpmError() = m;
  }
  return 0;  // handled: nothing printed
}

// One file of a package's header: what rpm -V would check of it (kind, mode, size, digest,
// link target), handed to the sink.
void addHeaderFile(rpmfiles files, int i, const Sink& sink) {
  char* fn = rpmfilesFN(files, i);
  std::string path = fn ? fn : "";
  free(fn);
  FileFacts f{};
  f.path = path.c_str();
  rpmfileAttrs attrs = rpmfilesFFlags(files, i);
  rpmfileState state = rpmfilesFState(files, i);
  // rpm -V: files not installed (--excludedocs, tsflags=nodocs, other languages) or on a
  // shared network path are not verified; a %ghost's content is not the package's.
  f.verify = !(state == RPMFILE_STATE_NOTINSTALLED || state == RPMFILE_STATE_NETSHARED || (attrs & RPMFILE_GHOST));
  f.config = (attrs & RPMFILE_CONFIG) != 0;
  f.missing_ok = (attrs & RPMFILE_MISSINGOK) != 0;
  rpm_mode_t mode = rpmfilesFMode(files, i);
  f.kind = S_ISREG(mode) ? 0 : S_ISDIR(mode) ? 1 : S_ISLNK(mode) ? 2 : 3;
  rpmVerifyAttrs vf = rpmfilesVFlags(files, i);
  if (state == RPMFILE_STATE_REPLACED) vf = 0;  // replaced: only its existence can be checked
  if (state == RPMFILE_STATE_WRONGCOLOR) vf &= ~(RPMVERIFY_FILEDIGEST | RPMVERIFY_FILESIZE);
  if (vf & RPMVERIFY_MODE) {
    f.has_mode = 1;
    f.mode = mode & 07777;
  }
  if (f.kind == 0 && (vf & RPMVERIFY_FILESIZE)) {
    f.has_size = 1;
    f.size = static_cast<int64_t>(rpmfilesFSize(files, i));
  }
  if (f.kind == 0 && (vf & RPMVERIFY_FILEDIGEST)) {
    int algo = 0;
    size_t len = 0;
    const unsigned char* d = rpmfilesFDigest(files, i, &algo, &len);
    if (d && len) {
      f.digest_algorithm = algo;
      f.digest = d;
      f.digest_len = len;
    }
  }
  if (f.kind == 2 && (vf & RPMVERIFY_LINKTO)) f.link_target = rpmfilesFLink(files, i);
  sink.file(sink.ctx, &f);
}

// One installed package of the database, then the files its header lists.
void addPackage(Header h, const Sink& sink) {
  PackageFacts p{};
  p.name = headerGetString(h, RPMTAG_NAME);
  char* evr = headerGetAsString(h, RPMTAG_EVR);
  p.evr = evr;
  p.architecture = headerGetString(h, RPMTAG_ARCH);
  p.source_rpm = headerGetString(h, RPMTAG_SOURCERPM);
  p.vendor = headerGetString(h, RPMTAG_VENDOR);
  // The package's own digests, kept in its header: SHA-256 of the header and MD5 of header
  // and payload (what rpm -K checks).
  p.sha256_header = headerGetString(h, RPMTAG_SHA256HEADER);
  char* md5 = headerGetAsString(h, RPMTAG_SIGMD5);
  p.sigmd5 = md5;
  sink.package(sink.ctx, &p);
  free(evr);
  free(md5);
  rpmfiles files = rpmfilesNew(nullptr, h, RPMTAG_BASENAMES, RPMFI_KEEPHEADER);
  int n = files ? static_cast<int>(rpmfilesFC(files)) : 0;
  for (int i = 0; i < n; ++i) addHeaderFile(files, i, sink);
  rpmfilesFree(files);
}

void copyError(char* error, size_t size) {
  if (size == 0) return;
  std::snprintf(error, size, "%s", lastRpmError().c_str());
}

int readDatabase(const char* dir, const Sink* sink, char* error, size_t errorSize) {
  std::lock_guard<std::mutex> lock(rpmMutex());
  if (errorSize) error[0] = '\0';
  static bool configured = [] {
    rpmlogSetCallback(logToString, nullptr);
    rpmlogSetMask(RPMLOG_UPTO(RPMLOG_ERR));
    return rpmReadConfigFiles(nullptr, nullptr) == 0;
  }();
  if (!configured) return kReadConfig;
  lastRpmError().clear();
  rpmPushMacro(nullptr, "_dbpath", nullptr, dir, RMIL_CMDLINE);
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
  if (rpmtsOpenDB(ts, O_RDONLY) != 0) {
    copyError(error, errorSize);
    return kReadOpen;
  }
  rpmdbMatchIterator mi = rpmtsInitIterator(ts, RPMDBI_PACKAGES, nullptr, 0);
  if (!mi) {
    copyError(error, errorSize);
    return lastRpmError().empty() ? kReadOk : kReadIterate;  // else an empty database
  }
  while (Header h = rpmdbNextIterator(mi)) addPackage(h, *sink);
  rpmdbFreeIterator(mi);
  return kReadOk;
}

}  // namespace

}  // namespace kernodeck::os::rpmplugin

extern "C" __attribute__((visibility("default"))) const kernodeck::os::rpmplugin::RpmPluginAbi* kdk_rpm_plugin_abi() {
  namespace rp = kernodeck::os::rpmplugin;
  static const rp::RpmPluginAbi abi{rp::kAbiVersion, sizeof(rp::RpmPluginAbi), RPMVERSION, &rp::readDatabase};
  return &abi;
}
