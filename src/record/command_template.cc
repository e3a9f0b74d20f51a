// See command_template.h: a shell-words split without any expansion, then placeholders.
#include "kernodeck/record/command_template.h"

#include <algorithm>

#include "kernodeck/util/strings.h"

namespace kernodeck::record {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\n'; }

// "'|' at character 12"
std::string at(char c, size_t i) {
  return "'" + util::printable(std::string(1, c)) + "' at character " + std::to_string(i + 1);
}

Error refused(char c, size_t i, const std::string& why) {
  return Error::Invalid("the command has " + at(c, i) + ": " + why +
                        "; --cmd runs no shell (quote it to pass it as is)");
}

}  // namespace

Result<std::vector<std::string>> splitCommandWords(std::string_view s) {
  std::vector<std::string> words;
  std::string word;
  bool inWord = false;  // a word is open (even an empty one, from '' or "")
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '\0') return Error::Invalid("the command holds a NUL byte at character " + std::to_string(i + 1));
    if (blank(c)) {
      if (inWord) words.push_back(std::move(word)), word.clear(), inWord = false;
      continue;
    }
    if (c == '\'') {
      size_t end = s.find('\'', i + 1);
      if (end == std::string_view::npos)
        return Error::Invalid("the command has an unterminated ' (opened at character " + std::to_string(i + 1) + ")");
      if (s.substr(i + 1, end - i - 1).find('\0') != std::string_view::npos)
        return Error::Invalid("the command holds a NUL byte");
      word.append(s.substr(i + 1, end - i - 1));
      inWord = true;
      i = end;
      continue;
    }
    if (c == '"') {
      size_t open = i;
      for (++i;; ++i) {
        if (i >= s.size())
          return Error::Invalid("the command has an unterminated \" (opened at character " + std::to_string(open + 1) +
                                ")");
        char d = s[i];
        if (d == '"') break;
        if (d == '\0') return Error::Invalid("the command holds a NUL byte at character " + std::to_string(i + 1));
        if (d == '$' || d == '`') return refused(d, i, "a shell would expand it inside \"...\"");
        if (d == '\\' && i + 1 < s.size() && std::string_view("\"\\$`\n").find(s[i + 1]) != std::string_view::npos) {
          if (s[++i] != '\n') word.push_back(s[i]);
          continue;
        }
        word.push_back(d);
      }
      inWord = true;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= s.size()) return Error::Invalid("the command ends with a lone backslash");
      if (s[++i] == '\n') continue;  // line continuation
      if (s[i] == '\0') return Error::Invalid("the command holds a NUL byte at character " + std::to_string(i + 1));
      word.push_back(s[i]);
      inWord = true;
      continue;
    }
    if (std::string_view("|&;<>()").find(c) != std::string_view::npos)
      return refused(c, i, "a shell operator (pipe, list, redirection or subshell)");
    if (c == '$' || c == '`') return refused(c, i, "a shell would expand it");
    if (c == '*' || c == '?') return refused(c, i, "a shell would expand the glob");
    if (!inWord && (c == '~' || c == '#'))
      return refused(c, i, c == '~' ? "a shell would expand it to a home folder" : "a shell would start a comment");
    word.push_back(c);
    inWord = true;
  }
  if (inWord) words.push_back(std::move(word));
  if (words.empty()) return Error::Invalid("the command is empty");
  return words;
}

Result<CommandTemplate> CommandTemplate::fromWords(const std::vector<std::string>& words,
                                                   const std::vector<std::string>& names) {
  if (words.empty() || words[0].empty()) return Error::Invalid("the command is empty (no program to run)");
  auto known = [&] {
    std::vector<std::string> b;
    for (const auto& n : names) b.push_back("{" + n + "}");
    return util::join(b, ", ");
  };
  CommandTemplate t;
  for (size_t w = 0; w < words.size(); ++w) {
    const std::string& s = words[w];
    std::vector<Piece> pieces;
    auto literal = [&](std::string_view text) {
      if (pieces.empty() || pieces.back().placeholder) pieces.push_back({false, ""});
      pieces.back().text.append(text);
    };
    std::string where = "argument " + std::to_string(w + 1) + " '" + util::printable(s, 80) + "'";
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '{' && i + 1 < s.size() && s[i + 1] == '{') {
        literal("{");
        ++i;
      } else if (s[i] == '}' && i + 1 < s.size() && s[i + 1] == '}') {
        literal("}");
        ++i;
      } else if (s[i] == '}') {
        return Error::Invalid(where + " has a lone '}' (write }} for a literal brace)");
      } else if (s[i] == '{') {
        size_t end = s.find('}', i);
        if (end == std::string::npos)
          return Error::Invalid(where + " has an unclosed '{' (write {{ for a literal brace)");
        std::string name = s.substr(i + 1, end - i - 1);
        if (std::find(names.begin(), names.end(), name) == names.end())
          return Error::Invalid(where + " names an unknown placeholder {" + util::printable(name, 40) +
                                "} (known: " + known() + "; write {{ and }} for literal braces)");
        pieces.push_back({true, name});
        i = end;
      } else {
        literal(std::string_view(s).substr(i, 1));
      }
    }
    t.words_.push_back(std::move(pieces));
  }
  return t;
}

Result<CommandTemplate> CommandTemplate::parse(std::string_view text, const std::vector<std::string>& names) {
  KDK_TRY_ASSIGN(std::vector<std::string> words, splitCommandWords(text));
  return fromWords(words, names);
}

std::vector<std::string> CommandTemplate::expand(const std::map<std::string, std::string>& values) const {
  std::vector<std::string> argv;
  for (const auto& pieces : words_) {
    std::string w;
    for (const auto& p : pieces) {
      if (!p.placeholder) {
        w += p.text;
      } else if (auto it = values.find(p.text); it != values.end()) {
        w += it->second;
      }
    }
    argv.push_back(std::move(w));
  }
  return argv;
}

std::vector<std::string> CommandTemplate::placeholders() const {
  std::vector<std::string> out;
  for (const auto& pieces : words_)
    for (const auto& p : pieces)
      if (p.placeholder && std::find(out.begin(), out.end(), p.text) == out.end()) out.push_back(p.text);
  return out;
}

}  // namespace kernodeck::record
