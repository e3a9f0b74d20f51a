// See stage_profile.h.
#include "kernodeck/util/stage_profile.h"

#include <sys/resource.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace kernodeck::util {

namespace {

std::atomic<int64_t> gStageNs[static_cast<int>(Stage::kCount)];
thread_local StageTimer* tCurrent = nullptr;

bool readProfileFlag() {
  const char* v = std::getenv("KERNODECK_PROFILE");
  return v && std::strstr(v, "stages") != nullptr;
}

}  // namespace

const char* toString(Stage s) {
  switch (s) {
    case Stage::Inflate: return "inflate";
    case Stage::CompressedDigest: return "compressed digest";
    case Stage::DiffId: return "DiffID";
    case Stage::FileDigests: return "per-file digests";
    case Stage::Tar: return "tar parsing";
    case Stage::View: return "view building";
    case Stage::Packages: return "package analysis";
    case Stage::Cache: return "result caches";
    case Stage::Report: return "report";
    case Stage::kCount: break;
  }
  return "?";
}

bool stageProfiling() {
  static const bool on = readProfileFlag();
  return on;
}

int64_t threadCpuNs() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

StageTimer::StageTimer(Stage stage) : stage_(stage), on_(stageProfiling()) {
  if (!on_) return;
  outer_ = tCurrent;
  tCurrent = this;
  start_ = threadCpuNs();
}

StageTimer::~StageTimer() {
  if (!on_) return;
  int64_t elapsed = threadCpuNs() - start_;
  gStageNs[static_cast<int>(stage_)].fetch_add(elapsed - nested_, std::memory_order_relaxed);
  if (outer_) outer_->nested_ += elapsed;
  tCurrent = outer_;
}

double stageSeconds(Stage stage) {
  return static_cast<double>(gStageNs[static_cast<int>(stage)].load(std::memory_order_relaxed)) / 1e9;
}

std::string stageTable() {
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  double total = sec(ru.ru_utime) + sec(ru.ru_stime);
  std::string out;
  char line[128];
  std::snprintf(line, sizeof line, "%-20s %10s %7s\n", "stage", "cpu s", "share");
  out += line;
  double sum = 0;
  auto row = [&](const char* name, double s) {
    std::snprintf(line, sizeof line, "%-20s %10.3f %6.1f%%\n", name, s, total > 0 ? 100.0 * s / total : 0.0);
    out += line;
  };
  for (int i = 0; i < static_cast<int>(Stage::kCount); ++i) {
    double s = stageSeconds(static_cast<Stage>(i));
    sum += s;
    row(toString(static_cast<Stage>(i)), s);
  }
  row("other", total > sum ? total - sum : 0.0);
  row("total (process)", total);
  return out;
}

}  // namespace kernodeck::util
