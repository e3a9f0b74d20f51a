#include "kernodeck/report/redact.h"

#include <utility>
#include <vector>

#include "kernodeck/util/strings.h"

namespace kernodeck::report {

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

// The length of the token shape (hf_..., ghp_..., AKIA..., a PEM private key header) at position
// i, 0 when none: what the regex `(hf_[A-Za-z0-9]{20,})|(gh[pousr]_[A-Za-z0-9]{20,})|
// (github_pat_[A-Za-z0-9_]{20,})|(xox[abposr]-[A-Za-z0-9-]{10,})|((AKIA|ASIA)[0-9A-Z]{16})|
// (sk-[A-Za-z0-9_-]{20,})|(glpat-[A-Za-z0-9_-]{20,})|(-----BEGIN [A-Z ]*PRIVATE KEY-----)` matches
// there (its runs are greedy), in one pass and no recursion: the text may be an image's.
template <class In>
size_t runFrom(std::string_view s, size_t from, In in) {
  size_t n = 0;
  while (from + n < s.size() && in(s[from + n])) ++n;
  return n;
}

size_t tokenLen(std::string_view s, size_t i) {
  auto at = [&](std::string_view p) { return s.substr(i, p.size()) == p; };
  auto alnumOr = [](std::string_view extra) {
    return [extra](char c) { return alnum(c) || extra.find(c) != extra.npos; };
  };
  auto run = [&](size_t prefix, size_t min, auto in) -> size_t {
    size_t n = runFrom(s, i + prefix, in);
    return n >= min ? prefix + n : 0;
  };
  if (at("hf_")) return run(3, 20, alnumOr(""));
  if (at("gh") && i + 3 < s.size() && std::string_view("pousr").find(s[i + 2]) != std::string_view::npos &&
      s[i + 3] == '_')
    if (size_t n = run(4, 20, alnumOr(""))) return n;
  if (at("github_pat_")) return run(11, 20, alnumOr("_"));
  if (at("xox") && i + 4 < s.size() && std::string_view("abposr").find(s[i + 3]) != std::string_view::npos &&
      s[i + 4] == '-')
    if (size_t n = run(5, 10, alnumOr("-"))) return n;
  if (at("AKIA") || at("ASIA")) return runAtLeast(s, i + 4, 16, upperOrDigit) ? 20 : 0;
  if (at("sk-")) return run(3, 20, alnumOr("_-"));
  if (at("glpat-")) return run(6, 20, alnumOr("_-"));
  if (at("-----BEGIN ")) {
    // [A-Z ]* then "PRIVATE KEY-----": the run of [A-Z ] ends where "PRIVATE KEY" does.
    size_t j = i + 11, k = j;
    while (k < s.size() && ((s[k] >= 'A' && s[k] <= 'Z') || s[k] == ' ')) ++k;
    if (k - j >= 11 && s.substr(k - 11, 16) == "PRIVATE KEY-----") return k + 5 - i;
  }
  return 0;
}

bool tokenAt(std::string_view s, size_t i) { return tokenLen(s, i) > 0; }

// The regex `([A-Za-z][A-Za-z0-9+.\-]*://)[^/@\s"']+@` with its "://" at q: the end of its
// userinfo (where its '@' is), 0 when it does not match there.
size_t userinfoEnd(std::string_view s, size_t q) {
  bool scheme = false;  // some letter in the run of scheme characters that ends at q
  for (size_t b = q; b > 0 && (alnum(s[b - 1]) || s[b - 1] == '+' || s[b - 1] == '.' || s[b - 1] == '-'); --b)
    if (!(s[b - 1] >= '0' && s[b - 1] <= '9') && alnum(s[b - 1])) scheme = true;
  if (!scheme) return 0;
  size_t t = q + 3;
  while (t < s.size() && s[t] != '/' && s[t] != '@' && !space(s[t]) && s[t] != '"' && s[t] != '\'') ++t;
  return t > q + 3 && t < s.size() && s[t] == '@' ? t : 0;
}

bool userinfoAt(std::string_view s, size_t q) { return userinfoEnd(s, q) > 0; }

bool headerValueChar(char c) { return c != '\r' && c != '\n' && c != ',' && c != ';' && c != '"' && c != '\''; }

// The regex `((Authorization|Proxy-Authorization)\s*[:=]\s*)[^\r\n,;"']+` (any case) with its
// "authorization" at i: where its value starts and ends, {0, 0} when it does not match there.
// As the regex backtracks: when no value character follows the spaces after [:=], the value is
// the last of those spaces that is one (a space or tab, not a line end).
std::pair<size_t, size_t> authHeaderValue(std::string_view s, size_t i) {
  size_t p = i + 13;
  while (p < s.size() && space(s[p])) ++p;
  if (p >= s.size() || (s[p] != ':' && s[p] != '=')) return {0, 0};
  size_t p1 = ++p;
  while (p < s.size() && space(s[p])) ++p;
  if (p < s.size() && headerValueChar(s[p])) return {p, p + runFrom(s, p, headerValueChar)};
  for (size_t k = p; k > p1; --k)
    if (headerValueChar(s[k - 1])) return {k - 1, k};
  return {0, 0};
}

bool authHeaderAt(std::string_view s, size_t i) { return authHeaderValue(s, i).second > 0; }

bool credentialChar(char c) { return alnum(c) || std::string_view("._~+/=-").find(c) != std::string_view::npos; }

// The regex `((Bearer|Basic)\s+)[A-Za-z0-9._~+/=-]{8,}` (any case) with its "bearer" or "basic",
// `n` characters long, at i: where its credential starts and ends, {0, 0} when it does not match.
std::pair<size_t, size_t> bearerValue(std::string_view s, size_t i, size_t n) {
  size_t p = i + n;
  if (p >= s.size() || !space(s[p])) return {0, 0};
  while (p < s.size() && space(s[p])) ++p;
  size_t len = runFrom(s, p, credentialChar);
  return len >= 8 ? std::pair<size_t, size_t>{p, p + len} : std::pair<size_t, size_t>{0, 0};
}

bool bearerAt(std::string_view s, size_t i, size_t n) { return bearerValue(s, i, n).second > 0; }

// Each of the four replacements, leftmost first and non-overlapping as std::regex_replace does.
std::string replaceUserinfo(std::string_view s) {
  std::string out;
  size_t copied = 0;
  for (size_t q = s.find("://"); q != std::string_view::npos; q = s.find("://", q + 1))
    if (size_t at = userinfoEnd(s, q)) {
      out.append(s.substr(copied, q + 3 - copied)).append("***");
      copied = at;  // the '@' stays
      q = at;
    }
  return out.append(s.substr(copied));
}

// `valueAt(s, i)`: {start, end} of the part replaced by "***" for a match starting at i.
template <class ValueAt>
std::string replaceValues(std::string_view s, ValueAt valueAt) {
  std::string out;
  size_t i = 0, copied = 0;
  while (i < s.size()) {
    auto [b, e] = valueAt(s, i);
    if (e == 0) {
      ++i;
      continue;
    }
    out.append(s.substr(copied, b - copied)).append("***");
    copied = i = e;
  }
  return out.append(s.substr(copied));
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
  // Where none of the four patterns matches, none of the replacements below changes a byte.
  if (s.empty() || !looksLikeSecret(s)) return s;
  // Hand scanners, each the regex it replaced (Redact.RedactTextAgreesWithTheRegexes): the text
  // may be an image's or replayed code's, and libstdc++'s std::regex recurses once per character.
  s = replaceUserinfo(s);
  s = replaceValues(s, [](std::string_view t, size_t i) -> std::pair<size_t, size_t> {
    if (startsNoCase(t, i, "proxy-authorization")) {
      auto v = authHeaderValue(t, i + 6);
      if (v.second) return v;
    }
    return startsNoCase(t, i, "authorization") ? authHeaderValue(t, i) : std::pair<size_t, size_t>{0, 0};
  });
  s = replaceValues(s, [](std::string_view t, size_t i) -> std::pair<size_t, size_t> {
    if (startsNoCase(t, i, "bearer")) return bearerValue(t, i, 6);
    if (startsNoCase(t, i, "basic")) return bearerValue(t, i, 5);
    return {0, 0};
  });
  s = replaceValues(s, [](std::string_view t, size_t i) -> std::pair<size_t, size_t> {
    size_t n = tokenLen(t, i);
    return n ? std::pair<size_t, size_t>{i, i + n} : std::pair<size_t, size_t>{0, 0};
  });
  return s;
}

}  // namespace kernodeck::report
