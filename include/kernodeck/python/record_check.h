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
};

struct RecordCheck {
  size_t checked = 0;
  std::vector<RecordIssue> modified, missing;
  std::vector<std::string> malformedRows;  // rows tolerated but not well-formed
  std::vector<std::string> unlisted;       // files in the package's directories no RECORD lists
};

// `.pyc` files and RECORD's own row are skipped, as are rows without a hash.
RecordCheck checkRecord(const oci::FsView& view, const Distribution& dist);
// Appends the resolved paths whose SHA-256 checkRecord() will read (for FsView::prepareHashes).
void recordHashedPaths(const oci::FsView& view, const Distribution& dist, std::vector<std::string>& out);

}  // namespace kernodeck::python
