// The rule texts of finding codes, read from the findings tables of docs/findings.md (rules.h). The
// findings text is compiled in (readme_text.cc); what is written here is only what docs/findings.md
// does not say: which codes are security findings, and what to do per area of codes.
#include "kernodeck/report/rules.h"

#include <cctype>
#include <map>

#include "kernodeck/util/strings.h"

namespace kernodeck::report {

extern const char kReadmeMarkdown[];  // readme_text.cc, generated from docs/findings.md

namespace {

// GitHub's scale: 9.0 and above critical, 7.0 high, 4.0 medium, below low.
struct Security {
  const char* code;
  double score;
};
constexpr Security kSecurity[] = {
    {"secret.leak", 9.0},
    {"image.secret.env", 9.0},
    {"layer.path.unsafe", 8.0},
    {"blob.digest.mismatch", 8.0},
    {"probe.report.unverified", 8.0},
    {"os.package.modified", 7.5},
    {"conda.package.modified", 7.5},
    {"python.record.modified", 7.5},
    {"python.pin.hash_mismatch", 7.0},
    {"probe.report.missing", 7.0},
    {"probe.report.failed", 7.0},
    {"layer.path.suspicious", 6.5},
    {"blob.digest.unverifiable", 6.0},
    {"blob.missing", 6.0},
    {"dossier.modified", 6.0},
    {"manifest.schema.invalid", 5.0},
    {"index.schema.invalid", 5.0},
    {"config.schema.invalid", 5.0},
    {"layout.schema.invalid", 5.0},
    {"python.path.leak", 3.0},
};

// What to do, per area of codes (the longest matching prefix wins).
struct Remedy {
  const char* prefix;
  const char* text;
};
constexpr Remedy kRemedies[] = {
    {"blob.", "Do not run the image: rebuild it from a trusted build and push it again, then audit the new digest."},
    {"layer.", "Rebuild the image with a standard build tool; a layer no build tool writes was made by hand."},
    {"manifest.", "Rebuild and push the image with a tool that writes valid OCI documents."},
    {"index.", "Rebuild and push the image with a tool that writes valid OCI documents."},
    {"config.", "Rebuild and push the image with a tool that writes valid OCI documents."},
    {"layout.", "Write the layout again with skopeo or umoci."},
    {"reference.transport", "Name the transport (oci:, dir:, rootfs:, docker://) explicitly."},
    {"image.tag", "Name the image by its digest (IMAGE@sha256:...) where it is deployed."},
    {"image.secret",
     "Remove the variable from the image configuration, rotate the credential, pass secrets at run time."},
    {"image.platform", "Audit the platform the image is deployed on (--platform), or build the image for it."},
    {"os.package.",
     "Reinstall the package (or rebuild from the distribution's packages); the result's layer changed the file."},
    {"conda.", "Install the packages with conda into the environment, or recreate it from its environment file."},
    {"python.record",
     "Reinstall the distribution in the image build; the result's layer is the one that changed the file."},
    {"python.requirement", "Install a consistent set of packages for the image's Python (pip check passes)."},
    {"python.wheel", "Install wheels built for the image's Python and architecture."},
    {"python.distribution", "Uninstall the duplicate copy so Python loads one version."},
    {"python.metadata", "Reinstall the distribution so its metadata is readable."},
    {"python.pin", "Make the requirement files and the installed packages agree, then rebuild the image."},
    {"gpu.fatbin", "Rebuild the library with the toolkit's own nvcc/fatbinary; a fatbin the toolkit cannot read is not loaded."},
    {"python.torch", "Install torch from the index that serves its CUDA build, with matching NVIDIA wheels."},
    {"python.path", "Install from an index or an archive in the build context, not from a build-machine path."},
    {"secret.", "Remove the credential from the image, rotate it, and pass secrets at build or run time only."},
    {"probe.report", "Attach a passing report signed by the CI key (kernodeck audit --attach) before the image runs."},
    {"probe.", "Compare the container with the node (kernodeck host) and the image's expectation."},
    {"hook.", "Compare the container with the node (kernodeck host) and the image's expectation (hooks/README.md)."},
    {"host.", "Fix the node's device setup (kernodeck host shows what is missing)."},
    {"reference.", "Record the inputs by digest or commit (docs/record.md)."},
    {"sample.", "Compare the outputs with the reference's (docs/record.md)."},
    {"resume.", "Save the state the resume needs in the checkpoint (docs/record.md)."},
    {"dossier.", "Build the dossier again from the reference (docs/record.md)."},
    {"replay.", "Replay with the inputs the reference names (docs/record.md)."},
    {"diff.", "Review the difference between the two records."},
};

std::string plain(std::string_view markdown) {
  std::string out;
  for (size_t i = 0; i < markdown.size(); ++i) {
    if (markdown[i] == '`') continue;
    if (markdown[i] == '\\' && i + 1 < markdown.size() && markdown[i + 1] == '|') continue;
    out += markdown[i];
  }
  return out;
}

std::string sentence(std::string s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '.')) s.pop_back();
  if (!s.empty()) s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s + ".";
}

// The cells of a table row "| a | b \| c | d |", escaped pipes kept in their cell.
std::vector<std::string> cells(std::string_view row) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 1; i < row.size(); ++i) {
    if (row[i] == '|' && row[i - 1] != '\\') {
      out.emplace_back(util::trim(cur));
      cur.clear();
    } else {
      cur += row[i];
    }
  }
  return out;
}

// The codes a code cell names, suffix forms expanded.
std::vector<std::string> codesOf(std::string_view cell) {
  std::vector<std::string> out;
  std::string base;
  size_t pos = 0;
  while ((pos = cell.find('`', pos)) != std::string_view::npos) {
    size_t end = cell.find('`', pos + 1);
    if (end == std::string_view::npos) break;
    std::string c(cell.substr(pos + 1, end - pos - 1));
    pos = end + 1;
    if (c.size() > 1 && c[0] == '.' && base.rfind('.') != std::string::npos) {
      out.push_back(base.substr(0, base.rfind('.')) + c);
    } else if (c.find('.') != std::string::npos && c.find(' ') == std::string::npos) {
      base = c;
      out.push_back(c);
    }
  }
  return out;
}

const std::vector<DocumentedCode>& readmeCodes() {
  static const std::vector<DocumentedCode> codes = parseFindingTables(kReadmeMarkdown);
  return codes;
}

std::string pascal(std::string_view code) {
  std::string out;
  bool up = true;
  for (char c : code) {
    if (c == '.' || c == '_') {
      up = true;
    } else {
      out += up ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      up = false;
    }
  }
  return out;
}

}  // namespace

std::vector<DocumentedCode> parseFindingTables(std::string_view markdown) {
  std::vector<DocumentedCode> out;
  std::string section;
  bool inTable = false;
  for (std::string_view line : util::splitView(markdown, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.starts_with("#")) {
      size_t text = line.find_first_not_of("# ");
      section = text == std::string_view::npos ? "" : std::string(line.substr(text));
      continue;
    }
    if (!line.starts_with("|")) {
      inTable = false;
      continue;
    }
    auto row = cells(line);
    if (row.size() == 3 && row[0] == "code" && row[1] == "severity" && row[2] == "meaning") {
      inTable = true;
      continue;
    }
    if (!inTable || row.size() != 3 || row[0].starts_with("---")) continue;
    for (auto& code : codesOf(row[0])) out.push_back({code, row[1], row[2], section});
  }
  return out;
}

const DocumentedCode* documentedCode(std::string_view code) {
  for (const auto& d : readmeCodes())
    if (d.code == code) return &d;
  return nullptr;
}

RuleText ruleText(std::string_view code) {
  RuleText r;
  r.name = pascal(code);
  for (const auto& s : kSecurity)
    if (code == s.code) r.securitySeverity = s.score;
  std::string remedy = "Read the result's message and evidence.";
  size_t best = 0;
  for (const auto& m : kRemedies) {
    std::string_view p = m.prefix;
    if (code.starts_with(p) && p.size() > best) remedy = m.text, best = p.size();
  }
  const DocumentedCode* d = documentedCode(code);
  if (!d) {
    r.shortText = "Kernodeck finding " + std::string(code) + ".";
    r.fullText = r.shortText + " This code is not described in Kernodeck's findings tables (docs/findings.md).";
    r.helpText = r.fullText + " " + remedy;
    r.helpMarkdown = "`" + std::string(code) + "`: not described in Kernodeck's findings tables (docs/findings.md).\n\n" + remedy;
    r.defaultLevel = "warning";
    return r;
  }
  std::string meaning = plain(d->meaning);
  r.fullText = sentence(meaning);
  size_t cut = meaning.size();
  for (const char* stop : {": ", "; ", " (", ", as "})
    if (size_t at = meaning.find(stop); at != std::string::npos && at >= 12) cut = std::min(cut, at);
  r.shortText = sentence(meaning.substr(0, cut));
  std::string severity = plain(d->severity);
  std::string first = util::toLower(severity.substr(0, severity.find_first_of(" /(")));
  r.defaultLevel = first == "error" ? "error" : first == "info" ? "note" : "warning";
  r.helpText = r.fullText + " Severity: " + severity + ". What to do: " + remedy +
               " Documented in Kernodeck's docs/findings.md, section \"" + d->section + "\".";
  r.helpMarkdown = "**`" + std::string(code) + "`** (" + d->severity + "): " + d->meaning + "\n\n**What to do:** " +
                   remedy + "\n\nDocumented in Kernodeck's docs/findings.md, section *" + d->section + "*.";
  return r;
}

}  // namespace kernodeck::report
