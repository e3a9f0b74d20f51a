// `dossier replay --run --image REF@sha256:...`: the environment and run steps' commands
// started inside that image with podman instead of on this host. The replay folder and the
// dossier are mounted at their own paths (the dossier read-only), so the plan's commands and
// paths are the same either way; the image is named by digest only, so that "this image
// reproduces this result" names one image. Private to the record module.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kernodeck/record/record.h"
#include "kernodeck/util/result.h"

namespace kernodeck::record {

// Where and how the commands run in the image.
struct ImageRun {
  std::string image;   // REF@sha256:HEX, as given
  std::string digest;  // sha256:HEX
  bool gpu = false;    // --gpu: every NVIDIA GPU through CDI (--device nvidia.com/gpu=all)
  std::string dossier, work;
};

// podman run argv for `argv` in `cwd` with exactly `env` inside the image: --rm, no network,
// the caller's uid and gid, every capability dropped, no new privileges, a read-only root,
// `work` mounted read-write and `dossier` read-only at their own paths, the image never pulled
// by tag (it is named by digest).
std::vector<std::string> podmanRun(const ImageRun& img, const std::string& cwd,
                                   const std::map<std::string, std::string>& env, const std::vector<std::string>& argv);

// The image's root filesystem mounted read-only for Kernodeck's static reading of the
// rebuilt environment (`podman image mount`, root only); unmounted when destroyed.
class MountedImage {
 public:
  static Result<MountedImage> mount(const std::string& image);
  MountedImage(MountedImage&& o) noexcept : image_(std::move(o.image_)), path_(std::move(o.path_)) { o.image_.clear(); }
  MountedImage(const MountedImage&) = delete;
  ~MountedImage();
  const std::string& path() const { return path_; }

 private:
  MountedImage(std::string image, std::string path) : image_(std::move(image)), path_(std::move(path)) {}
  std::string image_, path_;
};

}  // namespace kernodeck::record
