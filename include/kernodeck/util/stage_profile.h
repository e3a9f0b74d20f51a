// CPU time per stage of an audit, for KERNODECK_PROFILE=stages (docs/performance.md): each
// thread charges its own CPU clock (CLOCK_THREAD_CPUTIME_ID) to the stage it is in, per chunk
// or per file, never per byte. Timers nest: an inner stage's time is taken out of the outer
// one's, so the stages add up to no more than the process's CPU time. When profiling is off a
// timer reads no clock (one test of a flag read once), so the report's bytes and the audit's
// speed do not depend on it.
#pragma once

#include <cstdint>
#include <string>

namespace kernodeck::util {

// The stages of an audit, in the order the table prints them.
enum class Stage : int {
  Inflate,           // gzip/zstd inflate (and reading the compressed input)
  CompressedDigest,  // the blob digest of the compressed bytes
  DiffId,            // SHA-256 of the inflated tar stream
  FileDigests,       // SHA-256/MD5/SHA-1 of the files' contents
  Tar,               // libarchive's tar parsing and the entries the walk keeps
  View,              // applying a layer's entries to the merged view
  Packages,          // os detection and the package analysis after the walk
  Cache,             // the layer-result and image-result caches: load and store
  Report,            // rendering and writing the report
  kCount
};
const char* toString(Stage s);

// True when KERNODECK_PROFILE names "stages" (read once per process).
bool stageProfiling();

// This thread's CPU time in nanoseconds.
int64_t threadCpuNs();

// Charges this thread's CPU time from construction to destruction to `stage`, less the time of
// timers nested inside it on the same thread. Does nothing when profiling is off.
class StageTimer {
 public:
  explicit StageTimer(Stage stage);
  ~StageTimer();
  StageTimer(const StageTimer&) = delete;
  StageTimer& operator=(const StageTimer&) = delete;

 private:
  Stage stage_;
  bool on_;
  int64_t start_ = 0;
  int64_t nested_ = 0;  // CPU time of the timers inside this one
  StageTimer* outer_ = nullptr;
};

// CPU seconds charged to `stage` so far, all threads together.
double stageSeconds(Stage stage);

// The table: each stage's CPU seconds and share of the process's CPU time (getrusage, user and
// system), and "other" (what no stage holds: fetching, parsing manifests, start-up), one line each.
std::string stageTable();

}  // namespace kernodeck::util
