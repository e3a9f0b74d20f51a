// kdk-mkimage SPEC.json OUTDIR: writes a deterministic OCI image layout from a
// JSON description (layers of entries, config, tag). Used by the tests and the
// demo to build real images byte for byte the same on every machine, including
// hostile tar entries that ordinary tools refuse to write.
//
// Spec: {"tag": "1.0", "architecture": "amd64", "os": "linux", "config": {...},
//        "layers": [{"compression": "gzip|zstd|none", "entries": [
//           {"path": "etc/x", "type": "file|dir|symlink|hardlink|char|fifo",
//            "content": "...", "size": N, "content_file": "/path", "target": "...", "mode": 420}]}],
//        "platforms": [ {<spec>, "variant": "v8"}, ... ]   (optional: builds an index)}
#include <archive.h>
#include <archive_entry.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "kernodeck/util/hash.h"

using kernodeck::util::sha256Hex;
using nlohmann::json;

namespace {

std::string outDir;

std::string writeBlob(const std::string& bytes) {
  std::string hex = sha256Hex(bytes);
  std::ofstream(outDir + "/blobs/sha256/" + hex, std::ios::binary) << bytes;
  return hex;
}

la_ssize_t appendCb(struct archive*, void* ud, const void* buf, size_t n) {
  static_cast<std::string*>(ud)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

// Builds the uncompressed tar and the compressed blob of one layer.
void buildLayer(const json& layer, std::string& tar, std::string& blob) {
  std::string comp = layer.value("compression", "gzip");
  for (int pass = 0; pass < 2; ++pass) {
    std::string& out = pass == 0 ? tar : blob;
    struct archive* a = archive_write_new();
    archive_write_set_format_pax_restricted(a);
    if (pass == 1 && comp == "gzip") {
      archive_write_add_filter_gzip(a);
      archive_write_set_filter_option(a, "gzip", "timestamp", nullptr);
    } else if (pass == 1 && comp == "zstd") {
      archive_write_add_filter_zstd(a);
    }
    archive_write_set_bytes_in_last_block(a, 1);
    archive_write_open(a, &out, nullptr, appendCb, nullptr);
    for (const auto& e : layer.value("entries", json::array())) {
      struct archive_entry* ae = archive_entry_new();
      archive_entry_set_pathname(ae, e["path"].get<std::string>().c_str());
      archive_entry_set_mtime(ae, 0, 0);
      std::string type = e.value("type", "file");
      std::string content = e.value("content", "");
      if (e.contains("size")) content.assign(e["size"].get<size_t>(), e.value("fill", "x")[0]);
      if (e.contains("content_file")) {  // bytes JSON cannot hold (not UTF-8), from a file
        std::ifstream f(e["content_file"].get<std::string>(), std::ios::binary);
        content.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      }
      int mode = e.value("mode", type == "dir" ? 0755 : 0644);
      archive_entry_set_perm(ae, mode);
      if (type == "dir")
        archive_entry_set_filetype(ae, AE_IFDIR);
      else if (type == "symlink") {
        archive_entry_set_filetype(ae, AE_IFLNK);
        archive_entry_set_symlink(ae, e["target"].get<std::string>().c_str());
      } else if (type == "hardlink") {
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_hardlink(ae, e["target"].get<std::string>().c_str());
      } else if (type == "char") {
        archive_entry_set_filetype(ae, AE_IFCHR);
        archive_entry_set_rdevmajor(ae, e.value("major", 1));
        archive_entry_set_rdevminor(ae, e.value("minor", 3));
      } else if (type == "fifo")
        archive_entry_set_filetype(ae, AE_IFIFO);
      else {
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_size(ae, static_cast<la_int64_t>(content.size()));
      }
      archive_write_header(a, ae);
      if (type == "file" && !content.empty()) archive_write_data(a, content.data(), content.size());
      archive_entry_free(ae);
    }
    archive_write_close(a);
    archive_write_free(a);
  }
  if (comp == "none") blob = tar;
}

json buildImage(const json& spec) {
  json diffIds = json::array(), layers = json::array();
  for (const auto& l : spec.value("layers", json::array())) {
    std::string tar, blob;
    buildLayer(l, tar, blob);
    std::string comp = l.value("compression", "gzip");
    std::string mt = "application/vnd.oci.image.layer.v1.tar";
    if (comp == "gzip") mt += "+gzip";
    if (comp == "zstd") mt += "+zstd";
    diffIds.push_back("sha256:" + sha256Hex(tar));
    layers.push_back(
        {{"mediaType", l.value("mediaType", mt)}, {"digest", "sha256:" + writeBlob(blob)}, {"size", blob.size()}});
  }
  json config = {{"architecture", spec.value("architecture", "amd64")},
                 {"os", spec.value("os", "linux")},
                 {"created", "2026-01-01T00:00:00Z"},
                 {"config", spec.value("config", json::object())},
                 {"rootfs", {{"type", "layers"}, {"diff_ids", diffIds}}},
                 {"history", json::array({{{"created", "2026-01-01T00:00:00Z"}, {"created_by", "kdk-mkimage"}}})}};
  if (spec.contains("variant")) config["variant"] = spec["variant"];
  std::string cbytes = config.dump();
  json manifest = {{"schemaVersion", 2},
                   {"mediaType", "application/vnd.oci.image.manifest.v1+json"},
                   {"config",
                    {{"mediaType", "application/vnd.oci.image.config.v1+json"},
                     {"digest", "sha256:" + writeBlob(cbytes)},
                     {"size", cbytes.size()}}},
                   {"layers", layers}};
  std::string mbytes = manifest.dump();
  json desc = {{"mediaType", "application/vnd.oci.image.manifest.v1+json"},
               {"digest", "sha256:" + writeBlob(mbytes)},
               {"size", mbytes.size()}};
  json platform = {{"os", spec.value("os", "linux")}, {"architecture", spec.value("architecture", "amd64")}};
  if (spec.contains("variant")) platform["variant"] = spec["variant"];
  desc["platform"] = platform;
  return desc;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: kdk-mkimage SPEC.json OUTDIR\n";
    return 2;
  }
  std::ifstream in(argv[1]);
  json spec = json::parse(in, nullptr, false);
  if (spec.is_discarded()) {
    std::cerr << "kdk-mkimage: " << argv[1] << " is not valid JSON\n";
    return 2;
  }
  outDir = argv[2];
  ::mkdir(outDir.c_str(), 0755);
  ::mkdir((outDir + "/blobs").c_str(), 0755);
  ::mkdir((outDir + "/blobs/sha256").c_str(), 0755);
  json top;
  if (spec.contains("platforms")) {
    json manifests = json::array();
    for (const auto& p : spec["platforms"]) manifests.push_back(buildImage(p));
    json index = {
        {"schemaVersion", 2}, {"mediaType", "application/vnd.oci.image.index.v1+json"}, {"manifests", manifests}};
    std::string ib = index.dump();
    top = {{"mediaType", "application/vnd.oci.image.index.v1+json"},
           {"digest", "sha256:" + writeBlob(ib)},
           {"size", ib.size()}};
  } else {
    top = buildImage(spec);
    top.erase("platform");
  }
  if (spec.contains("tag")) top["annotations"] = {{"org.opencontainers.image.ref.name", spec["tag"]}};
  json index = {{"schemaVersion", 2},
                {"mediaType", "application/vnd.oci.image.index.v1+json"},
                {"manifests", json::array({top})}};
  std::ofstream(outDir + "/index.json") << index.dump();
  std::ofstream(outDir + "/oci-layout") << R"({"imageLayoutVersion":"1.0.0"})";
  std::cout << top["digest"].get<std::string>() << "\n";
  return 0;
}
