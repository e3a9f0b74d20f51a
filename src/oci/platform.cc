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
  if (a == "arm64" && (p.variant == "v8" || p.variant == "8" || p.variant == "v8.0")) p.variant.clear();
  if (a == "amd64" && p.variant == "v1") p.variant.clear();
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

namespace {

// The number of a "vN" variant, 0 when it is not one.
int variantNumber(const std::string& v) {
  if (v.size() < 2 || v[0] != 'v' || v.find('.') != std::string::npos) return 0;
  int n = 0;
  for (size_t i = 1; i < v.size(); ++i) {
    if (v[i] < '0' || v[i] > '9' || n > 100) return 0;
    n = n * 10 + (v[i] - '0');
  }
  return n;
}

}  // namespace

// containerd's platforms.Only: the platform itself, then what it also runs, in order (amd64 vN:
// the lower amd64 variants, then 386; arm vN: the lower arm variants down to v5; arm64: arm v8 down
// to v5), each matched exactly after normalisation.
std::optional<int> platformRank(const Platform& haveRaw, const Platform& wantRaw) {
  Platform want = normalize(wantRaw), have = normalize(haveRaw);
  if (have.os != want.os) return std::nullopt;
  if (have.architecture == want.architecture && have.variant == want.variant) return 0;
  int w = variantNumber(want.variant), h = variantNumber(have.variant);
  if (want.architecture == "amd64") {
    if (have.architecture == "amd64" && (h > 0 || have.variant.empty()) && (have.variant.empty() ? 1 : h) < w)
      return 10 + (w - (have.variant.empty() ? 1 : h));
    if (have.architecture == "386") return 100;
    return std::nullopt;
  }
  if (want.architecture == "arm" && have.architecture == "arm" && h >= 5 && h < w) return 10 + (w - h);
  if (want.architecture == "arm64" && have.architecture == "arm" && h >= 5 && h <= 8) return 100 + (8 - h);
  return std::nullopt;
}

Result<size_t> selectPlatform(const Index& index, const Platform& wantRaw) {
  Platform want = normalize(wantRaw);
  int best = -1;
  int bestRank = 0;
  for (size_t i = 0; i < index.manifests.size(); ++i) {
    const auto& d = index.manifests[i];
    if (!d.platform) continue;
    std::optional<int> rank = platformRank(*d.platform, wantRaw);
    if (rank && (best < 0 || *rank < bestRank)) {
      bestRank = *rank;
      best = static_cast<int>(i);
    }
  }
  if (best >= 0) return static_cast<size_t>(best);
  // containerd's images.Manifest sorts the entries that match and those that name no platform,
  // the latter last, and follows the first alone: with no match, the first platform-less entry
  // (whose config, or nested index, then decides; see index_walk.h).
  for (size_t i = 0; i < index.manifests.size(); ++i)
    if (!index.manifests[i].platform) return i;
  std::string avail;
  for (const auto& d : index.manifests)
    if (d.platform) avail += (avail.empty() ? "" : ", ") + normalize(*d.platform).str();
  return Error::NotFound("no manifest for platform " + want.str() +
                         " in the index (has: " + (avail.empty() ? "none with a platform" : avail) + ")");
}

}  // namespace kernodeck::oci
