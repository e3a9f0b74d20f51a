#include "kernodeck/report/redact.h"

#include <regex>
#include <vector>

#include "kernodeck/util/strings.h"

namespace kernodeck::report {
namespace {

const std::regex& urlUserinfo() {
  // scheme://userinfo@  (userinfo without '/', '@' or whitespace)
  static const std::regex re(R"(([A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s"']+@)");
  return re;
}

const std::regex& tokenShapes() {
  static const std::regex re(R"((hf_[A-Za-z0-9]{20,})|(gh[pousr]_[A-Za-z0-9]{20,})|(github_pat_[A-Za-z0-9_]{20,})|)"
                             R"((xox[abposr]-[A-Za-z0-9-]{10,})|((AKIA|ASIA)[0-9A-Z]{16})|(sk-[A-Za-z0-9_-]{20,})|)"
                             R"((glpat-[A-Za-z0-9_-]{20,})|(-----BEGIN [A-Z ]*PRIVATE KEY-----))");
  return re;
}

const std::regex& authHeader() {
  static const std::regex re(R"(((Authorization|Proxy-Authorization)\s*[:=]\s*)[^\r\n,;"']+)", std::regex::icase);
  return re;
}

const std::regex& bearer() {
  static const std::regex re(R"(((Bearer|Basic)\s+)[A-Za-z0-9._~+/=-]{8,})", std::regex::icase);
  return re;
}

}  // namespace

bool isSecretName(std::string_view name) {
  // Word-based, so GIT_AUTHOR_NAME or KEYBOARD are not taken for secrets.
  std::vector<std::string> words;
  std::string w;
  for (char c : util::toLower(name)) {
    if (c == '_' || c == '-' || c == '.') {
      if (!w.empty()) words.push_back(w);
      w.clear();
    } else {
      w.push_back(c);
    }
  }
  if (!w.empty()) words.push_back(w);
  static const char* single[] = {"password",   "passwd",      "secret", "secrets", "token",     "apikey",
                                 "credential", "credentials", "auth",   "pat",     "passphrase"};
  static const char* firstOfPair[] = {"api", "access", "private", "secret", "session", "signing", "client"};
  for (size_t i = 0; i < words.size(); ++i) {
    for (const char* s : single)
      if (words[i] == s) return true;
    if (i + 1 < words.size() && words[i + 1] == "key")
      for (const char* s : firstOfPair)
        if (words[i] == s) return true;
  }
  return false;
}

namespace {

// looksLikeSecret's four patterns as plain scans (issue 31: compiling the regexes was ~20 % of a
// replayed audit's instructions, which ask looksLikeSecret of every config variable). Each says
// whether std::regex_search would find the regex above of the same meaning;
// Redact.LooksLikeSecretAgreesWithTheRegexes compares them on random strings.

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool upperOrDigit(char c) { return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
bool space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
char lower(char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; }

// Whether at least `min` characters for which `in` holds start at `from`.
template <class In>
bool runAtLeast(std::string_view s, size_t from, size_t min, In in) {
  size_t n = 0;
  while (from + n < s.size() && n < min && in(s[from + n])) ++n;
  return n >= min;
}

bool startsNoCase(std::string_view s, size_t at, std::string_view word) {
  if (s.size() - at < word.size()) return false;
  for (size_t i = 0; i < word.size(); ++i)
    if (lower(s[at + i]) != word[i]) return false;
  return true;
}

// tokenShapes() at position i.
bool tokenAt(std::string_view s, size_t i) {
  auto at = [&](std::string_view p) { return s.substr(i, p.size()) == p; };
  auto alnumOr = [](std::string_view extra) {
    return [extra](char c) { return alnum(c) || extra.find(c) != extra.npos; };
  };
  if (at("hf_")) return runAtLeast(s, i + 3, 20, alnumOr(""));
  if (at("gh") && i + 3 < s.size() && std::string_view("pousr").find(s[i + 2]) != std::string_view::npos &&
      s[i + 3] == '_' && runAtLeast(s, i + 4, 20, alnumOr("")))
    return true;
  if (at("github_pat_")) return runAtLeast(s, i + 11, 20, alnumOr("_"));
  if (at("xox") && i + 4 < s.size() && std::string_view("abposr").find(s[i + 3]) != std::string_view::npos &&
      s[i + 4] == '-' && runAtLeast(s, i + 5, 10, alnumOr("-")))
    return true;
  if (at("AKIA") || at("ASIA")) return runAtLeast(s, i + 4, 16, upperOrDigit);
  if (at("sk-")) return runAtLeast(s, i + 3, 20, alnumOr("_-"));
  if (at("glpat-")) return runAtLeast(s, i + 6, 20, alnumOr("_-"));
  if (at("-----BEGIN ")) {
    // [A-Z ]* then "PRIVATE KEY-----": the run of [A-Z ] ends where "PRIVATE KEY" does.
    size_t j = i + 11, k = j;
    while (k < s.size() && ((s[k] >= 'A' && s[k] <= 'Z') || s[k] == ' ')) ++k;
    return k - j >= 11 && s.substr(k - 11, 16) == "PRIVATE KEY-----";
  }
  return false;
}

// urlUserinfo() with its "://" at q.
bool userinfoAt(std::string_view s, size_t q) {
  bool scheme = false;  // some letter in the run of scheme characters that ends at q
  for (size_t b = q; b > 0 && (alnum(s[b - 1]) || s[b - 1] == '+' || s[b - 1] == '.' || s[b - 1] == '-'); --b)
    if (!(s[b - 1] >= '0' && s[b - 1] <= '9') && alnum(s[b - 1])) scheme = true;
  if (!scheme) return false;
  size_t t = q + 3;
  while (t < s.size() && s[t] != '/' && s[t] != '@' && !space(s[t]) && s[t] != '"' && s[t] != '\'') ++t;
  return t > q + 3 && t < s.size() && s[t] == '@';
}

// authHeader() with its "authorization" (any case) at i.
bool authHeaderAt(std::string_view s, size_t i) {
  size_t p = i + 13;
  while (p < s.size() && space(s[p])) ++p;
  if (p >= s.size() || (s[p] != ':' && s[p] != '=')) return false;
  for (++p; p < s.size(); ++p) {
    char c = s[p];
    if (c != '\r' && c != '\n' && c != ',' && c != ';' && c != '"' && c != '\'') return true;
    if (!space(c)) return false;
  }
  return false;
}

// bearer() with its "bearer" or "basic" (any case), `n` characters long, at i.
bool bearerAt(std::string_view s, size_t i, size_t n) {
  size_t p = i + n;
  if (p >= s.size() || !space(s[p])) return false;
  while (p < s.size() && space(s[p])) ++p;
  return runAtLeast(s, p, 8,
                    [](char c) { return alnum(c) || std::string_view("._~+/=-").find(c) != std::string_view::npos; });
}

}  // namespace

bool looksLikeSecret(std::string_view v) {
  for (size_t i = 0; i < v.size(); ++i)
    if (tokenAt(v, i)) return true;
  for (size_t q = v.find("://"); q != std::string_view::npos; q = v.find("://", q + 1))
    if (userinfoAt(v, q)) return true;
  for (size_t i = 0; i < v.size(); ++i) {
    if (startsNoCase(v, i, "authorization") && authHeaderAt(v, i)) return true;
    if (startsNoCase(v, i, "bearer") && bearerAt(v, i, 6)) return true;
    if (startsNoCase(v, i, "basic") && bearerAt(v, i, 5)) return true;
  }
  return false;
}

std::string redactText(std::string_view text) {
  std::string s(text);
  // Where none of the four patterns matches, none of the replacements below changes a byte: the
  // regexes are compiled only for text that holds a secret.
  if (s.empty() || !looksLikeSecret(s)) return s;
  s = std::regex_replace(s, urlUserinfo(), "$1***@");
  s = std::regex_replace(s, authHeader(), "$1***");
  s = std::regex_replace(s, bearer(), "$1***");
  s = std::regex_replace(s, tokenShapes(), "***");
  return s;
}

}  // namespace kernodeck::report
