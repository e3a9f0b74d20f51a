// Parsers for the files of an installed distribution: core metadata
// (METADATA, PKG-INFO), egg-info requires.txt, RECORD (PEP 376/627), WHEEL
// (PEP 427) and direct_url.json (PEP 610). Pure functions on file contents.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kernodeck/util/result.h"

namespace kernodeck::python {

struct CoreMetadata {
  std::string name, version, requiresPython, summary;
  std::vector<std::string> requiresDist;  // PEP 508 strings, as written
  std::vector<std::string> providesExtra;
};

// RFC 822 style headers; the body after the first blank line is ignored.
CoreMetadata parseCoreMetadata(std::string_view text);

// egg-info requires.txt: sections "[extra]", "[extra:marker]", "[:marker]" become
// requirements with the equivalent PEP 508 marker.
std::vector<std::string> parseRequiresTxt(std::string_view text);

struct RecordRow {
  std::string path;
  std::string algorithm;  // "sha256", or empty when the row has no hash
  std::string digest;     // as written (urlsafe base64, no padding)
  std::string size;
  bool malformed = false;  // the hash field exists but is not ALGO=VALUE, or padded base64
};

// CSV rows; quoted fields with embedded commas and doubled quotes. RecordReader's rows, copied.
std::vector<RecordRow> parseRecord(std::string_view text);

// A RECORD row as RecordReader gives it: RecordRow's fields as views (issue 31: owned rows cost
// four strings a file, ~200 bytes, for a big image's RECORDs at once).
struct RecordRowView {
  std::string_view path, algorithm, digest, size;
  bool malformed = false;
  // Some field is not the text as written (a quoted field unescaped, an algorithm lowercased):
  // the views then point into the reader, valid until its next row, not into the text.
  bool unescaped = false;
};

// RECORD's rows one at a time, in order, without copying the text: one row a line (a trailing
// CR dropped, blank lines skipped), fields split at commas outside double quotes.
class RecordReader {
 public:
  // `text` must outlive the reader and the rows it gives.
  explicit RecordReader(std::string_view text) : rest_(text) {}
  // The next row into `row`; false after the last one.
  bool next(RecordRowView& row);

 private:
  std::string_view rest_;
  bool done_ = false;
  std::string own_;  // the unescaped fields of the current row
};

struct WheelInfo {
  std::string wheelVersion, generator;
  bool rootIsPurelib = true;
  std::vector<std::string> tags;  // "cp311-cp311-manylinux_2_17_x86_64"
};
WheelInfo parseWheel(std::string_view text);

struct DirectUrl {
  std::string url;
  bool editable = false;
  std::string vcs, commitId;
  std::map<std::string, std::string> hashes;  // algorithm -> hex
};
Result<DirectUrl> parseDirectUrl(std::string_view text);

}  // namespace kernodeck::python
