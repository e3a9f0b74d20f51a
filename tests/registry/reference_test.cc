#include "kernodeck/registry/reference.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "kernodeck/registry/auth.h"

using namespace kernodeck::registry;

TEST(Reference, Normalisation) {
  const std::string d = "sha256:" + std::string(64, 'a');
  struct Case {
    std::string in, registry, repo, tag, str;
    bool digest;
  } cases[] = {
      {"ubuntu", "docker.io", "library/ubuntu", "latest", "docker.io/library/ubuntu:latest", false},
      {"ubuntu:22.04", "docker.io", "library/ubuntu", "22.04", "docker.io/library/ubuntu:22.04", false},
      {"team/app", "docker.io", "team/app", "latest", "docker.io/team/app:latest", false},
      {"host:5000/team/app:1.0", "host:5000", "team/app", "1.0", "host:5000/team/app:1.0", false},
      {"localhost/app", "localhost", "app", "latest", "localhost/app:latest", false},
      {"ghcr.io/org/sub/app@" + d, "ghcr.io", "org/sub/app", "latest", "ghcr.io/org/sub/app@" + d, true},
      {"quay.io/a/b:v1@" + d, "quay.io", "a/b", "v1", "quay.io/a/b:v1@" + d, true},
      {"index.docker.io/library/busybox", "docker.io", "library/busybox", "latest", "docker.io/library/busybox:latest",
       false},
      {"[::1]:5000/app:x", "[::1]:5000", "app", "x", "[::1]:5000/app:x", false},
  };
  for (const auto& c : cases) {
    auto r = parseReference(c.in);
    ASSERT_TRUE(r.ok()) << c.in << ": " << r.error().message;
    EXPECT_EQ(r->registry, c.registry) << c.in;
    EXPECT_EQ(r->repository, c.repo) << c.in;
    EXPECT_EQ(r->tag, c.tag) << c.in;
    EXPECT_EQ(r->digest.has_value(), c.digest) << c.in;
    EXPECT_EQ(r->str(), c.str) << c.in;
  }
  EXPECT_EQ(parseReference("ubuntu")->apiHost(), "registry-1.docker.io");
  for (const char* bad : {"", "team/UPPER", "app:bad tag", "app@sha256:12", "a//b", "-app", "app:", "host:5000/"})
    EXPECT_FALSE(parseReference(bad).ok()) << bad;
}

TEST(Reference, Loopback) {
  for (const char* h : {"localhost", "localhost:5000", "127.0.0.1", "127.1.2.3:80", "[::1]:5000", "[::1]"})
    EXPECT_TRUE(isLoopback(h)) << h;
  for (const char* h : {"example.com", "10.0.0.1:5000", "128.0.0.1", "localhost.example.com", "[::2]"})
    EXPECT_FALSE(isLoopback(h)) << h;
}

TEST(Auth, WwwAuthenticate) {
  auto c = parseWwwAuthenticate(
      R"(Bearer realm="https://auth.example/token",service="registry.example",scope="repository:a/b:pull,push")");
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].scheme, "bearer");
  EXPECT_EQ(c[0].params["realm"], "https://auth.example/token");
  EXPECT_EQ(c[0].params["scope"], "repository:a/b:pull,push");
  auto two = parseWwwAuthenticate(R"(Basic realm="kdk", Bearer realm="x",error="invalid_token")");
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(two[0].scheme, "basic");
  EXPECT_EQ(two[1].params["error"], "invalid_token");
  EXPECT_TRUE(parseWwwAuthenticate("").empty());
  EXPECT_TRUE(parseWwwAuthenticate("=broken").empty());
  EXPECT_EQ(parseWwwAuthenticate(R"(Bearer realm="unterminated)")[0].params["realm"], "unterminated");
}

TEST(Auth, CredentialFiles) {
  char tmpl[] = "/tmp/kdk-auth-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  std::ofstream(dir + "/auth.json")
      << R"({"auths":{"reg.example":{"auth":"dXNlcjpwYXNz"},"tok.example":{"identitytoken":"rt"}}})";
  std::ofstream(dir + "/docker.json")
      << R"({"auths":{"https://index.docker.io/v1/":{"auth":"ZDpo"}},"credHelpers":{"helped.example":"fake"}})";
  AuthSources src;
  src.files = {dir + "/auth.json", dir + "/docker.json"};
  src.runHelper = [](const std::string& name, const std::string& host) -> std::optional<std::string> {
    if (name != "fake") return std::nullopt;
    return std::string(R"({"ServerURL":")") + host + R"(","Username":"<token>","Secret":"refresh"})";
  };
  auto a = lookupCredentials(src, "reg.example");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->username, "user");
  EXPECT_EQ(a->password, "pass");
  EXPECT_EQ(lookupCredentials(src, "tok.example")->identityToken, "rt");
  EXPECT_EQ(lookupCredentials(src, "docker.io")->username, "d");
  EXPECT_EQ(lookupCredentials(src, "helped.example")->identityToken, "refresh");
  EXPECT_FALSE(lookupCredentials(src, "other.example"));
  std::remove((dir + "/auth.json").c_str());
  std::remove((dir + "/docker.json").c_str());
}
