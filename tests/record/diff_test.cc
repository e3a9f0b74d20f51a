// kernodeck diff on the typed documents: two audit reports (packages like with like, then the
// drift), a reference against a report, and two references field by field: every field a
// reference declares, changed once, is a difference that names it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>

#include "kernodeck/record/record.h"

namespace record_diff_test {

using namespace kernodeck;
using namespace kernodeck::record;
using nlohmann::json;

namespace {

const std::string kSha(64, 'a');

json audit(const std::string& prefix, const std::string& python311, int modifiedNodeFiles, bool withSix) {
  report::Report r("audit");
  r.subject()["reference"] = "dir:/";
  for (int i = 0; i < modifiedNodeFiles; ++i)
    r.add("os.package.modified", report::Severity::Error, "file " + std::to_string(i) + " of nodejs differs",
          {{"package", "nodejs"},
           {"path", "/usr/share/nodejs/" + std::to_string(i) + ".js"},
           {"layer", std::to_string(i % 3)}});
  r.add("image.tag.mutable", report::Severity::Warning, "no tag");
  json pkgs = json::array({{{"name", "nodejs"}, {"version", "18.19.0"}, {"architecture", "amd64"}},
                           {{"name", "python3.11"}, {"version", python311}, {"architecture", "amd64"}}});
  r.section("os_packages") = {{"packages", pkgs}};
  json freeze = json::array({"attrs==23.1.0"});
  if (withSix) freeze.push_back("six==1.16.0");
  r.section("python") = {{"environments", json::array({{{"prefix", prefix}, {"freeze", freeze}}})}};
  return r.toJson();
}

report::Report diffOf(const json& a, const json& b) {
  auto da = parseDiffInput(a), db = parseDiffInput(b);
  EXPECT_TRUE(da.ok()) << da.error().message;
  EXPECT_TRUE(db.ok()) << db.error().message;
  return diffRecords(*da, *db);
}

long count(const report::Report& r, const std::string& code) {
  return std::count_if(r.findings().begin(), r.findings().end(), [&](const auto& f) { return f.code == code; });
}

// A reference with every section filled, as `reference init` writes it.
json fullReference() {
  json host = {{"root", "/"},
               {"nvidia",
                {{"driver_version", "550.54.15"},
                 {"kernel_module", "open"},
                 {"max_cuda", "12.4"},
                 {"gpus",
                  {{{"model", "NVIDIA H100"},
                    {"uuid", "GPU-1"},
                    {"bus_location", "0000:01:00.0"},
                    {"minor", 0},
                    {"excluded", false},
                    {"arch", "9.0"},
                    {"brand", "tesla"}}}},
                 {"device_nodes",
                  {{{"path", "/dev/nvidia0"}, {"present", true}, {"major", 195}, {"minor", 0}, {"problem", nullptr}}}},
                 {"mig", {{{"gpu", 0}, {"gi", 1}, {"ci", 0}, {"minor", 12}}}},
                 {"dev_char_missing", {"/dev/char/195:0"}}}},
               {"amd", nullptr},
               {"problems", {"cannot read /proc/x"}}};
  return {
      {"schema", "kernodeck.reference/v1"},
      {"created", "2026-11-30T12:00:00Z"},
      {"first_checked", nullptr},
      {"declared_before_comparison", true},
      {"code",
       {{"repo", "/src/project"},
        {"revision", std::string(40, 'b')},
        {"dirty", false},
        {"entry_point", "python embed.py"},
        {"preprocessing", "none"},
        {"outputs", "out"},
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
      {"weights",
       {{{"kind", "file"},
         {"sha256", kSha},
         {"size", 7},
         {"path", "w.pt"},
         {"name", "encoder"},
         {"provenance", "local"},
         {"access", "none"}}}},
      {"packages",
       {{"source", "requirements r.txt"},
        {"manifest_digest", "sha256:" + kSha},
        {"requirements", {{"sha256", kSha}, {"lines", {"torch==2.1", "numpy==1.26"}}}},
        {"python", {{"interpreter", "/usr/bin/python3"}, {"version", "3.11.2"}}}}},
      {"system",
       {{"host", host},
        {"os", "Debian GNU/Linux 12 (bookworm)"},
        {"architecture", "x86_64"},
        {"cpu", {{"model", "Test CPU"}, {"cores", 2}, {"threads", 4}}},
        {"accelerator", "cuda"}}},
      {"seeds", {{"torch", "1234"}}},
      {"determinism",
       {{"declared", {{"torch.use_deterministic_algorithms", "True"}}}, {"environment", {{"PYTHONHASHSEED", "0"}}}}},
      {"result",
       {{"expected", "expected"},
        {"expected_sha256", kSha},
        {"ids", "ids.txt"},
        {"criteria",
         {{{"text", "abs<=1e-6"}, {"kind", "abs"}, {"threshold", 1e-6}, {"k", 0}, {"why", "float32"}},
          {{"text", "knn:5>=0.95"}, {"kind", "knn"}, {"threshold", 0.95}, {"k", 5}, {"why", "ranking"}}}},
        {"outputs", {{{"name", "emb.npy"}, {"dtype", "float32"}, {"shape", {32, 16}}, {"sha256", kSha}}}},
        {"format", {{"files", {"emb.npy", "ids.txt"}}, {"count", 2}}}}}};
}

// Every leaf below the root with its path as a JSON pointer and as the last key that names it.
void leaves(const json& j, const json::json_pointer& p, const std::string& key,
            std::vector<std::pair<json::json_pointer, std::string>>& out) {
  if (j.is_object() && !j.empty()) {
    for (auto it = j.begin(); it != j.end(); ++it) leaves(it.value(), p / it.key(), it.key(), out);
  } else if (j.is_array() && !j.empty()) {
    for (size_t i = 0; i < j.size(); ++i) leaves(j[i], p / i, key, out);
  } else {
    out.emplace_back(p, key);
  }
}

}  // namespace

TEST(Diff, TwoAuditsPackagesThenDrift) {
  json a = audit("/opt/venv", "3.11.2-6", 700, true), b = audit("/opt/venv", "3.11.2-6+deb12u1", 0, false);
  report::Report d = diffOf(a, b);
  json j = d.toJson(1);
  EXPECT_EQ(j["diff"]["packages_changed"], 1);
  EXPECT_EQ(j["diff"]["packages_removed"], 1);
  EXPECT_EQ(j["diff"]["packages_added"], 0);
  EXPECT_EQ(j["diff"]["findings_gone"], 700);
  EXPECT_EQ(j["diff"]["findings_new"], 0);  // the same finding in another layer is the same finding
  std::string t = d.toText(1);
  size_t summary = t.find("packages  0 added, 1 removed, 1 changed (4 in A, 3 in B)");
  ASSERT_NE(summary, std::string::npos) << t;
  EXPECT_NE(t.find("drift     0 findings new in B, 700 gone from A"), std::string::npos) << t;
  size_t changed = t.find("diff.package.changed: python3.11:amd64 (dpkg) is 3.11.2-6 in A and 3.11.2-6+deb12u1 in B");
  ASSERT_NE(changed, std::string::npos) << t;
  EXPECT_LT(summary, changed);
  EXPECT_NE(t.find("diff.finding.gone: 700 findings for package nodejs"), std::string::npos) << t;
  EXPECT_EQ(d.exitCode(1), report::kExitFindings);
  // Reversed, the findings are new, with their own severity and evidence.
  json r = diffOf(b, a).toJson();
  EXPECT_EQ(r["diff"]["findings_new"], 700);
  const json* firstNew = nullptr;
  for (const auto& f : r["findings"])
    if (f["code"] == "diff.finding.new" && !firstNew) firstNew = &f;
  ASSERT_TRUE(firstNew);
  EXPECT_EQ((*firstNew)["severity"], "error");
  EXPECT_EQ((*firstNew)["finding"], "os.package.modified");
  EXPECT_EQ((*firstNew)["package"], "nodejs");
  // The same report twice: no drift.
  report::Report same = diffOf(a, a);
  EXPECT_TRUE(same.findings().empty());
  EXPECT_EQ(same.exitCode(0), report::kExitOk);
}

// The same inventories give the same package lines whether the documents are two audits, or
// a reference (its environments) and an audit: an environment seen under another root is the
// same environment, and one recorded on one side only is one "not recorded" line, never one
// "removed" line per package.
TEST(Diff, AuditAndReferenceDiffsShowPackagesAlike) {
  json a = audit("/opt/venv", "3.11.2-6", 0, true);
  json b = audit("/mnt/root/opt/venv", "3.11.2-6", 0, true);
  b["python"]["environments"].push_back({{"prefix", "/usr"}, {"freeze", {"pip==23.0", "wheel==0.38"}}});
  report::Report audits = diffOf(a, b);
  EXPECT_EQ(count(audits, "diff.package.removed"), 0);
  EXPECT_EQ(count(audits, "diff.package.added"), 0);
  EXPECT_EQ(count(audits, "diff.environment.not_recorded"), 1);
  json ref = fullReference();
  ref["packages"]["environments"] = a["python"]["environments"];
  report::Report mixed = diffOf(ref, b);
  for (const char* code : {"diff.package.removed", "diff.package.added", "diff.package.changed"})
    EXPECT_EQ(count(mixed, code), count(audits, code)) << code;
  const json &n = mixed.sections().at("diff").at("packages"), &m = audits.sections().at("diff").at("packages");
  for (const char* k : {"changed", "only_a", "only_b"}) EXPECT_EQ(n.at(k), m.at(k)) << k;
  // The reference records no OS packages: one more "not recorded" line, not one per package.
  EXPECT_EQ(count(mixed, "diff.environment.not_recorded"), 2);
}

// Every field of a reference, changed once, is a difference that names it.
TEST(Diff, ReferencesEveryFieldChangedIsNamed) {
  json ref = fullReference();
  ASSERT_TRUE(parseDiffInput(ref).ok()) << parseDiffInput(ref).error().message;
  EXPECT_TRUE(diffOf(ref, ref).findings().empty());
  std::vector<std::pair<json::json_pointer, std::string>> paths;
  leaves(ref, json::json_pointer(), "", paths);
  ASSERT_GT(paths.size(), 60u);
  int checked = 0;
  for (const auto& [ptr, key] : paths) {
    // When, not what; and the criteria's parsed form, which must match its text (below).
    if (key == "schema" || key == "created" || key == "first_checked" || key == "kind" || key == "threshold" ||
        key == "k" || key == "text" || key == "declared_before_comparison" || key == "count")
      continue;
    json m = ref;
    json& v = m[ptr];
    if (v.is_boolean())
      v = !v.get<bool>();
    else if (v.is_number_integer())
      v = v.get<int64_t>() + 1;
    else if (v.is_string() && v.get<std::string>().find(kSha) != std::string::npos)
      v = std::string(v.get<std::string>()).replace(v.get<std::string>().find(kSha), 64, std::string(64, 'c'));
    else if (v.is_string())
      v = v.get<std::string>() + "-x";
    else if (v.is_null())
      v = "set";
    else
      continue;
    auto parsed = parseDiffInput(m);
    if (!parsed.ok()) continue;  // a value the parser refuses is tested in documents_test
    report::Report r = diffOf(ref, m);
    // The field's names along its path ("code", "configs", "sha256"), a plural also singular.
    std::vector<std::string> names;
    for (json::json_pointer q = ptr; !q.empty(); q = q.parent_pointer())
      if (std::string c = q.back(); !c.empty() && !std::isdigit(static_cast<unsigned char>(c[0])))
        names.push_back(c.back() == 's' ? c.substr(0, c.size() - 1) : c);
    bool named = false;
    for (const auto& f : r.findings()) {
      std::string name = f.evidence.count("name") ? f.evidence.at("name") : "";
      for (const auto& n : names)
        named |= (name.find(n) != std::string::npos || f.message.find(n) != std::string::npos) &&
                 f.code != "diff.reference.not_recorded";
      named |= f.message.starts_with("image digest");  // packages.manifest_digest, as inputs name it
    }
    EXPECT_TRUE(named) << ptr.to_string() << " changed: no finding names it: " << r.toText();
    ++checked;
  }
  EXPECT_GT(checked, 50);
  // The case from the field: one requirement added, nothing else.
  json more = ref;
  more["packages"]["requirements"]["lines"].push_back("scipy==1.10.1");
  report::Report added = diffOf(ref, more);
  ASSERT_EQ(added.findings().size(), 1u) << added.toText();
  EXPECT_EQ(added.findings()[0].message, "packages.requirements.lines[scipy==1.10.1] is only in B");
  EXPECT_EQ(added.exitCode(2), report::kExitFindings);
  // A threshold changed with its text: the criterion is gone from one side and new on the other.
  json looser = ref;
  looser["result"]["criteria"][0]["text"] = "abs<=1e-5";
  looser["result"]["criteria"][0]["threshold"] = 1e-5;
  report::Report crit = diffOf(ref, looser);
  std::string t = crit.toText();
  EXPECT_NE(t.find("criterion abs<=1e-6 is only in A"), std::string::npos) << t;
  EXPECT_NE(t.find("criterion abs<=1e-5 is only in B"), std::string::npos) << t;
  // System facts differ as a warning, a path as information.
  json moved = ref;
  moved["system"]["host"]["nvidia"]["driver_version"] = "560.1";
  moved["code"]["repo"] = "/elsewhere";
  report::Report sys = diffOf(ref, moved);
  ASSERT_EQ(sys.findings().size(), 2u) << sys.toText();
  for (const auto& f : sys.findings())
    EXPECT_EQ(f.severity, f.evidence.at("name") == "code.repo" ? report::Severity::Info : report::Severity::Warning);
}

}  // namespace record_diff_test
