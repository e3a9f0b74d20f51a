// Trust chain III (issue 49), each attack run through the real binary against Debian's
// docker-registry (and, for the deadline, a server in this test that answers 3 bytes a second):
// - a signed pass for one repository, re-wrapped under the same digest in another repository,
//   does not decide there (only with --trust-repository naming the first);
// - a signed statement with two subjects, and a report signed for an index digest re-wrapped
//   under one of its platform manifests, do not count; a report of the platform manifest does
//   decide for the index named by digest (the gate judges the platform manifest);
// - every registry wait ends at the command's --timeout with exit 3 naming the registry;
// - --attach without --sign-key is a usage error, and an unsigned attach keeps the signed layer
//   under cosign's tag; a private key given where reports are only checked is refused.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "kernodeck/attest/cosign_layout.h"
#include "kernodeck/attest/dsse.h"
#include "kernodeck/oci/platform.h"
#include "kernodeck/registry/referrers.h"
#include "local_registry.h"
#include "support.h"

namespace integration_report_scope_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

const std::string K = KERNODECK_BIN;

class ReportScope : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    reg_ = new LocalRegistry;
    if (!reg_->start() || !haveTool("openssl")) return;
    dir_ = new std::string(tempDir("report-scope"));
    for (const char* name : {"scope", "two", "index", "unsigned"}) {
      json entries = json::array({{{"path", "etc/os-release"}, {"content", "ID=scope\n"}},
                                  {{"path", std::string("app/") + name}, {"content", name}}});
      json spec = {{"tag", "1.0"}, {"layers", json::array({{{"entries", entries}}})}};
      mkimage(spec, *dir_ + "/" + name);
      if (!reg_->push(*dir_ + "/" + name, "1.0", std::string("team/dev:") + name)) return;
    }
    // The same image in the production repository: the same manifest, the same digest.
    if (!reg_->push(*dir_ + "/scope", "1.0", "team/prod:scope")) return;
    std::string k = *dir_ + "/";
    ready_ = run("openssl genpkey -algorithm ed25519 -out " + k + "ed.pem && openssl pkey -in " + k +
                 "ed.pem -pubout -out " + k + "ed.pub")
                 .code == 0;
  }
  static void TearDownTestSuite() { delete reg_; }
  void SetUp() override {
    if (!ready_) GTEST_SKIP() << "docker-registry, skopeo, curl or openssl unavailable";
  }

  static std::string key(const std::string& name) { return *dir_ + "/" + name; }
  static std::string image(const std::string& repo, const std::string& tag) {
    return reg_->host() + "/team/" + repo + ":" + tag;
  }
  static std::string byDigest(const std::string& repo, const std::string& tag) {
    return reg_->host() + "/team/" + repo + "@" + reg_->digestOf("team/" + repo + ":" + tag);
  }
  static registry::Client client(const std::string& repo) {
    return registry::Client(*registry::parseReference(reg_->host() + "/team/" + repo),
                            registry::ClientOptions{.noCache = true});
  }
  static int attach(const std::string& repo, const std::string& tag, const std::string& flags) {
    RunResult r = run(K + " audit --no-cache --attach " + flags + " " + image(repo, tag));
    if (r.code > 1) ADD_FAILURE() << r.err;
    return r.code;
  }
  // `kernodeck gate --json --key ed.pub --image REF [EXTRA]`.
  static json gate(const std::string& ref, int* code, const std::string& extra = "") {
    RunResult r = run(K + " gate --json --retries 0 --key " + key("ed.pub") + " --image " + ref + " " + extra);
    *code = r.code;
    json j = json::parse(r.out, nullptr, false);
    if (!j.is_object()) ADD_FAILURE() << r.out << r.err;
    return j;
  }
  // The DSSE envelope of the first report attached to REPO:TAG.
  static std::string envelopeOf(const std::string& repo, const std::string& tag) {
    auto c = client(repo);
    auto refs = registry::listReferrers(c, *oci::parseDigest(reg_->digestOf("team/" + repo + ":" + tag)));
    if (!refs.ok() || refs->empty()) return "";
    auto a = registry::fetchArtifact(c, refs->front().desc.digest.str());
    if (!a.ok()) return "";
    for (const auto& b : a->blobs)
      if (b.mediaType == attest::kDsseMediaType)
        if (auto bytes = c.smallBlob(b, 1 << 20); bytes.ok()) return *bytes;
    return "";
  }
  // Pushes `envelope` as a report artifact of REPO whose subject is the manifest `subject`.
  static bool wrap(const std::string& repo, const std::string& subject, const std::string& envelope) {
    auto c = client(repo);
    auto m = c.manifest(subject);
    if (!m.ok()) return false;
    registry::Artifact a;
    a.artifactType = "application/vnd.kernodeck.report.v1+json";
    a.blobs.push_back({attest::kDsseMediaType, envelope});
    a.subject = oci::Descriptor{m->mediaType, m->digest, static_cast<int64_t>(m->bytes.size())};
    a.annotations = {{"dev.kernodeck.verdict", "pass"}};
    return registry::pushArtifact(c, a).ok();
  }
  // `envelope`'s statement changed by `edit` and signed again with the CI key (what only the
  // key's holder can do: the decisions below are about what the reader accepts from it).
  template <class Edit>
  static std::string resigned(const std::string& envelope, Edit edit) {
    auto env = attest::parseEnvelope(envelope);
    if (!env.ok()) return "";
    json st = json::parse(env->payload);
    edit(st);
    auto k = attest::Key::fromFile(key("ed.pem"));
    if (!k.ok()) return "";
    auto signed_ = attest::signEnvelope(env->payloadType, st.dump(), *k);
    return signed_.ok() ? attest::serializeEnvelope(*signed_) : "";
  }

  static LocalRegistry* reg_;
  static std::string* dir_;
  static bool ready_;
};

LocalRegistry* ReportScope::reg_ = nullptr;
std::string* ReportScope::dir_ = nullptr;
bool ReportScope::ready_ = false;

TEST_F(ReportScope, ASignedPassForOneRepositoryDoesNotDecideForAnother) {
  ASSERT_EQ(attach("dev", "scope", "--sign-key " + key("ed.pem")), 0);
  int code = -1;
  json dev = gate(byDigest("dev", "scope"), &code);
  EXPECT_EQ(code, 0) << dev.dump(1);
  EXPECT_EQ(dev["attached_report"]["reports"][0]["signed_for"], reg_->host() + "/team/dev");
  // A registry writer copies the signed envelope to the production repository, under the same
  // manifest digest: the signature still verifies, the statement names the digest.
  std::string prodDigest = reg_->digestOf("team/prod:scope");
  ASSERT_EQ(prodDigest, reg_->digestOf("team/dev:scope"));
  std::string envelope = envelopeOf("dev", "scope");
  ASSERT_FALSE(envelope.empty());
  ASSERT_TRUE(wrap("prod", prodDigest, envelope));
  json prod = gate(byDigest("prod", "scope"), &code);
  EXPECT_EQ(code, 1) << prod.dump(1);
  EXPECT_EQ(prod["attached_report"]["met"], false) << prod.dump(1);
  EXPECT_EQ(countFindings(prod, "report.subject.repository"), 1) << prod.dump(1);
  EXPECT_EQ(countFindings(prod, "probe.report.unverified"), 1) << prod.dump(1);
  RunResult listed = run(K + " reports --no-cache --json --key " + key("ed.pub") + " " + byDigest("prod", "scope"));
  EXPECT_EQ(listed.code, 1) << listed.out;
  EXPECT_EQ(countFindings(json::parse(listed.out, nullptr, false), "report.subject.repository"), 1) << listed.out;
  // A mirror is allowed only by name: the exact repository, or a glob over it.
  json mirror = gate(byDigest("prod", "scope"), &code, "--trust-repository " + reg_->host() + "/team/dev");
  EXPECT_EQ(code, 0) << mirror.dump(1);
  json glob = gate(byDigest("prod", "scope"), &code, "--trust-repository '" + reg_->host() + "/team/d*'");
  EXPECT_EQ(code, 0) << glob.dump(1);
  json other = gate(byDigest("prod", "scope"), &code, "--trust-repository " + reg_->host() + "/team/qa");
  EXPECT_EQ(code, 1) << other.dump(1);
  EXPECT_EQ(run(K + " reports --no-cache --key " + key("ed.pub") + " --trust-repository " + reg_->host() +
                "/team/dev " + byDigest("prod", "scope"))
                .code,
            0);
}

TEST_F(ReportScope, AStatementForTwoImagesDoesNotCount) {
  ASSERT_EQ(attach("dev", "two", "--sign-key " + key("ed.pem")), 0);
  std::string digest = reg_->digestOf("team/dev:two");
  std::string other = reg_->digestOf("team/dev:scope");
  std::string two = resigned(envelopeOf("dev", "two"), [&](json& st) {
    st["subject"].push_back({{"name", reg_->host() + "/team/dev"}, {"digest", {{"sha256", other.substr(7)}}}});
  });
  ASSERT_FALSE(two.empty());
  // Only the two-subject statement, under a fresh repository holding the same image.
  ASSERT_TRUE(reg_->push(*dir_ + "/two", "1.0", "team/pair:two"));
  ASSERT_TRUE(wrap("pair", digest, two));
  int code = -1;
  json r = gate(byDigest("pair", "two"), &code, "--trust-repository " + reg_->host() + "/team/dev");
  EXPECT_EQ(code, 1) << r.dump(1);
  EXPECT_EQ(countFindings(r, "report.subject.multiple"), 1) << r.dump(1);
}

TEST_F(ReportScope, AReportBindsTheManifestItWasSignedForNotItsIndex) {
  // An index over the platform manifest of this host (linux/amd64 or arm64), pushed as tag "multi".
  std::string platformDigest = reg_->digestOf("team/dev:index");
  auto c = client("dev");
  auto m = c.manifest(platformDigest);
  ASSERT_TRUE(m.ok());
  json index = {{"schemaVersion", 2},
                {"mediaType", oci::media::kOciIndex},
                {"manifests",
                 {{{"mediaType", m->mediaType},
                   {"digest", platformDigest},
                   {"size", m->bytes.size()},
                   {"platform", {{"os", "linux"}, {"architecture", oci::hostPlatform().architecture}}}}}}};
  auto pushed = c.putManifest("multi", index.dump(), oci::media::kOciIndex);
  ASSERT_TRUE(pushed.ok()) << pushed.error().message;
  std::string indexRef = reg_->host() + "/team/dev@" + pushed->digest.str();
  // The platform manifest's signed pass decides for the index named by digest: the gate judges
  // the platform manifest the index resolves to on this host.
  ASSERT_EQ(attach("dev", "index", "--sign-key " + key("ed.pem")), 0);
  int code = -1;
  json viaIndex = gate(indexRef, &code);
  EXPECT_EQ(code, 0) << viaIndex.dump(1);
  EXPECT_EQ(viaIndex["attached_report"]["manifest_digest"], platformDigest);
  // A statement signed for the index digest, re-wrapped under the platform manifest in a
  // repository where nothing else is attached: it is about another manifest, and does not count.
  std::string forIndex = resigned(envelopeOf("dev", "index"), [&](json& st) {
    st["subject"][0]["digest"] = {{"sha256", pushed->digest.encoded}};
  });
  ASSERT_FALSE(forIndex.empty());
  ASSERT_TRUE(reg_->push(*dir_ + "/index", "1.0", "team/plat:index"));
  ASSERT_TRUE(wrap("plat", platformDigest, forIndex));
  json wrapped = gate(byDigest("plat", "index"), &code, "--trust-repository " + reg_->host() + "/team/dev");
  EXPECT_EQ(code, 1) << wrapped.dump(1);
  EXPECT_EQ(countFindings(wrapped, "report.subject.mismatch"), 1) << wrapped.dump(1);
  // And the same statement attached to the index itself decides nothing for a pod of the index:
  // the gate judges the platform manifest, which carries no report in this repository.
  auto pc = client("plat");
  ASSERT_TRUE(pc.putManifest("multi", index.dump(), oci::media::kOciIndex).ok());
  ASSERT_TRUE(wrap("plat", pushed->digest.str(), forIndex));
  json plat = gate(reg_->host() + "/team/plat@" + pushed->digest.str(), &code,
                   "--trust-repository " + reg_->host() + "/team/dev");
  EXPECT_EQ(code, 1) << plat.dump(1);
  EXPECT_EQ(plat["attached_report"]["met"], false) << plat.dump(1);
}

// A server on loopback that answers every request with a 200 whose body comes 3 bytes a second
// (fast enough for libcurl's stall limit of 1 byte/s): without an overall deadline a gate would
// wait for hours. Stops when the test ends.
class SlowServer {
 public:
  bool start() {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    if (fd_ < 0 || ::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || ::listen(fd_, 16) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&a), &len) != 0)
      return false;
    port_ = ntohs(a.sin_port);
    thread_ = std::thread([this] { serve(); });
    return true;
  }
  ~SlowServer() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  std::string host() const { return "127.0.0.1:" + std::to_string(port_); }
  int connections() const { return connections_; }

 private:
  void serve() {
    std::vector<int> clients;
    auto next = std::chrono::steady_clock::now();
    while (!stop_) {
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) > 0) {
        int c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (c >= 0) {
          ++connections_;
          std::string head =
              "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.oci.image.manifest.v1+json\r\n"
              "Content-Length: 100000\r\n\r\n";
          (void)!::send(c, head.data(), head.size(), MSG_NOSIGNAL);
          clients.push_back(c);
        }
      }
      if (std::chrono::steady_clock::now() < next) continue;
      next += std::chrono::seconds(1);
      for (size_t i = 0; i < clients.size();) {
        char drain[4096];
        while (::recv(clients[i], drain, sizeof drain, 0) > 0) {
        }
        if (::send(clients[i], "{  ", 3, MSG_NOSIGNAL) != 3) {
          ::close(clients[i]);
          clients.erase(clients.begin() + static_cast<long>(i));
        } else {
          ++i;
        }
      }
    }
    for (int c : clients) ::close(c);
  }

  int fd_ = -1, port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread thread_;
};

TEST(ReportDeadline, EveryRegistryWaitEndsAtTheCommandsTimeout) {
  SlowServer slow;
  ASSERT_TRUE(slow.start());
  std::string ref = slow.host() + "/team/app@sha256:" + std::string(64, 'a');
  std::string dir = tempDir("report-deadline");
  ASSERT_EQ(run("openssl genpkey -algorithm ed25519 -out " + dir + "/k.pem && openssl pkey -in " + dir +
                "/k.pem -pubout -out " + dir + "/k.pub")
                .code,
            0);
  struct Case {
    std::string what, command;
  } cases[] = {
      {"gate", K + " gate --key " + dir + "/k.pub --image " + ref + " --timeout 2s --termination-log " + dir + "/t"},
      {"probe --require-report", K + " probe --expect cpu --host-record /nonexistent --host-root /nonexistent " +
                                     "--require-report --key " + dir + "/k.pub --image " + ref + " --timeout 2s"},
      {"reports", K + " reports --no-cache --key " + dir + "/k.pub --timeout 2s " + ref},
      {"audit", K + " audit --no-cache --timeout 2s " + ref},
  };
  for (const auto& c : cases) {
    auto t0 = std::chrono::steady_clock::now();
    RunResult r = run("timeout 120 " + c.command);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.code, 3) << c.what << ": " << r.out << r.err;
    // Ended at its deadline, not at the server's pace (100,000 bytes at 3 a second) or a stall
    // limit: a generous bound for a loaded machine.
    EXPECT_LT(s, 60) << c.what;
    std::string all = r.out + r.err;
    EXPECT_NE(all.find("deadline of 2s (--timeout) passed"), std::string::npos) << c.what << ": " << all;
    EXPECT_NE(all.find(slow.host()), std::string::npos) << c.what << ": " << all;
  }
  EXPECT_GE(slow.connections(), 4);
  // The gate writes why for `kubectl describe` too.
  EXPECT_NE(readFile(dir + "/t").find("deadline"), std::string::npos) << readFile(dir + "/t");
  // A bare number is refused: --timeout is a duration now, the connect timeout is --connect-timeout.
  RunResult bare = run(K + " gate --key " + dir + "/k.pub --image " + ref + " --timeout 2");
  EXPECT_EQ(bare.code, 2) << bare.err;
  EXPECT_NE(bare.err.find("--connect-timeout"), std::string::npos) << bare.err;
  RunResult bareReports = run(K + " reports --no-cache --timeout 2 " + ref);
  EXPECT_EQ(bareReports.code, 2) << bareReports.err;
}

TEST_F(ReportScope, AnAttachWithoutAKeyIsRefusedAndAnUnsignedOneKeepsTheSignedLayer) {
  RunResult forgot = run(K + " audit --no-cache --attach " + image("dev", "unsigned"));
  EXPECT_EQ(forgot.code, 2) << forgot.err;
  EXPECT_NE(forgot.err.find("--sign-key"), std::string::npos) << forgot.err;
  EXPECT_NE(forgot.err.find("--unsigned"), std::string::npos) << forgot.err;
  auto c = client("dev");
  auto subject = *oci::parseDigest(reg_->digestOf("team/dev:unsigned"));
  EXPECT_FALSE(c.manifest(attest::cosignAttestationTag(subject)).ok()) << "attached although refused";

  ASSERT_EQ(attach("dev", "unsigned", "--sign-key " + key("ed.pem")), 0);
  auto layersUnderTag = [&] {
    std::vector<std::string> out;
    auto m = client("dev").manifest(attest::cosignAttestationTag(subject));
    if (!m.ok()) ADD_FAILURE() << attest::cosignAttestationTag(subject) << ": " << m.error().message;
    json doc = m.ok() ? json::parse(m->bytes) : json::object();  // kept: the loop reads into it
    for (const auto& l : doc.value("layers", json::array())) out.push_back(l["digest"]);
    return out;
  };
  std::vector<std::string> signedLayers = layersUnderTag();
  ASSERT_EQ(signedLayers.size(), 1u);
  ASSERT_EQ(attach("dev", "unsigned", "--unsigned"), 0);
  std::vector<std::string> after = layersUnderTag();
  EXPECT_EQ(after.size(), 2u);
  EXPECT_NE(std::find(after.begin(), after.end(), signedLayers[0]), after.end()) << "the signed layer was removed";
  int code = -1;
  json r = gate(byDigest("dev", "unsigned"), &code);
  EXPECT_EQ(code, 0) << r.dump(1);
  EXPECT_EQ(run(K + " audit --no-cache --unsigned " + image("dev", "unsigned")).code, 2);
}

TEST_F(ReportScope, APrivateKeyIsRefusedWhereReportsAreOnlyChecked) {
  for (const std::string& cmd :
       {K + " reports --no-cache --key " + key("ed.pem") + " " + image("dev", "scope"),
        K + " gate --key " + key("ed.pem") + " --image " + byDigest("dev", "scope"),
        K + " probe --expect cpu --require-report --key " + key("ed.pem") + " --image " + byDigest("dev", "scope")}) {
    RunResult r = run(cmd);
    EXPECT_EQ(r.code, 2) << cmd << "\n" << r.err;
    EXPECT_NE(r.err.find("is a private key"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("-pubout"), std::string::npos) << r.err;
  }
  // The gate's usage errors reach `kubectl describe` too: a tag where a digest belongs.
  std::string log = *dir_ + "/usage-termination-log";
  RunResult tag = run("KERNODECK_IMAGE=" + image("dev", "scope") + " " + K + " gate --key " + key("ed.pub") +
                      " --termination-log " + log);
  EXPECT_EQ(tag.code, 2) << tag.err;
  EXPECT_NE(readFile(log).find("exit 2; usage: the gate: image"), std::string::npos) << readFile(log);
  EXPECT_NE(readFile(log).find("not named by digest"), std::string::npos) << readFile(log);
}

}  // namespace

}  // namespace integration_report_scope_test
