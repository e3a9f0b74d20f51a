// See replay_image.h.
#include "replay_image.h"

#include <unistd.h>

#include <algorithm>

#include "kernodeck/util/process.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

Result<std::string> imageDigest(const std::string& ref) {
  // NAME@sha256:<64 lowercase hex>, NAME without '@' or whitespace.
  size_t at = ref.find('@');
  std::string digest = at == std::string::npos ? "" : ref.substr(at + 1);
  bool pinned = at != std::string::npos && at > 0 &&
                std::none_of(ref.begin(), ref.begin() + static_cast<long>(at),
                             [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }) &&
                digest.size() == 71 && digest.starts_with("sha256:") &&
                std::all_of(digest.begin() + 7, digest.end(),
                            [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
  if (!pinned)
    return Error::Invalid("--image " + util::printable(ref, 200) +
                          " is not named by digest (REF@sha256:<64 hex>): a tag can move, so it would not say which "
                          "image reproduced the result");
  return digest;
}

std::vector<std::string> podmanRun(const ImageRun& img, const std::string& cwd,
                                   const std::map<std::string, std::string>& env,
                                   const std::vector<std::string>& argv) {
  std::vector<std::string> out = {"podman",
                                  "run",
                                  "--rm",
                                  "--pull=missing",
                                  "--network=none",
                                  "--cap-drop=all",
                                  "--security-opt=no-new-privileges",
                                  "--read-only",
                                  "--user=" + std::to_string(::getuid()) + ":" + std::to_string(::getgid()),
                                  "--volume=" + img.dossier + ":" + img.dossier + ":ro",
                                  "--volume=" + img.work + ":" + img.work + ":rw",
                                  "--workdir=" + cwd};
  if (img.gpu) out.push_back("--device=nvidia.com/gpu=all");
  for (const auto& [k, v] : env) out.push_back("--env=" + k + "=" + v);
  out.push_back(img.image);
  out.insert(out.end(), argv.begin(), argv.end());
  return out;
}

Result<MountedImage> MountedImage::mount(const std::string& image) {
  util::ProcessSpec spec;
  spec.argv = {"podman", "image", "mount", image};
  spec.timeoutMs = 120000;
  auto pr = util::runProcess(spec);
  if (!pr.ok()) return Error::Io("podman image mount: " + pr.error().message);
  if (!pr->ok()) return Error::Io("podman image mount " + image + " " + pr->describe() + ": " + pr->lastLine());
  std::string path(util::trim(pr->out));
  if (path.empty() || path[0] != '/') return Error::Io("podman image mount " + image + " printed no path");
  return MountedImage(image, path);
}

MountedImage::~MountedImage() {
  if (image_.empty()) return;
  util::ProcessSpec spec;
  spec.argv = {"podman", "image", "unmount", image_};
  spec.timeoutMs = 60000;
  spec.out = util::ProcessOutput::Discard;
  spec.err = util::ProcessOutput::Discard;
  (void)util::runProcess(spec);
}

}  // namespace kernodeck::record
