// See command_line.h. Hand-written rather than Boost.Program_options: the hook
// has five flags, must agree exactly with the policy scan (Boost accepts
// abbreviations such as --pol=enforce, which a scan would have to imitate), and
// starts at every container start, where every millisecond counts.
#include "kernodeck/hook/command_line.h"

#include <optional>
#include <string_view>

#include "kernodeck/util/strings.h"

namespace kernodeck::hook {
namespace {

constexpr unsigned kMaxTimeoutMs = 600000;

// Every value of flag `name` on the line, as `--name VALUE` or `--name=VALUE`; a
// `--name` with nothing after it counts as a missing value (nullopt).
std::vector<std::optional<std::string>> valuesOf(const std::vector<std::string>& args, std::string_view name) {
  std::vector<std::optional<std::string>> out;
  std::string eq = std::string(name) + "=";
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") break;
    if (args[i] == name)
      out.push_back(i + 1 < args.size() ? std::optional<std::string>(args[++i]) : std::nullopt);
    else if (args[i].starts_with(eq))
      out.push_back(args[i].substr(eq.size()));
  }
  return out;
}

// An argument that looks meant to set the policy but is not `--policy VALUE` / `--policy=VALUE`:
// a misspelt or abbreviated flag (--polcy, --Policy, -policy, --pol=enforce, --policy-enforce),
// the flag and its value in one argument ("--policy enforce", a mistake of JSON hook arrays), a
// dash that is not one ("—policy"), or a bare policy value ("enforce" with no flag before it).
// Whoever wrote it meant to set the policy, so the policy is broken, not absent. `arg` is not the
// value of a flag that takes one (those are skipped by the caller).
bool looksLikePolicy(const std::string& arg) {
  std::string lower = util::toLower(arg);
  if (!arg.starts_with("-")) return lower.find("policy") != std::string::npos || lower == "enforce" || lower == "warn";
  std::string name = lower.substr(0, lower.find('='));
  if (name == "--policy" && arg.starts_with("--policy")) return false;  // the flag itself
  size_t start = name.find_first_not_of('-');
  std::string bare = start == std::string::npos ? "" : name.substr(start);
  return bare.find("policy") != std::string::npos || bare.starts_with("pol") || bare == "enforce" || bare == "warn" ||
         (bare.size() >= 2 && std::string_view("policy").starts_with(bare)) ||
         (bare.size() >= 4 && util::editDistance(bare, "policy") <= 2);
}

}  // namespace

bool isStage(std::string_view arg) {
  for (std::string_view s : {"prestart", "createRuntime", "createContainer", "startContainer", "poststart", "poststop"})
    if (arg == s) return true;
  return false;
}

bool takesValue(std::string_view name) {
  return name == "--policy" || name == "--host-root" || name == "--log" || name == "--timeout-ms";
}

FlagParts splitFlag(const std::string& arg) {
  if (size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string::npos)
    return {arg.substr(0, eq), arg.substr(eq + 1), true};
  return {arg, "", false};
}

namespace {

// Steps 1 and 2: the policy, decided before anything can fail (a broken one is enforce), and
// the log file, so that a usage error is logged too.
void readPolicyAndLog(const std::vector<std::string>& args, CommandLine& cl) {
  // 1. The policy, before anything can fail.
  auto policies = valuesOf(args, "--policy");
  std::string policyError;
  if (policies.size() > 1)
    policyError = "--policy is given " + std::to_string(policies.size()) + " times";
  else if (policies.size() == 1 && !policies[0])
    policyError = "--policy has no value";
  else if (policies.size() == 1 && *policies[0] != "warn" && *policies[0] != "enforce")
    policyError = "--policy takes warn or enforce, not '" + util::printable(*policies[0], 40) + "'";
  for (size_t i = 0; i < args.size() && policyError.empty(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (takesValue(a)) {
      ++i;  // its value, whatever it says
      continue;
    }
    if (looksLikePolicy(a))
      policyError = "'" + util::printable(a.substr(0, a.find('=')), 40) + "' looks like a misspelt --policy";
  }
  cl.options.policy =
      !policyError.empty() || (policies.size() == 1 && *policies[0] == "enforce") ? Policy::Enforce : Policy::Warn;
  if (!policyError.empty()) cl.usageError = policyError + " (a broken policy is read as enforce)";
  // 2. Where to log, so that a usage error is logged too.
  if (auto logs = valuesOf(args, "--log"); logs.size() == 1 && logs[0] && !logs[0]->empty())
    cl.options.logFile = *logs[0];
}

// Step 3: the whole line, strictly; the first problem, or "" when there is none.
std::string readFlags(const std::vector<std::string>& args, CommandLine& cl) {
  bool seenPolicy = false, seenRoot = false, seenLog = false, seenTimeout = false, flagsDone = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (flagsDone || a.empty() || a[0] != '-' || a == "-") {
      cl.positional.push_back(a);
      continue;
    }
    if (a == "--") {
      flagsDone = true;
      continue;
    }
    if (a == "--help" || a == "-h") {
      cl.help = true;
      continue;
    }
    if (a == "--version") {
      cl.version = true;
      continue;
    }
    auto [name, value, inlineValue] = splitFlag(a);
    bool* seen = name == "--policy"       ? &seenPolicy
                 : name == "--host-root"  ? &seenRoot
                 : name == "--log"        ? &seenLog
                 : name == "--timeout-ms" ? &seenTimeout
                                          : nullptr;
    if (!seen) {
      std::string suggestion;
      for (const char* known : {"--policy", "--host-root", "--log", "--timeout-ms", "--help", "--version"})
        if (util::editDistance(name, known) <= 2) suggestion = std::string(", did you mean ") + known + "?";
      return "unknown option '" + util::printable(name, 60) + "'" + suggestion;
    }
    if (*seen) return name + " is given more than once";
    *seen = true;
    if (!inlineValue) {
      if (i + 1 >= args.size()) return name + " needs a value";
      value = args[++i];
    }
    if (name == "--policy") continue;  // decided above
    if (value.empty()) return name + " needs a non-empty value";
    if (name == "--host-root")
      cl.options.hostRoot = value;
    else if (name == "--log")
      continue;  // taken by the scan, which also knows whether it is given once
    else {
      auto ms = util::parseUint(value);
      if (!ms) return "--timeout-ms takes a number of milliseconds, not '" + util::printable(value, 40) + "'";
      if (*ms == 0 || *ms > kMaxTimeoutMs)
        return "--timeout-ms " + util::printable(value, 40) + " is out of range: give 1.." +
               std::to_string(kMaxTimeoutMs) + " (0 would leave no time to read the container state)";
      cl.timeoutMs = static_cast<unsigned>(*ms);
    }
  }
  return "";
}

// The line as a whole: --help and --version alone, at most one stage argument, a known stage.
// The first problem, or "" when there is none.
std::string checkLine(const std::vector<std::string>& args, CommandLine& cl) {
  // --help and --version print and exit 0 without checking anything, so they are answers to a
  // person only: on a line that holds anything else they are a mistake of the hook's line, and
  // refuse under enforce like any other (issue 25 §5). Alone, main() still checks that stdin is
  // not a runtime state.
  if (cl.help || cl.version) {
    std::string flag = cl.version ? "--version" : "--help";
    if (args.size() > 1)
      return "'" + flag +
             "' is not a runtime-hook argument (a hook's line holds only --policy, --host-root, --log, "
             "--timeout-ms and the stage)";
  }
  if (cl.positional.size() == 1) {
    if (!isStage(cl.positional[0]))
      return "'" + util::printable(cl.positional[0], 60) +
             "' is not a runtime-hook argument: the stage is one of prestart, createRuntime, createContainer, "
             "startContainer, poststart, poststop";
    cl.options.stage = cl.positional[0];
  } else if (cl.positional.size() > 1)
    return "one stage argument expected, got " + std::to_string(cl.positional.size());
  return "";
}

}  // namespace

CommandLine parseCommandLine(const std::vector<std::string>& args) {
  CommandLine cl;
  readPolicyAndLog(args, cl);
  std::string why = readFlags(args, cl);
  if (why.empty()) why = checkLine(args, cl);
  if (!why.empty() && cl.usageError.empty()) cl.usageError = std::move(why);
  return cl;
}

const char* usageText() {
  return "usage: kernodeck-hook [options] [STAGE]   (OCI container state JSON on stdin)\n"
         "\n"
         "options\n"
         "  --policy warn|enforce  warn (default): log, always let the container start;\n"
         "                         enforce: refuse a container that cannot work. A repeated,\n"
         "                         empty or unknown policy is read as enforce.\n"
         "  --host-root DIR        read /proc, /sys, /dev, /etc/group under DIR (default /)\n"
         "  --log FILE             append one JSON line per container to FILE\n"
         "  --timeout-ms N         hard internal time limit, 1..600000 (default 2000)\n"
         "  --version              print the version\n"
         "  -h, --help             show this help\n"
         "\n"
         "A command line that cannot be parsed refuses every container under enforce and lets\n"
         "it start, logged, under warn. --help and --version answer only when alone and stdin\n"
         "is not a runtime state; on a hook's line they are such a mistake.\n"
         "\n"
         "installing on a node (as root; see hooks/README.md and kernodeck-hook COMMAND --help):\n"
         "  kernodeck-hook install [--policy warn|enforce] [--cdi-inject SPEC | --cdi-dir DIR]\n"
         "                         register the hook (hooks.d for podman and CRI-O, or CDI); run again\n"
         "                         with --policy enforce (or warn) to switch: the earlier registration is\n"
         "                         replaced only once the new one is written\n"
         "  kernodeck-hook uninstall [--purge]\n"
         "                         unregister it from every place install wrote (hooks.d, CDI, the copy in\n"
         "                         /usr/local/bin), restoring the CDI specs it edited; --purge also drops\n"
         "                         the log. Removing the kernodeck-hook package does this itself.\n"
         "  kernodeck-hook cdi spec [--output FILE] [HOOK FLAGS]     a CDI spec whose device runs the hook\n"
         "  kernodeck-hook cdi inject SPEC [HOOK FLAGS]              add the hook to a CDI spec's top-level edits "
         "(YAML or JSON)\n"
         "  kernodeck-hook cdi remove SPEC                           take it out again\n"
         "  kernodeck-hook runc-config CONFIG.json [--remove] [HOOK FLAGS]  add (remove) it in a runc/crun config.json\n"
         "  kernodeck-hook hooks-d [HOOK FLAGS]                      print an OCI hooks.d file\n"
         "The installed line logs to /var/log/kernodeck/hook.log unless --log says otherwise, and runs\n"
         "under --policy warn unless --policy enforce is given.\n";
}

}  // namespace kernodeck::hook
