// A wheel file (PEP 427) on this machine, read to check an image against the lock that names it
// (`audit --lock --wheels DIR`): its bytes hashed first and compared with the lock's hash, and
// only then its members read (libarchive's zip reader, through oci/archive_lib.h), each hashed
// as it streams by, never kept.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::python {

struct WheelMember {
  std::string path;    // as in the zip, cleaned (no '..', no leading '/')
  std::string sha256;  // hex, of its bytes
  uint64_t size = 0;
  bool pythonShebang = false;  // starts with "#!python": pip rewrites that line when it installs a script
};

struct WheelFile {
  std::string sha256;                // of the file
  std::string distInfo;              // "name-1.0.dist-info"
  std::vector<WheelMember> members;  // every regular member, in the zip's order
  // Members whose bytes the wheel's own RECORD gives another hash for, or does not list: the
  // wheel is then not what its builder recorded (RECORD's own row and signatures excepted).
  std::vector<std::string> recordDisagrees;
};

// Reads the wheel at `path` when its SHA-256 is one of `accepted` (a lock's wheel has one, a
// requirements line lists several): the file is opened once
// (O_NOFOLLOW), hashed, and only when the hash matches read as a zip from the same descriptor,
// its bytes hashed again on the way (a file that changed between the two reads is refused).
// Not found (absent), Corrupt (the hash differs: the message gives the file's), Invalid (not
// a wheel: a member leaving the wheel, no or several .dist-info/RECORD, over the limits:
// 2^20 members, 64 times the file's size and 64 GiB uncompressed, RECORD 16 MiB).
Result<WheelFile> readWheelFile(const std::string& path, const std::vector<std::string>& accepted);

}  // namespace kernodeck::python
