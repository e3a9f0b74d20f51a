// See wheel_file.h. The zip is read as a stream from the descriptor that was hashed (no seek
// callback: libarchive's streaming zip reader, which takes the local headers in order), so every
// byte parsed is a byte of the file whose hash was checked; a second hash over the same reads
// says the file did not change in between.
#include "kernodeck/python/wheel_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>

#include "kernodeck/oci/archive_lib.h"
#include "kernodeck/python/metadata.h"
#include "kernodeck/python/record_check.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/path.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

constexpr size_t kMaxMembers = 1u << 20;
constexpr uint64_t kMaxExpansion = 64;             // uncompressed bytes per byte of the file
constexpr uint64_t kMaxUncompressed = 64ull << 30;  // all members
constexpr uint64_t kMaxRecordBytes = 16u << 20;

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// What libarchive reads through: the descriptor, each block hashed as it is handed over.
struct Reader {
  explicit Reader(int f) : fd(f) {}
  int fd;
  util::Hasher hash{"sha256"};
  char buf[1 << 16];
  bool failed = false;
};

la_ssize_t readBlock(struct archive*, void* data, const void** out) {
  auto* r = static_cast<Reader*>(data);
  ssize_t n;
  do n = ::read(r->fd, r->buf, sizeof r->buf);
  while (n < 0 && errno == EINTR);
  if (n < 0) {
    r->failed = true;
    return -1;
  }
  r->hash.update(r->buf, static_cast<size_t>(n));
  *out = r->buf;
  return n;
}

std::string archiveError(struct archive* a) {
  const char* e = archive_error_string(a);
  return e ? util::printable(e, 120) : "no detail from libarchive";
}

// The members whose bytes the wheel's own RECORD (`record`, the text at `recordPath`) does not
// give: another hash, or no row at all (RECORD itself and its signatures excepted).
std::vector<std::string> recordDisagreements(const WheelFile& w, const std::string& record,
                                             const std::string& recordPath) {
  std::map<std::string, std::string> listed;  // path -> sha256 hex
  RecordReader reader(record);
  RecordRowView row;
  while (reader.next(row)) {
    if (row.algorithm != "sha256") continue;
    bool hex = false;
    std::string digest = decodeRecordDigest(row.algorithm, row.digest, &hex);
    auto clean = util::cleanConfined(row.path);
    if (clean) listed[*clean] = digest;
  }
  std::vector<std::string> out;
  for (const auto& m : w.members) {
    if (m.path == recordPath || m.path == w.distInfo + "/RECORD.jws" || m.path == w.distInfo + "/RECORD.p7s") continue;
    auto it = listed.find(m.path);
    if (it == listed.end() || it->second != m.sha256) out.push_back(m.path);
  }
  return out;
}

// Reads what is left of the descriptor into the reader's hash; false on a read error.
bool drain(Reader& r) {
  const void* block;
  for (;;) {
    la_ssize_t n = readBlock(nullptr, &r, &block);
    if (n < 0) return false;
    if (n == 0) return true;
  }
}

}  // namespace

Result<WheelFile> readWheelFile(const std::string& path, const std::vector<std::string>& accepted) {
  std::string shown = util::printable(path, 200);
  Fd f;
  f.fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
  if (f.fd < 0)
    return errno == ENOENT ? Error::NotFound(shown + " does not exist")
                           : Error::Io(shown + ": " + std::string(std::strerror(errno)));
  struct stat st {};
  if (::fstat(f.fd, &st) != 0 || !S_ISREG(st.st_mode)) return Error::Invalid(shown + " is not a regular file");
  WheelFile out;
  {
    Reader first{f.fd};
    if (!drain(first)) return Error::Io(shown + ": " + std::string(std::strerror(errno)));
    out.sha256 = first.hash.hex();
  }
  if (std::find(accepted.begin(), accepted.end(), out.sha256) == accepted.end())
    return Error::Corrupt(shown + " has sha256 " + out.sha256 + ", not the lock's " +
                          (accepted.size() == 1 ? accepted[0] : util::join(accepted, " or ")));
  if (::lseek(f.fd, 0, SEEK_SET) != 0) return Error::Io(shown + ": cannot read it again");

  Reader second{f.fd};
  struct archive* a = archive_read_new();
  std::unique_ptr<struct archive, int (*)(struct archive*)> guard(a, archive_read_free);
  archive_read_support_format_zip(a);
  if (archive_read_open(a, &second, nullptr, readBlock, nullptr) != ARCHIVE_OK)
    return Error::Invalid(shown + " is not a zip: " + archiveError(a));
  const uint64_t maxTotal =
      std::min<uint64_t>(kMaxUncompressed, kMaxExpansion * static_cast<uint64_t>(st.st_size) + (1u << 20));
  uint64_t total = 0;
  std::string record, recordPath;
  struct archive_entry* e = nullptr;
  std::vector<char> buf(1 << 16);
  for (;;) {
    int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return Error::Invalid(shown + " is not a readable zip: " + archiveError(a));
    if (out.members.size() >= kMaxMembers) return Error::Invalid(shown + " has more than 2^20 members");
    const char* raw = archive_entry_pathname(e);
    std::string name = raw ? raw : "";
    if (archive_entry_filetype(e) == AE_IFDIR || name.ends_with("/")) continue;
    auto clean = util::cleanConfined(name);
    if (!clean || clean->empty() || name.starts_with("/"))
      return Error::Invalid(shown + ": member '" + util::printable(name, 120) + "' would leave the install directory");
    WheelMember m;
    m.path = *clean;
    size_t slash = m.path.find('/');
    std::string top = slash == std::string::npos ? "" : m.path.substr(0, slash);
    bool isRecord = top.ends_with(".dist-info") && m.path == top + "/RECORD";
    if (isRecord) {
      if (!out.distInfo.empty()) return Error::Invalid(shown + " has more than one .dist-info/RECORD");
      out.distInfo = top, recordPath = m.path;
    }
    util::Hasher h("sha256");
    std::string head;
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf.data(), buf.size());
      if (n < 0)
        return Error::Invalid(shown + ": member " + util::printable(name, 120) + " is corrupt: " + archiveError(a));
      if (n == 0) break;
      total += static_cast<uint64_t>(n), m.size += static_cast<uint64_t>(n);
      if (total > maxTotal)
        return Error::Invalid(shown + " expands to more than " + std::to_string(maxTotal) + " bytes");
      h.update(buf.data(), static_cast<size_t>(n));
      if (head.size() < 8) head.append(buf.data(), std::min<size_t>(8 - head.size(), static_cast<size_t>(n)));
      if (isRecord) {
        if (record.size() + static_cast<size_t>(n) > kMaxRecordBytes)
          return Error::Invalid(shown + ": its RECORD is over 16 MiB");
        record.append(buf.data(), static_cast<size_t>(n));
      }
    }
    m.sha256 = h.hex();
    m.pythonShebang = head.starts_with("#!python");
    out.members.push_back(std::move(m));
  }
  if (out.distInfo.empty()) return Error::Invalid(shown + " has no .dist-info/RECORD: not a wheel");
  // What libarchive did not need (the central directory) is hashed too, then compared.
  if (!drain(second)) return Error::Io(shown + ": " + std::string(std::strerror(errno)));
  if (second.failed || second.hash.hex() != out.sha256)
    return Error::Corrupt(shown + " changed while it was read");

  out.recordDisagrees = recordDisagreements(out, record, recordPath);
  return out;
}

}  // namespace kernodeck::python
