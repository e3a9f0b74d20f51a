// See dossier_page.h. Each section is one function; dossierPage puts them in order.
#include "dossier_page.h"

#include <map>
#include <set>
#include <tuple>

#include "kernodeck/record/record.h"
#include "kernodeck/report/redact.h"
#include "kernodeck/util/html.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

using nlohmann::json;

namespace {

std::string html(const std::string& s) { return util::htmlEscape(s); }

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

// Each report's steps, one row each, with its first error.
std::string stepsHtml(const std::vector<ReportDoc>& reports) {
  std::string rows;
  for (size_t i = 0; i < reports.size(); ++i) {
    const ReportDoc& rep = reports[i];
    std::string cmd = rep.command.empty() ? "report" : rep.command;
    for (const auto& s : rep.steps)
      rows += "<tr><td>" + html(std::to_string(i + 1) + ": " + cmd) + "</td><td>" + html(s.name) + "</td><td class=\"" +
              html(s.status) + "\">" + html(s.status) + "</td><td>" + html(report::redactText(s.error)) +
              "</td></tr>\n";
  }
  return rows;
}

// The inventory: the environments of the last report that has Python environments, one row
// per environment, its packages folded (an image's inventory is hundreds of lines).
std::string inventoryHtml(const std::vector<ReportDoc>& reports) {
  std::string rows;
  const ReportDoc* withPython = nullptr;
  for (const auto& rep : reports)
    if (!rep.environments.empty()) withPython = &rep;
  if (withPython)
    for (const auto& e : withPython->environments) {
      std::string lines;
      for (const auto& l : e.freeze) lines += "<li>" + field(l) + "</li>";
      rows += "<tr class=\"environment\"><td>" + field(e.prefix) + "</td><td class=\"count\">" +
              std::to_string(e.freeze.size()) + "</td><td><details><summary>packages</summary><ul>" + lines +
              "</ul></details></td></tr>\n";
    }
  return rows;
}

// The observed inventory of each audit report against the reference's packages: a summary line
// per report (`summary`) and a row per difference (`rows`).
void inventoryDiffHtml(const Reference& ref, const std::vector<ReportDoc>& reports, std::string& summary,
                       std::string& rows) {
  for (size_t i = 0; i < reports.size(); ++i) {
    const ReportDoc& rep = reports[i];
    if (!rep.hasPython || rep.environments.empty())
      continue;  // an audit's inventory (a probe's python section has none)
    DiffInput refIn, repIn;
    refIn.reference = ref;
    repIn.report = rep;
    report::Report diff = diffRecords(refIn, repIn);
    const json& n = diff.sections().contains("diff") ? diff.sections().at("diff").value("packages", json::object())
                                                     : json::object();
    summary += "<p class=\"diff-summary\">" + html(reportLabel(rep, i)) + ": " +
               std::to_string(diff.findings().size()) + " difference(s): " + scalarAt(n, "changed") + " changed, " +
               scalarAt(n, "only_a") + " only in the reference, " + scalarAt(n, "only_b") + " only in the report, " +
               scalarAt(n, "environments_not_recorded") + " environment(s) not recorded on one side; " +
               scalarAt(n, "same") + " the same.</p>\n";
    for (const auto& f : diff.findings())
      rows += "<tr><td>" + html(reportLabel(rep, i)) + "</td><td>" + html(f.code) + "</td><td>" + field(f.message) +
              "</td></tr>\n";
  }
}

}  // namespace

std::string reportLabel(const ReportDoc& rep, size_t i) {
  return "report " + std::to_string(i + 1) + " (kernodeck " + (rep.command.empty() ? std::string("?") : rep.command) +
         ")";
}

std::string dossierPage(const DossierPage& p) {
  const Reference& ref = p.ref;
  std::string diffSummary, diffHtml;
  inventoryDiffHtml(ref, p.reports, diffSummary, diffHtml);
  return "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>Kernodeck dossier</title><style>"
         "body{font-family:sans-serif;margin:2em}table{border-collapse:collapse;margin-bottom:2em}td,th{border:1px "
         "solid #ccc;padding:4px 8px}"
         ".passed{color:#070}.failed{color:#b00}.skipped{color:#777}.not_reached{color:#a60}</style></head><body>\n"
         "<h1>Kernodeck dossier</h1>\n<p id=\"verdict\" class=\"" +
         (p.verdict == "incomplete" ? std::string("not_reached") : p.verdict) + "\"><strong>Verdict: " + p.verdict +
         "</strong> &mdash; " + html(p.why) + "</p>\n<p>Reference created " + html(ref.created) + "; criterion <code>" +
         html(p.criteria) + "</code>.</p>\n" + referenceHtml(ref, p.reports) +
         reportsHtml(p.reports, p.files, p.fileHashes) +
         "<h2>Steps</h2>\n<table><tr><th>report</th><th>step</th><th>status</th><th>first error</th></tr>\n" +
         stepsHtml(p.reports) + "</table>\n" + findingGroupsHtml(p.reports) +
         "<h2>Inventory</h2>\n<table id=\"inventory\"><tr><th>environment</th><th>packages</th><th>freeze "
         "lines</th></tr>\n" +
         inventoryHtml(p.reports) +
         "</table>\n"
         "<h2>Inventory diff against the reference</h2>\n" +
         (diffSummary.empty() ? std::string("<p>no report with Python environments is included</p>\n") : diffSummary) +
         "<table id=\"inventory-diff\"><tr><th>report</th><th>code</th><th>difference</th></tr>\n" +
         (diffHtml.empty() ? std::string("<tr><td colspan=\"3\">no difference</td></tr>\n") : diffHtml) +
         "</table>\n</body></html>\n";
}

}  // namespace kernodeck::record
