#include "kernodeck/os/apk.h"

#include "kernodeck/util/hash.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::os {

namespace {

// apk-tools 2 keeps its database under /lib; apk-tools 3 under /usr/lib.
const char* const kInstalled[] = {"lib/apk/db/installed", "usr/lib/apk/db/installed"};

bool isHex(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789abcdefABCDEF") == std::string_view::npos;
}

}  // namespace

uint64_t apkCaptureLimit(const std::string& p) {
  for (const char* f : kInstalled)
    if (p == f) return 256u << 20;
  return 0;
}

std::pair<std::string, std::string> decodeApkChecksum(std::string_view z) {
  if (z.size() > 2 && z[0] == 'Q' && (z[1] == '1' || z[1] == '2')) {
    std::string raw;
    if (!util::base64Decode(z.substr(2), raw)) return {};
    if (z[1] == '1' && raw.size() == 20) return {"sha1", util::toHex(raw)};
    if (z[1] == '2' && raw.size() == 32) return {"sha256", util::toHex(raw)};
    return {};
  }
  if (isHex(z) && z.size() == 32) return {"md5", util::toLower(z)};
  if (isHex(z) && z.size() == 40) return {"sha1", util::toLower(z)};
  return {};
}

PackageDatabase parseApkInstalled(std::string_view text) {
  PackageDatabase db;
  db.manager = "apk";
  db.format = "installed";
  db.present = true;
  InstalledPackage cur;
  std::string dir;
  OwnedFile* last = nullptr;  // the file the next a: and Z: lines describe
  size_t firstFile = 0;
  std::vector<std::string> dirs;  // the paragraph's F: lines, owned once the package is known
  auto flush = [&] {
    if (!cur.name.empty()) {
      for (size_t i = firstFile; i < db.files.size(); ++i) {
        db.files[i].package = cur.name;
        db.owned.insert(db.files[i].path);
      }
      db.owned.insert(dirs.begin(), dirs.end());
      db.packages.push_back(std::move(cur));
    } else {
      db.files.resize(firstFile);  // files of a paragraph without a package name belong to nothing
    }
    cur = InstalledPackage{};
    dir.clear();
    dirs.clear();
    last = nullptr;
    firstFile = db.files.size();
  };
  for (std::string_view line : util::splitView(text, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) {
      flush();
      continue;
    }
    if (line.size() < 2 || line[1] != ':') continue;
    char key = line[0];
    std::string_view value = line.substr(2);
    switch (key) {
      case 'P': cur.name = value; break;
      case 'V': cur.version = value; break;
      case 'A': cur.architecture = value; break;
      case 'o': cur.origin = value; break;
      case 'c': cur.extra["commit"] = value; break;
      case 'C': {  // the package's identity: the checksum of its control segment, as APKINDEX lists it
        auto [alg, hex] = decodeApkChecksum(value);
        if (!alg.empty()) cur.extra["checksum"] = alg + ":" + hex;
        break;
      }
      case 'F':
        dir = value;
        while (!dir.empty() && dir.front() == '/') dir.erase(0, 1);
        while (!dir.empty() && dir.back() == '/') dir.pop_back();
        if (!dir.empty()) dirs.push_back(dir);
        last = nullptr;
        break;
      case 'R': {
        if (value.empty() || value.find('/') != std::string_view::npos) {
          last = nullptr;
          break;
        }
        OwnedFile f;
        f.path = dir.empty() ? std::string(value) : dir + "/" + std::string(value);
        f.kind = OwnedFile::Kind::Any;
        f.linkDigest = true;
        db.files.push_back(std::move(f));
        last = &db.files.back();
        break;
      }
      case 'a':  // uid:gid:mode (octal) of the last R:
        if (last) {
          auto parts = util::split(value, ':');
          if (parts.size() == 3) {
            uint32_t mode = 0;
            bool ok = !parts[2].empty();
            for (char c : parts[2]) {
              if (c < '0' || c > '7')
                ok = false;
              else
                mode = mode * 8 + static_cast<uint32_t>(c - '0');
            }
            if (ok && mode <= 07777) last->mode = mode;
          }
        }
        break;
      case 'Z':
        if (last) {
          auto [alg, hex] = decodeApkChecksum(value);
          last->digestAlgorithm = alg;
          last->digest = hex;
        }
        break;
      default: break;
    }
  }
  flush();
  // apk marks configuration files by the package's "etc/" convention only through
  // /etc/apk/protected_paths.d; files under etc/ are treated as configuration here.
  for (auto& f : db.files) f.config = f.path.rfind("etc/", 0) == 0;
  return db;
}

PackageDatabase readApk(const oci::FsView& v, bool verify) {
  for (const char* p : kInstalled) {
    auto t = v.readFile(p, 256u << 20);
    if (!t.ok()) {
      auto r = v.resolve(p);
      if (r.ok() && v.info(*r)) {
        PackageDatabase db;
        db.manager = "apk";
        db.present = true;
        db.location = p;
        db.error = "cannot read /" + std::string(p) + ": " + t.error().message;
        return db;
      }
      continue;
    }
    PackageDatabase db = parseApkInstalled(*t);
    db.location = p;
    if (verify) verifyOwnedFiles(v, db);
    return db;
  }
  PackageDatabase none;
  none.manager = "apk";
  return none;
}

}  // namespace kernodeck::os
