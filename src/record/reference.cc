// kernodeck.reference/v1: building it, verifying it, comparing records.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <ctime>
#include <fstream>
#include <regex>

#include "kernodeck/host/host_facts.h"
#include "kernodeck/record/criterion.h"
#include "kernodeck/record/record.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/hash.h"
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
  static const std::regex hub(R"(^(hf|huggingface)://[^@?]+$)");
  if (std::regex_match(p, hub)) return "it names a model without a revision (add @<commit>)";
  static const std::regex image(R"(^(docker://|oci://)?[a-z0-9.-]+(:[0-9]+)?/[a-z0-9._/-]+:[\w.-]+$)");
  if (std::regex_match(p, image) && p.find("@sha256:") == std::string::npos) return "it is an image tag without a digest";
  return "";
}

std::string git(const std::string& repo, const std::string& args) {
  std::string cmd = "git -C '" + repo + "' " + args + " 2>/dev/null";
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  ::pclose(p);
  return std::string(util::trim(out));
}

Result<json> readJson(const std::string& path) {
  KDK_TRY_ASSIGN(std::string text, util::readFileLimited(path, 64u << 20));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error::Invalid(path + " is not valid JSON");
  return j;
}

}  // namespace

Result<NamedInput> parseNamedInput(const std::string& s) {
  NamedInput in;
  auto parts = util::split(s, ',');
  size_t eq = parts[0].find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == parts[0].size()) return Error::Invalid("'" + util::printable(s, 100) + "' is not NAME=PATH[,provenance=...][,access=...]");
  in.name = parts[0].substr(0, eq);
  in.path = parts[0].substr(eq + 1);
  for (size_t i = 1; i < parts.size(); ++i) {
    size_t e = parts[i].find('=');
    std::string k = parts[i].substr(0, e), v = e == std::string::npos ? "" : parts[i].substr(e + 1);
    if (k == "provenance") in.provenance = v;
    else if (k == "access") in.access = v;
    else return Error::Invalid("unknown attribute '" + util::printable(k, 40) + "' in '" + util::printable(s, 100) + "'");
  }
  return in;
}

Result<json> hashPath(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return Error::NotFound(path + " does not exist");
  if (S_ISREG(st.st_mode)) {
    KDK_TRY_ASSIGN(auto h, hashFile(path));
    return json{{"kind", "file"}, {"sha256", h.first}, {"size", h.second}};
  }
  if (!S_ISDIR(st.st_mode)) return Error::Invalid(path + " is neither a file nor a directory");
  std::vector<std::string> files = util::listFilesRecursive(path);
  json list = json::array();
  util::Hasher manifest("sha256");
  int64_t total = 0;
  for (const auto& f : files) {
    KDK_TRY_ASSIGN(auto h, hashFile(path + "/" + f));
    list.push_back({{"path", f}, {"sha256", h.first}, {"size", h.second}});
    manifest.update(h.first + "  " + f + "\n");
    total += h.second;
  }
  return json{{"kind", "directory"}, {"sha256", manifest.hex()}, {"size", total}, {"files", list}};
}

Result<json> buildReference(const ReferenceOptions& o, report::Report& r) {
  json ref = {{"schema", "kernodeck.reference/v1"}, {"created", util::utcTimestamp()}, {"declared_before_comparison", true}};
  json code = json::object();
  if (!o.repo.empty()) {
    std::string rev = git(o.repo, "rev-parse HEAD");
    if (rev.empty()) return Error::Invalid(o.repo + " is not a git repository (or git is missing)");
    code["repo"] = o.repo;
    code["revision"] = rev;
    code["dirty"] = !git(o.repo, "status --porcelain --untracked-files=no").empty();
    if (code["dirty"].get<bool>())
      r.add("reference.code.dirty", Severity::Warning, o.repo + " has uncommitted changes: the revision does not describe the code",
            {{"path", o.repo}});
  }
  code["entry_point"] = o.entryPoint;
  code["preprocessing"] = o.preprocessing;
  code["parameters"] = o.params;
  json configs = json::array();
  for (const auto& c : o.configs) {
    KDK_TRY_ASSIGN(json h, hashPath(c));
    h["path"] = c;
    configs.push_back(h);
  }
  code["configs"] = configs;
  ref["code"] = code;
  auto inputs = [&](const std::vector<NamedInput>& list, const char* what) -> Result<json> {
    json arr = json::array();
    for (const auto& in : list) {
      KDK_TRY_ASSIGN(json h, hashPath(in.path));
      h["name"] = in.name;
      h["path"] = in.path;
      h["provenance"] = report::redactText(in.provenance);
      h["access"] = report::redactText(in.access);
      if (std::string why = mutableReason(in.provenance); !why.empty())
        r.add("reference.mutable_name", Severity::Warning,
              std::string(what) + " '" + in.name + "' comes from '" + report::redactText(in.provenance) + "', which can move: " + why,
              {{"name", in.name}});
      arr.push_back(h);
    }
    return arr;
  };
  KDK_TRY_ASSIGN(ref["data"], inputs(o.data, "data"));
  KDK_TRY_ASSIGN(ref["weights"], inputs(o.weights, "weights"));
  json packages = json::object();
  if (!o.packagesReport.empty()) {
    KDK_TRY_ASSIGN(json a, readJson(o.packagesReport));
    packages["source"] = a.value("subject", json::object()).value("reference", o.packagesReport);
    packages["manifest_digest"] = a.value("subject", json::object()).value("manifest_digest", json(nullptr));
    json freeze = json::array();
    if (a.contains("python") && a["python"].contains("environments"))
      for (const auto& e : a["python"]["environments"]) freeze.push_back({{"prefix", e["prefix"]}, {"freeze", e["freeze"]}});
    packages["environments"] = freeze;
    if (a.contains("python") && a["python"].contains("torch")) packages["torch"] = a["python"]["torch"];
  } else if (!o.requirements.empty()) {
    KDK_TRY_ASSIGN(json h, hashPath(o.requirements));
    KDK_TRY_ASSIGN(std::string text, util::readFileLimited(o.requirements, 1 << 20));
    packages["source"] = "requirements " + o.requirements;
    packages["requirements"] = {{"sha256", h["sha256"]}, {"lines", util::split(report::redactText(text), '\n')}};
  }
  ref["packages"] = packages;
  json system;
  if (!o.hostRecord.empty()) {
    KDK_TRY_ASSIGN(json h, readJson(o.hostRecord));
    system["host"] = h.contains("host") ? h["host"] : h;
  } else {
    system["host"] = host::readHostFacts(o.hostRoot).toJson();
  }
  ref["system"] = system;
  json result = json::object();
  if (!o.expected.empty()) {
    if (o.criterion.empty()) return Error::Invalid("--criterion is required with --expected: declare the acceptance criterion now");
    if (o.why.empty()) return Error::Invalid("--why is required with --criterion: the record keeps why this threshold");
    KDK_TRY_ASSIGN(Criterion c, parseCriterion(o.criterion));
    KDK_TRY_ASSIGN(json h, hashPath(o.expected));
    result["expected"] = o.expected;
    result["expected_sha256"] = h["sha256"];
    result["criterion"] = {{"text", c.str()}, {"kind", c.kind}, {"threshold", c.threshold}, {"k", c.k}, {"why", o.why}};
    result["ids"] = o.ids;
    // The output format, from the expected outputs as they are now.
    json files = json::array();
    for (const auto& f : h["files"]) files.push_back(f["path"]);
    result["format"] = {{"files", files}, {"count", files.size()}};
  }
  ref["result"] = result;
  return ref;
}

report::Report verifyReference(const json& ref) {
  report::Report r("reference verify");
  r.declareSteps({"read", "code", "configs", "data", "weights"});
  r.subject()["reference"] = "reference";
  r.runStep("read", [&]() -> Status {
    if (ref.value("schema", "") != "kernodeck.reference/v1") return Error::Invalid("not a kernodeck.reference/v1 document");
    return {};
  });
  r.runStep("code", [&]() -> Status {
    const json& code = ref["code"];
    if (!code.contains("repo")) {
      r.skipStep("code", "the reference names no repository");
      return {};
    }
    std::string repo = code["repo"];
    std::string rev = git(repo, "rev-parse HEAD");
    if (rev != code["revision"].get<std::string>())
      r.add("reference.changed.code", Severity::Error, "the code moved: " + repo + " is at " + (rev.empty() ? "?" : rev) + ", the reference has " +
                                                           code["revision"].get<std::string>(), {{"layer", "code"}, {"path", repo}});
    else if (!git(repo, "status --porcelain --untracked-files=no").empty())
      r.add("reference.changed.code", Severity::Error, repo + " has uncommitted changes since the reference", {{"layer", "code"}, {"path", repo}});
    return {};
  });
  auto rehash = [&](const json& list, const char* layer) -> Status {
    for (const auto& item : list) {
      std::string path = item.value("path", "");
      auto h = hashPath(path);
      std::string name = item.value("name", path);
      if (!h.ok()) {
        r.add(std::string("reference.changed.") + layer, Severity::Error, std::string(layer) + " '" + name + "': " + h.error().message,
              {{"layer", layer}, {"path", path}});
        continue;
      }
      if ((*h)["sha256"] == item["sha256"]) continue;
      std::string detail;
      if (item.contains("files") && h->contains("files")) {
        std::map<std::string, std::string> before, after;
        for (const auto& f : item["files"]) before[f["path"]] = f["sha256"];
        for (const auto& f : (*h)["files"]) after[f["path"]] = f["sha256"];
        std::vector<std::string> changed;
        for (const auto& [p, s] : before)
          if (!after.count(p)) changed.push_back("-" + p);
          else if (after[p] != s) changed.push_back("~" + p);
        for (const auto& [p, s] : after)
          if (!before.count(p)) changed.push_back("+" + p);
        if (changed.size() > 5) changed.resize(5), changed.push_back("...");
        detail = " (" + util::join(changed, " ") + ")";
      }
      r.add(std::string("reference.changed.") + layer, Severity::Error,
            std::string(layer) + " '" + name + "' changed: sha256 " + (*h)["sha256"].get<std::string>().substr(0, 12) + " instead of " +
                item["sha256"].get<std::string>().substr(0, 12) + detail,
            {{"layer", layer}, {"path", path}});
    }
    return {};
  };
  r.runStep("configs", [&] { return rehash(ref["code"].value("configs", json::array()), "config"); });
  r.runStep("data", [&] { return rehash(ref.value("data", json::array()), "data"); });
  r.runStep("weights", [&] { return rehash(ref.value("weights", json::array()), "weights"); });
  return r;
}

report::Report diffRecords(const json& a, const json& b) {
  report::Report r("diff");
  r.declareSteps({"compare"});
  r.runStep("compare", [&]() -> Status {
    if (!a.is_object() || !b.is_object()) return Error::Invalid("both inputs must be JSON objects");
    std::string sa = a.value("schema", ""), sb = b.value("schema", "");
    r.subject()["a"] = sa;
    r.subject()["b"] = sb;
    // Packages: from a reference's packages or an audit report's python section.
    auto freezeOf = [](const json& j) {
      std::map<std::string, std::string> out;
      const json* envs = nullptr;
      if (j.contains("python") && j["python"].contains("environments")) envs = &j["python"]["environments"];
      else if (j.contains("packages") && j["packages"].contains("environments")) envs = &j["packages"]["environments"];
      if (envs)
        for (const auto& e : *envs)
          for (const auto& line : e.value("freeze", json::array())) {
            std::string s = line.get<std::string>();
            size_t sep = s.find("==") != std::string::npos ? s.find("==") : s.find(" @ ");
            std::string name = util::toLower(s.substr(0, sep));
            out[e.value("prefix", "") + " " + name] = sep == std::string::npos ? "" : s.substr(sep + (s[sep] == '=' ? 2 : 3));
          }
      if (j.contains("os_packages") && j["os_packages"].contains("packages"))
        for (const auto& p : j["os_packages"]["packages"]) out["dpkg " + p["name"].get<std::string>()] = p["version"];
      return out;
    };
    auto fa = freezeOf(a), fb = freezeOf(b);
    json changes = json::array();
    for (const auto& [k, v] : fa) {
      auto it = fb.find(k);
      if (it == fb.end()) {
        r.add("diff.package.removed", Severity::Warning, k + " " + v + " is only in A", {{"package", k}});
      } else if (it->second != v) {
        r.add("diff.package.changed", Severity::Warning, k + " is " + v + " in A and " + it->second + " in B", {{"package", k}});
      }
    }
    for (const auto& [k, v] : fb)
      if (!fa.count(k)) r.add("diff.package.added", Severity::Warning, k + " " + v + " is only in B", {{"package", k}});
    auto dataOf = [](const json& j) {
      std::map<std::string, std::string> out;
      for (const char* key : {"data", "weights"})
        if (j.contains(key) && j[key].is_array())
          for (const auto& d : j[key]) out[std::string(key) + " " + d.value("name", "")] = d.value("sha256", "");
      if (j.contains("code") && j["code"].contains("revision")) out["code revision"] = j["code"]["revision"];
      if (j.contains("code") && j["code"].contains("configs"))
        for (const auto& c : j["code"]["configs"]) out["config " + c.value("path", "")] = c.value("sha256", "");
      if (j.contains("subject") && j["subject"].contains("manifest_digest") && j["subject"]["manifest_digest"].is_string())
        out["image digest"] = j["subject"]["manifest_digest"];
      return out;
    };
    auto da = dataOf(a), db = dataOf(b);
    for (const auto& [k, v] : da)
      if (db.count(k) && db[k] != v) r.add("diff.input.changed", Severity::Error, k + " differs", {{"name", k}});
    auto systemOf = [](const json& j) -> std::string {
      const json* h = nullptr;
      if (j.contains("system") && j["system"].contains("host")) h = &j["system"]["host"];
      else if (j.contains("host")) h = &j["host"];
      if (!h || !h->contains("nvidia") || !(*h)["nvidia"].is_object()) return "no NVIDIA driver";
      return "driver " + (*h)["nvidia"].value("driver_version", std::string("?")) + ", " +
             std::to_string((*h)["nvidia"].value("gpus", json::array()).size()) + " GPU(s)";
    };
    if ((a.contains("system") || a.contains("host")) && systemOf(a) != systemOf(b))
      r.add("diff.system.changed", Severity::Warning, "system: " + systemOf(a) + " in A, " + systemOf(b) + " in B");
    r.section("diff") = {{"packages_a", fa.size()}, {"packages_b", fb.size()}};
    return {};
  });
  return r;
}

}  // namespace kernodeck::record
