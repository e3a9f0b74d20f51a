// kernodeck resume check|inspect: training resumed from a checkpoint against one straight through; what a checkpoint
// holds.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <climits>
#include <cmath>
#include <cstdio>
#include <optional>

#include "commands.h"
#include "kernodeck/probe/resume.h"
#include "kernodeck/record/record.h"
#include "kernodeck/record/resume_check.h"
#include "kernodeck/util/process.h"
#include "kernodeck/util/strings.h"
#include "options.h"
#include "record_flags.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

namespace {

const char* const kResumeCheckUsage =
    "usage: kernodeck resume check [--steps N --at K --atol X --seed S]     the built-in exercise (LibTorch)\n"
    "       kernodeck resume check --weights NAME [options] --cmd 'COMMAND'   your own training\n"
    "       kernodeck resume check --weights NAME [options] -- PROGRAM ARG...\n"
    "\n"
    "With a command, the check runs your training three times in a fresh work folder, never\n"
    "through a shell: straight to step N (--steps); to step K (--at), saving a checkpoint;\n"
    "resumed from that checkpoint to N. It compares the straight and the resumed run's final\n"
    "weights (--weights: a .pt, .pth, .safetensors or .npy file the command writes in {out})\n"
    "under --criterion, printing the measured value against the threshold, and says which state\n"
    "the checkpoint holds (model, optimizer, RNG, step counter, LR scheduler, data order). When\n"
    "the weights differ it names what the checkpoint lacked, and a second straight run tells a\n"
    "training that is not deterministic apart from one that loses state on resume.\n"
    "\n"
    "The command is split into words as a shell would ('...', \"...\", backslashes) but nothing\n"
    "is expanded or redirected: $VAR, ~, globs, pipes and ; are refused (quote them to pass\n"
    "them as they are). After --, each argument is one word. Placeholders, replaced inside words:\n"
    "  {steps}       the step to train to: N, or K in the run to the checkpoint\n"
    "  {save_at}     K: save a checkpoint after this step (every run gets it)\n"
    "  {checkpoint}  the file to save the checkpoint to: {out}/--checkpoint-name\n"
    "  {resume}      the checkpoint to resume from; empty except in the resumed run\n"
    "  {out}         a fresh folder for this run's outputs\n"
    "  {run}         straight, checkpoint, resumed, repeat (reloaded, straight-next, resumed-next\n"
    "                when locating a divergence)\n"
    "  {{ and }}     literal braces\n"
    "The same values are in $KERNODECK_RESUME_STEPS, _SAVE_AT, _CHECKPOINT, _OUT, _RUN and\n"
    "_FROM (set only in the resumed run). The command runs in --cwd (default: here).\n"
    "Exit 1: the resumed weights differ (or two straight runs do); 3: the check could not be\n"
    "made (the command failed or timed out, wrote no checkpoint or no weights).\n"
    "\n"
    "example:\n"
    "  kernodeck resume check --steps 12 --at 5 --weights weights.pt -- /usr/bin/python3 train.py \\\n"
    "    --steps {steps} --save-at {save_at} --checkpoint {checkpoint} --resume {resume} --out {out}\n"
    "\n"
    "options";

// `resume check` with --cmd or a command after `--`: the options checked, the user's training run.
int runResumeCommand(const std::optional<std::string>& cmdText, const std::vector<std::string>& tail,
                     record::ResumeCommandOptions o, const std::string& criterion, bool json,
                     const std::string& output) {
  auto usage = [](const std::string& m) {
    std::fprintf(stderr, "kernodeck resume check: %s\n", util::printable(m, 400).c_str());
    return static_cast<int>(report::kExitUsage);
  };
  if (cmdText && !tail.empty()) return usage("give the command either with --cmd or after --, not both");
  if (o.weights.empty()) return usage("a command needs --weights NAME: the final weights file it writes in {out}");
  if (o.timeoutSeconds == 0 || o.timeoutSeconds > 7 * 24 * 3600) return usage("--timeout takes 1 to 604800 seconds");
  auto c = record::parseCriterion(criterion.empty() ? "exact" : criterion);
  if (!c.ok()) return usage(c.error().message);
  o.criterion = *c;
  if (auto st = record::validate(o); !st.ok()) return usage(st.error().message);
  auto t = cmdText ? record::CommandTemplate::parse(*cmdText, record::resumePlaceholders())
                   : record::CommandTemplate::fromWords(tail, record::resumePlaceholders());
  if (!t.ok()) return usage((cmdText ? "--cmd: " : "the command after --: ") + t.error().message);
  o.command = std::move(t).value();
  o.commandText = cmdText ? *cmdText : util::quoteCommand(tail);
  o.inspect = [](const std::string& path) { return probe::resumeInspect(path); };
  report::Report r = record::resumeCheckCommand(o);
  if (o.keep && r.subject().contains("work_folder"))
    std::fprintf(stderr, "kernodeck resume check: the work folder is kept: %s\n",
                 report::stringAt(r.subject(), "work_folder").c_str());
  return finish("resume check", r, json, output);
}

}  // namespace

int runResume(const std::vector<std::string>& argsIn) {
  if (int rc = verbOrHelp(argsIn, "resume",
                          "usage: kernodeck resume check [options] | kernodeck resume inspect CKPT\n\n"
                          "  check    train straight through and through a checkpoint and a fresh process; compare\n"
                          "           (with --cmd: your own training; 'kernodeck resume check --help')\n"
                          "  inspect  say what state a checkpoint holds and what a resume needs");
      rc >= 0)
    return rc;
  std::string verb = argsIn[0];
  if (verb == "_continue" && argsIn.size() == 5)
    return probe::resumeContinue(argsIn[1], std::atoi(argsIn[2].c_str()),
                                 static_cast<unsigned>(std::atoi(argsIn[3].c_str())), argsIn[4]);
  std::vector<std::string> args(argsIn.begin() + 1, argsIn.end()), tail;
  // Everything after `--` is the user's command, one word per argument, never an option of ours.
  bool dashDash = false;
  if (auto dd = std::find(args.begin(), args.end(), "--"); dd != args.end()) {
    dashDash = true;
    tail.assign(dd + 1, args.end());
    args.erase(dd, args.end());
  }
  if (dashDash && verb != "check") {
    std::fprintf(stderr, "kernodeck resume %s: a command after -- goes with 'resume check' only\n",
                 util::printable(verb, 60).c_str());
    return report::kExitUsage;
  }
  bool help = false, json = false;
  std::string output, ckpt, cmdText(1, '\0'), criterion;
  double atol = std::nan("");
  long long seed = LLONG_MIN;
  probe::ResumeOptions o;
  record::ResumeCommandOptions co;
  po::options_description opts(verb == "check" ? kResumeCheckUsage : "usage: kernodeck resume inspect CKPT\n\noptions");
  opts.add_options()("help,h", po::bool_switch(&help), "show this help")("json", po::bool_switch(&json), "print JSON")(
      "output,o", po::value(&output), "write the report to FILE");
  if (verb == "check")
    opts.add_options()("steps", po::value(&o.steps), "check: training steps N (default 20)")(
        "at", po::value(&o.at), "check: checkpoint after step K (default 10)")(
        "cmd", po::value(&cmdText), "check: your training command, with placeholders (above)")(
        "weights", po::value(&co.weights), "check --cmd: the final weights file the command writes in {out}")(
        "criterion", po::value(&criterion),
        "check --cmd: exact (default) | abs<=X | rel<=X | cosine>=X, on every weight tensor")(
        "checkpoint-name", po::value(&co.checkpointName),
        "check --cmd: the checkpoint file in {out} (default checkpoint.pt)")(
        "timeout", po::value(&co.timeoutSeconds), "check --cmd: seconds each run may take (default 600)")(
        "cwd", po::value(&co.cwd), "check --cmd: folder the command runs in (default: the current one)")(
        "keep", po::bool_switch(&co.keep), "check --cmd: keep the work folder (each run's outputs and log)")(
        "atol", po::value(&atol), "built-in exercise: tolerance on losses and parameters (default 0: exact)")(
        "seed", po::value(&seed), "built-in exercise: seed (default 1234)");
  if (int rc = parseOptions("resume " + verb, args, opts, {&ckpt}); rc >= 0) return rc;
  if (help) return printHelp(opts);
  if (verb == "check") {
    // A NUL cannot come from argv: cmdText still holding one means --cmd was not given.
    std::optional<std::string> givenCmd;
    if (cmdText != std::string(1, '\0')) givenCmd = cmdText;
    bool command = givenCmd || dashDash;
    if (command && (!std::isnan(atol) || seed != LLONG_MIN)) {
      std::fprintf(stderr,
                   "kernodeck resume check: --atol and --seed belong to the built-in exercise; with a command, declare "
                   "--criterion\n");
      return report::kExitUsage;
    }
    if (command) {
      co.steps = o.steps;
      co.at = o.at;
      return runResumeCommand(givenCmd, tail, co, criterion, json, output);
    }
    if (!co.weights.empty() || !criterion.empty() || !co.cwd.empty() || co.keep) {
      std::fprintf(
          stderr,
          "kernodeck resume check: --weights, --criterion, --cwd and --keep need a command (--cmd or after --)\n");
      return report::kExitUsage;
    }
    if (seed != LLONG_MIN && (seed < 0 || seed > UINT_MAX)) {
      std::fprintf(stderr, "kernodeck resume check: --seed takes 0 to %u\n", UINT_MAX);
      return report::kExitUsage;
    }
    if (!std::isnan(atol)) o.atol = atol;
    if (seed != LLONG_MIN) o.seed = static_cast<unsigned>(seed);
    o.self = selfPath();
    return finish("resume check", probe::resumeCheck(o), json, output);
  }
  if (verb == "inspect") {
    if (ckpt.empty()) {
      std::fprintf(stderr, "kernodeck resume inspect: a checkpoint file is required\n");
      return report::kExitUsage;
    }
    report::Report r = probe::resumeInspect(ckpt);
    int rc = finish("resume inspect", r, json, output);
    // A file that was read but is not a checkpoint is the wrong kind of document (exit 2, as for
    // sample check, diff and dossier build); one that could not be read, or no LibTorch to read
    // it with, is exit 3. The plugin ran when it declared its "assess" step after "read".
    struct stat st {};
    bool readable = ::stat(ckpt.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(ckpt.c_str(), R_OK) == 0;
    bool pluginRan = r.steps().size() > 1 && r.steps()[1].name == "assess";
    if (rc == report::kExitIncomplete && readable && pluginRan && r.steps()[0].status == report::StepStatus::Failed)
      return report::kExitUsage;
    return rc;
  }
  return usageVerb("resume", verb, "check or inspect");
}

}  // namespace kernodeck::cli
