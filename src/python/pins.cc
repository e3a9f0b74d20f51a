#include "kernodeck/python/pins.h"

#include <set>

#include "kernodeck/util/strings.h"

namespace kernodeck::python {

namespace {

// Each ${NAME} (NAME of [A-Z0-9_]+) replaced by its value in `env`, else kept; scanned by hand
// (the text is an image's: std::regex recursed once per character).
std::string expandVars(const std::string& s, const std::map<std::string, std::string>& env) {
  auto nameChar = [](char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; };
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    size_t at = s.find("${", i);
    if (at == std::string::npos) break;
    size_t e = at + 2;
    while (e < s.size() && nameChar(s[e])) ++e;
    if (e == at + 2 || e >= s.size() || s[e] != '}') {
      out.append(s, i, at + 1 - i);  // not a variable: go on after its '$'
      i = at + 1;
      continue;
    }
    out.append(s, i, at - i);
    auto v = env.find(s.substr(at + 2, e - at - 2));
    out += v != env.end() ? v->second : s.substr(at, e + 1 - at);
    i = e + 1;
  }
  return out.append(s, i, std::string::npos);
}

std::string dirOf(const std::string& p) {
  size_t s = p.rfind('/');
  return s == std::string::npos ? "" : p.substr(0, s);
}

// Splits "a b  'c'" into words (no shell quoting beyond whitespace).
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

void load(const std::string& path, bool constraint, int depth, RequirementsFile& out, std::set<std::string>& stack,
          const std::function<std::optional<std::string>(const std::string&)>& read,
          const std::map<std::string, std::string>& env) {
  if (depth > 16 || stack.count(path)) {
    out.errors.push_back("include cycle or nesting too deep at " + path);
    return;
  }
  auto text = read(path);
  if (!text) {
    out.errors.push_back("cannot read requirements file " + path);
    return;
  }
  stack.insert(path);
  // Join continuation lines, keeping the number of the first.
  std::vector<std::pair<int, std::string>> logical;
  int n = 0;
  std::string acc;
  int start = 0;
  for (const auto& raw : util::split(*text, '\n')) {
    ++n;
    std::string line = raw;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (acc.empty()) start = n;
    if (!line.empty() && line.back() == '\\') {
      acc += line.substr(0, line.size() - 1) + " ";
      continue;
    }
    acc += line;
    logical.emplace_back(start, acc);
    acc.clear();
  }
  if (!acc.empty()) logical.emplace_back(start, acc);
  for (auto& [lineNo, rawLine] : logical) {
    std::string line = rawLine;
    // Comments: '#' at the start or after whitespace.
    for (size_t i = 0; i < line.size(); ++i)
      if (line[i] == '#' && (i == 0 || std::isspace(static_cast<unsigned char>(line[i - 1])))) {
        line = line.substr(0, i);
        break;
      }
    line = expandVars(std::string(util::trim(line)), env);
    if (line.empty()) continue;
    auto w = words(line);
    auto optValue = [&](size_t& i, const std::string& name) -> std::optional<std::string> {
      const std::string& t = w[i];
      if (t == name && i + 1 < w.size()) return w[++i];
      if (t.rfind(name + "=", 0) == 0) return t.substr(name.size() + 1);
      return std::nullopt;
    };
    if (w[0].rfind("-", 0) == 0) {
      auto either = [&](size_t& i, const char* a, const char* b) {
        auto v = optValue(i, a);
        return v ? v : optValue(i, b);
      };
      auto rel = [&](const std::string& v) {
        return v.front() == '/' || dirOf(path).empty() ? v : dirOf(path) + "/" + v;
      };
      for (size_t i = 0; i < w.size(); ++i) {
        if (auto r = either(i, "-r", "--requirement"))
          load(rel(*r), constraint, depth + 1, out, stack, read, env);
        else if (auto c = either(i, "-c", "--constraint"))
          load(rel(*c), true, depth + 1, out, stack, read, env);
        else if (auto u = either(i, "-i", "--index-url"))
          out.indexUrls.push_back(*u);
        else if (auto x = optValue(i, "--extra-index-url"))
          out.indexUrls.push_back(*x);
      }
      continue;
    }
    // A requirement with per-line options (--hash).
    PinLine pl;
    pl.file = path;
    pl.line = lineNo;
    pl.constraint = constraint;
    std::string reqText;
    for (size_t i = 0; i < w.size(); ++i) {
      if (auto h = optValue(i, "--hash")) {
        pl.hashes.push_back(util::toLower(*h));
        out.usesHashes = true;
      } else if (w[i].rfind("--", 0) == 0) {
        if (w[i].find('=') == std::string::npos && i + 1 < w.size() && w[i + 1].rfind("-", 0) != 0) ++i;
      } else {
        reqText += (reqText.empty() ? "" : " ") + w[i];
      }
    }
    pl.text = reqText;
    auto r = Requirement::parse(reqText);
    if (r.ok())
      pl.req = *r;
    else
      pl.error = r.error().message;
    out.lines.push_back(std::move(pl));
  }
  stack.erase(path);
}

}  // namespace

RequirementsFile loadRequirements(const std::string& path,
                                  const std::function<std::optional<std::string>(const std::string&)>& read,
                                  const std::map<std::string, std::string>& env) {
  RequirementsFile out;
  std::set<std::string> stack;
  load(path, false, 0, out, stack, read, env);
  return out;
}

bool isPinned(const Requirement& r) {
  if (r.specifier.specs().size() != 1) return false;
  const auto& s = r.specifier.specs()[0];
  if (s.op() == "===") return true;
  return s.op() == "==" && s.version().find('*') == std::string::npos;
}

}  // namespace kernodeck::python
