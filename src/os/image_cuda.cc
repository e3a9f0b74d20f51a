#include "kernodeck/os/image_cuda.h"

#include <algorithm>

#include "kernodeck/gpu/cuda_compat.h"
#include "kernodeck/gpu/fwd_note_capture.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::os {

gpu::ImageCuda readImageCuda(const oci::FsView& v, const std::map<std::string, std::string>& env) {
  gpu::ImageCuda c;
  for (const auto& name : v.list("usr/local")) {
    if (name.rfind("cuda", 0) != 0) continue;
    if (auto t = v.readFile("usr/local/" + name + "/version.json", 65536); t.ok() && c.toolkit.empty()) {
      auto j = util::parseUntrustedJson(*t);
      if (j.is_object() && j.contains("cuda") && j["cuda"].is_object() && j["cuda"].contains("version") &&
          j["cuda"]["version"].is_string())
        c.toolkit = j["cuda"]["version"].get<std::string>();
    }
    for (const auto& lib : v.list("usr/local/" + name + "/compat")) {
      std::string driver = gpu::compatLibraryDriver(lib);
      if (driver.empty()) continue;
      auto addBranch = [&](const std::string& branch) {
        if (std::find(c.compatDriverBranches.begin(), c.compatDriverBranches.end(), branch) ==
            c.compatDriverBranches.end())
          c.compatDriverBranches.push_back(branch);
      };
      // The library's own .note.cuda.fwd_compatibility says which host branches it runs on, as
      // NVIDIA's enable-cuda-compat hook reads it; its name gives only its own branch.
      std::string path = "usr/local/" + name + "/compat/" + lib;
      auto bytes = v.readFile(path, kMaxCompatLibraryBytes);
      if (!bytes.ok()) {
        addBranch(util::split(driver, '.')[0]);
        continue;
      }
      // An image's view holds only the bytes the note is read from (the audit's capture); a
      // directory's, the file.
      auto note = gpu::isKeptBytes(*bytes) ? gpu::readKeptFwdCompatNote(*bytes)
                                           : gpu::readFwdCompatNote([&](uint64_t off, size_t len) {
                                               return off >= bytes->size() ? std::string() : bytes->substr(off, len);
                                             });
      if (!note.ok()) {
        c.inconsistencies.push_back("/" + path + ": its .note.cuda.fwd_compatibility cannot be read (" +
                                    note.error().message + "): NVIDIA's toolkit will not use it");
        continue;
      }
      if (!note->has_value()) continue;  // no note: the toolkit never puts it in front of the driver
      for (int branch : (*note)->driverBranches) addBranch(std::to_string(branch));
      c.compatLibraries.push_back({"/" + path, driver, **note});
    }
  }
  if (auto it = env.find("CUDA_VERSION"); it != env.end()) c.envCudaVersion = it->second;
  if (auto it = env.find("NVIDIA_REQUIRE_CUDA"); it != env.end()) c.envRequireCuda = it->second;
  return c;
}

}  // namespace kernodeck::os
