// A read-only view of an image's final filesystem.
//
// LayeredView is built by applying layer scans in order (whiteouts, opaque
// directories, hardlinks, later layers overriding earlier ones) and remembers
// which layer each path came from. DirView reads an unpacked root filesystem
// (dir:PATH) directly. Both resolve symlinks inside their root only, as a
// chroot would: nothing outside the image is ever reached through a link.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kernodeck/oci/layer_scan.h"

namespace kernodeck::oci {

struct Node {
  EntryKind kind = EntryKind::Dir;
  uint32_t mode = 0755;
  int64_t size = 0;
  int layer = -1;            // index of the layer that last wrote it; -1 for dir: views
  std::string linkTarget;    // symlinks
  std::string sha256;        // regular files, when known
  std::string md5;           // likewise
  std::shared_ptr<const std::string> content;  // captured content, when known
  // For a hardlink: the layer and path whose tar entry holds the bytes (else -1 and empty).
  int dataLayer = -1;
  std::string dataPath;
};

// What path resolution and the package checks need of a node, for every file of an image:
// cheaper than a copy of the whole Node.
struct NodeInfo {
  EntryKind kind = EntryKind::Dir;
  int layer = -1;
  std::string linkTarget;  // symlinks only
};

class FsView {
 public:
  virtual ~FsView() = default;
  // The node at a normalised path, without following a final symlink
  // (intermediate components must be directories; no link is followed).
  virtual std::optional<Node> stat(const std::string& path) const = 0;
  // Like stat(), with less copied.
  virtual std::optional<NodeInfo> info(const std::string& path) const;
  // Names of the entries of a directory (no follow).
  virtual std::vector<std::string> list(const std::string& dir) const = 0;
  // Content of a regular file at a resolved path; limited in size.
  virtual Result<std::string> readResolved(const std::string& path, uint64_t limit) const = 0;

  // Hash ("sha256" or "md5", hex) of the regular file at a resolved path:
  // recorded during the layer walk, or read now for a directory view.
  virtual Result<std::string> hashResolved(const std::string& path, const std::string& algorithm) const = 0;
  // Says which resolved paths hashResolved() will be asked for next, so that a view that
  // left some unhashed during its walk can hash them all in one more pass.
  virtual void prepareHashes(const std::vector<std::string>& paths, const std::string& algorithm) const {}

  // Resolves `path` (absolute or relative to the root) inside the root. With
  // followLast false a final symlink is returned as is. Fails on loops (> 40 links).
  Result<std::string> resolve(const std::string& path, bool followLast = true) const;
  // Resolves then reads.
  Result<std::string> readFile(const std::string& path, uint64_t limit = 1u << 20) const;
};

class LayeredView : public FsView {
 public:
  // Applies one layer on top of the view. Entries that would reach through a
  // symlink or name a missing hardlink target are refused and reported in `unsafe`.
  void apply(const LayerScan& scan, int layerIndex, std::vector<UnsafeEntry>& unsafe);

  std::optional<Node> stat(const std::string& path) const override;
  std::optional<NodeInfo> info(const std::string& path) const override;
  std::vector<std::string> list(const std::string& dir) const override;
  Result<std::string> readResolved(const std::string& path, uint64_t limit) const override;
  Result<std::string> hashResolved(const std::string& path, const std::string& algorithm) const override;
  void prepareHashes(const std::vector<std::string>& paths, const std::string& algorithm) const override;

  // Reads a layer again for files its walk did not hash: (layer, paths) -> path -> {sha256, md5}.
  using HashFiller = std::function<std::map<std::string, std::pair<std::string, std::string>>(
      int layer, const std::set<std::string>& paths)>;
  void setHashFiller(HashFiller f) { filler_ = std::move(f); }

  const std::map<std::string, Node>& nodes() const { return nodes_; }
  size_t size() const { return nodes_.size(); }

 private:
  void removeTree(const std::string& path, bool keepSelf);
  // False (with reason) when a parent of `path` is a symlink; creates missing parents.
  bool prepareParents(const std::string& path, int layer, std::string& reason);

  std::map<std::string, Node> nodes_;
  HashFiller filler_;
  // Hashes found by the filler (path -> {sha256, md5}), and the paths already asked for.
  mutable std::map<std::string, std::pair<std::string, std::string>> filled_;
  mutable std::set<std::string> fillAsked_;
};

// Files whose base name `match`es, found breadth-first from the root down to `maxDepth`
// directories, skipping the directories named in `skip` (normalised paths) and any
// directory whose own name is in `skipNames`. Bounded to 20,000 directories.
std::vector<std::string> findFiles(const FsView& view, const std::function<bool(const std::string&)>& match, int maxDepth,
                                   const std::vector<std::string>& skip, const std::vector<std::string>& skipNames);

// Opens an unpacked root filesystem. Every lookup walks from the root with
// O_NOFOLLOW, so a link in the tree can never lead outside it.
Result<std::unique_ptr<FsView>> openDirView(const std::string& root);

}  // namespace kernodeck::oci
