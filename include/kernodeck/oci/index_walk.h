// From the descriptor a reference names to the image manifest a runtime runs, through image
// indexes nested in image indexes, as containerd's images.Manifest walks them: in each index the
// entry selectPlatform names (the best match, else the first entry that names no platform) is
// the only one followed; a manifest reached through an entry without a platform is taken when
// its config's os/architecture match, and otherwise the walk fails, as containerd's does (it
// does not go back to try another entry). Depth is bounded and a cycle is refused.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kernodeck/oci/manifest.h"

namespace kernodeck::oci {

// Most image indexes on the way from the top descriptor to a manifest, the top one included.
// containerd's Walk has no bound of its own; real images nest one index in another at most
// (an index.json entry naming a multi-platform index), so 4 leaves room and stops a chain of
// indexes written to exhaust the reader.
inline constexpr size_t kMaxIndexDepth = 4;

// How the chosen manifest's platform is known.
enum class PlatformFrom {
  Reference,  // the reference named a manifest: no index chose it
  Index,      // the index entry that names it gives its platform
  Config,     // the entry names none; its config's os/architecture matched
};

struct ManifestChoice {
  Descriptor manifest;            // as the index entry gives it (the top descriptor when no index)
  std::string bytes;              // the manifest's bytes
  std::vector<Descriptor> chain;  // the indexes walked through, top first; empty without index
  PlatformFrom platformFrom = PlatformFrom::Reference;
  Platform platform;  // the entry's (Index) or the config's (Config) platform, normalised
};

// Reads the document a descriptor names (an index, a manifest, or a config), bounded and verified
// as the caller verifies; `what` names it ("index", "manifest", "config").
using DocumentReader = std::function<Result<std::string>(const Descriptor&, const std::string& what)>;
// Called with each nested index read (not the top one), e.g. to check its schema.
using IndexVisitor = std::function<void(const Descriptor&, const std::string& bytes)>;

// The manifest for `want` under `top`, whose bytes `topBytes` the caller has read. Errors:
// NotFound when no entry serves `want` (naming the index and what it has), Invalid for a cycle
// (naming the digest listed again), a chain deeper than kMaxIndexDepth or an unparsable document.
Result<ManifestChoice> chooseManifest(const Descriptor& top, const std::string& topBytes, const Platform& want,
                                      const DocumentReader& read, const IndexVisitor& onIndex = {});

// "sha256:a -> sha256:b": the digests of a chain, for messages and reports.
std::string chainText(const std::vector<Descriptor>& chain);

}  // namespace kernodeck::oci
