// RECORD integrity (PEP 376/627): every listed file hashed against the file as
// it is in the final filesystem. pip never does this; Kernodeck does.
#pragma once

#include <string>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/python/environment.h"

namespace kernodeck::python {

struct RecordIssue {
  std::string path;  // in the image
  int layer = -1;    // layer that last wrote it (modified files)
  std::string expected, actual;
  std::string quirk;  // quirks: which known RECORD writer quirk explains the row, with its issue
};

struct RecordCheck {
  size_t checked = 0;
  std::vector<RecordIssue> modified, missing;
  // Rows that differ from the file, or are written oddly, in a way a known installer or build
  // backend does by itself: not tampering (see classifyRecordQuirk).
  std::vector<RecordIssue> quirks;
  std::vector<std::string> malformedRows;  // rows tolerated but not well-formed
  std::vector<std::string> unlisted;       // files in the package's directories no RECORD lists
};

// Why a RECORD row that does not match its file is a known writer quirk rather than a change,
// or "" when it is not one:
//  - pip rewrites the shebang of the scripts it installs (and tools that relocate environments
//    rewrite it again) while RECORD keeps another line's hash (pypa/pip#10744): a script
//    outside the package directory whose first line is a python shebang, when its body hashes to
//    the RECORD digest under a wheel's own "#!python" (or a usual interpreter) line. Without the
//    content (recordCaptureLimit keeps environments' bin directories) nothing is confirmed.
//  - wheels whose RECORD lists a wrong hash for their own METADATA, rewritten after RECORD was
//    written (pytorch/pytorch#97153).
// `recordPath` is the row's path as written, `metadataFile` says whether it is the
// distribution's own METADATA, `content` the file when readable, `expectedHex` the row's digest.
std::string classifyRecordQuirk(const std::string& recordPath, bool metadataFile, const std::string* content,
                                const std::string& algorithm, const std::string& expectedHex);

// Decodes a RECORD digest: urlsafe base64 as the wheel spec says, or hex of the right length as
// some build backends write it (astral-sh/uv#15398; `hex` is then set). Empty on garbage.
std::string decodeRecordDigest(const std::string& algorithm, const std::string& digest, bool* hex);

// Files to keep from the layer walk so that script quirks can be confirmed: small files in the
// bin directories of environments (not the system's /usr/bin).
uint64_t recordCaptureLimit(const std::string& path);

// `.pyc` files and RECORD's own row are skipped, as are rows without a hash.
RecordCheck checkRecord(const oci::FsView& view, const Distribution& dist);
// Appends the resolved paths whose SHA-256 checkRecord() will read and the view does not hold
// yet (FsView::hashKnown), for FsView::prepareHashes.
void recordHashedPaths(const oci::FsView& view, const Distribution& dist, std::vector<std::string>& out);

}  // namespace kernodeck::python
