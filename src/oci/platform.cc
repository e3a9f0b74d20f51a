#include "kernodeck/oci/platform.h"

#include <sys/utsname.h>

#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

Platform normalize(Platform p) {
  p.os = util::toLower(p.os);
  std::string a = util::toLower(p.architecture);
  if (a == "x86_64" || a == "x86-64")
    a = "amd64";
  else if (a == "aarch64")
    a = "arm64";
  else if (a == "i386" || a == "i686")
    a = "386";
  else if (a == "armhf" || a == "armv7l" || a == "armv7") {
    a = "arm";
    if (p.variant.empty()) p.variant = "v7";
  } else if (a == "armel" || a == "armv6l") {
    a = "arm";
    if (p.variant.empty()) p.variant = "v6";
  }
  p.architecture = a;
  p.variant = util::toLower(p.variant);
  if (a == "arm64" && (p.variant == "v8" || p.variant == "8")) p.variant.clear();
  if (a == "arm" && p.variant.empty()) p.variant = "v7";
  if (a == "arm" && p.variant.size() == 1) p.variant = "v" + p.variant;
  return p;
}

Platform hostPlatform() {
  struct utsname u {};
  Platform p{"linux", "amd64", "", ""};
  if (uname(&u) == 0) p.architecture = u.machine;
  return normalize(p);
}

Result<Platform> parsePlatform(std::string_view s) {
  auto parts = util::split(s, '/');
  if (parts.size() < 2 || parts.size() > 3 || parts[0].empty() || parts[1].empty())
    return Error::Invalid("platform '" + std::string(s) + "' is not OS/ARCH[/VARIANT]");
  Platform p{parts[0], parts[1], parts.size() == 3 ? parts[2] : "", ""};
  return normalize(p);
}

Result<size_t> selectPlatform(const Index& index, const Platform& wantRaw) {
  Platform want = normalize(wantRaw);
  int best = -1;
  int bestScore = -1;
  for (size_t i = 0; i < index.manifests.size(); ++i) {
    const auto& d = index.manifests[i];
    if (!d.platform) continue;
    Platform have = normalize(*d.platform);
    if (have.os != want.os || have.architecture != want.architecture) continue;
    int score = -1;
    if (have.variant == want.variant) {
      score = 1000;
    } else if (want.architecture == "arm" && have.variant.size() == 2 && want.variant.size() == 2 &&
               have.variant[1] < want.variant[1]) {
      score = have.variant[1] - '0';  // highest lower variant wins
    } else if (wantRaw.variant.empty() && want.architecture != "arm") {
      score = 500;
    }
    if (score > bestScore) {
      bestScore = score;
      best = static_cast<int>(i);
    }
  }
  if (best >= 0) return static_cast<size_t>(best);
  // An entry that names no platform (an index written by hand or by a tool that leaves it
  // out) is chosen when it is the only one: the image config then says what it runs on.
  int unlisted = -1, count = 0;
  for (size_t i = 0; i < index.manifests.size(); ++i)
    if (!index.manifests[i].platform) {
      unlisted = static_cast<int>(i);
      ++count;
    }
  if (count == 1) return static_cast<size_t>(unlisted);
  std::string avail;
  for (const auto& d : index.manifests)
    if (d.platform) avail += (avail.empty() ? "" : ", ") + normalize(*d.platform).str();
  return Error::NotFound("no manifest for platform " + want.str() +
                         " in the index (has: " + (avail.empty() ? "none with a platform" : avail) + ")");
}

}  // namespace kernodeck::oci
