// The dossier: a folder another run can replay. build writes it with a hash
// manifest and an offline index.html (dossier_page.cc), carrying what a replay needs
// (dossier_carry.cc); verify checks the manifest; replay without --run prints and checks the
// plan --run carries out (replay.cc), running nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <set>

#include "dossier_carry.h"
#include "dossier_layout.h"
#include "dossier_page.h"
#include "kernodeck/record/record.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "pip_dry_run.h"

namespace kernodeck::record {

using nlohmann::json;
using report::Severity;

namespace {

Status write(const std::string& dir, const std::string& rel, const std::string& content) {
  return util::writeBeneath(dir, rel, content);
}

// One `dossier build`: the steps in order, sharing the verdict the page opens with and the
// last step repeats.
class DossierBuild {
 public:
  explicit DossierBuild(const DossierOptions& o) : o_(o), ref_(o.reference), r_("dossier build") {}

  report::Report run() {
    // The last step is the dossier's verdict, the one its page opens with, so that what the command
    // prints is what the page says: failed (an error finding) or incomplete (this step fails).
    r_.declareSteps({"collect", "write", "manifest", "verdict"});
    r_.subject()["reference"] = o_.dir;
    r_.runStep("collect", [&] { return collect(); });
    r_.runStep("write", [&] { return writeAll(); });
    r_.runStep("manifest", [&]() -> Status {
      std::vector<std::string> files = util::listFilesRecursive(o_.dir);
      std::string manifest;
      for (const auto& f : files)
        if (f != "MANIFEST.sha256") manifest += fileSha(o_.dir + "/" + f) + "  " + f + "\n";
      r_.section("dossier") = {{"files", files.size()}, {"verdict", verdict_}, {"why", why_}};
      return write(o_.dir, "MANIFEST.sha256", manifest);
    });
    r_.runStep("verdict", [&]() -> Status {
      if (verdict_ == "failed")
        r_.add("dossier.verdict.failed", Severity::Error, "the dossier's verdict is failed: " + why_);
      if (verdict_ == "incomplete") return Error::Invalid("the dossier's verdict is incomplete: " + why_);
      return {};
    });
    return std::move(r_);
  }

 private:
  // collect: the folder is new or empty.
  Status collect() {
    // Never into a folder reached through another user's link (util::resolveOutputPath's rule).
    KDK_TRY_STATUS(util::checkOutputFolder(o_.dir));
    struct stat st {};
    if (::stat(o_.dir.c_str(), &st) == 0) {
      if (!util::listFilesRecursive(o_.dir).empty()) return Error::Invalid(o_.dir + " exists and is not empty");
    } else if (!util::makeDirs(o_.dir)) {
      return Error::Io("cannot create " + o_.dir);
    }
    return {};
  }

  // write: every document and what the dossier carries, then procedure.md and index.html.
  Status writeAll() {
    // Everything that lands here passes through redaction: no credential is ever copied in.
    KDK_TRY_STATUS(write(o_.dir, "reference.json", report::redactText(ref_.json.dump(2)) + "\n"));
    judge();
    KDK_TRY_STATUS(writeReports());
    KDK_TRY_STATUS(writeInventory());
    KDK_TRY_STATUS(writeDataReferences());
    KDK_TRY_STATUS(carry(o_, r_));
    Procedure procedure = makeProcedure();
    KDK_TRY_STATUS(write(o_.dir, "procedure.json", toJson(procedure).dump(2) + "\n"));
    std::string criteriaMd, criteriaList;
    for (const auto& [text, why] : ref_.result.criteria) {
      criteriaMd += "- `" + text + "` because: " + why + "\n";
      criteriaList += (criteriaList.empty() ? "" : ", ") + text;
    }
    if (criteriaMd.empty()) criteriaMd = "- (none declared)\n", criteriaList = "none";
    std::string md = procedureMarkdown(ref_, procedure, util::listFilesRecursive(o_.dir), criteriaMd);
    KDK_TRY_STATUS(write(o_.dir, "procedure.md", report::redactText(md)));
    std::string page = dossierPage({ref_, o_.reports, reportFiles_, reportHashes_, verdict_, why_, criteriaList});
    KDK_TRY_STATUS(write(o_.dir, "index.html", page));
    return {};
  }

  // The verdict the page opens with: incomplete when a report did not complete, failed when
  // one has error findings, passed otherwise; and why.
  void judge() {
    for (size_t i = 0; i < o_.reports.size(); ++i) {
      const ReportDoc& rep = o_.reports[i];
      std::string label = reportLabel(rep, i);
      if (rep.failed()) {
        r_.add("dossier.report.failed", Severity::Warning,
               label + " did not complete: " + report::redactText(rep.firstError), {{"name", label}});
        if (verdict_ != "incomplete")
          verdict_ = "incomplete", why_ = label + " did not complete: " + report::redactText(rep.firstError);
      } else if (verdict_ == "passed") {
        for (const auto& f : rep.findings)
          if (f.severity == "error") {
            verdict_ = "failed", why_ = label + ": " + f.code + ": " + report::redactText(f.message);
            break;
          }
      }
    }
    if (o_.reports.empty()) verdict_ = "incomplete", why_ = "no check report is included";
  }

  // reports/N-COMMAND.json: each included report, redacted; its file name and sha256 kept for the page.
  Status writeReports() {
    for (size_t i = 0; i < o_.reports.size(); ++i) {
      const ReportDoc& rep = o_.reports[i];
      std::string cmd = rep.command.empty() ? "report" : rep.command;
      std::string slug;
      for (char c : cmd) slug.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '-');
      std::string name = "reports/" + std::to_string(i + 1) + "-" + slug + ".json";
      std::string text = report::redactText(rep.json.dump(2)) + "\n";
      KDK_TRY_STATUS(write(o_.dir, name, text));
      reportFiles_.push_back(name);
      reportHashes_.push_back(util::sha256Hex(text));
    }
    return {};
  }

  // inventory.json (the python and OS sections of the audits included) and freeze.txt (the
  // environments of the last report that has Python environments).
  Status writeInventory() {
    json inventory = json::object();
    for (const auto& rep : o_.reports) {
      if (rep.hasPython && !rep.environments.empty()) inventory["python"] = rep.python;
      if (rep.hasOsPackages) inventory["os_packages"] = rep.os;
    }
    std::string freeze;
    const ReportDoc* withPython = nullptr;  // the last report with Python environments is the inventory
    for (const auto& rep : o_.reports)
      if (!rep.environments.empty()) withPython = &rep;
    if (withPython)
      for (const auto& e : withPython->environments) {
        freeze += "# " + e.prefix + "\n";
        for (const auto& l : e.freeze) freeze += l + "\n";
      }
    KDK_TRY_STATUS(write(o_.dir, "inventory.json", report::redactText(inventory.dump(2)) + "\n"));
    return write(o_.dir, "freeze.txt", report::redactText(freeze));
  }

  // data-references.json: each data and weights input with its hash, provenance and access.
  Status writeDataReferences() {
    json dataRefs = json::array();
    for (const auto* list : {&ref_.data, &ref_.weights})
      for (const auto& d : *list)
        dataRefs.push_back({{"kind", list == &ref_.data ? "data" : "weights"},
                            {"name", d.name},
                            {"sha256", d.sha256},
                            {"size", d.size},
                            {"provenance", d.provenance},
                            {"access", d.access}});
    return write(o_.dir, "data-references.json", report::redactText(dataRefs.dump(2)) + "\n");
  }

  // procedure.json: verify the reference, run the entry point, check the outputs.
  Procedure makeProcedure() const {
    Procedure procedure;
    procedure.steps.push_back({"verify-reference",
                               "inputs",
                               "kernodeck",
                               {"reference", "verify", "--reference", "reference.json", "--json"}});
    if (!ref_.code.entryPoint.empty()) {
      std::vector<std::string> argv;
      for (const auto& w : util::split(ref_.code.entryPoint, ' '))
        if (!w.empty()) argv.push_back(w);
      if (!argv.empty()) procedure.steps.push_back({"run-entry-point", "result", "project", argv});
    }
    std::string outputs = o_.outputs;  // else where the reference says the entry point writes
    if (std::error_code ec; outputs.empty() && !ref_.code.outputs.empty())
      outputs = std::filesystem::absolute(ref_.resolve(ref_.code.outputs), ec).lexically_normal().string();
    if (!outputs.empty())
      procedure.steps.push_back({"sample-check",
                                 "result",
                                 "kernodeck",
                                 {"sample", "check", outputs, "--reference", "reference.json", "--json"}});
    return procedure;
  }

  const DossierOptions& o_;
  const Reference& ref_;
  report::Report r_;
  std::string verdict_ = "passed", why_ = "every included report completed without an error finding";
  std::vector<std::string> reportFiles_, reportHashes_;
};

}  // namespace

report::Report buildDossier(const DossierOptions& o) { return DossierBuild(o).run(); }

report::Report verifyDossier(const std::string& dir, const std::vector<ManifestEntry>& manifest) {
  report::Report r("dossier verify");
  r.declareSteps({"manifest", "files"});
  r.subject()["reference"] = dir;
  std::map<std::string, std::string> want;
  r.runStep("manifest", [&]() -> Status {
    for (const auto& e : manifest) want[e.path] = e.sha256;
    for (const char* required : {"reference.json", "procedure.md", "procedure.json", "index.html", "inventory.json"})
      if (!want.count(required))
        r.add("dossier.incomplete", Severity::Error, std::string(required) + " is not in the dossier",
              {{"path", required}});
    return {};
  });
  r.runStep("files", [&]() -> Status {
    std::vector<std::string> files = util::listFilesRecursive(dir);
    std::set<std::string> present(files.begin(), files.end());
    for (const auto& [f, sha] : want) {
      if (!present.count(f))
        r.add("dossier.missing", Severity::Error, f + " is missing", {{"path", f}});
      else if (fileSha(dir + "/" + f) != sha)
        r.add("dossier.modified", Severity::Error, f + " was modified after the dossier was built", {{"path", f}});
    }
    for (const auto& f : files)
      if (f != "MANIFEST.sha256" && f != "MANIFEST.sha256.dsse" &&
          !want.count(f))  // the signature is over the manifest
        r.add("dossier.extra", Severity::Error, f + " was added after the dossier was built", {{"path", f}});
    return {};
  });
  return r;
}

namespace {

// Copies the open regular file `in` to a new file at `to`; false on an error.
bool copyFd(int in, const std::string& to) {
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (out < 0) return false;
  char buf[1 << 16];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = n == 0;
      break;
    }
    if (!util::writeAll(out, std::string_view(buf, static_cast<size_t>(n)))) {
      ok = false;
      break;
    }
  }
  return ::close(out) == 0 && ok;
}

}  // namespace

Result<DossierCopy> DossierCopy::make(const std::string& dir) {
  char tmpl[] = "/tmp/kernodeck-dossier-XXXXXX";
  if (!::mkdtemp(tmpl)) return Error::Io(std::string("cannot create a private folder for the dossier: ") + std::strerror(errno));
  DossierCopy copy{std::string(tmpl)};
  struct stat top {};
  if (::stat(dir.c_str(), &top) != 0 || !S_ISDIR(top.st_mode))
    return Error::NotFound("cannot read the dossier " + dir + ": not a folder");
  for (const auto& rel : util::listFilesRecursive(dir)) {
    std::string to = copy.path_ + "/" + rel;
    if (auto slash = to.rfind('/'); !util::makeDirs(to.substr(0, slash)))
      return Error::Io("cannot copy the dossier into " + copy.path_);
    int in = ::open((dir + "/" + rel).c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    struct stat st {};
    bool regular = in >= 0 && ::fstat(in, &st) == 0 && S_ISREG(st.st_mode);
    bool ok = regular ? copyFd(in, to) : util::writeBeneath(copy.path_, rel, "").ok();
    if (in >= 0) ::close(in);
    if (!ok) return Error::Io("cannot copy " + dir + "/" + rel + " into " + copy.path_ + ": " + std::strerror(errno));
  }
  return copy;
}

DossierCopy::~DossierCopy() {
  if (!path_.empty()) (void)util::removeTree(path_);
}

report::Report replayDossier(const ReplayOptions& o, const Reference& ref, const ReplayPlanOptions& plan) {
  report::Report r("dossier replay");
  r.declareSteps({"verify", "plan"});
  r.subject()["reference"] = o.shown.empty() ? o.dir : o.shown;
  bool verified = true;
  r.runStep("verify", [&]() -> Status {
    report::Report v = verifyDossier(o.dir, o.manifest);
    if (v.failed()) return Error::Corrupt("the dossier could not be verified: " + v.firstError());
    for (const auto& f : v.findings()) r.add(f);  // dossier verify's own findings: exit 1, no plan
    verified = v.findings().empty();
    return {};
  });
  if (!verified) {
    r.skipStep("plan", "the dossier does not verify: no plan is made from it");
    return r;
  }
  r.runStep("plan", [&]() -> Status {
    // The plan --run would carry out, printed and checked, nothing run: an action that could not
    // be done (a field that escapes the folder, nothing carried for an input) is a finding now
    // rather than a failure halfway through a replay.
    std::vector<std::string> carried;
    for (const auto& e : o.manifest) carried.push_back(e.path);
    json rows = json::array();
    std::fprintf(stderr, "dossier replay --run would run, in a fresh folder %s:\n", plan.root.c_str());
    std::vector<ReplayAction> actions = planReplay(ref, o.procedure, carried, plan);
    bool venvOk = plan.python.empty() && std::any_of(actions.begin(), actions.end(), [](const ReplayAction& a) {
                    return a.step == "environment" && a.argv.size() > 2 && a.argv[2] == "venv" && a.problem.empty();
                  });
    // Included files lie in the code, not unpacked yet: pip could not open them, so no dry run.
    bool includes = std::any_of(
        ref.packages.requirementsLines.begin(), ref.packages.requirementsLines.end(), [](const std::string& l) {
          std::string t(util::trim(l));
          return t.starts_with("-r") || t.starts_with("-c") || t.starts_with("--r") || t.starts_with("--c");
        });
    for (auto& a : actions) {
      // What pip's resolver says of the requirements, before a replay finds out halfway.
      if (venvOk && !includes && a.problem.empty() && a.step == "environment" && a.argv.size() > 3 &&
          a.argv[2] == "pip")
        a.problem = pipDryRun(ref.packages.interpreter, util::join(ref.packages.requirementsLines, "\n"), plan.isolate,
                              plan.allowSdist);
      std::string line = describe(a, plan);
      std::fprintf(stderr, "  %s%s\n", util::printable(line, 400).c_str(),
                   a.problem.empty() ? "" : ("    (cannot: " + a.problem + ")").c_str());
      json row = {{"step", a.step}, {"action", line}};
      if (!a.problem.empty()) {
        row["problem"] = a.problem;
        r.add("replay.cannot", Severity::Error,
              "dossier replay --run would stop at its " + a.step + " step: " + a.problem, {{"step", a.step}});
      }
      rows.push_back(row);
    }
    r.section("replay") = {{"run", false}, {"plan", rows}};
    r.add("replay.not_run", Severity::Info,
          "nothing was run: 'dossier replay DIR --run' replays the project in a fresh folder");
    return {};
  });
  return r;
}

}  // namespace kernodeck::record
