// See layer_reader.h.
#include "kernodeck/audit/layer_reader.h"

#include <algorithm>
#include <condition_variable>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <mutex>
#include <thread>

#include "kernodeck/audit/image_audit.h"
#include "kernodeck/registry/client.h"
#include "kernodeck/util/stage_profile.h"

namespace kernodeck::audit {

oci::ScanOptions layerWalkOptions(const oci::ScanOptions& so, const oci::Descriptor& d) {
  oci::ScanOptions mine = so;
  mine.digestAlgorithm = d.digest.verifiable() ? d.digest.algorithm : "sha256";
  mine.hashOnly = oci::encryptedLayer(d.mediaType);  // not a tar until decrypted
  return mine;
}

void readLayers(oci::ImageSource& source, const std::vector<oci::Descriptor>& layers, const oci::ScanOptions& so,
                unsigned workers, oci::SharedScanStore* shared,
                const std::function<void(size_t index, LayerRead& read)>& use) {
  size_t n = layers.size();
  std::vector<LayerRead> out(n);
  std::vector<bool> done(n, false);
  std::mutex mu;
  std::condition_variable cv;
  size_t next = 0, used = 0;  // the next layer to read; the layers used so far
  workers = std::max(1u, workers);
  auto read = [&](size_t i) {
    const oci::Descriptor& d = layers[i];
    oci::ScanOptions mine = layerWalkOptions(so, d);
    LayerRead r;
    std::optional<oci::LayerScan> cached;
    {
      util::StageTimer t(util::Stage::Cache);
      cached = oci::loadScan(source.scanCacheDir(), d.digest, mine);
    }
    if (cached && static_cast<int64_t>(cached->compressedSize) == d.size) {
      r.scan = std::move(*cached);
      return r;
    }
    if (shared) {
      oci::SharedScan found = shared->load(d, mine);
      if (found.scan) {
        r.scan = std::move(found.scan);
        return r;
      }
      r.sharedEntry = std::move(found.entry);
      r.sharedIgnored = std::move(found.ignored);
    }
    auto stream = source.openBlob(d);
    if (!stream.ok()) {
      r.openError = stream.error();
      return r;
    }
    r.scan = oci::scanLayer(**stream, mine);
    // Only a complete scan of bytes that matched their digest is worth keeping.
    if (!r.scan->error && r.scan->digestHex == d.digest.encoded &&
        static_cast<int64_t>(r.scan->compressedSize) == d.size) {
      util::StageTimer t(util::Stage::Cache);
      oci::storeScan(source.scanCacheDir(), d.digest, *r.scan, mine);
      if (shared) shared->store(d, mine, *r.scan);
    }
    return r;
  };
  auto work = [&] {
    for (;;) {
      size_t i;
      {
        std::unique_lock lock(mu);
        cv.wait(lock, [&] { return next >= n || next < used + workers; });
        if (next >= n) return;
        i = next++;
      }
      LayerRead r = read(i);
      std::lock_guard lock(mu);
      out[i] = std::move(r);
      done[i] = true;
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned w = 0; w < std::min<size_t>(workers, n); ++w) pool.emplace_back(work);
  for (size_t i = 0; i < n; ++i) {
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return done[i]; });
    }
    use(i, out[i]);
    {
      std::lock_guard lock(mu);
      out[i] = LayerRead{};
      ++used;
      cv.notify_all();
    }
#ifdef __GLIBC__
    // The scan was built in a worker's malloc arena, which keeps its freed pages: give them back,
    // or a big image's peak RSS holds every arena's high-water mark (issue 19).
    malloc_trim(0);
#endif
  }
  for (auto& t : pool) t.join();
}

std::map<std::string, oci::LayeredView::FileHashes> rehashLayer(oci::ImageSource& source, const oci::Descriptor& d,
                                                                const oci::ScanOptions& walk,
                                                                const std::set<std::string>& paths) {
  std::map<std::string, oci::LayeredView::FileHashes> out;
  auto stream = source.openBlob(d);
  if (!stream.ok()) return out;
  oci::ScanOptions so;
  so.digestAlgorithm = d.digest.verifiable() ? d.digest.algorithm : "sha256";
  so.hashes = [&paths](const std::string& p) {
    return paths.count(p) ? oci::kHashSha256 | oci::kHashMd5 | oci::kHashSha1 : 0u;
  };
  oci::LayerScan scan = oci::scanLayer(**stream, so);
  if (scan.error || scan.digestHex != d.digest.encoded) return out;  // not the bytes the walk read
  for (const auto& e : scan.entries)
    if (!e.sha256.empty() && paths.count(e.path)) out[e.path] = {e.sha256.hex(), e.md5.hex(), e.sha1};
  oci::ScanOptions kept = layerWalkOptions(walk, d);
  if (auto cached = oci::loadScan(source.scanCacheDir(), d.digest, kept)) {
    for (auto& e : cached->entries)
      if (auto it = out.find(e.path); it != out.end() && e.kind == oci::EntryKind::File) {
        e.sha256.assignHex(it->second.sha256);
        e.md5.assignHex(it->second.md5);
        e.sha1 = it->second.sha1;
      }
    oci::storeScan(source.scanCacheDir(), d.digest, *cached, kept);
  }
  return out;
}

// Declared in image_audit.h, beside the audit whose walk it does ahead of time.
Result<bool> prepareLayer(const registry::Reference& repo, const oci::Descriptor& layer, const AuditOptions& opts) {
  KDK_TRY_ASSIGN(std::string dir, registry::openCacheDir(opts.registry));
  oci::ScanOptions so = layerWalkOptions(layerScanOptions(opts), layer);
  if (auto cached = oci::loadScan(dir, layer.digest, so);
      cached && static_cast<int64_t>(cached->compressedSize) == layer.size) {
    if (opts.sharedScans && !opts.sharedScans->has(layer, so)) {
      opts.sharedScans->store(layer, so, *cached);
      if (!opts.sharedScans->has(layer, so))
        return Error::Io("layer " + layer.digest.str() + ": its result could not be shared");
    }
    return true;
  }
  if (opts.sharedScans && opts.sharedScans->has(layer, so)) return true;
  registry::Client client(repo, opts.registry);
  KDK_TRY_ASSIGN(auto stream, client.blob(layer));
  oci::LayerScan scan = oci::scanLayer(*stream, so);
  std::string what = repo.registry + "/" + repo.repository + "@" + layer.digest.str();
  if (scan.error) return scan.error->context("layer " + what);
  if (scan.digestHex != layer.digest.encoded || static_cast<int64_t>(scan.compressedSize) != layer.size)
    return Error::Corrupt("layer " + what + ": the bytes do not match the descriptor");
  oci::storeScan(dir, layer.digest, scan, so);
  if (opts.sharedScans) {
    opts.sharedScans->store(layer, so, scan);
    // Others wait for this result: not being able to share it is a failure here, to be retried.
    if (!opts.sharedScans->has(layer, so)) return Error::Io("layer " + what + ": its result could not be shared");
  }
  return false;
}

}  // namespace kernodeck::audit
