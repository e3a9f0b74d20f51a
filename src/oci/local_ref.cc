// A reference written without a transport prefix that names a local path: what is there
// decides the transport, as a user forgetting "oci:" would mean it. See image_ref.h.
#include <sys/stat.h>

#include "kernodeck/oci/image_ref.h"
#include "kernodeck/oci/source.h"

namespace kernodeck::oci {

bool looksLikeLocalPath(std::string_view s) {
  for (std::string_view p : {"/", "./", "../", "~"})
    if (s.starts_with(p)) return true;
  if (s == "." || s == "..") return true;
  struct stat st {};
  return ::stat(std::string(s).c_str(), &st) == 0;
}

Result<ImageRef> detectLocalRef(const std::string& path) {
  ImageRef r;
  r.raw = path;
  r.path = path;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    return Error::NotFound("'" + path +
                           "' does not exist; a local image is named oci:DIR, oci-archive:FILE, "
                           "docker-archive:FILE, dir:DIR (skopeo) or rootfs:DIR");
  auto has = [&](const char* name) {
    struct stat s {};
    return ::stat((path + "/" + name).c_str(), &s) == 0;
  };
  if (S_ISDIR(st.st_mode)) {
    if (has("oci-layout"))
      r.transport = Transport::OciLayout;
    else if (has("manifest.json"))
      r.transport = Transport::Dir;
    else if (has("etc") || has("usr") || has("bin"))
      r.transport = Transport::RootFs;
    else
      return Error::Invalid("'" + path +
                            "' is a directory with no oci-layout, no manifest.json and no etc/, usr/ or "
                            "bin/: name it as oci:DIR, dir:DIR (skopeo) or rootfs:DIR");
    return r;
  }
  if (S_ISREG(st.st_mode)) {
    auto fa = openTarAccess(path);
    if (!fa.ok())
      return Error::Invalid("'" + path +
                            "' is a file but not a tar archive: a local image file is named "
                            "docker-archive:FILE or oci-archive:FILE");
    // docker 25+ archives hold both manifest.json and an OCI layout: docker-archive reads both.
    if ((*fa)->exists("manifest.json"))
      r.transport = Transport::DockerArchive;
    else if ((*fa)->exists("oci-layout"))
      r.transport = Transport::OciArchive;
    else
      return Error::Invalid("'" + path +
                            "' is a tar archive with neither manifest.json nor oci-layout: not a "
                            "docker-archive: or oci-archive: image");
    return r;
  }
  return Error::Invalid("'" + path + "' is neither a directory nor a file");
}

}  // namespace kernodeck::oci
