// SPDX 2.3 JSON: the same inventory as CycloneDX (inventory.cc) as SPDX packages, the document
// DESCRIBES the audited image or tree, which CONTAINS the rest; the verification result is the
// package comment and an annotation.
#include "kernodeck/report/formats.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

namespace kernodeck::report {

namespace {

using nlohmann::json;

const char* purpose(const std::string& t) {
  if (t == "container") return "CONTAINER";
  if (t == "filesystem") return "OTHER";
  if (t == "operating-system") return "OPERATING_SYSTEM";
  if (t == "python") return "APPLICATION";
  return "LIBRARY";
}

const char* spdxAlgorithm(const std::string& cdx) {
  if (cdx == "SHA-256") return "SHA256";
  if (cdx == "SHA-384") return "SHA384";
  if (cdx == "SHA-512") return "SHA512";
  if (cdx == "SHA-1") return "SHA1";
  if (cdx == "MD5") return "MD5";
  return nullptr;
}

}  // namespace

json toSpdx(const Report& r, int failOn) {
  std::vector<Component> inv = inventoryOf(r, failOn);
  std::string created = util::utcTimestamp();
  json packages = json::array(), relationships = json::array();
  for (size_t i = 0; i < inv.size(); ++i) {
    const Component& c = inv[i];
    std::string id = i == 0 ? "SPDXRef-subject" : "SPDXRef-component-" + std::to_string(i);
    json p = {{"SPDXID", id},
              {"name", c.name},
              {"downloadLocation", "NOASSERTION"},
              {"filesAnalyzed", false},
              {"primaryPackagePurpose", purpose(c.type)}};
    if (!c.version.empty()) p["versionInfo"] = c.version;
    if (!c.description.empty()) p["description"] = c.description;
    json sums = json::array();
    for (const auto& [alg, hex] : c.hashes)
      if (const char* a = spdxAlgorithm(alg)) sums.push_back({{"algorithm", a}, {"checksumValue", hex}});
    if (!sums.empty()) p["checksums"] = sums;
    if (!c.purl.empty())
      p["externalRefs"] = json::array(
          {{{"referenceCategory", "PACKAGE-MANAGER"}, {"referenceType", "purl"}, {"referenceLocator", c.purl}}});
    std::string comment = "kernodeck type " + c.type;
    for (const auto& [k, v] : c.properties) comment += "; " + k + "=" + v;
    if (!c.verification.empty()) {
      comment += "; kernodeck:verification=" + c.verification;
      p["annotations"] = json::array({{{"annotationDate", created},
                                       {"annotationType", "REVIEW"},
                                       {"annotator", std::string("Tool: kernodeck-") + kVersion},
                                       {"comment", "kernodeck verification: " + c.verification}}});
    }
    p["comment"] = comment;
    packages.push_back(p);
    relationships.push_back(
        i == 0
            ? json{{"spdxElementId", "SPDXRef-DOCUMENT"}, {"relationshipType", "DESCRIBES"}, {"relatedSpdxElement", id}}
            : json{{"spdxElementId", "SPDXRef-subject"}, {"relationshipType", "CONTAINS"}, {"relatedSpdxElement", id}});
  }
  std::string uuid = reportUuid(r, failOn);
  return {{"spdxVersion", "SPDX-2.3"},
          {"dataLicense", "CC0-1.0"},
          {"SPDXID", "SPDXRef-DOCUMENT"},
          {"name", "kernodeck " + r.tool() + " of " + inv.front().name},
          {"documentNamespace", "https://spdx.org/spdxdocs/kernodeck-" + uuid},
          {"creationInfo",
           {{"created", created},
            {"creators", json::array({std::string("Tool: kernodeck-") + kVersion})},
            {"comment", std::string("kernodeck verdict: ") + r.verdict(failOn)}}},
          {"packages", packages},
          {"relationships", relationships}};
}

}  // namespace kernodeck::report
