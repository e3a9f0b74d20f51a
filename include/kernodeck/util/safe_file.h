// Writing beneath a directory that someone else controls (a container rootfs)
// without following any symlink planted there.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"
#include "kernodeck/util/unique_fd.h"

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

// Where a path the user named (`-o FILE`) leads, walked one component at a time without letting
// the kernel follow a link: a link is followed only when this user or root owns it, and in a
// directory other users can write (group or world) only when this user owns it: the kernel's
// protected_symlinks rule, stricter, applied whatever fs.protected_symlinks says. The kernel's own
// links under /proc (/dev/stdout is /proc/self/fd/1) are left to the kernel. `dir` is an O_PATH
// descriptor on the directory that holds `name`, the last component (absent or not).
struct ResolvedOutput {
  UniqueFd dir;
  std::string name;
  bool kernelLink = false;  // `name` is a /proc link: open it following
};
Result<ResolvedOutput> resolveOutputPath(const std::string& path);

// A folder the user named for outputs (`dossier build DIR`, `dossier replay --work DIR`): an
// Unsafe error when reaching it (or the part of it that exists) would follow a link
// resolveOutputPath refuses; nothing else is checked (an absent folder is made by the caller).
Status checkOutputFolder(const std::string& path);

enum class OutputWrite {
  Replace,  // a regular file is replaced atomically (a temporary file beside it, fsync, rename)
  InPlace,  // a regular file is truncated and written (a bind-mounted /dev/termination-log)
};

// Writes a file the user named (`-o FILE`, `--expect-out FILE`, `--fetch FILE`,
// `--termination-log FILE`), reached as resolveOutputPath says (a refused link is an Unsafe
// error naming it): a regular file or an absent one as `how` says; an existing FIFO, device or
// socket (/dev/null, /dev/stdout) is written into as a shell's `>` would, unless another user
// (neither this one nor root) owns it and it sits in a directory other users can write. In place,
// an existing regular file is judged by what was opened, before it is truncated: refused when
// another user owns it and it has more than one link, or it sits in a sticky directory others can
// write and neither this user nor the directory's owner owns it (protected_regular).
// Not for caches or other places an attacker may plant a link: those keep writeFileAtomic.
Status writeOutputFile(const std::string& path, std::string_view content, OutputWrite how = OutputWrite::Replace);

// Opens `rel` beneath the directory `rootFd` (a container's root) so that no step of the walk can
// leave it: openat2(2) with RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS where the kernel has it (a link,
// even one swapped in since the path was resolved, is resolved inside the root), else a walk of
// O_PATH | O_NOFOLLOW opens, component by component, that refuses any link. `flags` are open(2)'s
// for the last component (O_NOFOLLOW refuses a link there in both ways). The descriptor, or an
// error naming `rel` (Unsafe for a link the fallback refuses).
Result<int> openInRoot(int rootFd, const std::string& rel, int flags);

// Every non-directory entry below `root` (relative paths, sorted; links are not followed),
// at most 32 levels deep and 200,000 entries.
std::vector<std::string> listFilesRecursive(const std::string& root);

// Creates a directory and its missing parents (0755), like mkdir -p; false on failure.
bool makeDirs(const std::string& path);

// Reads a whole file of at most `limit` bytes.
Result<std::string> readFileLimited(const std::string& path, size_t limit);

}  // namespace kernodeck::util
