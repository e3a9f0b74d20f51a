#include "kernodeck/registry/reference.h"

#include <regex>

#include "kernodeck/util/strings.h"

namespace kernodeck::registry {

std::string Reference::apiHost() const { return registry == "docker.io" ? "registry-1.docker.io" : registry; }

std::string Reference::str() const {
  std::string s = registry + "/" + repository;
  if (tagGiven || !digest) s += ":" + tag;
  if (digest) s += "@" + digest->str();
  return s;
}

Result<Reference> parseReference(std::string_view in) {
  std::string s(util::trim(in));
  auto bad = [&](const std::string& why) {
    return Error::Invalid("invalid image reference '" + util::printable(s, 200) + "': " + why);
  };
  if (s.empty()) return bad("empty");
  if (s.size() > 4096) return bad("too long");
  Reference r;
  size_t at = s.find('@');
  std::string name = s.substr(0, at);
  if (at != std::string::npos) {
    auto d = oci::parseDigest(s.substr(at + 1));
    if (!d.ok()) return bad(d.error().message);
    r.digest = *d;
  }
  size_t slash = name.find('/');
  std::string first = name.substr(0, slash);
  bool hasRegistry = slash != std::string::npos &&
                     (first.find('.') != std::string::npos || first.find(':') != std::string::npos ||
                      first == "localhost" || first.find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ") != std::string::npos);
  std::string rest = name;
  if (hasRegistry) {
    r.registry = first;
    rest = name.substr(slash + 1);
  } else {
    r.registry = "docker.io";
  }
  if (r.registry == "index.docker.io") r.registry = "docker.io";
  size_t lastSlash = rest.rfind('/');
  size_t colon = rest.rfind(':');
  if (colon != std::string::npos && (lastSlash == std::string::npos || colon > lastSlash)) {
    r.tag = rest.substr(colon + 1);
    r.tagGiven = true;
    rest = rest.substr(0, colon);
    static const std::regex tagRe(R"(^[\w][\w.-]{0,127}$)");
    if (!std::regex_match(r.tag, tagRe)) return bad("bad tag");
  } else {
    r.tag = "latest";
  }
  static const std::regex component(R"(^[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*$)");
  for (const auto& c : util::split(rest, '/'))
    if (!std::regex_match(c, component)) return bad("bad repository component '" + util::printable(c, 60) + "'");
  if (r.registry == "docker.io" && rest.find('/') == std::string::npos) rest = "library/" + rest;
  r.repository = rest;
  static const std::regex hostRe(
      R"(^(?:[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]+)?$)");
  if (!std::regex_match(r.registry, hostRe)) return bad("bad registry host");
  return r;
}

bool isLoopback(std::string_view hostPort) {
  std::string h(hostPort);
  if (!h.empty() && h.front() == '[') {
    size_t end = h.find(']');
    return end != std::string::npos && h.substr(1, end - 1) == "::1";
  }
  h = h.substr(0, h.find(':'));
  if (h == "localhost") return true;
  static const std::regex v4(R"(^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$)");
  return std::regex_match(h, v4);
}

}  // namespace kernodeck::registry
