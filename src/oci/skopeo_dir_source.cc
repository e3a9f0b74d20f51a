// skopeo's dir: transport (containers/image's directory format): `manifest.json` holds the
// top manifest (or index, after `skopeo copy --all`), `<encoded>.manifest.json` each instance
// manifest, every other blob lies in a file named by its digest's encoded part, and `version`
// says "Directory Transport Version: 1.x". The manifest's digest is that of its bytes.
#include "kernodeck/oci/source.h"
#include "kernodeck/util/hash.h"
#include "kernodeck/util/json_read.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::oci {

namespace {

class SkopeoDirSource : public ImageSource {
 public:
  explicit SkopeoDirSource(std::unique_ptr<FileAccess> fa) : fa_(std::move(fa)) {}

  Result<Descriptor> resolve() override {
    if (!fa_->exists("manifest.json"))
      return Error::Invalid(fa_->where("manifest.json") + " is missing: not a skopeo dir: image");
    if (fa_->exists("version")) {
      auto v = fa_->read("version", 4096);
      if (v.ok() && v->rfind("Directory Transport Version: 1.", 0) != 0)
        return Error::Unsupported(fa_->where("version") + " names a directory format Kernodeck does not read: '" +
                                  util::printable(util::trim(*v).substr(0, 60)) + "'");
    }
    KDK_TRY_ASSIGN(std::string bytes, fa_->read("manifest.json", kMaxManifestBytes));
    KDK_TRY_ASSIGN(DocKind kind, detectKind(bytes));
    top_ = Digest{"sha256", util::sha256Hex(bytes)};
    std::string mt = kind == DocKind::Index ? media::kOciIndex : media::kOciManifest;
    // The document's own media type, when it states one (a Docker manifest or list).
    KDK_TRY_STATUS(util::checkJsonNesting(bytes, fa_->where("manifest.json")));
    if (auto j = nlohmann::json::parse(bytes, nullptr, false);
        j.is_object() && j.contains("mediaType") && j["mediaType"].is_string())
      mt = j["mediaType"].get<std::string>();
    return Descriptor{mt, top_, static_cast<int64_t>(bytes.size()), {}, {}, {}};
  }

  Result<std::unique_ptr<ByteStream>> openBlob(const Descriptor& d) override {
    std::string name = nameOf(d);
    auto s = fa_->open(name);
    if (!s.ok() && s.error().is(ErrorKind::NotFound))
      return Error::NotFound("blob " + d.digest.str() + " is missing from " + fa_->where(name));
    return s;
  }

  std::string where(const Descriptor& d) const override { return fa_->where(nameOf(d)); }

 private:
  std::string nameOf(const Descriptor& d) const {
    if (d.digest == top_) return "manifest.json";
    std::string instance = d.digest.encoded + ".manifest.json";
    if (fa_->exists(instance)) return instance;
    return d.digest.encoded;
  }

  std::unique_ptr<FileAccess> fa_;
  Digest top_;
};

}  // namespace

std::unique_ptr<ImageSource> openSkopeoDir(const std::string& dir) {
  return std::unique_ptr<ImageSource>(new SkopeoDirSource(openDirAccess(dir)));
}

}  // namespace kernodeck::oci
