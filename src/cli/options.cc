#include "options.h"

#include <cstdio>
#include <algorithm>
#include <iostream>
#include <map>
#include <sstream>

#include "commands.h"
#include "kernodeck/report/report.h"
#include "kernodeck/util/strings.h"

namespace po = boost::program_options;

namespace kernodeck::cli {

int parseOptions(const std::string& command, const std::vector<std::string>& args, po::options_description& opts,
                 std::vector<std::string>* positionals) {
  po::options_description all;
  all.add(opts);
  po::positional_options_description pos;
  if (positionals) {
    all.add_options()("positional", po::value(positionals)->composing());
    pos.add("positional", -1);
  }
  // Boost's default style guesses abbreviations (--pol for --policy); off, so that a script's flag
  // never changes meaning when an option is added, as podman, skopeo and kernodeck-hook do.
  const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(all).positional(pos).style(style).run(), vm);
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    // As a misspelt command is answered (main.cc): the nearest option of this command, when
    // one is within two edits (--fromat: --format).
    std::string given = e.get_option_name(), best;
    std::string bare = given.substr(0, given.find('='));
    size_t bestDist = 3;
    for (const auto& o : all.options()) {
      std::string name = o->long_name();
      if (name.empty() || name == "positional") continue;
      size_t d = util::editDistance(bare, "--" + name);
      if (d < bestDist) {
        bestDist = d;
        best = "--" + name;
      }
    }
    return usageError(command, std::string(e.what()) + (best.empty() ? "" : ", did you mean '" + best + "'?"));
  } catch (const po::error& e) {
    return usageError(command, e.what());
  }
  return -1;
}

int parseOptions(const std::string& command, const std::vector<std::string>& args, po::options_description& opts,
                 std::initializer_list<std::string*> positionals) {
  std::vector<std::string> given;
  if (int rc = parseOptions(command, args, opts, &given); rc >= 0) return rc;
  if (given.size() > positionals.size())
    return usageError(command,
                      "unexpected argument '" + given[positionals.size()] + "'" +
                          (positionals.size() == 0 ? "" : " (it takes " + std::to_string(positionals.size()) + ")"));
  auto it = positionals.begin();
  for (auto& g : given) **it++ = std::move(g);
  return -1;
}

namespace {

// What an option's value is, named in --help as the gate and the hook name it ("--fail-on
// LEVEL", "-o, --output FILE"), where Boost would print "arg".
const char* valueName(const std::string& option) {
  static const std::map<std::string, const char*> names = {
      {"accelerator", "KIND"},       {"at", "K"},
      {"atol", "X"},                 {"authfile", "FILE"},
      {"cache-dir", "DIR"},          {"cache-key", "FILE"},
      {"cache-repo", "REPO"},        {"catalog", "REGISTRY"},
      {"cert-dir", "DIR"},           {"checkpoint-name", "NAME"},
      {"cmd", "COMMAND"},            {"config", "FILE"},
      {"connect-timeout", "S"},      {"criterion", "CRITERION"},
      {"cwd", "DIR"},                {"data", "NAME=PATH"},
      {"determinism", "NAME=VALUE"}, {"entry-point", "COMMAND"},
      {"exceptions", "FILE"},        {"expect-out", "FILE"},
      {"expected", "DIR"},           {"fail-on", "LEVEL"},
      {"fetch", "FILE"},             {"format", "FORMAT"},
      {"gpu", "ARCH|MODEL"},         {"host-record", "FILE"},
      {"host-root", "DIR"},          {"html", "FILE"},
      {"ids", "NAME"},               {"image", "IMAGE"},
      {"include", "PATH"},           {"input-root", "DIR"},
      {"key", "FILE"},               {"lock", "[ENV=]FILE"},
      {"lock-group", "GROUP"},       {"max-age", "DURATION"},
      {"max-clock-skew", "DURATION"}, {"output", "FILE"},
      {"outputs", "DIR"},            {"packages-from", "FILE"},
      {"param", "KEY=VALUE"},        {"plan", "FILE"},
      {"platform", "OS/ARCH"},       {"preprocessing", "TEXT"},
      {"python", "PATH"},            {"reaudit-older-than", "DURATION"},
      {"reference", "FILE"},         {"repo", "DIR"},
      {"report", "FILE"},            {"requirements", "FILE"},
      {"retries", "N"},              {"retry-max-time", "S"},
      {"revise", "WHY"},             {"seed", "NAME=VALUE"},
      {"shard", "I"},                {"shards", "N"},
      {"sign-key", "FILE"},          {"stall-timeout", "S"},
      {"steps", "N"},                {"timeout", "DURATION"},
      {"tls-verify", "BOOL"},        {"trust-repository", "GLOB"},
      {"wait", "S"},                 {"weights", "NAME=PATH"},
      {"wheels", "DIR"},             {"why", "TEXT"},
      {"work", "DIR"},
  };
  auto it = names.find(option);
  return it == names.end() ? "VALUE" : it->second;
}

// "-o, --output FILE": the option's names and its value's name (a default as Boost shows it).
std::string optionHead(const po::option_description& o) {
  std::string head = o.canonical_display_name(po::command_line_style::allow_long);
  if (head.rfind("--", 0) != 0) head = "--" + head;
  std::string shortName = o.canonical_display_name(po::command_line_style::allow_dash_for_short);
  if (shortName.size() == 2 && shortName[0] == '-') head = shortName + ", " + head;
  std::string param = o.format_parameter();  // "arg", "arg (=10)", or "" for a switch
  if (param.rfind("arg", 0) == 0) param = valueName(o.long_name()) + param.substr(3);
  return param.empty() ? head : head + " " + param;
}

// TEXT wrapped to WIDTH columns, every line after the first indented by INDENT.
std::string wrapped(const std::string& text, size_t indent, size_t width) {
  std::string out, line;
  for (const auto& word : util::split(text, ' ')) {
    if (word.empty()) continue;
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line;
}

}  // namespace

int printHelp(const po::options_description& opts, const char* exitCodes) {
  // One layout for every command, the gate's and the hook's: names and value names in a column,
  // the descriptions wrapped beside them at 100 columns.
  std::vector<std::pair<std::string, std::string>> rows;
  size_t column = 0;
  bool failOn = false;
  for (const auto& o : opts.options()) {
    rows.emplace_back(optionHead(*o), o->description());
    column = std::max(column, rows.back().first.size());
    failOn = failOn || o->long_name() == "fail-on";
  }
  column = std::min<size_t>(column + 4, 31);
  // The caption (usage and what comes before the options): what Boost prints before the first
  // option, as this Boost has no accessor for it.
  std::ostringstream boost;
  boost << opts;
  std::string text = boost.str();
  size_t first = text.find("\n  -");
  text = first == std::string::npos ? "" : text.substr(0, first + 1);
  for (const auto& [head, desc] : rows) {
    std::string line = "  " + head;
    line += line.size() + 2 > column ? "\n" + std::string(column, ' ') : std::string(column - line.size(), ' ');
    text += line + wrapped(desc, column, 100) + "\n";
  }
  std::cout << text << "\n" << (exitCodes ? exitCodes : failOn ? kExitCodesHelp : kExitCodesWithoutFailOn);
  std::cout.flush();
  return 0;
}

int usageError(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "kernodeck %s: %s\n", command.c_str(), util::printable(message, 400).c_str());
  return report::kExitUsage;
}

}  // namespace kernodeck::cli
