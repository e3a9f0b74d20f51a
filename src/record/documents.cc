// See documents.h. Every field is read through util::JsonReader: a wrong type or a missing
// required field is an error naming the field's path, never a json exception.
#include "kernodeck/record/documents.h"

#include <algorithm>

#include "kernodeck/host/host_record.h"
#include "kernodeck/record/criterion.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using nlohmann::json;
using util::JsonReader;

namespace {

bool isHex64(const std::string& s) {
  return s.size() == 64 &&
         std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

Error badValue(const JsonReader& r, std::string_view key, const std::string& value, std::string_view expected) {
  return Error::Invalid(r.fieldPath(key) + " is '" + util::printable(value, 80) + "', expected " +
                        std::string(expected));
}

Status getSha256(const JsonReader& r, std::string_view key, std::string& out) {
  KDK_TRY_STATUS(r.get(key, out));
  if (!isHex64(out)) return badValue(r, key, out, "64 lower-case hex digits (sha256)");
  return {};
}

Status getSize(const JsonReader& r, std::string_view key, int64_t& out) {
  KDK_TRY_STATUS(r.get(key, out));
  if (out < 0) return badValue(r, key, std::to_string(out), "a size of 0 or more");
  return {};
}

// A hashed config (path) or a named input (name, path, provenance, access).
Status parseHashed(const JsonReader& r, HashedInput& in, bool named) {
  KDK_TRY_STATUS(r.expectObject());
  KDK_TRY_STATUS(r.get("kind", in.kind));
  if (in.kind != "file" && in.kind != "directory") return badValue(r, "kind", in.kind, "\"file\" or \"directory\"");
  KDK_TRY_STATUS(getSha256(r, "sha256", in.sha256));
  KDK_TRY_STATUS(getSize(r, "size", in.size));
  KDK_TRY_STATUS(r.get("path", in.path));
  if (named) {
    KDK_TRY_STATUS(r.get("name", in.name));
    KDK_TRY_STATUS(r.get("provenance", in.provenance));
    KDK_TRY_STATUS(r.get("access", in.access));
  }
  if (in.kind == "directory") {
    KDK_TRY_ASSIGN(auto files, r.array("files"));
    for (const auto& f : files) {
      HashedFile hf;
      KDK_TRY_STATUS(f.expectObject());
      KDK_TRY_STATUS(f.get("path", hf.path));
      KDK_TRY_STATUS(getSha256(f, "sha256", hf.sha256));
      KDK_TRY_STATUS(getSize(f, "size", hf.size));
      in.files.push_back(std::move(hf));
    }
  }
  return {};
}

Result<std::vector<HashedInput>> parseHashedList(const std::vector<JsonReader>& items, bool named) {
  std::vector<HashedInput> out(items.size());
  for (size_t i = 0; i < items.size(); ++i) KDK_TRY_STATUS(parseHashed(items[i], out[i], named));
  return out;
}

Status checkSchema(const JsonReader& root, std::string_view want) {
  KDK_TRY_STATUS(root.expectObject());
  std::string schema;
  KDK_TRY_STATUS(root.get("schema", schema));
  if (schema != want) return badValue(root, "schema", schema, "\"" + std::string(want) + "\"");
  return {};
}

// Declared criteria: each one's text must parse, and the kind, threshold and K recorded beside it
// (when present) must say the same as the text, so that no reader can take another number
// from the document than the one checked.
Result<std::vector<std::pair<std::string, std::string>>> parseCriteria(const std::vector<JsonReader>& crits) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& crit : crits) {
    std::string text, why, kind;
    double threshold = 0;
    int64_t k = 0;
    KDK_TRY_STATUS(crit.expectObject());
    KDK_TRY_STATUS(crit.get("text", text));
    KDK_TRY_STATUS(crit.get("why", why));
    auto parsed = parseCriterion(text);
    if (!parsed.ok()) return Error::Invalid(crit.fieldPath("text") + ": " + parsed.error().message);
    kind = parsed->kind;
    threshold = parsed->threshold;
    k = parsed->k;
    KDK_TRY_STATUS(crit.getOpt("kind", kind));
    KDK_TRY_STATUS(crit.getOpt("threshold", threshold));
    KDK_TRY_STATUS(crit.getOpt("k", k));
    if (kind != parsed->kind) return badValue(crit, "kind", kind, "\"" + parsed->kind + "\" as the text says");
    if (k != parsed->k) return badValue(crit, "k", std::to_string(k), std::to_string(parsed->k) + " as the text says");
    if (threshold != parsed->threshold && parsed->kind != "exact")
      return badValue(crit, "threshold", formatMeasure(threshold), parsed->thresholdText + " as the text says");
    out.emplace_back(text, why);
  }
  return out;
}

// The earlier versions of a reference's criteria (revisions), oldest first.
Result<std::vector<Reference::Revision>> parseRevisions(const JsonReader& root) {
  KDK_TRY_ASSIGN(auto items, root.optArray("revisions"));
  std::vector<Reference::Revision> out(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    auto& rev = out[i];
    KDK_TRY_STATUS(items[i].expectObject());
    KDK_TRY_STATUS(items[i].get("created", rev.created));
    KDK_TRY_STATUS(items[i].getOpt("first_checked", rev.firstChecked, true));
    KDK_TRY_STATUS(items[i].get("revised", rev.revised));
    KDK_TRY_STATUS(items[i].get("why", rev.why));
    if (util::trim(rev.why).empty()) return badValue(items[i], "why", rev.why, "the reason for the revision");
    KDK_TRY_ASSIGN(auto crits, items[i].array("criteria"));
    KDK_TRY_ASSIGN(rev.criteria, parseCriteria(crits));
  }
  return out;
}

// system.host: the host facts `reference init` recorded (host::HostFacts::toJson, or the
// "host" object of a kernodeck.host/v1 record), read by the host module's reader: every field
// optional, as hand-written host records carry only what they need, but each one present must
// have its type.
Status parseHost(const JsonReader& host, Reference::System& sys) {
  KDK_TRY_ASSIGN(host::HostFacts facts, host::parseHostFacts(host, host::Nulls::Refused));
  sys.nvidia = facts.nvidia.has_value();
  if (facts.nvidia) sys.driverVersion = facts.nvidia->version;
  sys.gpus = static_cast<int64_t>(facts.gpus.size());
  return {};
}

// packages.torch: the torch build an audit found (python.torch of its report), or null.
Status parseTorch(const JsonReader& packages) {
  if (!packages.has("torch") || packages.json().at("torch").is_null()) return {};
  KDK_TRY_ASSIGN(JsonReader t, packages.object("torch"));
  std::string text;
  bool flag = false;
  for (const char* k : {"version", "cuda", "hip", "git_version", "location"}) KDK_TRY_STATUS(t.getOpt(k, text, true));
  KDK_TRY_STATUS(t.getOpt("debug", flag, true));
  return {};
}

// packages.lock: {path, sha256, packages: [{name, version, wheels: [{name, sha256}]}]}, each
// field checked as parsePylock checks the lock it was read from.
Status parseLockRecord(const JsonReader& lock, Reference::Packages& out) {
  KDK_TRY_STATUS(lock.get("path", out.lockPath));
  KDK_TRY_STATUS(getSha256(lock, "sha256", out.lockSha256));
  python::Lock l;
  l.lockVersion = "1.0";
  KDK_TRY_ASSIGN(auto packages, lock.array("packages"));
  for (const auto& p : packages) {
    python::LockedPackage pkg;
    KDK_TRY_STATUS(p.get("name", pkg.name));
    KDK_TRY_STATUS(p.get("version", pkg.version));
    KDK_TRY_STATUS(p.getOpt("sdist_only", pkg.sdistOnly));
    KDK_TRY_ASSIGN(auto wheels, p.array("wheels"));
    for (const auto& w : wheels) {
      python::LockedWheel lw;
      KDK_TRY_STATUS(w.get("name", lw.name));
      KDK_TRY_STATUS(getSha256(w, "sha256", lw.sha256));
      pkg.wheels.push_back(std::move(lw));
    }
    l.packages.push_back(std::move(pkg));
  }
  out.lock = std::move(l);
  return {};
}

// declared_before_comparison, derived from the revisions: a document that says otherwise is refused.
Status parseDeclaredBefore(const JsonReader& root, Reference& ref) {
  bool checkedBefore = false;
  for (const auto& rev : ref.revisions) checkedBefore |= !rev.firstChecked.empty();
  ref.declaredBeforeComparison = !checkedBefore;
  bool declared = ref.declaredBeforeComparison;
  KDK_TRY_STATUS(root.getOpt("declared_before_comparison", declared));
  if (declared != ref.declaredBeforeComparison)
    return badValue(root, "declared_before_comparison", declared ? "true" : "false",
                    checkedBefore ? "false: an earlier version in revisions was checked before it was revised"
                                  : "true: no earlier version was checked");
  return {};
}

// code: the repository and revision, the entry point, where it writes, the hashed configs.
Status parseCode(const JsonReader& root, Reference::Code& out) {
  KDK_TRY_ASSIGN(JsonReader code, root.object("code"));
  KDK_TRY_STATUS(code.getOpt("repo", out.repo));
  KDK_TRY_STATUS(code.getOpt("root", out.root));
  if (code.has("repo")) {
    KDK_TRY_STATUS(code.get("revision", out.revision));
    KDK_TRY_STATUS(code.getOpt("dirty", out.dirty));
  }
  KDK_TRY_STATUS(code.get("entry_point", out.entryPoint));
  KDK_TRY_STATUS(code.get("preprocessing", out.preprocessing));
  KDK_TRY_STATUS(code.getOpt("outputs", out.outputs));
  KDK_TRY_STATUS(code.get("parameters", out.parameters));
  KDK_TRY_ASSIGN(auto configs, code.array("configs"));
  KDK_TRY_ASSIGN(out.configs, parseHashedList(configs, false));
  return {};
}

// packages: the inventory's source, its environments, the requirements, torch, the lock and
// the base interpreter.
Status parsePackages(const JsonReader& root, Reference::Packages& out) {
  KDK_TRY_ASSIGN(JsonReader packages, root.object("packages"));
  KDK_TRY_STATUS(packages.getOpt("source", out.source));
  KDK_TRY_STATUS(packages.getOpt("manifest_digest", out.manifestDigest, true));
  KDK_TRY_ASSIGN(out.environments, report::parsePythonEnvironments(packages));
  KDK_TRY_ASSIGN(auto requirements, packages.optObject("requirements"));
  if (requirements) {
    KDK_TRY_STATUS(getSha256(*requirements, "sha256", out.requirementsSha256));
    KDK_TRY_STATUS(requirements->get("lines", out.requirementsLines));
  }
  KDK_TRY_STATUS(parseTorch(packages));
  KDK_TRY_ASSIGN(auto lock, packages.optObject("lock"));
  if (lock) KDK_TRY_STATUS(parseLockRecord(*lock, out));
  KDK_TRY_ASSIGN(auto python, packages.optObject("python"));
  if (python) {
    KDK_TRY_STATUS(python->get("interpreter", out.interpreter));
    KDK_TRY_STATUS(python->getOpt("version", out.interpreterVersion));
  }
  return {};
}

// system: the host facts, the OS, the architecture, the accelerator and the CPU.
Status parseSystem(const JsonReader& root, Reference::System& out) {
  KDK_TRY_ASSIGN(JsonReader system, root.object("system"));
  KDK_TRY_ASSIGN(auto host, system.optObject("host"));
  if (host) {
    out.recorded = true;
    KDK_TRY_STATUS(parseHost(*host, out));
  }
  KDK_TRY_STATUS(system.getOpt("os", out.os));
  KDK_TRY_STATUS(system.getOpt("architecture", out.architecture));
  KDK_TRY_STATUS(system.getOpt("accelerator", out.accelerator));
  KDK_TRY_ASSIGN(auto cpu, system.optObject("cpu"));
  if (cpu) {
    KDK_TRY_STATUS(cpu->getOpt("model", out.cpuModel));
    KDK_TRY_STATUS(cpu->getOpt("cores", out.cores));
    KDK_TRY_STATUS(cpu->getOpt("threads", out.threads));
  }
  return {};
}

// result.outputs: each expected output's name, dtype, hash and shape.
Result<std::vector<Reference::Output>> parseOutputs(const JsonReader& result) {
  std::vector<Reference::Output> list;
  KDK_TRY_ASSIGN(auto outputs, result.optArray("outputs"));
  for (const auto& o : outputs) {
    Reference::Output out;
    KDK_TRY_STATUS(o.expectObject());
    KDK_TRY_STATUS(o.get("name", out.name));
    KDK_TRY_STATUS(o.get("dtype", out.dtype));
    KDK_TRY_STATUS(getSha256(o, "sha256", out.sha256));
    KDK_TRY_ASSIGN(auto dims, o.array("shape"));
    for (const auto& d : dims) {
      int64_t n = 0;
      KDK_TRY_STATUS(d.as(n));
      out.shape.push_back(n);
    }
    list.push_back(std::move(out));
  }
  return list;
}

// result: the expected outputs, their hash, ids, criteria, outputs and format; with no
// expected outputs, none of the fields that describe them.
Status parseResult(const JsonReader& root, Reference& ref) {
  KDK_TRY_ASSIGN(JsonReader result, root.object("result"));
  if (!result.has("expected")) {
    for (const char* key : {"expected_sha256", "criterion", "criteria", "ids", "format", "outputs"})
      if (result.has(key)) return Error::Invalid(result.fieldPath(key) + " is present but result.expected is missing");
    return {};
  }
  auto& e = ref.result;
  e.declared = true;
  KDK_TRY_STATUS(result.get("expected", e.expected));
  KDK_TRY_STATUS(getSha256(result, "expected_sha256", e.expectedSha256));
  KDK_TRY_STATUS(result.get("ids", e.ids));
  std::vector<JsonReader> crits;
  if (result.has("criteria") || !result.has("criterion")) {
    KDK_TRY_ASSIGN(crits, result.array("criteria"));
    if (crits.empty()) return Error::Invalid("result.criteria is empty, expected at least one criterion");
  } else {
    KDK_TRY_ASSIGN(JsonReader one, result.object("criterion"));
    crits.push_back(one);
  }
  KDK_TRY_ASSIGN(e.criteria, parseCriteria(crits));
  KDK_TRY_ASSIGN(ref.outputs, parseOutputs(result));
  KDK_TRY_ASSIGN(JsonReader format, result.object("format"));
  KDK_TRY_STATUS(format.get("files", e.files));
  int64_t count = 0;
  KDK_TRY_STATUS(format.getOpt("count", count));
  return {};
}

}  // namespace

Result<Reference> parseReference(const json& j) {
  JsonReader root(j);
  KDK_TRY_STATUS(checkSchema(root, "kernodeck.reference/v1"));
  Reference ref;
  ref.json = j;
  KDK_TRY_STATUS(root.get("created", ref.created));
  KDK_TRY_STATUS(root.getOpt("first_checked", ref.firstChecked, true));
  KDK_TRY_ASSIGN(ref.revisions, parseRevisions(root));
  KDK_TRY_STATUS(parseDeclaredBefore(root, ref));
  KDK_TRY_STATUS(parseCode(root, ref.code));
  for (const char* key : {"data", "weights"}) {
    KDK_TRY_ASSIGN(auto items, root.array(key));
    KDK_TRY_ASSIGN(auto list, parseHashedList(items, true));
    (std::string(key) == "data" ? ref.data : ref.weights) = std::move(list);
  }
  KDK_TRY_STATUS(parsePackages(root, ref.packages));
  KDK_TRY_STATUS(parseSystem(root, ref.system));
  KDK_TRY_STATUS(root.getOpt("seeds", ref.seeds));
  KDK_TRY_ASSIGN(auto det, root.optObject("determinism"));
  if (det) {
    KDK_TRY_STATUS(det->getOpt("declared", ref.determinism));
    KDK_TRY_STATUS(det->getOpt("environment", ref.environment));
  }
  KDK_TRY_STATUS(parseResult(root, ref));
  return ref;
}

json toJson(const HashedInput& in, bool named) {
  json j = {{"kind", in.kind}, {"sha256", in.sha256}, {"size", in.size}, {"path", in.path}};
  if (named) j["name"] = in.name, j["provenance"] = in.provenance, j["access"] = in.access;
  if (in.kind == "directory") {
    json files = json::array();
    for (const auto& f : in.files) files.push_back({{"path", f.path}, {"sha256", f.sha256}, {"size", f.size}});
    j["files"] = files;
  }
  return j;
}

bool allowedKernodeckStep(const std::vector<std::string>& argv) {
  static const std::vector<std::pair<std::string, std::string>> allowed = {
      {"reference", "verify"}, {"reference", "show"}, {"sample", "check"}, {"dossier", "verify"}, {"diff", ""}};
  if (argv.empty()) return false;
  // No step writes a file: a procedure cannot aim a report at a path of its choosing.
  for (const auto& a : argv)
    if (a == "-o" || a.starts_with("--output") || (a.starts_with("-o") && a.size() > 2) || a == "--") return false;
  for (const auto& [cmd, verb] : allowed)
    if (argv[0] == cmd && (verb.empty() || (argv.size() > 1 && argv[1] == verb))) return true;
  return false;
}

Result<Procedure> parseProcedure(const json& j) {
  JsonReader root(j);
  KDK_TRY_STATUS(checkSchema(root, "kernodeck.procedure/v1"));
  KDK_TRY_ASSIGN(auto steps, root.array("steps"));
  Procedure p;
  for (const auto& s : steps) {
    ProcedureStep st;
    KDK_TRY_STATUS(s.expectObject());
    KDK_TRY_STATUS(s.get("name", st.name));
    KDK_TRY_STATUS(s.get("layer", st.layer));
    KDK_TRY_STATUS(s.get("kind", st.kind));
    KDK_TRY_STATUS(s.get("argv", st.argv));
    if (st.kind != "kernodeck" && st.kind != "project")
      return badValue(s, "kind", st.kind, "\"kernodeck\" or \"project\"");
    if (st.argv.empty()) return Error::Invalid(s.fieldPath("argv") + " is empty, expected a command");
    if (st.kind == "kernodeck" && !allowedKernodeckStep(st.argv))
      return badValue(s, "argv", util::join(st.argv, " "),
                      "a Kernodeck check (reference verify, reference show, sample check, dossier verify, diff)");
    p.steps.push_back(std::move(st));
  }
  return p;
}

json toJson(const Procedure& p) {
  json steps = json::array();
  for (const auto& s : p.steps)
    steps.push_back({{"name", s.name}, {"layer", s.layer}, {"kind", s.kind}, {"argv", s.argv}});
  return {{"schema", "kernodeck.procedure/v1"}, {"steps", steps}};
}

Result<std::vector<ManifestEntry>> parseDossierManifest(std::string_view text) {
  std::vector<ManifestEntry> out;
  size_t lineNo = 0;
  for (std::string_view line : util::splitView(text, '\n')) {
    ++lineNo;
    if (line.empty()) continue;
    std::string where = "MANIFEST.sha256 line " + std::to_string(lineNo);
    if (line.size() < 67 || line.substr(64, 2) != "  ") return Error::Invalid(where + " is not 'SHA256  PATH'");
    ManifestEntry e{std::string(line.substr(0, 64)), std::string(line.substr(66))};
    if (!isHex64(e.sha256)) return Error::Invalid(where + ": '" + util::printable(e.sha256, 64) + "' is not a sha256");
    bool bad = e.path.front() == '/' || e.path.find('\0') != std::string::npos;
    for (const auto& part : util::split(e.path, '/')) bad |= part.empty() || part == "." || part == "..";
    if (bad) return Error::Unsafe(where + ": '" + util::printable(e.path, 120) + "' is not a plain relative path");
    out.push_back(std::move(e));
  }
  return out;
}

Result<json> readJsonFile(const std::string& path, size_t limit) {
  KDK_TRY_ASSIGN(std::string text, util::readFileLimited(path, limit));
  return util::parseJsonText(text, path);
}

}  // namespace kernodeck::record
