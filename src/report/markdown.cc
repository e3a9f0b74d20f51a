// Markdown for a CI job summary ($GITHUB_STEP_SUMMARY) or a pull-request / merge-request comment:
// what a reviewer reads first (verdict, subject, counts), then the findings grouped as the text
// report groups them, then those an exception suppressed. A `diff` report gets the layout of an
// image bump's review. Every text from the report is escaped (no markup, no @mention, no HTML
// from an image's metadata), and the page is cut to whole lines under the size GitHub accepts.
#include <map>
#include <sstream>

#include "kernodeck/report/formats.h"
#include "kernodeck/report/group.h"
#include "kernodeck/version.h"

namespace kernodeck::report {

namespace {

// Text as Markdown that renders as itself: one line, markup characters escaped, HTML's < > and &
// as entities.
std::string md(const std::string& s, size_t max = 400) {
  std::string out;
  size_t n = 0;
  for (char c : s) {
    // Cut before a character's first byte, never inside it.
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80 && ++n > max) {
      out += "…";
      break;
    }
    switch (c) {
      case '\n':
      case '\r':
      case '\t': out += ' '; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\\':
      case '`':
      case '*':
      case '_':
      case '{':
      case '}':
      case '[':
      case ']':
      case '(':
      case ')':
      case '#':
      case '+':
      case '-':
      case '!':
      case '|':
      case '~':
      case '@':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

// A code span: backticks cannot be escaped inside one, so they are dropped; in a table cell a
// pipe is escaped (GFM reads `\|` in a code span in a table as a pipe). At most 200 characters.
std::string code(const std::string& s, bool inTable = false) {
  std::string out;
  size_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80 && ++n > 200) break;
    if (c == '`' || c == '\n' || c == '\r') continue;
    if (c == '|' && inTable) out += '\\';
    out += c;
  }
  return "`" + (out.empty() ? std::string(" ") : out) + "`";
}

const char* badge(const std::string& verdict) {
  return verdict == "pass" ? "✅ PASS" : verdict == "fail" ? "❌ FAIL" : "⚠️ INCOMPLETE";
}

// The page as lines: `head` always shown, `body` cut to fit.
struct Page {
  std::vector<std::string> head, body;
  std::string str(size_t maxChars) const {
    std::string out;
    for (const auto& l : head) out += l + "\n";
    const std::string footer = "\n<sub>kernodeck " + std::string(kVersion) + "</sub>\n";
    // Room for the line that says what was left out.
    const size_t reserve = footer.size() + 200;
    size_t i = 0;
    for (; i < body.size(); ++i) {
      if (out.size() + body[i].size() + 1 + reserve > maxChars) break;
      out += body[i] + "\n";
    }
    if (i < body.size()) {
      size_t items = 0;
      for (size_t k = i; k < body.size(); ++k)
        if (body[k].starts_with("- ") || body[k].starts_with("| ")) ++items;
      out += "\n**Shortened:** " + std::to_string(body.size() - i) + " more lines (" + std::to_string(items) +
             " entries) left out to stay under " + std::to_string(maxChars) +
             " characters; every finding: `--format json` or `--format html`.\n";
    }
    out += footer;
    return out;
  }
};

void countsTable(Page& p, const Report& r) {
  std::map<Severity, size_t> live, waived;
  for (const auto& f : r.findings()) (f.suppressed() ? waived : live)[f.severity]++;
  bool anyWaived = !waived.empty();
  p.head.push_back("");
  p.head.push_back(anyWaived ? "| severity | findings | suppressed |" : "| severity | findings |");
  p.head.push_back(anyWaived ? "|---|---:|---:|" : "|---|---:|");
  for (Severity s : {Severity::Error, Severity::Warning, Severity::Info})
    p.head.push_back(std::string("| ") + toString(s) + " | " + std::to_string(live[s]) +
                     (anyWaived ? " | " + std::to_string(waived[s]) : "") + " |");
}

void findingLines(Page& p, const std::vector<FindingGroup>& groups) {
  for (Severity sev : {Severity::Error, Severity::Warning, Severity::Info}) {
    size_t n = 0;
    for (const auto& g : groups)
      if (g.severity == sev) n += g.count();
    if (!n) continue;
    p.body.push_back("");
    p.body.push_back(std::string("### ") + (sev == Severity::Error ? "Errors" : sev == Severity::Warning ? "Warnings" : "Info") +
                     " (" + std::to_string(n) + ")");
    p.body.push_back("");
    for (const auto& g : groups) {
      if (g.severity != sev) continue;
      std::string line = "- " + code(g.code) + " " + md(g.headline());
      if (g.count() == 1) {
        std::string where = g.members.front()->evidenceOf("path");
        if (!where.empty()) line += " (" + code(where) + ")";
      }
      p.body.push_back(line);
    }
  }
}

void suppressedLines(Page& p, const std::vector<FindingGroup>& waived) {
  if (waived.empty()) return;
  size_t n = 0;
  for (const auto& g : waived) n += g.count();
  p.body.push_back("");
  p.body.push_back("### Suppressed by exceptions (" + std::to_string(n) + ")");
  p.body.push_back("");
  p.body.push_back("| severity | finding | reason | expires | entry |");
  p.body.push_back("|---|---|---|---|---|");
  for (const auto& g : waived) {
    const Suppression& s = *g.suppression;
    p.body.push_back("| " + std::string(toString(g.severity)) + " | " + code(g.code, true) + " " + md(g.headline(), 200) +
                     " | " + md(s.reason, 300) + " | " + md(s.expires) + " | " + md(s.file) + " exceptions\\[" +
                     std::to_string(s.entry) + "\\] |");
  }
}

std::string auditMarkdown(const Report& r, int failOn, size_t maxChars) {
  Page p;
  std::string verdict = r.verdict(failOn);
  std::string threshold = failOn < 0 ? "none" : toString(static_cast<Severity>(failOn));
  p.head.push_back("## kernodeck " + md(r.tool()) + ": " + badge(verdict));
  p.head.push_back("");
  std::string ref = stringAt(r.subject(), "reference"), digest = stringAt(r.subject(), "manifest_digest");
  if (!ref.empty()) p.head.push_back("**Image:** " + code(ref) + "  ");
  if (!digest.empty()) p.head.push_back("**Digest:** " + code(digest) + "  ");
  p.head.push_back("**Verdict:** " + verdict + " (`--fail-on " + threshold + "`)" +
                   (r.failed() ? ": " + md(r.firstError()) : ""));
  countsTable(p, r);
  std::vector<FindingGroup> groups, waived;
  for (auto& g : groupFindings(r.findings())) (g.suppression ? waived : groups).push_back(std::move(g));
  if (groups.empty() && waived.empty()) p.body.push_back("\nNo findings.");
  findingLines(p, groups);
  suppressedLines(p, waived);
  return p.str(maxChars);
}

// A diff: the findings of record::diffRecords, by what a reviewer asks.
std::string diffMarkdown(const Report& r, int failOn, size_t maxChars) {
  Page p;
  std::string verdict = r.verdict(failOn);
  p.head.push_back("## kernodeck diff: " + std::string(badge(verdict)));
  p.head.push_back("");
  std::string ref = stringAt(r.subject(), "reference");
  if (!ref.empty()) p.head.push_back("**Compared:** " + code(ref) + "  ");
  const nlohmann::json& d = r.sections().contains("diff") ? r.sections()["diff"] : nlohmann::json::object();
  auto n = [&](const char* k) {
    return d.is_object() && d.contains(k) && d[k].is_number() ? std::to_string(d[k].get<long long>()) : "0";
  };
  p.head.push_back("**Packages:** " + n("packages_added") + " added, " + n("packages_removed") + " removed, " +
                   n("packages_changed") + " changed" +
                   (d.contains("findings_new") ? "; **findings:** " + n("findings_new") + " new, " +
                                                     n("findings_gone") + " fixed"
                                               : ""));
  if (r.failed()) p.head.push_back("\n**Incomplete:** " + md(r.firstError()));
  std::vector<const Finding*> os, py, torch, fresh, gone, excAdded, excExpired, other;
  for (const auto& f : r.findings()) {
    if (f.code.starts_with("diff.package.")) {
      std::string env = f.evidenceOf("environment");
      (env == "dpkg" ? os : py).push_back(&f);
    } else if (f.code == "diff.torch.changed") {
      torch.push_back(&f);
    } else if (f.code == "diff.finding.new") {
      fresh.push_back(&f);
    } else if (f.code == "diff.finding.gone") {
      gone.push_back(&f);
    } else if (f.code == "diff.exception.added") {
      excAdded.push_back(&f);
    } else if (f.code == "diff.exception.expired") {
      excExpired.push_back(&f);
    } else {
      other.push_back(&f);
    }
  }
  auto packages = [&](const char* title, const std::vector<const Finding*>& list, bool withEnv) {
    if (list.empty()) return;
    p.body.push_back("");
    p.body.push_back(std::string("### ") + title + " (" + std::to_string(list.size()) + ")");
    p.body.push_back("");
    p.body.push_back(withEnv ? "| | package | environment | old | new |" : "| | package | old | new |");
    p.body.push_back(withEnv ? "|---|---|---|---|---|" : "|---|---|---|---|");
    for (const char* what : {"added", "removed", "changed"})
      for (const Finding* f : list) {
        if (f->code != std::string("diff.package.") + what) continue;
        std::string a = f->evidenceOf("version_a"), b = f->evidenceOf("version_b");
        p.body.push_back("| " + std::string(what) + " | " + code(f->evidenceOf("package"), true) + " | " +
                         (withEnv ? md(f->evidenceOf("environment")) + " | " : "") + (a.empty() ? "—" : md(a)) +
                         " | " + (b.empty() ? "—" : md(b)) + " |");
      }
  };
  auto bullets = [&](const std::string& title, const std::vector<const Finding*>& list) {
    if (list.empty()) return;
    p.body.push_back("");
    p.body.push_back("### " + title + " (" + std::to_string(list.size()) + ")");
    p.body.push_back("");
    for (const Finding* f : list) {
      std::string inner = f->evidenceOf("finding");
      p.body.push_back("- " + std::string(toString(f->severity)) + " " + (inner.empty() ? "" : code(inner) + " ") +
                       md(f->message));
    }
  };
  bullets("torch / CUDA build", torch);
  packages("Python packages", py, true);
  packages("OS packages", os, false);
  bullets("New findings", fresh);
  bullets("Fixed findings", gone);
  bullets("Exceptions added", excAdded);
  bullets("Exceptions expired", excExpired);
  bullets("Other differences", other);
  if (r.findings().empty()) p.body.push_back("\nNo differences.");
  return p.str(maxChars);
}

}  // namespace

std::string toMarkdown(const Report& r, int failOn, size_t maxChars) {
  return r.tool() == "diff" ? diffMarkdown(r, failOn, maxChars) : auditMarkdown(r, failOn, maxChars);
}

}  // namespace kernodeck::report
