// See client.h. The image source for registry references: manifests through the client (kept
// by digest for the walk), blobs through Client::blob.
#include <map>

#include "client_impl.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::registry {

namespace {

class RegistrySource : public oci::ImageSource {
 public:
  RegistrySource(const Reference& ref, const ClientOptions& o) : client_(ref, o), cacheDir_(openCacheDir(o)) {}

  Result<oci::Descriptor> resolve() override {
    if (!cacheDir_.ok()) return cacheDir_.error();  // refused before anything is read from it
    const Reference& ref = client_.reference();
    std::string what = ref.digest ? ref.digest->str() : ref.tag;
    auto found = client_.manifest(what);
    if (!found.ok() && found.error().is(ErrorKind::NotFound) && !ref.digest) return withTags(found.error());
    KDK_TRY_ASSIGN(Manifest m, std::move(found));
    manifests_[m.digest.str()] = m.bytes;
    oci::Descriptor d;
    d.mediaType = m.mediaType.empty() ? oci::media::kOciManifest : m.mediaType;
    d.digest = m.digest;
    d.size = static_cast<int64_t>(m.bytes.size());
    return d;
  }

  // A tag that is not there: the error with up to ten of the tags the repository has, so that a
  // misspelt tag is corrected from the message (issue 51 §3).
  Error withTags(const Error& e) {
    auto tags = client_.tags();
    if (!tags.ok()) return e;
    if (tags->empty()) return Error(e.kind, e.message + " (the repository has no tags)");
    std::vector<std::string> shown;  // the registry's words: printable, each cut short
    for (size_t i = 0; i < tags->size() && i < 10; ++i) shown.push_back(util::printable((*tags)[i], 64));
    std::string more = tags->size() > 10 ? ", and " + std::to_string(tags->size() - 10) + " more" : "";
    return Error(e.kind, e.message + " (the repository's tags: " + util::join(shown, ", ") + more + ")");
  }

  Result<std::unique_ptr<oci::ByteStream>> openBlob(const oci::Descriptor& d) override {
    if (isManifestType(d.mediaType)) {
      auto it = manifests_.find(d.digest.str());
      if (it == manifests_.end()) {
        KDK_TRY_ASSIGN(Manifest m, client_.manifest(d.digest.str()));
        it = manifests_.emplace(d.digest.str(), m.bytes).first;
      }
      return std::unique_ptr<oci::ByteStream>(new oci::MemoryStream(it->second));
    }
    return client_.blob(d);
  }

  std::string where(const oci::Descriptor& d) const override {
    const Reference& r = client_.reference();
    return r.registry + "/" + r.repository + "@" + d.digest.str();
  }
  std::string tag() const override {
    return client_.reference().tagGiven || !client_.reference().digest ? client_.reference().tag : "";
  }
  std::string scanCacheDir() const override { return cacheDir_.ok() ? *cacheDir_ : std::string(); }

 private:
  Client client_;
  Result<std::string> cacheDir_;  // checked once more by each blob read
  std::map<std::string, std::string> manifests_;
};

}  // namespace

Result<std::unique_ptr<oci::ImageSource>> openRegistrySource(const Reference& ref, const ClientOptions& opts) {
  return std::unique_ptr<oci::ImageSource>(new RegistrySource(ref, opts));
}

}  // namespace kernodeck::registry
