#include "kernodeck/registry/reference.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <regex>

#include "kernodeck/registry/auth.h"

namespace registry_reference_test {

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

// parseReference's tag, repository component and registry host rules, and isLoopback, are plain
// scans since issue 31 (compiling their std::regexes cost a replayed audit ~9 % of its
// instructions). The regexes they replaced, as they were, must give the same verdicts on the
// listed cases and on random strings of the characters that matter.
TEST(Reference, GrammarAgreesWithTheRegexes) {
  const std::regex tagRe(R"(^[\w][\w.-]{0,127}$)");
  const std::regex component(R"(^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$)");
  const std::regex hostRe(
      R"(^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?$)");
  const std::regex v4(R"(^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$)");
  auto oldLoopback = [&](std::string h) {
    if (!h.empty() && h.front() == '[') {
      size_t end = h.find(']');
      return end != std::string::npos && h.substr(1, end - 1) == "::1";
    }
    h = h.substr(0, h.find(':'));
    return h == "localhost" || std::regex_match(h, v4);
  };
  std::mt19937 rng(31);
  auto random = [&](const std::vector<std::string>& fragments) {
    std::string s;
    for (int n = 1 + rng() % 8; n > 0; --n) s += fragments[rng() % fragments.size()];
    return s;
  };
  // No '/', '@' or whitespace: those decide where the parts of a reference are.
  const std::vector<std::string> common = {"a", "z",  "0", "9",  "A", "Z",    ".",
                                           "_", "__", "-", "--", "*", "\xe9", std::string(1, '\0')};
  std::vector<std::string> tags = {"latest", "_x", ".x", "-x", "x.y-z_", std::string(128, 'a'), std::string(129, 'a')};
  std::vector<std::string> components = {"a", "a.b", "a..b", "a_b", "a__b", "a___b", "a-b", "a---b", "a-", "-a", "A"};
  std::vector<std::string> hosts = {"a.b",     "a-.b",   "a.-b",    "a..b",   ".a",         "a.",  "[::1]",
                                    "[]:1",    "[::1]:", "[::1]:x", "a.b:80", "a.b:",       "A:1", "localhost:5000",
                                    "a.b:1:2", "[1.2]]", "[g]",     "a_b.c",  "x.y.z:00000"};
  std::vector<std::string> loopbacks = {"127.0.0.1",    "127.0.0.1:80", "127.1.2.", "127.1.2.3.4",
                                        "127.1234.0.1", "[::1]:5000",   "[::2]",    "localhost",
                                        "128.0.0.1",    "127.a.0.1",    "127..0.1"};
  for (int i = 0; i < 8000; ++i) {
    tags.push_back(random(common));
    components.push_back(random(common));
    std::vector<std::string> h = common;
    for (const char* f : {":", ":8", "[", "]", "[::1]", "f", "G"}) h.push_back(f);
    hosts.push_back(random(h));
    loopbacks.push_back(random({"127.", "1", "0", ".", ":", "[::1]", "[", "]", "localhost", "a", "1234"}));
  }
  for (const auto& t : tags)
    EXPECT_EQ(parseReference("reg.example/x:" + t).ok(), std::regex_match(t, tagRe)) << ::testing::PrintToString(t);
  for (const auto& c : components) {
    if (c.find(':') != std::string::npos) continue;
    EXPECT_EQ(parseReference("reg.example/" + c + ":t").ok(), std::regex_match(c, component))
        << ::testing::PrintToString(c);
  }
  size_t hostsTried = 0;
  for (const auto& h : hosts) {
    bool hasRegistry = h.find_first_of(".:ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos || h == "localhost";
    if (!hasRegistry) continue;
    ++hostsTried;
    EXPECT_EQ(parseReference(h + "/x:t").ok(), std::regex_match(h, hostRe)) << ::testing::PrintToString(h);
  }
  EXPECT_GT(hostsTried, 4000u);
  for (const auto& h : loopbacks) EXPECT_EQ(isLoopback(h), oldLoopback(h)) << ::testing::PrintToString(h);
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

}  // namespace registry_reference_test
