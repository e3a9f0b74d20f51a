// `kernodeck audit` against Debian's docker-registry on loopback: by tag and by
// digest, multi-platform, the blob cache, Bearer and Basic auth (credential
// files and a credential helper), and a fault-injecting proxy.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <random>

#include "kernodeck/util/hash.h"
#include "support.h"

namespace integration_registry_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;

int freePort() {
  static std::mt19937 rng(static_cast<unsigned>(::getpid()) * 7919u + static_cast<unsigned>(time(nullptr)));
  return 20000 + static_cast<int>(rng() % 30000);
}

// Up to 30 s: a registry starting while the other test of `ctest -j2` loads both cores.
bool waitHttp(int port, const std::string& path = "/v2/") {
  for (int i = 0; i < 300; ++i) {
    RunResult r = run("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:" + std::to_string(port) + path);
    if (r.out != "000" && !r.out.empty()) return true;
    ::usleep(100000);
  }
  return false;
}

struct Process {
  int pid = 0;
  ~Process() {
    if (pid > 0) ::kill(-pid, SIGKILL);
  }
};

// Starts `cmd` in its own process group; returns its pid.
int spawn(const std::string& cmd, const std::string& log) {
  RunResult r = run("setsid sh -c '" + cmd + " > " + log + " 2>&1' & echo $!");
  return std::atoi(r.out.c_str());
}

class Registry : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (!haveTool("docker-registry") || !haveTool("skopeo") || !haveTool("curl")) return;
    dir_ = new std::string(tempDir("registry"));
    bool up = false;
    for (int attempt = 0; attempt < 5 && !up; ++attempt) {  // another test may hold a random port
      delete proc_;
      port_ = freePort();
      writeFile(*dir_ + "/config.yml",
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: " + *dir_ +
                    "/data\nhttp:\n  addr: 127.0.0.1:" + std::to_string(port_) + "\n");
      proc_ = new Process{spawn("exec docker-registry serve " + *dir_ + "/config.yml", *dir_ + "/registry.log")};
      up = waitHttp(port_) && run("grep -q 'address already in use' " + *dir_ + "/registry.log").code != 0;
    }
    if (!up) return;
    // A clean image and a two-platform index.
    json spec = {
        {"tag", "1.0"},
        {"config", {{"Env", {"PATH=/bin"}}}},
        {"layers",
         json::array({{{"compression", "gzip"},
                       {"entries", json::array({{{"path", "etc/os-release"}, {"content", "ID=regtest\n"}},
                                                {{"path", "bin/data"}, {"size", 200000}, {"fill", "d"}}})}},
                      {{"compression", "zstd"}, {"entries", json::array({{{"path", "app/x"}, {"content", "x"}}})}}})}};
    mkimage(spec, *dir_ + "/img");
    json arm = spec;
    arm.erase("tag");
    json amd = arm;
    arm["architecture"] = "arm64";
    arm["layers"][0]["entries"][0]["content"] = "ID=regarm\n";
    mkimage({{"tag", "multi"}, {"platforms", {amd, arm}}}, *dir_ + "/multi");
    std::string dest = "docker://127.0.0.1:" + std::to_string(port_);
    pushed_ =
        run("skopeo copy -q --dest-tls-verify=false oci:" + *dir_ + "/img:1.0 " + dest + "/team/demo:1.0").code == 0 &&
        run("skopeo copy -q --all --dest-tls-verify=false oci:" + *dir_ + "/multi:multi " + dest + "/team/multi:2.0")
                .code == 0;
    digest_ = run("skopeo inspect --tls-verify=false --format '{{.Digest}}' " + dest + "/team/demo:1.0").out;
    digest_.erase(digest_.find_last_not_of("\n") + 1);
  }
  static void TearDownTestSuite() {
    delete proc_;
    proc_ = nullptr;
  }
  void SetUp() override {
    if (!pushed_) GTEST_SKIP() << "docker-registry, skopeo or curl unavailable";
  }
  static std::string ref(const std::string& repoTag, int port = 0) {
    return "127.0.0.1:" + std::to_string(port ? port : port_) + "/" + repoTag;
  }
  // A fault proxy in front of the registry.
  struct Proxy {
    Process proc;
    int port;
    std::string log;
  };
  std::unique_ptr<Proxy> proxy(const std::string& mode) {
    auto p = std::make_unique<Proxy>();
    p->log = tempDir("proxy") + "/requests.log";
    writeFile(p->log, "");
    // Port 0: the proxy binds a free port and writes it next to its log.
    p->proc.pid = spawn("exec python3 " + std::string(SOURCE_DIR) +
                            "/tests/registry/fault_proxy.py 0 http://127.0.0.1:" + std::to_string(port_) + " " + mode +
                            " " + p->log,
                        p->log + ".out");
    for (int i = 0; i < 200 && readFile(p->log + ".port").empty(); ++i) ::usleep(50000);
    p->port = std::atoi(readFile(p->log + ".port").c_str());
    EXPECT_GT(p->port, 0) << readFile(p->log + ".out");
    EXPECT_TRUE(waitHttp(p->port, "/token"));
    return p;
  }
  static int countLines(const std::string& file, const std::string& needle) {
    int n = 0;
    std::string s = readFile(file);
    for (size_t pos = 0; (pos = s.find(needle, pos)) != std::string::npos; ++pos) ++n;
    return n;
  }

  static std::string* dir_;
  static Process* proc_;
  static int port_;
  static bool pushed_;
  static std::string digest_;
};

std::string* Registry::dir_ = nullptr;
Process* Registry::proc_ = nullptr;
int Registry::port_ = 0;
bool Registry::pushed_ = false;
std::string Registry::digest_;

TEST_F(Registry, ByTagAndByDigest) {
  std::string cache = tempDir("cache");
  int code = -1;
  json byTag = auditJson("--cache-dir " + cache + " " + ref("team/demo:1.0"), &code);
  ASSERT_TRUE(byTag.is_object());
  EXPECT_EQ(code, 0) << byTag.dump(1);
  EXPECT_EQ(byTag["subject"]["transport"], "docker");
  EXPECT_EQ(byTag["subject"]["manifest_digest"], digest_);
  EXPECT_EQ(byTag["os"]["id"], "regtest");
  EXPECT_EQ(countFindings(byTag, "image.tag.mutable"), 1);
  EXPECT_NE(byTag["findings"][0]["message"].get<std::string>().find(digest_), std::string::npos);
  json byDigest = auditJson("--no-cache " + ref("team/demo@" + digest_), &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(countFindings(byDigest, "image.tag.mutable"), 0);
  // Tag and digest: the digest wins, the tag is reported.
  json both = auditJson("--no-cache " + ref("team/demo:nosuchtag@" + digest_), &code);
  EXPECT_EQ(code, 0) << both.dump(1);
  EXPECT_EQ(both["subject"]["manifest_digest"], digest_);
  EXPECT_EQ(both["subject"]["tag"], "nosuchtag");
}

TEST_F(Registry, MultiPlatformIndex) {
  int code = -1;
  json r = auditJson("--no-cache --platform linux/arm64 " + ref("team/multi:2.0"), &code);
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(r["os"]["id"], "regarm");
  EXPECT_TRUE(r["subject"].contains("index_digest"));
}

TEST_F(Registry, ASecondAuditDownloadsNothing) {
  auto p = proxy("ok");
  std::string cache = tempDir("cache2");
  std::string target = "127.0.0.1:" + std::to_string(p->port) + "/team/demo:1.0";
  int code = -1;
  auditJson("--cache-dir " + cache + " " + target, &code);
  EXPECT_EQ(code, 0);
  int first = countLines(p->log, "/blobs/");
  EXPECT_GE(first, 3);  // config and two layers
  writeFile(p->log, "");
  json again = auditJson("--cache-dir " + cache + " " + target, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(countLines(p->log, "/blobs/"), 0) << readFile(p->log);
  // The per-layer results are cached too: the second audit read no layer.
  EXPECT_NE(run("ls " + cache + "/layers/sha256").out, "");
  // Corrupted blob cache entries are detected on read, dropped and fetched again.
  run("for f in " + cache + "/blobs/sha256/*; do printf X >> $f; done; rm -rf " + cache + "/layers " + cache +
      "/results");
  writeFile(p->log, "");
  auditJson("--cache-dir " + cache + " " + target, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(countLines(p->log, "/blobs/"), first);
  EXPECT_EQ(run("ls " + cache + "/tmp").out, "");  // no temp file left behind
}

// The steps after "config" are replayed from the outcome of the same analysis of the same
// image; the report is the same but for the steps' "cached" marks and durations and its time.
TEST_F(Registry, ASecondAuditReplaysTheSameAnalysis) {
  std::string cache = tempDir("cache-results");
  std::string target = ref("team/demo:1.0");
  int code = -1;
  auto strip = [](json r) {
    r.erase("steps");
    r.erase("created");  // the audits' own times: a second may pass between them
    r["subject"].erase("cached_result");
    return r;
  };
  auto cachedSteps = [](const json& r) {
    int n = 0;
    for (const auto& s : r["steps"]) n += s.value("cached", false) ? 1 : 0;
    return n;
  };
  json first = auditJson("--cache-dir " + cache + " " + target, &code);
  EXPECT_EQ(cachedSteps(first), 0);
  json second = auditJson("--cache-dir " + cache + " " + target, &code);
  EXPECT_EQ(cachedSteps(second), 4) << second["steps"].dump();
  EXPECT_TRUE(second["subject"].contains("cached_result"));
  EXPECT_EQ(strip(first), strip(second));
  json fresh = auditJson("--reanalyze --cache-dir " + cache + " " + target, &code);
  EXPECT_EQ(cachedSteps(fresh), 0);
  EXPECT_EQ(strip(first), strip(fresh));
  // A damaged entry is ignored: the image is analysed again and the entry rewritten.
  run("for f in " + cache + "/results/sha256/*; do printf '{\"steps\": 1' > $f; done");
  json again = auditJson("--cache-dir " + cache + " " + target, &code);
  EXPECT_EQ(cachedSteps(again), 0);
  EXPECT_EQ(strip(first), strip(again));
  EXPECT_EQ(cachedSteps(auditJson("--cache-dir " + cache + " " + target, &code)), 4);
  // Other requirement files are another analysis.
  std::string req = cache + "/req.txt";
  writeFile(req, "nothing==1.0\n");
  EXPECT_EQ(cachedSteps(auditJson("-r " + req + " --cache-dir " + cache + " " + target, &code)), 0);
  EXPECT_EQ(cachedSteps(auditJson("-r " + req + " --cache-dir " + cache + " " + target, &code)), 4);
}

// A registry that speaks only TLS, with a certificate from a CA of the test's own: reached over
// https although on loopback, refused without its CA, verified with --cert-dir, and accepted
// unverified with --tls-verify=false.
TEST(RegistryTls, CertDirTrustsTheRegistrysCa) {
  if (!haveTool("docker-registry") || !haveTool("skopeo") || !haveTool("openssl"))
    GTEST_SKIP() << "needs docker-registry, skopeo, openssl";
  std::string dir = tempDir("tls-registry");
  std::string q = "cd " + dir + " && ";
  ASSERT_EQ(run(q + "openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj '/CN=kernodeck "
                    "test CA' && "
                    "openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj /CN=127.0.0.1 && "
                    "printf 'subjectAltName=IP:127.0.0.1\\n' > ext.cnf && "
                    "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 "
                    "-extfile ext.cnf && "
                    "mkdir certs && cp ca.crt certs/")
                .code,
            0);
  Process proc;
  int port = 0;
  for (int attempt = 0; attempt < 5 && port == 0; ++attempt) {
    int p = freePort();
    writeFile(dir + "/config.yml",
              "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: " + dir +
                  "/data\nhttp:\n  addr: 127.0.0.1:" + std::to_string(p) + "\n  tls:\n    certificate: " + dir +
                  "/server.crt\n    key: " + dir + "/server.key\n");
    if (proc.pid > 0) ::kill(-proc.pid, SIGKILL);
    proc.pid = spawn("exec docker-registry serve " + dir + "/config.yml", dir + "/registry.log");
    for (int i = 0; i < 100; ++i) {
      if (run("curl -s --cacert " + dir + "/ca.crt -o /dev/null https://127.0.0.1:" + std::to_string(p) + "/v2/")
              .code == 0) {
        port = p;
        break;
      }
      ::usleep(100000);
    }
  }
  ASSERT_GT(port, 0) << readFile(dir + "/registry.log");
  json spec = {
      {"tag", "1.0"},
      {"layers", json::array({{{"entries", json::array({{{"path", "etc/os-release"}, {"content", "ID=tls\n"}}})}}})}};
  mkimage(spec, dir + "/img");
  std::string target = "127.0.0.1:" + std::to_string(port) + "/team/tls:1.0";
  ASSERT_EQ(run("skopeo copy -q --dest-cert-dir " + dir + "/certs oci:" + dir + "/img:1.0 docker://" + target).code, 0);

  RunResult untrusted = run(K + " audit --no-cache " + target);
  EXPECT_EQ(untrusted.code, 3);
  EXPECT_NE(untrusted.err.find("https://127.0.0.1"), std::string::npos) << untrusted.err;
  EXPECT_NE(untrusted.err.find("--cert-dir"), std::string::npos) << untrusted.err;
  EXPECT_EQ(std::count(untrusted.err.begin(), untrusted.err.end(), '\n'), 1) << untrusted.err;

  RunResult trusted = run(K + " audit --json --no-cache --cert-dir " + dir + "/certs " + target);
  EXPECT_EQ(trusted.code, 0) << trusted.err;
  json r = json::parse(trusted.out, nullptr, false);
  ASSERT_TRUE(r.is_object()) << trusted.out;
  EXPECT_EQ(r["os"]["id"], "tls");

  EXPECT_EQ(run(K + " audit --no-cache --tls-verify=false " + target).code, 0);
}

TEST_F(Registry, FaultsEndInSuccessOrACleanFailure) {
  struct Case {
    const char* mode;
    int code;
    const char* err;
  } cases[] = {
      {"429", 0, ""},
      {"5xx", 0, ""},
      {"drop", 0, ""},
      {"wrongdigest", 3, "hash to"},
      {"html", 3, "not a JSON manifest"},
      {"stall", 3, "blob"},
  };
  for (const auto& c : cases) {
    auto p = proxy(c.mode);
    auto t0 = std::chrono::steady_clock::now();
    RunResult r = run(K + " audit --json --no-cache --retries 3 --stall-timeout 2 --retry-max-time 10 127.0.0.1:" +
                      std::to_string(p->port) + "/team/demo:1.0");
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.code, c.code) << c.mode << "\n" << r.err << readFile(p->log);
    EXPECT_LT(secs, 60.0) << c.mode;
    if (c.code != 0) {
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.mode << ": " << r.err;
      EXPECT_NE(r.err.find(c.err), std::string::npos) << c.mode << ": " << r.err;
      EXPECT_NE(r.err.find("team/demo"), std::string::npos) << c.mode << ": " << r.err;
    } else {
      json j = json::parse(r.out);
      EXPECT_EQ(j["os"]["id"], "regtest") << c.mode;
    }
    if (std::string(c.mode) == "drop") {
      EXPECT_GE(countLines(p->log, "200-cut"), 1);  // cut once, then resumed with Range
      EXPECT_GE(countLines(p->log, " 206"), 1);
    }
  }
}

TEST_F(Registry, BearerTokensAndCredentialHelpers) {
  auto p = proxy("bearer");
  std::string target = "127.0.0.1:" + std::to_string(p->port) + "/team/demo:1.0";
  std::string host = "127.0.0.1:" + std::to_string(p->port);
  std::string cfg = tempDir("dockercfg");
  // No credentials: a clean failure.
  RunResult none =
      run("DOCKER_CONFIG=" + cfg + " REGISTRY_AUTH_FILE= XDG_RUNTIME_DIR= " + K + " audit --no-cache " + target);
  EXPECT_EQ(none.code, 3);
  EXPECT_NE(none.err.find("token request"), std::string::npos) << none.err;
  // docker config.json with a base64 auth field.
  writeFile(cfg + "/config.json", json({{"auths", {{host, {{"auth", "YWxpY2U6d29uZGVybGFuZA=="}}}}}}).dump());
  RunResult ok = run("DOCKER_CONFIG=" + cfg + " " + K + " audit --json --no-cache " + target);
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_EQ(ok.out.find("wonderland"), std::string::npos);
  EXPECT_EQ(ok.err.find("wonderland"), std::string::npos);
  // A credential helper.
  std::string bin = tempDir("helper");
  writeFile(bin + "/docker-credential-kdktest",
            "#!/bin/sh\nread host\n[ \"$1\" = get ] && printf "
            "'{\"ServerURL\":\"%s\",\"Username\":\"alice\",\"Secret\":\"wonderland\"}' \"$host\"\n");
  ::chmod((bin + "/docker-credential-kdktest").c_str(), 0755);
  writeFile(cfg + "/config.json", json({{"credHelpers", {{host, "kdktest"}}}}).dump());
  RunResult helper = run("PATH=" + bin + ":$PATH DOCKER_CONFIG=" + cfg + " " + K + " audit --no-cache " + target);
  EXPECT_EQ(helper.code, 0) << helper.err;
  EXPECT_EQ(helper.out.find("wonderland"), std::string::npos);
  // Wrong credentials.
  writeFile(cfg + "/auth.json", json({{"auths", {{host, {{"auth", "YWxpY2U6bm9wZQ=="}}}}}}).dump());
  RunResult bad = run("REGISTRY_AUTH_FILE=" + cfg + "/auth.json " + K + " audit --no-cache " + target);
  EXPECT_EQ(bad.code, 3);
  EXPECT_NE(bad.err.find("401"), std::string::npos) << bad.err;
}

TEST_F(Registry, BasicAuthOnTheRealRegistry) {
  if (!haveTool("htpasswd")) GTEST_SKIP() << "htpasswd (apache2-utils) is not installed";
  std::string d = tempDir("basicreg");
  int port = freePort();
  ASSERT_EQ(run("htpasswd -Bbn bob builder > " + d + "/htpasswd").code, 0);
  writeFile(d + "/config.yml", "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: " + d +
                                   "/data\nauth:\n  htpasswd:\n    realm: kdk\n    path: " + d +
                                   "/htpasswd\nhttp:\n  addr: 127.0.0.1:" + std::to_string(port) + "\n");
  Process reg{spawn("exec docker-registry serve " + d + "/config.yml", d + "/log")};
  ASSERT_TRUE(waitHttp(port)) << "docker-registry on port " << port << " did not answer: " << readFile(d + "/log");
  ASSERT_EQ(run("skopeo copy -q --dest-tls-verify=false --dest-creds bob:builder oci:" + *dir_ + "/img:1.0 docker://" +
                ref("team/demo:1.0", port))
                .code,
            0);
  writeFile(d + "/auth.json",
            json({{"auths", {{"127.0.0.1:" + std::to_string(port), {{"auth", "Ym9iOmJ1aWxkZXI="}}}}}}).dump());
  RunResult ok = run(K + " audit --no-cache --authfile " + d + "/auth.json " + ref("team/demo:1.0", port));
  EXPECT_EQ(ok.code, 0) << ok.err;
  RunResult anon =
      run("REGISTRY_AUTH_FILE= DOCKER_CONFIG=" + d + " " + K + " audit --no-cache " + ref("team/demo:1.0", port));
  EXPECT_EQ(anon.code, 3);
  EXPECT_NE(anon.err.find("credentials"), std::string::npos) << anon.err;
  EXPECT_EQ(anon.err.find("builder"), std::string::npos);
}

// Issue 51 §3: a tag that is not there names the tags that are (up to ten), in one line.
TEST_F(Registry, AMissingTagNamesTheTagsThereAre) {
  RunResult r = run(K + " audit --no-cache " + ref("team/demo:1.1"));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("manifest 1.1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(the repository's tags: 1.0)"), std::string::npos) << r.err;
}

TEST_F(Registry, UnreachableRegistryFailsFast) {
  auto t0 = std::chrono::steady_clock::now();
  RunResult r = run(K + " audit --no-cache --retries 1 --retry-max-time 2 --connect-timeout 2 --timeout 30s " +
                    "127.0.0.1:1/team/demo:1.0");
  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("cannot reach"), std::string::npos) << r.err;
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 15.0);
  RunResult badRef = run(K + " audit 'UPPER/Case:tag'");
  EXPECT_EQ(badRef.code, 3);
  EXPECT_NE(badRef.err.find("invalid image reference"), std::string::npos) << badRef.err;
}

// A soak: audits through proxies injecting random faults, some killed midway, all
// sharing one cache. Every run ends in a correct report or a clean error, the cache
// stays valid, and no temporary file is left behind. Bounded in count and time.
TEST_F(Registry, SoakWithRandomFaultsLeavesTheCacheValid) {
  const char* modes[] = {"ok", "429", "5xx", "drop", "wrongdigest", "html"};
  std::vector<std::unique_ptr<Proxy>> proxies;
  for (const char* m : modes) proxies.push_back(proxy(m));
  std::string cache = tempDir("soak-cache");
  std::mt19937 rng(12345);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(150);
  int runs = 0, killed = 0;
  for (; runs < 200 && std::chrono::steady_clock::now() < deadline; ++runs) {
    size_t m = rng() % 6;
    bool kill = rng() % 8 == 0;
    // Half the runs use the shared cache; a fault must never poison it.
    std::string cacheArg = rng() % 2 ? "--cache-dir " + cache : "--no-cache";
    std::string cmd = std::string(kill ? "timeout -s KILL 0.15 " : "timeout 60 ") + K +
                      " audit --json --retries 2 --retry-max-time 3 " + cacheArg +
                      " 127.0.0.1:" + std::to_string(proxies[m]->port) + "/team/demo:1.0";
    RunResult r = run(cmd);
    if (kill && r.code == 137) {
      ++killed;
      continue;
    }
    // ok, 429, 5xx and drop must recover; a corrupted blob fails unless a valid cache entry serves it;
    // a broken manifest always fails.
    bool mustFail = m == 5 || (m == 4 && cacheArg == "--no-cache");
    if (r.code == 0) {
      ASSERT_FALSE(mustFail) << modes[m];
      ASSERT_EQ(json::parse(r.out)["os"]["id"], "regtest") << modes[m];
    } else {
      ASSERT_GE(m, 4u) << modes[m] << " did not recover\n" << r.err;
      ASSERT_EQ(r.code, 3) << modes[m] << "\n" << r.err;
      ASSERT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    }
  }
  EXPECT_GE(runs, 100);
  EXPECT_GE(killed, 1);
  // Every cache entry still hashes to its name, and nothing temporary is left.
  RunResult check =
      run("cd " + cache +
          "/blobs/sha256 && for f in *; do [ \"$(sha256sum $f | cut -c1-64)\" = \"$f\" ] || echo BAD $f; done");
  EXPECT_EQ(check.out, "");
  EXPECT_EQ(run("ls -A " + cache + "/tmp").out, "");
}

// apk's SHA-1 checksums in a registry image: the second read of the layer that hashes the apk
// file is kept in the layer's cached scan, so a fresh analysis from the cache verifies it too.
TEST_F(Registry, ApkChecksumsAreKeptInTheLayerCache) {
  const std::string content =
      "\x7f"
      "ELF busybox";
  kernodeck::util::Hasher h("sha1");
  h.update(content);
  std::string raw = h.raw();
  std::string sha1 = kernodeck::util::toHex(raw);
  std::string installed =
      "C:Q1AAAA\nP:busybox\nV:1.0-r0\nA:x86_64\nF:bin\nR:busybox\nZ:Q1" + kernodeck::util::base64Encode(raw) + "\n\n";
  json spec = {
      {"tag", "1.0"},
      {"layers",
       json::array({{{"entries", json::array({{{"path", "bin/busybox"}, {"content", content}, {"mode", 0755}},
                                              {{"path", "lib/apk/db/installed"}, {"content", installed}}})}}})}};
  std::string dir = tempDir("apkreg");
  ASSERT_FALSE(mkimage(spec, dir + "/img").empty());
  ASSERT_EQ(run("skopeo copy -q --dest-tls-verify=false oci:" + dir + "/img:1.0 docker://" + ref("team/apk:1.0")).code,
            0);
  std::string cache = tempDir("cache-apk");
  for (const char* extra : {"", "--reanalyze "}) {
    int code = -1;
    json r = auditJson(std::string(extra) + "--cache-dir " + cache + " " + ref("team/apk:1.0"), &code);
    ASSERT_TRUE(r.is_object());
    EXPECT_EQ(code, 0) << r["findings"].dump(1);
    EXPECT_EQ(r["os_packages"]["files_verified"], 1) << extra << r["os_packages"].dump(1);
    EXPECT_EQ(countFindings(r, "os.package.unverifiable"), 0) << extra << r["findings"].dump(1);
    EXPECT_EQ(run("grep -l " + sha1 + " " + cache + "/layers/sha256/*.tsv").code, 0) << extra;
  }
}

}  // namespace
}  // namespace integration_registry_test
