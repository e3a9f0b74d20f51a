// A read-only view of an image's final filesystem.
//
// LayeredView is built by applying layer scans in order, entry by entry as containerd's
// applier (archive/tar.go) unpacks a layer: names rooted and cleaned, symlinks among an
// entry's parents followed inside the root, hardlink targets resolved the same way, whiteouts
// and opaque directories hiding what the lower layers hold. It remembers which layer each
// path came from. DirView reads an unpacked root filesystem
// (dir:PATH) directly. Both resolve symlinks inside their root only, as a
// chroot would: nothing outside the image is ever reached through a link.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kernodeck/oci/view_entry.h"
#include "kernodeck/util/result.h"

namespace kernodeck::oci {

struct Node {
  EntryKind kind = EntryKind::Dir;
  uint32_t mode = 0755;
  int64_t size = 0;
  int layer = -1;                              // index of the layer that last wrote it; -1 for dir: views
  std::string linkTarget;                      // symlinks
  std::string sha256;                          // regular files, when known
  std::string md5;                             // likewise
  std::string sha1;                            // likewise (apk's checksums; only when a package database asked)
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

// What a check of a listed file needs of it, from one lookup of its path (issue 31: each RECORD
// row once cost four: resolve, info, hashKnown, hashResolved).
struct FileFacts {
  EntryKind kind = EntryKind::Dir;
  int layer = -1;
  bool hashKnown = false;  // FsView::hashKnown(path, algorithm)
  std::string hash;        // hashResolved(path, algorithm) when hashKnown and it answers; else empty
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

  // Hash ("sha256", "md5" or "sha1", hex) of the regular file at a resolved path:
  // recorded during the layer walk, or read now for a directory view.
  virtual Result<std::string> hashResolved(const std::string& path, const std::string& algorithm) const = 0;
  // Says which resolved paths hashResolved() will be asked for next, so that a view that
  // left some unhashed during its walk can hash them all in one more pass.
  virtual void prepareHashes(const std::vector<std::string>& paths, const std::string& algorithm) const {}
  // Whether hashResolved() would answer for a resolved path from what the view already holds,
  // with nothing read: such a path need not be passed to prepareHashes() (a list of every file
  // of a big image costs memory for nothing when the walk hashed them all).
  virtual bool hashKnown(const std::string& path, const std::string& algorithm) const { return false; }
  // info(), hashKnown() and (when known) hashResolved() of one path under one algorithm; none
  // when there is no node at `path`. The layered view answers from one lookup.
  virtual std::optional<FileFacts> facts(const std::string& path, const std::string& algorithm) const;
  // The entries of a directory with their kinds, in list()'s order: list() and info() of each
  // entry (one missing by then is left out). The layered view answers without a lookup an entry.
  virtual std::vector<std::pair<std::string, EntryKind>> listKinds(const std::string& dir) const;

  // Resolves `path` (absolute or relative to the root) inside the root. With
  // followLast false a final symlink is returned as is. Fails on loops (> 40 links).
  Result<std::string> resolve(const std::string& path, bool followLast = true) const;
  // Resolves then reads.
  Result<std::string> readFile(const std::string& path, uint64_t limit = 1u << 20) const;

 protected:
  // The walk behind resolve(), and containerd's fs.RootPath when `allowMissing`: `path` (maybe
  // with '..' or a leading '/') with its symlinks followed inside the root; a missing component
  // and what follows it are then kept as written. `viaLink`, when given, gets the first link
  // followed. Fails on a component below a non-directory, or after `maxLinks` links.
  Result<std::string> walk(std::string_view path, bool followLast, bool allowMissing, int maxLinks,
                           std::string* viaLink) const;
};

class ViewTree;

class LayeredView : public FsView {
 public:
  LayeredView();
  ~LayeredView() override;
  LayeredView(LayeredView&&) noexcept;
  LayeredView& operator=(LayeredView&&) noexcept;

  // Applies one layer on top of the view as containerd does. Entries a runtime would reject
  // (a parent that is not a directory, a hardlink to nothing or to a directory, a whiteout of
  // what the same layer wrote, a symlink loop) are not applied and go to `unsafe`; entries
  // applied that no build tool writes (through a symlink, a hardlink reached through one) go
  // to `suspicious`. Nothing is ever placed outside the root: a link is resolved as a chroot
  // would resolve it.
  // `entries` are a layer's, in tar order (a LayerScan's, layer_scan.h).
  void apply(const std::vector<LayerEntry>& entries, int layerIndex, std::vector<UnsafeEntry>& unsafe,
             std::vector<UnsafeEntry>& suspicious);
  // The same, for callers that only want what was refused.
  void apply(const std::vector<LayerEntry>& entries, int layerIndex, std::vector<UnsafeEntry>& unsafe) {
    std::vector<UnsafeEntry> suspicious;
    apply(entries, layerIndex, unsafe, suspicious);
  }

  std::optional<Node> stat(const std::string& path) const override;
  std::optional<NodeInfo> info(const std::string& path) const override;
  std::vector<std::string> list(const std::string& dir) const override;
  Result<std::string> readResolved(const std::string& path, uint64_t limit) const override;
  Result<std::string> hashResolved(const std::string& path, const std::string& algorithm) const override;
  void prepareHashes(const std::vector<std::string>& paths, const std::string& algorithm) const override;
  bool hashKnown(const std::string& path, const std::string& algorithm) const override;
  std::optional<FileFacts> facts(const std::string& path, const std::string& algorithm) const override;
  std::vector<std::pair<std::string, EntryKind>> listKinds(const std::string& dir) const override;

  // The hashes a second read of a layer found for one file (hex; empty: not hashed).
  struct FileHashes {
    std::string sha256, md5, sha1;
  };
  // Reads a layer again for files its walk did not hash: (layer, paths) -> path -> every hash.
  using HashFiller = std::function<std::map<std::string, FileHashes>(int layer, const std::set<std::string>& paths)>;
  void setHashFiller(HashFiller f) { filler_ = std::move(f); }

  // Every node, unpacked into a copy: for tests and small views (it costs a full Node a path).
  std::map<std::string, Node> nodes() const;
  size_t size() const;
  // The nodes the store holds, the removed ones not yet reclaimed included: what the view costs
  // (about 100 bytes a node), bounded by about twice size() between layers.
  size_t nodesKept() const;

 private:
  // Removes what is at `path` and below it (the root: everything); with keepSelf, only below it.
  void removeTree(const std::string& path, bool keepSelf);
  // containerd's mkparent: creates the missing directories of a resolved path (mode 0755);
  // fails when one of them exists and is not a directory.
  // Every directory of `dir` goes into `upper` when given.
  Status makeParents(const std::string& dir, int layer, std::set<std::string>* upper);
  // Removes what is at `path` and below it, except the paths in `upper` (what the layer being
  // applied wrote): a whiteout or an opaque directory hides lower layers only.
  void hideLower(const std::string& path, const std::set<std::string>& upper);
  // Where an entry lands: its parent resolved inside the root as containerd's fs.RootPath
  // resolves it (into `resolvedParent`; the first link followed into `via`), joined with its
  // base name. An error is why a runtime would fail to unpack it.
  Result<std::string> landing(const LayerEntry& e, std::string& resolvedParent, std::string& via) const;
  // The node a hardlink entry makes: its target's, resolved as containerd's hardlinkRootPath
  // does, remembering where the bytes are. An error is why the entry is refused; a target
  // reached through a symlink goes to `suspicious`.
  Result<Node> hardlinkNode(const LayerEntry& e, int layer, std::vector<UnsafeEntry>& suspicious) const;
  // The node at a path, as stored (a tree of path components; view_tree.h), or none.
  uint32_t find(const std::string& path) const;

  std::unique_ptr<ViewTree> tree_;
  HashFiller filler_;
  // Hashes found by the filler (path -> all of them), and the paths already asked for.
  mutable std::map<std::string, FileHashes> filled_;
  mutable std::set<std::string> fillAsked_;
};

// Files whose base name `match`es, found breadth-first from the root down to `maxDepth`
// directories, skipping the directories named in `skip` (normalised paths) and any
// directory whose own name is in `skipNames`. Bounded to 20,000 directories.
std::vector<std::string> findFiles(const FsView& view, const std::function<bool(const std::string&)>& match,
                                   int maxDepth, const std::vector<std::string>& skip,
                                   const std::vector<std::string>& skipNames);

// Opens an unpacked root filesystem. Every lookup walks from the root with
// O_NOFOLLOW, so a link in the tree can never lead outside it.
Result<std::unique_ptr<FsView>> openDirView(const std::string& root);

}  // namespace kernodeck::oci
