// RECORD integrity (PEP 376/627): every listed file hashed against the file as
// it is in the final filesystem. pip never does this; Kernodeck does.
#pragma once

#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "kernodeck/oci/fs_view.h"
#include "kernodeck/python/environment.h"
#include "kernodeck/python/metadata.h"
#include "kernodeck/util/keyed_hash.h"

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
std::string classifyRecordQuirk(std::string_view recordPath, bool metadataFile, const std::string* content,
                                std::string_view algorithm, const std::string& expectedHex);

// Decodes a RECORD digest: urlsafe base64 as the wheel spec says, or hex of the right length as
// some build backends write it (astral-sh/uv#15398; `hex` is then set). Empty on garbage.
std::string decodeRecordDigest(std::string_view algorithm, std::string_view digest, bool* hex);

// Files to keep from the layer walk so that script quirks can be confirmed: small files in the
// bin directories of environments (not the system's /usr/bin).
uint64_t recordCaptureLimit(const std::string& path);

// One distribution's RECORD, read, parsed and resolved in the view once (issue 31: parsing and
// resolving every row twice, once to list the hashes to prepare and once to check them, was
// ~30 % of the audit's CPU at 200,000 files). The constructor reads the rows one at a time from
// the RECORD as the view holds it (python::RecordReader: views, no row copied) and checks every
// row whose digest the view can give now, each path looked up once (FsView::facts); a row whose
// SHA-256 the view does not hold yet (FileFacts::hashKnown) waits, resolved, until
// pendingHashes() has gone to FsView::prepareHashes (with the other distributions' paths, so a
// layer is read again at most once) and finish() is called. `.pyc` files and RECORD's own row
// are skipped, as are rows without a hash.
class RecordChecker {
 public:
  // Paths, as views into the rows that list them, in a table keyed as a hostile image's tables are.
  using Listed = std::unordered_set<std::string_view, util::KeyedHash>;

  // Keeps references to both: they outlive the checker.
  RecordChecker(const oci::FsView& view, const Distribution& dist);
  // Appends the resolved paths whose SHA-256 finish() will ask the view for.
  void pendingHashes(std::vector<std::string>& out) const;
  // Checks the waiting rows; the issues come in the RECORD's row order, as one pass would give.
  RecordCheck finish();

 private:
  enum class List { Modified, Missing, Quirks, Malformed };
  struct Noted {  // an issue and the row it came from, to restore the row order in finish()
    size_t row;
    List list;
    RecordIssue issue;
  };
  struct Waiting {  // a row whose SHA-256 (or MD5) the view does not hold yet: what finish() needs
    size_t row;
    RecordRowView record;  // into text_, the distribution's own rows, or kept_
    std::string resolved;  // where its path resolves, when through a link (else empty: the path)
    bool viaLink = false;  // `resolved` is not the row's path in the image
    bool prepare = true;   // its file's hashes are to be prepared (SHA-256 rows; an MD5 row only waits)
    int layer;
  };
  // What the constructor's rows gather, dropped once it returns (not kept per waiting checker).
  struct RowScratch {
    Listed listed;  // every row's path below the package directory, relative to it (into the rows or `owned`)
    std::deque<std::string> owned;  // listed paths that are not a row's own text
    std::set<std::string> topDirs;  // the package's own directories, searched for unlisted files
    std::string recordPath;         // RECORD's own path
    std::string prefix;             // the package directory and a '/'
    std::string_view lastTop;       // the last one inserted into topDirs (rows come grouped)
    std::string joined;             // the row being checked, in the image (one buffer for all)
  };
  void checkRow(size_t index, const RecordRowView& row, RowScratch& scratch);
  // The row's path in the image (into `out`); false when it leaves the root (a malformed row).
  bool pathOf(std::string_view rowPath, std::string& out) const;
  // The row itself, or, when its fields are in the reader's buffer, a copy kept for finish().
  RecordRowView keep(const RecordRowView& row);
  // The file's digest under an algorithm the walk does not record (not SHA-256 or MD5), read once
  // per file and algorithm; false when it cannot be had (nothing to compare).
  bool rehash(std::string_view algorithm, const std::string& resolved, std::string& hex);
  void compare(size_t index, const RecordRowView& row, const std::string& path, const std::string& resolved, int layer,
               const std::string& hex);
  void note(size_t row, List list, RecordIssue issue) { noted_.push_back({row, list, std::move(issue)}); }

  const oci::FsView* view_;
  const Distribution* dist_;
  std::shared_ptr<const std::string> text_;         // the RECORD, as the view holds it (not copied)
  std::vector<std::unique_ptr<std::string>> kept_;  // the fields of waiting rows the reader unescaped
  RecordCheck result_;
  std::vector<Noted> noted_;
  std::vector<Waiting> waiting_;
  std::map<std::string, std::string> rehashed_;  // "algorithm:resolved path" -> hex, digests the walk left out
};

// RecordCheckers for `dists`, in their order, started on up to `threads` threads at once (the
// package analysis otherwise runs on one core while the others idle, issue 31). Each checker reads
// only its own distribution and the view's const lookups, which take no lock and change nothing
// (FsView's const methods other than prepareHashes), so the result does not depend on which
// thread started which: the same checkers as constructing them one by one.
std::vector<RecordChecker> startRecordCheckers(const oci::FsView& view, const std::vector<const Distribution*>& dists,
                                               unsigned threads);

// RecordChecker's whole check for one distribution, its hashes prepared alone.
RecordCheck checkRecord(const oci::FsView& view, const Distribution& dist);

}  // namespace kernodeck::python
