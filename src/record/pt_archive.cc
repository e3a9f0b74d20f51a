// See pt_archive.h. torch.save stores its entries uncompressed: a deflated entry is read, but
// never to more than 16 times the file's size.
#include "pt_archive.h"


#include <algorithm>
#include <memory>
#include <optional>

#include "kernodeck/oci/archive_lib.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record::pt {

namespace {

constexpr uint64_t kMaxArchiveBytes = 1ull << 30;  // all entries read, uncompressed
constexpr uint64_t kMaxExpansion = 16;             // uncompressed bytes per byte of the file
constexpr uint64_t kMaxPickleBytes = 32ull << 20;  // data.pkl
constexpr size_t kMaxEntries = 100000;

// libarchive's message for the last error, which may be null.
std::string archiveError(struct archive* a) {
  const char* e = archive_error_string(a);
  return e ? util::printable(e, 120) : "no detail from libarchive";
}

}  // namespace

Result<PtArchive> readArchive(std::string_view bytes, bool storages) {
  struct archive* a = archive_read_new();
  archive_read_support_format_zip(a);
  std::unique_ptr<struct archive, int (*)(struct archive*)> guard(a, archive_read_free);
  if (archive_read_open_memory(a, bytes.data(), bytes.size()) != ARCHIVE_OK)
    return Error::Invalid(".pt zip cannot be opened: " + archiveError(a));
  PtArchive out;
  std::optional<std::string> prefix;
  bool havePickle = false;
  uint64_t total = 0;
  const uint64_t maxTotal = std::min<uint64_t>(kMaxArchiveBytes, kMaxExpansion * bytes.size());
  size_t entries = 0;
  struct archive_entry* e = nullptr;
  for (;;) {
    int r = archive_read_next_header(a, &e);
    if (r == ARCHIVE_EOF) break;
    if (r < ARCHIVE_WARN) return Error::Invalid(".pt zip is corrupt: " + archiveError(a));
    if (++entries > kMaxEntries) return Error::Invalid(".pt zip has too many entries");
    const char* raw = archive_entry_pathname(e);
    std::string name = raw ? raw : "";
    size_t slash = name.find('/');
    if (slash == std::string::npos || slash == 0) continue;
    std::string top = name.substr(0, slash), rest = name.substr(slash + 1);
    bool isPickle = rest == "data.pkl", isStorage = rest.rfind("data/", 0) == 0 && rest.size() > 5;
    if (rest == "byteorder" || isPickle || (isStorage && storages)) {
      if (prefix && *prefix != top) return Error::Invalid(".pt zip holds more than one archive folder");
      prefix = top;
    } else {
      continue;
    }
    std::string data;
    char buf[65536];
    for (;;) {
      la_ssize_t n = archive_read_data(a, buf, sizeof buf);
      if (n < 0)
        return Error::Invalid(".pt zip entry " + util::printable(name, 80) + " is corrupt: " + archiveError(a));
      if (n == 0) break;
      total += static_cast<uint64_t>(n);
      if (total > kMaxArchiveBytes) return Error::Invalid(".pt zip is too large (over 1 GiB uncompressed)");
      if (total > maxTotal)
        return Error::Invalid(".pt zip expands to more than " + std::to_string(kMaxExpansion) + " times its " +
                              std::to_string(bytes.size()) + " bytes (torch.save stores its entries uncompressed)");
      if (isPickle && data.size() + static_cast<size_t>(n) > kMaxPickleBytes)
        return Error::Invalid(".pt data.pkl is too large");
      data.append(buf, static_cast<size_t>(n));
    }
    if (rest == "byteorder") {
      if (data != "little")
        return Error::Unsupported(".pt byteorder '" + util::printable(data, 20) + "' is not supported");
    } else if (isPickle) {
      if (havePickle) return Error::Invalid(".pt zip holds data.pkl twice");
      havePickle = true;
      out.pickle = std::move(data);
    } else {
      out.storageBytes += data.size();
      if (!out.storages.emplace(rest.substr(5), std::move(data)).second)
        return Error::Invalid(".pt zip holds storage " + util::printable(rest, 80) + " twice");
    }
  }
  if (!havePickle) return Error::Invalid(".pt zip has no <archive>/data.pkl");
  return out;
}

}  // namespace kernodeck::record::pt
