// A standalone HTML page of a report (no scripts, no external resources): the same summary as
// the text (verdict, counts, what was found), the steps, and every finding group with all its
// members in a <details> element, so a large group stays one line until opened; then the findings
// an exception suppressed, with its reason and expiry.
#include <sstream>

#include "kernodeck/report/formats.h"
#include "kernodeck/report/group.h"
#include "kernodeck/util/html.h"
#include "kernodeck/version.h"

namespace kernodeck::report {

namespace {

std::string esc(const std::string& s) { return util::htmlEscape(s); }

}  // namespace

std::string toHtml(const Report& r, int failOn) {
  std::string verdict = r.verdict(failOn);
  std::string subject = stringAt(r.subject(), "reference");
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
    << "<title>kernodeck " << esc(r.tool()) << (subject.empty() ? "" : ": " + esc(subject)) << "</title>\n"
    << "<style>body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse}"
       "td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left;vertical-align:top}"
       ".pass{color:#075}.fail,.incomplete{color:#b00}.error{color:#b00}.warning{color:#a60}.info{color:#555}"
       "pre{white-space:pre-wrap}summary{cursor:pointer}</style>\n</head><body>\n";
  o << "<h1>kernodeck " << esc(r.tool()) << "</h1>\n";
  if (!subject.empty()) o << "<p>Subject: <code>" << esc(subject) << "</code></p>\n";
  o << "<p id=\"verdict\" class=\"" << verdict << "\">Verdict: <strong>" << verdict << "</strong>";
  if (r.failed()) o << " &mdash; " << esc(r.firstError());
  o << "</p>\n";
  // The summary block is the text report's, verbatim.
  std::string text = r.toText(failOn);
  o << "<h2>Summary</h2>\n<pre id=\"summary\">" << esc(text.substr(0, text.find("\nSteps\n"))) << "</pre>\n";
  o << "<h2>Steps</h2>\n<table id=\"steps\"><tr><th>step</th><th>status</th><th>ms</th><th>note</th></tr>\n";
  for (const auto& s : r.steps())
    o << "<tr><td>" << esc(s.name) << "</td><td class=\"" << toString(s.status) << "\">" << toString(s.status)
      << "</td><td>" << s.duration_ms << "</td><td>" << esc(s.error) << (s.cached ? " (cached)" : "") << "</td></tr>\n";
  o << "</table>\n<h2>Findings</h2>\n";
  std::vector<FindingGroup> groups, waived;  // live; suppressed by an exception
  for (auto& g : groupFindings(r.findings())) (g.suppression ? waived : groups).push_back(std::move(g));
  if (groups.empty())
    o << "<p>No findings.</p>\n";
  else
    o << "<table id=\"findings\"><tr><th>severity</th><th>code</th><th>count</th><th>finding</th></tr>\n";
  for (const auto& g : groups) {
    o << "<tr><td class=\"" << toString(g.severity) << "\">" << toString(g.severity) << "</td><td><code>" << esc(g.code)
      << "</code></td><td>" << g.count() << "</td><td>";
    if (g.count() == 1) {
      o << esc(g.members.front()->message);
    } else {
      o << "<details><summary>" << esc(g.headline()) << "</summary><ul>";
      for (const Finding* f : g.members) o << "<li>" << esc(f->message) << "</li>";
      o << "</ul></details>";
    }
    o << "</td></tr>\n";
  }
  if (!groups.empty()) o << "</table>\n";
  if (!waived.empty()) {
    o << "<h2>Suppressed findings</h2>\n<p>Waived by exceptions: shown, not counted in the verdict.</p>\n"
      << "<table id=\"suppressed\"><tr><th>severity</th><th>code</th><th>count</th><th>finding</th><th>reason</th>"
         "<th>expires</th><th>entry</th></tr>\n";
    for (const auto& g : waived) {
      const Suppression& s = *g.suppression;
      o << "<tr><td class=\"" << toString(g.severity) << "\">" << toString(g.severity) << "</td><td><code>"
        << esc(g.code) << "</code></td><td>" << g.count() << "</td><td>" << esc(g.headline()) << "</td><td>"
        << esc(s.reason) << "</td><td>" << esc(s.expires) << "</td><td>" << esc(s.file) << " exceptions["
        << s.entry << "]</td></tr>\n";
    }
    o << "</table>\n";
  }
  o << "<p><small>kernodeck " << kVersion << ", kernodeck.report/v1</small></p>\n</body></html>\n";
  return o.str();
}

}  // namespace kernodeck::report
