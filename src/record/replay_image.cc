// See replay_image.h.
#include "replay_image.h"

#include <unistd.h>

#include <regex>

#include "kernodeck/util/process.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

Result<std::string> imageDigest(const std::string& ref) {
  static const std::regex pinned(R"(([^@\s]+)@(sha256:[0-9a-f]{64}))");
  std::smatch m;
  if (!std::regex_match(ref, m, pinned))
    return Error::Invalid("--image " + util::printable(ref, 200) +
                          " is not named by digest (REF@sha256:<64 hex>): a tag can move, so it would not say which "
                          "image reproduced the result");
  return m[2].str();
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
