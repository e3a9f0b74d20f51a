// The report predicate (what a policy matches on, with the signed time) and cosign's
// attestation image layout as merged with what another tool left under the .att tag.
#include "kernodeck/attest/predicate.h"

#include <gtest/gtest.h>

#include "kernodeck/attest/cosign_layout.h"
#include "kernodeck/attest/dsse.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/time.h"

namespace attest_predicate_test {

using namespace kernodeck;
using namespace kernodeck::attest;
using nlohmann::json;

namespace {

json auditReport(int info, int warning, int error, bool complete = true) {
  return {
      {"schema", "kernodeck.report/v1"},
      {"summary", {{"complete", complete}, {"findings", {{"info", info}, {"warning", warning}, {"error", error}}}}}};
}

}  // namespace

TEST(ReportPredicate, CarriesVerdictCountsPolicyVersionAndTime) {
  int64_t t = *util::parseTimestampMs("2026-12-01T14:00:00.123Z");
  ReportPredicate p = makePredicate(auditReport(1, 2, 0), 1, t);  // --fail-on warning
  EXPECT_EQ(p.verdict, "fail");
  EXPECT_EQ(p.failOn, "warning");
  json j = predicateJson(p);
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["findings"], json({{"info", 1}, {"warning", 2}, {"error", 0}}));
  EXPECT_EQ(j["fail_on"], "warning");
  EXPECT_EQ(j["time"], "2026-12-01T14:00:00.123Z");
  EXPECT_FALSE(j["kernodeck_version"].get<std::string>().empty());
  auto back = parsePredicate(j);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->timeMs, t);
  EXPECT_EQ(back->warning, 2);
  // The report itself is a blob the predicate names by digest and size.
  std::string blob = reportBlob(auditReport(1, 2, 0));
  EXPECT_EQ(j["report"]["digest"], "sha256:" + util::sha256Hex(blob));
  EXPECT_EQ(j["report"]["size"], blob.size());
  EXPECT_EQ(j["report"]["mediaType"], kReportBlobMediaType);
  EXPECT_EQ(back->report.digest.str(), "sha256:" + util::sha256Hex(blob));
  EXPECT_TRUE(checkReportBlob(*back, blob).ok());
  EXPECT_EQ(makePredicate(auditReport(1, 2, 0), 2, t).verdict, "pass");
  EXPECT_EQ(makePredicate(auditReport(0, 0, 3), -1, t).verdict, "pass");  // --fail-on none
  EXPECT_EQ(makePredicate(auditReport(0, 0, 0, false), 2, t).verdict, "incomplete");
}

TEST(ReportPredicate, RefusesWrongShapesAndAVerdictItsReportDoesNotSupport) {
  json good = predicateJson(makePredicate(auditReport(0, 0, 1), 2, 0));
  ASSERT_TRUE(parsePredicate(good).ok());
  struct Case {
    const char* field;
    json value;
  } cases[] = {{"verdict", "maybe"},  {"verdict", 1},          {"fail_on", "fatal"},
               {"time", "yesterday"}, {"time", nullptr},       {"findings", json::array()},
               {"report", "x"},       {"kernodeck_version", 2}};
  for (const auto& c : cases) {
    json j = good;
    j[c.field] = c.value;
    auto p = parsePredicate(j);
    EXPECT_FALSE(p.ok()) << c.field << " = " << c.value.dump();
    if (!p.ok()) {
      EXPECT_NE(p.error().message.find(c.field), std::string::npos) << p.error().message;
    }
  }
  json neg = good;
  neg["findings"]["error"] = -1;
  EXPECT_FALSE(parsePredicate(neg).ok());
  EXPECT_FALSE(parsePredicate(json::array()).ok());
  json big = good;
  big["report"]["size"] = int64_t(kMaxReportBlobBytes) + 1;
  EXPECT_FALSE(parsePredicate(big).ok());
  json other = good;
  other["report"]["mediaType"] = "application/json";
  EXPECT_FALSE(parsePredicate(other).ok());
  // Fields a later version adds are ignored.
  json later = good;
  later["suppressed"] = json::array();
  EXPECT_TRUE(parsePredicate(later).ok());
  // The report blob must support the signed verdict: a pass's predicate over a failing report is
  // refused when the blob is read.
  json lying = good;
  lying["verdict"] = "pass";
  auto p = parsePredicate(lying);
  ASSERT_TRUE(p.ok());
  auto checked = checkReportBlob(*p, reportBlob(auditReport(0, 0, 1)));
  ASSERT_FALSE(checked.ok());
  EXPECT_NE(checked.error().message.find("fail"), std::string::npos) << checked.error().message;
  EXPECT_FALSE(checkReportBlob(*p, "[]").ok());
}

TEST(CosignLayout, MergeKeepsOtherToolsLayersAndReplacesOurOlderOne) {
  auto digest = [](const std::string& s) { return oci::Digest{"sha256", util::sha256Hex(s)}; };
  EXPECT_EQ(cosignAttestationTag(digest("x")), "sha256-" + util::sha256Hex("x") + ".att");
  oci::Descriptor first{kDsseMediaType, digest("first"), 5, {}, {}, {}};
  auto fresh = mergeCosignAttestation(std::nullopt, first, kReportPredicateType);
  ASSERT_TRUE(fresh.ok()) << fresh.error().message;
  json m = json::parse(fresh->manifest);
  EXPECT_EQ(m["mediaType"], "application/vnd.oci.image.manifest.v1+json");
  ASSERT_EQ(m["layers"].size(), 1u);
  EXPECT_EQ(m["layers"][0]["mediaType"], "application/vnd.dsse.envelope.v1+json");
  EXPECT_EQ(m["layers"][0]["annotations"]["predicateType"], kReportPredicateType);
  EXPECT_EQ(m["layers"][0]["annotations"]["dev.cosignproject.cosign/signature"], "");
  EXPECT_EQ(m["config"]["digest"], "sha256:" + util::sha256Hex(fresh->config));
  EXPECT_EQ(json::parse(fresh->config)["rootfs"]["diff_ids"][0], first.digest.str());

  // Another tool's attestation (SLSA provenance) and a layer this code cannot even read stay.
  json theirs = m;
  theirs["layers"].push_back({{"mediaType", "application/vnd.dsse.envelope.v1+json"},
                              {"digest", digest("slsa").str()},
                              {"size", 4},
                              {"annotations", {{"predicateType", "https://slsa.dev/provenance/v1"}}}});
  theirs["layers"].push_back({{"mediaType", 7}});
  oci::Descriptor second{kDsseMediaType, digest("second"), 6, {}, {}, {}};
  // Which layers go is the caller's judgement of their payloads (isKernodeckStatement below),
  // not the annotation: `first` is replaced because it is named, whatever it is labelled.
  auto merged = mergeCosignAttestation(theirs.dump(), second, kReportPredicateType, {first.digest.str()});
  ASSERT_TRUE(merged.ok()) << merged.error().message;
  json after = json::parse(merged->manifest);
  ASSERT_EQ(after["layers"].size(), 3u) << after.dump(1);
  EXPECT_EQ(after["layers"][0]["digest"], digest("slsa").str());
  EXPECT_EQ(after["layers"][1]["mediaType"], 7);
  EXPECT_EQ(after["layers"][2]["digest"], second.digest.str());
  EXPECT_EQ(json::parse(merged->config)["rootfs"]["diff_ids"].size(), 3u);

  // A layer labelled as Kernodeck's but not named as replaced stays: labels decide nothing.
  auto kept = mergeCosignAttestation(m.dump(), second, kReportPredicateType);
  ASSERT_TRUE(kept.ok());
  EXPECT_EQ(json::parse(kept->manifest)["layers"].size(), 2u);

  // Whatever is under the tag that is not an image manifest is not overwritten.
  for (const char* bad : {"", "[]", "{\"manifests\":[]}", "{\"layers\":{}}"})
    EXPECT_FALSE(mergeCosignAttestation(std::string(bad), second, kReportPredicateType).ok()) << bad;
}

// A layer is Kernodeck's when its DSSE payload is a statement of a Kernodeck report predicate
// type (any version), signed or not; the envelope's payloadType and the layer's labels do not
// matter, and anything else (another tool's statement, junk) is not.
TEST(CosignLayout, KernodeckStatementsAreJudgedByTheirPayload) {
  EXPECT_EQ(std::string(kReportPredicateType).rfind(kKernodeckPredicateTypePrefix, 0), 0u);
  EXPECT_EQ(std::string(kReportPredicateTypeV1).rfind(kKernodeckPredicateTypePrefix, 0), 0u);
  auto envelope = [](const json& statement, const std::string& payloadType = "application/vnd.in-toto+json") {
    return json{{"payloadType", payloadType}, {"payload", util::base64Encode(statement.dump())}, {"signatures", json::array()}}
        .dump();
  };
  json st = {{"_type", "https://in-toto.io/Statement/v1"},
             {"subject", {{{"name", "r/x"}, {"digest", {{"sha256", std::string(64, 'a')}}}}}},
             {"predicateType", kReportPredicateType},
             {"predicate", {{"verdict", "pass"}}}};
  EXPECT_TRUE(isKernodeckStatement(envelope(st)));                // unsigned
  EXPECT_TRUE(isKernodeckStatement(envelope(st, "text/plain")));  // payloadType aside
  json v1 = st;
  v1["predicateType"] = kReportPredicateTypeV1;
  EXPECT_TRUE(isKernodeckStatement(envelope(v1)));
  json slsa = st;
  slsa["predicateType"] = "https://slsa.dev/provenance/v1";
  EXPECT_FALSE(isKernodeckStatement(envelope(slsa)));
  json lookalike = st;
  lookalike["predicateType"] = "https://kernodeck.dev/attestation/reportx";
  EXPECT_FALSE(isKernodeckStatement(envelope(lookalike)));
  for (const char* bad : {"", "[]", "{}", "{\"payload\":7}", "{\"payload\":\"!!\"}", "{\"payload\":\"e30=\"}"})
    EXPECT_FALSE(isKernodeckStatement(bad)) << bad;

  // Re-wrapped as Go's encoding/json (cosign, policy-controller) would still read it: the key in
  // another case, after a decoy, behind a lone surrogate or invalid UTF-8 that a strict parser
  // refuses, with line breaks in the base64, with escaped characters.
  std::string b64 = util::base64Encode(st.dump());
  std::string decoy = util::base64Encode(slsa.dump());
  std::string escaped = b64;
  escaped.replace(0, 1, "\\u00" + util::toHex(escaped.substr(0, 1)));
  std::string broken = b64;
  broken.insert(8, "\\n");
  for (const std::string& wrapped :
       {"{\"Payload\":\"" + b64 + "\"}", "{\"payload\":\"" + decoy + "\",\"PAYLOAD\":\"" + b64 + "\"}",
        "{\"x\":\"\\ud800\",\"payload\":\"" + b64 + "\"}", "{\"x\":\"\xff\xfe\",\"payload\":\"" + b64 + "\"}",
        "{\"payload\":\"" + broken + "\"}", "{\"payload\":\"" + escaped + "\"}",
        "{\"signatures\":[{\"sig\":\"x\",\"payload\":1}],\"payload\" : \"" + b64 + "\"}"})
    EXPECT_TRUE(isKernodeckStatement(wrapped)) << wrapped.substr(0, 80);
  // Only the top-level member: a Kernodeck payload nested in another tool's document is not ours.
  EXPECT_FALSE(isKernodeckStatement("{\"payload\":\"" + decoy + "\",\"inner\":{\"payload\":\"" + b64 + "\"}}"));
}

}  // namespace attest_predicate_test
