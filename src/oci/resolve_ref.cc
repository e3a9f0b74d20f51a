// What an image reference means: the one place that turns what a user wrote into a transport
// and a path or name (image_ref.h). The audit and the probe's --image go through it.
#include <sys/stat.h>

#include "kernodeck/oci/image_ref.h"

namespace kernodeck::oci {

Result<ResolvedRef> resolveImageRef(std::string_view reference, RefUse use) {
  ResolvedRef out;
  if (use == RefUse::RegistryOnly) {
    out.ref.transport = Transport::Registry;
    out.ref.raw = std::string(reference);
    out.ref.path = out.ref.registryName();
    return out;
  }
  std::string raw(reference);
  auto ref = parseImageRef(raw);
  if (ref.ok() && ref->transport == Transport::Registry && !raw.starts_with("docker://") && looksLikeLocalPath(raw)) {
    ref = detectLocalRef(raw);
    if (ref.ok())
      out.note = std::string("no transport was given; '") + raw + "' holds what " + toString(ref->transport) +
                 ": reads, so it was read as " + toString(ref->transport) + ":" + raw;
  }
  struct stat st {};
  if (ref.ok() && ref->transport == Transport::Dir && ::stat(ref->path.c_str(), &st) == 0 && S_ISDIR(st.st_mode) &&
      ::stat((ref->path + "/manifest.json").c_str(), &st) != 0) {
    ref->transport = Transport::RootFs;
    out.note = "dir:" + ref->path +
               " has no manifest.json, so it was read as a root filesystem; in skopeo's terms "
               "dir: is a directory of blobs and a manifest: name a root filesystem rootfs:" +
               ref->path;
  }
  if (!ref.ok()) return ref.error();
  out.ref = std::move(*ref);
  return out;
}

}  // namespace kernodeck::oci
