// libarchive, opened with dlopen at its first use instead of linked: a command that reads no
// layer or archive (a replayed audit: resolve the tag, read one stored result) then never loads
// libarchive and its closure (libxml2, ICU, acl, lz4, ...: 2.4 M instructions of the dynamic
// loader's work, docs/performance.md).
//
// Include this header instead of <archive.h> and <archive_entry.h>: it includes them for the
// types and constants, then maps each archive_* function this project calls to the member of a
// table filled once with dlsym, so the calls keep their libarchive names and types (each member
// is declared with decltype of libarchive's own prototype). A function used without being
// listed here is a link error (kernodeck links no libarchive), not a silent fallback. When
// libarchive cannot be loaded, the first use prints one line naming it and exits with 3 (could
// not complete): a missing libarchive13 is a broken installation, as a missing libcurl is.
#pragma once

#include <archive.h>
#include <archive_entry.h>

// Every libarchive function called in src/ (X-macro: X(name)).
#define KDK_ARCHIVE_FUNCTIONS(X)                                                                                    \
  X(archive_entry_filetype)                                                                                         \
  X(archive_entry_gid)                                                                                              \
  X(archive_entry_hardlink)                                                                                         \
  X(archive_entry_pathname) X(archive_entry_pathname_utf8) X(archive_entry_perm) X(archive_entry_set_pathname)      \
      X(archive_entry_set_perm) X(archive_entry_size) X(archive_entry_size_is_set) X(archive_entry_sparse_count)    \
          X(archive_entry_symlink) X(archive_entry_uid) X(archive_error_string) X(archive_filter_code)              \
              X(archive_read_data) X(archive_read_data_block) X(archive_read_data_skip) X(archive_read_free)        \
                  X(archive_read_new) X(archive_read_next_header) X(archive_read_open) X(archive_read_open1)        \
                      X(archive_read_open_filename) X(archive_read_open_memory) X(archive_read_support_filter_all)  \
                          X(archive_read_support_filter_gzip) X(archive_read_support_filter_zstd)                   \
                              X(archive_read_support_format_gnutar) X(archive_read_support_format_raw)              \
                                  X(archive_read_set_callback_data) X(archive_read_set_read_callback)               \
                                      X(archive_read_set_seek_callback) X(archive_read_set_skip_callback)           \
                                          X(archive_read_support_format_tar) X(archive_read_support_format_zip)     \
                                              X(archive_read_support_format_zip_seekable) X(archive_set_error)      \
                                                  X(archive_version_details) X(archive_write_close)                 \
                                                      X(archive_write_data_block) X(archive_write_disk_new)         \
                                                          X(archive_write_disk_set_options)                         \
                                                              X(archive_write_finish_entry) X(archive_write_header) \
                                                                  X(archive_write_free)

namespace kernodeck::oci::archive_lib {

// The table of libarchive's functions, one member per name above.
struct Api {
#define KDK_ARCHIVE_MEMBER(name) decltype(&::name) name = nullptr;
  KDK_ARCHIVE_FUNCTIONS(KDK_ARCHIVE_MEMBER)
#undef KDK_ARCHIVE_MEMBER
};

// The table, libarchive opened and every function resolved on the first call (thread-safe);
// exits with 3 and one line on stderr when that fails.
const Api& api();

}  // namespace kernodeck::oci::archive_lib

// Each call site's archive_foo(...) becomes (api().archive_foo)(...); archive_lib.cc, which fills
// the table with the real names, defines KDK_ARCHIVE_LIB_IMPL.
#ifndef KDK_ARCHIVE_LIB_IMPL
#define archive_entry_filetype (::kernodeck::oci::archive_lib::api().archive_entry_filetype)
#define archive_entry_gid (::kernodeck::oci::archive_lib::api().archive_entry_gid)
#define archive_entry_hardlink (::kernodeck::oci::archive_lib::api().archive_entry_hardlink)
#define archive_entry_pathname (::kernodeck::oci::archive_lib::api().archive_entry_pathname)
#define archive_entry_pathname_utf8 (::kernodeck::oci::archive_lib::api().archive_entry_pathname_utf8)
#define archive_entry_perm (::kernodeck::oci::archive_lib::api().archive_entry_perm)
#define archive_entry_set_pathname (::kernodeck::oci::archive_lib::api().archive_entry_set_pathname)
#define archive_entry_set_perm (::kernodeck::oci::archive_lib::api().archive_entry_set_perm)
#define archive_entry_size (::kernodeck::oci::archive_lib::api().archive_entry_size)
#define archive_entry_size_is_set (::kernodeck::oci::archive_lib::api().archive_entry_size_is_set)
#define archive_entry_sparse_count (::kernodeck::oci::archive_lib::api().archive_entry_sparse_count)
#define archive_entry_symlink (::kernodeck::oci::archive_lib::api().archive_entry_symlink)
#define archive_entry_uid (::kernodeck::oci::archive_lib::api().archive_entry_uid)
#define archive_error_string (::kernodeck::oci::archive_lib::api().archive_error_string)
#define archive_filter_code (::kernodeck::oci::archive_lib::api().archive_filter_code)
#define archive_read_data (::kernodeck::oci::archive_lib::api().archive_read_data)
#define archive_read_data_block (::kernodeck::oci::archive_lib::api().archive_read_data_block)
#define archive_read_data_skip (::kernodeck::oci::archive_lib::api().archive_read_data_skip)
#define archive_read_free (::kernodeck::oci::archive_lib::api().archive_read_free)
#define archive_read_new (::kernodeck::oci::archive_lib::api().archive_read_new)
#define archive_read_next_header (::kernodeck::oci::archive_lib::api().archive_read_next_header)
#define archive_read_open (::kernodeck::oci::archive_lib::api().archive_read_open)
#define archive_read_open1 (::kernodeck::oci::archive_lib::api().archive_read_open1)
#define archive_read_open_filename (::kernodeck::oci::archive_lib::api().archive_read_open_filename)
#define archive_read_open_memory (::kernodeck::oci::archive_lib::api().archive_read_open_memory)
#define archive_read_support_filter_all (::kernodeck::oci::archive_lib::api().archive_read_support_filter_all)
#define archive_read_support_filter_gzip (::kernodeck::oci::archive_lib::api().archive_read_support_filter_gzip)
#define archive_read_support_filter_zstd (::kernodeck::oci::archive_lib::api().archive_read_support_filter_zstd)
#define archive_read_support_format_gnutar (::kernodeck::oci::archive_lib::api().archive_read_support_format_gnutar)
#define archive_read_support_format_raw (::kernodeck::oci::archive_lib::api().archive_read_support_format_raw)
#define archive_read_set_callback_data (::kernodeck::oci::archive_lib::api().archive_read_set_callback_data)
#define archive_read_set_read_callback (::kernodeck::oci::archive_lib::api().archive_read_set_read_callback)
#define archive_read_set_seek_callback (::kernodeck::oci::archive_lib::api().archive_read_set_seek_callback)
#define archive_read_set_skip_callback (::kernodeck::oci::archive_lib::api().archive_read_set_skip_callback)
#define archive_read_support_format_tar (::kernodeck::oci::archive_lib::api().archive_read_support_format_tar)
#define archive_read_support_format_zip (::kernodeck::oci::archive_lib::api().archive_read_support_format_zip)
#define archive_read_support_format_zip_seekable \
  (::kernodeck::oci::archive_lib::api().archive_read_support_format_zip_seekable)
#define archive_set_error (::kernodeck::oci::archive_lib::api().archive_set_error)
#define archive_version_details (::kernodeck::oci::archive_lib::api().archive_version_details)
#define archive_write_close (::kernodeck::oci::archive_lib::api().archive_write_close)
#define archive_write_data_block (::kernodeck::oci::archive_lib::api().archive_write_data_block)
#define archive_write_disk_new (::kernodeck::oci::archive_lib::api().archive_write_disk_new)
#define archive_write_disk_set_options (::kernodeck::oci::archive_lib::api().archive_write_disk_set_options)
#define archive_write_finish_entry (::kernodeck::oci::archive_lib::api().archive_write_finish_entry)
#define archive_write_header (::kernodeck::oci::archive_lib::api().archive_write_header)
#define archive_write_free (::kernodeck::oci::archive_lib::api().archive_write_free)
#endif
