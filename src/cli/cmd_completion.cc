// kernodeck completion bash|zsh: a shell completion script for the commands, their actions,
// their options and the values of the options that take one of a fixed set. Every option comes
// from the command's own --help (help_text.h), read when the script is printed, so the script
// cannot offer an option the command lacks or miss one it has.
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "commands.h"
#include "help_text.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/strings.h"
#include "kernodeck/version.h"

namespace kernodeck::cli {

namespace {

// The values an option may take, offered when its --help line names each of them as a word:
// "--format: text (default), json (...), sarif (2.1.0), ... or html" offers those it names, so a
// command whose --format takes fewer formats is offered only its own. A value list in the option's
// head ("--expect cpu|cuda|rocm|auto") is taken as it is.
const std::map<std::string, std::vector<std::string>> kValueWords = {
    {"--format", {"text", "json", "sarif", "cyclonedx", "spdx", "html", "markdown"}},
    {"--fail-on", {"info", "warning", "error", "none"}},
    {"--policy", {"warn", "enforce"}},
};

std::vector<std::string> valuesOf(const HelpOption& o) {
  std::vector<std::string> out;
  if (o.valueName.find('|') != std::string::npos) {
    std::istringstream in(o.valueName);
    for (std::string v; std::getline(in, v, '|');) out.push_back(v);
    return out;
  }
  auto it = kValueWords.find(o.longName);
  if (it == kValueWords.end()) return out;
  for (const auto& v : it->second)
    if (std::regex_search(o.description, std::regex("\\b" + v + "\\b"))) out.push_back(v);
  if (out.size() < 2) out.clear();  // one word named is prose, not a set
  return out;
}

std::string joined(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// The case arms of one key ("audit", "reference/init"): its options, those that take a value,
// and the fixed values.
void addKey(const std::string& key, const HelpText& h, std::string& options, std::string& values) {
  std::vector<std::string> all, valued;
  for (const auto& o : h.options) {
    for (const auto* n : {&o.longName, &o.shortName})
      if (!n->empty()) {
        all.push_back(*n);
        if (o.takesValue) valued.push_back(*n);
      }
    auto vs = valuesOf(o);
    if (!vs.empty())
      for (const auto* n : {&o.longName, &o.shortName})
        if (!n->empty()) values += "      \"" + key + " " + *n + "\") values=\"" + joined(vs) + "\" ;;\n";
  }
  options += "      " + key + ") options=\"" + joined(all) + "\" valued=\"" + joined(valued) + "\" ;;\n";
}

std::string bashScript() {
  std::string commands, actions, options, values;
  for (const auto& c : cli::commands()) {
    commands += std::string(commands.empty() ? "" : " ") + c.name;
    HelpText h = parseHelp(captureHelp({c.name}));
    if (h.actions.empty()) {
      addKey(c.name, h, options, values);
      continue;
    }
    actions += "      " + std::string(c.name) + ") actions=\"" + joined(h.actions) + "\" ;;\n";
    for (const auto& a : h.actions) addKey(std::string(c.name) + "/" + a, parseHelp(captureHelp({c.name, a})), options, values);
  }
  return "# bash completion for kernodeck " + std::string(kVersion) +
         ", printed by `kernodeck completion bash` from the commands' --help.\n"
         "# Installed as /usr/share/bash-completion/completions/kernodeck by the Debian package; by hand:\n"
         "#   source <(kernodeck completion bash)\n"
         "_kernodeck() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  local commands=\"" + commands + " help\"\n"
         "  if [[ $COMP_CWORD -eq 1 ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$commands --help --version\" -- \"$cur\"))\n"
         "    return 0\n"
         "  fi\n"
         "  local key=${COMP_WORDS[1]} actions=\"\" options=\"\" valued=\"\" values=\"\"\n"
         "  if [[ $key == help ]]; then\n"
         "    [[ $COMP_CWORD -eq 2 ]] && COMPREPLY=($(compgen -W \"$commands\" -- \"$cur\"))\n"
         "    return 0\n"
         "  fi\n"
         "  case $key in\n" + actions +
         "  esac\n"
         "  if [[ -n $actions ]]; then\n"
         "    if [[ $COMP_CWORD -eq 2 ]]; then\n"
         "      COMPREPLY=($(compgen -W \"$actions --help\" -- \"$cur\"))\n"
         "      return 0\n"
         "    fi\n"
         "    key=$key/${COMP_WORDS[2]}\n"
         "  fi\n"
         "  case $key in\n" + options +
         "  esac\n"
         "  # --option=VALUE in one word: complete the value.\n"
         "  if [[ $cur == --*=* ]]; then\n"
         "    prev=${cur%%=*}\n"
         "    cur=${cur#*=}\n"
         "  elif [[ $prev == = ]] && [[ $COMP_CWORD -ge 3 ]]; then\n"
         "    prev=${COMP_WORDS[COMP_CWORD-2]}\n"
         "  fi\n"
         "  if [[ \" $valued \" == *\" $prev \"* ]]; then\n"
         "    case \"$key $prev\" in\n" + values +
         "    esac\n"
         "    if [[ -n $values ]]; then\n"
         "      COMPREPLY=($(compgen -W \"$values\" -- \"$cur\"))\n"
         "    else\n"
         "      COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "    fi\n"
         "    return 0\n"
         "  fi\n"
         "  if [[ $cur == -* ]]; then\n"
         "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))\n"
         "    return 0\n"
         "  fi\n"
         "  COMPREPLY=($(compgen -f -- \"$cur\"))\n"
         "}\n"
         "complete -o filenames -F _kernodeck kernodeck\n";
}

}  // namespace

int runCompletion(const std::vector<std::string>& args) {
  const char* usage =
      "usage: kernodeck completion bash|zsh\n\n"
      "prints a shell completion script: the commands, their actions and options, and the values of\n"
      "the options that take one of a fixed set (--format, --fail-on, ...)\n\n"
      "  bash    source <(kernodeck completion bash); the Debian package installs it\n"
      "  zsh     source <(kernodeck completion zsh), after compinit (bash's script, through bashcompinit)\n\n"
      "options:\n"
      "  -h, --help    show this help\n\n";
  for (const auto& a : args)
    if (a == "-h" || a == "--help") {
      std::printf("%sexit codes: 0 ok; 2 usage error\n", usage);
      return 0;
    }
  if (args.size() != 1 || (args[0] != "bash" && args[0] != "zsh")) {
    std::fprintf(stderr, "kernodeck completion: give the shell, bash or zsh%s%s%s\n", args.empty() ? "" : " (not '",
                 args.empty() ? "" : util::printable(args[0], 60).c_str(), args.empty() ? "" : "')");
    return report::kExitUsage;
  }
  std::string script = bashScript();
  if (args[0] == "zsh")
    script = "# zsh completion for kernodeck: the bash script below, through zsh's bashcompinit.\n"
             "autoload -U +X bashcompinit && bashcompinit\n" + script;
  std::fwrite(script.data(), 1, script.size(), stdout);
  return 0;
}

}  // namespace kernodeck::cli
