// A dossier's code.tar: written with git archive, unpacked with libarchive's secure flags
// plus our own checks on member names and link targets.
#include "code_archive.h"

#include <sys/stat.h>

#include <filesystem>
#include <memory>

#include "dossier_layout.h"
#include "git.h"
#include "kernodeck/oci/archive_lib.h"
#include "kernodeck/util/safe_file.h"
#include "kernodeck/util/strings.h"

namespace kernodeck::record {

Status archiveRevision(const std::string& repo, const std::string& revision, const std::string& outPath) {
  if (!isCommitId(revision))
    return Error::Invalid("the recorded revision '" + util::printable(revision, 80) + "' is not a full commit id");
  // git runs in the repository: a relative -o would land there, not where the caller meant.
  std::error_code ec;
  std::string out = std::filesystem::absolute(outPath, ec).lexically_normal().string();
  if (ec) return Error::Io("cannot resolve " + outPath + ": " + ec.message());
  auto r = git(repo, {"archive", "--format=tar", "-o", out, revision});
  if (!r.ok()) return r.error();
  return {};
}

Status unpackCode(const std::string& tarPath, const std::string& dest) {
  if (!util::makeDirs(dest)) return Error::Io("cannot create " + dest);
  std::unique_ptr<archive, int (*)(archive*)> in(archive_read_new(), archive_read_free);
  std::unique_ptr<archive, int (*)(archive*)> out(archive_write_disk_new(), archive_write_free);
  archive_read_support_format_tar(in.get());
  archive_write_disk_set_options(out.get(), ARCHIVE_EXTRACT_SECURE_SYMLINKS | ARCHIVE_EXTRACT_SECURE_NODOTDOT |
                                                ARCHIVE_EXTRACT_PERM | ARCHIVE_EXTRACT_TIME | ARCHIVE_EXTRACT_UNLINK);
  if (archive_read_open_filename(in.get(), tarPath.c_str(), 1 << 16) != ARCHIVE_OK)
    return Error::Io("cannot read " + tarPath + ": " +
                     util::printable(archive_error_string(in.get()) ? archive_error_string(in.get()) : "", 200));
  archive_entry* e = nullptr;
  for (;;) {
    int rc = archive_read_next_header(in.get(), &e);
    if (rc == ARCHIVE_EOF) break;
    if (rc != ARCHIVE_OK)
      return Error::Corrupt(
          tarPath + ": " +
          util::printable(archive_error_string(in.get()) ? archive_error_string(in.get()) : "unreadable", 200));
    const char* raw = archive_entry_pathname(e);
    std::string name = raw ? raw : "";
    while (name.starts_with("./")) name.erase(0, 2);
    while (name.ends_with("/")) name.pop_back();  // a directory member
    if (name.empty() || name == ".") continue;    // the archive's root
    auto type = archive_entry_filetype(e);
    if (!confinedPath(name))
      return Error::Unsafe(tarPath + ": member '" + util::printable(name, 200) + "' is not a plain relative path");
    if (archive_entry_hardlink(e))
      return Error::Unsafe(tarPath + ": member '" + util::printable(name, 200) + "' is a hard link");
    if (type == AE_IFLNK) {
      std::string target = archive_entry_symlink(e) ? archive_entry_symlink(e) : "";
      std::string t = target;
      while (t.starts_with("./")) t.erase(0, 2);
      if (!confinedPath(t))
        return Error::Unsafe(tarPath + ": symlink '" + util::printable(name, 200) + "' points outside the code ('" +
                             util::printable(target, 200) + "')");
    } else if (type != AE_IFREG && type != AE_IFDIR) {
      return Error::Unsafe(tarPath + ": member '" + util::printable(name, 200) +
                           "' is not a file, a directory or a symlink");
    }
    std::string path = dest + "/" + name;
    archive_entry_set_pathname(e, path.c_str());
    archive_entry_set_perm(e, archive_entry_perm(e) & 0755);
    if (archive_write_header(out.get(), e) != ARCHIVE_OK)
      return Error::Unsafe(
          tarPath + ": cannot write member '" + util::printable(name, 200) +
          "': " + util::printable(archive_error_string(out.get()) ? archive_error_string(out.get()) : "", 200));
    if (type == AE_IFREG) {
      const void* buf;
      size_t size;
      la_int64_t offset;
      while ((rc = archive_read_data_block(in.get(), &buf, &size, &offset)) == ARCHIVE_OK)
        if (archive_write_data_block(out.get(), buf, size, offset) != ARCHIVE_OK)
          return Error::Io(
              "cannot write " + path + ": " +
              util::printable(archive_error_string(out.get()) ? archive_error_string(out.get()) : "", 200));
      if (rc != ARCHIVE_EOF)
        return Error::Corrupt(tarPath + ": member '" + util::printable(name, 200) + "' is truncated");
    }
    if (archive_write_finish_entry(out.get()) != ARCHIVE_OK) return Error::Io("cannot finish " + path);
  }
  if (archive_write_close(out.get()) != ARCHIVE_OK) return Error::Io("cannot finish unpacking into " + dest);
  return {};
}

}  // namespace kernodeck::record
