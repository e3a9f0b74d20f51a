#include "kernodeck/hook/hook.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <fstream>

#include "kernodeck/hook/container_check.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/oci/runtime_spec.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

namespace kernodeck::hook {

using nlohmann::json;

namespace {

void appendLog(const std::string& file, const json& line) {
  if (file.empty()) return;
  std::ofstream out(file, std::ios::app);
  out << line.dump() << "\n";
}

// The directory through which the container's root is seen: via the container
// process when that path exists (it shows mounts made in the container's namespace).
std::string containerRoot(const oci::RuntimeState& st, const oci::ContainerSpec& spec) {
  if (st.pid > 0) {
    std::string viaProc = "/proc/" + std::to_string(st.pid) + "/root" + spec.rootPath;
    struct stat s {};
    if (::stat(viaProc.c_str(), &s) == 0 && S_ISDIR(s.st_mode)) return viaProc;
  }
  return spec.rootPath;
}

}  // namespace

Outcome run(const Options& opts, std::string_view stateJson) {
  auto t0 = std::chrono::steady_clock::now();
  Outcome out;
  Policy policy = opts.policy;
  json log = {{"time", util::utcTimestamp()}, {"stage", opts.stage}, {"node_policy", opts.policy == Policy::Enforce ? "enforce" : "warn"}};
  auto finish = [&](bool block, const std::string& reason) {
    bool enforce = policy == Policy::Enforce;
    out.exitCode = block && enforce ? 1 : 0;
    if (!reason.empty())
      out.message = std::string("kernodeck-hook: ") + (block && enforce ? "refused: " : "warning: ") + report::redactText(reason);
    log["policy"] = enforce ? "enforce" : "warn";
    log["decision"] = !block ? "allow" : enforce ? "block" : "warn";
    log["reason"] = report::redactText(reason);
    log["duration_us"] = std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
    appendLog(opts.logFile, log);
    return out;
  };

  try {
    auto st = oci::parseRuntimeState(stateJson);
    if (!st.ok()) return finish(true, st.error().message);
    log["container"] = st->id;
    log["bundle"] = st->bundle;
    auto cfgText = util::readFileLimited(st->bundle + "/config.json", 4u << 20);
    if (!cfgText.ok()) return finish(true, cfgText.error().message);
    auto spec = oci::parseContainerConfig(*cfgText, st->bundle);
    if (!spec.ok()) return finish(true, spec.error().message);

    // A container may ask to be stricter than the node, never looser.
    std::string asked;
    for (const auto* ann : {&st->annotations, &spec->annotations})
      if (auto it = ann->find("io.kernodeck.policy"); it != ann->end()) asked = it->second;
    if (asked == "enforce") policy = Policy::Enforce;

    std::string root = containerRoot(*st, *spec);
    std::optional<gpu::Expectation> expect;
    std::string expectPath = "etc/kernodeck/expect.json";
    for (const auto* ann : {&st->annotations, &spec->annotations})
      if (auto it = ann->find("io.kernodeck.expect"); it != ann->end()) expectPath = it->second;
    if (auto view = oci::openDirView(root); view.ok()) {
      auto text = (*view)->readFile(expectPath, 1 << 20);  // resolved inside the container root only
      if (text.ok()) {
        auto e = gpu::parseExpectation(*text);
        if (e.ok()) expect = *e;
        else log["expect_error"] = e.error().message;
      }
    }

    host::HostFacts facts = host::readHostFacts(opts.hostRoot);
    std::map<std::string, uint32_t> groups;
    std::string hr = opts.hostRoot == "/" ? "" : opts.hostRoot;
    if (auto g = util::readFileLimited(hr + "/etc/group", 1 << 20); g.ok()) groups = hook::parseGroupFile(*g);
    ContainerCheck check = checkContainer(facts, *spec, expect, groups);

    json findings = json::array();
    std::string firstError;
    for (const auto& f : check.findings) {
      json jf = {{"code", f.code}, {"severity", report::toString(f.severity)}, {"message", report::redactText(f.message)}};
      for (const auto& [k, v] : f.evidence) jf[k] = report::redactText(v);
      findings.push_back(jf);
      if (f.severity == report::Severity::Error && firstError.empty()) firstError = f.code + ": " + f.message;
    }
    bool block = check.blocking();
    out.record = {{"schema", "kernodeck.host/v1"},
                  {"kernodeck_version", kVersion},
                  {"time", util::utcTimestamp()},
                  {"container", {{"id", st->id}, {"bundle", st->bundle}}},
                  {"host", facts.toJson()},
                  {"gpu_container", check.gpuContainer},
                  {"vendor", check.vendor},
                  {"requested_gpus", check.requestedGpus},
                  {"passed_nodes", check.passedNodes},
                  {"expectation", expect ? expect->toJson() : json(nullptr)},
                  {"verdicts", findings},
                  {"policy", policy == Policy::Enforce ? "enforce" : "warn"},
                  {"decision", !block ? "allow" : policy == Policy::Enforce ? "block" : "warn"}};
    log["gpu_container"] = check.gpuContainer;
    log["verdicts"] = findings;
    if (!(block && policy == Policy::Enforce)) {
      auto w = util::writeBeneath(root, "run/kernodeck/host.json", out.record.dump(2) + "\n");
      if (!w.ok()) log["record_error"] = w.error().message;
    }
    return finish(block, firstError);
  } catch (const std::exception& e) {
    return finish(true, std::string("internal error: ") + e.what());
  }
}

}  // namespace kernodeck::hook
