// The dossier: a folder another run can replay. build writes it with a hash
// manifest and an offline index.html; verify checks the manifest; replay runs
// the recorded procedure in a fresh temporary folder and compares.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>

#include "kernodeck/record/record.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using nlohmann::json;
using report::Severity;

namespace {

std::string html(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else if (c == '"') o += "&quot;";
    else o.push_back(c);
  }
  return o;
}

Status write(const std::string& dir, const std::string& rel, const std::string& content) {
  return util::writeBeneath(dir, rel, content);
}

std::string fileSha(const std::string& path) {
  auto t = util::readFileLimited(path, 1ull << 32);
  return t.ok() ? util::sha256Hex(*t) : "";
}

struct RunOut {
  int code = -1;
  std::string out;
};

RunOut runSelf(const std::string& self, const std::vector<std::string>& argv, const std::string& cwd) {
  int p[2];
  RunOut r;
  if (::pipe(p) != 0) return r;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(p[1], 1);
    int devnull = ::open("/dev/null", O_WRONLY);
    if (devnull >= 0) ::dup2(devnull, 2);
    ::close(p[0]);
    if (::chdir(cwd.c_str()) != 0) ::_exit(126);
    std::vector<char*> args = {const_cast<char*>(self.c_str())};
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(self.c_str(), args.data());
    ::_exit(127);
  }
  ::close(p[1]);
  char buf[65536];
  ssize_t n;
  while ((n = ::read(p[0], buf, sizeof buf)) > 0) r.out.append(buf, static_cast<size_t>(n));
  ::close(p[0]);
  int st = 0;
  ::waitpid(pid, &st, 0);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
  return r;
}

}  // namespace

report::Report buildDossier(const DossierOptions& o) {
  report::Report r("dossier build");
  r.declareSteps({"collect", "write", "manifest"});
  r.subject()["reference"] = o.dir;
  json ref;
  std::vector<json> reports;
  r.runStep("collect", [&]() -> Status {
    KDK_TRY_ASSIGN(std::string text, util::readFileLimited(o.reference, 64u << 20));
    ref = json::parse(text, nullptr, false);
    if (!ref.is_object() || ref.value("schema", "") != "kernodeck.reference/v1") return Error::Invalid(o.reference + " is not a kernodeck.reference/v1 document");
    for (const auto& p : o.reports) {
      KDK_TRY_ASSIGN(std::string t, util::readFileLimited(p, 64u << 20));
      json j = json::parse(t, nullptr, false);
      if (!j.is_object() || j.value("schema", "") != "kernodeck.report/v1") return Error::Invalid(p + " is not a kernodeck.report/v1 report");
      reports.push_back(j);
    }
    struct stat st {};
    if (::stat(o.dir.c_str(), &st) == 0) {
      if (!util::listFilesRecursive(o.dir).empty()) return Error::Invalid(o.dir + " exists and is not empty");
    } else if (::mkdir(o.dir.c_str(), 0755) != 0) {
      return Error::Io("cannot create " + o.dir);
    }
    return {};
  });
  r.runStep("write", [&]() -> Status {
    // Everything that lands here passes through redaction: no credential is ever copied in.
    KDK_TRY_STATUS(write(o.dir, "reference.json", report::redactText(ref.dump(2)) + "\n"));
    json inventory = json::object();
    json htmlSteps = json::array();
    std::string rows, findingsHtml, inventoryHtml, diffHtml;
    for (size_t i = 0; i < reports.size(); ++i) {
      const json& rep = reports[i];
      std::string cmd = rep.value("tool", json::object()).value("command", "report");
      std::string name = "reports/" + std::to_string(i + 1) + "-" + util::join(util::split(cmd, ' '), "-") + ".json";
      KDK_TRY_STATUS(write(o.dir, name, report::redactText(rep.dump(2)) + "\n"));
      for (const auto& s : rep.value("steps", json::array()))
        rows += "<tr><td>" + html(cmd) + "</td><td>" + html(s.value("name", "")) + "</td><td class=\"" + html(s.value("status", "")) + "\">" +
                html(s.value("status", "")) + "</td><td>" + html(s["error"].is_string() ? report::redactText(s["error"].get<std::string>()) : "") + "</td></tr>\n";
      for (const auto& f : rep.value("findings", json::array()))
        findingsHtml += "<tr><td>" + html(f.value("severity", "")) + "</td><td>" + html(f.value("code", "")) + "</td><td>" +
                        html(report::redactText(f.value("message", ""))) + "</td></tr>\n";
      if (rep.contains("python")) {
        inventory["python"] = rep["python"];
        // The observed inventory against the reference's packages.
        report::Report diff = diffRecords(ref, rep);
        for (const auto& f : diff.findings())
          diffHtml += "<tr><td>" + html(f.code) + "</td><td>" + html(report::redactText(f.message)) + "</td></tr>\n";
      }
      if (rep.contains("os_packages")) inventory["os_packages"] = rep["os_packages"];
    }
    std::string freeze;
    if (inventory.contains("python"))
      for (const auto& e : inventory["python"].value("environments", json::array())) {
        freeze += "# " + e.value("prefix", std::string("?")) + "\n";
        for (const auto& l : e.value("freeze", json::array())) {
          freeze += l.get<std::string>() + "\n";
          inventoryHtml += "<tr><td>" + html(e.value("prefix", "")) + "</td><td>" + html(l.get<std::string>()) + "</td></tr>\n";
        }
      }
    KDK_TRY_STATUS(write(o.dir, "inventory.json", report::redactText(inventory.dump(2)) + "\n"));
    KDK_TRY_STATUS(write(o.dir, "freeze.txt", report::redactText(freeze)));
    json dataRefs = json::array();
    for (const char* k : {"data", "weights"})
      for (const auto& d : ref.value(k, json::array()))
        dataRefs.push_back({{"kind", k}, {"name", d.value("name", "")}, {"sha256", d.value("sha256", "")}, {"size", d.value("size", 0)},
                            {"provenance", d.value("provenance", "")}, {"access", d.value("access", "")}});
    KDK_TRY_STATUS(write(o.dir, "data-references.json", report::redactText(dataRefs.dump(2)) + "\n"));
    for (const auto& c : ref["code"].value("configs", json::array())) {
      std::string p = c.value("path", "");
      auto t = util::readFileLimited(p, 16u << 20);
      if (t.ok()) KDK_TRY_STATUS(write(o.dir, "config/" + p.substr(p.rfind('/') + 1), report::redactText(*t)));
    }
    json procedure = json::array();
    procedure.push_back({{"name", "verify-reference"}, {"layer", "inputs"}, {"argv", {"reference", "verify", "--reference", "reference.json", "--json"}}});
    if (!o.outputs.empty())
      procedure.push_back({{"name", "sample-check"}, {"layer", "result"},
                           {"argv", {"sample", "check", o.outputs, "--reference", "reference.json", "--json"}}});
    KDK_TRY_STATUS(write(o.dir, "procedure.json", procedure.dump(2) + "\n"));
    const json& code = ref.value("code", json::object());
    std::string md =
        "# Procedure\n\nThe exact sequence this dossier records. Run it from this folder.\n\n"
        "## 1. Rebuild\n\nRebuild the environment from the pinned image digest and requirements recorded in `reference.json`"
        " (packages: " + ref["packages"].value("source", std::string("not recorded")) + "), then audit it:\n\n"
        "    kernodeck audit IMAGE@DIGEST --json -o audit.json\n    kernodeck diff reference.json audit.json\n\n"
        "## 2. Diagnose\n\n    kernodeck host\n    kernodeck probe --expect auto --json -o probe.json\n\n"
        "## 3. Run the sample\n\nEntry point: `" + code.value("entry_point", std::string("(not recorded)")) + "` at revision `" +
        code.value("revision", std::string("(not recorded)")) + "` with parameters `" + code.value("parameters", json::object()).dump() + "`.\n\n"
        "## 4. Review the output\n\n    kernodeck reference verify --reference reference.json\n    kernodeck sample check OUTPUTS --reference reference.json\n\n"
        "Acceptance criterion, declared before any comparison: `" +
        ref["result"].value("criterion", json::object()).value("text", std::string("(none)")) + "` because: " +
        ref["result"].value("criterion", json::object()).value("why", std::string("(not recorded)")) + "\n\n"
        "## Replay\n\n    kernodeck dossier verify .\n    kernodeck dossier replay .\n\n"
        "## Credentials\n\nNo credential is stored here. Provide registry credentials through `REGISTRY_AUTH_FILE`, "
        "`$XDG_RUNTIME_DIR/containers/auth.json` or `~/.docker/config.json`, and data access as each entry of "
        "`data-references.json` notes under `access`.\n";
    KDK_TRY_STATUS(write(o.dir, "procedure.md", report::redactText(md)));
    std::string page =
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Kernodeck dossier</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px solid #ccc;padding:4px 8px}"
        ".passed{color:#070}.failed{color:#b00}.skipped{color:#777}.not_reached{color:#a60}</style></head><body>\n"
        "<h1>Kernodeck dossier</h1>\n<p>Reference created " + html(ref.value("created", "")) + "; criterion <code>" +
        html(ref["result"].value("criterion", json::object()).value("text", std::string("none"))) + "</code>.</p>\n"
        "<h2>Steps</h2>\n<table><tr><th>check</th><th>step</th><th>status</th><th>first error</th></tr>\n" + rows + "</table>\n"
        "<h2>Findings</h2>\n<table><tr><th>severity</th><th>code</th><th>message</th></tr>\n" + findingsHtml + "</table>\n"
        "<h2>Inventory</h2>\n<table><tr><th>environment</th><th>package</th></tr>\n" + inventoryHtml + "</table>\n"
        "<h2>Inventory diff against the reference</h2>\n<table><tr><th>code</th><th>difference</th></tr>\n" +
        (diffHtml.empty() ? std::string("<tr><td colspan=\"2\">no difference, or no audit report included</td></tr>\n") : diffHtml) +
        "</table>\n</body></html>\n";
    KDK_TRY_STATUS(write(o.dir, "index.html", page));
    return {};
  });
  r.runStep("manifest", [&]() -> Status {
    std::vector<std::string> files = util::listFilesRecursive(o.dir);
    std::string manifest;
    for (const auto& f : files)
      if (f != "MANIFEST.sha256") manifest += fileSha(o.dir + "/" + f) + "  " + f + "\n";
    r.section("dossier") = {{"files", files.size()}};
    return write(o.dir, "MANIFEST.sha256", manifest);
  });
  return r;
}

report::Report verifyDossier(const std::string& dir) {
  report::Report r("dossier verify");
  r.declareSteps({"manifest", "files"});
  r.subject()["reference"] = dir;
  std::map<std::string, std::string> want;
  r.runStep("manifest", [&]() -> Status {
    KDK_TRY_ASSIGN(std::string text, util::readFileLimited(dir + "/MANIFEST.sha256", 16u << 20));
    for (const auto& line : util::split(text, '\n')) {
      if (line.size() < 67) continue;
      want[line.substr(66)] = line.substr(0, 64);
    }
    for (const char* required : {"reference.json", "procedure.md", "procedure.json", "index.html", "inventory.json"})
      if (!want.count(required)) r.add("dossier.incomplete", Severity::Error, std::string(required) + " is not in the dossier", {{"path", required}});
    return {};
  });
  r.runStep("files", [&]() -> Status {
    std::vector<std::string> files = util::listFilesRecursive(dir);
    std::set<std::string> present(files.begin(), files.end());
    for (const auto& [f, sha] : want) {
      if (!present.count(f)) r.add("dossier.missing", Severity::Error, f + " is missing", {{"path", f}});
      else if (fileSha(dir + "/" + f) != sha) r.add("dossier.modified", Severity::Error, f + " was modified after the dossier was built", {{"path", f}});
    }
    for (const auto& f : files)
      if (f != "MANIFEST.sha256" && !want.count(f)) r.add("dossier.extra", Severity::Error, f + " was added after the dossier was built", {{"path", f}});
    return {};
  });
  return r;
}

report::Report replayDossier(const std::string& dir, const std::string& self) {
  report::Report r("dossier replay");
  r.declareSteps({"verify", "prepare", "run", "compare"});
  r.subject()["reference"] = dir;
  json procedure;
  std::string work;
  std::vector<std::pair<std::string, json>> results;
  r.runStep("verify", [&]() -> Status {
    report::Report v = verifyDossier(dir);
    if (v.failed() || !v.findings().empty()) return Error::Corrupt("the dossier does not verify: " + (v.findings().empty() ? v.firstError() : v.findings()[0].message));
    return {};
  });
  r.runStep("prepare", [&]() -> Status {
    KDK_TRY_ASSIGN(std::string p, util::readFileLimited(dir + "/procedure.json", 1 << 20));
    procedure = json::parse(p, nullptr, false);
    if (!procedure.is_array()) return Error::Invalid("procedure.json is not a list of steps");
    char tmpl[] = "/tmp/kernodeck-replay-XXXXXX";
    if (!::mkdtemp(tmpl)) return Error::Io("cannot create a temporary folder");
    work = tmpl;
    KDK_TRY_ASSIGN(std::string ref, util::readFileLimited(dir + "/reference.json", 64u << 20));
    return util::writeBeneath(work, "reference.json", ref);
  });
  r.runStep("run", [&]() -> Status {
    for (const auto& step : procedure) {
      std::vector<std::string> argv;
      for (const auto& a : step["argv"]) argv.push_back(a.get<std::string>());
      RunOut out = runSelf(self, argv, work);
      json rep = json::parse(out.out, nullptr, false);
      if (!rep.is_object()) return Error::Invalid("step " + step.value("name", std::string("?")) + " printed no report (exit " + std::to_string(out.code) + ")");
      rep["exit_code"] = out.code;
      results.emplace_back(step.value("layer", std::string("?")), rep);
    }
    return {};
  });
  r.runStep("compare", [&]() -> Status {
    json summary = json::array();
    for (const auto& [layer, rep] : results) {
      std::vector<std::string> codes;
      for (const auto& f : rep.value("findings", json::array()))
        if (f.value("severity", "") == "error") codes.push_back(f.value("code", "") + (f.contains("layer") ? " (" + f["layer"].get<std::string>() + ")" : ""));
      bool ok = rep["exit_code"] == 0;
      summary.push_back({{"layer", layer}, {"command", rep["tool"].value("command", "")}, {"matches", ok}, {"differences", codes}});
      if (!ok)
        r.add("replay.differs", Severity::Error,
              "the " + layer + " layer differs: " + (codes.empty() ? rep.value("first_error", json("")).dump() : util::join(codes, ", ")),
              {{"layer", layer}});
      else
        r.add("replay.matches", Severity::Info, "the " + layer + " layer matches the reference", {{"layer", layer}});
    }
    r.section("replay") = {{"folder", work}, {"steps", summary}};
    return {};
  });
  if (!work.empty()) std::system(("rm -rf '" + work + "'").c_str());
  return r;
}

}  // namespace kernodeck::record
