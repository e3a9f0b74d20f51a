#include "kernodeck/oci/scan_cache.h"

#include <algorithm>

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/version.h"

namespace kernodeck::oci {

using nlohmann::json;

namespace {

// One header line of JSON (sizes, digests, refused entries), then one line per entry:
// path, kind, mode, size, link target, sha256, md5, sha1, captured content (base64 or "-"),
// tab-separated, with backslash, tab and newline escaped in the text fields. Parsing
// this is several times faster than JSON for the tens of thousands of entries of a layer.
// Format 2: hardlink targets as written, names cleaned as containerd cleans them, suspicious entries.
// Format 3: the sha1 column (apk's checksums, filled in by a second read of the layer).
// Format 4: keyed by the scan's options too; no shared result copied in unverified (issue 25), so
// entries an older Kernodeck took from a shared store unchecked are not read.
constexpr int kScanFormat = 4;

std::string pathFor(const std::string& dir, const Digest& d, const ScanOptions& opts) {
  std::string options = util::sha256Hex(scanOptionsJson(opts).dump()).substr(0, 16);
  return dir + "/layers/" + d.algorithm + "/" + d.encoded + ".v" + std::to_string(kAnalysisVersion) + "." +
         std::to_string(kScanFormat) + "." + options + ".tsv";
}

void escapeInto(std::string& out, std::string_view s) {
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out.push_back(c);
  }
}

std::string unescape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out.push_back(s[i]);
      continue;
    }
    char n = s[++i];
    out.push_back(n == 't' ? '\t' : n == 'n' ? '\n' : n);
  }
  return out;
}

}  // namespace

nlohmann::json scanOptionsJson(const ScanOptions& opts) {
  return {{"policy", opts.policy},
          {"hash_only", opts.hashOnly},
          {"max_entry_bytes", opts.maxEntryBytes},
          {"scan_format", kScanFormat}};
}

std::optional<LayerScan> loadScan(const std::string& dir, const Digest& d, const ScanOptions& opts) {
  if (dir.empty() || !d.verifiable()) return std::nullopt;
  auto text = util::readFileLimited(pathFor(dir, d, opts), 1ull << 30);
  if (!text.ok()) return std::nullopt;
  return decodeScan(*text, d);
}

std::optional<LayerScan> decodeScan(std::string_view all, const Digest& d) {
  size_t nl = all.find('\n');
  if (nl == std::string_view::npos) return std::nullopt;
  json j = util::parseUntrustedJson(all.substr(0, nl));
  // value() throws on a "digest" that is not a string: checked by type first.
  if (!j.is_object() || !j.contains("digest") || j["digest"] != d.str()) return std::nullopt;
  // The counts are unsigned integers as written: a float (get<> would cast it, undefined when
  // out of range), a negative or another type is a damaged entry.
  auto count = [&j](const char* key) -> std::optional<uint64_t> {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) return std::nullopt;
    return it->get<uint64_t>();
  };
  auto compressedSize = count("compressed_size"), uncompressedSize = count("uncompressed_size");
  auto compression = count("compression"), files = count("files"), expectedEntries = count("entries");
  if (!compressedSize || !uncompressedSize || !compression || !files || !expectedEntries ||
      *compression > static_cast<uint64_t>(Compression::Unknown))
    return std::nullopt;
  try {
    LayerScan s;
    s.compressedSize = *compressedSize;
    s.digestHex = d.encoded;
    s.uncompressedSize = *uncompressedSize;
    s.diffIdHex = j["diff_id"].get<std::string>();
    s.detected = static_cast<Compression>(*compression);
    s.fileCount = *files;
    // [name, reason] pairs; anything else is a damaged entry (u[0] on an object would be a key
    // lookup with a null pointer).
    for (auto [key, list] : {std::pair{"unsafe", &s.unsafe}, std::pair{"suspicious", &s.suspicious}})
      for (const auto& u : j.at(key)) {
        if (!u.is_array() || u.size() != 2) return std::nullopt;
        list->push_back({u.at(0).get<std::string>(), u.at(1).get<std::string>()});
      }
    size_t expected = static_cast<size_t>(*expectedEntries);
    // The count is the entry's own word, and a damaged entry may say anything: room for no more
    // lines than the text holds, each at least its eight tabs and a newline.
    s.entries.reserve(std::min(expected, (all.size() - nl) / 9));
    size_t pos = nl + 1;
    while (pos < all.size()) {
      size_t end = all.find('\n', pos);
      if (end == std::string_view::npos) return std::nullopt;  // a torn file
      std::string_view line = all.substr(pos, end - pos);
      pos = end + 1;
      std::string_view f[9];
      size_t start = 0;
      for (int k = 0; k < 9; ++k) {
        size_t tab = k < 8 ? line.find('\t', start) : line.size();
        if (tab == std::string_view::npos) return std::nullopt;
        f[k] = line.substr(start, tab - start);
        start = tab + 1;
      }
      auto num = [](std::string_view v) -> int64_t { return std::stoll(std::string(v)); };
      LayerEntry le;
      le.path = unescape(f[0]);
      int64_t kind = num(f[1]);
      if (kind < 0 || kind > static_cast<int64_t>(EntryKind::Opaque)) return std::nullopt;
      le.kind = static_cast<EntryKind>(kind);
      le.mode = static_cast<uint32_t>(num(f[2]));
      le.size = num(f[3]);
      le.linkTarget = unescape(f[4]);
      if (!le.sha256.assignHex(f[5]) || !le.md5.assignHex(f[6])) return std::nullopt;
      le.sha1 = std::string(f[7]);
      if (f[8] != "-") {
        std::string raw;
        if (!util::base64Decode(f[8], raw)) return std::nullopt;
        le.content = std::make_shared<const std::string>(std::move(raw));
      }
      s.entries.push_back(std::move(le));
    }
    if (s.entries.size() != expected) return std::nullopt;
    return s;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged entry is a miss, never an error
  }
}

void storeScan(const std::string& dir, const Digest& d, const LayerScan& s, const ScanOptions& opts) {
  if (dir.empty() || !d.verifiable() || s.error) return;
  std::string out = encodeScan(d, s);
  util::makeDirs(dir + "/layers/" + d.algorithm);
  // Not synced: loadScan() refuses a torn entry (the header counts the lines, each ends in '\n').
  (void)util::writeFileAtomic(pathFor(dir, d, opts), out, false);
}

std::string encodeScan(const Digest& d, const LayerScan& s) {
  json unsafe = json::array();
  for (const auto& u : s.unsafe) unsafe.push_back({u.name, u.reason});
  json suspicious = json::array();
  for (const auto& u : s.suspicious) suspicious.push_back({u.name, u.reason});
  json header = {{"digest", d.str()},
                 {"compressed_size", s.compressedSize},
                 {"uncompressed_size", s.uncompressedSize},
                 {"diff_id", s.diffIdHex},
                 {"compression", static_cast<int>(s.detected)},
                 {"files", s.fileCount},
                 {"unsafe", unsafe},
                 {"suspicious", suspicious},
                 {"entries", s.entries.size()}};
  std::string out = header.dump() + "\n";
  for (const auto& e : s.entries) {
    escapeInto(out, e.path);
    out += "\t" + std::to_string(static_cast<int>(e.kind)) + "\t" + std::to_string(e.mode) + "\t" +
           std::to_string(e.size) + "\t";
    escapeInto(out, e.linkTarget);
    out += "\t" + e.sha256.hex() + "\t" + e.md5.hex() + "\t" + e.sha1 + "\t" +
           (e.content ? util::base64Encode(*e.content) : std::string("-")) + "\n";
  }
  return out;
}

}  // namespace kernodeck::oci
