// Writing beneath a directory that someone else controls (a container rootfs)
// without following any symlink planted there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::util {

// Writes all of `content` to `fd`, retrying short writes and EINTR; false on an error
// (errno tells which).
bool writeAll(int fd, std::string_view content);

// How writeBeneath puts its file in place of one already there.
enum class Replace {
  Atomic,       // rename over it: a reader sees the old file or the new one, never neither
  UnlinkFirst,  // remove it, then rename onto the free name: for a file nobody reads yet (a
                // container being created). ext4 writes a file renamed over another out to disk
                // at once (auto_da_alloc), which costs the hook milliseconds; this does not.
};

// Writes `content` to ROOT/REL through a temporary file and a rename, creating missing
// directories (0755). Every component is opened with O_NOFOLLOW from a descriptor on ROOT, so
// a link inside ROOT can never redirect the write.
Status writeBeneath(const std::string& root, const std::string& rel, std::string_view content, unsigned mode = 0644,
                    Replace replace = Replace::Atomic);

// Writes `content` to PATH atomically (a temporary file beside it, fsync, rename). Caches whose
// readers detect a torn entry pass sync = false: no fsync, so no wait for the disk.
Status writeFileAtomic(const std::string& path, std::string_view content, bool sync = true);

// Writes a file the user named (`-o FILE`, `--expect-out FILE`): atomically as writeFileAtomic
// when PATH is absent or a regular file; written into, as a shell's `>` would, when it exists and
// is something else (/dev/null, /dev/stdout, a FIFO, a link to one), which a rename would replace.
// Not for caches or other places an attacker may plant a link: those keep writeFileAtomic.
Status writeOutputFile(const std::string& path, std::string_view content);

// Every non-directory entry below `root` (relative paths, sorted; links are not followed),
// at most 32 levels deep and 200,000 entries.
std::vector<std::string> listFilesRecursive(const std::string& root);

// Creates a directory and its missing parents (0755), like mkdir -p; false on failure.
bool makeDirs(const std::string& path);

// Reads a whole file of at most `limit` bytes.
Result<std::string> readFileLimited(const std::string& path, size_t limit);

}  // namespace kernodeck::util
