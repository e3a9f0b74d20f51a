// The registry client's request loop driven through its transport seam, with no registry: a
// scripted HttpTransport answers each exchange and records what was asked and how long the
// client waited, so retry, backoff, Retry-After and the Bearer and Basic auth rules are checked
// exactly (the integration tests check the same client against a real registry and fault proxy).
#include <gtest/gtest.h>

#include <deque>

#include "kernodeck/registry/client.h"
#include "kernodeck/registry/transport.h"
#include "kernodeck/util/hash.h"

namespace registry_client_test {

using namespace kernodeck;
using namespace kernodeck::registry;

namespace {

const std::string kManifest = R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",)"
                              R"("config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:)" +
                              std::string(64, 'a') + R"(","size":2},"layers":[]})";

// Answers from a queue; each request is recorded, each wait too.
struct Script {
  std::deque<HttpResponse> answers;
  std::vector<HttpRequest> requests;
  std::vector<double> sleeps;
};

class ScriptedTransport : public HttpTransport {
 public:
  explicit ScriptedTransport(Script* s) : s_(s) {}
  HttpResponse perform(const HttpRequest& q) override {
    s_->requests.push_back(q);
    if (s_->answers.empty()) {
      HttpResponse r;
      r.transportError = "script exhausted";
      return r;
    }
    HttpResponse r = s_->answers.front();
    s_->answers.pop_front();
    if (r.status >= 200 && r.status < 300 && q.sink && !r.body.empty()) {
      if (!q.sink(r.body.data(), r.body.size())) r.aborted = true;
      r.body.clear();
    }
    return r;
  }
  void sleepFor(double seconds) override { s_->sleeps.push_back(seconds); }

 private:
  Script* s_;
};

HttpResponse answer(long status, std::map<std::string, std::string> headers = {}, std::string body = "") {
  HttpResponse r;
  r.status = status;
  r.headers = std::move(headers);
  r.body = std::move(body);
  return r;
}

HttpResponse manifestOk() {
  return answer(200, {{"content-type", "application/vnd.oci.image.manifest.v1+json"}}, kManifest);
}

Client client(const std::string& ref, Script* s, ClientOptions o = {}) {
  auto r = parseReference(ref);
  EXPECT_TRUE(r.ok());
  o.noCache = true;
  return Client(*r, o, std::make_unique<ScriptedTransport>(s));
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool hasHeader(const HttpRequest& q, const std::string& h) {
  for (const auto& x : q.headers)
    if (x == h) return true;
  return false;
}

bool hasAuthorization(const HttpRequest& q) {
  for (const auto& x : q.headers)
    if (x.rfind("Authorization:", 0) == 0) return true;
  return false;
}

}  // namespace

TEST(RegistryClient, ServerErrorsAndDroppedConnectionsAreRetriedWithBackoff) {
  Script s;
  HttpResponse dropped;
  dropped.transportError = "Connection reset by peer";
  s.answers = {answer(503), dropped, answer(500), manifestOk()};
  Client c = client("127.0.0.1:5000/team/app:1.0", &s);
  auto m = c.manifest("1.0");
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->digest.encoded, util::sha256Hex(kManifest));
  ASSERT_EQ(s.requests.size(), 4u);
  EXPECT_EQ(s.requests[0].url, "http://127.0.0.1:5000/v2/team/app/manifests/1.0");  // loopback: plain HTTP first
  EXPECT_EQ(s.sleeps, (std::vector<double>{0.25, 0.5, 1.0}));
}

TEST(RegistryClient, RetryAfterIsHonouredAndTheRetryBudgetBounds) {
  Script s;
  s.answers = {answer(429, {{"retry-after", "7"}}), manifestOk()};
  Client c = client("127.0.0.1:5000/team/app:1.0", &s);
  ASSERT_TRUE(c.manifest("1.0").ok());
  EXPECT_EQ(s.sleeps, std::vector<double>{7});

  // A wait past --retry-max-time is not made: the error is the last answer.
  Script t;
  t.answers = {answer(503, {{"retry-after", "100"}}), manifestOk()};
  ClientOptions o;
  o.retryMaxSeconds = 60;
  Client c2 = client("127.0.0.1:5000/team/app:1.0", &t, o);
  auto m = c2.manifest("1.0");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("HTTP 503"), std::string::npos) << m.error().message;
  EXPECT_EQ(t.requests.size(), 1u);
  EXPECT_TRUE(t.sleeps.empty());
}

TEST(RegistryClient, RetriesStopAfterTheConfiguredCountAndClientErrorsAreNotRetried) {
  Script s;
  s.answers = {answer(502), answer(502), answer(502), answer(502)};
  ClientOptions o;
  o.retries = 2;
  Client c = client("127.0.0.1:5000/team/app:1.0", &s, o);
  auto m = c.manifest("1.0");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(s.requests.size(), 3u);  // the first and two retries
  EXPECT_NE(m.error().message.find("127.0.0.1:5000/team/app manifest 1.0: HTTP 502"), std::string::npos)
      << m.error().message;

  Script n;
  n.answers = {answer(404), manifestOk()};
  Client c2 = client("127.0.0.1:5000/team/app:1.0", &n);
  auto missing = c2.manifest("1.0");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(missing.error().is(ErrorKind::NotFound));
  EXPECT_EQ(n.requests.size(), 1u);
}

TEST(RegistryClient, BearerChallengeFetchesATokenForTheScopeAndRetriesWithIt) {
  Script s;
  s.answers = {
      answer(401, {{"www-authenticate",
                    R"(Bearer realm="http://127.0.0.1:5001/token",service="reg",scope="repository:team/app:pull")"}}),
      answer(200, {}, R"({"token":"tok-1"})"), manifestOk(), manifestOk()};
  Client c = client("127.0.0.1:5000/team/app:1.0", &s);
  ASSERT_TRUE(c.manifest("1.0").ok());
  ASSERT_EQ(s.requests.size(), 3u);
  EXPECT_FALSE(hasAuthorization(s.requests[0]));
  // Percent-encoding's hex digits in either case (libcurl's URL API writes them in lower case).
  EXPECT_EQ(lower(s.requests[1].url), "http://127.0.0.1:5001/token?service=reg&scope=repository%3ateam%2fapp%3apull");
  EXPECT_TRUE(hasHeader(s.requests[2], "Authorization: Bearer tok-1"));
  EXPECT_TRUE(s.sleeps.empty());  // an auth round is not a retry
  // The token is kept for its scope: the next request sends it at once.
  ASSERT_TRUE(c.manifest("1.0").ok());
  ASSERT_EQ(s.requests.size(), 4u);
  EXPECT_TRUE(hasHeader(s.requests[3], "Authorization: Bearer tok-1"));
}

TEST(RegistryClient, AuthFailuresAreErrorsNotLoops) {
  // A realm over plain HTTP for a registry reached over TLS: refused, no token request made.
  Script s;
  s.answers = {answer(401, {{"www-authenticate", R"(Bearer realm="http://evil.example/token",service="reg")"}})};
  Client c = client("registry.example/team/app:1.0", &s);
  auto m = c.manifest("1.0");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("refusing token realm over plain HTTP"), std::string::npos) << m.error().message;
  ASSERT_EQ(s.requests.size(), 1u);
  EXPECT_EQ(s.requests[0].url, "https://registry.example/v2/team/app/manifests/1.0");

  // Basic without credentials for the registry: one line saying so.
  Script b;
  b.answers = {answer(401, {{"www-authenticate", R"(Basic realm="reg")"}})};
  ClientOptions none;
  none.auth.files = {"/nonexistent/kdk-auth.json"};
  Client c2 = client("127.0.0.1:5000/team/app:1.0", &b, none);
  auto m2 = c2.manifest("1.0");
  ASSERT_FALSE(m2.ok());
  EXPECT_NE(m2.error().message.find("none are configured for 127.0.0.1:5000"), std::string::npos) << m2.error().message;

  // A second 401 after authorising is access denied, not another round.
  Script twice;
  twice.answers = {answer(401, {{"www-authenticate", R"(Bearer realm="http://127.0.0.1:5001/token")"}}),
                   answer(200, {}, R"({"access_token":"t"})"), answer(401), manifestOk()};
  Client c3 = client("127.0.0.1:5000/team/app:1.0", &twice);
  auto m3 = c3.manifest("1.0");
  ASSERT_FALSE(m3.ok());
  EXPECT_NE(m3.error().message.find("access denied (HTTP 401)"), std::string::npos) << m3.error().message;
  EXPECT_EQ(twice.requests.size(), 3u);
}

TEST(RegistryClient, ATlsOnlyRegistryOnLoopbackIsReachedOverHttps) {
  Script s;
  s.answers = {answer(400, {}, "Client sent an HTTP request to an HTTPS server.\n"), manifestOk()};
  Client c = client("127.0.0.1:5000/team/app:1.0", &s);
  ASSERT_TRUE(c.manifest("1.0").ok());
  ASSERT_EQ(s.requests.size(), 2u);
  EXPECT_EQ(s.requests[1].url, "https://127.0.0.1:5000/v2/team/app/manifests/1.0");
  EXPECT_EQ(c.scheme(), "https");
  EXPECT_TRUE(s.sleeps.empty());
}

TEST(RegistryClient, UrlsAreResolvedAsRfc3986Says) {
  // An upload's relative Location is resolved against the POST's URL (not appended to the host),
  // and the digest is added to the query it carries.
  Script s;
  s.answers = {answer(404), answer(202, {{"location", "x1?_state=abc"}}), answer(201)};
  Client c = client("127.0.0.1:5000/team/app:1.0", &s);
  auto pushed = c.pushBlob("hello");
  ASSERT_TRUE(pushed.ok()) << pushed.error().message;
  ASSERT_EQ(s.requests.size(), 3u);
  EXPECT_EQ(lower(s.requests[2].url),
            "http://127.0.0.1:5000/v2/team/app/blobs/uploads/x1?_state=abc&digest=sha256%3a" + util::sha256Hex("hello"));
  // A token realm with a query of its own keeps it.
  Script t;
  t.answers = {answer(401, {{"www-authenticate", R"(Bearer realm="http://127.0.0.1:5001/token?a=1",service="reg")"}}),
               answer(200, {}, R"({"token":"tok"})"), manifestOk()};
  Client c2 = client("127.0.0.1:5000/team/app:1.0", &t);
  ASSERT_TRUE(c2.manifest("1.0").ok());
  ASSERT_EQ(t.requests.size(), 3u);
  EXPECT_EQ(t.requests[1].url.rfind("http://127.0.0.1:5001/token?a=1&service=reg&scope=", 0), 0u) << t.requests[1].url;
  EXPECT_EQ(resolveUrl("https://h/v2/r/blobs/uploads/", "/v2/r/x").value(), "https://h/v2/r/x");
  EXPECT_EQ(resolveUrl("https://h/v2/r/blobs/uploads/", "https://other/y").value(), "https://other/y");
  EXPECT_EQ(resolveUrl("https://h/a/b", "../c?d=1").value(), "https://h/c?d=1");
}

TEST(RegistryClient, ReferrersAreAskedEncodedAndEveryPageIsRead) {
  const std::string subject = "sha256:" + std::string(64, 'b');
  auto page = [](const std::string& digestChar) {
    return R"({"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[)"
           R"({"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:)" +
           std::string(64, digestChar[0]) + R"(","size":3,"artifactType":"application/vnd.kernodeck.report.v1+json"}]})";
  };
  Script s;
  s.answers = {answer(200, {{"link", R"(</v2/team/app/referrers/)" + subject + R"(?last=1>; rel="next")"}}, page("1")),
               answer(200, {{"link", R"(<?last=2>; rel="next")"}}, page("2")), answer(200, {}, page("3"))};
  Client c = client("127.0.0.1:5000/team/app:1.0", &s);
  auto r = c.referrers(*oci::parseDigest(subject), "application/vnd.kernodeck.report.v1+json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(r->has_value());
  EXPECT_EQ((*r)->pages.size(), 3u);
  EXPECT_FALSE((*r)->truncated);
  ASSERT_EQ(s.requests.size(), 3u);
  // '+' and '/' percent-encoded: a Go registry reads a raw '+' as a space.
  EXPECT_NE(lower(s.requests[0].url).find("?artifacttype=application%2fvnd.kernodeck.report.v1%2bjson"), std::string::npos)
      << s.requests[0].url;
  EXPECT_EQ(s.requests[1].url, "http://127.0.0.1:5000/v2/team/app/referrers/" + subject + "?last=1");
  EXPECT_EQ(s.requests[2].url, "http://127.0.0.1:5000/v2/team/app/referrers/" + subject + "?last=2");

  // More pages than the bound: what was read, marked truncated. A page on another origin: refused.
  Script loop;
  for (int i = 0; i < 5; ++i) loop.answers.push_back(answer(200, {{"link", R"(<?again>; rel="next")"}}, page("4")));
  Client c2 = client("127.0.0.1:5000/team/app:1.0", &loop);
  auto bounded = c2.referrers(*oci::parseDigest(subject), "", ReferrersBounds{3, 1u << 20});
  ASSERT_TRUE(bounded.ok());
  EXPECT_TRUE((*bounded)->truncated);
  EXPECT_EQ((*bounded)->pages.size(), 3u);
  Script away;
  away.answers = {answer(200, {{"link", R"(<https://evil.example/v2/x>; rel="next")"}}, page("5"))};
  Client c3 = client("127.0.0.1:5000/team/app:1.0", &away);
  auto off = c3.referrers(*oci::parseDigest(subject));
  ASSERT_FALSE(off.ok());
  EXPECT_NE(off.error().message.find("another origin"), std::string::npos) << off.error().message;
  EXPECT_EQ(away.requests.size(), 1u);
}

}  // namespace registry_client_test

namespace registry_client_test {

// Issue 51 §3: an HTTPS request a plain-HTTP registry answered (OpenSSL reads its HTTP reply as
// a TLS record) says so and names --insecure; the same failure over plain HTTP does not.
TEST(RegistryClient, AnHttpsRequestAnsweredInPlainHttpNamesInsecure) {
  HttpResponse plain;
  plain.transportError = "OpenSSL/3.0.11: error:0A00010B:SSL routines::wrong version number";
  ClientOptions o;
  o.retries = 0;
  Script s;
  s.answers = {plain};
  Client c = client("registry.example.com/team/app:1.0", &s, o);
  auto m = c.manifest("1.0");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message.find("the registry answers plain HTTP, not HTTPS: use --insecure"), std::string::npos)
      << m.error().message;
  EXPECT_EQ(m.error().message.find('\n'), std::string::npos) << m.error().message;
  Script t;
  t.answers = {plain};
  Client local = client("127.0.0.1:5000/team/app:1.0", &t, o);  // loopback: plain HTTP already
  auto n = local.manifest("1.0");
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.error().message.find("--insecure"), std::string::npos) << n.error().message;
}

}  // namespace registry_client_test
