#include "kernodeck/oci/image_ref.h"

namespace kernodeck::oci {

const char* toString(Transport t) {
  switch (t) {
    case Transport::OciLayout: return "oci";
    case Transport::OciArchive: return "oci-archive";
    case Transport::DockerArchive: return "docker-archive";
    case Transport::Dir: return "dir";
    case Transport::RootFs: return "rootfs";
    case Transport::Registry: return "docker";
  }
  return "?";
}

namespace {

bool consumePrefix(std::string_view& s, std::string_view p) {
  if (s.substr(0, p.size()) != p) return false;
  s.remove_prefix(p.size());
  return true;
}

}  // namespace

Result<ImageRef> parseImageRef(std::string_view s) {
  ImageRef r;
  r.raw = std::string(s);
  if (s.empty()) return Error::Invalid("empty image reference");
  std::string_view rest = s;
  if (consumePrefix(rest, "oci:")) {
    r.transport = Transport::OciLayout;
    size_t at = rest.find('@');
    if (at != std::string_view::npos) {
      r.path = std::string(rest.substr(0, at));
      KDK_TRY_ASSIGN(Digest d, parseDigest(rest.substr(at + 1)));
      r.digest = d;
    } else {
      size_t colon = rest.find(':');
      r.path = std::string(rest.substr(0, colon));
      if (colon != std::string_view::npos) r.tag = std::string(rest.substr(colon + 1));
    }
  } else if (consumePrefix(rest, "oci-archive:")) {
    r.transport = Transport::OciArchive;
    size_t colon = rest.find(':');
    r.path = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) r.tag = std::string(rest.substr(colon + 1));
  } else if (consumePrefix(rest, "docker-archive:")) {
    r.transport = Transport::DockerArchive;
    size_t colon = rest.find(':');
    r.path = std::string(rest.substr(0, colon));
    if (colon != std::string_view::npos) r.tag = std::string(rest.substr(colon + 1));
    if (!r.tag.empty() && r.tag.front() == '@') {  // skopeo's source index
      std::string n = r.tag.substr(1);
      if (n.empty() || n.size() > 6 || n.find_first_not_of("0123456789") != std::string::npos)
        return Error::Invalid("'" + r.raw + "': the source index after ':@' must be a number");
      r.sourceIndex = std::stoul(n);
      r.tag.clear();
    }
  } else if (consumePrefix(rest, "dir:")) {
    r.transport = Transport::Dir;
    r.path = std::string(rest);
  } else if (consumePrefix(rest, "rootfs:")) {
    r.transport = Transport::RootFs;
    r.path = std::string(rest);
  } else {
    consumePrefix(rest, "docker://");
    r.transport = Transport::Registry;
    size_t at = rest.find('@');
    std::string_view name = rest.substr(0, at);
    if (at != std::string_view::npos) {
      KDK_TRY_ASSIGN(Digest d, parseDigest(rest.substr(at + 1)));
      r.digest = d;
    }
    size_t slash = name.rfind('/');
    size_t colon = name.rfind(':');
    if (colon != std::string_view::npos && (slash == std::string_view::npos || colon > slash)) {
      r.tag = std::string(name.substr(colon + 1));
      name = name.substr(0, colon);
    }
    r.path = std::string(name);
  }
  if (r.path.empty()) return Error::Invalid("image reference '" + r.raw + "' names no path");
  return r;
}

}  // namespace kernodeck::oci
