// Registry authentication: WWW-Authenticate challenges, and the credentials a
// user already has for skopeo/podman/docker (auth.json, docker config.json,
// credential helpers). Credentials and tokens are never printed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kernodeck::registry {

struct Challenge {
  std::string scheme;                         // "bearer", "basic" (lower case)
  std::map<std::string, std::string> params;  // realm, service, scope, error...
};

// Parses one or more challenges (RFC 7235): `Bearer realm="...",service="...",scope="..."`.
std::vector<Challenge> parseWwwAuthenticate(std::string_view header);

struct Credentials {
  std::string username, password;
  std::string identityToken;  // OAuth2 refresh token (docker "identitytoken", helper "<token>" user)
  bool empty() const { return username.empty() && password.empty() && identityToken.empty(); }
};

struct AuthSources {
  std::vector<std::string> files;  // in order; the first that names the registry wins
  // Runs a credential helper: name ("pass", "ecr-login"...), registry host -> stdout.
  std::optional<std::string> (*runHelper)(const std::string& name, const std::string& host) = nullptr;
};

// The default files: $REGISTRY_AUTH_FILE, $XDG_RUNTIME_DIR/containers/auth.json,
// $DOCKER_CONFIG/config.json or ~/.docker/config.json; `extra` (--authfile) first.
AuthSources defaultAuthSources(const std::string& extra = "");

// Looks `host` up (docker.io also as index.docker.io and https://index.docker.io/v1/).
std::optional<Credentials> lookupCredentials(const AuthSources& src, const std::string& host);

// Runs `docker-credential-NAME get` with HOST on stdin (5 s limit).
std::optional<std::string> runCredentialHelper(const std::string& name, const std::string& host);

}  // namespace kernodeck::registry
