#include "help_text.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <regex>
#include <sstream>

#include "commands.h"

namespace kernodeck::cli {

std::string captureHelp(const std::vector<std::string>& args) {
  if (args.empty()) return {};
  const Command* cmd = nullptr;
  for (const auto& c : commands())
    if (args[0] == c.name) cmd = &c;
  if (!cmd) return {};
  int fd = ::memfd_create("kernodeck-help", MFD_CLOEXEC);
  if (fd < 0) return {};
  std::fflush(stdout);
  std::cout.flush();
  int saved = ::dup(STDOUT_FILENO);
  if (saved < 0 || ::dup2(fd, STDOUT_FILENO) < 0) {
    ::close(fd);
    if (saved >= 0) ::close(saved);
    return {};
  }
  std::vector<std::string> rest(args.begin() + 1, args.end());
  rest.push_back("--help");
  int rc = cmd->run(rest);
  std::fflush(stdout);
  std::cout.flush();
  ::dup2(saved, STDOUT_FILENO);
  ::close(saved);
  std::string text;
  if (rc == 0) {
    char buf[8192];
    ssize_t n;
    ::lseek(fd, 0, SEEK_SET);
    while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

namespace {

// One item of an option line's head: "-o [ --output ] arg" (Boost), "-o", "--json",
// "--expect cpu|cuda|rocm|auto", "--atol X".
bool readItem(const std::string& item, HelpOption& o) {
  static const std::regex boost(R"(^-([A-Za-z0-9]) \[ (--[A-Za-z0-9][A-Za-z0-9-]*) \]( arg\b.*)?$)");
  static const std::regex plain(R"(^(--?[A-Za-z0-9][A-Za-z0-9-]*)(?:[ =](\S+))?$)");
  std::smatch m;
  if (std::regex_match(item, m, boost)) {
    o.shortName = "-" + m[1].str();
    o.longName = m[2].str();
    o.takesValue = m[3].matched;
    if (o.takesValue) o.valueName = "arg";
    return true;
  }
  if (!std::regex_match(item, m, plain)) return false;
  std::string name = m[1].str();
  (name.rfind("--", 0) == 0 ? o.longName : o.shortName) = name;
  o.takesValue = m[2].matched;
  o.valueName = m[2].str();
  return true;
}

}  // namespace

HelpText parseHelp(const std::string& text) {
  static const std::regex action(R"(^  ([a-z][a-z-]*) {2,}\S)");
  HelpText h;
  std::istringstream in(text);
  std::string line;
  bool offersActions = false, first = true;
  size_t lastGroup = 0;  // the options of the line being continued start here
  bool continuing = false;
  for (; std::getline(in, line); first = false) {
    if (first) {
      // "usage: kernodeck reference init|show|verify [options]", "usage: kernodeck fleet SUBCOMMAND".
      offersActions = line.find('|') != std::string::npos || line.find("SUBCOMMAND") != std::string::npos;
      if (line.find("[--") != std::string::npos) offersActions = false;  // "resume check [--steps N ...]"
      // "Run 'kernodeck sample ACTION --help' for an action's options." (record_flags.cc verbOrHelp).
      offersActions = offersActions || text.find(" ACTION --help'") != std::string::npos;
      continue;
    }
    if (line.rfind("  -", 0) == 0) {
      // The head runs to the first two spaces; "-o, --output FILE" and "--atol X, --rtol X" name two.
      std::string body = line.substr(2);
      size_t gap = body.find("  ");
      std::string head = body.substr(0, gap), desc;
      if (gap != std::string::npos) desc = body.substr(body.find_first_not_of(' ', gap));
      std::vector<HelpOption> items;
      bool ok = true;
      size_t at = 0;
      while (ok && at <= head.size()) {
        size_t comma = head.find(", ", at);
        HelpOption o;
        ok = readItem(head.substr(at, comma == std::string::npos ? std::string::npos : comma - at), o);
        items.push_back(o);
        at = comma == std::string::npos ? head.size() + 1 : comma + 2;
      }
      if (!ok) {
        // Boost pads the names to the longest one's width plus one space, so the longest option's
        // line has a single space before its description: "--reaudit-older-than arg audit ...".
        static const std::regex single(
            R"(^((?:-[A-Za-z0-9] \[ --[A-Za-z0-9][A-Za-z0-9-]* \]|--[A-Za-z0-9][A-Za-z0-9-]*)(?: arg)?) (\S.*)$)");
        std::smatch m;
        HelpOption o;
        if (std::regex_match(body, m, single) && readItem(m[1].str(), o)) {
          items = {o};
          desc = m[2].str();
          while (!desc.empty() && desc.back() == ' ') desc.pop_back();
          ok = true;
        }
      }
      if (ok) {
        // "-o, --output FILE": the short name is the long one's.
        if (items.size() == 2 && !items[0].shortName.empty() && items[0].longName.empty() &&
            items[1].shortName.empty()) {
          items[1].shortName = items[0].shortName;
          items.erase(items.begin());
        }
        lastGroup = h.options.size();
        for (auto& o : items) {
          o.description = desc;
          h.options.push_back(o);
        }
        continuing = true;
        continue;
      }
    }
    if (continuing && line.size() > 3 && line.rfind("   ", 0) == 0) {
      std::string more = line.substr(line.find_first_not_of(' '));
      for (size_t i = lastGroup; i < h.options.size(); ++i)
        h.options[i].description += (h.options[i].description.empty() ? "" : " ") + more;
      continue;
    }
    continuing = false;
    std::smatch m;
    if (offersActions && std::regex_search(line, m, action)) h.actions.push_back(m[1].str());
  }
  return h;
}

}  // namespace kernodeck::cli
