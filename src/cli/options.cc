#include "options.h"

#include <cstdio>
#include <iostream>

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

int printHelp(const po::options_description& opts, const char* exitCodes) {
  std::cout << opts << "\n" << (exitCodes ? exitCodes : kExitCodesHelp);
  std::cout.flush();
  return 0;
}

int usageError(const std::string& command, const std::string& message) {
  std::fprintf(stderr, "kernodeck %s: %s\n", command.c_str(), util::printable(message, 400).c_str());
  return report::kExitUsage;
}

}  // namespace kernodeck::cli
