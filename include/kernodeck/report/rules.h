// What each finding code means, for the formats that describe their rules (SARIF's
// reportingDescriptor: description, help, security severity). The findings tables of docs/findings.md
// are the one place a code's meaning is written: the build compiles docs/findings.md into the binary
// (readme_text.cc, generated at configure time) and these functions read its tables, so a code
// documented there has its rule text everywhere without a second copy.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kernodeck::report {

// One code of a findings table ("| code | severity | meaning |").
struct DocumentedCode {
  std::string code;
  std::string severity;  // the severity cell as written: "error", "warning (info when ...)"
  std::string meaning;   // the meaning cell (Markdown)
  std::string section;   // the heading the table sits under
};

// Every code of every findings table in `markdown`. A cell may name several codes:
// "`a.b.c` / `.d`" is a.b.c and a.b.d (a leading dot replaces the last part of the code
// before it), "`a.b`, `c.d`" is a.b and c.d. Rows of other tables are ignored.
std::vector<DocumentedCode> parseFindingTables(std::string_view markdown);

// docs/findings.md's entry for `code`, or nullptr when no findings table there lists it.
const DocumentedCode* documentedCode(std::string_view code);

// The fixed texts of one rule (one finding code), the same for every finding of the code.
struct RuleText {
  std::string name;          // PascalCase of the code: "OsPackageModified"
  std::string shortText;     // the meaning's first clause, a sentence
  std::string fullText;      // the meaning, plain text, a sentence
  std::string helpText;      // meaning, documented severity, what to do, where it is documented
  std::string helpMarkdown;  // the same in Markdown
  std::string defaultLevel;  // SARIF level of the documented severity: "error", "warning", "note"
  // GitHub code scanning's security-severity (0.1-10) when the code is a security finding
  // (tampering, an unverifiable blob, a credential); 0 for the others.
  double securitySeverity = 0;
};

// The rule texts of `code`: from docs/findings.md when it documents the code, else generic texts
// naming the code (still fixed per code).
RuleText ruleText(std::string_view code);

}  // namespace kernodeck::report
