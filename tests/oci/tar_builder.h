// Test helper: builds tar layers in memory with libarchive, hostile entries included.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/oci/layer_scan.h"
#include "kernodeck/oci/source.h"

namespace kdktest {

struct TarEntry {
  std::string path;
  char type = 'f';  // f file, d dir, l symlink, h hardlink
  std::string content;
  std::string target;
};

// A lone ustar header for a regular file claiming `claim` bytes (base-256 size
// field), with no data after it: what a hostile or truncated layer looks like.
inline std::string makeClaimTar(const std::string& name, uint64_t claim) {
  std::string h(512, '\0');
  h.replace(0, name.size(), name);
  h.replace(100, 7, "0000644");
  h.replace(108, 7, "0000000");
  h.replace(116, 7, "0000000");
  h[124] = static_cast<char>(0x80);
  for (int i = 0; i < 8; ++i) h[135 - i] = static_cast<char>((claim >> (8 * i)) & 0xff);
  h.replace(136, 11, "00000000000");
  h[156] = '0';
  h.replace(257, 6, std::string("ustar\0", 6));
  h.replace(263, 2, "00");
  h.replace(148, 8, "        ");
  unsigned sum = 0;
  for (unsigned char c : h) sum += c;
  char buf[8];
  std::snprintf(buf, sizeof buf, "%06o", sum);
  h.replace(148, 6, buf);
  h[154] = '\0';
  h[155] = ' ';
  return h;
}

inline la_ssize_t appendTo(struct archive*, void* ud, const void* buf, size_t n) {
  static_cast<std::string*>(ud)->append(static_cast<const char*>(buf), n);
  return static_cast<la_ssize_t>(n);
}

inline std::string makeTar(const std::vector<TarEntry>& entries, bool gzip = false) {
  std::string out;
  struct archive* a = archive_write_new();
  archive_write_set_format_pax_restricted(a);
  if (gzip) archive_write_add_filter_gzip(a);
  archive_write_set_bytes_in_last_block(a, 1);
  archive_write_open(a, &out, nullptr, appendTo, nullptr);
  for (const auto& e : entries) {
    struct archive_entry* ae = archive_entry_new();
    archive_entry_set_pathname(ae, e.path.c_str());
    archive_entry_set_perm(ae, e.type == 'd' ? 0755 : 0644);
    switch (e.type) {
      case 'd': archive_entry_set_filetype(ae, AE_IFDIR); break;
      case 'l':
        archive_entry_set_filetype(ae, AE_IFLNK);
        archive_entry_set_symlink(ae, e.target.c_str());
        break;
      case 'h':
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_hardlink(ae, e.target.c_str());
        break;
      default:
        archive_entry_set_filetype(ae, AE_IFREG);
        archive_entry_set_size(ae, static_cast<la_int64_t>(e.content.size()));
    }
    archive_write_header(ae ? a : a, ae);
    if (e.type == 'f' && !e.content.empty()) archive_write_data(a, e.content.data(), e.content.size());
    archive_entry_free(ae);
  }
  archive_write_close(a);
  archive_write_free(a);
  return out;
}

using StringStream = kernodeck::oci::MemoryStream;

// A one-layer view of `entries`, every file's content captured (up to 1 MiB).
inline kernodeck::oci::LayeredView viewOf(const std::vector<TarEntry>& entries) {
  kernodeck::oci::LayeredView v;
  kernodeck::oci::ScanOptions o;
  o.capture = [](const std::string&) -> uint64_t { return 1 << 20; };
  StringStream in(makeTar(entries));
  std::vector<kernodeck::oci::UnsafeEntry> unsafe;
  v.apply(kernodeck::oci::scanLayer(in, o).entries, 0, unsafe);
  return v;
}

// What a view's hash filler returns for `paths` of a layer made of `entries` (the layer's tar
// read again with every digest asked for those paths, as audit::rehashLayer reads a blob).
inline std::map<std::string, kernodeck::oci::LayeredView::FileHashes> rehashTar(const std::vector<TarEntry>& entries,
                                                                                const std::set<std::string>& paths) {
  using namespace kernodeck::oci;
  StringStream in(makeTar(entries));
  ScanOptions o;
  o.hashes = [&](const std::string& p) { return paths.count(p) ? kHashSha256 | kHashMd5 | kHashSha1 : 0u; };
  std::map<std::string, LayeredView::FileHashes> out;
  for (const auto& e : scanLayer(in, o).entries)
    if (paths.count(e.path)) out[e.path] = {e.sha256.hex(), e.md5.hex(), e.sha1};
  return out;
}

}  // namespace kdktest
