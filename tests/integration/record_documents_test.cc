// Record documents are untrusted input (a reference or a dossier is handed around). Through
// the real kernodeck binary: for every string field of a reference and of a procedure, shell
// metacharacters run nothing; for every field, null, a number, an array, an object and a
// missing key give one clean line naming the field and exit 2; a truncated file exits 2;
// dossier replay runs only Kernodeck's own checks and prints every command first.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <map>
#include <set>

#include "kernodeck/record/tensor_file.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/strings.h"
#include "support.h"

namespace integration_record_documents_test {

using nlohmann::json;
using namespace kdktest;
using namespace kernodeck;

namespace {

const std::string K = KERNODECK_BIN;




// Every path below the root, as a JSON pointer and as Kernodeck names it ("data[0].sha256"),
// nested ones included: the host facts and the torch build are typed like the rest.
void walk(const json& j, const json::json_pointer& p, const std::string& shown,
          std::vector<std::pair<json::json_pointer, std::string>>& out) {
  if (!shown.empty()) out.emplace_back(p, shown);
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it)
      walk(it.value(), p / it.key(), shown.empty() ? it.key() : shown + "." + it.key(), out);
  else if (j.is_array())
    for (size_t i = 0; i < j.size(); ++i) walk(j[i], p / i, shown + "[" + std::to_string(i) + "]", out);
}

bool sameKind(const json& a, const json& b) { return (a.is_number() && b.is_number()) || a.type() == b.type(); }

// Shell payloads, each of which would create MARK if any shell ever saw it.
std::vector<std::string> payloads(const std::string& mark) {
  return {"x'; touch " + mark + "; echo '",
          "x\"; touch " + mark + "; echo \"",
          "`touch " + mark + "`",
          "$(touch " + mark + ")",
          "x; touch " + mark,
          "x\ntouch " + mark + "\n"};
}

struct Project {
  std::string base, ref, outputs, ran;
};

// A project whose reference has every field: a git repository, a config, a data folder, a
// weights file, requirements, expected outputs with ids, and an entry point that would leave
// a file behind if it were ever run.
Project makeProject() {
  Project p;
  p.base = tempDir("docs");
  p.ref = p.base + "/reference.json";
  p.ran = p.base + "/project-step-ran";
  run("mkdir -p " + p.base + "/repo " + p.base + "/data " + p.base + "/expected " + p.base + "/outputs " + p.base +
      "/cwd && cd " + p.base +
      "/repo && git init -q && git -c user.email=t@example.org -c user.name=t commit -q --allow-empty -m init");
  writeFile(p.base + "/config.yaml", "lr: 0.1\n");
  writeFile(p.base + "/data/a.txt", "text\n");
  writeFile(p.base + "/weights.bin", "weights");
  writeFile(p.base + "/requirements.txt", "numpy==1.24.2\n");
  // A fake host: OS and CPU as the system section records them.
  run("mkdir -p " + p.base + "/host/etc " + p.base + "/host/proc");
  writeFile(p.base + "/host/etc/os-release", "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nID=debian\n");
  std::string cpuinfo;
  for (int i = 0; i < 4; ++i)
    cpuinfo += "processor\t: " + std::to_string(i) +
               "\nmodel name\t: Test CPU\nphysical id\t: 0\ncore id\t\t: " + std::to_string(i / 2) + "\n\n";
  writeFile(p.base + "/host/proc/cpuinfo", cpuinfo);
  std::string npy = record::writeNpy({"", "float32", {2, 3}, {1, 2, 3, 4, 5, 6}});
  for (const char* d : {"/expected", "/outputs"}) {
    writeFile(p.base + d + "/emb.npy", npy);
    writeFile(p.base + d + "/ids.txt", "a\nb\n");
  }
  p.outputs = p.base + "/outputs";
  RunResult init = kdk({"reference",
                  "init",
                  "--repo",
                  p.base + "/repo",
                  "--entry-point",
                  "touch " + p.ran,
                  "--preprocessing",
                  "lowercase",
                  "--config",
                  p.base + "/config.yaml",
                  "--param",
                  "epochs=3",
                  "--data",
                  "corpus=" + p.base + "/data,provenance=hf://org/c@abc,access=public",
                  "--weights",
                  "w=" + p.base + "/weights.bin,provenance=local,access=none",
                  "--requirements",
                  p.base + "/requirements.txt",
                  "--python",
                  "/usr/bin/python3",
                  "--outputs",
                  "outputs",
                  "--host-root",
                  p.base + "/host",
                  "--expected",
                  p.base + "/expected",
                  "--ids",
                  "ids.txt",
                  "--criterion",
                  "abs<=0.001",
                  "--why",
                  "float32 on CPU",
                  "--criterion",
                  "knn:1>=1",
                  "--why",
                  "neighbours kept",
                  "--seed",
                  "torch=1234",
                  "--determinism",
                  "torch.use_deterministic_algorithms=True",
                  "-o",
                  p.ref},
                 p.base, {{"PYTHONHASHSEED", "0"}});
  EXPECT_EQ(init.code, 0) << init.err;
  return p;
}

void expectCleanFailure(const RunResult& r, const std::string& field, const std::string& what) {
  EXPECT_EQ(r.code, 2) << what << ": " << r.err;
  EXPECT_NE(r.err.find(field), std::string::npos) << what << ": the message does not name " << field << ": " << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": " << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << what << ": " << r.err;
}

}  // namespace

TEST(RecordDocuments, EveryReferenceFieldOfTheWrongTypeIsNamed) {
  Project p = makeProject();
  json ref = json::parse(readFile(p.ref));
  // Host facts with every nested field (as kernodeck host records them on a GPU node) and the
  // torch build an audit records, so that each nested field is mutated below.
  ref["system"]["host"] = {
      {"root", "/"},
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
      {"amd",
       {{"amdgpu_version", "6.7"},
        {"agents", {{{"node", 1}, {"gfx", "gfx942"}, {"render_minor", 128}}}},
        {"device_nodes", {{{"path", "/dev/kfd"}, {"present", true}, {"problem", nullptr}}}}}},
      {"problems", {"cannot read /proc/x"}}};
  ref["packages"]["torch"] = {{"version", "2.1.0"},   {"cuda", "12.1"}, {"hip", nullptr},
                              {"git_version", "abc"}, {"debug", false}, {"location", "/usr/lib/python3/torch"}};
  writeFile(p.ref, ref.dump(2));
  ASSERT_EQ(kdk({"reference", "verify", "--reference", p.ref}, p.base).code, 0);
  // The reference as a person reads it.
  RunResult show = kdk({"reference", "show", "--reference", p.ref}, p.base);
  ASSERT_EQ(show.code, 0) << show.err;
  for (const char* want :
       {"os            Debian GNU/Linux 12 (bookworm)\n", "cpu           Test CPU, 2 cores, 4 threads\n",
        "accelerator   cpu\n", "seed          torch=1234\n", "declared      torch.use_deterministic_algorithms=True\n",
        "environment   PYTHONHASHSEED=0\n", "output        emb.npy  float32 (2, 3)\n",
        "criterion     abs<=0.001  because: float32 on CPU\n", "criterion     knn:1>=1  because: neighbours kept\n"})
    EXPECT_NE(show.out.find(want), std::string::npos) << want << "\n" << show.out;
  EXPECT_EQ(json::parse(kdk({"reference", "show", "--json", "--reference", p.ref}, p.base).out), ref);
  std::vector<std::pair<json::json_pointer, std::string>> paths;
  walk(ref, json::json_pointer(), "", paths);
  ASSERT_GT(paths.size(), 90u);
  // Fields a reference may leave out: the rest are required.
  std::set<std::string> optional = {"declared_before_comparison",
                                    "first_checked",
                                    "code.repo",
                                    "code.dirty",
                                    "code.root",  // absent in references from before it; paths are then the reference's
                                    "packages.source",
                                    "packages.requirements",
                                    "system.host",
                                    "system.os",
                                    "system.architecture",
                                    "system.accelerator",
                                    "system.cpu",
                                    "system.cpu.model",
                                    "system.cpu.cores",
                                    "system.cpu.threads",
                                    "seeds",
                                    "determinism",
                                    "determinism.declared",
                                    "determinism.environment",
                                    "result.outputs",
                                    "result.format.count",
                                    "code.outputs",
                                    "packages.python",
                                    "packages.python.version"};
  for (const char* c : {"result.criteria[0].", "result.criteria[1]."})
    for (const char* k : {"kind", "threshold", "k"}) optional.insert(std::string(c) + k);
  std::string mutated = p.base + "/mutated.json";
  int checked = 0;
  for (const auto& [ptr, shown] : paths) {
    const json& orig = ref.at(ptr);
    for (const json& bad : {json(nullptr), json(7), json::array(), json::object()}) {
      if (sameKind(orig, bad)) continue;
      // Null is "none" where the writers put it: no torch, no NVIDIA or AMD driver.
      if (bad.is_null() &&
          (shown.rfind("packages.torch", 0) == 0 || shown == "system.host.amd" || shown == "system.host.nvidia"))
        continue;
      json j = ref;
      j[ptr] = bad;
      writeFile(mutated, j.dump(2));
      expectCleanFailure(kdk({"reference", "verify", "--reference", mutated}, p.base), shown,
                         shown + " = " + bad.dump());
      ++checked;
    }
    if (shown.back() == ']') continue;  // an array element has no key to remove
    json j = ref;
    j[ptr.parent_pointer()].erase(ptr.back());
    writeFile(mutated, j.dump(2));
    RunResult r = kdk({"reference", "verify", "--reference", mutated}, p.base);
    // Maps of the project's own names: any of them may be left out.
    bool ownName = false;
    for (const char* m : {"code.parameters.", "seeds.", "determinism.declared.", "determinism.environment.",
                          "system.host.", "packages.torch"})
      ownName |= shown.rfind(m, 0) == 0;
    if (optional.count(shown) || ownName)
      EXPECT_EQ(r.code, 0) << "without " << shown << ": " << r.err;
    else
      expectCleanFailure(r, shown, "without " + shown);
  }
  EXPECT_GT(checked, 100);
  // Truncated, empty, not JSON at all, a directory, a missing file.
  std::string text = readFile(p.ref);
  writeFile(mutated, text.substr(0, text.size() / 2));
  RunResult t = kdk({"reference", "verify", "--reference", mutated}, p.base);
  expectCleanFailure(t, "truncated", "a truncated reference");
  writeFile(mutated, "");
  expectCleanFailure(kdk({"sample", "check", p.outputs, "--reference", mutated}, p.base), "mutated.json",
                     "an empty reference");
  writeFile(mutated, "[1, 2]");
  expectCleanFailure(kdk({"reference", "show", "--reference", mutated}, p.base), "expected an object", "an array");
  RunResult missing = kdk({"reference", "verify", "--reference", p.base + "/nope.json"}, p.base);
  EXPECT_EQ(missing.code, 3) << missing.err;
  EXPECT_NE(missing.err.find("nope.json"), std::string::npos);
}

TEST(RecordDocuments, ShellMetacharactersInReferenceFieldsRunNothing) {
  Project p = makeProject();
  json ref = json::parse(readFile(p.ref));
  std::vector<std::pair<json::json_pointer, std::string>> paths;
  walk(ref, json::json_pointer(), "", paths);
  std::string mark = p.base + "/owned", mutated = p.base + "/mutated.json";
  int strings = 0;
  for (const auto& [ptr, shown] : paths) {
    if (!ref.at(ptr).is_string()) continue;
    ++strings;
    for (const auto& payload : payloads(mark)) {
      json j = ref;
      j[ptr] = payload;
      writeFile(mutated, j.dump(2));
      RunResult v = kdk({"reference", "verify", "--reference", mutated}, p.base + "/cwd");
      EXPECT_GE(v.code, 0);
      EXPECT_LE(v.code, 3);
      EXPECT_EQ(v.err.find("internal error"), std::string::npos) << shown << ": " << v.err;
      if (shown.rfind("result.", 0) == 0) {
        RunResult s = kdk({"sample", "check", p.outputs, "--reference", mutated}, p.base + "/cwd");
        EXPECT_EQ(s.err.find("internal error"), std::string::npos) << shown << ": " << s.err;
      }
      ASSERT_FALSE(lexists(mark)) << "a shell ran the payload in " << shown << ": " << util::printable(payload);
    }
  }
  EXPECT_GT(strings, 15);
  // The repository path is handed to git as one argument: the hostile one is reported as such.
  json j = ref;
  j["code"]["repo"] = "x'; touch " + mark + "; echo '";
  writeFile(mutated, j.dump(2));
  json report = json::parse(kdk({"reference", "verify", "--json", "--reference", mutated}, p.base).out);
  EXPECT_EQ(countFindings(report, "reference.changed.code"), 1);
  EXPECT_FALSE(lexists(mark));
}

TEST(RecordDocuments, ReplayWithoutRunPrintsThePlanAndHostileProceduresRunNothing) {
  Project p = makeProject();
  std::string d = p.base + "/dossier";
  // The config and inputs lie beside the code: a folder given on the command line.
  RunResult b = kdk({"dossier", "build", d, "--reference", p.ref, "--outputs", p.outputs, "--input-root", p.base}, p.base);
  ASSERT_EQ(b.code, 3) << b.err;  // written, and its verdict is incomplete: no check report is included
  ASSERT_TRUE(lexists(d + "/MANIFEST.sha256"));
  RunResult replay = kdk({"dossier", "replay", "--json", d}, p.base + "/cwd");
  json rj = json::parse(replay.out);
  EXPECT_EQ(countFindings(rj, "replay.not_run"), 1) << replay.out;
  // The plan is printed, the project's entry point among it, and nothing runs.
  EXPECT_NE(replay.err.find("dossier replay --run would run, in a fresh folder REPLAY:"), std::string::npos)
      << replay.err;
  EXPECT_NE(replay.err.find("touch " + p.ran), std::string::npos) << replay.err;
  EXPECT_FALSE(lexists(p.ran));

  // procedure.json rewritten by someone else, with a MANIFEST.sha256 that matches it.
  json procedure = json::parse(readFile(d + "/procedure.json"));
  std::string manifest = readFile(d + "/MANIFEST.sha256");
  auto install = [&](const std::string& text) {
    writeFile(d + "/procedure.json", text);
    std::string m;
    for (const auto& line : util::split(manifest, '\n'))
      if (!line.empty())
        m += (line.ends_with("  procedure.json") ? util::sha256Hex(text) + "  procedure.json" : line) + "\n";
    writeFile(d + "/MANIFEST.sha256", m);
  };
  std::vector<std::pair<json::json_pointer, std::string>> paths;
  walk(procedure, json::json_pointer(), "", paths);
  std::string mark = p.base + "/owned";
  for (const auto& [ptr, shown] : paths) {
    const json& orig = procedure.at(ptr);
    if (orig.is_string())
      for (const auto& payload : payloads(mark)) {
        json j = procedure;
        j[ptr] = payload;
        install(j.dump(2));
        RunResult r = kdk({"dossier", "replay", d}, p.base + "/cwd");
        EXPECT_GE(r.code, 0);
        EXPECT_LE(r.code, 3);
        EXPECT_EQ(r.err.find("internal error"), std::string::npos) << shown << ": " << r.err;
        ASSERT_FALSE(lexists(mark)) << "a shell ran the payload in " << shown << ": " << util::printable(payload);
      }
    for (const json& bad : {json(nullptr), json(7), json::array(), json::object()}) {
      if (sameKind(orig, bad)) continue;
      // Null is "none" where the writers put it: no torch, no NVIDIA or AMD driver.
      if (bad.is_null() &&
          (shown.rfind("packages.torch", 0) == 0 || shown == "system.host.amd" || shown == "system.host.nvidia"))
        continue;
      json j = procedure;
      j[ptr] = bad;
      install(j.dump(2));
      expectCleanFailure(kdk({"dossier", "replay", d}, p.base + "/cwd"), shown, shown + " = " + bad.dump());
    }
    if (shown.back() == ']') continue;
    json j = procedure;
    j[ptr.parent_pointer()].erase(ptr.back());
    install(j.dump(2));
    expectCleanFailure(kdk({"dossier", "replay", d}, p.base + "/cwd"), shown, "without " + shown);
  }
  // A Kernodeck step that would write a file where it likes, or run another subcommand, is refused.
  json j = procedure;
  j["steps"][0]["argv"] = {"reference", "verify", "--reference", "reference.json", "-o", mark};
  install(j.dump(2));
  expectCleanFailure(kdk({"dossier", "replay", d}, p.base + "/cwd"), "steps[0].argv", "-o in a step");
  j["steps"][0]["argv"] = {"audit", "docker://example.org/x"};
  install(j.dump(2));
  expectCleanFailure(kdk({"dossier", "replay", d}, p.base + "/cwd"), "steps[0].argv", "audit in a step");
  std::string text = procedure.dump(2);
  install(text.substr(0, text.size() / 3));
  expectCleanFailure(kdk({"dossier", "replay", d}, p.base + "/cwd"), "truncated", "a truncated procedure");
  EXPECT_FALSE(lexists(mark));
  EXPECT_FALSE(lexists(p.ran));
  // A manifest naming a path outside the dossier is refused before anything is read.
  install(procedure.dump(2));
  writeFile(d + "/MANIFEST.sha256", readFile(d + "/MANIFEST.sha256") + std::string(64, 'a') + "  ../../etc/passwd\n");
  expectCleanFailure(kdk({"dossier", "verify", d}, p.base), "../../etc/passwd", "a manifest escaping the dossier");
}

TEST(RecordDocuments, DiffAndDossierBuildRejectOtherDocuments) {
  Project p = makeProject();
  writeFile(p.base + "/host.json", R"({"schema": "kernodeck.host/v1", "host": {}})");
  expectCleanFailure(kdk({"diff", p.ref, p.base + "/host.json"}, p.base), "host.json", "a host record in diff");
  json ref = json::parse(readFile(p.ref));
  ref["data"][0]["files"][0]["size"] = "12";
  writeFile(p.base + "/bad.json", ref.dump());
  expectCleanFailure(kdk({"diff", p.ref, p.base + "/bad.json"}, p.base), "data[0].files[0].size",
                     "a bad reference in diff");
  expectCleanFailure(kdk({"dossier", "build", p.base + "/d1", "--reference", p.base + "/bad.json"}, p.base),
                     "data[0].files[0].size", "a bad reference in dossier build");
  writeFile(
      p.base + "/report.json",
      R"({"schema": "kernodeck.report/v1", "tool": {"command": "audit"}, "subject": {}, "steps": [{"name": 1}], "findings": []})");
  expectCleanFailure(
      kdk({"dossier", "build", p.base + "/d2", "--reference", p.ref, "--report", p.base + "/report.json"}, p.base),
      "steps[0].name", "a bad report in dossier build");
  EXPECT_FALSE(lexists(p.base + "/d2/reference.json"));

  // Two references that differ in entry point, criterion and expected hash: each named.
  json other = json::parse(readFile(p.ref));
  other["code"]["entry_point"] = "python embed.py --fast";
  other["result"]["criteria"][0]["text"] = "abs<=0.01";
  other["result"]["criteria"][0]["threshold"] = 0.01;
  other["result"]["expected_sha256"] = std::string(64, 'f');
  other["seeds"].erase("torch");
  writeFile(p.base + "/other.json", other.dump());
  RunResult d = kdk({"diff", "--json", p.ref, p.base + "/other.json"}, p.base);
  EXPECT_EQ(d.code, 1) << d.err;
  json dj = json::parse(d.out);
  EXPECT_EQ(countFindings(dj, "diff.reference.changed"), 4)
      << dj.dump(1);  // entry point, expected hash, criterion gone, criterion new
  EXPECT_EQ(countFindings(dj, "diff.reference.not_recorded"), 1) << dj.dump(1);  // the seed
  for (const char* named : {"code.entry_point", "result.expected_sha256", "criterion abs<=0.001 is only in A",
                            "criterion abs<=0.01 is only in B", "seeds.torch is not recorded in B"})
    EXPECT_NE(d.out.find(named), std::string::npos) << named;
  // Two sample reports compared step by step and finding by finding.
  json pass = {{"schema", "kernodeck.report/v1"},
               {"tool", {{"command", "sample check"}}},
               {"subject", json::object()},
               {"steps", {{{"name", "compare"}, {"status", "passed"}, {"error", nullptr}}}},
               {"findings", json::array()}};
  json fail = pass;
  fail["steps"][0]["status"] = "skipped";
  fail["steps"][0]["error"] = "not checked";
  fail["findings"] = {{{"code", "sample.nonfinite"}, {"severity", "error"}, {"message", "NaN in doc03"}}};
  writeFile(p.base + "/pass.json", pass.dump());
  writeFile(p.base + "/fail.json", fail.dump());
  json rd = json::parse(kdk({"diff", "--json", p.base + "/pass.json", p.base + "/fail.json"}, p.base).out);
  EXPECT_EQ(countFindings(rd, "diff.step.changed"), 1) << rd.dump(1);
  EXPECT_EQ(countFindings(rd, "diff.finding.changed"), 1) << rd.dump(1);

  // A report that did not complete is flagged, and the page opens with the verdict and why.
  json broken = pass;
  broken["steps"][0]["status"] = "failed";
  broken["steps"][0]["error"] = "cannot open output folder out";
  broken["first_error"] = "cannot open output folder out";
  writeFile(p.base + "/broken.json", broken.dump());
  RunResult built = kdk({"dossier", "build", "--json", p.base + "/d3", "--reference", p.ref, "--report",
                   p.base + "/pass.json", "--report", p.base + "/broken.json", "--input-root", p.base},
                  p.base);
  ASSERT_EQ(built.code, 3) << built.err;  // the page's verdict: incomplete
  EXPECT_EQ(countFindings(json::parse(built.out), "dossier.report.failed"), 1) << built.out;
  EXPECT_NE(readFile(p.base + "/d3/index.html")
                .find("Verdict: incomplete</strong> &mdash; report 2 (kernodeck sample check) did not complete"),
            std::string::npos);
  ASSERT_EQ(kdk({"dossier", "build", p.base + "/d4", "--reference", p.ref, "--report", p.base + "/pass.json",
                 "--report", p.base + "/fail.json", "--input-root", p.base},
                p.base)
                .code,
            1);  // the page's verdict: failed
  EXPECT_NE(readFile(p.base + "/d4/index.html")
                .find("Verdict: failed</strong> &mdash; report 2 (kernodeck sample check): sample.nonfinite"),
            std::string::npos);
  ASSERT_EQ(kdk({"dossier", "build", p.base + "/d5", "--reference", p.ref, "--report", p.base + "/pass.json",
                 "--input-root", p.base},
                p.base)
                .code,
            0);
  EXPECT_NE(readFile(p.base + "/d5/index.html").find("Verdict: passed</strong>"), std::string::npos);
}

TEST(RecordDocuments, HelpAndUsageErrors) {
  std::string cwd = tempDir("help");
  for (std::vector<std::string> args : {std::vector<std::string>{"reference", "--help"},
                                        {"reference", "init", "--help"},
                                        {"reference", "show", "--help"},
                                        {"reference", "verify", "--help"},
                                        {"sample", "--help"},
                                        {"sample", "check", "--help"},
                                        {"dossier", "--help"},
                                        {"dossier", "build", "--help"},
                                        {"dossier", "verify", "--help"},
                                        {"dossier", "replay", "--help"},
                                        {"diff", "--help"},
                                        {"resume", "--help"},
                                        {"resume", "check", "--help"},
                                        {"resume", "inspect", "--help"}}) {
    RunResult r = kdk(args, cwd);
    EXPECT_EQ(r.code, 0) << util::join(args, " ") << ": " << r.err;
    EXPECT_NE(r.out.find("usage: kernodeck"), std::string::npos) << util::join(args, " ");
  }
  for (std::vector<std::string> args : {std::vector<std::string>{"reference"},
                                        {"reference", "bogus"},
                                        {"reference", "verify", "--bogus"},
                                        {"sample"},
                                        {"sample", "chek"},
                                        {"dossier"},
                                        {"dossier", "replay"},
                                        {"dossier", "explode", "x"},
                                        {"diff", "a.json"},
                                        {"resume"}}) {
    RunResult r = kdk(args, cwd);
    EXPECT_EQ(r.code, 2) << util::join(args, " ") << ": " << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos);
  }
}

}  // namespace integration_record_documents_test
