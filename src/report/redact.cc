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

bool looksLikeSecret(std::string_view value) {
  std::string v(value);
  std::smatch m;
  if (std::regex_search(v, m, tokenShapes())) return true;
  if (std::regex_search(v, m, urlUserinfo())) return true;
  if (std::regex_search(v, m, authHeader())) return true;
  if (std::regex_search(v, m, bearer())) return true;
  return false;
}

std::string redactText(std::string_view text) {
  std::string s(text);
  if (s.empty()) return s;
  s = std::regex_replace(s, urlUserinfo(), "$1***@");
  s = std::regex_replace(s, authHeader(), "$1***");
  s = std::regex_replace(s, bearer(), "$1***");
  s = std::regex_replace(s, tokenShapes(), "***");
  return s;
}

}  // namespace kernodeck::report
