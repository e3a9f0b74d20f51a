#include "kernodeck/registry/auth.h"

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "kernodeck/util/hash.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/util/json_read.h"

namespace kernodeck::registry {

std::vector<Challenge> parseWwwAuthenticate(std::string_view h) {
  std::vector<Challenge> out;
  size_t i = 0, n = std::min<size_t>(h.size(), 8192);
  auto ws = [&] {
    while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == ',')) ++i;
  };
  while (i < n) {
    ws();
    size_t start = i;
    while (i < n && h[i] != ' ' && h[i] != ',' && h[i] != '=') ++i;
    if (i == start) break;
    if (i < n && h[i] == '=') {  // a parameter of the current challenge
      if (out.empty()) return out;
      std::string key = util::toLower(h.substr(start, i - start));
      ++i;
      std::string value;
      if (i < n && h[i] == '"') {
        ++i;
        while (i < n && h[i] != '"') {
          if (h[i] == '\\' && i + 1 < n) ++i;
          value.push_back(h[i++]);
        }
        ++i;
      } else {
        while (i < n && h[i] != ',' && h[i] != ' ') value.push_back(h[i++]);
      }
      out.back().params[key] = value;
      continue;
    }
    Challenge c;
    c.scheme = util::toLower(h.substr(start, i - start));
    out.push_back(c);
  }
  return out;
}

AuthSources defaultAuthSources(const std::string& extra) {
  AuthSources s;
  if (!extra.empty()) s.files.push_back(extra);
  if (const char* f = std::getenv("REGISTRY_AUTH_FILE"); f && *f) s.files.push_back(f);
  if (const char* x = std::getenv("XDG_RUNTIME_DIR"); x && *x)
    s.files.push_back(std::string(x) + "/containers/auth.json");
  if (const char* d = std::getenv("DOCKER_CONFIG"); d && *d)
    s.files.push_back(std::string(d) + "/config.json");
  else if (const char* home = std::getenv("HOME"); home && *home)
    s.files.push_back(std::string(home) + "/.docker/config.json");
  s.runHelper = runCredentialHelper;
  return s;
}

namespace {

std::vector<std::string> keysFor(const std::string& host) {
  std::vector<std::string> k = {host, "https://" + host, "http://" + host, "https://" + host + "/v2/",
                                "https://" + host + "/v1/"};
  if (host == "docker.io" || host == "registry-1.docker.io")
    for (const char* a : {"index.docker.io", "https://index.docker.io/v1/", "docker.io", "registry-1.docker.io"})
      k.push_back(a);
  return k;
}

std::optional<Credentials> fromHelperOutput(const std::string& out) {
  auto j = util::parseUntrustedJson(out);
  if (!j.is_object()) return std::nullopt;
  Credentials c;
  std::string user = j.value("Username", ""), secret = j.value("Secret", "");
  if (user == "<token>")
    c.identityToken = secret;
  else
    c.username = user, c.password = secret;
  if (c.empty()) return std::nullopt;
  return c;
}

}  // namespace

std::optional<Credentials> lookupCredentials(const AuthSources& src, const std::string& host) {
  for (const auto& file : src.files) {
    auto text = util::readFileLimited(file, 1 << 20);
    if (!text.ok()) continue;
    auto j = util::parseUntrustedJson(*text);
    if (!j.is_object()) continue;
    for (const auto& key : keysFor(host)) {
      if (j.contains("credHelpers") && j["credHelpers"].is_object() && j["credHelpers"].contains(key) &&
          j["credHelpers"][key].is_string() && src.runHelper) {
        if (auto out = src.runHelper(j["credHelpers"][key].get<std::string>(), host))
          if (auto c = fromHelperOutput(*out)) return c;
      }
      if (!j.contains("auths") || !j["auths"].is_object() || !j["auths"].contains(key)) continue;
      const auto& a = j["auths"][key];
      if (!a.is_object()) continue;
      Credentials c;
      if (a.contains("auth") && a["auth"].is_string()) {
        std::string decoded;
        if (util::base64Decode(a["auth"].get<std::string>(), decoded)) {
          size_t colon = decoded.find(':');
          if (colon != std::string::npos) c.username = decoded.substr(0, colon), c.password = decoded.substr(colon + 1);
        }
      }
      if (a.contains("username") && a["username"].is_string()) c.username = a["username"].get<std::string>();
      if (a.contains("password") && a["password"].is_string()) c.password = a["password"].get<std::string>();
      if (a.contains("identitytoken") && a["identitytoken"].is_string())
        c.identityToken = a["identitytoken"].get<std::string>();
      if (!c.empty()) return c;
    }
    if (j.contains("credsStore") && j["credsStore"].is_string() && src.runHelper)
      if (auto out = src.runHelper(j["credsStore"].get<std::string>(), host))
        if (auto c = fromHelperOutput(*out)) return c;
  }
  return std::nullopt;
}

std::optional<std::string> runCredentialHelper(const std::string& name, const std::string& host) {
  for (char ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') return std::nullopt;
  util::ProcessSpec spec;
  spec.argv = {"docker-credential-" + name, "get"};
  spec.stdinData = host;
  spec.timeoutMs = 5000;
  spec.maxOutput = 65536;
  spec.err = util::ProcessOutput::Discard;  // a helper's complaints may hold secrets
  auto r = util::runProcess(spec);
  if (!r.ok() || !r->ok() || r->truncated) return std::nullopt;
  return r->out;
}

}  // namespace kernodeck::registry
