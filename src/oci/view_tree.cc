// See view_tree.h.
#include "view_tree.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <stdexcept>

#include "kernodeck/util/keyed_hash.h"

namespace kernodeck::oci {

namespace {

// Lowercase hex of exactly N bytes into `out`; false (and `out` unspecified) otherwise.
template <size_t N>
bool fromLowerHex(const std::string& hex, std::array<uint8_t, N>& out) {
  if (hex.size() != 2 * N) return false;
  auto nibble = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1; };
  for (size_t i = 0; i < N; ++i) {
    int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return true;
}

template <size_t N>
std::string toLowerHex(const std::array<uint8_t, N>& b) {
  static const char digits[] = "0123456789abcdef";
  std::string out(2 * N, '0');
  for (size_t i = 0; i < N; ++i) {
    out[2 * i] = digits[b[i] >> 4];
    out[2 * i + 1] = digits[b[i] & 15];
  }
  return out;
}

uint64_t nextEpoch() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// find()'s last directory on this thread: the tree and epoch it was found in, its path and id.
struct NearDir {
  const ViewTree* tree = nullptr;
  uint64_t epoch = 0;
  std::string path;
  ViewTree::Id id = ViewTree::kNone;
  ViewTree::Id leaf = ViewTree::kNone;  // the child of `id` found last (the same file is asked again)
};
thread_local NearDir tlNear;

}  // namespace

ViewTree::ViewTree() : epoch_(nextEpoch()) {
  chunks_.push_back(std::make_unique<Packed[]>(size_t(1) << kChunkBits));
  at(kRoot) = Packed{};
  count_ = 1;
  index_.assign(1024, kNone);
}

size_t ViewTree::key(Id parent, std::string_view name) {
  return util::keyedHash(name) ^ (uint64_t(parent) * 0x9E3779B97F4A7C15ull);
}

size_t ViewTree::slot(Id parent, std::string_view name, size_t key) const {
  size_t mask = index_.size() - 1;
  for (size_t i = key & mask;; i = (i + 1) & mask) {
    Id id = index_[i];
    if (id == kNone) return i;
    const Packed& p = at(id);
    if (p.parent == parent && nameOf(p) == name) return i;
  }
}

void ViewTree::growIndex() {
  // Every node but the root is in the index once: they are placed again in the order they were
  // made, so that nodes and names are read in the order they lie in their blocks, not at random.
  index_.assign(index_.size() * 2, kNone);
  size_t mask = index_.size() - 1;
  for (Id id = 1; id < count_; ++id) {
    const Packed& p = at(id);
    size_t i = key(p.parent, nameOf(p)) & mask;
    while (index_[i] != kNone) i = (i + 1) & mask;
    index_[i] = id;
  }
}

const char* ViewTree::keepName(std::string_view name) {
  if (name.empty()) return "";         // (normalised paths have no empty component; kept safe anyway)
  if (name.size() > kNameBlock / 4) {  // a long name gets a block of its own, before the current one
    auto own = std::make_unique<char[]>(name.size());
    std::memcpy(own.get(), name.data(), name.size());
    const char* p = own.get();
    names_.insert(names_.end() - (names_.empty() ? 0 : 1), std::move(own));
    return p;
  }
  if (nameUsed_ + name.size() > kNameBlock) {
    names_.push_back(std::make_unique<char[]>(kNameBlock));
    nameUsed_ = 0;
  }
  char* p = names_.back().get() + nameUsed_;
  std::memcpy(p, name.data(), name.size());
  nameUsed_ += name.size();
  return p;
}

ViewTree::Id ViewTree::child(Id parent, std::string_view name, size_t key) const {
  Id id = index_[slot(parent, name, key)];
  return id != kNone && (at(id).flags & kHeld) ? id : kNone;
}

ViewTree::Id ViewTree::find(std::string_view path) const {
  if (path.empty()) return held(kRoot) ? kRoot : kNone;
  // A (parent, name) pair names one node until the ids change (a new epoch), and a held node's
  // parents are held (nothing is made under a node not held, and dropping a node drops what is
  // below it): a held cached directory is still at its path.
  NearDir& near = tlNear;
  Id id = kRoot;
  size_t start = 0;
  if (near.tree == this && near.epoch == epoch_ && path.size() >= near.path.size() && held(near.id) &&
      path.compare(0, near.path.size(), near.path) == 0) {
    if (path.size() == near.path.size()) return near.id;
    if (path[near.path.size()] == '/') {
      id = near.id;
      start = near.path.size() + 1;
      if (near.leaf != kNone && held(near.leaf) && nameOf(at(near.leaf)) == path.substr(start)) return near.leaf;
    }
  }
  for (Id parent = id;;) {
    size_t slash = path.find('/', start);
    std::string_view c = path.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
    id = child(id, c);
    if (id == kNone) return kNone;
    if (slash == std::string_view::npos) {
      if (start > 0) {
        if (parent != near.id || near.tree != this || near.epoch != epoch_) {
          near.tree = this;  // remember the directory this path is in
          near.epoch = epoch_;
          near.path.assign(path.substr(0, start - 1));
          near.id = parent;
        }
        near.leaf = id;  // (names hold no '/': a path with more components never matches it)
      }
      return id;
    }
    parent = id;
    start = slash + 1;
  }
}

bool ViewTree::held(Id id) const { return at(id).flags & kHeld; }

void ViewTree::setHeld(Packed& p, bool on) {
  if (bool(p.flags & kHeld) == on) return;
  p.flags = on ? p.flags | kHeld : p.flags & ~kHeld;
  on ? ++held_ : --held_;
}

void ViewTree::releaseExtra(Packed& p) {
  if (!p.extra) return;
  extras_[p.extra - 1] = Extra{};
  freeExtras_.push_back(p.extra - 1);
  p.extra = 0;
}

ViewTree::Id ViewTree::make(Id parent, std::string_view name, size_t key) {
  size_t s = slot(parent, name, key);
  Id id = index_[s];
  if (id == kNone) {
    // 32-bit ids: memory runs out long before (some 400 GB of nodes), but never hand out kNone.
    if (count_ >= kNone - 1) throw std::length_error("the image's filesystem view has more than 4 billion nodes");
    if ((count_ & ((1u << kChunkBits) - 1)) == 0)
      chunks_.push_back(std::make_unique<Packed[]>(size_t(1) << kChunkBits));
    id = count_++;
    Packed& p = at(id);
    p.name = keepName(name);
    p.nameLen = static_cast<uint32_t>(name.size());
    p.parent = parent;
    Packed& up = at(parent);
    p.next = up.firstChild;
    up.firstChild = id;
    index_[s] = id;
    if (size_t(count_) * 4 > index_.size() * 3) growIndex();
  }
  Packed& p = at(id);
  if (!(p.flags & kHeld)) {  // empty directory, as a new node is; its old children stay unheld
    releaseExtra(p);
    p.mode = 0755;
    p.size = 0;
    p.layer = -1;
    p.kind = EntryKind::Dir;
    p.flags = 0;
    setHeld(p, true);
  }
  return id;
}

ViewTree::Id ViewTree::makeAt(std::string_view path) {
  if (path.empty()) {
    setHeld(at(kRoot), true);
    return kRoot;
  }
  size_t slash = path.rfind('/');
  if (slash == std::string_view::npos) return make(kRoot, path);
  Id parent = find(path.substr(0, slash));
  if (parent == kNone) parent = makeAt(path.substr(0, slash));  // not reached: a view's parents are held
  return make(parent, path.substr(slash + 1));
}

EntryKind ViewTree::kind(Id id) const { return at(id).kind; }
int ViewTree::layer(Id id) const { return at(id).layer; }

void ViewTree::setDir(Id id, uint32_t mode, int layer) {
  at(id).mode = mode;
  at(id).layer = layer;
}

Node ViewTree::node(Id id) const {
  const Packed& s = at(id);
  Node n{s.kind, s.mode, s.size, s.layer, "", "", "", "", nullptr, -1, ""};
  if (const Extra* x = extraOf(s)) {
    n.content = x->content;
    n.linkTarget = x->linkTarget;
    n.dataPath = x->dataPath;
    n.dataLayer = x->dataLayer;
    n.sha1 = x->sha1;
    n.sha256 = x->sha256;
    n.md5 = x->md5;
  }
  if (s.flags & kSha256) n.sha256 = toLowerHex(s.sha256);
  if (s.flags & kMd5) n.md5 = toLowerHex(s.md5);
  return n;
}

NodeInfo ViewTree::info(Id id) const {
  const Packed& s = at(id);
  const Extra* x = extraOf(s);
  return NodeInfo{s.kind, s.layer, s.kind == EntryKind::Symlink && x ? x->linkTarget : std::string()};
}

void ViewTree::store(Id id, const Node& n) {
  Packed& s = at(id);
  releaseExtra(s);
  s.size = n.size;
  s.mode = n.mode;
  s.layer = n.layer;
  s.kind = n.kind;
  s.flags &= kHeld;
  Extra x{n.content, n.linkTarget, n.dataPath, n.sha1, "", "", n.dataLayer};
  if (!n.sha256.empty()) {
    if (fromLowerHex(n.sha256, s.sha256))
      s.flags |= kSha256;
    else
      x.sha256 = n.sha256;
  }
  if (!n.md5.empty()) {
    if (fromLowerHex(n.md5, s.md5))
      s.flags |= kMd5;
    else
      x.md5 = n.md5;
  }
  if (x.content || !x.linkTarget.empty() || !x.dataPath.empty() || !x.sha1.empty() || !x.sha256.empty() ||
      !x.md5.empty() || x.dataLayer != -1)
    setExtra(s, std::move(x));
}

void ViewTree::store(Id id, const LayerEntry& e, int layer) {
  Packed& s = at(id);
  releaseExtra(s);
  s.size = e.size;
  s.mode = e.mode;
  s.layer = layer;
  s.kind = e.kind;
  s.flags &= kHeld;
  if (!e.sha256.empty()) {
    std::memcpy(s.sha256.data(), e.sha256.data(), s.sha256.size());
    s.flags |= kSha256;
  }
  if (!e.md5.empty()) {
    std::memcpy(s.md5.data(), e.md5.data(), s.md5.size());
    s.flags |= kMd5;
  }
  if (e.content || !e.linkTarget.empty() || !e.sha1.empty())
    setExtra(s, Extra{e.content, e.linkTarget, "", e.sha1, "", "", -1});
}

void ViewTree::setExtra(Packed& s, Extra&& x) {
  if (freeExtras_.empty()) {
    extras_.push_back(std::move(x));
    s.extra = static_cast<uint32_t>(extras_.size());
  } else {
    s.extra = freeExtras_.back() + 1;
    freeExtras_.pop_back();
    extras_[s.extra - 1] = std::move(x);
  }
}

void ViewTree::drop(Id id, bool keepSelf) {
  std::vector<Id> todo;
  if (!keepSelf) {
    setHeld(at(id), false);
    releaseExtra(at(id));
  }
  for (Id c = at(id).firstChild; c != kNone; c = at(c).next) todo.push_back(c);
  while (!todo.empty()) {
    Packed& p = at(todo.back());
    todo.pop_back();
    if (!(p.flags & kHeld)) continue;  // what is below a node not held is not held either
    setHeld(p, false);
    releaseExtra(p);
    for (Id c = p.firstChild; c != kNone; c = at(c).next) todo.push_back(c);
  }
}

void ViewTree::compactIfSparse() {
  if (count_ - held_ <= held_ + 65536) return;
  ViewTree fresh;
  Packed& root = fresh.at(kRoot);
  root = at(kRoot);
  root.firstChild = root.next = kNone;
  root.extra = 0;
  fresh.held_ = held(kRoot) ? 1 : 0;
  auto moveExtra = [&](const Packed& from, Packed& to) {
    if (!from.extra) return;
    fresh.extras_.push_back(std::move(extras_[from.extra - 1]));
    to.extra = static_cast<uint32_t>(fresh.extras_.size());
  };
  moveExtra(at(kRoot), root);
  std::vector<std::pair<Id, Id>> todo = {{kRoot, kRoot}};  // (old, new)
  while (!todo.empty()) {
    auto [from, to] = todo.back();
    todo.pop_back();
    for (Id c = at(from).firstChild; c != kNone; c = at(c).next) {
      const Packed& old = at(c);
      if (!(old.flags & kHeld)) continue;
      Id n = fresh.make(to, nameOf(old));
      Packed& p = fresh.at(n);
      p.mode = old.mode;
      p.size = old.size;
      p.layer = old.layer;
      p.kind = old.kind;
      p.flags = old.flags;
      p.sha256 = old.sha256;
      p.md5 = old.md5;
      moveExtra(old, p);
      todo.emplace_back(c, n);
    }
  }
  *this = std::move(fresh);  // (fresh's epoch: the ids changed)
}

void ViewTree::forgetRoot() {
  setHeld(at(kRoot), false);
  releaseExtra(at(kRoot));
}

std::vector<std::string> ViewTree::names(Id dir) const {
  std::vector<std::string> out;
  for (Id c = at(dir).firstChild; c != kNone; c = at(c).next)
    if (at(c).flags & kHeld) out.emplace_back(nameOf(at(c)));
  std::sort(out.begin(), out.end());
  return out;
}

void ViewTree::forEachChild(Id dir, const std::function<void(Id, std::string_view)>& f) const {
  for (Id c = at(dir).firstChild; c != kNone; c = at(c).next)
    if (at(c).flags & kHeld) f(c, nameOf(at(c)));
}

std::string ViewTree::path(Id id) const {
  std::vector<std::string_view> parts;
  for (; id != kRoot && id != kNone; id = at(id).parent) parts.push_back(nameOf(at(id)));
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) {
    if (!out.empty()) out += '/';
    out += *it;
  }
  return out;
}

std::string ViewTree::hash(Id id, const std::string& a) const {
  const Packed& s = at(id);
  const Extra* x = extraOf(s);
  if (a == "md5") return s.flags & kMd5 ? toLowerHex(s.md5) : x ? x->md5 : "";
  if (a == "sha1") return x ? x->sha1 : "";
  return s.flags & kSha256 ? toLowerHex(s.sha256) : x ? x->sha256 : "";
}

bool ViewTree::hashAsBytes(Id id, const std::string& a) const {
  return a == "sha256" ? at(id).flags & kSha256 : a == "md5" && (at(id).flags & kMd5);
}

const std::shared_ptr<const std::string>* ViewTree::content(Id id) const {
  const Extra* x = extraOf(at(id));
  return x && x->content ? &x->content : nullptr;
}

int ViewTree::dataLayer(Id id) const {
  const Extra* x = extraOf(at(id));
  return x ? x->dataLayer : -1;
}

const std::string* ViewTree::dataPath(Id id) const {
  const Extra* x = extraOf(at(id));
  return x && !x->dataPath.empty() ? &x->dataPath : nullptr;
}

void ViewTree::forEach(const std::function<void(const std::string&, Id)>& f) const {
  if (held(kRoot)) f("", kRoot);
  std::vector<std::pair<Id, std::string>> todo = {{kRoot, ""}};
  while (!todo.empty()) {
    auto [dir, prefix] = std::move(todo.back());
    todo.pop_back();
    for (Id c = at(dir).firstChild; c != kNone; c = at(c).next) {
      if (!(at(c).flags & kHeld)) continue;
      std::string p = prefix.empty() ? std::string(nameOf(at(c))) : prefix + "/" + std::string(nameOf(at(c)));
      f(p, c);
      todo.emplace_back(c, std::move(p));
    }
  }
}

}  // namespace kernodeck::oci
