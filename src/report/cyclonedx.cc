// CycloneDX 1.5 JSON, what SBOM platforms (Dependency-Track...) read: the audited image or tree
// as metadata.component, then the OS, its dpkg packages, each Python interpreter and its
// packages (purls, hashes where the image records them), the audit's verdict and each
// component's verification result as kernodeck:* properties.
#include "kernodeck/report/formats.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

namespace kernodeck::report {

namespace {

using nlohmann::json;

const char* cdxType(const std::string& t) {
  if (t == "container") return "container";
  if (t == "filesystem") return "platform";
  if (t == "operating-system") return "operating-system";
  if (t == "python") return "application";
  return "library";
}

json cdxComponent(const Component& c) {
  json j = {{"type", cdxType(c.type)}, {"bom-ref", c.ref}, {"name", c.name}};
  if (!c.version.empty()) j["version"] = c.version;
  if (!c.description.empty()) j["description"] = c.description;
  if (!c.purl.empty()) j["purl"] = c.purl;
  if (!c.hashes.empty()) {
    j["hashes"] = json::array();
    for (const auto& [alg, hex] : c.hashes) j["hashes"].push_back({{"alg", alg}, {"content", hex}});
  }
  json props = json::array();
  props.push_back({{"name", "kernodeck:type"}, {"value", c.type}});
  for (const auto& [k, v] : c.properties) props.push_back({{"name", k}, {"value", v}});
  if (!c.verification.empty()) props.push_back({{"name", "kernodeck:verification"}, {"value", c.verification}});
  if (!c.worstSeverity.empty()) props.push_back({{"name", "kernodeck:worst_severity"}, {"value", c.worstSeverity}});
  j["properties"] = props;
  return j;
}

}  // namespace

json toCycloneDx(const Report& r, int failOn) {
  std::vector<Component> inv = inventoryOf(r, failOn);
  json components = json::array();
  json dependsOn = json::array();
  for (size_t i = 1; i < inv.size(); ++i) {
    components.push_back(cdxComponent(inv[i]));
    dependsOn.push_back(inv[i].ref);
  }
  json metaComponent = cdxComponent(inv.front());
  std::map<std::string, int> counts = {{"error", 0}, {"warning", 0}, {"info", 0}};
  for (const auto& f : r.findings()) counts[toString(f.severity)]++;
  json props = json::array({{{"name", "kernodeck:verdict"}, {"value", r.verdict(failOn)}},
                            {{"name", "kernodeck:complete"}, {"value", r.failed() ? "false" : "true"}}});
  for (const auto& [sev, n] : counts)
    props.push_back({{"name", "kernodeck:findings:" + sev}, {"value", std::to_string(n)}});
  return {{"bomFormat", "CycloneDX"},
          {"specVersion", "1.5"},
          {"serialNumber", "urn:uuid:" + reportUuid(r, failOn)},
          {"version", 1},
          {"metadata",
           {{"timestamp", util::utcTimestamp()},
            {"tools",
             {{"components", json::array({{{"type", "application"}, {"name", "kernodeck"}, {"version", kVersion}}})}}},
            {"component", metaComponent},
            {"properties", props}}},
          {"components", components},
          {"dependencies", json::array({{{"ref", inv.front().ref}, {"dependsOn", dependsOn}}})}};
}

}  // namespace kernodeck::report
