#include "kernodeck/oci/fs_view.h"

#include <cstdint>
#include <algorithm>
#include <deque>

#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

namespace {

std::string joinPath(const std::string& a, const std::string& b) { return a.empty() ? b : a + "/" + b; }

}  // namespace

std::optional<NodeInfo> FsView::info(const std::string& path) const {
  auto n = stat(path);
  if (!n) return std::nullopt;
  return NodeInfo{n->kind, n->layer, n->kind == EntryKind::Symlink ? n->linkTarget : std::string()};
}

namespace {

// "a/b/c": no empty, "." or ".." component and no leading or trailing '/'.
bool isNormalized(const std::string& p) {
  if (p.empty() || p.front() == '/' || p.back() == '/') return false;
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find('/', start);
    if (end == std::string::npos) end = p.size();
    std::string_view c(p.data() + start, end - start);
    if (c.empty() || c == "." || c == "..") return false;
    start = end + 1;
  }
  return true;
}

}  // namespace

Result<std::string> FsView::resolve(const std::string& path, bool followLast) const {
  // Both views only hold a node whose parents are real directories (a layer cannot write
  // through a link, and replacing a directory drops what was below it; the directory view
  // opens each parent with O_NOFOLLOW), so a normalised path that exists and is not a link
  // to follow resolves to itself: one lookup instead of one per component.
  if (isNormalized(path))
    if (auto n = info(path); n && (n->kind != EntryKind::Symlink || !followLast)) return path;
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
      if (todo.empty()) return p;  // a missing final component resolves to itself
      return Error::NotFound("'" + util::printable(path) + "' does not exist in the image ('" +
                             util::printable(p) + "' is missing)");
    }
    if (n->kind == EntryKind::Symlink && (followLast || !todo.empty())) {
      if (++links > 40) return Error::Invalid("too many levels of symbolic links resolving '" + util::printable(path) + "'");
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
    nodes_.clear();
    return;
  }
  if (!keepSelf) nodes_.erase(path);
  std::string prefix = path + "/";
  auto it = nodes_.lower_bound(prefix);
  while (it != nodes_.end() && it->first.compare(0, prefix.size(), prefix) == 0) it = nodes_.erase(it);
}

bool LayeredView::prepareParents(const std::string& path, int layer, std::string& reason) {
  // The common case, an existing parent directory: its own parents are directories too.
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return true;
  if (auto it = nodes_.find(path.substr(0, slash)); it != nodes_.end() && it->second.kind == EntryKind::Dir) return true;
  std::string p;
  auto parts = util::split(path, '/');
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    p = joinPath(p, parts[i]);
    auto it = nodes_.find(p);
    if (it == nodes_.end()) {
      nodes_[p] = Node{EntryKind::Dir, 0755, 0, layer, "", "", "", nullptr, -1, ""};
    } else if (it->second.kind == EntryKind::Symlink) {
      reason = "written through symlink '" + util::printable(p) + "'";
      return false;
    } else if (it->second.kind != EntryKind::Dir) {
      removeTree(p, false);
      nodes_[p] = Node{EntryKind::Dir, 0755, 0, layer, "", "", "", nullptr, -1, ""};
    }
  }
  return true;
}

void LayeredView::apply(const LayerScan& scan, int layer, std::vector<UnsafeEntry>& unsafe) {
  // Whiteouts hide content of lower layers only, whatever their position in the tar.
  for (const auto& e : scan.entries) {
    if (e.kind != EntryKind::Whiteout && e.kind != EntryKind::Opaque) continue;
    bool throughLink = false;
    std::string p;
    auto parts = util::split(e.path, '/');
    size_t parents = e.kind == EntryKind::Whiteout ? parts.size() - 1 : parts.size();
    for (size_t i = 0; i < parents && !e.path.empty(); ++i) {
      p = joinPath(p, parts[i]);
      auto it = nodes_.find(p);
      if (it != nodes_.end() && it->second.kind == EntryKind::Symlink) throughLink = true;
    }
    if (throughLink) {
      unsafe.push_back({e.path, "whiteout reaches through symlink '" + util::printable(p) + "'"});
      continue;
    }
    removeTree(e.path, e.kind == EntryKind::Opaque);
  }
  for (const auto& e : scan.entries) {
    if (e.kind == EntryKind::Whiteout || e.kind == EntryKind::Opaque) continue;
    std::string reason;
    if (!prepareParents(e.path, layer, reason)) {
      unsafe.push_back({e.path, reason});
      continue;
    }
    Node n{e.kind, e.mode, e.size, layer, e.linkTarget, e.sha256, e.md5, e.content, -1, ""};
    if (e.kind == EntryKind::Hardlink) {
      auto t = nodes_.find(e.linkTarget);
      std::string why;
      if (t == nodes_.end()) why = "hardlink to '" + util::printable(e.linkTarget) + "', which is not in the image";
      else if (t->second.kind == EntryKind::Dir) why = "hardlink to a directory";
      else {
        std::string parentReason;
        std::string tp;
        auto parts = util::split(e.linkTarget, '/');
        for (size_t i = 0; i + 1 < parts.size(); ++i) {
          tp = joinPath(tp, parts[i]);
          auto pt = nodes_.find(tp);
          if (pt != nodes_.end() && pt->second.kind == EntryKind::Symlink)
            why = "hardlink target reached through symlink '" + util::printable(tp) + "'";
        }
      }
      if (!why.empty()) {
        unsafe.push_back({e.path, why});
        continue;
      }
      n = t->second;
      if (n.dataPath.empty()) {
        n.dataLayer = t->second.layer;
        n.dataPath = e.linkTarget;
      }
      n.layer = layer;
    }
    auto old = nodes_.find(e.path);
    if (old != nodes_.end()) {
      if (old->second.kind == EntryKind::Dir && e.kind == EntryKind::Dir) {
        old->second.mode = e.mode;
        old->second.layer = layer;
        continue;
      }
      if (old->second.kind == EntryKind::Dir) removeTree(e.path, false);
    }
    nodes_[e.path] = std::move(n);
  }
}

std::optional<Node> LayeredView::stat(const std::string& path) const {
  if (path.empty()) return Node{};
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return std::nullopt;
  return it->second;
}

std::optional<NodeInfo> LayeredView::info(const std::string& path) const {
  if (path.empty()) return NodeInfo{};
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return std::nullopt;
  const Node& n = it->second;
  return NodeInfo{n.kind, n.layer, n.kind == EntryKind::Symlink ? n.linkTarget : std::string()};
}

std::vector<std::string> LayeredView::list(const std::string& dir) const {
  std::vector<std::string> out;
  std::string prefix = dir.empty() ? "" : dir + "/";
  for (auto it = nodes_.lower_bound(prefix); it != nodes_.end();) {
    if (it->first.compare(0, prefix.size(), prefix) != 0) break;
    std::string_view rest = std::string_view(it->first).substr(prefix.size());
    size_t slash = rest.find('/');
    if (slash == std::string_view::npos) {
      if (!rest.empty()) out.emplace_back(rest);
      ++it;
      continue;
    }
    // A child's descendants: skip them all ('0' sorts right after '/').
    it = nodes_.lower_bound(prefix + std::string(rest.substr(0, slash)) + "0");
  }
  return out;
}

Result<std::string> LayeredView::readResolved(const std::string& path, uint64_t limit) const {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return Error::NotFound("'" + util::printable(path) + "' is not in the image");
  if (it->second.kind != EntryKind::File && it->second.kind != EntryKind::Hardlink)
    return Error::Invalid("'" + util::printable(path) + "' is not a regular file");
  if (!it->second.content)
    return Error::Unsupported("content of '" + util::printable(path) + "' was not captured during the layer walk");
  if (it->second.content->size() > limit) return Error::Invalid("'" + util::printable(path) + "' is too large");
  return *it->second.content;
}

std::vector<std::string> findFiles(const FsView& v, const std::function<bool(const std::string&)>& match, int maxDepth,
                                   const std::vector<std::string>& skip, const std::vector<std::string>& skipNames) {
  std::vector<std::string> out;
  std::deque<std::pair<std::string, int>> q = {{"", 0}};
  size_t visited = 0;
  auto in = [](const std::vector<std::string>& list, const std::string& s) { return std::find(list.begin(), list.end(), s) != list.end(); };
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

Result<std::string> LayeredView::hashResolved(const std::string& path, const std::string& algorithm) const {
  auto it = nodes_.find(path);
  if (it == nodes_.end()) return Error::NotFound("'" + util::printable(path) + "' is not in the image");
  if (algorithm != "md5" && algorithm != "sha256") return Error::Unsupported("hash algorithm '" + algorithm + "' is not recorded");
  const std::string* hp = algorithm == "md5" ? &it->second.md5 : &it->second.sha256;
  if (hp->empty())
    if (auto f = filled_.find(path); f != filled_.end()) hp = algorithm == "md5" ? &f->second.second : &f->second.first;
  const std::string& h = *hp;
  if (h.empty()) return Error::Unsupported("'" + util::printable(path) + "' was not hashed (not a regular file, sparse or oversized)");
  return h;
}

void LayeredView::prepareHashes(const std::vector<std::string>& paths, const std::string& algorithm) const {
  if (!filler_ || (algorithm != "md5" && algorithm != "sha256")) return;
  // layer -> paths in its tar; and, per path in the tar, the view paths that share its bytes.
  std::map<int, std::set<std::string>> wanted;
  std::map<std::pair<int, std::string>, std::vector<std::string>> viewPaths;
  for (const auto& p : paths) {
    auto it = nodes_.find(p);
    if (it == nodes_.end() || it->second.kind != EntryKind::File) continue;
    const Node& n = it->second;
    if (!(algorithm == "md5" ? n.md5 : n.sha256).empty() || filled_.count(p) || !fillAsked_.insert(p).second) continue;
    int layer = n.dataPath.empty() ? n.layer : n.dataLayer;
    const std::string& data = n.dataPath.empty() ? p : n.dataPath;
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
