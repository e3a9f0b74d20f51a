// Credential shapes planted everywhere an image can carry them: none may reach
// stdout, stderr, a report, an expectation, a dossier, or the hook's log.
#include <gtest/gtest.h>

#include "support.h"

namespace integration_secrets_test {

using nlohmann::json;
using namespace kdktest;

namespace {
const std::string K = KERNODECK_BIN;
}

TEST(Secrets, NeverPrintedAnywhere) {
  // The secret parts only; each must never appear in any output.
  const std::vector<std::string> secrets = {
      "hunter2pw",        "hf_AbCdEfGhIjKlMnOpQrStUvWx12", "ghp_0123456789abcdefghijABCDEFGHIJ", "AKIAIOSFODNN7EXAMPLE",
      "s3cr3tT0kenValue", "xoxb-1234567890-secretslack",   "glpat-ABCDEFGHIJKLMNOPQRST"};
  std::string site = "usr/local/lib/python3.11/site-packages/";
  json entries = json::array({
      {{"path", "usr/local/bin/python3.11"}, {"content", "ELF"}},
      {{"path", site + "pkg-1.0.dist-info/METADATA"}, {"content", "Name: pkg\nVersion: 1.0\n"}},
      {{"path", site + "pkg-1.0.dist-info/direct_url.json"},
       {"content", R"({"url":"https://builder:hunter2pw@git.example.com/pkg.tar.gz","archive_info":{}})"}},
      {{"path", "etc/pip.conf"},
       {"content", "[global]\nextra-index-url = https://ci:glpat-ABCDEFGHIJKLMNOPQRST@gitlab.example/simple\n"}},
      {{"path", "root/.netrc"}, {"content", "machine example.com login bob password s3cr3tT0kenValue\n"}},
      {{"path", "app/requirements.txt"},
       {"content", "--index-url https://u:hunter2pw@pypi.example/simple\npkg==1.0\n"}},
  });
  json spec = {{"config",
                {{"Env",
                  {"HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWx12", "GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ",
                   "AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "SLACK=xoxb-1234567890-secretslack",
                   "PIP_INDEX_URL=https://x:hunter2pw@pypi.example/simple"}},
                 {"Labels", {{"build.token", "s3cr3tT0kenValue"}, {"ci.url", "https://a:hunter2pw@ci.example"}}}}},
               {"layers", json::array({{{"compression", "gzip"}, {"entries", entries}}})}};
  std::string base = tempDir("secrets");
  ASSERT_FALSE(mkimage(spec, base + "/img").empty());
  std::vector<RunResult> outputs;
  outputs.push_back(run(K + " audit oci:" + base + "/img"));
  outputs.push_back(
      run(K + " audit --json -o " + base + "/audit.json --expect-out " + base + "/expect.json oci:" + base + "/img"));
  outputs.push_back(run(K + " audit 'https://user:hunter2pw@registry.example/app:1'"));  // a credential in a reference
  run("cd " + base + " && " + K + " reference init --host-root /nonexistent --data d=" + base +
      "/img,access=https://svc:s3cr3tT0kenValue@data.example -o " + base + "/ref.json");
  outputs.push_back(run(K + " dossier build " + base + "/dossier --reference " + base + "/ref.json --report " + base +
                        "/audit.json"));
  json report = json::parse(readFile(base + "/audit.json"));
  EXPECT_GE(countFindings(report, "image.secret.env"), 5);
  EXPECT_GE(countFindings(report, "secret.leak"), 5) << report["findings"].dump(1);
  std::string everything;
  for (const auto& o : outputs) everything += o.out + o.err;
  everything += readFile(base + "/audit.json") + readFile(base + "/expect.json") + readFile(base + "/ref.json");
  everything += run("cat " + base + "/dossier/* " + base + "/dossier/*/* 2>/dev/null").out;
  for (const auto& s : secrets) EXPECT_EQ(everything.find(s), std::string::npos) << "leaked: " << s;
}

}  // namespace integration_secrets_test
