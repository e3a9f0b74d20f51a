// planReplay: the plan `dossier replay --run` prints, writes into procedure.md and executes,
// from a reference and the files a dossier carries. Each hostile field leaves its action with a
// problem (the step fails there) instead of a command that would run it.
#include <gtest/gtest.h>

#include <algorithm>

#include "kernodeck/record/record.h"

namespace record_replay_plan_test {

using namespace kernodeck::record;

namespace {

const std::string kRev(40, 'a');

// The example project's reference, as replay --run sees it.
Reference exampleReference() {
  Reference ref;
  ref.code.repo = ".";
  ref.code.revision = kRev;
  ref.code.entryPoint = "python embed.py --inputs data/inputs.csv --weights weights.pt --out out";
  ref.code.outputs = "out";
  HashedInput data, weights;
  data.name = "inputs", data.path = "data/inputs.csv", data.sha256 = std::string(64, '1'), data.kind = "file";
  weights.name = "encoder", weights.path = "weights.pt", weights.sha256 = std::string(64, '2'), weights.kind = "file";
  ref.data = {data};
  ref.weights = {weights};
  ref.packages.interpreter = "/usr/bin/python3";
  ref.packages.requirementsLines = {"torch>=1.12", "numpy>=1.24"};
  ref.packages.requirementsSha256 = std::string(64, '3');
  ref.result.declared = true;
  ref.result.expectedSha256 = std::string(64, '4');
  ref.environment = {{"PYTHONHASHSEED", "0"}, {"LD_PRELOAD", "/tmp/evil.so"}};
  return ref;
}

const std::vector<std::string> kCarried = {"code.tar", "inputs/data/inputs", "inputs/weights/encoder",
                                           "expected/embeddings.npy", "expected/ids.txt"};

const ReplayAction* find(const std::vector<ReplayAction>& plan, const std::string& step, ReplayAction::Kind kind) {
  auto it =
      std::find_if(plan.begin(), plan.end(), [&](const ReplayAction& a) { return a.step == step && a.kind == kind; });
  return it == plan.end() ? nullptr : &*it;
}

std::string problems(const std::vector<ReplayAction>& plan) {
  std::string all;
  for (const auto& a : plan)
    if (!a.problem.empty()) all += a.step + ": " + a.problem + "\n";
  return all;
}

}  // namespace

TEST(ReplayPlan, ExampleProjectPlansEveryStep) {
  ReplayPlanOptions o{.dossier = "/d", .root = "/r", .python = "", .repo = ""};
  auto plan = planReplay(exampleReference(), Procedure{}, kCarried, o);
  EXPECT_EQ(problems(plan), "");
  using K = ReplayAction::Kind;
  ASSERT_NE(find(plan, "code", K::Unpack), nullptr);
  const ReplayAction* entry = find(plan, "run", K::Command);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->argv, (std::vector<std::string>{"/r/venv/bin/python", "embed.py", "--inputs", "data/inputs.csv",
                                                   "--weights", "weights.pt", "--out", "out"}));
  EXPECT_EQ(entry->cwd, "project");
  // Only the variables that change results are taken from the reference.
  EXPECT_EQ(entry->env, (std::map<std::string, std::string>{{"PYTHONHASHSEED", "0"}}));
  EXPECT_EQ(describe(*find(plan, "environment", K::Command), o),
            "/usr/bin/python3 -m venv --system-site-packages --without-pip /r/venv");
  const ReplayAction* weights = nullptr;
  for (const auto& a : plan)
    if (a.kind == K::Place && a.from == "inputs/weights/encoder") weights = &a;
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->to, "project/weights.pt");
  EXPECT_EQ(weights->what, "weights 'encoder' (weights.pt)");
  // --python: no venv, no pip; the entry point uses the interpreter given.
  o.python = "/opt/py/bin/python3";
  plan = planReplay(exampleReference(), Procedure{}, kCarried, o);
  EXPECT_EQ(std::count_if(plan.begin(), plan.end(), [](const ReplayAction& a) { return a.step == "environment"; }), 0);
  EXPECT_EQ(find(plan, "run", K::Command)->argv[0], "/opt/py/bin/python3");
}

TEST(ReplayPlan, HostileFieldsBecomeProblemsNotCommands) {
  struct Case {
    const char* name;
    void (*mutate)(Reference&, std::vector<std::string>&);
    const char* step;
    const char* says;
  } cases[] = {
      {"data path climbs out", [](Reference& r, std::vector<std::string>&) { r.data[0].path = "../../etc/cron.d/x"; },
       "place", "outside the project folder"},
      {"absolute weights path", [](Reference& r, std::vector<std::string>&) { r.weights[0].path = "/etc/passwd"; },
       "place", "outside the project folder"},
      {"name with a slash", [](Reference& r, std::vector<std::string>&) { r.weights[0].name = "../x"; }, "place",
       "not a plain file name"},
      {"weights not carried", [](Reference&, std::vector<std::string>& c) { c.erase(c.begin() + 2); }, "place",
       "not carried in the dossier"},
      {"shell interpreter", [](Reference& r, std::vector<std::string>&) { r.packages.interpreter = "/bin/sh"; },
       "environment", "not an absolute path to a python"},
      {"relative interpreter", [](Reference& r, std::vector<std::string>&) { r.packages.interpreter = "python3"; },
       "environment", "not an absolute path to a python"},
      {"no interpreter", [](Reference& r, std::vector<std::string>&) { r.packages.interpreter.clear(); }, "environment",
       "pass --python PATH"},
      {"shell entry point", [](Reference& r, std::vector<std::string>&) { r.code.entryPoint = "sh -c 'touch owned'"; },
       "run", "neither python nor a file"},
      {"absolute program", [](Reference& r, std::vector<std::string>&) { r.code.entryPoint = "/bin/rm -rf /"; }, "run",
       "neither python nor a file"},
      {"program climbing out", [](Reference& r, std::vector<std::string>&) { r.code.entryPoint = "../../bin/x"; },
       "run", "neither python nor a file"},
      {"outputs climb out", [](Reference& r, std::vector<std::string>&) { r.code.outputs = "../.."; }, "run",
       "not a path inside the project"},
      {"no outputs", [](Reference& r, std::vector<std::string>&) { r.code.outputs.clear(); }, "run",
       "names no outputs folder"},
      {"revision as an option",
       [](Reference& r, std::vector<std::string>& c) {
         r.code.revision = "--upload-pack=touch owned";
         c.erase(c.begin());
       },
       "code", "not a full commit id"},
      {"requirements with a find-links",
       [](Reference& r, std::vector<std::string>&) {
         r.packages.requirementsLines.push_back("--find-links https://example.org/w");
       },
       "environment", "a replay installs offline"},
      {"requirements with -i",
       [](Reference& r, std::vector<std::string>&) {
         r.packages.requirementsLines.push_back("-ihttps://example.org/simple");
       },
       "environment", "a replay installs offline"},
      {"relative repo, no code.tar", [](Reference&, std::vector<std::string>& c) { c.erase(c.begin()); }, "code",
       "pass --repo PATH"},
  };
  for (const auto& c : cases) {
    Reference ref = exampleReference();
    std::vector<std::string> carried = kCarried;
    c.mutate(ref, carried);
    auto plan = planReplay(ref, Procedure{}, carried, {.dossier = "/d", .root = "/r", .python = "", .repo = ""});
    auto it = std::find_if(plan.begin(), plan.end(), [](const ReplayAction& a) { return !a.problem.empty(); });
    ASSERT_NE(it, plan.end()) << c.name;
    EXPECT_EQ(it->step, c.step) << c.name << ": " << it->problem;
    EXPECT_NE(it->problem.find(c.says), std::string::npos) << c.name << ": " << it->problem;
  }
  // A project script is run from the code folder, never looked up on PATH.
  Reference ref = exampleReference();
  ref.code.entryPoint = "./run.sh --fast";
  auto plan = planReplay(ref, Procedure{}, kCarried, {.dossier = "/d", .root = "/r", .python = "", .repo = ""});
  EXPECT_EQ(problems(plan), "");
  EXPECT_EQ(find(plan, "run", ReplayAction::Kind::Command)->argv,
            (std::vector<std::string>{"/r/project/run.sh", "--fast"}));
}

TEST(ReplayPlan, AnImageIsTakenOnlyByDigest) {
  const std::string hex(64, 'c');
  auto ok = imageDigest("registry.example.com/team/app@sha256:" + hex);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, "sha256:" + hex);
  for (const std::string& bad :
       {std::string("registry.example.com/team/app:1.0"), "app@sha256:" + hex.substr(1), "app@sha512:" + hex + hex,
        "@sha256:" + hex, "app:1@sha256:" + hex + " x", "app@sha256:" + std::string(64, 'C')}) {
    auto r = imageDigest(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_TRUE(r.error().is(kernodeck::ErrorKind::Invalid)) << bad;
  }
}

TEST(ReplayPlan, InAnImageTheInterpreterIsNotLookedForOnThisHost) {
  Reference ref = exampleReference();
  ref.packages.interpreter = "/opt/only-in-the-image/bin/python3";
  ReplayPlanOptions host{.dossier = "D", .root = "R"};
  EXPECT_NE(problems(planReplay(ref, {}, kCarried, host)).find("does not exist here"), std::string::npos);
  ReplayPlanOptions image{.dossier = "D", .root = "R", .image = "app@sha256:" + std::string(64, 'c')};
  auto plan = planReplay(ref, {}, kCarried, image);
  EXPECT_EQ(problems(plan).find("does not exist here"), std::string::npos) << problems(plan);
  const ReplayAction* venv = find(plan, "environment", ReplayAction::Kind::Command);
  ASSERT_NE(venv, nullptr);
  EXPECT_EQ(describe(*venv, image).rfind("[in app@sha256:", 0), 0u) << describe(*venv, image);
}

}  // namespace record_replay_plan_test
