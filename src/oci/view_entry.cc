#include "kernodeck/oci/view_entry.h"

namespace kernodeck::oci {

const char* toString(EntryKind k) {
  switch (k) {
    case EntryKind::File: return "file";
    case EntryKind::Dir: return "dir";
    case EntryKind::Symlink: return "symlink";
    case EntryKind::Hardlink: return "hardlink";
    case EntryKind::Char: return "char";
    case EntryKind::Block: return "block";
    case EntryKind::Fifo: return "fifo";
    case EntryKind::Whiteout: return "whiteout";
    case EntryKind::Opaque: return "opaque";
  }
  return "?";
}

}  // namespace kernodeck::oci
