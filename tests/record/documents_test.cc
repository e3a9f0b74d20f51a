// The typed parsers of the documents Kernodeck reads back: every field of the wrong type, a
// missing required field or a truncated file is one error naming the field.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernodeck/record/documents.h"
#include "kernodeck/record/record.h"
#include "kernodeck/util/json_read.h"

namespace record_documents_test {

using namespace kernodeck;
using namespace kernodeck::record;
using nlohmann::json;

namespace {

const std::string kSha(64, 'a');

json validReference() {
  return {
      {"schema", "kernodeck.reference/v1"},
      {"created", "2026-11-30T12:00:00Z"},
      {"declared_before_comparison", true},
      {"code",
       {{"repo", "/src/project"},
        {"revision", std::string(40, 'b')},
        {"dirty", false},
        {"entry_point", "python embed.py"},
        {"preprocessing", "none"},
        {"parameters", {{"epochs", "3"}}},
        {"configs", {{{"kind", "file"}, {"sha256", kSha}, {"size", 10}, {"path", "config.yaml"}}}}}},
      {"data",
       {{{"kind", "directory"},
         {"sha256", kSha},
         {"size", 3},
         {"path", "corpus"},
         {"name", "corpus"},
         {"provenance", "hf://org/corpus@abc"},
         {"access", "public"},
         {"files", {{{"path", "a.txt"}, {"sha256", kSha}, {"size", 3}}}}}}},
      {"weights", json::array()},
      {"packages", {{"source", "requirements r.txt"}, {"requirements", {{"sha256", kSha}, {"lines", {"torch==2.1"}}}}}},
      {"system", {{"host", {{"nvidia", {{"driver_version", "550.54"}, {"gpus", json::array({json::object()})}}}}}}},
      {"result",
       {{"expected", "expected"},
        {"expected_sha256", kSha},
        {"ids", "ids.txt"},
        {"criterion", {{"text", "abs<=0.001"}, {"kind", "abs"}, {"threshold", 0.001}, {"k", 0}, {"why", "float32"}}},
        {"format", {{"files", {"emb.npy"}}, {"count", 1}}}}}};
}

}  // namespace

TEST(Documents, ValidReferenceParses) {
  auto r = parseReference(validReference());
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->code.repo, "/src/project");
  EXPECT_EQ(r->code.parameters.at("epochs"), "3");
  ASSERT_EQ(r->data.size(), 1u);
  EXPECT_EQ(r->data[0].files[0].path, "a.txt");
  EXPECT_TRUE(r->system.nvidia);
  EXPECT_EQ(r->system.gpus, 1);
  ASSERT_EQ(r->result.criteria.size(), 1u);
  EXPECT_EQ(r->result.criteria[0].first, "abs<=0.001");
  EXPECT_EQ(r->result.criteria[0].second, "float32");
  // Several criteria, each with its why.
  json many = validReference();
  many["result"].erase("criterion");
  many["result"]["criteria"] = {{{"text", "abs<=0.001"}, {"why", "float32"}},
                                {{"text", "knn:5>=0.9"}, {"why", "ranking"}}};
  auto m = parseReference(many);
  ASSERT_TRUE(m.ok()) << m.error().message;
  EXPECT_EQ(m->result.criteria.size(), 2u);
  many["result"]["criteria"][1]["why"] = nullptr;
  EXPECT_EQ(parseReference(many).error().message, "result.criteria[1].why is null, expected a string");
  EXPECT_EQ(r->result.files, std::vector<std::string>{"emb.npy"});
}

TEST(Documents, ReferenceErrorsNameTheField) {
  struct Case {
    json::json_pointer at;
    json value;  // discarded means: remove the key
    std::string message;
  } cases[] = {
      {json::json_pointer("/code/repo"), nullptr, "code.repo is null, expected a string"},
      {json::json_pointer("/code/repo"), 7, "code.repo is a number, expected a string"},
      {json::json_pointer("/code/repo"), json::array(), "code.repo is an array, expected a string"},
      {json::json_pointer("/code/repo"), json::object(), "code.repo is an object, expected a string"},
      {json::json_pointer("/code/revision"), json::value_t::discarded, "code.revision is missing (expected a string)"},
      {json::json_pointer("/code/parameters/epochs"), 3, "code.parameters.epochs is a number, expected a string"},
      {json::json_pointer("/code/configs/0/sha256"), "xyz",
       "code.configs[0].sha256 is 'xyz', expected 64 lower-case hex digits"},
      {json::json_pointer("/code/configs/0/size"), -1, "code.configs[0].size is '-1', expected a size of 0 or more"},
      {json::json_pointer("/data/0/files/0/path"), nullptr, "data[0].files[0].path is null, expected a string"},
      {json::json_pointer("/data/0/kind"), "socket", "data[0].kind is 'socket', expected \"file\" or \"directory\""},
      {json::json_pointer("/weights"), json::object(), "weights is an object, expected an array"},
      {json::json_pointer("/system/host/nvidia/gpus"), 2, "system.host.nvidia.gpus is a number, expected an array"},
      {json::json_pointer("/result/criterion/text"), "best", "result.criterion.text: criterion 'best'"},
      {json::json_pointer("/result/criterion/threshold"), "0.1",
       "result.criterion.threshold is a string, expected a number"},
      {json::json_pointer("/result/expected"), json::value_t::discarded,
       "result.expected_sha256 is present but result.expected is missing"},
      {json::json_pointer("/schema"), "kernodeck.reference/v2",
       "schema is 'kernodeck.reference/v2', expected \"kernodeck.reference/v1\""},
      {json::json_pointer(""), json::array(), "the document is an array, expected an object"},
  };
  for (const auto& c : cases) {
    json j = validReference();
    if (c.value.is_discarded())
      j[c.at.parent_pointer()].erase(c.at.back());
    else
      j[c.at] = c.value;
    auto r = parseReference(j);
    ASSERT_FALSE(r.ok()) << c.at.to_string();
    EXPECT_TRUE(r.error().is(ErrorKind::Invalid));
    EXPECT_EQ(r.error().message.rfind(c.message, 0), 0u) << r.error().message;
  }
}

TEST(Documents, TruncatedJsonIsNamed) {
  std::string text = validReference().dump();
  auto r = util::parseJsonText(text.substr(0, text.size() / 2), "reference.json");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "reference.json is not valid JSON: it ends early (truncated?)");
  auto g = util::parseJsonText("{\"a\": xyz, \"b\": 1}", "x.json");
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.error().message.find("x.json is not valid JSON (at byte"), std::string::npos);
}

TEST(Documents, ProcedureStepsAreTypedAndLimited) {
  Procedure p;
  p.steps.push_back(
      {"verify-reference", "inputs", "kernodeck", {"reference", "verify", "--reference", "reference.json", "--json"}});
  p.steps.push_back({"run", "result", "project", {"python", "embed.py", "--out", "$(touch x)"}});
  auto back = parseProcedure(toJson(p));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->steps[1].argv[3], "$(touch x)");
  struct Case {
    json step;
    std::string message;
  } cases[] = {
      {{{"name", "x"}, {"layer", "l"}, {"kind", "kernodeck"}, {"argv", {"audit", "docker://evil"}}},
       "steps[0].argv is 'audit docker://evil', expected a Kernodeck check"},
      {{{"name", "x"},
        {"layer", "l"},
        {"kind", "kernodeck"},
        {"argv", {"sample", "check", "o", "-o", "/home/u/.bashrc"}}},
       "steps[0].argv is"},
      {{{"name", "x"}, {"layer", "l"}, {"kind", "kernodeck"}, {"argv", {"diff", "a", "b", "--output=/etc/x"}}},
       "steps[0].argv is"},
      {{{"name", "x"}, {"layer", "l"}, {"kind", "shell"}, {"argv", {"ls"}}},
       "steps[0].kind is 'shell', expected \"kernodeck\" or \"project\""},
      {{{"name", "x"}, {"layer", "l"}, {"kind", "project"}, {"argv", json::array()}}, "steps[0].argv is empty"},
      {{{"name", "x"}, {"layer", "l"}, {"kind", "project"}, {"argv", "ls -l"}},
       "steps[0].argv is a string, expected an array"},
      {{{"name", "x"}, {"layer", "l"}, {"kind", "project"}, {"argv", {"ls", 1}}},
       "steps[0].argv[1] is a number, expected a string"},
      {{{"layer", "l"}, {"kind", "project"}, {"argv", {"ls"}}}, "steps[0].name is missing"},
      {json::array(), "steps[0] is an array, expected an object"},
  };
  for (const auto& c : cases) {
    json j = {{"schema", "kernodeck.procedure/v1"}, {"steps", {c.step}}};
    auto r = parseProcedure(j);
    ASSERT_FALSE(r.ok()) << c.step.dump();
    EXPECT_EQ(r.error().message.rfind(c.message, 0), 0u) << r.error().message;
  }
  EXPECT_FALSE(parseProcedure(json::array()).ok());  // the old bare list is not taken
}

TEST(Documents, DossierManifestPathsStayInside) {
  std::string sha(64, 'c');
  auto ok = parseDossierManifest(sha + "  reference.json\n" + sha + "  reports/1-audit.json\n");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[1].path, "reports/1-audit.json");
  struct Case {
    std::string text, message;
  } cases[] = {
      {sha + "  ../outside\n", "MANIFEST.sha256 line 1: '../outside' is not a plain relative path"},
      {sha + "  /etc/passwd\n", "MANIFEST.sha256 line 1: '/etc/passwd' is not a plain relative path"},
      {sha + "  a//b\n", "MANIFEST.sha256 line 1: 'a//b' is not a plain relative path"},
      {sha + "  ok\nshort\n", "MANIFEST.sha256 line 2 is not 'SHA256  PATH'"},
      {std::string(64, 'Z') + "  x\n", "MANIFEST.sha256 line 1: '" + std::string(64, 'Z') + "' is not a sha256"},
  };
  for (const auto& c : cases) {
    auto r = parseDossierManifest(c.text);
    ASSERT_FALSE(r.ok()) << c.text;
    EXPECT_EQ(r.error().message, c.message);
  }
}

TEST(Documents, ReportsAndInventories) {
  json rep = {{"schema", "kernodeck.report/v1"},
              {"tool", {{"name", "kernodeck"}, {"command", "audit"}}},
              {"subject", {{"reference", "oci:img"}, {"manifest_digest", nullptr}}},
              {"steps", {{{"name", "resolve"}, {"status", "passed"}, {"error", nullptr}}}},
              {"first_error", nullptr},
              {"findings", {{{"code", "x.y"}, {"severity", "warning"}, {"message", "m"}}}},
              {"python", {{"environments", {{{"prefix", "/usr"}, {"freeze", {"torch==2.1"}}}}}}},
              {"os_packages", {{"packages", {{{"name", "libc6"}, {"version", "2.36"}}}}}}};
  auto r = parseReportDoc(rep);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->command, "audit");
  EXPECT_EQ(r->environments[0].freeze[0], "torch==2.1");
  EXPECT_EQ(r->osPackages[0].version, "2.36");
  json bad = rep;
  bad["findings"][0]["severity"] = 2;
  EXPECT_EQ(parseReportDoc(bad).error().message, "findings[0].severity is a number, expected a string");
  bad = rep;
  bad["python"]["environments"][0]["freeze"] = {"torch==2.1", nullptr};
  EXPECT_EQ(parseReportDoc(bad).error().message, "python.environments[0].freeze[1] is null, expected a string");
  json inventory = {{"python", rep["python"]}};
  auto inv = parseReportDoc(inventory);
  ASSERT_TRUE(inv.ok());
  EXPECT_TRUE(inv->schema.empty());
  EXPECT_FALSE(parseReportDoc(json{{"host", json::object()}}).ok());
}

// diff compares like with like: the reference's environment with the report's environment of
// the same prefix (or the same place under another root), packages by PEP 503 name, and what
// one side did not record is "not recorded", not a line per package.
TEST(Diff, InventoryLikeWithLike) {
  json ref = validReference();
  ref["packages"]["environments"] = {
      {{"prefix", "/opt/venv"}, {"freeze", {"torch==2.1", "Typing_Extensions==4.9", "numpy==1.26"}}}};
  auto audit = [](const std::string& prefix, const std::string& torch) {
    return json{{"schema", "kernodeck.report/v1"},
                {"tool", {{"name", "kernodeck"}, {"command", "audit"}}},
                {"subject", {{"reference", "dir:/"}}},
                {"steps", json::array()},
                {"first_error", nullptr},
                {"findings", json::array()},
                {"python",
                 {{"environments",
                   {{{"prefix", prefix}, {"freeze", {"numpy==1.26", "typing-extensions==4.9", "torch==" + torch}}},
                    {{"prefix", "/usr"}, {"freeze", {"pip==23.0"}}}}}}},
                {"os_packages",
                 {{"packages", {{{"name", "libc6"}, {"version", "2.36"}}, {{"name", "bash"}, {"version", "5.2"}}}}}}};
  };
  auto diff = [&](const json& rep) {
    auto a = parseDiffInput(ref), b = parseDiffInput(rep);
    EXPECT_TRUE(a.ok() && b.ok());
    return diffRecords(*a, *b);
  };
  auto count = [](const report::Report& r, const std::string& code) {
    return std::count_if(r.findings().begin(), r.findings().end(), [&](const auto& f) { return f.code == code; });
  };
  struct Case {
    const char* prefix;
    const char* torch;
    long changed;
  } cases[] = {{"/opt/venv", "2.1", 0},
               {"/opt/venv", "2.2", 1},
               {"/mnt/root/opt/venv", "2.1", 0},
               {"/mnt/root/opt/venv", "2.2", 1}};
  for (const auto& c : cases) {
    report::Report r = diff(audit(c.prefix, c.torch));
    SCOPED_TRACE(std::string(c.prefix) + " torch " + c.torch);
    EXPECT_EQ(count(r, "diff.package.changed"), c.changed);
    EXPECT_EQ(count(r, "diff.package.added"), 0);
    EXPECT_EQ(count(r, "diff.package.removed"), 0);
    // The report's /usr and its OS packages: not in the reference, one line each.
    EXPECT_EQ(count(r, "diff.environment.not_recorded"), 2);
    EXPECT_EQ(r.findings().size(), 2u + c.changed);
    const json& n = r.sections().at("diff").at("packages");
    EXPECT_EQ(n.at("same"), 3 - c.changed);
    EXPECT_EQ(n.at("changed"), c.changed);
    EXPECT_EQ(n.at("environments_not_recorded"), 2);
    for (const auto& f : r.findings())
      if (f.code == "diff.package.changed") {
        EXPECT_EQ(f.evidence.at("package"), "torch");
        EXPECT_NE(f.message.find("2.1 in A and 2.2 in B"), std::string::npos) << f.message;
      }
  }
}

}  // namespace record_documents_test
