// scanRequirements: pip's requirements-file grammar (pip/_internal/req/req_file.py, pip 23),
// read to refuse rather than to install. Each logical line is split as pip splits it: the
// words before the first one that starts with '-' are the requirement, the rest are options
// (shlex-split, parsed by optparse, which takes any unambiguous prefix of a long option).
#include "kernodeck/record/requirements_file.h"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <set>

#include "kernodeck/util/strings.h"

namespace kernodeck::record {

namespace {

// Every option pip's requirements-file parser knows (line options and per-requirement ones):
// optparse resolves an abbreviation against all of them.
struct PipOption {
  const char* longName;
  char shortName;  // 0: none
  bool takesValue;
};
constexpr PipOption kOptions[] = {
    {"index-url", 'i', true},   {"extra-index-url", 0, true}, {"no-index", 0, false},       {"constraint", 'c', true},
    {"requirement", 'r', true}, {"editable", 'e', true},      {"find-links", 'f', true},    {"no-binary", 0, true},
    {"only-binary", 0, true},   {"prefer-binary", 0, false},  {"require-hashes", 0, false}, {"pre", 0, false},
    {"trusted-host", 0, true},  {"use-feature", 0, true},     {"install-option", 0, true},  {"global-option", 0, true},
    {"hash", 0, true},          {"config-settings", 0, true},
};

// The long option `name` (without "--") stands for, as optparse resolves it: an exact name,
// else the one option it is a prefix of. nullptr when none or several.
const PipOption* longOption(const std::string& name, std::string& why) {
  const PipOption* found = nullptr;
  int n = 0;
  for (const auto& o : kOptions) {
    if (name == o.longName) return &o;
    if (std::string_view(o.longName).starts_with(name)) found = &o, ++n;
  }
  if (n != 1) why = n == 0 ? "pip knows no such option" : "an ambiguous abbreviation (pip rejects it)";
  return n == 1 ? found : nullptr;
}

// Words as Python's shlex.split gives them (quotes removed, backslash escapes outside single
// quotes); nullopt for an unterminated quote.
std::optional<std::vector<std::string>> shlexSplit(std::string_view s) {
  std::vector<std::string> words;
  std::string cur;
  bool inWord = false;
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (inWord) words.push_back(cur), cur.clear(), inWord = false;
    } else if (c == '\'' || c == '"') {
      inWord = true;
      size_t j = i + 1;
      for (; j < s.size() && s[j] != c; ++j) {
        if (c == '"' && s[j] == '\\' && j + 1 < s.size() && (s[j + 1] == '"' || s[j + 1] == '\\')) ++j;
        cur.push_back(s[j]);
      }
      if (j >= s.size()) return std::nullopt;
      i = j;
    } else if (c == '\\' && i + 1 < s.size()) {
      inWord = true;
      cur.push_back(s[++i]);
    } else {
      inWord = true;
      cur.push_back(c);
    }
  }
  if (inWord) words.push_back(cur);
  return words;
}

bool lineEnd(char c) { return c == '\n' || c == '\r'; }

// `^[A-Za-z][A-Za-z0-9+.\-]*:.*` (the whole of v; `.` is no line end), scanned by hand: a
// requirement line is the dossier's text, of any length, and std::regex recursed per character.
bool hasScheme(const std::string& v) {
  if (v.empty() || !std::isalpha(static_cast<unsigned char>(v[0]))) return false;
  size_t i = 1;
  while (i < v.size() && (std::isalnum(static_cast<unsigned char>(v[i])) || v[i] == '+' || v[i] == '.' || v[i] == '-'))
    ++i;
  return i < v.size() && v[i] == ':' && std::none_of(v.begin() + i + 1, v.end(), lineEnd);
}

// pip's comment stripping, `(^|\s+)#.*$` replaced by nothing: the text before the first '#' that
// starts the line or follows whitespace (with that whitespace), when no line end follows it.
std::string stripComment(const std::string& l) {
  auto restOk = [&](size_t hash) { return std::none_of(l.begin() + hash + 1, l.end(), lineEnd); };
  if (!l.empty() && l[0] == '#' && restOk(0)) return "";
  for (size_t p = 0; p < l.size();) {
    if (!util::isSpace(l[p])) {
      ++p;
      continue;
    }
    size_t q = p;
    while (q < l.size() && util::isSpace(l[q])) ++q;
    if (q < l.size() && l[q] == '#' && restOk(q)) return l.substr(0, p);
    p = q;
  }
  return l;
}

// A line whose first non-space character is '#' (`^\s*#`).
bool isCommentLine(const std::string& l) {
  size_t i = 0;
  while (i < l.size() && util::isSpace(l[i])) ++i;
  return i < l.size() && l[i] == '#';
}

// What pep508's regex may read: longer is no requirement pip would take either.
constexpr size_t kMaxRequirement = 4096;

// pip takes a requirement ending like an archive for a local file, whatever else it looks like.
bool looksLikeArchive(const std::string& name) {
  std::string l = util::toLower(name);
  for (const char* ext : {".whl", ".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tbz", ".tar.xz", ".txz", ".tlz",
                          ".tar.lz", ".tar.lzma"})
    if (l.ends_with(ext)) return true;
  return false;
}

struct Scanner {
  const RequirementsScanOptions& o;
  std::vector<ScannedRequirement> out;
  std::set<std::string> open;  // the files being read: an include cycle is refused

  Status refuse(const std::string& file, int line, const std::string& text, const std::string& why) {
    return Error::Unsafe(file + " line " + std::to_string(line) + ": `" + util::printable(text, 160) + "`: " + why);
  }

  // The file an include names, relative to the replay folder (pip joins it to the including
  // file's folder); "" with `why` set when it is a URL or leaves the folder.
  std::string includePath(const std::string& from, const std::string& value, std::string& why) {
    if (hasScheme(value)) {
      why = "includes a URL: a replay installs only what the dossier carries";
      return "";
    }
    if (value.empty() || value[0] == '/' || value[0] == '~') {
      why = "includes a file outside the replay folder";
      return "";
    }
    std::filesystem::path p = (std::filesystem::path(from).parent_path() / value).lexically_normal();
    std::string rel = p.generic_string();
    if (rel.empty() || rel == "." || rel.starts_with("../") || rel == ".." || rel[0] == '/') {
      why = "includes a file outside the replay folder";
      return "";
    }
    return rel;
  }

  Status option(const std::string& file, int line, const std::string& text, const PipOption& opt,
                const std::string& value, int depth) {
    std::string name = opt.longName;
    if (name == "index-url" || name == "extra-index-url" || name == "find-links" || name == "trusted-host")
      return refuse(file, line, text, "names a place to download from (--" + name + "): a replay installs offline");
    if (name == "editable") return refuse(file, line, text, "installs from a path or URL (--editable)");
    if (name == "install-option" || name == "global-option" || name == "config-settings")
      return refuse(file, line, text, "passes options to a build (--" + name + "): a replay installs wheels");
    if (name == "no-binary" && !o.allowSdist)
      return refuse(file, line, text, "asks for a build from source (--no-binary): pass --allow-sdist to allow it");
    if (name == "requirement" || name == "constraint") {
      std::string why, rel = includePath(file, value, why);
      if (rel.empty()) return refuse(file, line, text, why);
      return include(rel, depth + 1, file, line, text);
    }
    return {};
  }

  Status include(const std::string& rel, int depth, const std::string& from, int line, const std::string& text) {
    if (depth > 16 || open.count(rel))
      return refuse(from, line, text, "includes " + rel + " again (a cycle, or deeper than 16 files)");
    auto content = o.read(rel);
    if (!content.ok()) return refuse(from, line, text, "includes " + rel + ", " + content.error().message);
    if (!*content) return {};  // not readable yet: checked when --run reads it
    return scan(rel, **content, depth);
  }

  // One logical line: the requirement words, then the options.
  Status logical(const std::string& file, int line, const std::string& text, int depth) {
    if (text.find("${") != std::string::npos)
      return refuse(file, line, text, "holds ${...}, which pip replaces with an environment variable");
    // pip's break_args_options: the words (split on spaces) before the first that starts with
    // '-' are the requirement; the rest, shlex-split, are options.
    std::vector<std::string> tokens = util::split(text, ' ');
    size_t k = 0;
    while (k < tokens.size() && !tokens[k].starts_with("-")) ++k;
    std::string req(util::trim(util::join(std::vector<std::string>(tokens.begin(), tokens.begin() + k), " ")));
    auto words = shlexSplit(util::join(std::vector<std::string>(tokens.begin() + k, tokens.end()), " "));
    if (!words) return Error::Invalid(file + " line " + std::to_string(line) + ": an unterminated quote");
    size_t first = 0;
    if (!req.empty()) {
      std::string why;
      std::string name = checkRequirement(req, why);
      if (name.empty()) return refuse(file, line, text, why);
      out.push_back({file, line, name, text, req});
    }
    for (size_t i = first; i < words->size(); ++i) {
      const std::string& w = (*words)[i];
      const PipOption* opt = nullptr;
      std::string value, why;
      bool attached = false;
      if (w.starts_with("--")) {
        std::string name = w.substr(2);
        if (auto eq = name.find('='); eq != std::string::npos)
          value = name.substr(eq + 1), name.resize(eq), attached = true;
        opt = longOption(name, why);
        if (!opt) return refuse(file, line, text, "--" + name + ": " + why);
      } else if (w.size() >= 2 && w[0] == '-') {
        for (const auto& k : kOptions)
          if (k.shortName == w[1]) opt = &k;
        if (!opt) return refuse(file, line, text, w.substr(0, 2) + ": pip knows no such option");
        if (w.size() > 2) value = w.substr(2), attached = true;  // -fURL
        if (!opt->takesValue && attached)
          return refuse(file, line, text, w + ": combined short options are not accepted here");
      } else {
        return refuse(file, line, text, "'" + w + "' after an option: pip would take it as a value");
      }
      if (opt->takesValue && !attached) {
        if (i + 1 >= words->size())
          return Error::Invalid(file + " line " + std::to_string(line) + ": " + w + " needs a value");
        value = (*words)[++i];
      }
      KDK_TRY_STATUS(option(file, line, text, *opt, value, depth));
    }
    return {};
  }

  // A requirement as a name, extras, version specifiers and a marker: anything else (a URL,
  // `name @ URL`, a path, an archive) names a link. Returns the name, or "" with `why`.
  static std::string checkRequirement(const std::string& req, std::string& why) {
    static const std::regex pep508(
        R"(^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*(\[\s*[A-Za-z0-9._-]+(\s*,\s*[A-Za-z0-9._-]+)*\s*\])?\s*)"
        R"((\(?\s*(===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+(\s*,\s*(===|==|!=|<=|>=|~=|<|>)\s*[A-Za-z0-9.*+!_-]+)*\s*\)?)?)"
        R"(\s*(;.*)?$)");
    std::string head = req.substr(0, req.find(';'));
    std::smatch m;
    if (head.find("://") != std::string::npos || head.find('@') != std::string::npos || hasScheme(head))
      why = "names a URL: a replay installs only what the dossier carries";
    else if (head.find('/') != std::string::npos || head.starts_with("."))
      why = "names a path: a replay installs only what the dossier carries";
    else if (req.size() > kMaxRequirement || !std::regex_match(req, m, pep508))
      why = "is not a package name with version specifiers";
    else if (looksLikeArchive(m[1].str()))
      why = "names an archive file, which pip installs from the path";
    else
      return m[1].str();
    return "";
  }

  Status scan(const std::string& file, const std::string& text, int depth) {
    open.insert(file);
    // pip's join_lines: a line ending in a backslash continues on the next; a comment line ends it.
    std::vector<std::string> lines = util::split(text, '\n');
    std::string logicalLine;
    int start = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string l = lines[i];
      if (!l.empty() && l.back() == '\r') l.pop_back();
      if (logicalLine.empty()) start = static_cast<int>(i) + 1;
      bool isComment = isCommentLine(l);
      if (!l.empty() && l.back() == '\\' && !isComment) {
        logicalLine += l.substr(0, l.size() - 1);
        if (i + 1 < lines.size()) continue;
      } else {
        logicalLine += isComment ? " " + l : l;
      }
      std::string body(util::trim(stripComment(logicalLine)));
      logicalLine.clear();
      if (!body.empty()) KDK_TRY_STATUS(logical(file, start, body, depth));
    }
    open.erase(file);
    return {};
  }
};

}  // namespace

Result<std::vector<ScannedRequirement>> scanRequirements(const std::string& file, const std::string& text,
                                                         const RequirementsScanOptions& o) {
  Scanner s{o, {}, {}};
  KDK_TRY_STATUS(s.scan(file, text, 0));
  return std::move(s.out);
}

}  // namespace kernodeck::record
