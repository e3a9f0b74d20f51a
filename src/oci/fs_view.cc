#include "kernodeck/oci/fs_view.h"

#include <algorithm>
#include <cstdint>
#include <deque>

#include "kernodeck/util/path.h"
#include "kernodeck/util/strings.h"
#include "view_tree.h"

namespace kernodeck::oci {

namespace {

std::string joinPath(const std::string& a, const std::string& b) { return a.empty() ? b : a + "/" + b; }

}  // namespace

LayeredView::LayeredView() : tree_(std::make_unique<ViewTree>()) {}
LayeredView::~LayeredView() = default;
LayeredView::LayeredView(LayeredView&&) noexcept = default;
LayeredView& LayeredView::operator=(LayeredView&&) noexcept = default;

uint32_t LayeredView::find(const std::string& path) const { return tree_->find(path); }

size_t LayeredView::size() const { return tree_->size(); }

size_t LayeredView::nodesKept() const { return tree_->made(); }

std::map<std::string, Node> LayeredView::nodes() const {
  std::map<std::string, Node> out;
  tree_->forEach([&](const std::string& p, ViewTree::Id id) { out.emplace(p, tree_->node(id)); });
  return out;
}

std::optional<NodeInfo> FsView::info(const std::string& path) const {
  auto n = stat(path);
  if (!n) return std::nullopt;
  return NodeInfo{n->kind, n->layer, n->kind == EntryKind::Symlink ? n->linkTarget : std::string()};
}

std::optional<FileFacts> FsView::facts(const std::string& path, const std::string& algorithm) const {
  auto n = info(path);
  if (!n) return std::nullopt;
  FileFacts f{n->kind, n->layer, hashKnown(path, algorithm), ""};
  if (f.hashKnown)
    if (auto h = hashResolved(path, algorithm); h.ok()) f.hash = std::move(*h);
  return f;
}

std::vector<std::pair<std::string, EntryKind>> FsView::listKinds(const std::string& dir) const {
  std::vector<std::pair<std::string, EntryKind>> out;
  for (auto& name : list(dir))
    if (auto n = info(joinPath(dir, name))) out.emplace_back(std::move(name), n->kind);
  return out;
}

Result<std::string> FsView::resolve(const std::string& path, bool followLast) const {
  // Both views only hold a node whose parents are real directories (a layer's entry is placed
  // where its parents resolve to, and replacing a directory drops what was below it; the directory view
  // opens each parent with O_NOFOLLOW), so a normalised path that exists and is not a link
  // to follow resolves to itself: one lookup instead of one per component.
  if (util::isNormalPath(path))
    if (auto n = info(path); n && (n->kind != EntryKind::Symlink || !followLast)) return path;
  return walk(path, followLast, false, 40, nullptr);
}

Result<std::string> FsView::walk(std::string_view path, bool followLast, bool allowMissing, int maxLinks,
                                 std::string* viaLink) const {
  std::deque<std::string> todo;
  for (auto& c : util::split(path, '/'))
    if (!c.empty() && c != ".") todo.push_back(c);
  std::string p;                // resolved so far, "a/b/c"
  std::vector<size_t> lengths;  // p's length before each component
  int links = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.front());
    todo.pop_front();
    if (c == "..") {
      if (!lengths.empty()) {  // ".." at the root stays at the root
        p.resize(lengths.back());
        lengths.pop_back();
      }
      continue;
    }
    lengths.push_back(p.size());
    if (!p.empty()) p += '/';
    p += c;
    auto n = info(p);
    if (!n) {
      if (todo.empty() || allowMissing) continue;  // a missing final component resolves to itself
      return Error::NotFound("'" + util::printable(path) + "' does not exist in the image ('" + util::printable(p) +
                             "' is missing)");
    }
    if (n->kind == EntryKind::Symlink && (followLast || !todo.empty())) {
      if (++links > maxLinks)
        return Error::Invalid("too many levels of symbolic links resolving '" + util::printable(path) + "'");
      if (viaLink && viaLink->empty()) *viaLink = p;
      p.resize(lengths.back());
      lengths.pop_back();
      const std::string& t = n->linkTarget;
      if (!t.empty() && t.front() == '/') {
        p.clear();
        lengths.clear();
      }
      auto parts = util::split(t, '/');
      for (auto it = parts.rbegin(); it != parts.rend(); ++it)
        if (!it->empty() && *it != ".") todo.push_front(*it);
      continue;
    }
    if (!todo.empty() && n->kind != EntryKind::Dir)
      return Error::NotFound("'" + util::printable(path) + "': '" + util::printable(p) + "' is not a directory");
  }
  return p;
}

Result<std::string> FsView::readFile(const std::string& path, uint64_t limit) const {
  KDK_TRY_ASSIGN(std::string p, resolve(path, true));
  return readResolved(p, limit);
}

void LayeredView::removeTree(const std::string& path, bool keepSelf) {
  if (path.empty()) {  // the root
    tree_->drop(ViewTree::kRoot, false);
    return;
  }
  if (ViewTree::Id id = find(path); id != ViewTree::kNone) tree_->drop(id, keepSelf);
}

Status LayeredView::makeParents(const std::string& dir, int layer, std::set<std::string>* upper) {
  if (dir.empty()) return {};
  if (auto id = tree_->find(dir); id != ViewTree::kNone && tree_->kind(id) == EntryKind::Dir && !upper) return {};
  ViewTree::Id at = ViewTree::kRoot;
  for (size_t start = 0; start <= dir.size();) {
    size_t slash = dir.find('/', start);
    if (slash == std::string::npos) slash = dir.size();
    std::string_view part = std::string_view(dir).substr(start, slash - start);
    ViewTree::Id next = tree_->child(at, part);
    if (next == ViewTree::kNone) {
      next = tree_->make(at, part);
      tree_->setDir(next, 0755, layer);
    } else if (tree_->kind(next) != EntryKind::Dir)
      return Error::Invalid("'" + util::printable(dir.substr(0, slash)) + "' is not a directory");
    if (upper) upper->insert(dir.substr(0, slash));
    at = next;
    start = slash + 1;
  }
  return {};
}

void LayeredView::hideLower(const std::string& path, const std::set<std::string>& upper) {
  auto out = [&](const std::string& p) { return !upper.count(p); };
  if (!path.empty() && out(path)) {
    removeTree(path, false);
    return;
  }
  ViewTree::Id top = path.empty() ? ViewTree::kRoot : find(path);
  if (top == ViewTree::kNone) return;
  if (path.empty() && tree_->held(top) && out(path)) tree_->forgetRoot();
  // What is below a path the layer wrote: those it did not write go, with all below them.
  std::vector<std::pair<ViewTree::Id, std::string>> todo = {{top, path}};
  while (!todo.empty()) {
    // (not a structured binding: clang 14, scripts/fuzz's compiler, cannot capture one)
    ViewTree::Id dir = todo.back().first;
    std::string prefix = std::move(todo.back().second);
    todo.pop_back();
    std::vector<std::pair<ViewTree::Id, std::string>> kids;
    tree_->forEachChild(
        dir, [&](ViewTree::Id c, std::string_view name) { kids.emplace_back(c, joinPath(prefix, std::string(name))); });
    for (auto& [c, p] : kids) {
      if (out(p))
        tree_->drop(c, false);
      else
        todo.emplace_back(c, std::move(p));
    }
  }
}

namespace {

// The entry's name as the tar spells it, for notes (whiteouts are stored by what they hide).
std::string entryName(const LayerEntry& e) {
  if (e.kind == EntryKind::Opaque) return joinPath(e.path, ".wh..wh..opq");
  if (e.kind != EntryKind::Whiteout) return e.path;
  size_t slash = e.path.rfind('/');
  return slash == std::string::npos ? ".wh." + e.path : e.path.substr(0, slash + 1) + ".wh." + e.path.substr(slash + 1);
}

// LayeredView::apply() for an entry that is neither a whiteout nor an opaque marker and whose
// parent is already a directory of the view (most entries of a layer in tar order), in a layer
// without such markers, each lookup done once: landing() would resolve the parent to itself,
// makeParents() would have nothing to make, and the entry lands at its own path. `hardlink` is
// LayeredView::hardlinkNode for the entry. False, with nothing done, for any other entry.
template <class Hardlink>
bool applyInPlace(ViewTree& tree, const LayerEntry& e, int layer, std::vector<UnsafeEntry>& unsafe,
                  Hardlink&& hardlink) {
  // The walk hands only normal paths (tar_entries.cc cleans each name); anything else takes the
  // full rule, which knows what a leading '/' or '..' means.
  if (e.kind == EntryKind::Whiteout || e.kind == EntryKind::Opaque || !util::isNormalPath(e.path)) return false;
  size_t slash = e.path.rfind('/');
  std::string_view path = e.path;
  std::string_view base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.empty()) return false;
  ViewTree::Id dir = ViewTree::kRoot;  // (the root's own kind is not checked: apply() does not either)
  if (slash != std::string::npos) {
    dir = tree.find(path.substr(0, slash));
    if (dir == ViewTree::kNone || tree.kind(dir) != EntryKind::Dir) return false;
  }
  size_t key = ViewTree::key(dir, base);
  if (ViewTree::Id old = tree.child(dir, base, key); old != ViewTree::kNone) {
    if (tree.kind(old) == EntryKind::Dir && e.kind == EntryKind::Dir) {  // merged: only the metadata changes
      tree.setDir(old, e.mode, layer);
      return true;
    }
    tree.drop(old, false);  // containerd removes what is there before it writes
  }
  if (e.kind != EntryKind::Hardlink) {
    tree.store(tree.make(dir, base, key), e, layer);
    return true;
  }
  auto linked = hardlink();
  if (!linked.ok())
    unsafe.push_back({util::printable(entryName(e)), linked.error().message});
  else
    tree.store(tree.make(dir, base, key), *linked);
  return true;
}

}  // namespace

// containerd's fs.RootPath gives up after 255 links.
constexpr int kMaxLinks = 255;

Result<std::string> LayeredView::landing(const LayerEntry& e, std::string& resolved, std::string& via) const {
  // containerd: the parent is resolved inside the root (fs.RootPath), the base name is not.
  size_t slash = e.path.rfind('/');
  std::string parent = e.kind == EntryKind::Opaque ? e.path : slash == std::string::npos ? "" : e.path.substr(0, slash);
  std::string base = e.kind == EntryKind::Opaque ? "" : slash == std::string::npos ? e.path : e.path.substr(slash + 1);
  resolved = parent;
  if (!parent.empty()) {
    auto id = tree_->find(parent);
    if (id == ViewTree::kNone || tree_->kind(id) != EntryKind::Dir) {
      auto r = walk(parent, true, true, kMaxLinks, &via);
      if (!r.ok()) return Error::Invalid(r.error().message + " (a runtime fails to unpack the layer)");
      resolved = *r;
    }
  }
  return base.empty() ? resolved : joinPath(resolved, base);
}

Result<Node> LayeredView::hardlinkNode(const LayerEntry& e, int layer, std::vector<UnsafeEntry>& suspicious) const {
  // containerd's hardlinkRootPath: the target's parent resolved inside the root, its base
  // name not (a hardlink to a symlink links the symlink).
  std::string_view raw = e.linkTarget;
  size_t ls = raw.rfind('/');
  std::string linkVia;
  auto dir =
      walk(ls == std::string_view::npos ? std::string_view() : raw.substr(0, ls + 1), true, true, kMaxLinks, &linkVia);
  if (!dir.ok()) return Error::Invalid("hardlink target " + util::printable(e.linkTarget) + ": " + dir.error().message);
  std::string target = *dir;
  std::string_view file = ls == std::string_view::npos ? raw : raw.substr(ls + 1);
  if (file == "..") {
    size_t k = target.rfind('/');
    target = k == std::string::npos ? "" : target.substr(0, k);
  } else if (!file.empty() && file != ".")
    target = joinPath(target, std::string(file));
  auto t = find(target);
  if (target.empty() || (t != ViewTree::kNone && tree_->kind(t) == EntryKind::Dir))
    return Error::Invalid("hardlink to a directory ('/" + util::printable(target) + "')");
  if (t == ViewTree::kNone)
    return Error::Invalid("hardlink to '" + util::printable(e.linkTarget) + "', which is not in the image");
  if (!linkVia.empty())
    suspicious.push_back({util::printable(e.path), "hardlink target " + util::printable(e.linkTarget) +
                                                       " reached through symlink '" + util::printable(linkVia) + "'"});
  Node n = tree_->node(t);
  if (n.dataPath.empty()) {
    n.dataLayer = tree_->layer(t);
    n.dataPath = target;
  }
  n.layer = layer;
  return n;
}

void LayeredView::apply(const std::vector<LayerEntry>& entries, int layer, std::vector<UnsafeEntry>& unsafe,
                        std::vector<UnsafeEntry>& suspicious) {
  // What this layer wrote, parents included: overlayfs's upper directory. A whiteout or an
  // opaque directory hides only what is not in it (the OCI spec; containerd's overlay applier),
  // wherever the marker sits in the tar. Kept only when the layer has such markers.
  bool markers = false;
  for (const auto& e : entries) markers = markers || e.kind == EntryKind::Whiteout || e.kind == EntryKind::Opaque;
  std::set<std::string> upperSet;
  std::set<std::string>* upper = markers ? &upperSet : nullptr;

  for (const auto& e : entries) {
    auto refuse = [&](const std::string& why) { unsafe.push_back({util::printable(entryName(e)), why}); };
    if (!upper && applyInPlace(*tree_, e, layer, unsafe, [&] { return hardlinkNode(e, layer, suspicious); })) continue;
    std::string resolved, via;
    auto landed = landing(e, resolved, via);
    if (!landed.ok()) {
      refuse(landed.error().message);
      continue;
    }
    const std::string& path = *landed;
    if (!via.empty())
      suspicious.push_back({util::printable(entryName(e)), "written through symlink '" + util::printable(via) +
                                                               "': a runtime applies it at '/" + util::printable(path) +
                                                               "'"});
    if (auto st = makeParents(resolved, layer, upper); !st.ok()) {
      refuse(st.error().message + " (a runtime fails to unpack the layer)");
      continue;
    }
    if (e.kind == EntryKind::Opaque) {
      hideLower(resolved, upperSet);
      continue;
    }
    if (e.kind == EntryKind::Whiteout) {
      if (upperSet.count(path)) {
        refuse("whiteout of '" + util::printable(path) +
               "', which this same layer wrote (containerd's overlay applier "
               "fails on it; the OCI spec keeps what the layer wrote)");
        hideLower(path, upperSet);
      } else {
        removeTree(path, false);
      }
      continue;
    }
    auto old = tree_->find(path);
    if (old != ViewTree::kNone) {
      if (tree_->kind(old) == EntryKind::Dir && e.kind == EntryKind::Dir) {  // merged: only the metadata changes
        tree_->setDir(old, e.mode, layer);
        if (upper) upper->insert(path);
        continue;
      }
      removeTree(path, false);  // containerd removes what is there before it writes
    }
    Node n{e.kind, e.mode, e.size, layer, e.linkTarget, e.sha256.hex(), e.md5.hex(), e.sha1, e.content, -1, ""};
    if (e.kind == EntryKind::Hardlink) {
      auto linked = hardlinkNode(e, layer, suspicious);
      if (!linked.ok()) {
        refuse(linked.error().message);
        continue;
      }
      n = std::move(*linked);
    } else if (path != e.path && e.kind == EntryKind::File) {
      n.dataLayer = layer;  // the bytes are under the tar's name, not where a link led them
      n.dataPath = e.path;
    }
    tree_->store(tree_->makeAt(path), n);
    if (upper) upper->insert(path);
  }
  tree_->compactIfSparse();
}

std::optional<Node> LayeredView::stat(const std::string& path) const {
  if (path.empty()) return Node{};
  auto id = find(path);
  if (id == ViewTree::kNone) return std::nullopt;
  return tree_->node(id);
}

std::optional<NodeInfo> LayeredView::info(const std::string& path) const {
  if (path.empty()) return NodeInfo{};
  auto id = find(path);
  if (id == ViewTree::kNone) return std::nullopt;
  return tree_->info(id);
}

std::vector<std::string> LayeredView::list(const std::string& dir) const {
  auto id = dir.empty() ? ViewTree::kRoot : find(dir);
  if (id == ViewTree::kNone) return {};
  return tree_->names(id);
}

Result<std::string> LayeredView::readResolved(const std::string& path, uint64_t limit) const {
  auto id = find(path);
  if (id == ViewTree::kNone) return Error::NotFound("'" + util::printable(path) + "' is not in the image");
  if (tree_->kind(id) != EntryKind::File && tree_->kind(id) != EntryKind::Hardlink)
    return Error::Invalid("'" + util::printable(path) + "' is not a regular file");
  auto content = tree_->content(id);
  if (!content)
    return Error::Unsupported("content of '" + util::printable(path) + "' was not captured during the layer walk");
  if ((*content)->size() > limit) return Error::Invalid("'" + util::printable(path) + "' is too large");
  return **content;
}

std::vector<std::string> findFiles(const FsView& v, const std::function<bool(const std::string&)>& match, int maxDepth,
                                   const std::vector<std::string>& skip, const std::vector<std::string>& skipNames) {
  std::vector<std::string> out;
  std::deque<std::pair<std::string, int>> q = {{"", 0}};
  size_t visited = 0;
  auto in = [](const std::vector<std::string>& list, const std::string& s) {
    return std::find(list.begin(), list.end(), s) != list.end();
  };
  while (!q.empty() && visited < 20000) {
    auto [dir, depth] = q.front();
    q.pop_front();
    ++visited;
    for (const auto& name : v.list(dir)) {
      std::string p = joinPath(dir, name);
      auto n = v.info(p);
      if (!n) continue;
      if (n->kind == EntryKind::Dir) {
        if (depth < maxDepth && !in(skip, p) && !in(skipNames, name)) q.emplace_back(p, depth + 1);
      } else if (match(name)) {
        out.push_back(p);
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

// The algorithms a layer walk or a second read of a layer records.
bool recordedAlgorithm(const std::string& a) { return a == "sha256" || a == "md5" || a == "sha1"; }

const std::string& filledHash(const LayeredView::FileHashes& h, const std::string& a) {
  return a == "md5" ? h.md5 : a == "sha1" ? h.sha1 : h.sha256;
}

}  // namespace

Result<std::string> LayeredView::hashResolved(const std::string& path, const std::string& algorithm) const {
  auto id = find(path);
  if (id == ViewTree::kNone) return Error::NotFound("'" + util::printable(path) + "' is not in the image");
  if (!recordedAlgorithm(algorithm)) return Error::Unsupported("hash algorithm '" + algorithm + "' is not recorded");
  std::string h = tree_->hash(id, algorithm);
  if (h.empty())
    if (auto f = filled_.find(path); f != filled_.end()) h = filledHash(f->second, algorithm);
  if (h.empty())
    return Error::Unsupported("'" + util::printable(path) +
                              "' was not hashed (not a regular file, sparse or oversized)");
  return h;
}

bool LayeredView::hashKnown(const std::string& path, const std::string& algorithm) const {
  auto id = find(path);
  if (id == ViewTree::kNone || !recordedAlgorithm(algorithm)) return false;
  return tree_->hashAsBytes(id, algorithm) || !tree_->hash(id, algorithm).empty() || filled_.count(path);
}

std::optional<FileFacts> LayeredView::facts(const std::string& path, const std::string& algorithm) const {
  if (path.empty()) return FsView::facts(path, algorithm);  // the root, as info("") answers for it
  auto id = find(path);
  if (id == ViewTree::kNone) return std::nullopt;
  FileFacts f{tree_->kind(id), tree_->layer(id), false, ""};
  if (!recordedAlgorithm(algorithm)) return f;
  f.hash = tree_->hash(id, algorithm);  // held as bytes, or spelt otherwise: known either way
  f.hashKnown = !f.hash.empty();
  if (!f.hashKnown)
    if (auto filled = filled_.find(path); filled != filled_.end()) {
      f.hashKnown = true;
      f.hash = filledHash(filled->second, algorithm);
    }
  return f;
}

std::vector<std::pair<std::string, EntryKind>> LayeredView::listKinds(const std::string& dir) const {
  std::vector<std::pair<std::string, EntryKind>> out;
  auto id = dir.empty() ? ViewTree::kRoot : find(dir);
  if (id == ViewTree::kNone) return out;
  tree_->forEachChild(id, [&](ViewTree::Id c, std::string_view name) { out.emplace_back(name, tree_->kind(c)); });
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });  // as names()
  return out;
}

void LayeredView::prepareHashes(const std::vector<std::string>& paths, const std::string& algorithm) const {
  if (!filler_ || !recordedAlgorithm(algorithm)) return;
  // layer -> paths in its tar; and, per path in the tar, the view paths that share its bytes.
  std::map<int, std::set<std::string>> wanted;
  std::map<std::pair<int, std::string>, std::vector<std::string>> viewPaths;
  for (const auto& p : paths) {
    auto id = find(p);
    if (id == ViewTree::kNone || tree_->kind(id) != EntryKind::File) continue;
    if (!tree_->hash(id, algorithm).empty() || filled_.count(p) || !fillAsked_.insert(p).second) continue;
    const std::string* dataPath = tree_->dataPath(id);
    int layer = dataPath ? tree_->dataLayer(id) : tree_->layer(id);
    const std::string data = dataPath ? *dataPath : p;
    if (layer < 0) continue;
    wanted[layer].insert(data);
    viewPaths[{layer, data}].push_back(p);
  }
  for (const auto& [layer, set] : wanted) {
    auto found = filler_(layer, set);
    for (const auto& [data, hashes] : found)
      if (auto v = viewPaths.find({layer, data}); v != viewPaths.end())
        for (const auto& p : v->second) filled_[p] = hashes;
  }
}

}  // namespace kernodeck::oci
