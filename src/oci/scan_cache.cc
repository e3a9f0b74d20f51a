#include "kernodeck/oci/scan_cache.h"

#include <sys/stat.h>

#include <nlohmann/json.hpp>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/version.h"

namespace kernodeck::oci {

using nlohmann::json;

namespace {

std::string pathFor(const std::string& dir, const Digest& d) {
  return dir + "/layers/" + d.algorithm + "/" + d.encoded + ".v" + std::to_string(kAnalysisVersion) + ".json";
}

}  // namespace

std::optional<LayerScan> loadScan(const std::string& dir, const Digest& d) {
  if (dir.empty() || !d.verifiable()) return std::nullopt;
  auto text = util::readFileLimited(pathFor(dir, d), 1ull << 30);
  if (!text.ok()) return std::nullopt;
  json j = json::parse(*text, nullptr, false);
  if (!j.is_object() || j.value("digest", "") != d.str() || !j.contains("entries")) return std::nullopt;
  try {
    LayerScan s;
    s.compressedSize = j["compressed_size"].get<uint64_t>();
    s.digestHex = d.encoded;
    s.uncompressedSize = j["uncompressed_size"].get<uint64_t>();
    s.diffIdHex = j["diff_id"].get<std::string>();
    s.detected = static_cast<Compression>(j["compression"].get<int>());
    s.fileCount = j["files"].get<uint64_t>();
    for (const auto& u : j["unsafe"]) s.unsafe.push_back({u[0].get<std::string>(), u[1].get<std::string>()});
    s.entries.reserve(j["entries"].size());
    for (const auto& e : j["entries"]) {
      LayerEntry le;
      le.path = e[0].get<std::string>();
      le.kind = static_cast<EntryKind>(e[1].get<int>());
      le.mode = e[2].get<uint32_t>();
      le.size = e[3].get<int64_t>();
      le.linkTarget = e[4].get<std::string>();
      le.sha256 = e[5].get<std::string>();
      le.md5 = e[6].get<std::string>();
      if (e[7].is_string()) {
        std::string raw;
        if (!util::base64Decode(e[7].get<std::string>(), raw)) return std::nullopt;
        le.content = std::make_shared<const std::string>(std::move(raw));
      }
      s.entries.push_back(std::move(le));
    }
    return s;
  } catch (const std::exception&) {
    return std::nullopt;  // a damaged entry is a miss, never an error
  }
}

void storeScan(const std::string& dir, const Digest& d, const LayerScan& s) {
  if (dir.empty() || !d.verifiable() || s.error) return;
  json entries = json::array();
  for (const auto& e : s.entries)
    entries.push_back({e.path, static_cast<int>(e.kind), e.mode, e.size, e.linkTarget, e.sha256, e.md5,
                       e.content ? json(util::base64Encode(*e.content)) : json(nullptr)});
  json unsafe = json::array();
  for (const auto& u : s.unsafe) unsafe.push_back({u.name, u.reason});
  json j = {{"digest", d.str()},
            {"compressed_size", s.compressedSize},
            {"uncompressed_size", s.uncompressedSize},
            {"diff_id", s.diffIdHex},
            {"compression", static_cast<int>(s.detected)},
            {"files", s.fileCount},
            {"unsafe", unsafe},
            {"entries", entries}};
  std::string sub = dir + "/layers/" + d.algorithm;
  ::mkdir(dir.c_str(), 0755);
  ::mkdir((dir + "/layers").c_str(), 0755);
  ::mkdir(sub.c_str(), 0755);
  (void)util::writeFileAtomic(pathFor(dir, d), j.dump());
}

}  // namespace kernodeck::oci
