// kernodeck.reference/v1: building it, verifying it, comparing records.
#include <dirent.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "git.h"
#include "kernodeck/host/host_facts.h"
#include "kernodeck/host/host_record.h"
#include "kernodeck/os/os_release.h"
#include "kernodeck/record/criterion.h"
#include "kernodeck/record/record.h"
#include "kernodeck/record/tensor_file.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using nlohmann::json;
using report::Severity;

namespace {

Result<std::pair<std::string, int64_t>> hashFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Error::Io("cannot read " + path);
  util::Hasher h("sha256");
  char buf[1 << 16];
  size_t n;
  int64_t total = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) h.update(buf, n), total += static_cast<int64_t>(n);
  std::fclose(f);
  return std::make_pair(h.hex(), total);
}

// A name that can move: "latest", an image tag without a digest, a model without a revision.
std::string mutableReason(const std::string& provenance) {
  if (provenance.empty()) return "";
  std::string p = util::toLower(provenance);
  if (p.find("latest") != std::string::npos) return "it names 'latest'";
  if (p.size() > 2048) return "it is over 2,048 characters long: no pinned name is";  // bounded before a regex reads it
  static const std::regex hub(R"(^(hf|huggingface)://[^@?]+$)");
  if (std::regex_match(p, hub)) return "it names a model without a revision (add @<commit>)";
  static const std::regex image(R"(^(docker://|oci://)?[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+:[\w.-]+$)");
  if (std::regex_match(p, image) && p.find("@sha256:") == std::string::npos)
    return "it is an image tag without a digest";
  return "";
}

// The machine the reference was made on: OS and CPU read under the host root (a fake tree in
// tests), the architecture from uname, the accelerator as declared or as the host facts show.
json systemFacts(const std::string& hostRoot, const std::string& accelerator, const json& host) {
  json s = json::object();
  if (auto osr = util::readFileLimited(hostRoot + "/etc/os-release", 64 << 10); osr.ok()) {
    auto kv = os::parseOsRelease(*osr);
    if (kv.count("PRETTY_NAME")) s["os"] = kv["PRETTY_NAME"];
  }
  struct utsname u {};
  if (::uname(&u) == 0) s["architecture"] = std::string(u.machine);
  if (auto info = util::readFileLimited(hostRoot + "/proc/cpuinfo", 8u << 20); info.ok()) {
    std::string model, physical;
    std::set<std::string> cores;
    int64_t threads = 0;
    for (const auto& line : util::split(*info, '\n')) {
      size_t colon = line.find(':');
      if (colon == std::string::npos) continue;
      std::string key(util::trim(line.substr(0, colon))), value(util::trim(line.substr(colon + 1)));
      if (key == "processor")
        ++threads;
      else if (key == "model name" && model.empty())
        model = value;
      else if (key == "physical id")
        physical = value;
      else if (key == "core id")
        cores.insert(physical + "/" + value);
    }
    json cpu = {{"threads", threads}, {"cores", cores.empty() ? threads : static_cast<int64_t>(cores.size())}};
    if (!model.empty()) cpu["model"] = model;
    if (threads) s["cpu"] = cpu;
  }
  bool nvidia = host.is_object() && host.contains("nvidia") && host.at("nvidia").is_object();
  s["accelerator"] = !accelerator.empty() ? accelerator : nvidia ? "cuda" : "cpu";
  return s;
}

// The environment variables that change what a run computes, as they are set now.
json determinismEnvironment() {
  json env = json::object();
  for (const char* name :
       {"CUBLAS_WORKSPACE_CONFIG", "PYTHONHASHSEED", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
        "CUDA_LAUNCH_BLOCKING", "NVIDIA_TF32_OVERRIDE", "CUDA_VISIBLE_DEVICES"})
    if (const char* v = std::getenv(name)) env[name] = std::string(v);
  return env;
}

// Each tensor of the expected outputs: name, dtype, shape and the file's sha256.
Result<json> outputFacts(const std::string& dir, const HashedInput& h) {
  json out = json::array();
  for (const auto& f : h.files) {
    bool npy = f.path.ends_with(".npy"), st = f.path.ends_with(".safetensors"),
         pt = f.path.ends_with(".pt") || f.path.ends_with(".pth");
    if (!npy && !st && !pt) continue;
    KDK_TRY_ASSIGN(std::string bytes, util::readFileLimited(dir + "/" + f.path, 2ull << 30));
    std::vector<Tensor> ts;
    if (npy) {
      auto t = parseNpy(bytes);
      if (!t.ok()) return Error::Invalid(dir + "/" + f.path + ": " + t.error().message);
      ts.push_back(std::move(t).value());
    } else {
      auto list = st ? parseSafetensors(bytes) : parsePt(bytes);
      if (!list.ok()) return Error::Invalid(dir + "/" + f.path + ": " + list.error().message);
      ts = std::move(list).value();
    }
    for (const auto& t : ts)
      out.push_back({{"name", npy ? f.path : f.path + ":" + t.name},
                     {"dtype", t.dtype},
                     {"shape", t.shape},
                     {"sha256", f.sha256}});
  }
  return out;
}

}  // namespace

Result<NamedInput> parseNamedInput(const std::string& s) {
  NamedInput in;
  auto parts = util::split(s, ',');
  size_t eq = parts[0].find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == parts[0].size())
    return Error::Invalid("'" + util::printable(s, 100) + "' is not NAME=PATH[,provenance=...][,access=...]");
  in.name = parts[0].substr(0, eq);
  in.path = parts[0].substr(eq + 1);
  for (size_t i = 1; i < parts.size(); ++i) {
    size_t e = parts[i].find('=');
    std::string k = parts[i].substr(0, e), v = e == std::string::npos ? "" : parts[i].substr(e + 1);
    if (k == "provenance")
      in.provenance = v;
    else if (k == "access")
      in.access = v;
    else
      return Error::Invalid("unknown attribute '" + util::printable(k, 40) + "' in '" + util::printable(s, 100) + "'");
  }
  return in;
}

Result<HashedInput> hashPath(const std::string& path) {
  HashedInput in;
  in.path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Error::NotFound(path + " does not exist");
  if (S_ISREG(st.st_mode)) {
    KDK_TRY_ASSIGN(auto h, hashFile(path));
    in.kind = "file";
    in.sha256 = h.first;
    in.size = h.second;
    return in;
  }
  if (!S_ISDIR(st.st_mode)) return Error::Invalid(path + " is neither a file nor a directory");
  util::Hasher manifest("sha256");
  in.kind = "directory";
  for (const auto& f : util::listFilesRecursive(path)) {
    KDK_TRY_ASSIGN(auto h, hashFile(path + "/" + f));
    in.files.push_back({f, h.first, h.second});
    manifest.update(h.first + "  " + f + "\n");
    in.size += h.second;
  }
  in.sha256 = manifest.hex();
  return in;
}

namespace {

// A path as the reference records it: absolute paths as given, relative ones relative to the
// folder of the reference file.
std::string recordedPath(const std::string& path, const std::string& referenceDir) {
  if (path.empty() || path[0] == '/' || referenceDir.empty()) return path;
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  auto dir = std::filesystem::absolute(referenceDir, ec);
  if (ec) return path;
  std::string rel = abs.lexically_normal().lexically_proximate(dir.lexically_normal()).string();
  return rel.empty() ? path : rel;
}

}  // namespace

Status checkDeclaration(const ReferenceOptions& o) {
  for (size_t i = 0; i < o.criteria.size(); ++i) {
    auto c = parseCriterion(o.criteria[i]);
    if (!c.ok()) return Error::Invalid("--criterion: " + c.error().message);
  }
  if (o.expected.empty() && !o.criteria.empty())
    return Error::Invalid("--criterion needs --expected: the folder of expected outputs it is checked against");
  if (o.expected.empty() && !o.whys.empty()) return Error::Invalid("--why goes with --criterion and --expected");
  if (!o.expected.empty() && o.criteria.empty())
    return Error::Invalid("--criterion is required with --expected: declare the acceptance criterion now");
  if (o.whys.size() != o.criteria.size())
    return Error::Invalid("each --criterion needs its --why: the record keeps why this threshold (" +
                          std::to_string(o.criteria.size()) + " criteria, " + std::to_string(o.whys.size()) +
                          " reasons)");
  for (size_t i = 0; i < o.whys.size(); ++i)
    if (util::trim(o.whys[i]).empty()) return Error::Invalid("--why for " + o.criteria[i] + " is empty");
  if (o.previous && util::trim(o.revise).empty()) return Error::Invalid("--revise needs the reason for the revision");
  return {};
}

namespace {

json criteriaJson(const std::vector<std::pair<std::string, std::string>>& list) {
  json out = json::array();
  for (const auto& [text, why] : list) {
    auto c = parseCriterion(text);
    if (!c.ok()) continue;  // a parsed reference holds only criteria that parse
    out.push_back({{"text", c->str()}, {"kind", c->kind}, {"threshold", c->threshold}, {"k", c->k}, {"why", why}});
  }
  return out;
}

// The earlier versions a revision keeps: the previous reference's own revisions, then the
// previous reference itself, revised now for `why`.
json revisionsJson(const Reference& previous, const std::string& why, const std::string& now) {
  json out = json::array();
  auto one = [](const Reference::Revision& r) {
    return json{{"created", r.created},
                {"first_checked", r.firstChecked.empty() ? json(nullptr) : json(r.firstChecked)},
                {"revised", r.revised},
                {"why", r.why},
                {"criteria", criteriaJson(r.criteria)}};
  };
  for (const auto& r : previous.revisions) out.push_back(one(r));
  out.push_back(one({previous.created, previous.firstChecked, now, why, previous.result.criteria}));
  return out;
}

// packages.lock: the pylock.toml at `path` read with parsePylock, recorded as `recorded`
// with its sha256 and every package and wheel it locks.
Result<json> lockRecord(const std::string& path, const std::string& recorded) {
  KDK_TRY_ASSIGN(std::string text, util::readFileLimited(path, 16u << 20));
  auto lock = python::parsePylock(text);
  if (!lock.ok()) return Error::Corrupt(path + " is not a lock Kernodeck reads (pylock.toml): " + lock.error().message);
  json packages = json::array();
  for (const auto& p : lock->packages) {
    json wheels = json::array();
    for (const auto& w : p.wheels) wheels.push_back({{"name", w.name}, {"sha256", w.sha256}});
    json pj = {{"name", p.name}, {"version", p.version}, {"wheels", wheels}};
    if (p.sdistOnly) pj["sdist_only"] = true;
    packages.push_back(std::move(pj));
  }
  return json{{"path", recorded}, {"sha256", util::sha256Hex(text)}, {"packages", packages}};
}

}  // namespace

Result<bool> recordFirstCheck(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  struct stat st {};
  if (::lstat(((dir.empty() ? "." : dir) + "/MANIFEST.sha256").c_str(), &st) == 0) return false;
  KDK_TRY_ASSIGN(json j, readJsonFile(path));
  if (!j.is_object()) return Error::Invalid(path + " is not a reference");
  if (j.contains("first_checked") && !j.at("first_checked").is_null()) return false;
  j["first_checked"] = util::utcTimestamp();
  KDK_TRY_STATUS(util::writeFileAtomic(path, j.dump(2) + "\n"));
  return true;
}

namespace {

// code: the repository at its revision (and whether it was dirty), the entry point, where it
// writes, the parameters and the hashed configs. `codeDir` is what recorded paths are relative to.
Result<json> codeJson(const ReferenceOptions& o, const std::string& codeDir, report::Report& r) {
  json code = json::object();
  if (!o.repo.empty()) {
    auto rev = git(o.repo, {"rev-parse", "--verify", "HEAD"});
    if (!rev.ok())
      return Error::Invalid(o.repo + " is not a git repository with a commit (" + rev.error().message + ")");
    KDK_TRY_ASSIGN(std::string status, git(o.repo, {"status", "--porcelain", "--untracked-files=no"}));
    code["repo"] = recordedPath(o.repo, o.referenceDir);
    code["root"] = code["repo"];
    code["revision"] = *rev;
    code["dirty"] = !status.empty();
    if (!status.empty())
      r.add("reference.code.dirty", Severity::Warning,
            o.repo + " has uncommitted changes: the revision does not describe the code", {{"path", o.repo}});
  }
  code["entry_point"] = o.entryPoint;
  code["preprocessing"] = o.preprocessing;
  if (!o.outputs.empty()) code["outputs"] = recordedPath(o.outputs, codeDir);
  code["parameters"] = o.params;
  json configs = json::array();
  for (const auto& c : o.configs) {
    KDK_TRY_ASSIGN(HashedInput h, hashPath(c));
    h.path = recordedPath(c, codeDir);
    configs.push_back(toJson(h, false));
  }
  code["configs"] = configs;
  return code;
}

// data or weights: each input hashed, with its provenance and access (redacted); a warning
// for a provenance that can move.
Result<json> inputsJson(const std::vector<NamedInput>& list, const char* what, const std::string& codeDir,
                        report::Report& r) {
  json arr = json::array();
  for (const auto& in : list) {
    KDK_TRY_ASSIGN(HashedInput h, hashPath(in.path));
    h.path = recordedPath(in.path, codeDir);
    h.name = in.name;
    h.provenance = report::redactText(in.provenance);
    h.access = report::redactText(in.access);
    if (std::string why = mutableReason(in.provenance); !why.empty())
      r.add("reference.mutable_name", Severity::Warning,
            std::string(what) + " '" + in.name + "' comes from '" + report::redactText(in.provenance) +
                "', which can move: " + why,
            {{"name", in.name}});
    arr.push_back(toJson(h, true));
  }
  return arr;
}

// packages: an audit's inventory (--packages-from) or a requirements file, the lock and the
// base interpreter with its version.
Result<json> packagesJson(const ReferenceOptions& o, const std::string& codeDir) {
  json packages = json::object();
  if (!o.packagesReport.empty()) {
    KDK_TRY_ASSIGN(json a, readJsonFile(o.packagesReport));
    auto doc = parseReportDoc(a);
    if (!doc.ok()) return Error::Invalid(o.packagesReport + ": " + doc.error().message);
    packages["source"] = doc->subjectReference.empty() ? o.packagesReport : doc->subjectReference;
    if (!doc->manifestDigest.empty()) packages["manifest_digest"] = doc->manifestDigest;
    json freeze = json::array();
    for (const auto& e : doc->environments) freeze.push_back({{"prefix", e.prefix}, {"freeze", e.freeze}});
    packages["environments"] = freeze;
    if (doc->python.is_object() && doc->python.contains("torch")) packages["torch"] = doc->python.at("torch");
  } else if (!o.requirements.empty()) {
    KDK_TRY_ASSIGN(HashedInput h, hashPath(o.requirements));
    KDK_TRY_ASSIGN(std::string text, util::readFileLimited(o.requirements, 1 << 20));
    packages["source"] = "requirements " + o.requirements;
    packages["requirements"] = {{"sha256", h.sha256}, {"lines", util::split(report::redactText(text), '\n')}};
  }
  if (!o.lock.empty()) {
    KDK_TRY_ASSIGN(packages["lock"], lockRecord(o.lock, recordedPath(o.lock, codeDir)));
  }
  if (!o.python.empty()) {
    // The base interpreter, as given: a replay makes its venv from it. Its version is asked of
    // it (an argv, no shell), so that a later machine can say which Python it lacks.
    util::ProcessSpec spec;
    spec.argv = {o.python, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"};
    spec.timeoutMs = 60000;
    auto pr = util::runProcess(spec);
    if (!pr.ok() || !pr->ok())
      return Error::Invalid("--python " + o.python + " is not a Python interpreter that runs (" +
                            (pr.ok() ? pr->describe() : pr.error().message) + ")");
    packages["python"] = {{"interpreter", o.python}, {"version", std::string(util::trim(pr->out))}};
  }
  return packages;
}

// system: the host facts (from --host-record, checked by its reader, else read under the host
// root) and the facts systemFacts adds.
Result<json> systemJson(const ReferenceOptions& o) {
  json system;
  if (!o.hostRecord.empty()) {
    KDK_TRY_ASSIGN(json h, readJsonFile(o.hostRecord));
    if (!h.is_object()) return Error::Invalid(o.hostRecord + " is not a kernodeck.host/v1 record (not a JSON object)");
    json host = h.contains("host") ? h.at("host") : h;
    if (!host.is_object()) return Error::Invalid(o.hostRecord + ": host is not an object");
    // A kernodeck.host/v1 record is read by its reader; the facts alone (`kernodeck host --json`)
    // by the facts' reader. The host object is recorded as it was written.
    if (h.contains("schema")) {
      if (auto rec = host::parseHostRecordJson(h); !rec.ok())
        return Error::Invalid(o.hostRecord + " " + rec.error().message);
    } else if (auto facts = host::parseHostFacts(util::JsonReader(host), host::Nulls::Absent); !facts.ok()) {
      return Error::Invalid(o.hostRecord + ": " + facts.error().message);
    }
    system["host"] = host;
  } else {
    system["host"] = host::readHostFacts(o.hostRoot).toJson();
  }
  system.update(systemFacts(o.hostRoot, o.accelerator, system["host"]));
  return system;
}

// result: the expected outputs (hash, dtype and shape of each, their files) and the declared
// criteria with their why; empty without --expected.
Result<json> resultJson(const ReferenceOptions& o, const std::string& codeDir) {
  json result = json::object();
  if (o.expected.empty()) return result;
  std::vector<std::pair<std::string, std::string>> declared;
  for (size_t i = 0; i < o.criteria.size(); ++i) declared.emplace_back(o.criteria[i], o.whys[i]);
  json criteria = criteriaJson(declared);
  KDK_TRY_ASSIGN(HashedInput h, hashPath(o.expected));
  result["expected"] = recordedPath(o.expected, codeDir);
  result["expected_sha256"] = h.sha256;
  result["criteria"] = criteria;
  KDK_TRY_ASSIGN(result["outputs"], outputFacts(o.expected, h));
  result["ids"] = o.ids;
  // The output format, from the expected outputs as they are now.
  json files = json::array();
  for (const auto& f : h.files) files.push_back(f.path);
  result["format"] = {{"files", files}, {"count", files.size()}};
  return result;
}

}  // namespace

Result<json> buildReference(const ReferenceOptions& o, report::Report& r) {
  KDK_TRY_STATUS(checkDeclaration(o));
  // Every path is resolved once, here: relative to the code's folder when there is a
  // repository (code.root says where it lies from the reference), else to the reference's.
  const std::string& codeDir = o.repo.empty() ? o.referenceDir : o.repo;
  std::string now = util::utcTimestamp();
  json ref = {{"schema", "kernodeck.reference/v1"}, {"created", now}, {"first_checked", nullptr}};
  bool checkedBefore = false;
  if (o.previous) {
    ref["revisions"] = revisionsJson(*o.previous, o.revise, now);
    for (const auto& rev : ref["revisions"]) checkedBefore |= !rev.at("first_checked").is_null();
  }
  ref["declared_before_comparison"] = !checkedBefore;
  KDK_TRY_ASSIGN(ref["code"], codeJson(o, codeDir, r));
  KDK_TRY_ASSIGN(ref["data"], inputsJson(o.data, "data", codeDir, r));
  KDK_TRY_ASSIGN(ref["weights"], inputsJson(o.weights, "weights", codeDir, r));
  KDK_TRY_ASSIGN(ref["packages"], packagesJson(o, codeDir));
  KDK_TRY_ASSIGN(ref["system"], systemJson(o));
  ref["seeds"] = o.seeds;
  ref["determinism"] = {{"declared", o.determinism}, {"environment", determinismEnvironment()}};
  KDK_TRY_ASSIGN(ref["result"], resultJson(o, codeDir));
  // What was written must read back: a --host-record or audit section of the wrong shape is
  // refused now rather than by every later command.
  if (auto back = parseReference(ref); !back.ok())
    return Error::Invalid("the reference would not read back: " + back.error().message);
  return ref;
}

std::string referenceText(const Reference& ref) {
  std::string o = "kernodeck reference (declared " + ref.created + ")\n\nCode\n";
  auto line = [&](const std::string& k, const std::string& v) {
    if (!v.empty()) o += "  " + k + std::string(k.size() < 14 ? 14 - k.size() : 1, ' ') + v + "\n";
  };
  line("repository", ref.code.repo.empty()
                         ? "(not recorded)"
                         : ref.code.repo + " @ " + ref.code.revision + (ref.code.dirty ? " (dirty)" : ""));
  line("entry point", ref.code.entryPoint);
  line("preprocessing", ref.code.preprocessing);
  line("outputs", ref.code.outputs);
  for (const auto& [k, v] : ref.code.parameters) line("parameter", k + "=" + v);
  for (const auto& c : ref.code.configs)
    line("config",
         c.path + "  sha256 " + c.sha256.substr(0, 12) + "  " + util::humanBytes(static_cast<uint64_t>(c.size)));
  o += "\nInputs\n";
  for (const auto* list : {&ref.data, &ref.weights})
    for (const auto& d : *list)
      line(list == &ref.data ? "data" : "weights", d.name + "  " + d.path + "  sha256 " + d.sha256.substr(0, 12) +
                                                       "  " + util::humanBytes(static_cast<uint64_t>(d.size)) +
                                                       (d.provenance.empty() ? "" : "  from " + d.provenance) +
                                                       (d.access.empty() ? "" : "  access: " + d.access));
  if (ref.data.empty() && ref.weights.empty()) o += "  (none recorded)\n";
  o += "\nPackages\n";
  line("source", ref.packages.source.empty() ? "(not recorded)" : ref.packages.source);
  line("image digest", ref.packages.manifestDigest);
  line("interpreter", ref.packages.interpreter.empty()
                          ? ""
                          : ref.packages.interpreter + " (Python " + ref.packages.interpreterVersion + ")");
  for (const auto& e : ref.packages.environments)
    line("environment", e.prefix + " (" + std::to_string(e.freeze.size()) + " packages)");
  if (!ref.packages.requirementsSha256.empty())
    line("requirements", std::to_string(ref.packages.requirementsLines.size()) + " lines, sha256 " +
                             ref.packages.requirementsSha256.substr(0, 12));
  if (ref.packages.lock)
    line("lock", ref.packages.lockPath + " (" + std::to_string(ref.packages.lock->packages.size()) +
                     " packages, sha256 " + ref.packages.lockSha256.substr(0, 12) + ")");
  o += "\nSystem\n";
  line("os", ref.system.os.empty() ? "(not recorded)" : ref.system.os);
  line("architecture", ref.system.architecture);
  if (ref.system.threads)
    line("cpu", (ref.system.cpuModel.empty() ? std::string("?") : ref.system.cpuModel) + ", " +
                    std::to_string(ref.system.cores) + " cores, " + std::to_string(ref.system.threads) + " threads");
  line("accelerator", ref.system.accelerator);
  line("driver", ref.system.nvidia
                     ? "NVIDIA " + ref.system.driverVersion + ", " + std::to_string(ref.system.gpus) + " GPU(s)"
                 : ref.system.recorded ? "no NVIDIA driver"
                                       : "");
  o += "\nSeeds and determinism\n";
  for (const auto& [k, v] : ref.seeds) line("seed", k + "=" + v);
  for (const auto& [k, v] : ref.determinism) line("declared", k + "=" + v);
  for (const auto& [k, v] : ref.environment) line("environment", k + "=" + v);
  if (ref.seeds.empty() && ref.determinism.empty() && ref.environment.empty()) o += "  (none recorded)\n";
  o += "\nResult\n";
  if (!ref.result.declared) o += "  (no expected outputs declared)\n";
  if (ref.result.declared)
    line("expected", ref.result.expected + "  sha256 " + ref.result.expectedSha256.substr(0, 12));
  if (ref.result.declared) line("ids", ref.result.ids.empty() ? "(none: rows compared in order)" : ref.result.ids);
  for (const auto& out : ref.outputs) {
    std::string shape = "(";
    for (size_t i = 0; i < out.shape.size(); ++i) shape += (i ? ", " : "") + std::to_string(out.shape[i]);
    line("output", out.name + "  " + out.dtype + " " + shape + (out.shape.size() == 1 ? ",)" : ")"));
  }
  for (const auto& [text, why] : ref.result.criteria) line("criterion", text + "  because: " + why);
  o += "\nDeclaration\n";
  line("declared", ref.created);
  line("first checked", ref.firstChecked.empty() ? "not yet: no sample check has used it" : ref.firstChecked);
  line("before check", ref.declaredBeforeComparison
                           ? "yes: declared before any comparison"
                           : "no: the criteria were revised after a check (see the revisions)");
  for (size_t i = 0; i < ref.revisions.size(); ++i) {
    const auto& rev = ref.revisions[i];
    std::string crits;
    for (const auto& [text, why] : rev.criteria) crits += (crits.empty() ? "" : ", ") + text;
    line("revision " + std::to_string(i + 1),
         "on " + rev.revised + ", because: " + rev.why + "\n                was: " +
             (crits.empty() ? std::string("(no criteria)") : crits) + " (declared " + rev.created + ", " +
             (rev.firstChecked.empty() ? std::string("never checked") : "first checked " + rev.firstChecked) + ")");
  }
  return o;
}

report::Report verifyReference(const Reference& ref) {
  report::Report r("reference verify");
  r.declareSteps({"code", "configs", "data", "weights"});
  r.subject()["reference"] = "reference";
  r.runStep("code", [&]() -> Status {
    if (ref.code.repo.empty()) {
      r.skipStep("code", "the reference names no repository");
      return {};
    }
    std::string repo = ref.fromReference(ref.code.repo);
    auto rev = git(repo, {"rev-parse", "--verify", "HEAD"});
    if (!rev.ok())
      r.add("reference.changed.code", Severity::Error, "the code cannot be checked: " + rev.error().message,
            {{"layer", "code"}, {"path", repo}});
    else if (*rev != ref.code.revision)
      r.add("reference.changed.code", Severity::Error,
            "the code moved: " + repo + " is at " + *rev + ", the reference has " + ref.code.revision,
            {{"layer", "code"}, {"path", repo}});
    else if (auto st = git(repo, {"status", "--porcelain", "--untracked-files=no"}); !st.ok() || !st->empty())
      r.add("reference.changed.code", Severity::Error, repo + " has uncommitted changes since the reference",
            {{"layer", "code"}, {"path", repo}});
    return {};
  });
  auto rehash = [&](const std::vector<HashedInput>& list, const char* layer) -> Status {
    for (const auto& item : list) {
      auto h = hashPath(ref.resolve(item.path));
      std::string name = item.name.empty() ? item.path : item.name;
      if (!h.ok()) {
        r.add(std::string("reference.changed.") + layer, Severity::Error,
              std::string(layer) + " '" + name + "': " + h.error().message, {{"layer", layer}, {"path", item.path}});
        continue;
      }
      if (h->sha256 == item.sha256) continue;
      std::string detail;
      if (item.kind == "directory" && h->kind == "directory") {
        std::map<std::string, std::string> before, after;
        for (const auto& f : item.files) before[f.path] = f.sha256;
        for (const auto& f : h->files) after[f.path] = f.sha256;
        std::vector<std::string> changed;
        for (const auto& [p, sha] : before)
          if (!after.count(p))
            changed.push_back("-" + p);
          else if (after[p] != sha)
            changed.push_back("~" + p);
        for (const auto& [p, sha] : after)
          if (!before.count(p)) changed.push_back("+" + p);
        if (changed.size() > 5) changed.resize(5), changed.push_back("...");
        detail = " (" + util::join(changed, " ") + ")";
      }
      r.add(std::string("reference.changed.") + layer, Severity::Error,
            std::string(layer) + " '" + name + "' changed: sha256 " + h->sha256.substr(0, 12) + " instead of " +
                item.sha256.substr(0, 12) + detail,
            {{"layer", layer}, {"path", item.path}});
    }
    return {};
  };
  r.runStep("configs", [&] { return rehash(ref.code.configs, "config"); });
  r.runStep("data", [&] { return rehash(ref.data, "data"); });
  r.runStep("weights", [&] { return rehash(ref.weights, "weights"); });
  return r;
}

}  // namespace kernodeck::record
