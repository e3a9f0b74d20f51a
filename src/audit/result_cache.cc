// See result_cache.h.
#include "kernodeck/audit/result_cache.h"

#include <sys/stat.h>

#include "kernodeck/oci/platform.h"
#include "kernodeck/os/rpm.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/version.h"

namespace kernodeck::audit {

using nlohmann::json;

std::string resultPath(const std::string& cacheDir, const oci::Digest& manifest, const oci::Digest& config,
                       const AuditOptions& opts) {
  util::Hasher h("sha256");
  h.update("kernodeck.image-result/v1\n");
  h.update(std::string(kVersion) + "\n");
  // Any rebuild of the binary changes the analysis it may do: its size and time are in the key.
  struct stat st {};
  if (::stat("/proc/self/exe", &st) != 0) return {};
  h.update(std::to_string(st.st_size) + " " + std::to_string(st.st_mtim.tv_sec) + "." +
           std::to_string(st.st_mtim.tv_nsec) + "\n");
  // So does the rpm plugin, which the binary opens for rpm images (its file, size and time).
  h.update("rpm plugin " + os::rpmPluginIdentity() + "\n");
  h.update(manifest.str() + "\n" + config.str() + "\n");
  h.update((opts.platform ? oci::normalize(*opts.platform).str() : oci::hostPlatform().str()) + "\n");
  for (const auto& t : opts.pythonTargets) h.update("python " + t + "\n");
  // --lock: each lock's bytes; --wheels: the wheels' bytes are not hashed here, so no result is kept.
  if (!opts.lock.wheelsDir.empty()) return {};
  for (const auto& l : opts.lock.locks) h.update("lock " + l.environment + "=" + l.file + " " + l.sha256 + "\n");
  for (const auto& g : opts.lock.groups) h.update("lock-group " + g + "\n");
  if (!opts.gpuCode) h.update("no gpu code\n");
  // A result built from shared layer results holds what the keys trusted then vouched for: it is
  // replayed only under the same trust (a report signed now never rests on a key not trusted now).
  if (opts.sharedScans) h.update("shared " + opts.sharedScans->trustId() + "\n");
  for (const auto& f : opts.requirementsFiles) {
    auto content = util::readFileLimited(f, 16u << 20);
    if (!content.ok()) return {};
    h.update(f + "\n" + util::sha256Hex(*content) + "\n");
  }
  return cacheDir + "/results/sha256/" + h.hex() + ".json";
}

void storeResult(const std::string& path, const StoredResult& result) {
  json rec = {{"steps", json::object()},
              {"sections", result.sections},
              {"findings", json::array()},
              {"expectation", result.expectation.toJson()}};
  for (const auto& st : result.steps)
    rec["steps"][st.name] = {{"status", report::toString(st.status)}, {"reason", st.error}};
  for (const auto& f : result.findings)
    rec["findings"].push_back({{"code", f.code},
                               {"severity", report::toString(f.severity)},
                               {"message", f.message},
                               {"evidence", f.evidence}});
  util::makeDirs(path.substr(0, path.rfind('/')));
  // Not synced: a torn entry does not parse, and is then ignored.
  (void)util::writeFileAtomic(path, rec.dump(), false);
}

std::optional<StoredResult> loadResult(const std::string& path) {
  auto text = util::readFileLimited(path, 256u << 20);
  if (!text.ok()) return std::nullopt;
  json rec = util::parseUntrustedJson(*text);
  if (!rec.is_object() || !rec.contains("steps") || !rec["steps"].is_object() || !rec.contains("findings") ||
      !rec["findings"].is_array() || !rec.contains("sections") || !rec["sections"].is_object())
    return std::nullopt;
  StoredResult out;
  for (const auto& f : rec["findings"]) {
    if (!f.is_object() || !f.contains("severity") || !f["severity"].is_string()) return std::nullopt;
    auto sev = report::parseSeverity(f["severity"].get<std::string>());
    if (!sev) return std::nullopt;
    report::Finding fi{report::stringAt(f, "code"), *sev, report::stringAt(f, "message"), {}};
    if (f.contains("evidence") && f["evidence"].is_object())
      for (auto it = f["evidence"].begin(); it != f["evidence"].end(); ++it)
        if (it.value().is_string()) fi.evidence[it.key()] = it.value().get<std::string>();
    out.findings.push_back(std::move(fi));
  }
  auto expectation = gpu::expectationFromJson(rec.value("expectation", json::object()));
  if (!expectation.ok()) return std::nullopt;
  out.expectation = *expectation;
  for (const char* name : kResultSteps) {
    if (!rec["steps"].contains(name) || !rec["steps"][name].is_object()) return std::nullopt;
    const json& st = rec["steps"][name];
    std::string status = report::stringAt(st, "status");
    if (status != "passed" && status != "skipped") return std::nullopt;
    report::Step step;
    step.name = name;
    step.status = status == "passed" ? report::StepStatus::Passed : report::StepStatus::Skipped;
    step.error = report::stringAt(st, "reason");
    out.steps.push_back(std::move(step));
  }
  out.sections = rec["sections"];
  return out;
}

}  // namespace kernodeck::audit
