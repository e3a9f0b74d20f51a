#include "kernodeck/hook/hook.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>

#include "kernodeck/hook/compat_libraries.h"
#include "kernodeck/hook/container_check.h"
#include "kernodeck/host/host_record.h"
#include "kernodeck/oci/fs_view.h"
#include "kernodeck/oci/runtime_spec.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

namespace kernodeck::hook {

using nlohmann::json;

namespace {

// Opens the log for appending, creating its directory (one level, mode 0750: the log names
// containers and images) when it is missing. -1 and `why` set when it cannot; a log that is
// silently dropped would leave crun's refusals explained nowhere.
int openLog(const std::string& file, std::string& why) {
  if (file.empty()) return -1;
  int fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  if (fd < 0 && errno == ENOENT) {
    std::string dir = file.substr(0, file.find_last_of('/'));
    if (!dir.empty() && ::mkdir(dir.c_str(), 0750) != 0 && errno != EEXIST) {
      why = "cannot create the log directory " + dir + ": " + std::strerror(errno);
      return -1;
    }
    fd = ::open(file.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0640);
  }
  if (fd < 0) why = "cannot open the log " + file + ": " + std::strerror(errno);
  return fd;
}

void appendLog(int fd, const json& line) {
  if (fd < 0) return;
  std::string text = line.dump() + "\n";  // one write: lines of concurrent hooks do not interleave
  ssize_t ignored = ::write(fd, text.data(), text.size());
  (void)ignored;
  ::close(fd);
}

// What an earlier run of this hook for the same container decided (a hooks.d entry and a CDI
// entry both installed: the hook runs twice), from the record it left for the same container id
// and process; empty when there is none (or it is a record of an earlier start, a restart). The
// stricter of the two runs decides: a second, looser entry cannot make the result looser.
struct EarlierRun {
  std::string policy, decision;
};

// The fields of a record earlierRun compares (container.id, container.pid, policy, decision),
// read without building the record's document: of what the hook parses, the record (host facts,
// verdicts) is the largest, and only these four fields of it matter (later duplicates win, as in
// a parsed document; a field of another type counts as absent).
struct RecordFields : nlohmann::json_sax<json> {
  bool object = false;
  std::optional<std::string> id, policy, decision;
  std::optional<int64_t> pid;

  bool null() override { return scalar(nullptr, nullptr); }
  bool boolean(bool) override { return scalar(nullptr, nullptr); }
  bool number_integer(number_integer_t v) override { return scalar(nullptr, &v); }
  bool number_unsigned(number_unsigned_t v) override {
    number_integer_t i = v > uint64_t(INT64_MAX) ? -1 : static_cast<number_integer_t>(v);
    return scalar(nullptr, &i);
  }
  bool number_float(number_float_t, const string_t&) override { return scalar(nullptr, nullptr); }
  bool string(string_t& v) override { return scalar(&v, nullptr); }
  bool binary(binary_t&) override { return scalar(nullptr, nullptr); }
  bool start_object(std::size_t) override {
    if (stack_.empty()) object = true;
    stack_.push_back({true, ""});
    return true;
  }
  bool key(string_t& k) override {
    stack_.back().key = k;
    return true;
  }
  bool end_object() override { return end(); }
  bool start_array(std::size_t) override {
    stack_.push_back({false, ""});
    return true;
  }
  bool end_array() override { return end(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  struct Level {
    bool object;
    std::string key;
  };
  std::vector<Level> stack_;

  bool end() {
    stack_.pop_back();
    if (!stack_.empty()) scalar(nullptr, nullptr);  // a nested value where a field was: absent
    return true;
  }
  // A value (a scalar, or a nested one just closed, passed as neither) for the current key.
  bool scalar(const std::string* s, const number_integer_t* n) {
    if (stack_.size() == 1 && stack_[0].object) {
      if (stack_[0].key == "policy") policy = s ? std::optional<std::string>(*s) : std::nullopt;
      if (stack_[0].key == "decision") decision = s ? std::optional<std::string>(*s) : std::nullopt;
    } else if (stack_.size() == 2 && stack_[0].object && stack_[0].key == "container" && stack_[1].object) {
      if (stack_[1].key == "id") id = s ? std::optional<std::string>(*s) : std::nullopt;
      if (stack_[1].key == "pid") pid = n ? std::optional<int64_t>(*n) : std::nullopt;
    }
    return true;
  }
};

EarlierRun earlierRun(const oci::FsView* view, const oci::RuntimeState& st) {
  if (!view) return {};
  auto resolved = view->resolve("run/kernodeck/host.json", false);
  if (!resolved.ok()) return {};
  auto text = view->readResolved(*resolved, 4u << 20);
  if (!text.ok()) return {};
  RecordFields rec;
  if (!json::sax_parse(*text, &rec) || !rec.object || rec.id != st.id || rec.pid != st.pid || !rec.policy ||
      !rec.decision)
    return {};
  return {*rec.policy, *rec.decision};
}

int decisionRank(const std::string& d) { return d == "block" ? 2 : d == "warn" ? 1 : 0; }

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

ExpectationRead readExpectation(const oci::FsView* view, const std::string& path, bool named) {
  ExpectationRead out;
  if (!view) return out;  // no container root to read: nothing was baked in that we could see
  std::string shown = "/" + util::printable(path.front() == '/' ? path.substr(1) : path, 200);
  auto resolved = view->resolve(path, true);  // inside the container root only
  std::optional<oci::Node> node;
  if (resolved.ok()) node = view->stat(*resolved);
  if (!resolved.ok() && !resolved.error().is(ErrorKind::NotFound)) {
    out.problem = shown + ": " + resolved.error().message;
    return out;
  }
  if (!node) {
    // A link that does not resolve inside the container root is as unusable as a loop: the image
    // put something there, and what it pointed to is not what the hook can read.
    if (auto link = view->resolve(path, false); link.ok())
      if (auto n = view->stat(*link); n && n->kind == oci::EntryKind::Symlink) {
        out.problem = shown + " is a symlink to " + util::printable(n->linkTarget, 200) +
                      ", which does not resolve inside the container root";
        return out;
      }
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
  auto text = view->readResolved(*resolved, kMaxExpectationBytes);
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

// The container's config.json, from the bundle the state names (or the one the container
// process sees, for crun's bundle "/"); the error says which file and why.
Result<oci::ContainerSpec> readBundleConfig(const oci::RuntimeState& st, json& log) {
  std::string bundle = bundleDir(st);
  if (bundle != st.bundle) log["bundle_via"] = bundle;
  auto cfgText = util::readFileLimited(bundle + "/config.json", 4u << 20);
  if (!cfgText.ok())
    return Error(
        cfgText.error().kind,
        cfgText.error().message +
            (st.bundle == "/" ? " (the runtime passed bundle \"/\", as crun does for a user namespace with devices, "
                                "containers/crun#2261, and the container process's directory has no config.json)"
                              : ""));
  return oci::parseContainerConfig(*cfgText, bundle);
}

// The value of annotation `key`, the spec's over the state's; empty when neither has it.
std::optional<std::string> annotation(const oci::RuntimeState& st, const oci::ContainerSpec& spec,
                                      const std::string& key) {
  std::optional<std::string> value;
  for (const auto* ann : {&st.annotations, &spec.annotations})
    if (auto it = ann->find(key); it != ann->end()) value = it->second;
  return value;
}

// The host as the hook sees it: its facts and groups, or (root) why its root cannot be read.
struct HostView {
  host::HostFacts facts;
  std::map<std::string, uint32_t> groups;
  Status root;
};

HostView readHost(const Options& opts) {
  HostView h;
  std::unique_ptr<host::HostFs> disk;
  const host::HostFs* fs = opts.hostFs;
  h.root = fs ? Status() : host::checkHostRoot(opts.hostRoot);
  if (!h.root.ok()) return h;
  if (!fs) fs = (disk = host::diskHostFs(opts.hostRoot)).get();
  h.facts = host::readHostFacts(*fs);
  if (auto g = fs->read("/etc/group", 1 << 20)) h.groups = parseGroupFile(*g);
  return h;
}

// The image's forward-compatibility libraries, judged by their ELF notes as NVIDIA's
// enable-cuda-compat hook judges them: they, not the file names the audit saw, say which host
// branches the CUDA check may count as forward compatible.
struct CompatJudgement {
  json libraries = json::array();  // the record's forward_compat
  std::vector<report::Finding> findings;
  std::vector<std::string> branches;  // the host's driver branch, when a library's note covers it
  bool any = false;                   // the image holds compat libraries
};

CompatJudgement judgeCompatLibraries(const oci::FsView& view, const std::string& root, const host::HostFacts& facts) {
  CompatJudgement out;
  std::string hostDriver = facts.nvidia ? facts.nvidia->version : "";
  auto libraries = readCompatLibraries(view, root);
  out.any = !libraries.empty();
  for (const auto& lib : libraries) {
    json j = {{"path", lib.path}, {"driver", lib.driver}};
    if (lib.note) {
      auto d = gpu::fwdCompatApplies(*lib.note, lib.driver, hostDriver, facts.maxCuda);
      j["note"] = lib.note->toJson();
      j["applies"] = d.applies;
      j["why"] = d.why;
      if (d.applies && !hostDriver.empty()) out.branches.push_back(util::split(hostDriver, '.')[0]);
      out.findings.push_back(
          {"hook.cuda.forward_compat",
           report::Severity::Info,
           lib.path + (d.applies ? ": forward compatibility applies: " : ": does not apply: ") + d.why,
           {{"path", lib.path}}});
    } else {
      j["applies"] = false;
      j["why"] =
          lib.problem.empty() ? "no .note.cuda.fwd_compatibility: NVIDIA's toolkit does not use it" : lib.problem;
      if (!lib.problem.empty())
        out.findings.push_back({"hook.cuda.compat_note_invalid",
                                report::Severity::Warning,
                                lib.path + ": its .note.cuda.fwd_compatibility cannot be read: " + lib.problem,
                                {{"path", lib.path}}});
    }
    out.libraries.push_back(j);
  }
  return out;
}

// What the hook itself found beside the container check: a host root it cannot read (then the
// check's verdicts, made without a host, are dropped) and an unusable expectation.
void addHookFindings(ContainerCheck& check, const Options& opts, const Status& hostRoot, const ExpectationRead& expect,
                     const std::string& expectPath) {
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
    check.findings.insert(check.findings.begin(),
                          report::Finding{"hook.expectation.invalid",
                                          report::Severity::Error,
                                          "the image's expectation " + expect.problem +
                                              "; fix it (kernodeck audit --expect-out writes a valid one) or remove it",
                                          {{"path", expectPath}}});
}

// The record's verdicts (redacted), and the first error among them for the one-line message.
std::string addVerdicts(host::HostRecord& rec, const ContainerCheck& check) {
  std::string firstError;
  for (const auto& f : check.findings) {
    host::HostRecord::Verdict v{f.code, report::toString(f.severity), report::redactText(f.message), {}};
    for (const auto& [k, val] : f.evidence) v.evidence[k] = report::redactText(val);
    rec.verdicts.push_back(std::move(v));
    if (f.severity == report::Severity::Error && firstError.empty()) firstError = f.code + ": " + f.message;
  }
  return firstError;
}

// Leaves the record in the container, unless an earlier run's stricter decision stands or the
// container is refused (then nobody will read it).
void leaveRecord(const Options& opts, const std::string& root, const EarlierRun& earlier, const json& record,
                 bool refused, json& log) {
  std::string decision = record["decision"];
  if (decisionRank(earlier.decision) > decisionRank(decision)) {
    log["record"] = "kept the earlier run's, whose decision (" + earlier.decision + ") is stricter";
    return;
  }
  if (refused) return;
  // Before the container's process starts nobody reads the record, so an old one is unlinked
  // first (util::Replace); at a later stage (a hook registered at poststart) it is replaced
  // atomically.
  bool beforeStart = opts.stage.empty() || opts.stage == "createRuntime" || opts.stage == "prestart" ||
                     opts.stage == "createContainer";
  auto w = util::writeBeneath(root, "run/kernodeck/host.json", record.dump(2) + "\n", 0644,
                              beforeStart ? util::Replace::UnlinkFirst : util::Replace::Atomic);
  if (!w.ok()) log["record_error"] = w.error().message;
}

}  // namespace

Outcome run(const Options& opts, std::string_view stateJson) {
  auto t0 = std::chrono::steady_clock::now();
  Outcome out;
  Policy policy = opts.policy;
  json log = {{"time", util::utcTimestamp()},
              {"hook_version", kVersion},  // which binary ran: an upgrade's reaches the log at once
              {"stage", opts.stage},
              {"node_policy", opts.policy == Policy::Enforce ? "enforce" : "warn"}};
  std::string logProblem;
  int logFd = openLog(opts.logFile, logProblem);
  auto finish = [&](bool block, const std::string& reason) {
    bool enforce = policy == Policy::Enforce;
    out.exitCode = block && enforce ? (opts.usageError.empty() ? 1 : 2) : 0;
    if (!reason.empty())
      out.message =
          std::string("kernodeck-hook: ") + (block && enforce ? "refused: " : "warning: ") + report::redactText(reason);
    if (!logProblem.empty())
      out.message += std::string(out.message.empty() ? "kernodeck-hook: " : "; ") + report::redactText(logProblem);
    log["policy"] = enforce ? "enforce" : "warn";
    log["decision"] = !block ? "allow" : enforce ? "block" : "warn";
    log["reason"] = report::redactText(reason);
    log["duration_us"] =
        std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - t0).count();
    appendLog(logFd, log);
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
    auto spec = readBundleConfig(*st, log);
    if (!spec.ok()) return finish(true, spec.error().message);

    // A container may ask to be stricter than the node, never looser.
    if (annotation(*st, *spec, "io.kernodeck.policy") == "enforce") policy = Policy::Enforce;

    // The container's root, opened once for the earlier record, the expectation and the compat
    // libraries; none when it cannot be opened (then nothing baked in can be seen).
    std::string root = containerRoot(*st, *spec);
    auto opened = oci::openDirView(root);
    const oci::FsView* view = opened.ok() ? opened->get() : nullptr;
    EarlierRun earlier = earlierRun(view, *st);
    if (!earlier.policy.empty()) {
      log["earlier_run"] = {{"policy", earlier.policy}, {"decision", earlier.decision}};
      if (earlier.policy == "enforce") policy = Policy::Enforce;
    }
    auto named = annotation(*st, *spec, "io.kernodeck.expect");
    std::string expectPath = named.value_or("etc/kernodeck/expect.json");
    ExpectationRead expect = readExpectation(view, expectPath, named.has_value());

    HostView host = readHost(opts);
    std::optional<gpu::Expectation> checked = expect.value;
    CompatJudgement compat;
    if (host.root.ok() && view) compat = judgeCompatLibraries(*view, root, host.facts);
    if (compat.any && checked) checked->compatDriverBranches = compat.branches;
    ContainerCheck check = checkContainer(host.facts, *spec, checked, host.groups);
    check.findings.insert(check.findings.end(), compat.findings.begin(), compat.findings.end());
    addHookFindings(check, opts, host.root, expect, expectPath);

    host::HostRecord rec;
    std::string firstError = addVerdicts(rec, check);
    bool block = check.blocking();
    rec.kernodeckVersion = kVersion;
    rec.time = util::utcTimestamp();
    rec.container = {st->id, st->bundle, st->pid};
    rec.host = host.facts;
    rec.gpuContainer = check.gpuContainer;
    rec.vendor = check.vendor;
    rec.requestedGpus = check.requestedGpus;
    rec.passedNodes = check.passedNodes;
    rec.expectation = expect.value;
    rec.forwardCompat = compat.libraries;
    rec.policy = policy == Policy::Enforce ? "enforce" : "warn";
    rec.runs = earlier.policy.empty() ? 1 : 2;
    rec.logError = logProblem.empty() ? "" : report::redactText(logProblem);
    rec.decision = !block ? "allow" : policy == Policy::Enforce ? "block" : "warn";
    out.record = rec.toJson();
    log["gpu_container"] = check.gpuContainer;
    log["verdicts"] = out.record["verdicts"];
    leaveRecord(opts, root, earlier, out.record, block && policy == Policy::Enforce, log);
    return finish(block, firstError);
  } catch (const std::exception& e) {
    return finish(true, std::string("internal error: ") + e.what());
  }
}

}  // namespace kernodeck::hook
