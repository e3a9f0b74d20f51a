// See cosign_layout.h. The config is the one go-containerregistry writes for an image built by
// appending layers to an empty one (cosign's way): the layers' digests as diff_ids (the
// envelopes are not compressed) and one history entry per layer. Which layers an attach
// replaces is judged by each layer's payload (as `cosign attest --replace` does), never by its
// annotations, which whoever can push writes.
#include "kernodeck/attest/cosign_layout.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include "kernodeck/attest/dsse.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::attest {

using nlohmann::json;

std::string cosignAttestationTag(const oci::Digest& subject) {
  return subject.algorithm + "-" + subject.encoded.substr(0, 64) + ".att";
}

namespace {

json descriptorJson(const oci::Descriptor& d) {
  json j = {{"mediaType", d.mediaType}, {"digest", d.digest.str()}, {"size", d.size}};
  if (!d.annotations.empty()) j["annotations"] = d.annotations;
  return j;
}

bool asciiEqualFold(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// The four hex digits at t[i..i+4) as a number; nullopt when they are not.
std::optional<uint32_t> hex4(std::string_view t, size_t i) {
  if (i + 4 > t.size()) return std::nullopt;
  uint32_t v = 0;
  for (size_t j = i; j < i + 4; ++j) {
    char c = static_cast<char>(std::tolower(static_cast<unsigned char>(t[j])));
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return std::nullopt;
    v = v * 16 + static_cast<uint32_t>(d);
  }
  return v;
}

// Reads the string literal whose opening quote is at t[i - 1], leniently (an unknown escape is
// its character, a lone surrogate U+FFFD, as Go reads it); leaves i after the closing quote.
std::string readString(std::string_view t, size_t& i) {
  std::string out;
  while (i < t.size() && t[i] != '"') {
    if (t[i] != '\\' || i + 1 >= t.size()) {
      out.push_back(t[i++]);
      continue;
    }
    char e = t[i + 1];
    i += 2;
    switch (e) {
      case 'b': out.push_back('\b'); break;
      case 'f': out.push_back('\f'); break;
      case 'n': out.push_back('\n'); break;
      case 'r': out.push_back('\r'); break;
      case 't': out.push_back('\t'); break;
      case 'u': {
        auto cp = hex4(t, i);
        if (!cp) break;
        i += 4;
        if (*cp >= 0xd800 && *cp < 0xdc00 && i + 1 < t.size() && t[i] == '\\' && t[i + 1] == 'u')
          if (auto lo = hex4(t, i + 2); lo && *lo >= 0xdc00 && *lo < 0xe000) {
            i += 6;
            util::appendUtf8(out, 0x10000 + ((*cp - 0xd800) << 10) + (*lo - 0xdc00));
            break;
          }
        util::appendUtf8(out, *cp >= 0xd800 && *cp < 0xe000 ? 0xfffd : *cp);
        break;
      }
      default: out.push_back(e);
    }
  }
  ++i;
  return out;
}

// The string values of the top-level object's members named `key`, compared as Go's
// encoding/json matches struct fields (case-insensitively; these keys' letters have no
// non-ASCII folds), every duplicate kept: cosign reads the last, a map reader the exact one, and
// a layer counts as Kernodeck's if any reading makes it so. A lenient scan that never stops at
// what a strict parser refuses (invalid UTF-8, lone surrogates, ...), so nothing Go would read
// is missed; it builds no tree, so a 64 MiB envelope costs its own bytes and the values kept.
std::vector<std::string> topLevelStrings(std::string_view t, std::string_view key) {
  std::vector<std::string> out;
  int depth = 0;
  bool expectKey = false, matched = false, afterColon = false;
  for (size_t i = 0; i < t.size();) {
    char ch = t[i++];
    switch (ch) {
      case '{':
        expectKey = ++depth == 1;
        afterColon = false;
        break;
      case '[':
        ++depth;
        afterColon = false;
        break;
      case '}':
      case ']':
        --depth;
        afterColon = false;
        break;
      case ',':
        expectKey = depth == 1;
        afterColon = false;
        break;
      case ':': afterColon = depth == 1; break;
      case '"': {
        std::string v = readString(t, i);
        if (depth != 1) break;
        if (expectKey) {
          matched = asciiEqualFold(v, key);
          expectKey = false;
        } else if (afterColon) {
          if (matched) out.push_back(std::move(v));
          afterColon = matched = false;
        }
        break;
      }
      default:
        if (!std::isspace(static_cast<unsigned char>(ch)) && depth == 1 && afterColon) afterColon = matched = false;
    }
  }
  return out;
}

}  // namespace

bool isKernodeckStatement(std::string_view layerBytes) {
  for (std::string& b64 : topLevelStrings(layerBytes, "payload")) {
    // Go's base64 decoder skips line breaks.
    std::erase_if(b64, [](char c) { return c == '\r' || c == '\n'; });
    std::string payload;
    if (!util::base64Decode(b64, payload)) continue;
    for (const auto& type : topLevelStrings(payload, "predicateType"))
      if (type.rfind(kKernodeckPredicateTypePrefix, 0) == 0) return true;
  }
  return false;
}

Result<CosignImage> mergeCosignAttestation(std::optional<std::string_view> existing, const oci::Descriptor& layer,
                                           const std::string& predicateType, const std::set<std::string>& replaced) {
  json layers = json::array();
  if (existing) {
    json m = util::parseUntrustedJson(*existing);
    if (!m.is_object() || !m.contains("layers") || !m["layers"].is_array() || !m.contains("config"))
      return Error::Corrupt("not an image manifest; left as it is");
    for (const auto& l : m["layers"]) {
      // Another tool's layer is kept as it is, even one this code could not read; its
      // annotations decide nothing (a Kernodeck statement labelled as another type is replaced).
      auto d = oci::parseDescriptor(l);
      if (d.ok() && (d->digest == layer.digest || replaced.count(d->digest.str()))) continue;
      layers.push_back(l);
    }
  }
  oci::Descriptor ours = layer;
  ours.annotations = {{kCosignSignatureAnnotation, ""}, {kCosignPredicateTypeAnnotation, predicateType}};
  layers.push_back(descriptorJson(ours));

  json diffIds = json::array(), history = json::array();
  for (const auto& l : layers) {
    diffIds.push_back(l.is_object() && l.contains("digest") ? l["digest"] : json(""));
    history.push_back({{"created", "0001-01-01T00:00:00Z"}});
  }
  json config = {{"architecture", ""},
                 {"created", "0001-01-01T00:00:00Z"},
                 {"history", history},
                 {"os", ""},
                 {"rootfs", {{"type", "layers"}, {"diff_ids", diffIds}}},
                 {"config", json::object()}};
  CosignImage out;
  out.config = config.dump();
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", oci::media::kOciManifest},
                   {"config",
                    {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                     {"digest", "sha256:" + util::sha256Hex(out.config)},
                     {"size", out.config.size()}}},
                   {"layers", layers}};
  out.manifest = manifest.dump();
  return out;
}

Result<oci::Digest> pushCosignAttestation(registry::Client& c, const oci::Digest& subject, const std::string& envelope,
                                          const std::string& predicateType, bool replaces) {
  std::string tag = cosignAttestationTag(subject);
  std::string where = c.reference().registry + "/" + c.reference().repository + ":" + tag;
  KDK_TRY_ASSIGN(oci::Digest blob, c.pushBlob(envelope));
  oci::Descriptor layer;
  layer.mediaType = kDsseMediaType;
  layer.digest = blob;
  layer.size = static_cast<int64_t>(envelope.size());
  auto holds = [&](const std::string& bytes) {
    json m = util::parseUntrustedJson(bytes);
    if (!m.is_object() || !m.contains("layers") || !m["layers"].is_array()) return false;
    for (const auto& l : m["layers"])
      if (l.is_object() && l.contains("digest") && l["digest"] == blob.str()) return true;
    return false;
  };
  // Each layer already under the tag, judged once by its payload (read whole up to the bounds;
  // one larger, past the total, or unreadable is kept: it may be another tool's, and the shipped
  // admission policies deny when any Kernodeck statement under the tag does not pass).
  std::map<std::string, bool> judged;
  uint64_t budget = kMaxJudgedBytes;
  auto replacedIn = [&](const std::string& bytes) {
    std::set<std::string> out;
    json m = util::parseUntrustedJson(bytes);
    if (!m.is_object() || !m.contains("layers") || !m["layers"].is_array()) return out;
    for (const auto& l : m["layers"]) {
      auto d = oci::parseDescriptor(l);
      if (!d.ok() || d->digest == blob) continue;
      std::string key = d->digest.str();
      if (!judged.count(key)) {
        bool ours = false;
        if (d->size >= 0 && static_cast<uint64_t>(d->size) <= std::min(kMaxJudgedLayerBytes, budget)) {
          budget -= static_cast<uint64_t>(d->size);
          if (auto bytes = c.smallBlob(*d, kMaxJudgedLayerBytes); bytes.ok()) ours = isKernodeckStatement(*bytes);
        }
        judged[key] = ours;
      }
      if (judged[key]) out.insert(key);
    }
    return out;
  };
  for (int attempt = 0; attempt < 8; ++attempt) {
    std::optional<std::string> existing;
    std::set<std::string> replaced;
    auto now = c.manifest(tag);
    if (now.ok()) {
      existing = now->bytes;
      if (replaces) replaced = replacedIn(now->bytes);
    } else if (!now.error().is(ErrorKind::NotFound)) {
      return Error::Io(where + ": " + now.error().message);
    }
    auto image = mergeCosignAttestation(existing, layer, predicateType, replaced);
    if (!image.ok()) return Error::Corrupt(where + ": " + image.error().message);
    KDK_TRY_STATUS(c.pushBlob(image->config));
    KDK_TRY_STATUS(c.putManifest(tag, image->manifest, oci::media::kOciManifest));
    auto back = c.manifest(tag);
    if (back.ok() && holds(back->bytes)) return back->digest;
    std::this_thread::sleep_for(std::chrono::milliseconds(50 * (attempt + 1)));
  }
  return Error::Io(where + ": the attestation image kept losing the new layer to concurrent writers");
}

}  // namespace kernodeck::attest
