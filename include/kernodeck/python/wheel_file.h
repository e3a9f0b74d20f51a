// A wheel file (PEP 427) on this machine, read to check an image against the lock that names it
// (`audit --lock --wheels DIR`): its bytes hashed first and compared with the lock's hash, and
// only then its zip's central directory and RECORD read (libarchive's seekable zip reader,
// through oci/archive_lib.h). Once the file has the lock's hash its RECORD is as trustworthy as
// the lock, so the members are not inflated: each takes the hash its wheel's RECORD gives it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::python {

struct WheelMember {
  std::string path;    // as in the zip, cleaned (no '..', no leading '/')
  std::string sha256;  // hex: the wheel's RECORD's, or of its bytes when RECORD gives none ("" for RECORD)
  uint64_t size = 0;   // uncompressed, as the zip declares it
  // Under NAME.data/scripts/ and starting with "#!python": pip rewrites that line when it
  // installs the script (only those members' first bytes are read).
  bool pythonShebang = false;
};

struct WheelFile {
  std::string sha256;                // of the file
  std::string distInfo;              // "name-1.0.dist-info"
  std::vector<WheelMember> members;  // every regular member, in the zip's order
  // Members the wheel's own RECORD lists without a SHA-256 or not at all (RECORD itself and its
  // signatures excepted): not what a wheel builder writes; their bytes were read and hashed.
  std::vector<std::string> unrecorded;
};

// Reads the wheel at `path` when its SHA-256 is one of `accepted` (a lock's wheel has one, a
// requirements line lists several): the file is opened once (O_NOFOLLOW) and hashed in one pass,
// keeping its last 8 MiB (the central directory and RECORD, which wheel builders write last; a
// buffer each calling thread allocates once and keeps); only when the hash matches is it read as
// a zip, those kept bytes from memory and anything earlier (local headers) from the same
// descriptor, and a file whose identity, size, mtime or ctime changed in between is refused.
// Not found (absent), Corrupt (the hash differs: the message gives the file's; or it changed
// while read), Invalid (not a wheel: a member leaving the wheel, no or several .dist-info/RECORD,
// over the limits: 2^20 members, 64 times the file's size and 64 GiB uncompressed as declared,
// RECORD 16 MiB).
Result<WheelFile> readWheelFile(const std::string& path, const std::vector<std::string>& accepted);

}  // namespace kernodeck::python
