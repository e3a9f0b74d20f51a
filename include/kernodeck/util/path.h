// Lexical path cleaning: slash-separated names from documents and archives turned
// into the normal form "a/b/c" (no empty, "." or ".." component, no leading or
// trailing '/'; "" is the root) without touching a file system. Symbolic links
// are not followed here: oci::FsView::resolve does that over a view.
//
// Two rule sets, for the two kinds of name Kernodeck reads:
//  - Confined: a name that must stay inside what we read (an archive's member, a
//    RECORD row under its package's directory). A ".." that climbs above the start
//    is an escape, and the name has no cleaned form; so has a name holding a NUL
//    byte (no file name can, and a C call would read a shorter one).
//  - Rooted: a tar entry's name as containerd's applier cleans it (Go's
//    filepath.Clean of the name joined to "/"): a ".." above the root stays at the
//    root, as the kernel does for "/..". Nothing is refused; what no build tool
//    writes (an absolute name, any ".." component) is reported for the caller to note.
// In both a leading '/' is the root: callers for which an absolute name is an error
// check for it themselves.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace kernodeck::util {

// Whether `p` is already in the normal form (and not the root "").
bool isNormalPath(std::string_view p);

// The Confined rule: `path` cleaned, or nullopt when a ".." climbs above its start
// or it holds a NUL byte. "a/./b//c/" is "a/b/c", "a/../b" is "b", "a/../../b" and
// "../b" have no cleaned form.
std::optional<std::string> cleanConfined(std::string_view path);

// The Rooted rule's outcome.
struct RootedPath {
  std::string path;       // normal form; "" is the root
  bool absolute = false;  // the name began with '/'
  bool dotdot = false;    // the name had a ".." component (whether or not it climbed above the root)
};

// The Rooted rule: "/../etc/passwd" is "etc/passwd" (absolute, dotdot), "a/../../b" is "b".
RootedPath cleanRooted(std::string_view path);

}  // namespace kernodeck::util
