// See wheel_file.h. Two reads of one descriptor. The first hashes the whole file in one pass and
// keeps its last 8 MiB. The second is libarchive's seekable zip reader: the end-of-central-
// directory record, the central directory, then each member's local header in offset order (the
// data between them skipped by seeking, never read), and the data of RECORD alone, plus the first
// bytes of scripts under NAME.data/scripts/ and the bytes of a member RECORD gives no hash for.
// What lies in the kept tail is handed to libarchive from memory, so those bytes (for a wheel
// under 8 MiB, all of it; for a larger one its central directory and RECORD, written last) are
// exactly the bytes hashed; what lies before is read again, and fstat before the first read and
// after the second must agree (device, inode, size, mtime, ctime) or the file is refused.
#include "kernodeck/python/wheel_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <set>

#include "kernodeck/oci/archive_lib.h"
#include "kernodeck/python/metadata.h"
#include "kernodeck/python/record_check.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/path.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

constexpr size_t kMaxMembers = 1u << 20;
constexpr uint64_t kMaxExpansion = 64;              // uncompressed bytes per byte of the file
constexpr uint64_t kMaxUncompressed = 64ull << 30;  // all members
constexpr uint64_t kMaxRecordBytes = 16u << 20;
constexpr uint64_t kKeptTail = 8u << 20;  // of the file, kept from the hashing read
constexpr size_t kWheelBlock = 1 << 16;

using ArchivePtr = std::unique_ptr<struct archive, int (*)(struct archive*)>;

struct WheelFd {
  int fd = -1;
  ~WheelFd() {
    if (fd >= 0) ::close(fd);
  }
};

// The file as the zip reader sees it: [tailStart, size) from `tail`, as hashed; before that,
// read again from the descriptor.
struct WheelSource {
  int fd = -1;
  uint64_t size = 0;  // as fstat gave it before the hashing read, and as hashed
  uint64_t tailStart = 0;
  char* tail = nullptr;
  uint64_t pos = 0;
  std::vector<char> buf = std::vector<char>(kWheelBlock);
  bool changed = false;  // fewer or more bytes than `size`: not the file hashed
  bool ioError = false;
};

la_ssize_t wheelRead(struct archive*, void* data, const void** out) {
  auto* s = static_cast<WheelSource*>(data);
  if (s->pos >= s->size) return 0;
  if (s->pos >= s->tailStart) {
    *out = s->tail + (s->pos - s->tailStart);
    auto n = static_cast<la_ssize_t>(s->size - s->pos);
    s->pos = s->size;
    return n;
  }
  size_t want = static_cast<size_t>(std::min<uint64_t>(kWheelBlock, s->tailStart - s->pos));
  ssize_t n;
  do n = ::pread(s->fd, s->buf.data(), want, static_cast<off_t>(s->pos));
  while (n < 0 && errno == EINTR);
  if (n <= 0) {
    (n < 0 ? s->ioError : s->changed) = true;
    return -1;
  }
  *out = s->buf.data();
  s->pos += static_cast<uint64_t>(n);
  return n;
}

la_int64_t wheelSeek(struct archive*, void* data, la_int64_t offset, int whence) {
  auto* s = static_cast<WheelSource*>(data);
  int64_t base = whence == SEEK_SET ? 0 : static_cast<int64_t>(whence == SEEK_CUR ? s->pos : s->size), to = 0;
  if (__builtin_add_overflow(base, offset, &to) || to < 0 || static_cast<uint64_t>(to) > s->size) return ARCHIVE_FATAL;
  s->pos = static_cast<uint64_t>(to);
  return to;
}

la_int64_t wheelSkip(struct archive*, void* data, la_int64_t request) {
  auto* s = static_cast<WheelSource*>(data);
  uint64_t n = std::min<uint64_t>(request < 0 ? 0 : static_cast<uint64_t>(request), s->size - s->pos);
  s->pos += n;
  return static_cast<la_int64_t>(n);
}

// The memory of the kept tail, allocated once a thread and reused from one wheel to the next:
// a fresh buffer a wheel cost as much as hashing it (zero-filled, then faulted in page by page).
char* wheelTailBuffer() {
  thread_local std::unique_ptr<char[]> buf(new char[kKeptTail]);
  return buf.get();
}

// Hashes the whole file into `h` in one pass, keeping the bytes from s.tailStart on in s.tail.
// False on a read error (s.ioError) or when the file does not hold s.size bytes (s.changed).
bool wheelHashOnce(WheelSource& s, util::Hasher& h) {
  s.tailStart = s.size > kKeptTail ? s.size - kKeptTail : 0;
  s.tail = wheelTailBuffer();
  uint64_t at = 0;
  for (;;) {
    char* to = s.buf.data();
    size_t room = 1;  // at the end: one more byte would mean the file grew
    if (at < s.tailStart)
      room = static_cast<size_t>(std::min<uint64_t>(kWheelBlock, s.tailStart - at));
    else if (at < s.size)
      to = s.tail + (at - s.tailStart), room = static_cast<size_t>(std::min<uint64_t>(1u << 20, s.size - at));
    ssize_t n;
    do n = ::read(s.fd, to, room);
    while (n < 0 && errno == EINTR);
    if (n < 0) {
      s.ioError = true;
      return false;
    }
    if (n == 0) break;
    if (at >= s.size) {  // more bytes than fstat gave: it grew
      s.changed = true;
      return false;
    }
    h.update(to, static_cast<size_t>(n));
    at += static_cast<uint64_t>(n);
  }
  s.changed = at != s.size;
  return !s.changed;
}

std::string archiveError(struct archive* a) {
  const char* e = archive_error_string(a);
  return e ? util::printable(e, 120) : "no detail from libarchive";
}

// The error for a failed libarchive call: the file changed or could not be read, else `what`.
Error wheelZipError(const WheelSource& s, const std::string& shown, struct archive* a, const std::string& what) {
  if (s.changed) return Error::Corrupt(shown + " changed while it was read");
  if (s.ioError) return Error::Io(shown + ": " + std::string(std::strerror(errno)));
  return Error::Invalid(shown + what + archiveError(a));
}

// A zip reader over `s` from its start, or the error.
Result<ArchivePtr> openWheelZip(WheelSource& s, const std::string& shown) {
  s.pos = 0;
  ArchivePtr a(archive_read_new(), archive_read_free);
  archive_read_support_format_zip_seekable(a.get());
  archive_read_set_read_callback(a.get(), wheelRead);
  archive_read_set_seek_callback(a.get(), wheelSeek);
  archive_read_set_skip_callback(a.get(), wheelSkip);
  archive_read_set_callback_data(a.get(), &s);
  if (archive_read_open1(a.get()) != ARCHIVE_OK) return wheelZipError(s, shown, a.get(), " is not a zip: ");
  return a;
}

// The next regular member's name and declared (uncompressed) size: 1, or 0 at the end, or -1
// (the error in `err`).
int nextWheelMember(struct archive* a, const WheelSource& s, const std::string& shown, std::string& name,
                    uint64_t& size, Error& err) {
  for (;;) {
    struct archive_entry* e = nullptr;
    int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) return 0;
    if (r < ARCHIVE_WARN) {
      err = wheelZipError(s, shown, a, " is not a readable zip: ");
      return -1;
    }
    const char* raw = archive_entry_pathname(e);
    name = raw ? raw : "";
    size = archive_entry_size_is_set(e) && archive_entry_size(e) > 0 ? static_cast<uint64_t>(archive_entry_size(e)) : 0;
    if (archive_entry_filetype(e) != AE_IFDIR && !name.ends_with("/")) return 1;
  }
}

// Pip's rule for a script whose #!python line it rewrites: NAME.data/scripts/...
bool isWheelScript(const std::string& path) {
  size_t slash = path.find('/');
  return slash != std::string::npos && path.substr(0, slash).ends_with(".data") &&
         path.compare(slash + 1, 8, "scripts/") == 0 && path.size() > slash + 9;
}

// The current member's data into `out` while it is at most `limit` bytes (`stopAt` > 0: only
// that many first bytes); false with `err` set when it is corrupt or over `limit`.
bool readWheelData(struct archive* a, const WheelSource& s, const std::string& shown, const std::string& name,
                   uint64_t limit, size_t stopAt, std::string& out, Error& err) {
  char buf[1 << 14];
  for (;;) {
    la_ssize_t n = archive_read_data(a, buf, stopAt ? std::min(sizeof buf, stopAt - out.size()) : sizeof buf);
    if (n < 0) {
      err = wheelZipError(s, shown, a, ": member " + util::printable(name, 120) + " is corrupt: ");
      return false;
    }
    if (n == 0 || (stopAt && out.size() + static_cast<size_t>(n) >= stopAt)) {
      out.append(buf, static_cast<size_t>(n));
      return true;
    }
    if (out.size() + static_cast<size_t>(n) > limit) {
      err = Error::Invalid(shown + ": " + util::printable(name, 120) + " is over " + std::to_string(limit) + " bytes");
      return false;
    }
    out.append(buf, static_cast<size_t>(n));
  }
}

// Every regular member into out.members (path confined, declared size within `maxTotal` in all),
// out.distInfo and the RECORD's text into `record`; scripts' first bytes read for #!python.
Status listWheelMembers(struct archive* a, const WheelSource& s, const std::string& shown, uint64_t maxTotal,
                        WheelFile& out, std::string& record) {
  uint64_t total = 0, size = 0;
  std::string name;
  Error err = Error::Invalid("");
  for (int r; (r = nextWheelMember(a, s, shown, name, size, err)) != 0;) {
    if (r < 0) return err;
    if (out.members.size() >= kMaxMembers) return Error::Invalid(shown + " has more than 2^20 members");
    if ((total += size) > maxTotal || size > maxTotal)
      return Error::Invalid(shown + " expands to more than " + std::to_string(maxTotal) + " bytes");
    auto clean = util::cleanConfined(name);
    if (!clean || clean->empty() || name.starts_with("/"))
      return Error::Invalid(shown + ": member '" + util::printable(name, 120) + "' would leave the install directory");
    WheelMember m;
    m.path = *clean, m.size = size;
    size_t slash = m.path.find('/');
    std::string top = slash == std::string::npos ? "" : m.path.substr(0, slash);
    if (top.ends_with(".dist-info") && m.path == top + "/RECORD") {
      if (!out.distInfo.empty()) return Error::Invalid(shown + " has more than one .dist-info/RECORD");
      out.distInfo = top;
      if (!readWheelData(a, s, shown, name, kMaxRecordBytes, 0, record, err)) return err;
    } else if (isWheelScript(m.path)) {
      std::string head;
      if (!readWheelData(a, s, shown, name, 8, 8, head, err)) return err;
      m.pythonShebang = head.starts_with("#!python");
    }
    out.members.push_back(std::move(m));
  }
  return {};
}

// The SHA-256 (hex) the wheel's RECORD gives each path, and every path it lists with some hash.
void wheelRecordHashes(const std::string& record, std::map<std::string, std::string>& sha256,
                       std::set<std::string>& hashed) {
  RecordReader reader(record);
  RecordRowView row;
  while (reader.next(row)) {
    auto clean = util::cleanConfined(row.path);
    if (!clean || row.digest.empty()) continue;
    hashed.insert(*clean);
    if (row.algorithm != "sha256") continue;
    bool hex = false;
    std::string digest = decodeRecordDigest(row.algorithm, row.digest, &hex);
    if (!digest.empty()) sha256[*clean] = digest;
  }
}

// A second pass of the zip: the bytes of the members at the indexes `which` (of out.members, in
// the same order) inflated and hashed, within `maxTotal` bytes in all.
Status hashWheelMembers(WheelSource& s, const std::string& shown, uint64_t maxTotal, const std::set<size_t>& which,
                        WheelFile& out) {
  KDK_TRY_ASSIGN(ArchivePtr a, openWheelZip(s, shown));
  uint64_t total = 0, size = 0;
  std::string name;
  Error err = Error::Invalid("");
  std::vector<char> buf(kWheelBlock);
  size_t i = 0;
  for (int r; (r = nextWheelMember(a.get(), s, shown, name, size, err)) != 0; ++i) {
    if (r < 0) return err;
    if (i >= out.members.size() || util::cleanConfined(name) != out.members[i].path)
      return Error::Corrupt(shown + " changed while it was read");
    if (!which.count(i)) continue;
    util::Hasher h("sha256");
    for (;;) {
      la_ssize_t n = archive_read_data(a.get(), buf.data(), buf.size());
      if (n < 0) return wheelZipError(s, shown, a.get(), ": member " + util::printable(name, 120) + " is corrupt: ");
      if (n == 0) break;
      if ((total += static_cast<uint64_t>(n)) > maxTotal)
        return Error::Invalid(shown + " expands to more than " + std::to_string(maxTotal) + " bytes");
      h.update(buf.data(), static_cast<size_t>(n));
    }
    out.members[i].sha256 = h.hex();
  }
  if (i != out.members.size()) return Error::Corrupt(shown + " changed while it was read");
  return {};
}

// Whether two fstat results describe the same unchanged file.
bool sameWheelFile(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec &&
         a.st_ctim.tv_sec == b.st_ctim.tv_sec && a.st_ctim.tv_nsec == b.st_ctim.tv_nsec;
}

}  // namespace

Result<WheelFile> readWheelFile(const std::string& path, const std::vector<std::string>& accepted) {
  std::string shown = util::printable(path, 200);
  WheelFd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (f.fd < 0)
    return errno == ENOENT ? Error::NotFound(shown + " does not exist")
                           : Error::Io(shown + ": " + std::string(std::strerror(errno)));
  struct stat before {};
  if (::fstat(f.fd, &before) != 0 || !S_ISREG(before.st_mode)) return Error::Invalid(shown + " is not a regular file");
  WheelSource s;
  s.fd = f.fd, s.size = static_cast<uint64_t>(before.st_size);
  WheelFile out;
  {
    util::Hasher h("sha256");
    if (!wheelHashOnce(s, h))
      return s.changed ? Error::Corrupt(shown + " changed while it was read")
                       : Error::Io(shown + ": " + std::string(std::strerror(errno)));
    out.sha256 = h.hex();
  }
  if (std::find(accepted.begin(), accepted.end(), out.sha256) == accepted.end())
    return Error::Corrupt(shown + " has sha256 " + out.sha256 + ", not the lock's " +
                          (accepted.size() == 1 ? accepted[0] : util::join(accepted, " or ")));

  const uint64_t maxTotal = std::min<uint64_t>(kMaxUncompressed, kMaxExpansion * s.size + (1u << 20));
  std::string record;
  {
    KDK_TRY_ASSIGN(ArchivePtr a, openWheelZip(s, shown));
    KDK_TRY_STATUS(listWheelMembers(a.get(), s, shown, maxTotal, out, record));
  }
  if (out.distInfo.empty()) return Error::Invalid(shown + " has no .dist-info/RECORD: not a wheel");
  // Each member takes its RECORD hash; RECORD itself none (pip writes its own); any other the
  // RECORD gives no SHA-256 for (its signatures; a member it lists otherwise or not at all) is
  // read and hashed.
  std::map<std::string, std::string> recorded;
  std::set<std::string> hashed;
  wheelRecordHashes(record, recorded, hashed);
  const std::string recordPath = out.distInfo + "/RECORD";
  std::set<size_t> read;
  for (size_t i = 0; i < out.members.size(); ++i) {
    auto& m = out.members[i];
    if (m.path == recordPath) continue;
    auto it = recorded.find(m.path);
    if (it != recorded.end()) {
      m.sha256 = it->second;
      continue;
    }
    read.insert(i);
    if (!hashed.count(m.path) && m.path != out.distInfo + "/RECORD.jws" && m.path != out.distInfo + "/RECORD.p7s")
      out.unrecorded.push_back(m.path);
  }
  if (!read.empty()) KDK_TRY_STATUS(hashWheelMembers(s, shown, maxTotal, read, out));
  struct stat after {};
  if (::fstat(f.fd, &after) != 0 || !sameWheelFile(before, after))
    return Error::Corrupt(shown + " changed while it was read");
  return out;
}

}  // namespace kernodeck::python
