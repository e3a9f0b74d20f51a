// The independent checkers of Kernodeck's output formats, from npm (tests/tools/npm, installed by
// scripts/deps --test into $KERNODECK_NPM_DIR, default /var/cache/kernodeck-test/npm): the SARIF
// multitool with GitHub code scanning's rules, packageurl-js and the CycloneDX library's strict
// validator, the last two through the small scripts in tests/tools/.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "support.h"

namespace kdktest {

inline std::string npmDir() {
  const char* d = std::getenv("KERNODECK_NPM_DIR");
  return d && *d ? d : "/var/cache/kernodeck-test/npm";
}

// Empty when node and the pinned checkers are installed, else what is missing.
inline std::string npmCheckersMissing() {
  if (!haveTool("node")) return "node";
  for (const char* p : {"/node_modules/.bin/sarif-multitool", "/node_modules/packageurl-js/package.json",
                        "/node_modules/@cyclonedx/cyclonedx-library/package.json", "/node_modules/ajv/package.json"})
    if (!std::filesystem::exists(npmDir() + p)) return npmDir() + p + " (scripts/deps --test)";
  return "";
}

// `sarif-multitool validate --rule-kind "Sarif;Gh"` over SARIF; the errors it reports, each as
// "RULE: arguments". Its log goes to OUT. A failure to run is one error.
inline std::vector<std::string> sarifMultitoolErrors(const std::string& sarif, const std::string& out) {
  std::filesystem::remove(out);
  // The npm wrapper runs the tool through a shell: the rule kinds keep their quotes.
  RunResult r = run("DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 " + npmDir() +
                    "/node_modules/.bin/sarif-multitool validate --rule-kind '\"Sarif;Gh\"' -o " + out + " " + sarif);
  if (r.code != 0 || !std::filesystem::exists(out))
    return {"the multitool failed (" + std::to_string(r.code) + "): " + r.out + r.err};
  nlohmann::json log = nlohmann::json::parse(readFile(out), nullptr, false);
  if (!log.is_object()) return {"the multitool's log is not JSON"};
  std::vector<std::string> errors;
  for (const auto& res : log["runs"][0].value("results", nlohmann::json::array()))
    if (res.value("level", "warning") == "error")
      errors.push_back(res.value("ruleId", "?") + ": " +
                       res["message"].value("arguments", nlohmann::json::array()).dump());
  return errors;
}

// tests/tools/check_purls.js over the SBOMs: each document's purls as packageurl-js reads them
// (one JSON object per file), and its exit status (1: a purl does not parse or lacks arch or
// distro).
inline RunResult checkPurls(const std::vector<std::string>& files) {
  std::string cmd =
      "KERNODECK_NPM_DIR=" + npmDir() + " node " + std::string(SOURCE_DIR) + "/tests/tools/check_purls.js";
  for (const auto& f : files) cmd += " " + f;
  return run(cmd);
}

// tests/tools/validate_cyclonedx.js: the CycloneDX library's strict validator; 0 when valid.
inline RunResult validateCycloneDx(const std::string& file) {
  return run("KERNODECK_NPM_DIR=" + npmDir() + " node " + std::string(SOURCE_DIR) +
             "/tests/tools/validate_cyclonedx.js " + file);
}

}  // namespace kdktest
