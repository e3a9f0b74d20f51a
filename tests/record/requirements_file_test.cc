// scanRequirements: pip's requirements grammar read to refuse, at any depth, whatever would make
// pip download, read outside the replay folder or build from source; each refusal names the
// file and line.
#include "kernodeck/record/requirements_file.h"

#include <gtest/gtest.h>

#include <map>

namespace record_requirements_file_test {

using namespace kernodeck;
using namespace kernodeck::record;

namespace {

// Scans `top` as requirements.txt with `files` as the other files of the replay folder.
Result<std::vector<ScannedRequirement>> scan(const std::string& top, std::map<std::string, std::string> files = {},
                                             bool allowSdist = false) {
  RequirementsScanOptions o;
  o.allowSdist = allowSdist;
  o.read = [files](const std::string& rel) -> Result<std::optional<std::string>> {
    auto it = files.find(rel);
    if (it == files.end()) return Error::NotFound("which does not exist");
    return std::optional<std::string>(it->second);
  };
  return scanRequirements("requirements.txt", top, o);
}

TEST(RequirementsFile, PlainRequirementsMarkersHashesAndContinuationsPass) {
  auto r = scan(
      "# a comment\n"
      "torch>=1.12\n"
      "numpy >= 1.24, <2  # inline comment\n"
      "requests[socks,security]==2.31.0 ; python_version >= \"3.8\"\n"
      "zope.interface (>=5.0)\n"
      "six==1.16.0 \\\n"
      "    --hash=sha256:1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926\n"
      "--no-index\n--require-hashes\n--only-binary=:all:\n--pre\n--prefer-binary\n"
      "-r more.txt\n",
      {{"more.txt", "attrs==23.1.0\n"}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::vector<std::string> names;
  for (const auto& q : *r) names.push_back(q.name);
  EXPECT_EQ(names, (std::vector<std::string>{"torch", "numpy", "requests", "zope.interface", "six", "attrs"}));
  EXPECT_EQ((*r)[4].line, 6);  // a continued line is named by its first physical line
  EXPECT_EQ((*r)[5].file, "more.txt");
}

// What the replay's inventory check declares from the recorded lines: the requirement as pip
// reads it, per-line options and comments (after a space or a tab) cut, continuations joined
// without a space, a last line that ends in a backslash read too.
TEST(RequirementsFile, TheRequirementIsWhatPipReadsOfTheLine) {
  auto r = scan(
      "numpy==1.26.4 --hash=sha256:1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926  # pinned\n"
      "torch>=1.12\t# a comment after a tab\n"
      "requests\\\n"
      ">=2 ; python_version >= \"3.8\"\n"
      "six==1.16.0 \\\n"
      "    --hash=sha256:1e61c37477a1626458e36f7b1d82aa5c9b094fa4802892072e49de9c60c4c926\n"
      "attrs \\");
  ASSERT_TRUE(r.ok()) << r.error().message;
  std::vector<std::string> reqs;
  for (const auto& q : *r) reqs.push_back(q.requirement);
  EXPECT_EQ(reqs, (std::vector<std::string>{"numpy==1.26.4", "torch>=1.12", "requests>=2 ; python_version >= \"3.8\"",
                                            "six==1.16.0", "attrs"}));
}

TEST(RequirementsFile, EveryIndexLinkAndUrlIsRefusedNamingFileAndLine) {
  struct Case {
    std::string top;
    std::map<std::string, std::string> files;
    std::string says;
  } cases[] = {
      {"evilpkg @ http://127.0.0.1:9/evilpkg-1.0.tar.gz\n", {}, "requirements.txt line 1: `evilpkg @ http"},
      {"ok==1\n-r sub/more.txt\n", {{"sub/more.txt", "# x\nevilpkg @ http://h/e.tar.gz\n"}}, "sub/more.txt line 2"},
      {"-r a.txt\n", {{"a.txt", "-r b.txt\n"}, {"b.txt", "--find-links http://h/\n"}}, "b.txt line 1"},
      {"-r sub/a.txt\n", {{"sub/a.txt", "-c ../c.txt\n"}, {"c.txt", "-ihttp://h/simple\n"}}, "c.txt line 1"},
      {"-r http://127.0.0.1:9/req.txt\n", {}, "includes a URL"},
      {"--requirement=https://h/r.txt\n", {}, "includes a URL"},
      {"-c file:///etc/constraints.txt\n", {}, "includes a URL"},
      {"-r ../../outside.txt\n", {}, "outside the replay folder"},
      {"-r /etc/passwd\n", {}, "outside the replay folder"},
      {"--find=http://h/\n", {}, "--find-links"},
      {"--find-l http://h/\n", {}, "--find-links"},
      {"-f http://h/\n", {}, "--find-links"},
      {"-fhttp://h/\n", {}, "--find-links"},
      {"--ind http://h/simple\n", {}, "--index-url"},
      {"--extra http://h/simple\n", {}, "--extra-index-url"},
      {"--trusted h\n", {}, "--trusted-host"},
      {"numpy==1.24 --find-links http://h/\n", {}, "--find-links"},
      {"--pre \\\n  --find-links \\\n  http://h/\n", {}, "requirements.txt line 1"},
      {"-e git+https://h/r.git#egg=x\n", {}, "--editable"},
      {"--editable=./x\n", {}, "--editable"},
      {"http://h/pkg-1.0-py3-none-any.whl\n", {}, "names a URL"},
      {"git+https://h/r.git\n", {}, "names a URL"},
      {"./local/pkg\n", {}, "names a path"},
      {"pkg-1.0-py3-none-any.whl\n", {}, "archive file"},
      {"evil.tar.gz\n", {}, "archive file"},
      {"pkg @ file:///tmp/x.whl\n", {}, "names a URL"},
      {"pkg==1 --global-option=--x\n", {}, "passes options to a build"},
      {"pkg==1 --config-settings=a=b\n", {}, "passes options to a build"},
      {"--no-binary :all:\n", {}, "--allow-sdist"},
      {"${PIP_URL}\n", {}, "environment variable"},
      {"--req x.txt\n", {}, "ambiguous"},
      {"--bogus\n", {}, "pip knows no such option"},
      {"-r loop.txt\n", {{"loop.txt", "-r loop.txt\n"}}, "a cycle"},
      {"-r missing.txt\n", {}, "does not exist"},
  };
  for (const auto& c : cases) {
    auto r = scan(c.top, c.files);
    ASSERT_FALSE(r.ok()) << c.top;
    EXPECT_NE(r.error().message.find(c.says), std::string::npos) << c.top << " -> " << r.error().message;
  }
}

TEST(RequirementsFile, NoBinaryOnlyWithAllowSdistAndUnreadableIncludesWaitForTheRun) {
  EXPECT_TRUE(scan("--no-binary :all:\nnumpy\n", {}, true).ok());
  RequirementsScanOptions o;
  o.read = [](const std::string&) -> Result<std::optional<std::string>> { return std::optional<std::string>(); };
  EXPECT_TRUE(scanRequirements("requirements.txt", "-r project/extra.txt\nnumpy\n", o).ok());
  EXPECT_FALSE(scanRequirements("requirements.txt", "-r http://h/extra.txt\n", o).ok());  // a URL never waits
}

}  // namespace

}  // namespace record_requirements_file_test
