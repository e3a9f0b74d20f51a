// `kernodeck resume check` on the user's own training: the embeddings example's real
// training script passes, and a copy that neither saves nor restores the optimizer state
// fails with the optimizer named (both need Debian's python3-torch). A small NumPy "training"
// driven by the KERNODECK_RESUME_* variables alone covers the rest of the contract: a
// training that is not deterministic, one that loses its state, no checkpoint, no weights, a
// failing or hanging command, and the usage errors.
#include <gtest/gtest.h>

#include "support.h"

namespace integration_resume_command_test {

using nlohmann::json;
using namespace kdktest;

namespace {

const std::string K = KERNODECK_BIN;
const std::string kTrain = std::string(SOURCE_DIR) + "/examples/embeddings/train.py";

// The example's interface, as its docstring and README show it.
std::string trainArgs(const std::string& script) {
  return " --steps 12 --at 5 --weights weights.pt -- /usr/bin/python3 " + script +
         " --steps {steps} --save-at {save_at} --checkpoint {checkpoint} --resume {resume} --out {out}";
}

bool haveTorch() { return run("/usr/bin/python3 -c 'import torch, numpy'").code == 0; }
bool haveNumpy() { return run("/usr/bin/python3 -c 'import numpy'").code == 0; }

json report(const RunResult& r) { return json::parse(r.out, nullptr, false); }

const json* finding(const json& j, const std::string& code) {
  for (const auto& f : j["findings"])
    if (f.value("code", "") == code) return &f;
  return nullptr;
}

// A training in NumPy that reads everything from the environment: a weight vector moved each
// step (randomly in mode "random"), checkpointed at KERNODECK_RESUME_SAVE_AT with its step.
// "forget" resumes the step counter but not the weights; "nockpt" saves nothing; "noweights"
// writes no weights; "dir" saves its checkpoint as a folder, as some frameworks do.
const char* kFakeTrainer = R"(import numpy as np, os, sys
e = os.environ
mode = sys.argv[1]
steps, save_at = int(e['KERNODECK_RESUME_STEPS']), int(e['KERNODECK_RESUME_SAVE_AT'])
w, start = np.zeros(4), 0
if e.get('KERNODECK_RESUME_FROM'):
    d = np.load(e['KERNODECK_RESUME_FROM'] + ('/state.npy' if mode == 'dir' else ''))
    start = int(d[4])
    if mode != 'forget':
        w = d[:4]
for s in range(start, steps):
    w = w + (np.random.rand(4) if mode == 'random' else np.arange(4) * (s + 1))
    if s + 1 == save_at and mode == 'dir':
        os.makedirs(e['KERNODECK_RESUME_CHECKPOINT'])
        np.save(e['KERNODECK_RESUME_CHECKPOINT'] + '/state.npy', np.append(w, s + 1))
    elif s + 1 == save_at and mode != 'nockpt':
        np.save(e['KERNODECK_RESUME_CHECKPOINT'], np.append(w, s + 1))
if mode != 'noweights':
    np.save(os.path.join(e['KERNODECK_RESUME_OUT'], 'w.npy'), w)
)";

}  // namespace

TEST(ResumeCommand, PassesOnTheEmbeddingsTrainingScript) {
  if (!haveTorch())
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy (Debian's python3-torch, python3-numpy)";
  RunResult r = run(K + " resume check --json" + trainArgs(kTrain));
  json j = report(r);
  ASSERT_TRUE(j.is_object()) << r.out << r.err;
  EXPECT_EQ(r.code, 0) << r.out << r.err;
  for (const char* s : {"straight", "checkpoint", "resumed", "compare"})
    EXPECT_EQ(stepStatus(j, s), "passed") << s << " " << j.dump(1);
  EXPECT_EQ(stepStatus(j, "repeat"), "skipped");
  // The measured value against the threshold: bit for bit, on every tensor of the state_dict.
  EXPECT_EQ(j["compare"]["measure"], 0.0);
  EXPECT_EQ(j["compare"]["tensors"], 6);  // encoder.0 and encoder.3 weight and bias, head weight and bias
  const json* matches = finding(j, "resume.matches");
  ASSERT_NE(matches, nullptr);
  EXPECT_NE(matches->value("message", "").find("exact: max abs error 0 <= 0 over 6 tensor(s)"), std::string::npos)
      << matches->dump();
  // Which state the checkpoint holds: all of it, data order included.
  if (stepStatus(j, "inspect") == "passed") {
    EXPECT_EQ(j["checkpoint"]["held"],
              json::array({"model", "optimizer state", "RNG state", "step counter", "LR scheduler", "data order"}))
        << j["checkpoint"].dump();
    EXPECT_EQ(countFindings(j, "resume.checkpoint.missing"), 0);
  } else {
    EXPECT_EQ(stepStatus(j, "inspect"), "skipped");  // a build without the LibTorch plugin
  }
  // Each run in its own folder; only the resumed run is handed a checkpoint.
  ASSERT_EQ(j["runs"].size(), 3u);
  auto argAfter = [&](const json& run, const std::string& flag) {
    const auto& argv = run["argv"];
    for (size_t i = 0; i + 1 < argv.size(); ++i)
      if (argv[i] == flag) return argv[i + 1].get<std::string>();
    return std::string("(absent)");
  };
  EXPECT_EQ(argAfter(j["runs"][0], "--resume"), "");
  EXPECT_EQ(argAfter(j["runs"][1], "--steps"), "5");
  EXPECT_EQ(argAfter(j["runs"][2], "--resume"), argAfter(j["runs"][1], "--checkpoint"));
  EXPECT_NE(argAfter(j["runs"][0], "--out"), argAfter(j["runs"][2], "--out"));
  // The work folder is gone.
  EXPECT_NE(run("test -e " + argAfter(j["runs"][0], "--out")).code, 0);
}

TEST(ResumeCommand, FailsWhenTheScriptForgetsTheOptimizerState) {
  if (!haveTorch())
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy (Debian's python3-torch, python3-numpy)";
  std::string base = tempDir("resume-cmd");
  // The same script, with the optimizer state neither saved nor restored.
  std::string script = readFile(kTrain), saved = "\"optimizer\": optimizer.state_dict(),",
              restored = "optimizer.load_state_dict(state[\"optimizer\"])";
  ASSERT_NE(script.find(saved), std::string::npos);
  ASSERT_NE(script.find(restored), std::string::npos);
  script.replace(script.find(saved), saved.size(), "");
  script.replace(script.find(restored), restored.size(), "pass");
  writeFile(base + "/train.py", script);
  writeFile(base + "/embed.py",
            readFile(std::string(SOURCE_DIR) + "/examples/embeddings/embed.py"));  // the model it imports
  // The command as one string this time (--cmd), run from the project's folder (--cwd).
  RunResult r = run(K + " resume check --json --steps 12 --at 5 --weights weights.pt --cwd " + base +
                    " --cmd '/usr/bin/python3 train.py --steps {steps} --save-at {save_at} --checkpoint {checkpoint} "
                    "--resume {resume} --out {out}'");
  json j = report(r);
  ASSERT_TRUE(j.is_object()) << r.out << r.err;
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  EXPECT_EQ(stepStatus(j, "compare"), "passed");
  EXPECT_EQ(stepStatus(j, "repeat"), "passed");  // a second straight run matches: the training is deterministic
  EXPECT_EQ(countFindings(j, "resume.nondeterministic"), 0);
  const json* diverged = finding(j, "resume.diverged");
  ASSERT_NE(diverged, nullptr) << j.dump(1);
  std::string message = diverged->value("message", "");
  EXPECT_NE(message.find("exact: max abs error"), std::string::npos) << message;
  EXPECT_GT(j["compare"]["measure"].get<double>(), 0.0);
  if (stepStatus(j, "inspect") == "passed") {
    EXPECT_NE(message.find("the checkpoint holds no optimizer state"), std::string::npos) << message;
    EXPECT_EQ(diverged->value("missing", ""), "optimizer state") << diverged->dump();
  }
}

// A script that saves its optimizer state but never loads it back: the checkpoint holds it, so
// the finding says that the resumed run did not restore it (one step after resuming, the two
// runs' optimizer states differ), and names nothing this training does not use (it has no LR
// scheduler and no shuffled data order).
TEST(ResumeCommand, BlamesStateHeldButNotRestored) {
  if (!haveTorch())
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch and numpy (Debian's python3-torch, python3-numpy)";
  std::string base = tempDir("resume-restore");
  writeFile(base + "/train.py", R"(import argparse, os, torch
ap = argparse.ArgumentParser()
for a in ("--steps", "--save-at"):
    ap.add_argument(a, type=int)
for a in ("--checkpoint", "--resume", "--out"):
    ap.add_argument(a, default="")
args = ap.parse_args()
torch.manual_seed(0)
torch.set_num_threads(1)
x, y = torch.randn(32, 8), torch.randn(32, 1)
model = torch.nn.Linear(8, 1)
opt = torch.optim.Adam(model.parameters(), lr=0.05)
step = 0
if args.resume:
    state = torch.load(args.resume)
    model.load_state_dict(state["model"])
    step = state["step"]  # the optimizer state is saved but never loaded back
while step < args.steps:
    opt.zero_grad()
    torch.nn.functional.mse_loss(model(x), y).backward()
    opt.step()
    step += 1
    if step == args.save_at and args.checkpoint:
        torch.save({"model": model.state_dict(), "optimizer": opt.state_dict(), "step": step}, args.checkpoint)
os.makedirs(args.out, exist_ok=True)
torch.save(model.state_dict(), os.path.join(args.out, "weights.pt"))
)");
  RunResult r =
      run(K + " resume check --json --steps 8 --at 3 --weights weights.pt -- /usr/bin/python3 " + base +
          "/train.py --steps {steps} --save-at {save_at} --checkpoint {checkpoint} --resume {resume} --out {out}");
  json j = report(r);
  ASSERT_TRUE(j.is_object()) << r.out << r.err;
  EXPECT_EQ(r.code, 1) << r.out << r.err;
  const json* diverged = finding(j, "resume.diverged");
  ASSERT_NE(diverged, nullptr) << j.dump(1);
  std::string message = diverged->value("message", "");
  EXPECT_NE(message.find("the checkpoint holds optimizer state, but the resumed run did not restore it"),
            std::string::npos)
      << message << "\n"
      << j["locate"].dump();
  EXPECT_EQ(diverged->value("not_restored", ""), "optimizer state") << diverged->dump();
  for (const char* unused : {"LR scheduler", "data order"})
    EXPECT_EQ(message.find(unused), std::string::npos) << unused << ": " << message;
  EXPECT_EQ(j["locate"]["differing_pieces"], json::array({"model", "optimizer state"})) << j["locate"].dump();
}

TEST(ResumeCommand, EnvironmentContractAndWhatCannotBeChecked) {
  if (!haveNumpy()) GTEST_SKIP() << "/usr/bin/python3 cannot import numpy (Debian's python3-numpy)";
  std::string base = tempDir("resume-env");
  writeFile(base + "/fake_train.py", kFakeTrainer);
  auto check = [&](const std::string& mode, const std::string& extra = "") {
    // A KERNODECK_RESUME_FROM inherited from outside must not reach the runs that do not resume.
    return run("KERNODECK_RESUME_FROM=/nonexistent " + K +
               " resume check --json --steps 6 --at 2 --weights w.npy --checkpoint-name ckpt.npy" + extra +
               " -- /usr/bin/python3 " + base + "/fake_train.py " + mode);
  };
  RunResult ok = check("ok");
  json j = report(ok);
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_EQ(stepStatus(j, "inspect"), "skipped") << j.dump(1);  // a .npy is no torch checkpoint: nothing to tell
  EXPECT_EQ(j["checkpoint"]["absent"], json::array());          // and nothing is said to be missing
  // A checkpoint folder is handed to the resume as it is.
  RunResult dir =
      run(K + " resume check --json --steps 6 --at 2 --weights w.npy --checkpoint-name ckpt -- /usr/bin/python3 " +
          base + "/fake_train.py dir");
  j = report(dir);
  EXPECT_EQ(dir.code, 0) << dir.out << dir.err;
  EXPECT_NE(j["checkpoint"].value("why", "").find("a folder"), std::string::npos) << j.dump(1);
  // Two straight runs that differ: the training is not deterministic; no state is blamed.
  RunResult random = check("random", " --criterion 'abs<=1e-3'");
  j = report(random);
  EXPECT_EQ(random.code, 1) << random.out;
  EXPECT_EQ(countFindings(j, "resume.nondeterministic"), 1) << j.dump(1);
  EXPECT_EQ(countFindings(j, "resume.diverged"), 0);
  // A resume that loses the weights, in a deterministic training.
  RunResult forget = check("forget");
  j = report(forget);
  EXPECT_EQ(forget.code, 1) << forget.out;
  ASSERT_EQ(countFindings(j, "resume.diverged"), 1) << j.dump(1);
  // Right after loading, the resumed run's weights are not those saved: the model is named as
  // held and not restored, though the .npy checkpoint itself cannot be inspected.
  EXPECT_NE(finding(j, "resume.diverged")->value("message", "").find("the resumed run did not restore the model"),
            std::string::npos)
      << j.dump(1);
  EXPECT_EQ(finding(j, "resume.diverged")->value("not_restored", ""), "model");
  // The same under a tolerance it meets is a pass, and says so with the numbers.
  j = report(check("forget", " --criterion 'abs<=100'"));
  ASSERT_NE(finding(j, "resume.matches"), nullptr) << j.dump(1);
  EXPECT_NE(finding(j, "resume.matches")->value("message", "").find("<= 100 over 1 tensor(s)"), std::string::npos);
  // What keeps the check from being made: exit 3 and the first error names it.
  struct Case {
    std::string mode, extra, step, says;
  } cases[] = {
      {"nockpt", "", "checkpoint", "wrote no checkpoint at"},
      {"noweights", "", "straight", "wrote no w.npy in {out}"},
  };
  for (const auto& c : cases) {
    RunResult r = check(c.mode, c.extra);
    json rj = report(r);
    EXPECT_EQ(r.code, 3) << c.mode << r.out;
    EXPECT_EQ(stepStatus(rj, c.step), "failed") << c.mode;
    EXPECT_NE(rj.value("first_error", "").find(c.says), std::string::npos) << rj.value("first_error", "");
  }
  struct Cmd {
    std::string argv, says;
  } commands[] = {
      {"/bin/false", "exited with status 1"},
      {"/nonexistent/train", "could not start /nonexistent/train"},
      {"/bin/sleep 30", "stopped after 1.0 s (time limit)"},
  };
  for (const auto& c : commands) {
    RunResult r = run(K + " resume check --json --weights w.pt --timeout 1 -- " + c.argv);
    json rj = report(r);
    EXPECT_EQ(r.code, 3) << c.argv << r.out;
    EXPECT_NE(rj.value("first_error", "").find(c.says), std::string::npos) << rj.value("first_error", "");
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;  // one line on stderr too
  }
}

TEST(ResumeCommand, UsageErrorsStartNothing) {
  std::string base = tempDir("resume-usage");
  std::string marker = base + "/ran";
  struct Case {
    std::string args, says;
  } cases[] = {
      {"--cmd 'touch " + marker + "'", "needs --weights"},
      {"--weights w.pt --cmd 'touch " + marker + "' -- touch " + marker, "either with --cmd or after --"},
      {"--weights w.pt --cmd 'touch " + marker + " | cat'", "runs no shell"},
      {"--weights w.pt --cmd 'touch $HOME/x'", "'$'"},
      {"--weights w.pt --cmd ''", "empty"},
      {"--weights w.pt --", "empty"},
      {"--weights w.pt -- touch {stpes}", "unknown placeholder {stpes}"},
      {"--weights w.pt --atol 0.1 -- touch " + marker, "--atol and --seed"},
      {"--weights w.pt --criterion 'knn:5>=0.9' -- touch " + marker, "ranks samples"},
      {"--weights w.pt --criterion 'abs<1' -- touch " + marker, "criterion"},
      {"--weights w.pt --at 0 -- touch " + marker, "--at must be"},
      {"--weights w.pt --steps 5 --at 5 -- touch " + marker, "--at must be"},
      {"--weights ../w.pt -- touch " + marker, "relative path inside {out}"},
      {"--weights /tmp/w.pt -- touch " + marker, "relative path inside {out}"},
      {"--weights w.pt --timeout 0 -- touch " + marker, "--timeout"},
      {"--weights w.bin -- touch " + marker, "use .pt, .pth, .safetensors or .npy"},
      {"--weights w.pt", "need a command"},
  };
  for (const auto& c : cases) {
    RunResult r = run(K + " resume check " + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << "\n" << r.err;
  }
  RunResult inspect = run(K + " resume inspect x.pt -- touch " + marker);
  EXPECT_EQ(inspect.code, 2) << inspect.err;
  EXPECT_NE(run("test -e " + marker).code, 0) << "a usage error started the command";
  // The contract is in --help.
  RunResult help = run(K + " resume check --help");
  EXPECT_EQ(help.code, 0);
  for (const char* s : {"{steps}", "{save_at}", "{checkpoint}", "{resume}", "{out}", "KERNODECK_RESUME_STEPS",
                        "--weights", "--criterion", "never\nthrough a shell"})
    EXPECT_NE(help.out.find(s), std::string::npos) << s;
}

}  // namespace integration_resume_command_test
