// See sigstore_bundle.h. Written in protojson's field order (the .proto's declaration order), so
// the bytes read as cosign's would; nothing depends on the order.
#include "kernodeck/attest/sigstore_bundle.h"

#include <nlohmann/json.hpp>

#include "kernodeck/attest/statement.h"
#include "kernodeck/registry/referrers.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/time.h"

namespace kernodeck::attest {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

// The bytes of a lowercase or uppercase hex string; empty for anything else.
std::string unhex(std::string_view h) {
  auto v = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
  std::string out;
  if (h.size() % 2) return out;
  for (size_t i = 0; i < h.size(); i += 2) {
    int hi = v(h[i]), lo = v(h[i + 1]);
    if (hi < 0 || lo < 0) return {};
    out.push_back(static_cast<char>(hi * 16 + lo));
  }
  return out;
}

std::string str(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "";
}

}  // namespace

std::string publicKeyHint(const Key& key) { return util::base64Encode(unhex(key.keyid())); }

Result<std::string> makeSigstoreBundle(const Envelope& env, const Key& key) {
  if (env.signatures.size() != 1)
    return Error::Invalid("a Sigstore bundle holds an envelope with exactly one signature (this one has " +
                          std::to_string(env.signatures.size()) + ")");
  ordered_json sig;
  sig["sig"] = util::base64Encode(env.signatures.front().sig);
  ordered_json dsse;
  dsse["payload"] = util::base64Encode(env.payload);
  dsse["payloadType"] = env.payloadType;
  dsse["signatures"] = ordered_json::array({sig});
  ordered_json b;
  b["mediaType"] = kSigstoreBundleMediaType;
  b["verificationMaterial"] = {{"publicKey", {{"hint", publicKeyHint(key)}}}};
  b["dsseEnvelope"] = dsse;
  return b.dump();
}

std::map<std::string, std::string> bundleAnnotations(const std::string& predicateType, int64_t nowMs) {
  // Go's time.RFC3339 of time.Now().UTC(): whole seconds, "Z".
  std::string ms = util::utcTimestampMs(nowMs);
  std::string created = ms.substr(0, ms.find('.')) + "Z";
  return {{"org.opencontainers.image.created", created},
          {kBundleContentAnnotation, "dsse-envelope"},
          {kBundlePredicateTypeAnnotation, predicateType}};
}

Result<std::string> bundleEnvelope(std::string_view bytes) {
  json b = util::parseUntrustedJson(bytes);
  if (!b.is_object()) return Error::Corrupt("not a Sigstore bundle: not a JSON object");
  std::string mt = str(b, "mediaType");
  if (mt != kSigstoreBundleMediaType && mt != kSigstoreBundleMediaTypeAlt)
    return Error::Corrupt("not a Sigstore bundle v0.3: mediaType '" + mt.substr(0, 100) + "'");
  if (b.contains("messageSignature"))
    return Error::Corrupt("the Sigstore bundle holds a message signature, not a DSSE envelope");
  if (!b.contains("dsseEnvelope") || !b["dsseEnvelope"].is_object())
    return Error::Corrupt("the Sigstore bundle holds no DSSE envelope");
  const json& e = b["dsseEnvelope"];
  // Only the envelope's own fields travel on: payload, payloadType, each signature's sig and keyid.
  json out = {{"payload", e.contains("payload") ? e["payload"] : json()},
              {"payloadType", e.contains("payloadType") ? e["payloadType"] : json()}};
  if (e.contains("signatures")) {
    if (!e["signatures"].is_array()) return Error::Corrupt("the Sigstore bundle's DSSE signatures are not an array");
    out["signatures"] = json::array();
    for (const auto& s : e["signatures"]) {
      if (!s.is_object()) return Error::Corrupt("the Sigstore bundle's DSSE signature is not an object");
      json o = json::object();
      if (s.contains("sig")) o["sig"] = s["sig"];
      if (s.contains("keyid")) o["keyid"] = s["keyid"];
      out["signatures"].push_back(std::move(o));
    }
  }
  return out.dump();
}

registry::Artifact bundleArtifact(std::string bundle, const oci::Descriptor& subject, const std::string& predicateType,
                                  int64_t nowMs) {
  registry::Artifact a;
  a.artifactType = kSigstoreBundleMediaType;
  a.configArtifactType = kSigstoreBundleMediaType;
  a.blobs.push_back({kSigstoreBundleMediaType, std::move(bundle)});
  a.annotations = bundleAnnotations(predicateType, nowMs);
  a.subject = subject;
  return a;
}

Result<oci::Descriptor> pushSigstoreBundle(registry::Client& c, const oci::Descriptor& subject, const Envelope& envelope,
                                           const Key& key, const std::string& predicateType) {
  KDK_TRY_ASSIGN(std::string bundle, makeSigstoreBundle(envelope, key));
  return registry::pushArtifact(c, bundleArtifact(std::move(bundle), subject, predicateType, util::nowMs()));
}

}  // namespace kernodeck::attest
