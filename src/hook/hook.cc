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
  if (st.pid > 0 && !spec.rootPath.starts_with("/proc/")) {
    std::string viaProc = "/proc/" + std::to_string(st.pid) + "/root" + spec.rootPath;
    struct stat s {};
    if (::stat(viaProc.c_str(), &s) == 0 && S_ISDIR(s.st_mode)) return viaProc;
  }
  return spec.rootPath;
}

// The bundle directory. crun passes `"bundle": "/"` when the container has a user namespace
// and devices (containers/crun#2261); the container process then still has the real bundle as
// its working directory, which /proc/PID/cwd reaches whatever mount namespace it is in. (crun's
// state also carries a non-standard `root`, relative to that same bundle.)
std::string bundleDir(const oci::RuntimeState& st) {
  if (st.bundle != "/" || st.pid <= 0) return st.bundle;
  return "/proc/" + std::to_string(st.pid) + "/cwd";
}

// The image's expectation: none (the file is absent), a valid one, or `problem` saying why the
// file that is there cannot be used (not a regular file, over kMaxExpectationBytes, not
// kernodeck.expect/v1). A path named by annotation must exist.
struct ExpectationRead {
  std::optional<gpu::Expectation> value;
  std::string problem;
};

ExpectationRead readExpectation(const std::string& root, const std::string& path, bool named) {
  ExpectationRead out;
  auto view = oci::openDirView(root);
  if (!view.ok()) return out;  // no container root to read: nothing was baked in that we could see
  std::string shown = "/" + util::printable(path.front() == '/' ? path.substr(1) : path, 200);
  auto resolved = (*view)->resolve(path, true);  // inside the container root only
  std::optional<oci::Node> node;
  if (resolved.ok()) node = (*view)->stat(*resolved);
  if (!resolved.ok() && resolved.error().code != "not_found") {
    out.problem = shown + ": " + resolved.error().message;
    return out;
  }
  if (!node) {
    if (named) out.problem = shown + ", named by the annotation io.kernodeck.expect, does not exist in the container";
    return out;
  }
  if (node->kind != oci::EntryKind::File) {
    out.problem = shown + " is " +
                  (node->kind == oci::EntryKind::Dir    ? "a directory"
                   : node->kind == oci::EntryKind::Fifo ? "a FIFO"
                                                        : "a special file") +
                  ", not a regular file";
    return out;
  }
  if (static_cast<uint64_t>(node->size) > kMaxExpectationBytes) {
    out.problem = shown + " is " + std::to_string(node->size) + " bytes, over the " +
                  util::humanBytes(kMaxExpectationBytes) + " limit for an expectation";
    return out;
  }
  auto text = (*view)->readResolved(*resolved, kMaxExpectationBytes);
  if (!text.ok()) {
    out.problem = shown + ": " + text.error().message;
    return out;
  }
  auto e = gpu::parseExpectation(*text);
  if (e.ok())
    out.value = *e;
  else
    out.problem = shown + ": " + e.error().message;
  return out;
}

}  // namespace

Outcome run(const Options& opts, std::string_view stateJson) {
  auto t0 = std::chrono::steady_clock::now();
  Outcome out;
  Policy policy = opts.policy;
  json log = {{"time", util::utcTimestamp()},
              {"stage", opts.stage},
              {"node_policy", opts.policy == Policy::Enforce ? "enforce" : "warn"}};
  auto finish = [&](bool block, const std::string& reason) {
    bool enforce = policy == Policy::Enforce;
    out.exitCode = block && enforce ? (opts.usageError.empty() ? 1 : 2) : 0;
    if (!reason.empty())
      out.message =
          std::string("kernodeck-hook: ") + (block && enforce ? "refused: " : "warning: ") + report::redactText(reason);
    log["policy"] = enforce ? "enforce" : "warn";
    log["decision"] = !block ? "allow" : enforce ? "block" : "warn";
    log["reason"] = report::redactText(reason);
    log["duration_us"] =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
    appendLog(opts.logFile, log);
    return out;
  };

  try {
    auto st = oci::parseRuntimeState(stateJson);
    if (!opts.usageError.empty()) {
      // A hook that cannot read its own command line checks nothing: refused under enforce,
      // started under warn, and logged either way (with the container when the state names it).
      if (st.ok()) log["container"] = st->id;
      return finish(true, "command line: " + opts.usageError);
    }
    if (!st.ok()) return finish(true, st.error().message);
    log["container"] = st->id;
    log["bundle"] = st->bundle;
    std::string bundle = bundleDir(*st);
    if (bundle != st->bundle) log["bundle_via"] = bundle;
    auto cfgText = util::readFileLimited(bundle + "/config.json", 4u << 20);
    if (!cfgText.ok())
      return finish(
          true,
          cfgText.error().message +
              (st->bundle == "/" ? " (the runtime passed bundle \"/\", as crun does for a user namespace with devices, "
                                   "containers/crun#2261, and the container process's directory has no config.json)"
                                 : ""));
    auto spec = oci::parseContainerConfig(*cfgText, bundle);
    if (!spec.ok()) return finish(true, spec.error().message);

    // A container may ask to be stricter than the node, never looser.
    std::string asked;
    for (const auto* ann : {&st->annotations, &spec->annotations})
      if (auto it = ann->find("io.kernodeck.policy"); it != ann->end()) asked = it->second;
    if (asked == "enforce") policy = Policy::Enforce;

    std::string root = containerRoot(*st, *spec);
    std::string expectPath = "etc/kernodeck/expect.json";
    bool named = false;
    for (const auto* ann : {&st->annotations, &spec->annotations})
      if (auto it = ann->find("io.kernodeck.expect"); it != ann->end()) {
        expectPath = it->second;
        named = true;
      }
    ExpectationRead expect = readExpectation(root, expectPath, named);

    host::HostFacts facts;
    std::map<std::string, uint32_t> groups;
    std::unique_ptr<host::HostFs> disk;
    const host::HostFs* fs = opts.hostFs;
    Status hostRoot = fs ? Status() : host::checkHostRoot(opts.hostRoot);
    if (hostRoot.ok()) {
      if (!fs) fs = (disk = host::diskHostFs(opts.hostRoot)).get();
      facts = host::readHostFacts(*fs);
      if (auto g = fs->read("/etc/group", 1 << 20)) groups = parseGroupFile(*g);
    }
    ContainerCheck check = checkContainer(facts, *spec, expect.value, groups);
    if (!hostRoot.ok()) {
      // Nothing about the host is known: its verdicts ("no NVIDIA driver") would be wrong.
      check.findings.clear();
      check.findings.push_back(
          {"hook.hostroot.unreadable",
           report::Severity::Error,
           hostRoot.error().message + ": the hook cannot check anything; fix --host-root in the hook's configuration",
           {{"host_root", opts.hostRoot}}});
    }
    if (!expect.problem.empty())
      check.findings.insert(
          check.findings.begin(),
          report::Finding{"hook.expectation.invalid",
                          report::Severity::Error,
                          "the image's expectation " + expect.problem +
                              "; fix it (kernodeck audit --expect-out writes a valid one) or remove it",
                          {{"path", expectPath}}});

    json findings = json::array();
    std::string firstError;
    for (const auto& f : check.findings) {
      json jf = {
          {"code", f.code}, {"severity", report::toString(f.severity)}, {"message", report::redactText(f.message)}};
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
                  {"expectation", expect.value ? expect.value->toJson() : json(nullptr)},
                  {"verdicts", findings},
                  {"policy", policy == Policy::Enforce ? "enforce" : "warn"},
                  {"decision", !block                      ? "allow"
                               : policy == Policy::Enforce ? "block"
                                                           : "warn"}};
    log["gpu_container"] = check.gpuContainer;
    log["verdicts"] = findings;
    if (!(block && policy == Policy::Enforce)) {
      // Before the container's process starts nobody reads the record, so an old one is unlinked
      // first (util::Replace); at a later stage (a hook registered at poststart) it is replaced
      // atomically.
      bool beforeStart = opts.stage.empty() || opts.stage == "createRuntime" || opts.stage == "prestart" ||
                         opts.stage == "createContainer";
      auto w = util::writeBeneath(root, "run/kernodeck/host.json", out.record.dump(2) + "\n", 0644,
                                  beforeStart ? util::Replace::UnlinkFirst : util::Replace::Atomic);
      if (!w.ok()) log["record_error"] = w.error().message;
    }
    return finish(block, firstError);
  } catch (const std::exception& e) {
    return finish(true, std::string("internal error: ") + e.what());
  }
}

}  // namespace kernodeck::hook
