// The dossier: a folder another run can replay. build writes it with a hash
// manifest and an offline index.html; verify checks the manifest; replay without --run
// prints and checks the plan --run carries out (replay.cc), running nothing.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <tuple>

#include "code_archive.h"
#include "dossier_layout.h"
#include "kernodeck/python/version.h"
#include "kernodeck/record/record.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/html.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "pip_dry_run.h"

namespace kernodeck::record {

using nlohmann::json;
using report::Severity;

namespace {

std::string html(const std::string& s) { return util::htmlEscape(s); }

Status write(const std::string& dir, const std::string& rel, const std::string& content) {
  return util::writeBeneath(dir, rel, content);
}

// The sha256 of a regular file inside the dossier, "" for anything else (a link planted there
// is not followed).
std::string fileSha(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  auto h = hashPath(path);
  return h.ok() ? h->sha256 : "";
}

// A field from a report or reference as the page shows it: redacted, then escaped (both are
// someone else's text).
std::string field(const std::string& s) { return html(report::redactText(s)); }

// A JSON value from a hostile document as short text: strings as they are, numbers and
// booleans printed, anything else "".
std::string scalar(const json& j) {
  if (j.is_string()) return j.get<std::string>();
  if (j.is_number() || j.is_boolean()) return j.dump();
  return "";
}
std::string scalarAt(const json& j, const char* key) {
  return j.is_object() && j.contains(key) ? scalar(j.at(key)) : "";
}

int severityRank(const std::string& s) { return s == "error" ? 0 : s == "warning" ? 1 : s == "info" ? 2 : 3; }

// How an included report is named on the page: its number and command line.
std::string reportLabel(const ReportDoc& rep, size_t i) {
  return "report " + std::to_string(i + 1) + " (kernodeck " + (rep.command.empty() ? std::string("?") : rep.command) +
         ")";
}

// What tells two runs of the same command apart: the subject's fields, the time and host the
// report records, how it ended, its finding counts and the sha256 of its file in the dossier.
std::string reportsHtml(const std::vector<ReportDoc>& reports, const std::vector<std::string>& files,
                        const std::vector<std::string>& fileHashes) {
  std::string rows;
  for (size_t i = 0; i < reports.size(); ++i) {
    const ReportDoc& rep = reports[i];
    std::string subject;
    if (const json& sj = rep.json.is_object() && rep.json.contains("subject") ? rep.json.at("subject") : json();
        sj.is_object())
      for (auto it = sj.begin(); it != sj.end(); ++it)
        if (std::string v = scalar(it.value()); !v.empty())
          subject += (subject.empty() ? "" : "; ") + it.key() + ": " + util::printable(v, 200);
    const std::string &created = rep.created, &host = rep.hostname;
    int counts[3] = {0, 0, 0};
    for (const auto& f : rep.findings)
      if (int k = severityRank(f.severity); k < 3) counts[k]++;
    rows += "<tr class=\"report\"><td>" + std::to_string(i + 1) + "</td><td class=\"command\">kernodeck " +
            field(rep.command) + "</td><td>" + field(subject) + "</td><td>" +
            (created.empty() ? std::string("not recorded") : field(created)) + "</td><td>" +
            (host.empty() ? std::string("not recorded") : field(host)) + "</td><td class=\"" +
            (rep.failed() ? "failed" : "passed") + "\">" +
            (rep.failed() ? "did not complete: " + field(rep.firstError) : std::string("completed")) + "</td><td>" +
            std::to_string(counts[0]) + " error, " + std::to_string(counts[1]) + " warning, " +
            std::to_string(counts[2]) + " info</td><td><code>" + html(files[i]) +
            "</code> file sha256 <code class=\"file-sha256\">" + html(fileHashes[i]) + "</code></td></tr>\n";
  }
  if (rows.empty()) rows = "<tr><td colspan=\"8\">no report is included</td></tr>\n";
  return "<h2>Reports</h2>\n<table "
         "id=\"reports\"><tr><th>#</th><th>command</th><th>subject</th><th>created</th><th>host</th><th>outcome</th>"
         "<th>findings</th><th>file</th></tr>\n" +
         rows + "</table>\n";
}

// The findings of every report grouped by severity, code and the package (or name) they are
// about, with counts; each group's messages folded away, the first few of a large group only.
std::string findingGroupsHtml(const std::vector<ReportDoc>& reports) {
  struct Group {
    int count = 0;
    std::set<size_t> reports;
    std::vector<std::string> messages;
  };
  std::map<std::tuple<int, std::string, std::string, std::string>, Group> groups;
  for (size_t i = 0; i < reports.size(); ++i)
    for (const auto& f : reports[i].findings) {
      Group& g = groups[{severityRank(f.severity), f.severity, f.code, f.package.empty() ? f.name : f.package}];
      g.count++;
      g.reports.insert(i + 1);
      if (g.messages.size() < 20) g.messages.push_back(f.message);
    }
  std::string rows;
  for (const auto& [key, g] : groups) {
    const std::string &severity = std::get<1>(key), &code = std::get<2>(key), &about = std::get<3>(key);
    std::string in, list;
    for (size_t n : g.reports) in += (in.empty() ? "" : ", ") + std::to_string(n);
    for (const auto& m : g.messages) list += "<li>" + field(m) + "</li>";
    if (g.count > static_cast<int>(g.messages.size()))
      list += "<li>and " + std::to_string(g.count - g.messages.size()) + " more</li>";
    rows += "<tr class=\"group\"><td class=\"" + html(severity) + "\">" + html(severity) + "</td><td>" + field(code) +
            "</td><td>" + field(about) + "</td><td class=\"count\">" + std::to_string(g.count) + "</td><td>" + in +
            "</td><td><details><summary>" + field(g.messages[0]) + "</summary><ul>" + list +
            "</ul></details></td></tr>\n";
  }
  if (rows.empty()) rows = "<tr><td colspan=\"6\">no findings</td></tr>\n";
  return "<h2>Findings</h2>\n<table "
         "id=\"findings\"><tr><th>severity</th><th>code</th><th>package</th><th>count</th><th>reports</th>"
         "<th>messages</th></tr>\n" +
         rows + "</table>\n";
}

// The reference: what was run (code, entry point), on what (data, weights), what it should
// give (outputs) and how that is judged (criteria, their why, and what the included sample
// checks measured).
std::string referenceHtml(const Reference& ref, const std::vector<ReportDoc>& reports) {
  std::string h = "<section id=\"reference\"><h2>Reference</h2>\n<table>";
  auto row = [&](const std::string& k, const std::string& v) {
    h += "<tr><th>" + k + "</th><td>" + v + "</td></tr>\n";
  };
  row("declared", field(ref.created));
  row("first checked",
      ref.firstChecked.empty() ? std::string("not yet: no sample check had used it") : field(ref.firstChecked));
  row("declared before comparison",
      ref.declaredBeforeComparison
          ? std::string("<span class=\"passed\">yes</span>")
          : std::string(
                "<strong class=\"failed\">no: the criteria were revised after a check (revisions below)</strong>"));
  row("code",
      ref.code.repo.empty()
          ? std::string("no repository recorded")
          : field(ref.code.repo) + " at <code class=\"revision\">" + field(ref.code.revision) + "</code>" +
                (ref.code.dirty ? " <strong class=\"failed\">(dirty: uncommitted changes)</strong>" : " (clean)"));
  row("entry point",
      ref.code.entryPoint.empty() ? std::string("not recorded") : "<code>" + field(ref.code.entryPoint) + "</code>");
  if (!ref.packages.manifestDigest.empty()) row("image", "<code>" + field(ref.packages.manifestDigest) + "</code>");
  h += "</table>\n<h3>Data and weights</h3>\n<table><tr><th>kind</th><th>name</th><th>sha256</th><th>size</th></tr>\n";
  for (const auto* list : {&ref.data, &ref.weights})
    for (const auto& d : *list)
      h += std::string("<tr><td>") + (list == &ref.data ? "data" : "weights") + "</td><td>" + field(d.name) +
           "</td><td><code>" + field(d.sha256.substr(0, 12)) + "</code></td><td>" + std::to_string(d.size) +
           "</td></tr>\n";
  h += "</table>\n<h3>Expected outputs</h3>\n<table><tr><th>name</th><th>dtype</th><th>shape</th></tr>\n";
  for (const auto& o : ref.outputs) {
    std::string shape;
    for (auto d : o.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
    h += "<tr><td>" + field(o.name) + "</td><td>" + field(o.dtype) + "</td><td>(" + shape + ")</td></tr>\n";
  }
  h += "</table>\n<h3>Criteria</h3>\n<table id=\"criteria\"><tr><th>criterion</th><th>why</th><th>measured</th></tr>\n";
  for (const auto& [text, why] : ref.result.criteria) {
    std::string measured;
    for (const auto& rep : reports) {
      const json* cmp = rep.command == "sample check" && rep.json.is_object() && rep.json.contains("comparison")
                            ? &rep.json.at("comparison")
                            : nullptr;
      if (!cmp || !cmp->is_array()) continue;
      for (const auto& c : *cmp)
        if (scalarAt(c, "criterion") == text) {
          bool pass = c.is_object() && c.contains("pass") && c.at("pass") == true;
          measured += std::string("<div class=\"") + (pass ? "passed" : "failed") + "\">" +
                      field(scalarAt(c, "output")) + ": " + field(scalarAt(c, "measure_name")) + " " +
                      field(scalarAt(c, "measure")) + " against " + field(scalarAt(c, "threshold")) +
                      (pass ? " (met)" : " (not met)") + "</div>";
        }
    }
    h += "<tr class=\"criterion\"><td><code>" + field(text) + "</code></td><td>" + field(why) + "</td><td>" +
         (measured.empty() ? std::string("no sample check included") : measured) + "</td></tr>\n";
  }
  if (ref.result.criteria.empty()) h += "<tr><td colspan=\"3\">none declared</td></tr>\n";
  h += "</table>\n";
  if (!ref.revisions.empty()) {
    // The criteria this reference replaced, oldest first, with when and why.
    h += "<h3>Revisions</h3>\n<table id=\"revisions\"><tr><th>revised</th><th>why</th><th>earlier "
         "criteria</th><th>declared</th><th>first checked</th></tr>\n";
    for (const auto& rev : ref.revisions) {
      std::string crits;
      for (const auto& [text, why] : rev.criteria)
        crits += "<div><code>" + field(text) + "</code> because: " + field(why) + "</div>";
      h += "<tr class=\"revision\"><td>" + field(rev.revised) + "</td><td>" + field(rev.why) + "</td><td>" +
           (crits.empty() ? std::string("none") : crits) + "</td><td>" + field(rev.created) + "</td><td>" +
           (rev.firstChecked.empty() ? std::string("never") : field(rev.firstChecked)) + "</td></tr>\n";
    }
    h += "</table>\n";
  }
  return h + "</section>\n";
}

// The folders a path the reference names may lie in: the code root (the recorded repository,
// else the reference's folder) and each --input-root, links resolved.
std::vector<std::filesystem::path> allowedRoots(const DossierOptions& o) {
  const Reference& ref = o.reference;
  std::vector<std::string> given = o.inputRoots;
  given.push_back(ref.code.repo.empty() ? (ref.baseDir.empty() ? "." : ref.baseDir) : ref.fromReference(ref.code.repo));
  std::vector<std::filesystem::path> roots;
  for (const auto& g : given) {
    std::error_code ec;
    auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(g, ec), ec);
    if (!ec) roots.push_back(p);
  }
  return roots;
}

// `path` (as the reference names it, resolved) when it lies inside one of `roots`, links
// followed; an Unsafe error naming it otherwise.
Result<std::string> confined(const DossierOptions& o, const std::vector<std::filesystem::path>& roots,
                             const std::string& what, const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::weakly_canonical(std::filesystem::absolute(o.reference.resolve(path), ec), ec);
  if (!ec)
    for (const auto& root : roots) {
      auto rel = p.lexically_relative(root);
      if (!rel.empty() && *rel.begin() != "..") return p.string();
    }
  return Error::Unsafe(what + ": '" + util::printable(path, 200) +
                       "' lies outside the code root and every --input-root: it is not carried");
}

// A carried wheel against the reference's lock (reference init --lock): a wheel the lock names
// with another hash, or a wheel of a locked package that the lock does not name (another
// version or build), is a dossier.wheel.changed error naming it.
void checkAgainstReferenceLock(const Reference& ref, const std::string& file, const std::string& name,
                               const std::string& sha, report::Report& r) {
  if (!ref.packages.lock) return;
  std::string key = python::canonicalizeName(name);
  const LockedPackage* locked = nullptr;
  for (const auto& p : ref.packages.lock->packages) {
    if (python::canonicalizeName(p.name) == key) locked = &p;
    for (const auto& w : p.wheels) {
      if (w.name != file) continue;
      if (w.sha256 != sha)
        r.add("dossier.wheel.changed", Severity::Error,
              "wheel " + file + " has sha256 " + sha.substr(0, 12) + ", but the reference's lock (" +
                  ref.packages.lockPath + ") names it with sha256 " + w.sha256.substr(0, 12) +
                  ": it is not the distribution the reference was made with",
              {{"name", file}, {"package", p.name}, {"path", "wheels/" + file}});
      return;
    }
  }
  if (locked)
    r.add("dossier.wheel.changed", Severity::Error,
          "wheel " + file + " is not one the reference's lock (" + ref.packages.lockPath + ") names for " +
              locked->name + " " + locked->version + ": it is not the distribution the reference was made with",
          {{"name", file}, {"package", locked->name}, {"path", "wheels/" + file}});
}

// --wheels DIR: each wheel of the folder (regular files named as wheels; anything else is an
// error) carried under wheels/, and pylock.toml listing each with its sha256.
Status carryWheels(const std::string& dir, const std::string& dossier, const Reference& ref, report::Report& r) {
  Lock lock;
  lock.lockVersion = "1.0";
  std::map<std::pair<std::string, std::string>, LockedPackage> packages;
  std::vector<std::string> files;
  for (const auto& f : util::listFilesRecursive(dir))
    if (f.ends_with(".whl")) files.push_back(f);
  if (files.empty()) return Error::NotFound("--wheels " + dir + " holds no wheel (*.whl)");
  for (const auto& f : files) {
    std::string name, version;
    if (f.find('/') != std::string::npos || !wheelNameVersion(f, name, version))
      return Error::Invalid("--wheels: " + f + " is not a wheel's file name (NAME-VERSION-TAGS.whl at the top)");
    KDK_TRY_STATUS(copyBeneath(dir + "/" + f, dossier, "wheels/" + f));
    std::string sha = fileSha(dossier + "/wheels/" + f);
    checkAgainstReferenceLock(ref, f, name, sha, r);
    LockedPackage& p = packages[{name, version}];
    p.name = name, p.version = version;
    p.wheels.push_back({f, "wheels/" + f, sha});
  }
  for (auto& [k, p] : packages) lock.packages.push_back(std::move(p));
  r.section("wheels") = {{"count", files.size()}, {"lock", "pylock.toml"}};
  return write(dossier, "pylock.toml", writePylock(lock));
}

// What a replay needs besides the documents: the code as a `git archive` of the recorded
// revision, the data and weights, the expected outputs, and the user's own files.
Status carry(const DossierOptions& o, report::Report& r) {
  const Reference& ref = o.reference;
  const std::vector<std::filesystem::path> roots = allowedRoots(o);
  if (!ref.code.repo.empty()) {
    std::string repo = ref.fromReference(ref.code.repo);
    if (Status st = archiveRevision(repo, ref.code.revision, o.dir + "/code.tar"); !st.ok())
      r.add("dossier.code.not_carried", Severity::Warning,
            "the code is not carried (" + st.error().message + "): a replay clones it with --repo PATH",
            {{"path", repo}});
  }
  for (const auto* list : {&ref.data, &ref.weights}) {
    std::string kind = list == &ref.data ? "data" : "weights";
    for (const auto& in : *list) {
      std::string what = kind + " '" + in.name + "' (" + in.path + ")";
      if (!plainName(in.name))
        return Error::Invalid(what + ": the name is not a plain file name, so it cannot be carried");
      KDK_TRY_ASSIGN(std::string src, confined(o, roots, what, in.path));
      KDK_TRY_STATUS(copyBeneath(src, o.dir, carriedInput(kind, in.name)));
      auto h = hashPath(o.dir + "/" + carriedInput(kind, in.name));
      if (!h.ok() || h->sha256 != in.sha256)
        r.add("dossier.input.changed", Severity::Error,
              what +
                  " no longer has the reference's hash: the dossier carries it as it is now, and a replay will stop at "
                  "placing it",
              {{"path", in.path}, {"name", in.name}});
    }
  }
  if (ref.result.declared) {
    KDK_TRY_ASSIGN(std::string expected, confined(o, roots, "the expected outputs", ref.result.expected));
    KDK_TRY_STATUS(copyBeneath(expected, o.dir, "expected"));
  }
  if (!o.wheels.empty()) KDK_TRY_STATUS(carryWheels(o.wheels, o.dir, ref, r));
  for (const auto& inc : o.includes) {
    std::string base = std::filesystem::path(inc).lexically_normal().filename().string();
    if (base.empty()) base = std::filesystem::path(inc).lexically_normal().parent_path().filename().string();
    if (base.empty() || base == "." || base == "..") return Error::Invalid("--include " + inc + " names no file");
    KDK_TRY_STATUS(copyBeneath(inc, o.dir, "files/" + base));
  }
  return {};
}

}  // namespace

Status copyBeneath(const std::string& src, const std::string& root, const std::string& rel) {
  struct stat st {};
  if (::lstat(src.c_str(), &st) != 0) return Error::NotFound(src + " does not exist");
  std::vector<std::string> files;
  if (S_ISREG(st.st_mode))
    files.push_back("");
  else if (S_ISDIR(st.st_mode))
    files = util::listFilesRecursive(src);
  else
    return Error::Invalid(src + " is neither a file nor a folder");
  for (const auto& f : files) {
    std::string from = f.empty() ? src : src + "/" + f;
    struct stat fs {};
    if (::lstat(from.c_str(), &fs) != 0 || !S_ISREG(fs.st_mode)) return Error::Invalid(from + " is not a regular file");
    KDK_TRY_ASSIGN(std::string bytes, util::readFileLimited(from, 8ull << 30));
    KDK_TRY_STATUS(util::writeBeneath(root, f.empty() ? rel : rel + "/" + f, bytes, fs.st_mode & 0755));
  }
  return {};
}

report::Report buildDossier(const DossierOptions& o) {
  report::Report r("dossier build");
  // The last step is the dossier's verdict, the one its page opens with, so that what the command
  // prints is what the page says: failed (an error finding) or incomplete (this step fails).
  r.declareSteps({"collect", "write", "manifest", "verdict"});
  r.subject()["reference"] = o.dir;
  const Reference& ref = o.reference;
  std::string verdict = "passed", why = "every included report completed without an error finding";
  r.runStep("collect", [&]() -> Status {
    struct stat st {};
    if (::stat(o.dir.c_str(), &st) == 0) {
      if (!util::listFilesRecursive(o.dir).empty()) return Error::Invalid(o.dir + " exists and is not empty");
    } else if (!util::makeDirs(o.dir)) {
      return Error::Io("cannot create " + o.dir);
    }
    return {};
  });
  r.runStep("write", [&]() -> Status {
    // Everything that lands here passes through redaction: no credential is ever copied in.
    KDK_TRY_STATUS(write(o.dir, "reference.json", report::redactText(ref.json.dump(2)) + "\n"));
    json inventory = json::object();
    std::string rows, inventoryHtml, diffHtml;
    // The verdict the page opens with: incomplete when a report did not complete, failed when
    // one has error findings, passed otherwise; and why.
    for (size_t i = 0; i < o.reports.size(); ++i) {
      const ReportDoc& rep = o.reports[i];
      std::string label = reportLabel(rep, i);
      if (rep.failed()) {
        r.add("dossier.report.failed", Severity::Warning,
              label + " did not complete: " + report::redactText(rep.firstError), {{"name", label}});
        if (verdict != "incomplete")
          verdict = "incomplete", why = label + " did not complete: " + report::redactText(rep.firstError);
      } else if (verdict == "passed") {
        for (const auto& f : rep.findings)
          if (f.severity == "error") {
            verdict = "failed", why = label + ": " + f.code + ": " + report::redactText(f.message);
            break;
          }
      }
    }
    if (o.reports.empty()) verdict = "incomplete", why = "no check report is included";
    std::vector<std::string> reportFiles, reportHashes;
    std::string diffSummary;
    for (size_t i = 0; i < o.reports.size(); ++i) {
      const ReportDoc& rep = o.reports[i];
      std::string cmd = rep.command.empty() ? "report" : rep.command;
      std::string slug;
      for (char c : cmd) slug.push_back(std::isalnum(static_cast<unsigned char>(c)) ? c : '-');
      std::string name = "reports/" + std::to_string(i + 1) + "-" + slug + ".json";
      std::string text = report::redactText(rep.json.dump(2)) + "\n";
      KDK_TRY_STATUS(write(o.dir, name, text));
      reportFiles.push_back(name);
      reportHashes.push_back(util::sha256Hex(text));
      for (const auto& s : rep.steps)
        rows += "<tr><td>" + html(std::to_string(i + 1) + ": " + cmd) + "</td><td>" + html(s.name) +
                "</td><td class=\"" + html(s.status) + "\">" + html(s.status) + "</td><td>" +
                html(report::redactText(s.error)) + "</td></tr>\n";
      if (rep.hasPython && !rep.environments.empty()) {  // an audit's inventory (a probe's python section has none)
        inventory["python"] = rep.python;
        // The observed inventory against the reference's packages.
        DiffInput refIn, repIn;
        refIn.reference = ref;
        repIn.report = rep;
        report::Report diff = diffRecords(refIn, repIn);
        const json& n = diff.sections().contains("diff") ? diff.sections().at("diff").value("packages", json::object())
                                                         : json::object();
        diffSummary += "<p class=\"diff-summary\">" + html(reportLabel(rep, i)) + ": " +
                       std::to_string(diff.findings().size()) + " difference(s): " + scalarAt(n, "changed") +
                       " changed, " + scalarAt(n, "only_a") + " only in the reference, " + scalarAt(n, "only_b") +
                       " only in the report, " + scalarAt(n, "environments_not_recorded") +
                       " environment(s) not recorded on one side; " + scalarAt(n, "same") + " the same.</p>\n";
        for (const auto& f : diff.findings())
          diffHtml += "<tr><td>" + html(reportLabel(rep, i)) + "</td><td>" + html(f.code) + "</td><td>" +
                      field(f.message) + "</td></tr>\n";
      }
      if (rep.hasOsPackages) inventory["os_packages"] = rep.os;
    }
    std::string freeze;
    const ReportDoc* withPython = nullptr;  // the last report with Python environments is the inventory
    for (const auto& rep : o.reports)
      if (!rep.environments.empty()) withPython = &rep;
    if (withPython)
      for (const auto& e : withPython->environments) {
        freeze += "# " + e.prefix + "\n";
        std::string lines;
        for (const auto& l : e.freeze) {
          freeze += l + "\n";
          lines += "<li>" + field(l) + "</li>";
        }
        // One row per environment, its packages folded: an image's inventory is hundreds of lines.
        inventoryHtml += "<tr class=\"environment\"><td>" + field(e.prefix) + "</td><td class=\"count\">" +
                         std::to_string(e.freeze.size()) + "</td><td><details><summary>packages</summary><ul>" + lines +
                         "</ul></details></td></tr>\n";
      }
    KDK_TRY_STATUS(write(o.dir, "inventory.json", report::redactText(inventory.dump(2)) + "\n"));
    KDK_TRY_STATUS(write(o.dir, "freeze.txt", report::redactText(freeze)));
    json dataRefs = json::array();
    for (const auto* list : {&ref.data, &ref.weights})
      for (const auto& d : *list)
        dataRefs.push_back({{"kind", list == &ref.data ? "data" : "weights"},
                            {"name", d.name},
                            {"sha256", d.sha256},
                            {"size", d.size},
                            {"provenance", d.provenance},
                            {"access", d.access}});
    KDK_TRY_STATUS(write(o.dir, "data-references.json", report::redactText(dataRefs.dump(2)) + "\n"));
    for (const auto& c : ref.code.configs) {
      std::string base = c.path.substr(c.path.rfind('/') + 1);
      if (base.empty() || base == "." || base == "..") continue;
      KDK_TRY_ASSIGN(std::string path, confined(o, allowedRoots(o), "config", c.path));
      auto t = util::readFileLimited(path, 16u << 20);
      if (t.ok()) KDK_TRY_STATUS(write(o.dir, "config/" + base, report::redactText(*t)));
    }
    KDK_TRY_STATUS(carry(o, r));
    Procedure procedure;
    procedure.steps.push_back({"verify-reference",
                               "inputs",
                               "kernodeck",
                               {"reference", "verify", "--reference", "reference.json", "--json"}});
    if (!ref.code.entryPoint.empty()) {
      std::vector<std::string> argv;
      for (const auto& w : util::split(ref.code.entryPoint, ' '))
        if (!w.empty()) argv.push_back(w);
      if (!argv.empty()) procedure.steps.push_back({"run-entry-point", "result", "project", argv});
    }
    std::string outputs = o.outputs;  // else where the reference says the entry point writes
    if (std::error_code ec; outputs.empty() && !ref.code.outputs.empty())
      outputs = std::filesystem::absolute(ref.resolve(ref.code.outputs), ec).lexically_normal().string();
    if (!outputs.empty())
      procedure.steps.push_back({"sample-check",
                                 "result",
                                 "kernodeck",
                                 {"sample", "check", outputs, "--reference", "reference.json", "--json"}});
    KDK_TRY_STATUS(write(o.dir, "procedure.json", toJson(procedure).dump(2) + "\n"));
    std::string criteriaMd, criteriaList;
    for (const auto& [text, why] : ref.result.criteria) {
      criteriaMd += "- `" + text + "` because: " + why + "\n";
      criteriaList += (criteriaList.empty() ? "" : ", ") + text;
    }
    if (criteriaMd.empty()) criteriaMd = "- (none declared)\n", criteriaList = "none";
    std::string md = procedureMarkdown(ref, procedure, util::listFilesRecursive(o.dir), criteriaMd);
    KDK_TRY_STATUS(write(o.dir, "procedure.md", report::redactText(md)));
    std::string page =
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Kernodeck dossier</title><style>"
        "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px "
        "solid #ccc;padding:4px 8px}"
        ".passed{color:#070}.failed{color:#b00}.skipped{color:#777}.not_reached{color:#a60}</style></head><body>\n"
        "<h1>Kernodeck dossier</h1>\n<p id=\"verdict\" class=\"" +
        (verdict == "incomplete" ? std::string("not_reached") : verdict) + "\"><strong>Verdict: " + verdict +
        "</strong> &mdash; " + html(why) + "</p>\n<p>Reference created " + html(ref.created) + "; criterion <code>" +
        html(criteriaList) + "</code>.</p>\n" + referenceHtml(ref, o.reports) +
        reportsHtml(o.reports, reportFiles, reportHashes) +
        "<h2>Steps</h2>\n<table><tr><th>report</th><th>step</th><th>status</th><th>first error</th></tr>\n" + rows +
        "</table>\n" + findingGroupsHtml(o.reports) +
        "<h2>Inventory</h2>\n<table id=\"inventory\"><tr><th>environment</th><th>packages</th><th>freeze "
        "lines</th></tr>\n" +
        inventoryHtml +
        "</table>\n"
        "<h2>Inventory diff against the reference</h2>\n" +
        (diffSummary.empty() ? std::string("<p>no report with Python environments is included</p>\n") : diffSummary) +
        "<table id=\"inventory-diff\"><tr><th>report</th><th>code</th><th>difference</th></tr>\n" +
        (diffHtml.empty() ? std::string("<tr><td colspan=\"3\">no difference</td></tr>\n") : diffHtml) +
        "</table>\n</body></html>\n";
    KDK_TRY_STATUS(write(o.dir, "index.html", page));
    return {};
  });
  r.runStep("manifest", [&]() -> Status {
    std::vector<std::string> files = util::listFilesRecursive(o.dir);
    std::string manifest;
    for (const auto& f : files)
      if (f != "MANIFEST.sha256") manifest += fileSha(o.dir + "/" + f) + "  " + f + "\n";
    r.section("dossier") = {{"files", files.size()}, {"verdict", verdict}, {"why", why}};
    return write(o.dir, "MANIFEST.sha256", manifest);
  });
  r.runStep("verdict", [&]() -> Status {
    if (verdict == "failed")
      r.add("dossier.verdict.failed", Severity::Error, "the dossier's verdict is failed: " + why);
    if (verdict == "incomplete") return Error::Invalid("the dossier's verdict is incomplete: " + why);
    return {};
  });
  return r;
}

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

report::Report replayDossier(const ReplayOptions& o, const Reference& ref, const ReplayPlanOptions& plan) {
  report::Report r("dossier replay");
  r.declareSteps({"verify", "plan"});
  r.subject()["reference"] = o.dir;
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
