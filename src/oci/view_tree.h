// The layered view's store (issue 31): a tree of path components, for images of hundreds of
// thousands of files in little memory. Each node holds its own name once (bytes in an arena of
// blocks), its parent and a list of its children; a node is found from its parent and name
// through one open-addressing index of 4-byte slots. A node's fields are packed: SHA-256 and
// MD5 in lowercase hex of their length (all a layer walk writes) kept as raw bytes, and what
// most nodes lack (a link target, a data path, a SHA-1, captured content, a hash spelt
// otherwise) in a side table entry made only when needed. About 100 bytes a file with its name,
// against the ~240 of a std::map<std::string, ...> node and its path string.
//
// A (parent, name) pair names one node for the life of the tree: removing a node only marks it
// (and every node below it) as not held, and writing the same path again revives it. So ids are
// stable, removal is linear in what it removes, and nothing is ever moved (nodes and names live
// in fixed blocks: growing the tree never holds two copies of it). The root is node 0: always
// a directory to walk through, and held only when an entry wrote the root itself, as a
// std::map keyed by path held the key "".
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/oci/fs_view.h"

namespace kernodeck::oci {

class ViewTree {
 public:
  using Id = uint32_t;
  static constexpr Id kNone = UINT32_MAX;
  static constexpr Id kRoot = 0;

  ViewTree();

  // The held node at a normalised path ("" is the root, held only when written); kNone when
  // there is none (a component missing, not held, or spelt as no node is: "", ".", "..").
  // Each thread remembers the last directory it went through (a thread-local cache, so
  // concurrent readers stay safe): a layer's entries in tar order, and a package's files as its
  // checks ask for them, share their parents, so most lookups start there, one component above
  // their end, instead of at the root.
  Id find(std::string_view path) const;
  // The index key of `name` under `parent` (a keyed hash of the name), for a caller that looks
  // a child up and then makes it: one hash instead of two.
  static size_t key(Id parent, std::string_view name);
  // The held child of `parent` called `name`, or kNone.
  Id child(Id parent, std::string_view name) const { return child(parent, name, key(parent, name)); }
  Id child(Id parent, std::string_view name, size_t key) const;
  // The child of a held directory (or the root) called `name`: held afterwards; one that was
  // not held is now an empty directory (mode 0755, layer -1).
  Id make(Id parent, std::string_view name) { return make(parent, name, key(parent, name)); }
  Id make(Id parent, std::string_view name, size_t key);
  // The node at a path whose parent is held (or the root): held afterwards, as make() leaves it.
  Id makeAt(std::string_view path);
  bool held(Id id) const;

  EntryKind kind(Id id) const;
  int layer(Id id) const;
  // A directory written again: only its mode and layer change (containerd merges directories).
  void setDir(Id id, uint32_t mode, int layer);
  // Every field of a node, unpacked; and what path resolution needs of it.
  Node node(Id id) const;
  NodeInfo info(Id id) const;
  // Replaces a held node's fields (its children, if any, stay).
  void store(Id id, const Node& n);
  // The same with the fields of a layer's entry (not a hardlink's: its bytes are elsewhere)
  // written by layer `layer`: store(id, Node{...}) without the digests' round trip through hex.
  void store(Id id, const LayerEntry& e, int layer);
  // No longer holds `id` (unless keepSelf) nor anything below it. drop(kRoot, false) empties
  // the tree.
  void drop(Id id, bool keepSelf);
  // No longer holds `id` itself; what is below it stays (for the root only: its key "" and the
  // rest of the view are independent, as in a map keyed by path).
  void forgetRoot();

  // The names of a node's held children, sorted as std::string sorts them.
  std::vector<std::string> names(Id dir) const;
  // The held children of a node, with their names, in no particular order.
  void forEachChild(Id dir, const std::function<void(Id, std::string_view)>& f) const;
  // The normalised path of a node.
  std::string path(Id id) const;

  // The hex hash ("sha256", "md5" or "sha1") the walk recorded for a node; empty when none.
  std::string hash(Id id, const std::string& algorithm) const;
  // Whether that hash is held as bytes (the cheap check of hashKnown()).
  bool hashAsBytes(Id id, const std::string& algorithm) const;
  const std::shared_ptr<const std::string>* content(Id id) const;
  // A hardlink's (or a file written through a link's) bytes: the layer and tar path holding them
  // (-1 and empty when they are the node's own).
  int dataLayer(Id id) const;
  const std::string* dataPath(Id id) const;

  // The number of held nodes (the root counted only when held), and of all nodes made.
  size_t size() const { return held_; }
  size_t made() const { return count_; }
  // When more nodes are unheld than held (past a slack), the tree is rebuilt with the held ones
  // only, so that writing and removing paths layer after layer costs memory for what is held,
  // as a map would. Ids change: call it only between operations (LayeredView::apply's end).
  void compactIfSparse();
  // Every held node with its path, parents before children.
  void forEach(const std::function<void(const std::string& path, Id)>& f) const;

 private:
  // What most nodes lack, apart.
  struct Extra {
    std::shared_ptr<const std::string> content;
    std::string linkTarget, dataPath, sha1;
    std::string sha256, md5;  // only when not kept as bytes
    int32_t dataLayer = -1;
  };
  enum Flags : uint8_t { kHeld = 1, kSha256 = 2, kMd5 = 4 };
  struct Packed {
    const char* name = nullptr;
    uint32_t nameLen = 0;
    Id parent = kNone, firstChild = kNone, next = kNone;
    uint32_t extra = 0;  // 1 + index into extras_; 0: none
    uint32_t mode = 0755;
    int64_t size = 0;
    int32_t layer = -1;
    EntryKind kind = EntryKind::Dir;
    uint8_t flags = 0;
    std::array<uint8_t, 32> sha256{};
    std::array<uint8_t, 16> md5{};
  };
  static constexpr unsigned kChunkBits = 10;  // nodes a block
  static constexpr size_t kNameBlock = 64 * 1024;

  Packed& at(Id id) { return chunks_[id >> kChunkBits][id & ((1u << kChunkBits) - 1)]; }
  const Packed& at(Id id) const { return chunks_[id >> kChunkBits][id & ((1u << kChunkBits) - 1)]; }
  std::string_view nameOf(const Packed& p) const { return {p.name, p.nameLen}; }
  // Any node, held or not, called `name` under `parent`: the slot of the index holding it, or
  // the empty slot where it would go.
  size_t slot(Id parent, std::string_view name, size_t key) const;
  void growIndex();
  const char* keepName(std::string_view name);
  const Extra* extraOf(const Packed& p) const { return p.extra ? &extras_[p.extra - 1] : nullptr; }
  void releaseExtra(Packed& p);
  // Gives a node without one its side table entry.
  void setExtra(Packed& p, Extra&& x);
  void setHeld(Packed& p, bool held);

  std::vector<std::unique_ptr<Packed[]>> chunks_;
  Id count_ = 0;  // nodes made, held or not
  size_t held_ = 0;
  std::vector<Id> index_;  // open addressing, linear probing; kNone: empty
  std::vector<std::unique_ptr<char[]>> names_;
  size_t nameUsed_ = kNameBlock;  // bytes used of the last block
  std::vector<Extra> extras_;
  std::vector<uint32_t> freeExtras_;
  // Names this tree's ids for find()'s thread-local cache: unique in the process, renewed when
  // ids change (compactIfSparse), so a cache filled for another tree, or before, is not used.
  uint64_t epoch_;
};

}  // namespace kernodeck::oci
